"""Ragged (varlen) prefill: attnc's packed-batch attention against SDPA on a
jagged nested tensor and on a padded batch, peers in the same process.

    python3 bench/varlen.py --work .gpuwork --out bench/results/varlen.md

hd128 (--head-dim) bf16, 16 heads, causal within each sequence; batches of
seeded random lengths. TFLOP/s counts the visible (i, j) pairs of each sequence
(4·d·H·Σ n(n+1)/2) for every peer; the padded peer computes the padding too
(SDPA, is_causal, every sequence padded to the longest). Median of 3
interleaved repetitions of do_bench medians.
"""

import argparse
import random
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import attnc  # noqa: E402
from run import emit_table, env_info, median_ms  # noqa: E402

H = 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=".gpuwork", type=Path)
    ap.add_argument("--module", default="varlen_d128_bf16_causal_h16kv16")
    ap.add_argument("--also", default="",
                    help="other modules of the same graph (e.g. the "
                         "mma_sync twin, ..._mma_sync) timed in the same "
                         "process, a column each")
    ap.add_argument("--batches", default="8:256:2048,16:512:4096,"
                    "4:2048:8192,32:64:1024,128:16:512",
                    help="B:lo:hi,...: B sequences of seeded lengths in "
                         "[lo, hi]")
    ap.add_argument("--head-dim", type=int, default=128,
                    help="d of the modules' graph (64 or 128)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    D = a.head_dim
    info = env_info()
    m = attnc.load(a.work / "modules" / a.module)
    others = {n: attnc.load(a.work / "modules" / n)
              for n in a.also.split(",") if n}
    rows = []
    batches = [tuple(int(x) for x in b.split(":"))
               for b in a.batches.split(",")]
    for B, lo, hi in batches:
        rnd = random.Random(B * 7 + lo)
        lengths = [rnd.randint(lo, hi) for _ in range(B)]
        total = sum(lengths)
        cu = [0]
        for n in lengths:
            cu.append(cu[-1] + n)
        q, k, v = (torch.randn(total, H, D, device="cuda",
                               dtype=torch.bfloat16) for _ in range(3))
        cu_t = torch.tensor(cu, dtype=torch.int32, device="cuda")
        o = torch.empty_like(q)
        lse = torch.empty(total, H, device="cuda")
        plan = m["attn"].plan(q, k, v, q_starts=cu_t[:-1], q_ends=cu_t[1:],
                              o=o, lse=lse)
        fns = {"attnc": plan.launch}
        for n, om in others.items():
            fns[n] = om["attn"].plan(q, k, v, q_starts=cu_t[:-1],
                                     q_ends=cu_t[1:], o=torch.empty_like(q),
                                     lse=torch.empty_like(lse)).launch
        # Jagged nested tensors [B, H, n_b, D] over the same packed rows.
        off = cu_t.to(torch.int64)
        nq, nk, nv = (torch.nested.nested_tensor_from_jagged(
            x, off).transpose(1, 2) for x in (q, k, v))
        fns["sdpa_nested"] = lambda: F.scaled_dot_product_attention(
            nq, nk, nv, is_causal=True)
        # Padded to the longest sequence.
        n_max = max(lengths)
        pq, pk, pv = (torch.zeros(B, H, n_max, D, device="cuda",
                                  dtype=torch.bfloat16) for _ in range(3))
        for b, n in enumerate(lengths):
            for src, dst in ((q, pq), (k, pk), (v, pv)):
                dst[b, :, :n] = src[cu[b]:cu[b] + n].transpose(0, 1)
        fns["sdpa_padded"] = lambda: F.scaled_dot_product_attention(
            pq, pk, pv, is_causal=True)
        for f in fns.values():
            f()
        # attnc against the nested peer's output, per sequence.
        ref = fns["sdpa_nested"]().transpose(1, 2).values()
        err = (o.float() - ref.float()).abs().max().item()
        times = {n: [] for n in fns}
        for _ in range(3):
            for n, f in fns.items():
                times[n].append(median_ms(f))
        flops = sum(4 * D * H * n * (n + 1) / 2 for n in lengths)
        row = {"B": B, "lengths": f"{min(lengths)}–{max(lengths)}",
               "total": total, "err": err}
        for n, t in times.items():
            ms = statistics.median(t)
            row[n] = (ms * 1e3, flops / (ms * 1e-3) / 1e12)
        rows.append(row)
        print(row, flush=True)
    lines = [f"# Ragged (varlen) prefill — {info['gpu']}, {info['date']}", "",
             f"commit {info['commit']}, torch {info['torch']}. hd{D} bf16, "
             "H = 16, causal within each sequence; TFLOP/s over the visible "
             "pairs of every sequence (the padded peer also computes its "
             f"padding); median of 3 interleaved do_bench medians. attnc: "
             f"{a.module}.", "",
             "| B | lengths | rows | attnc µs | TFLOP/s | SDPA nested µs | "
             "TFLOP/s | SDPA padded µs | TFLOP/s | ×nested | ×padded | "
             "max err vs nested |"
             + "".join(f" {n} µs |" for n in others),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"
             + "---|" * len(others)]
    for r in rows:
        a_, n_, p_ = r["attnc"], r["sdpa_nested"], r["sdpa_padded"]
        lines.append(f"| {r['B']} | {r['lengths']} | {r['total']} | "
                     f"{a_[0]:.0f} | {a_[1]:.0f} | {n_[0]:.0f} | {n_[1]:.0f} "
                     f"| {p_[0]:.0f} | {p_[1]:.0f} | {n_[0] / a_[0]:.2f} | "
                     f"{p_[0] / a_[0]:.2f} | {r['err']:.1e} |"
                     + "".join(f" {r[n][0]:.0f} |" for n in others))
    emit_table(lines, a.out)


if __name__ == "__main__":
    main()
