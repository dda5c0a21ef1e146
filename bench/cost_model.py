"""Predicted vs measured: the cost model against the H200, row by row.

    python3 bench/cost_model.py --device-file h200.json [--library DIR]
        [--chain DIR] [--random 16 --seed 0] [--out RESULTS.md] [--json F]
        [--ncu-rows]

For every row of the benchmark — forward attention (bench/run.py's sizes:
B·S = 16k, H = 16, d 64/128, causal or not), the elementwise chain, the
backward (bench/backward.py's: H·d = 2048), decoding against a KV cache
(32:8 heads, d = 128) — and for seeded random sizes outside it, times attnc's
kernels (triton do_bench median, L2 flushed before each call) and prints the
cost model's prediction (Plan.estimate, the calibrated device file) beside
it. A row of several kernels (the backward's three, decode's partials and
combine) is predicted as the sum of its launches. --ncu-rows launches each
row's kernels once, for `ncu` to classify (bench/cost_model_ncu.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import sys
from pathlib import Path

import torch
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("ATTNC_TEST_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402
from attnc.cost import Device  # noqa: E402
from attnc.variants import prebuilt_dir  # noqa: E402

BF = torch.bfloat16


def median_ms(fn):
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def forward_row(lib, d, causal, B, H, S):
    m = attnc.load(lib / f"attn_d{d}_bf16_{'causal' if causal else 'full'}")
    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=BF)
               for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    plans = [m["attn"].plan(q, k, v, o=o, lse=lse, scale=d ** -0.5)]
    return plans, {"kind": "forward", "d": d, "causal": causal, "B": B,
                   "H": H, "S": S,
                   "flops": 4 * B * H * S * S * d / (2 if causal else 1)}


def backward_row(lib, d, causal, B, H, S):
    m = attnc.load(lib / f"attn_d{d}_bf16_{'causal' if causal else 'full'}")
    q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=BF)
                   for _ in range(4))
    o, lse = m["attn"](q, k, v, scale=d ** -0.5)
    delta = torch.empty(B, H, S, 1, device="cuda", dtype=torch.float32)
    ws = torch.empty(B, H, S, d, device="cuda", dtype=torch.float32)
    dk, dv, dq = torch.empty_like(k), torch.empty_like(v), torch.empty_like(q)
    plans = [m["attn_backward_0"].plan(do, o, result0=delta),
             m["attn_backward_1"].plan(q, k, v, do, lse, delta, dk=dk, dv=dv,
                                       dq_accum=ws, scale=d ** -0.5),
             m["attn_backward_2"].plan(ws, dq=dq)]
    return plans, {"kind": "backward", "d": d, "causal": causal, "B": B,
                   "H": H, "S": S,
                   "flops": 2.5 * 4 * B * H * S * S * d / (2 if causal else 1)}


def decode_row(lib, B, skv, H=32, HKV=8, d=128):
    m = attnc.load(lib / f"decode_d{d}_bf16_h{H}kv{HKV}")
    q = torch.randn(B, H, 1, d, device="cuda", dtype=BF)
    k, v = (torch.randn(B, HKV, skv, d, device="cuda", dtype=BF)
            for _ in range(2))
    lengths = torch.full((B,), skv, device="cuda", dtype=torch.int32)
    part = m["decode_0"]
    splits = part.size_rule("splits", q, k, v, kv_lengths=lengths)
    op = torch.empty(splits, B, H, 1, d, device="cuda", dtype=torch.float32)
    lp = torch.empty(splits, B, H, 1, device="cuda", dtype=torch.float32)
    o = torch.empty_like(q)
    plans = [part.plan(q, k, v, kv_lengths=lengths, o_partial=op,
                       lse_partial=lp, scale=d ** -0.5),
             m["decode_1"].plan(op, lp, o=o)]
    return plans, {"kind": "decode", "d": d, "B": B, "H": H, "Hkv": HKV,
                   "Skv": skv, "splits": splits,
                   "bytes": 2 * B * HKV * skv * d * 2}


def chain_row(chain):
    m = attnc.load(chain)
    kern = m["bias_dropout_layernorm"]
    shape, n = (8, 4096, 4096), 4096
    x = torch.randn(shape, device="cuda").to(BF)
    bias, gamma, beta = (torch.randn(n, device="cuda").to(BF)
                         for _ in range(3))
    y = torch.empty_like(x)
    plans = [kern.plan(x, bias, gamma, beta, y=y, seed=1234, offset=0)]
    return plans, {"kind": "chain", "shape": list(shape),
                   "bytes": 2 * x.numel() * 2}


def benchmark_rows():
    rows = []
    for d in (64, 128):
        for causal in (True, False):
            for S in (512, 1024, 2048, 4096, 8192, 16384):
                rows.append(("forward", d, causal, max(1, 16384 // S), 16, S))
    rows.append(("chain",))
    for d in (128, 64):
        for causal in (False, True):
            for S in (1024, 2048, 4096, 8192, 16384):
                rows.append(("backward", d, causal, max(1, 16384 // S),
                             2048 // d, S))
    for B in (1, 8, 32, 128):
        for skv in (1024, 8192, 32768):
            rows.append(("decode", B, skv))
    return rows


def random_rows(n, seed):
    """Seeded sizes outside the benchmark's grid: S not a power of two,
    other batch and head counts."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        kind = rng.choice(("forward", "forward", "backward", "decode"))
        if kind == "decode":
            rows.append(("decode", rng.choice((2, 4, 16, 64)),
                         rng.randrange(512, 65536)))
            continue
        d = rng.choice((64, 128))
        S = rng.randrange(300, 12000)
        B = rng.choice((1, 2, 4))
        H = rng.choice((8, 12, 16, 32))
        rows.append((kind, d, rng.random() < 0.5, B, H, S))
    return rows


