#!/usr/bin/env python3
"""A sliding window whose size comes at run time, on the GPU against float64
(issue: masks and score modifiers).

    python3 test/gpu/window_test.py build --work .gpuwork   # here
    python3 test/gpu/window_test.py run --work .gpuwork     # on the GPU

The graph is the generator's causal window (fuzz/gen_graphs.py, "window")
with the size a 0-d i64 function argument `window` instead of a constant:
keys [i - window + 1, i]. --attnc-online-softmax bounds the K/V tiles with
it like with a constant (the bounds read it once per block), so one kernel
serves every size: sizes from 0 (every row empty: O = 0, logsumexp -inf)
to past the sequence (plain causal), tile multiples and not, each against
the float64 reference. Built for the target's default strategy (with the
fallback the "odd" layout reaches; its K/V loop visits the masked tiles of
both sides in one loop), for mma_sync, and with a loop per side
(--one-masked-loop=false, its fallback too).
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "fuzz"))
import gen_graphs  # noqa: E402
import gpu_common  # noqa: E402

# name: (head dim, dtype)
VARIANTS = {"window_runtime": (128, "bf16"), "window_runtime_d64": (64, "f16")}


def module_text(d, t):
    text = gen_graphs.attention_text("attn", ["?", "?", "?", d],
                                     ["?", "?", "?", d], t, "window:1")
    constant = "%n = arith.constant dense<1> : tensor<i64>\n  "
    assert constant in text
    return text.replace(constant, "").replace(
        "func.func @attn(",
        'func.func @attn(%n: tensor<i64> {attnc.name = "window"}, ')


def build(work: Path, compiler: Path):
    gpu_common.build_strategies(
        work, compiler, {n: module_text(*spec) for n, spec in VARIANTS.items()},
        gpu_common.INTERVAL_STRATEGIES)


def run_case(m, B, H, Sq, Skv, window, dtype, d, layout):
    import torch
    dev = "cuda"
    torch.manual_seed(B * 7919 + Sq * 31 + Skv + window)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    if layout == "odd":  # an offset TMA cannot address: the fallback runs
        q, k, v = (gpu_common.misalign(x) for x in (q, k, v))
    w = torch.tensor(window, dtype=torch.int64, device=dev)
    o = torch.full((B, H, Sq, d), 7.0, dtype=dtype, device=dev)
    lse = torch.empty(B, H, Sq, dtype=torch.float32, device=dev)
    m["attn"](q, k, v, o=o, lse=lse, window=w)
    torch.cuda.synchronize()
    if gpu_common.launch_only():
        return True, {"launched": True}
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    vis = (j <= i) & (i - j < window)
    scale = 1.0 / math.sqrt(d)
    ref, ref_lse = gpu_common.reference(q, k, v, scale, torch.float64,
                                        visible=vis)
    low, _ = gpu_common.reference(q, k, v, scale, dtype, visible=vis)
    return gpu_common.check_output(o, lse, ref, low, ref_lse, dtype)


# (B, H, Sq, Skv, window)
CASES = [(1, 4, 1, 1, 1), (2, 4, 300, 300, 0), (2, 4, 300, 300, 1),
         (1, 4, 1000, 1000, 64), (1, 4, 1000, 1000, 100),
         (2, 2, 1000, 700, 129), (1, 4, 700, 1000, 256),
         (1, 8, 4097, 4097, 1024), (1, 2, 3000, 3000, 5000)]


def run(work: Path, small: bool, only: str = ""):
    import torch

    def cases(name, strategy, m):
        d, t = VARIANTS[name]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        for (B, H, Sq, Skv, window) in CASES:
            if small and max(Sq, Skv) > 1100:
                continue
            for layout in gpu_common.layouts(strategy):
                yield (f"B{B} H{H} Sq{Sq} Skv{Skv} window{window} {layout}",
                       run_case, (m, B, H, Sq, Skv, window, dtype, d, layout))
    return gpu_common.run_strategies(work, only, VARIANTS, cases,
                                     strategies=gpu_common.INTERVAL_STRATEGIES)


if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
