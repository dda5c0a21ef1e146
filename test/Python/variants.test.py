"""Driver of variants.test: plans of the d = 64 backward's main kernel at
several query lengths, against the fake CUDA driver (its tensor maps need
one): the plan runs the 128 x 128 size variant from Sq = 4096 on (half the
K/V-tile CTAs of the grid's y), the kernel below."""
import sys

import attnc
from _support import FakeTensor

main = attnc.load(sys.argv[1])["attn_backward_1"]
B, H, D = 2, 16, 64
for S in (1024, 4095, 4096, 8192):
    ptrs = iter(range(1, 100))

    def t(shape, dtype="bfloat16"):
        return FakeTensor(0x10000000 * next(ptrs), shape, dtype)
    q, k, v, do, dk, dv = (t((B, H, S, D)) for _ in range(6))
    lse, delta = t((B, H, S), "float32"), t((B, H, S, 1), "float32")
    ws = t((B * H * S * D * 4,), "int8")
    plan = main.plan(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws,
                     scale=0.125)
    print("Sq", S, "runs", plan.kernel.name, "grid", tuple(plan.grid))
