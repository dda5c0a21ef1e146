"""What the TMA fallback costs (H200): one attention call with tensors TMA can
address (the wgmma_ws kernel runs), the same call with tensors it cannot
(base 2 bytes past a 16-byte boundary, rows d + 1 elements apart: the plan
runs the mma_sync_unaligned fallback), and SDPA on those same tensors, each
checked against the aligned result.

    python3 bench/fallback.py --work .gpuwork --out bench/results/fallback.md

TFLOP/s = 4·B·H·S²·d / t (halved for causal); median of do_bench over a set
of inputs larger than L2, as bench/run.py measures.
"""

import argparse
import datetime
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "test/gpu"))
import attnc  # noqa: E402
from run import cycler, median_ms, rotating  # noqa: E402
from run_tests import odd_view  # noqa: E402

CASES = [("attn_d128_bf16_full", 128, False), ("attn_d128_bf16_causal", 128, True),
         ("attn_d64_bf16_full", 64, False)]
B, H, S = 4, 16, 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    rows = []
    for name, d, causal in CASES:
        (kern,) = attnc.load(Path(args.work) / "modules" / name).entries
        flops = 4 * B * H * S * S * d / (2 if causal else 1)

        def make(odd):
            t = [torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16)
                 for _ in range(3)]
            if odd:
                t = [odd_view(x.shape, x.dtype).copy_(x) for x in t]
            o = (odd_view((B, H, S, d), torch.bfloat16) if odd else
                 torch.empty(B, H, S, d, device="cuda", dtype=torch.bfloat16))
            lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
            return t, o, lse

        set_bytes = 4 * B * H * S * d * 2
        aligned = rotating(lambda: make(False), set_bytes)
        odd = [make(True) for _ in range(len(aligned))]
        for (t, _, _), (u, _, _) in zip(aligned, odd):
            for x, y in zip(t, u):
                y.copy_(x)
        plans = [kern.plan(*t, o=o, lse=lse) for t, o, lse in aligned]
        odd_plans = [kern.plan(*t, o=o, lse=lse) for t, o, lse in odd]
        ran = odd_plans[0].kernel.name
        print(name, "odd tensors run", ran, flush=True)
        for p in plans[:1] + odd_plans[:1]:
            p.launch()
        torch.cuda.synchronize()
        diff = (aligned[0][1].float() - odd[0][1].float()).abs().max().item()
        t_tma = median_ms(cycler([p.launch for p in plans]))
        t_fb = median_ms(cycler([p.launch for p in odd_plans]))
        print(name, "attnc timed", flush=True)
        # SDPA picks its backend for the odd tensors itself (flash needs
        # them aligned too).
        t_sdpa = median_ms(cycler([
            (lambda t=t: F.scaled_dot_product_attention(*t, is_causal=causal))
            for t, _, _ in odd]))
        rows.append((name, ran, flops / t_tma / 1e9, flops / t_fb / 1e9,
                     flops / t_sdpa / 1e9, diff))
        print(rows[-1], flush=True)
    text = [f"# TMA fallback, {datetime.date.today()}, {torch.cuda.get_device_name()}, "
            f"commit {os.environ.get('ATTNC_GIT_COMMIT', '?')}",
            "", f"B={B}, H={H}, S={S}, bf16. TFLOP/s; 'odd' tensors: base 2 bytes "
            "past 16-byte alignment, rows d + 1 elements apart.", "",
            "| module | kernel run on odd tensors | TMA kernel, aligned | fallback, odd "
            "| SDPA, odd | max abs diff of O (odd vs aligned) |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        text.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.2e} |")
    print("\n".join(text))
    if args.out:
        Path(args.out).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
