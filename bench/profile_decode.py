"""One split-KV decode call (partials + combine) for a profiler:

    ncu -k regex:attn_ python3 bench/profile_decode.py --work .gpuwork --B 32 --S 32768

hd128 bf16, 32 query heads on 8 K/V heads, Sq = 1, the runtime's split count.
"""

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=".gpuwork", type=Path)
    ap.add_argument("--module", default="dec_d128_bf16_full_h32kv8")
    ap.add_argument("--B", type=int, default=32)
    ap.add_argument("--S", type=int, default=32768)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    m = attnc.load(a.work / "modules" / a.module)
    q = torch.randn(a.B, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(a.B, 8, a.S, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    splits = m["attn_0"].size_rule("splits", q, k, v)
    op = torch.empty(splits, a.B, 32, 1, 128, device="cuda")
    lp = torch.empty(splits, a.B, 32, 1, device="cuda")
    o = torch.empty_like(q)
    for _ in range(a.reps):
        m["attn_0"](q, k, v, o_partial=op, lse_partial=lp)
        m["attn_1"](op, lp, o=o)
    torch.cuda.synchronize()
    print(f"B={a.B} S={a.S} splits={splits}")


if __name__ == "__main__":
    main()
