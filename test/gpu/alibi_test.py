#!/usr/bin/env python3
"""Score modifiers that read tensors, written in the graph, on the GPU
against float64 (issue: masks and score modifiers).

    python3 test/gpu/alibi_test.py build --work .gpuwork   # here
    python3 test/gpu/alibi_test.py run --work .gpuwork     # on the GPU

ALiBi as people write it: a per-head slope tensor (a function argument
shaped [H, 1, 1] or [1, H, 1, 1]) times a distance from iotas, cast to f32
and added to the scaled scores; `--attnc-fuse-attention` turns it into a
score region that reads the slope at the head, `--attnc-online-softmax`
hoists the read to one per block, and the kernel takes the slopes as a
tensor parameter. Also a temperature per (batch, head) multiplying the
scores ([B, H, 1, 1]), which changes the softmax (a bias per (batch, head)
would not: softmax is shift-invariant, and such a test could not fail).
Every module is built for the target's default strategy (wgmma_ws with its
mma_sync_unaligned fallback, which the "odd" layout reaches) and for
mma_sync. Slopes are passed contiguous and as a strided view.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402


HEAD = """\
func.func @attn(%q: {tq}, %k: {tk}, %v: {tk}, %t: {tt} {{attnc.name = "{tname}"}}) -> {tq} {{
{repeat}  %s = attnc.matmul %q, %kr {{transpose_b}} : {tq}, {tkr} -> {S}
  %c = arith.constant dense<{scale!r}> : tensor<f32>
  %ss = attnc.mul %s, %c : {S}, tensor<f32> -> {S}
  %rows = attnc.iota %ss {{dimension = 2}} : {S} -> {I}
  %cols = attnc.iota %ss {{dimension = 3}} : {S} -> {I}
"""
TAIL = """\
  %p = attnc.softmax %m : {S}
  %pb = attnc.cast %p : {S} to {P}
  %o = attnc.matmul %pb, %vr : {P}, {tkr} -> {tq}
  return %o : {tq}
}}
"""
NINF = "  %ninf = arith.constant dense<0xFF800000> : tensor<f32>\n"
# ALiBi's signed causal form: s + slope[h] * (j - i) where j <= i.
SIGNED_CAUSAL = """\
  %d = attnc.sub %cols, %rows : {I}, {I} -> {I}
  %df = attnc.cast %d : {I} to {S}
  %bias = attnc.mul %t, %df : {tt}, {S} -> {S}
  %sb = attnc.add %ss, %bias : {S}, {S} -> {S}
  %keep = attnc.cmp le, %cols, %rows : {I}, {I} -> {B1}
""" + NINF + """\
  %m = attnc.select %keep, %sb, %ninf : {B1}, {S}, tensor<f32> -> {S}
"""
# The symmetric form, bottom-right aligned, no mask:
# s - slope[h] * |i + Skv - Sq - j|.
# Skv - Sq from the extents, a run-time i64 scalar the masks shift by.
SHIFT = """\
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : {tq}
  %skv = tensor.dim %k, %c2 : {tk}
  %delta = arith.subi %skv, %sq : index
  %di = arith.index_cast %delta : index to i64
  %off = tensor.from_elements %di : tensor<i64>
"""
SYMMETRIC_BR = SHIFT + """\
  %sh = attnc.add %rows, %off : {I}, tensor<i64> -> {I}
  %d = attnc.sub %sh, %cols : {I}, {I} -> {I}
  %df = attnc.cast %d : {I} to {S}
  %a = attnc.abs %df : {S}
  %bias = attnc.mul %t, %a : {tt}, {S} -> {S}
  %m = attnc.sub %ss, %bias : {S}, {S} -> {S}
"""
# A temperature per (batch, head) under a bottom-right causal mask.
TEMPERATURE = SHIFT + """\
  %st = attnc.mul %ss, %t : {S}, {tt} -> {S}
  %sh = attnc.add %rows, %off : {I}, tensor<i64> -> {I}
  %keep = attnc.cmp le, %cols, %sh : {I}, {I} -> {B1}
""" + NINF + """\
  %m = attnc.select %keep, %st, %ninf : {B1}, {S}, tensor<f32> -> {S}
