"""Driver of compile-and-plan.test: compile, load, plan (no GPU needed)."""
import sys

import attnc
from _support import FakeTensor

src, out = sys.argv[1], sys.argv[2]
B, H, S, D = 2, 16, 16384, 128
q, kk, v, o = (FakeTensor(0x10000000 * (i + 1), (B, H, S, D), "bfloat16")
               for i in range(4))
lse = FakeTensor(0x50000000, (B, H, S), "float32")
# The default kernel (wgmma_ws_persistent under a causal mask) reads Q, K
# and V through TMA tensor maps, which only the driver encodes: without one
# its plan is refused, naming the map. (Its tile counter, a 4-byte
# workspace, is passed as a pointer and size: fake tensors have no torch to
# allocate it with.)
ws = attnc.compile(src, out + "/ws").kernel("naive_attention")
try:
    ws.plan(q, kk, v, o=o, lse=lse, tile_counter=(0x60000000, 4),
            num_sms=132)
except attnc.AttncError as e:
    print("no driver:", e)
# The wgmma strategy loads by address: its plan needs no driver.
mod = attnc.compile(src, out + "/wgmma", extra_args=["--strategy=wgmma"])
print("kernels", mod.kernels)
k = mod.kernel("naive_attention")
plan = k.plan(q, kk, v, o=o, lse=lse)
print("grid", tuple(plan.grid), "block", tuple(k.block))
try:
    k.plan(q, FakeTensor(0x20000000, (3, H, S, D), "bfloat16"), v, o=o, lse=lse)
except attnc.AttncError as e:
    print("refused:", e)