def build(row, lib, chain):
    if row[0] == "forward":
        return forward_row(lib, *row[1:])
    if row[0] == "backward":
        return backward_row(lib, *row[1:])
    if row[0] == "decode":
        return decode_row(lib, *row[1:])
    return chain_row(chain)


def describe(info):
    if info["kind"] in ("forward", "backward"):
        return (f"{info['kind']} d{info['d']} "
                f"{'causal' if info['causal'] else 'full'} "
                f"B{info['B']} H{info['H']} S{info['S']}")
    if info["kind"] == "decode":
        return (f"decode d{info['d']} B{info['B']} {info['H']}:{info['Hkv']} "
                f"Skv{info['Skv']} splits{info['splits']}")
    return "chain 8x4096x4096 bf16"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device-file", required=True)
    ap.add_argument("--library", help="kernel library (default: the "
                    "installed wheel's attnc/kernels)")
    ap.add_argument("--chain", help="the elementwise chain's module dir")
    ap.add_argument("--random", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--only", default="", help="substring filter on rows")
    ap.add_argument("--ncu-rows", action="store_true",
                    help="launch each row's kernels once (for ncu)")
    a = ap.parse_args()
    lib = Path(a.library) if a.library else prebuilt_dir()
    device = Device.load(a.device_file)
    rows = [(r, "benchmark") for r in benchmark_rows()] + \
        [(r, "random") for r in random_rows(a.random, a.seed)]
    results = []
    for row, origin in rows:
        if row[0] == "chain" and not a.chain:
            continue
        if a.only and a.only not in str(row):
            continue
        torch.manual_seed(0)
        plans, info = build(row, lib, Path(a.chain) if a.chain else None)
        if a.ncu_rows:
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(describe(info))
            for p in plans:
                p.launch()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            continue

        def run():
            for p in plans:
                p.launch()
        measured = statistics.median(median_ms(run) for _ in range(3)) * 1e3
        est = [p.estimate(device) for p in plans]
        total = est[0]
        for e in est[1:]:
            total = total + e
        info.update(origin=origin, measured_us=measured,
                    predicted_us=total.time_us,
                    ratio=total.time_us / measured,
                    limiter=total.limiter, regime=total.regime,
                    kernels=[{"name": p.kernel.name, **vars(e)}
                             for p, e in zip(plans, est)])
        results.append(info)
        print(f"{describe(info):44s} measured {measured:9.1f} us  predicted "
              f"{total.time_us:9.1f} us  ratio {info['ratio']:.2f}  "
              f"{total.limiter}/{total.regime}", flush=True)
        del plans
        torch.cuda.empty_cache()
    if a.ncu_rows:
        return
    within = [r for r in results if abs(r["ratio"] - 1) <= 0.25]
    off2x = [r for r in results if r["ratio"] > 2 or r["ratio"] < 0.5]
    summary = (f"{len(within)}/{len(results)} rows within 25% "
               f"({100 * len(within) / max(len(results), 1):.0f}%), "
               f"{len(off2x)} off by more than 2x")
    print(summary)
    dev = device.json()
    lines = [
        "# Cost model: predicted vs measured", "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{torch.cuda.get_device_name()}, commit "
        f"{os.environ.get('ATTNC_GIT_COMMIT', 'unknown')}; device file: "
        f"{dev['source']}", "",
        "Ceilings: " + ", ".join(
            f"{k} {dev[k]:.3g}" for k in (
                "mma_sync_tflops", "wgmma_tflops", "softmax_gelems",
                "shared_tbps", "dram_tbps", "reduce_tbps", "dram_latency_us",
                "kernel_latency_us", "launch_us", "cta_launch_gps")), "",
        "Measured: triton do_bench median (L2 flushed), median of 3. "
        "Predicted: `Plan.estimate`, summed over a row's launches.", "",
        summary, "",
        "| row | origin | measured µs | predicted µs | pred/meas | limiter | "
        "regime |", "|---|---|---:|---:|---:|---|---|"]
    for r in results:
        lines.append(f"| {describe(r)} | {r['origin']} | "
                     f"{r['measured_us']:.1f} | {r['predicted_us']:.1f} | "
                     f"{r['ratio']:.2f} | {r['limiter']} | {r['regime']} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"device": dev, "rows": results}, indent=1))


if __name__ == "__main__":
    main()
