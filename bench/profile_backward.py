"""One attention backward shape, attnc's kernels and SDPA-cuDNN's, inside
NVTX ranges for ncu:

    ncu --nvtx --nvtx-include "attnc_bwd/" --launch-count 4 \\
        python3 bench/profile_backward.py --work .gpuwork
    ncu --profile-from-start off --launch-count 4 \\
        python3 bench/profile_backward.py --work .gpuwork

attnc's module is one of test/gpu/backward_test.py's (its `build` step):
delta, the main kernel (or the size variant it picks) and dQ's conversion.
cuDNN's backward runs through torch.autograd.grad after its forward, which
stays outside: autograd launches it from its own thread, which an NVTX
range pushed here does not cover, so the profiler's start and stop (process
wide) bracket it instead.
"""
import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
ap.add_argument("--module", default="bwd_d128_bf16_full_wgmma")
ap.add_argument("--seq", type=int, default=4096)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--heads", type=int, default=16)
args = ap.parse_args()
m = attnc.load(Path(args.work) / "modules" / args.module)
main = m["attn_backward_1"]
d = int(main.attr("head_dim"))
causal = main.attr("causal") == "true"
B, H, S = args.batch, args.heads, args.seq
q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(4))
o, lse = torch.empty_like(q), torch.empty(B, H, S, device="cuda")
m["attn"](q, k, v, o=o, lse=lse)
delta = torch.empty(B, H, S, 1, device="cuda")
ws = torch.empty(B, H, S, d, device="cuda")
dq, dk, dv = (torch.empty_like(q) for _ in range(3))
plan = main.plan(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws)
print(f"{args.module}: S={S} B={B} H={H} runs {plan.kernel.name}",
      flush=True)
for _ in range(2):
    torch.cuda.nvtx.range_push("attnc_bwd")
    m["attn_backward_0"](do, o, result0=delta)
    main(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws)
    m["attn_backward_2"](ws, dq=dq)
    torch.cuda.nvtx.range_pop()
qr, kr, vr = (x.detach().requires_grad_() for x in (q, k, v))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(2):
        out = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal,
                                             scale=1 / math.sqrt(d))
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.autograd.grad(out, (qr, kr, vr), do)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
torch.cuda.synchronize()