"""
# name: (body, head dim, dtype, query heads (None: dynamic), K/V heads,
#        the tensor's type, what the tensor is)
VARIANTS = {
    "alibi_causal": (SIGNED_CAUSAL, 128, "bf16", None, None,
                     "tensor<?x1x1xf32>", "slopes"),
    "alibi_gqa": (SIGNED_CAUSAL, 128, "bf16", 32, 8, "tensor<?x1x1xf32>",
                  "slopes"),
    "alibi_symmetric_br": (SYMMETRIC_BR, 64, "f16", None, None,
                           "tensor<1x?x1x1xf32>", "slopes"),
    "temperature": (TEMPERATURE, 128, "bf16", None, None,
                    "tensor<?x?x1x1xf32>", "temp"),
}


def module_text(body, d, t, h, hkv, tt, tname):
    hq = "?" if h is None else str(h)
    hk = "?" if hkv is None else str(hkv)
    types = {"tq": f"tensor<?x{hq}x?x{d}x{t}>", "tk": f"tensor<?x{hk}x?x{d}x{t}>",
             "S": f"tensor<?x{hq}x?x?xf32>", "I": f"tensor<?x{hq}x?x?xi64>",
             "B1": f"tensor<?x{hq}x?x?xi1>", "P": f"tensor<?x{hq}x?x?x{t}>",
             "tt": tt}
    types["tkr"] = types["tk"]
    repeat = ""
    if h != hkv:  # GQA as people write it: K/V heads repeated
        types["tkr"] = f"tensor<?x{hq}x?x{d}x{t}>"
        repeat = "".join(
            f"  %{x}r = attnc.repeat_interleave %{x} {{dimension = 1 : i64, "
            f"repeats = {h // hkv} : i64}} : {types['tk']} -> {types['tkr']}\n"
            for x in "kv")
    text = (HEAD.format(scale=1.0 / math.sqrt(d), tname=tname, repeat=repeat,
                        **types)
            + body.format(**types) + TAIL.format(**types))
    if h == hkv:  # no repeats: K and V themselves
        text = text.replace("%kr", "%k").replace("%vr", "%v")
    return text


def build(work: Path, compiler: Path):
    gpu_common.build_strategies(
        work, compiler,
        {name: module_text(*spec) for name, spec in VARIANTS.items()})


def reference(q, k, v, name, t, scale, dt):
    """The variant's attention in precision `dt` (gpu_common.reference)."""
    import torch
    H = q.shape[1]
    Sq, Skv = q.shape[2], k.shape[2]
    i = torch.arange(Sq, device=q.device)[:, None]
    j = torch.arange(Skv, device=q.device)[None, :]
    acc = dt if dt == torch.float64 else torch.float32
    tv = t.to(acc)
    if name in ("alibi_causal", "alibi_gqa"):
        return gpu_common.reference(
            q, k, v, scale, dt, visible=j <= i,
            modify=lambda s: s + tv.reshape(1, H, 1, 1) * (j - i).to(acc))
    if name == "alibi_symmetric_br":
        return gpu_common.reference(
            q, k, v, scale, dt, modify=lambda s: s - tv.reshape(1, H, 1, 1)
            * (i + Skv - Sq - j).abs().to(acc))
    return gpu_common.reference(q, k, v, scale, dt,
                                visible=j <= i + Skv - Sq,
                                modify=lambda s: s * tv)


def run_case(m, name, B, H, Hkv, Sq, Skv, dtype, d, layout, strided):
    import torch
    dev = "cuda"
    torch.manual_seed(B * 1000003 + Sq * 131 + Skv + H)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    if layout == "odd":  # an offset TMA cannot address: the fallback runs
        q, k, v = (gpu_common.misalign(x) for x in (q, k, v))
    if name == "temperature":
        # Temperatures in [0.5, 2], one per (batch, head).
        shape = (B, H, 1, 1)
        t = 0.5 + 1.5 * torch.rand(*shape, device=dev)
    else:
        # ALiBi's geometric slopes 2^(-8 (h + 1) / H), scaled by 4 so that
        # the bias matters at these lengths.
        h = torch.arange(H, device=dev, dtype=torch.float64)
        t = (4.0 * torch.pow(2.0, -8.0 * (h + 1) / H)).float()
        shape = (H, 1, 1) if name != "alibi_symmetric_br" else (1, H, 1, 1)
        t = t.reshape(shape)
    if strided:  # every other element of a larger buffer
        base = torch.full((2 * t.numel(),), float("nan"), device=dev)
        base[::2] = t.flatten()
        strides = [0] * len(shape)
        acc = 2
        for dim in reversed(range(len(shape))):
            strides[dim] = acc
            acc *= shape[dim]
        t = base.as_strided(shape, strides)
    o = torch.full((B, H, Sq, d), 7.0, dtype=dtype, device=dev)
    lse = torch.empty(B, H, Sq, dtype=torch.float32, device=dev)
    tname = VARIANTS[name][6]
    m["attn"](q, k, v, o=o, lse=lse, **{tname: t})
    torch.cuda.synchronize()
    if gpu_common.launch_only():
        return True, {"launched": True}
    scale = 1.0 / math.sqrt(d)
    ref, ref_lse = reference(q, k, v, name, t, scale, torch.float64)
    low, _ = reference(q, k, v, name, t, scale, dtype)
    return gpu_common.check_output(o, lse, ref, low, ref_lse, dtype)


# (B, H, Hkv, Sq, Skv); GQA modules take their own head counts.
CASES = [(1, 16, 16, 1, 1), (2, 16, 16, 128, 128), (1, 8, 8, 1000, 1000),
         (2, 8, 8, 257, 513), (1, 4, 4, 513, 257), (1, 16, 16, 4097, 4097),
         (2, 4, 4, 1, 3000)]


def run(work: Path, small: bool, only: str = ""):
    import torch

    def cases(name, strategy, m):
        _, d, t, h, hkv, _, _ = VARIANTS[name]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        for (B, H, Hkv, Sq, Skv) in CASES:
            if h is not None:
                H, Hkv = h, hkv
            if small and max(Sq, Skv) > 1000:
                continue
            for layout in gpu_common.layouts(strategy):
                for strided in (False, True) if layout == "bhsd" else (False,):
                    yield (f"B{B} H{H}/{Hkv} Sq{Sq} Skv{Skv} {layout}"
                           f"{' strided' if strided else ''}", run_case,
                           (m, name, B, H, Hkv, Sq, Skv, dtype, d, layout,
                            strided))
    return gpu_common.run_strategies(work, only, VARIANTS, cases)


if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
