"""Driver of compile-and-plan.test: compile, load, plan (no GPU needed)."""
import sys

import attnc


class Fake:
    """A tensor-like object: what attnc reads from a torch tensor."""

    def __init__(self, ptr, shape, dtype="bfloat16"):
        self.shape, self.dtype, self._ptr = tuple(shape), dtype, ptr

    def data_ptr(self):
        return self._ptr

    def stride(self):
        s, out = 1, []
        for d in reversed(self.shape):
            out.insert(0, s)
            s *= d
        return tuple(out)


src, out = sys.argv[1], sys.argv[2]
B, H, S, D = 2, 16, 16384, 128
q, kk, v, o = (Fake(0x10000000 * (i + 1), (B, H, S, D)) for i in range(4))
lse = Fake(0x50000000, (B, H, S), "float32")
# The default kernel (wgmma_ws) reads Q, K and V through TMA tensor maps,
# which only the driver encodes: without one its plan is refused, naming
# the map.
ws = attnc.compile(src, out + "/ws").kernel("naive_attention")
try:
    ws.plan(q, kk, v, o=o, lse=lse)
except attnc.AttncError as e:
    print("no driver:", e)
# The wgmma strategy loads by address: its plan needs no driver.
mod = attnc.compile(src, out + "/wgmma", extra_args=["--strategy=wgmma"])
print("kernels", mod.kernels)
k = mod.kernel("naive_attention")
plan = k.plan(q, kk, v, o=o, lse=lse)
print("grid", tuple(plan.grid), "block", tuple(k.block))
try:
    k.plan(q, Fake(0x20000000, (3, H, S, D)), v, o=o, lse=lse)
except attnc.AttncError as e:
    print("refused:", e)
