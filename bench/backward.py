"""The attention backward against SDPA's (H200): cuDNN and FlashAttention-2
(PyTorch's flash backend), peers in the same process.

    python3 bench/backward.py --work .gpuwork-bwd --out bench/results/backward.md
        [--split 4096,16384]   # also each kernel's time, attnc's and cuDNN's

Backward time runs from dO to dQ, dK, dV: attnc's three kernels (delta,
the K/V-stationary kernel with its dq_accum zeroing, dQ's conversion);
the peers' torch.autograd.grad of a retained forward graph. The forward is
excluded. TFLOP/s = 2.5 x 4·B·H·S²·d / t (halved for causal), tokens
B·S = 16k, H·d = 2048. Median of 3 interleaved repetitions of do_bench
medians.
"""

import argparse
import datetime
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import attnc  # noqa: E402
from run import median_ms  # noqa: E402

BF = torch.bfloat16


def attnc_backward(m, q, k, v, do):
    B, H, S, d = q.shape
    o, lse = m["attn"](q, k, v)
    delta = torch.empty(B, H, S, 1, device="cuda", dtype=torch.float32)
    ws = torch.empty(B, H, S, d, device="cuda", dtype=torch.float32)
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    dq = torch.empty_like(q)
    b0, b1, b2 = (m[f"attn_backward_{i}"] for i in range(3))
    p0 = b0.plan(do, o, result0=delta)
    p1 = b1.plan(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws)
    p2 = b2.plan(ws, dq=dq)

    def run():
        p0.launch()
        p1.launch()
        p2.launch()
    return run


def peer_backward(backend, q, k, v, do, causal):
    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    with sdpa_kernel(backend):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def run():
        with sdpa_kernel(backend):
            torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    return run


def kernel_split(fn, calls=5):
    """GPU time per call of each kernel `fn` launches (torch.profiler), in
    microseconds, largest first: where a backward's time goes."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    activity = torch.profiler.ProfilerActivity.CUDA
    with torch.profiler.profile(activities=[activity]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    split = []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", 0) / calls
        if us > 0:
            split.append((us, e.key))
    return sorted(split, reverse=True)


def split_table(strategy, mods, dims, sizes):
    """Per-kernel time of attnc's backward (delta, the dq_accum zeroing, the
    main kernel, dQ's conversion) beside cuDNN's kernels, same inputs."""
    lines = ["| d | mask | S | backend | kernel | µs per call |",
             "|---|---|---|---|---|---|"]
    for d, causal in ((d, c) for d in dims for c in (False, True)):
        m = mods.get((d, causal))
        if m is None:
            continue
        for S in sizes:
            B, H = max(1, 16384 // S), 2048 // d
            q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=BF)
                           for _ in range(4))
            for backend, fn in (
                    (f"attnc {strategy}", attnc_backward(m, q, k, v, do)),
                    ("cuDNN", peer_backward(SDPBackend.CUDNN_ATTENTION, q, k,
                                            v, do, causal))):
                for us, name in kernel_split(fn):
                    lines.append(f"| {d} | {'causal' if causal else 'full'} "
                                 f"| {S} | {backend} | {name[:60]} "
                                 f"| {us:.1f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(ROOT / ".gpuwork-bwd"))
    ap.add_argument("--out", default="")
    ap.add_argument("--sizes", default="1024,2048,4096,8192,16384")
    ap.add_argument("--prefix", default="bwd",
                    help="module names: PREFIX_d<D>_bf16_<causal|full>")
    ap.add_argument("--dims", default="128,64")
    ap.add_argument("--masks", default="full,causal",
                    help="which of full, causal to time")
    ap.add_argument("--strategies", default="mma_sync,wgmma",
                    help="backward strategies timed side by side (modules "
                         "PREFIX_..._<strategy>, none for mma_sync)")
    ap.add_argument("--split", default="",
                    help="also time each kernel of the backward (torch."
                         "profiler) at these sizes, for the first strategy")
    args = ap.parse_args()
    rows = []
    first_mods = {}
    dims = [int(x) for x in args.dims.split(",")]
    strategies = args.strategies.split(",")
    masks = args.masks.split(",")
    for d, causal in ((d, c) for d in dims for c in (False, True)
                      if ("causal" if c else "full") in masks):
        name = f"{args.prefix}_d{d}_bf16_{'causal' if causal else 'full'}"
        mods = {}
        for st in strategies:
            path = Path(args.work) / "modules" / (
                name + ("" if st == "mma_sync" else f"_{st}"))
            if path.exists():
                mods[st] = attnc.load(path)
            else:
                print(f"(no module {path.name})", flush=True)
        if not mods:
            continue
        if strategies[0] in mods:
            first_mods[(d, causal)] = mods[strategies[0]]
        for S in (int(s) for s in args.sizes.split(",")):
            B, H = max(1, 16384 // S), 2048 // d
            flops = 2.5 * 4 * B * H * S * S * d / (2 if causal else 1)
            torch.manual_seed(0)
            q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=BF)
                           for _ in range(4))
            fns = {st: attnc_backward(m, q, k, v, do)
                   for st, m in mods.items()}
            fns |= {"cudnn": peer_backward(SDPBackend.CUDNN_ATTENTION, q, k, v,
                                          do, causal),
                   "flash": peer_backward(SDPBackend.FLASH_ATTENTION, q, k, v,
                                          do, causal)}
            times = {n: [] for n in fns}
            for _ in range(3):
                for n, f in fns.items():
                    times[n].append(median_ms(f))
            t = {n: statistics.median(v) for n, v in times.items()}
            tf = {n: flops / (t[n] * 1e-3) / 1e12 for n in t}
            cell = lambda st: f"{tf[st]:.0f}" if st in tf else "-"  # noqa: E731
            best = max((st for st in strategies if st in tf),
                       key=lambda st: tf[st])
            row = (f"| {d} | {'causal' if causal else 'full'} | {S} | {B} | "
                   + " | ".join(cell(st) for st in strategies) +
                   f" | {tf['cudnn']:.0f} | {tf['flash']:.0f} "
                   f"| {tf[best] / tf['cudnn']:.2f} | "
                   f"{tf[best] / tf['flash']:.2f} |")
            print(row, flush=True)
            rows.append(row)
    head = ("| d | mask | S | B | "
            + " | ".join(f"attnc {st}" for st in strategies)
            + " | cuDNN | FA2 | best ×cuDNN | best ×FA2 |\n"
            + "|---" * (8 + len(strategies)) + "|")
    text = (f"# Attention backward, TFLOP/s (bf16, H·d = 2048, B·S = 16k)\n\n"
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{torch.cuda.get_device_name()}, commit "
            f"{os.environ.get('ATTNC_GIT_COMMIT', 'unknown')}, torch "
            f"{torch.__version__}, cuDNN {torch.backends.cudnn.version()}\n\n"
            + head + "\n" + "\n".join(rows) + "\n")
    if args.split:
        text += ("\nWhere the time goes (torch.profiler, 5 calls):\n\n"
                 + split_table(strategies[0], first_mods, dims,
                               [int(x) for x in args.split.split(",")]))
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
