#!/usr/bin/env python3
"""Attention dropout fused into the kernel, on the GPU against float64
(issue: masks and score modifiers).

    python3 test/gpu/dropout_test.py build --work .gpuwork   # here
    python3 test/gpu/dropout_test.py run --work .gpuwork     # on the GPU

The graph is the generator's attention (fuzz/gen_graphs.py) with
`attnc.dropout` of the probabilities before P.V, its seed and offset i64
arguments. --attnc-fuse-attention folds it into attnc.attention; the kernel
drops probabilities with attnc.dropout's Philox mask over the [B, H, Sq,
Skv] probabilities (rows of ceil(Skv / 8) counters), after the row sums.
The reference draws the same mask (python/attnc/reference.py) and applies
it to the float64 softmax: an output within the FlashAttention rule means
the kernel kept exactly those probabilities (a mask off by one key, row or
counter moves O by far more). Key counts that are not multiples of 8 or of
the tile, offsets past 2^32 (the counter's carry), GQA, a causal and a
window mask, both strategies; the same seed twice gives the same bits, a
new offset a new mask.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "fuzz"))
import gen_graphs  # noqa: E402
import gpu_common  # noqa: E402
gpu_common.use_source_package()

# name: (head dim, dtype, mask, dropout probability)
VARIANTS = {"dropout_causal": (128, "bf16", "causal", 0.1),
            "dropout_full": (128, "bf16", "none", 0.1),
            "dropout_d64": (64, "f16", "none", 0.5),
            "dropout_window": (128, "bf16", "window:100", 0.2)}


def module_text(d, t, mask, p):
    return gen_graphs.attention_text("attn", ["?", "?", "?", d],
                                     ["?", "?", "?", d], t, mask, dropout=p)


# K/V tiles of 16 keys: two 8-key groups per row, too few for a quad to
# share its Philox calls (each thread makes its own): mma_sync only.
# (module, variant, strategy, flags)
NARROW = ("dropout_kv16_mma_sync", "dropout_causal", "mma_sync",
          ["--strategy=mma_sync", "--block-kv=16"])


def build(work: Path, compiler: Path):
    import subprocess
    gpu_common.build_strategies(
        work, compiler, {n: module_text(*spec) for n, spec in VARIANTS.items()})
    name, variant, _, flags = NARROW
    subprocess.run([str(compiler), str(work / "mlir" / f"{variant}.mlir"),
                    "-o", str(work / "modules" / name)] + flags, check=True)


def run_case(m, B, H, Hkv, Sq, Skv, seed, offset, dtype, d, mask, p, layout):
    import torch
    from attnc import reference as ref
    dev = "cuda"
    torch.manual_seed(B * 7919 + Sq * 31 + Skv + H)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    if layout == "odd":  # an offset TMA cannot address: the fallback runs
        q, k, v = (gpu_common.misalign(x) for x in (q, k, v))

    def launch(off):
        o = torch.full((B, H, Sq, d), 7.0, dtype=dtype, device=dev)
        lse = torch.empty(B, H, Sq, dtype=torch.float32, device=dev)
        m["attn"](q, k, v, o=o, lse=lse, seed=seed, offset=off)
        torch.cuda.synchronize()
        return o, lse

    o, lse = launch(offset)
    if gpu_common.launch_only():
        return True, {"launched": True}
    again, _ = launch(offset)
    other, _ = launch(offset + 1)
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    vis = gen_graphs.reference_mask(mask)
    vis = None if vis is False else (j <= i) if vis is True else vis(i, j)
    keep = ref.dropout_keep_mask((B, H, Sq, Skv), p, seed, offset, dev)
    scale = 1.0 / math.sqrt(d)
    want, want_lse = gpu_common.reference(q, k, v, scale, torch.float64,
                                          visible=vis, keep=keep, dropout=p)
    low, _ = gpu_common.reference(q, k, v, scale, dtype, visible=vis,
                                  keep=keep, dropout=p)
    ok, res = gpu_common.check_output(o, lse, want, low, want_lse, dtype)
    same = torch.equal(o, again)
    # Another offset draws another mask (a visible row of more than a few
    # keys changes).
    moved = not torch.equal(o, other) or Skv < 4
    res["kept"] = f"{keep.float().mean().item():.3f}"
    res["deterministic"] = same
    res["new_offset_moves"] = moved
    return ok and same and moved, res


# (B, H, Hkv, Sq, Skv)
CASES = [(1, 2, 2, 1, 1), (2, 3, 3, 100, 100), (1, 4, 2, 257, 263),
         (2, 4, 4, 1000, 1000), (1, 4, 1, 700, 1003), (1, 2, 2, 4097, 4097)]


def run(work: Path, small: bool, only: str = ""):
    import torch

    def cases(name, strategy, m):
        d, t, mask, p = VARIANTS[name]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        for n, (B, H, Hkv, Sq, Skv) in enumerate(CASES):
            if small and max(Sq, Skv) > 1100:
                continue
            # Seeds and offsets of 64 bits; the offsets cross 2^32 within
            # a tensor.
            seed = (0x9E3779B97F4A7C15 * (n + 1)) % (1 << 63)
            offset = (1 << 32) - 1000 * n - 7
            for layout in gpu_common.layouts(strategy):
                yield (f"B{B} H{H}/{Hkv} Sq{Sq} Skv{Skv} p{p} {layout}",
                       run_case, (m, B, H, Hkv, Sq, Skv, seed, offset, dtype,
                                  d, mask, p, layout))
    return gpu_common.run_strategies(work, only, VARIANTS, cases,
                                     extra=[NARROW[:3]])


if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
