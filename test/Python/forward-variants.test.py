"""Driver of forward-variants.test: which kernel a plan of the compiled
unmasked d = 128 forward runs, against the fake CUDA driver (the kernels'
tensor maps need one)."""
import sys

import attnc
from _support import FakeTensor

attn = attnc.load(sys.argv[1])["attention"]
B, H, D = 2, 16, 128
for S, pad in ((512, 0), (1024, 0), (1025, 0), (1024, 4)):
    ptrs = iter(range(1, 100))

    def t(shape, strides=None, dtype="bfloat16"):
        return FakeTensor(0x10000000 * next(ptrs), shape, dtype, strides)
    # Rows of D + pad elements: with pad = 4 the rows are 8 bytes off a
    # 16-byte multiple, which TMA cannot address.
    row = D + pad
    q, k, v, o = (t((B, H, S, D), (H * S * row, S * row, row, 1))
                  for _ in range(4))
    lse = t((B, H, S), None, "float32")
    # The persistent kernel's tile counter (a zeroed workspace).
    plan = attn.plan(q, k, v, o=o, lse=lse,
                     tile_counter=(0x10000000 * next(ptrs), 4))
    print("Skv", S, "pad", pad, "runs", plan.kernel.name)
