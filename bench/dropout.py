#!/usr/bin/env python3
"""Attention dropout: attnc's fused dropout against SDPA-flash with dropout.

Run on the GPU machine after `python3 test/gpu/dropout_test.py build` and
`python3 test/gpu/build_modules.py --only attn` (modules in WORK/modules):
B=4, H=16, hd128 bf16, S in {4096, 8192}, causal and not, p = 0.1. Peers
in the same process: PyTorch's SDPA on its flash backend
(FlashAttention-2) with dropout_p = 0.1, and, for the cost of dropout
itself, attnc's and SDPA-flash's kernels without it. TFLOP/s = 4 d B H
(visible (i, j) pairs) / t; the median of 3 interleaved repetitions.

usage: bench/dropout.py [--work .gpuwork] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402

B, H, D, P = 4, 16, 128, 0.1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    work = Path(args.work) / "modules"
    rows = []
    for S in (4096, 8192):
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        for causal in (False, True):
            kind = "causal" if causal else "full"
            pairs = S * (S + 1) // 2 if causal else S * S
            flops = 4 * D * B * H * pairs
            drop = attnc.load(work / f"dropout_{kind}_default")
            plain = attnc.load(work / f"attn_d128_bf16_{kind}")
            (kd,), (kp,) = drop.entries, plain.entries
            plan_drop = kd.plan(q, k, v, o=o, lse=lse, seed=7, offset=0)
            plan_plain = kp.plan(q, k, v, o=o, lse=lse)

            def sdpa(p):
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return F.scaled_dot_product_attention(
                        q, k, v, dropout_p=p, is_causal=causal)
            fns = {"attnc_dropout": plan_drop.launch,
                   "sdpa_flash_dropout": lambda: sdpa(P),
                   "attnc": plan_plain.launch,
                   "sdpa_flash": lambda: sdpa(0.0)}
            times = {n: [] for n in fns}
            for _ in range(3):
                for n, fn in fns.items():
                    times[n].append(do_bench(fn, warmup=25, rep=100,
                                             return_mode="median"))
            ms = {n: statistics.median(t) for n, t in times.items()}
            tf = {n: flops / (t * 1e-3) / 1e12 for n, t in ms.items()}
            row = {"S": S, "mask": kind, "ms": ms, "tflops": tf,
                   "vs_sdpa_flash_dropout":
                       ms["sdpa_flash_dropout"] / ms["attnc_dropout"],
                   "dropout_cost_attnc": ms["attnc_dropout"] / ms["attnc"],
                   "dropout_cost_sdpa":
                       ms["sdpa_flash_dropout"] / ms["sdpa_flash"]}
            rows.append(row)
            print(f"S={S} {kind:6s} " + " ".join(
                f"{n} {tf[n]:6.1f}" for n in fns) +
                f" | attnc/SDPA-flash(dropout) "
                f"{row['vs_sdpa_flash_dropout']:.2f}x, dropout costs attnc "
                f"{row['dropout_cost_attnc']:.2f}x, SDPA "
                f"{row['dropout_cost_sdpa']:.2f}x", flush=True)
    if args.json:
        # ATTNC_COMMIT first: the GPU machine's copy of the tree may carry
        # older git metadata than the modules were built from.
        commit = os.environ.get("ATTNC_COMMIT") or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
            capture_output=True, text=True).stdout.strip()
        Path(args.json).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "device": torch.cuda.get_device_name(),
            "commit": commit,
            "torch": torch.__version__, "B": B, "H": H, "d": D, "p": P,
            "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
