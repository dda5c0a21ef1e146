#!/usr/bin/env python3
"""Kernel variants of one attention graph, timed side by side on the GPU.

    ATTNC_RUNTIME_LIB=.gpuwork/lib/libattnc_runtime.so PYTHONPATH=python \
        python3 bench/variants.py DIR [DIR ...] [--seq 4096,8192] [--reps 3]

Each DIR is an attnc-compile output directory (manifest + cubin) of the same
attention graph built with different options (tiles, stages, strategy); a
graph reading per-head ALiBi slopes (a `slopes` input) gets bench/masks.py's.
For every sequence length (B*S = 16384 tokens, H = 16) each variant is
timed with triton.testing.do_bench (median, L2 cleared, inputs rotated over
more than 4x L2), the variants interleaved and the whole round repeated
`--reps` times; the table gives the median TFLOP/s of the rounds
(4*B*H*S^2*d / t, halved when the kernel's mask is causal) and each
variant's output is compared with the first's.
"""
import argparse
import math
import statistics
import sys
from pathlib import Path

import torch
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import attnc  # noqa: E402
# The L2 size and input cycler bench/run.py measures with.
from run import L2_BYTES, cycler  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--seq", default="4096,8192")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--dtype", choices=("bf16", "f16"), default="bf16",
                    help="the element type the modules were built for")
    args = ap.parse_args()
    kernels = []
    for d in args.dirs:
        (k,) = attnc.load(d).entries
        kernels.append((Path(d).name, k))
    d = int(kernels[0][1].attr("head_dim"))
    causal = kernels[0][1].attr("causal") == "true"
    dt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    print(f"| S | " + " | ".join(n for n, _ in kernels) + " | max |out - first| |")
    print("|---:|" + "---:|" * (len(kernels) + 1))
    for S in (int(s) for s in args.seq.split(",")):
        B, H = max(1, args.tokens // S), args.heads
        flops = 4 * B * H * S * S * d / (2 if causal else 1)
        sets = []
        for _ in range(max(1, math.ceil(4 * L2_BYTES / (4 * B * H * S * d * 2)))):
            q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=dt) for _ in range(3))
            sets.append((q, k, v))
        outs, plans = [], []
        for _, kern in kernels:
            # A module reading per-head ALiBi slopes gets bench/masks.py's,
            # 2^(-8 (h + 1) / H).
            extra = {}
            if any(p.name == "slopes" for p in kern.inputs):
                hs = torch.arange(H, device="cuda", dtype=torch.float32)
                extra["slopes"] = torch.pow(2.0, -8.0 * (hs + 1) / H).reshape(H, 1, 1)
            ps = []
            for q, k, v in sets:
                o = torch.empty_like(q)
                lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                ps.append((kern.plan(q, k, v, o=o, lse=lse, **extra), o))
            plans.append(ps)
        times = [[] for _ in kernels]
        for _ in range(args.reps):
            for i, ps in enumerate(plans):
                step = cycler([p.launch for p, _ in ps])
                times[i].append(do_bench(step, warmup=25, rep=100, return_mode="median"))
        for ps in plans:
            ps[0][0].launch()
        torch.cuda.synchronize()
        diff = max((ps[0][1].float() - plans[0][0][1].float()).abs().max().item()
                   for ps in plans)
        tf = [flops / (statistics.median(t) * 1e-3) / 1e12 for t in times]
        print(f"| {S} | " + " | ".join(f"{x:.0f}" for x in tf) + f" | {diff:.2e} |")


if __name__ == "__main__":
    main()
