#!/usr/bin/env python3
"""What a document mask costs: attnc's causal documents kernel
(test/gpu/documents_test.py's documents_causal module) on four id layouts
against attnc's plain causal kernel, B=4 H=16 hd128 bf16, S in {4096, 8192};
TFLOP/s of the visible (i, j) pairs, counted exactly; the median of 3
interleaved repetitions.

    one_doc      every id equal: the causal tiles plus the pass over the ids
    docs4        four documents of seeded lengths (bench/masks.py's)
    docs16       sixteen documents of seeded lengths
    aligned1024  documents of 1024 tokens (tile aligned: only the diagonal
                 tiles masked)

usage: bench/documents.py [--work .gpuwork]  (after building the modules)
"""
import argparse
import sys
from pathlib import Path

import torch
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test/gpu"))
import attnc  # noqa: E402
from documents_test import doc_ids  # noqa: E402

B, H, D = 4, 16, 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    work = Path(ap.parse_args().work)
    (causal,) = attnc.load(work / "modules/attn_d128_bf16_causal").entries
    (docs,) = attnc.load(work / "modules/documents_causal_default").entries
    for S in (4096, 8192):
        q, k, v = (torch.randn(B, H, S, D, device="cuda",
                               dtype=torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(B, H, S, device="cuda")
        i = torch.arange(S, device="cuda")[:, None]
        j = torch.arange(S, device="cuda")[None, :]
        layouts = {
            "one_doc": torch.zeros(B, S, dtype=torch.int64, device="cuda"),
            "docs4": doc_ids(B, S, S * 13 + 4, 4).cuda(),
            "docs16": doc_ids(B, S, S * 13 + 16, 16).cuda(),
            "aligned1024": (torch.arange(S, device="cuda") // 1024)
            .expand(B, S).contiguous()}
        plans = {"causal": causal.plan(q, k, v, o=o, lse=lse)}
        pairs = {"causal": S * (S + 1) / 2}
        for name, ids in layouts.items():
            plans[name] = docs.plan(q, k, v, o=o, lse=lse,
                                    doc_q=ids.view(B, 1, S, 1),
                                    doc_kv=ids.view(B, 1, 1, S))
            vis = (ids[:, :, None] == ids[:, None, :]) & (j <= i)
            pairs[name] = vis.sum().item() / B
        times = {name: [] for name in plans}
        for _ in range(3):
            for name, plan in plans.items():
                times[name].append(do_bench(plan.launch, warmup=25, rep=100,
                                            return_mode="median"))
        for name in plans:
            t = sorted(times[name])[1]
            print(f"S={S} {name:12} {t * 1e3:8.1f} us "
                  f"{4 * D * B * H * pairs[name] / t / 1e9:7.1f} TFLOP/s",
                  flush=True)


if __name__ == "__main__":
    main()
