#!/usr/bin/env python3
"""Compiles every module the GPU tests and the benchmark use (runs HERE, on
the machine with attnc-compile; the H200 has no LLVM/MLIR).

    python3 test/gpu/build_modules.py [--out .gpuwork] [--compiler build/bin/attnc-compile]

Writes OUT/mlir/<name>.mlir, OUT/modules/<name>/ (manifest + cubins) and
copies build/lib/libattnc_runtime.so to OUT/lib/. Module names encode what
the tests need: attn_d{64,128}_{bf16,f16}_{causal,full}, attn_gqa_ri (GQA
spelled with attnc.repeat_interleave), chain (examples/elementwise_chain.mlir),
and small chains for bitwise dropout masks and p = 0; and a module compiled
again with extra flags is <module><suffix> (COMPILE_VARIANTS: `_shared_p`,
`_mma_sums`).
"""

import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))
import gen_graphs  # noqa: E402  (the generator's attention spelling)

ATTN = """\
func.func @attn(%q: tensor<?x?x?x{d}x{t}>, %k: tensor<?x?x?x{d}x{t}>,
                %v: tensor<?x?x?x{d}x{t}>) -> tensor<?x?x?x{d}x{t}> {{
  %s = attnc.matmul %q, %k {{transpose_b}}
      : tensor<?x?x?x{d}x{t}>, tensor<?x?x?x{d}x{t}> -> tensor<?x?x?x?xf32>
  %scale = arith.constant dense<{scale!r}> : tensor<f32>
  %ss = attnc.mul %s, %scale : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
{mask}  %p = attnc.softmax %masked : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?x{t}>
  %o = attnc.matmul %pb, %v
      : tensor<?x?x?x?x{t}>, tensor<?x?x?x{d}x{t}> -> tensor<?x?x?x{d}x{t}>
  return %o : tensor<?x?x?x{d}x{t}>
}}
"""

CAUSAL = """\
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols
      : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %masked = attnc.select %keep, %ss, %ninf
      : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
"""
FULL = ""  # no mask: softmax of the scaled scores

GQA_RI = """\
func.func @gqa(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>,
               %v: tensor<?x2x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  %k8 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %v8 = attnc.repeat_interleave %v {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %s = attnc.matmul %q, %k8 {transpose_b} : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x?xf32>
  %c = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x8x?x?xi64>, tensor<?x8x?x?xi64> -> tensor<?x8x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %masked = attnc.select %keep, %ss, %ninf : tensor<?x8x?x?xi1>, tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
  %p = attnc.softmax %masked : tensor<?x8x?x?xf32>
  %pb = attnc.cast %p : tensor<?x8x?x?xf32> to tensor<?x8x?x?xbf16>
  %o = attnc.matmul %pb, %v8 : tensor<?x8x?x?xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}
"""

# x + bias -> dropout only (dynamic rows): the output is 0 exactly where the
# mask drops, and bitwise equal to bf16(f32(x + bias) * f32(1/(1-p))) elsewhere.
DROPOUT = """\
func.func @bias_dropout(%x: tensor<?x{n}x{t}> {{attnc.name = "x"}},
                        %bias: tensor<{n}x{t}> {{attnc.name = "bias"}},
                        %seed: i64 {{attnc.name = "seed"}},
                        %offset: i64 {{attnc.name = "offset"}})
    -> (tensor<?x{n}x{t}> {{attnc.name = "y"}}) {{
  %h = attnc.add %x, %bias : tensor<?x{n}x{t}>, tensor<{n}x{t}> -> tensor<?x{n}x{t}>
  %d = attnc.dropout %h, %seed, %offset {{probability = {p:e} : f64}} : tensor<?x{n}x{t}>
  return %d : tensor<?x{n}x{t}>
}}
"""

# Parameters are named as the example's (attnc.name): x, bias, gamma, beta,
# seed, offset -> y.
# The example's chain with dynamic rows and a chosen p (p = 0: bias + LN).
CHAIN = """\
func.func @bias_dropout_layernorm(%x: tensor<?x{n}x{t}> {{attnc.name = "x"}},
                                  %bias: tensor<{n}x{t}> {{attnc.name = "bias"}},
                                  %gamma: tensor<{n}x{t}> {{attnc.name = "gamma"}},
                                  %beta: tensor<{n}x{t}> {{attnc.name = "beta"}},
                                  %seed: i64 {{attnc.name = "seed"}},
                                  %offset: i64 {{attnc.name = "offset"}})
    -> (tensor<?x{n}x{t}> {{attnc.name = "y"}}) {{
  %h = attnc.add %x, %bias : tensor<?x{n}x{t}>, tensor<{n}x{t}> -> tensor<?x{n}x{t}>
  %d = attnc.dropout %h, %seed, %offset {{probability = {p:e} : f64}} : tensor<?x{n}x{t}>
  %y = attnc.layer_norm %d, %gamma, %beta {{epsilon = 1.000000e-05 : f64}}
      : tensor<?x{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}> -> tensor<?x{n}x{t}>
  return %y : tensor<?x{n}x{t}>
}}
"""


# Bottom-right causal as PyTorch writes it (rows + (Skv - Sq) >= cols).
BOTTOM_RIGHT = """\
func.func @attn(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x128xbf16>
  %d = arith.subi %skv, %sq : index
  %di = arith.index_cast %d : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
"""

# A softmax scale known only at run time: a scalar argument multiplying the
# scores (through a one-element tensor), fused into runtime_scale.
RUNTIME_SCALE = """\
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>,
                %v: tensor<?x?x?x64xf16>, %scale: f32 {attnc.name = "scale"})
    -> tensor<?x?x?x64xf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x?xf32>
  %t = tensor.from_elements %scale : tensor<f32>
  %ss = attnc.mul %s, %t : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
"""


# Fully static attention: canonicalization folds the recurrence's initial
# tiles into constants and inlines K/V loops of one iteration, which the
# back-end re-rolls. (B, H, Sq, Skv, d, dtype, causal); run_tests.py runs
# each at exactly its shape.
STATIC_ATTENTION = {
    "attn_static_d64_bf16_causal": (2, 4, 100, 128, 64, "bf16", True),
    "attn_static_d128_f16_onetile": (1, 2, 64, 37, 128, "f16", False),
    "attn_static_d128_bf16_causal_sq1": (2, 1, 1, 300, 128, "bf16", True),
}


# Masks and score modifiers written as tensor code (the masks issue): the
# graph's lines after %ss (the scaled scores), and the same mask and
# modifier for run_tests.py's float64 reference, as functions of the index
# tensors i [Sq, 1], j [1, Skv] and of the scores.
I64 = "tensor<?x?x?x?xi64>"
I1 = "tensor<?x?x?x?xi1>"
F32 = "tensor<?x?x?x?xf32>"
_IOTAS = f"""\
  %rows = attnc.iota %ss {{dimension = 2 : i64}} : {F32} -> {I64}
  %cols = attnc.iota %ss {{dimension = 3 : i64}} : {F32} -> {I64}
"""


def _const(name, v):
    return f"  %{name} = arith.constant dense<{v}> : tensor<i64>\n"


def _bin(op, out, a, b, ta=I64, tb=I64, tr=I64):
    return f"  %{out} = attnc.{op} %{a}, %{b} : {ta}, {tb} -> {tr}\n"


def _cmp(pred, out, a, b, tb=I64):
    return f"  %{out} = attnc.cmp {pred}, %{a}, %{b} : {I64}, {tb} -> {I1}\n"


_CAUSAL = _cmp("le", "causal", "cols", "rows")


def _window(d, t, w):
    """Causal sliding window of w keys: cols <= rows and rows - cols < w."""
    return (d, t, _IOTAS + _CAUSAL + _bin("sub", "dist", "rows", "cols")
            + _const("w", w) + _cmp("lt", "near", "dist", "w", "tensor<i64>")
            + _bin("and", "keep", "causal", "near", I1, I1, I1),
            lambda i, j: (j <= i) & (i - j < w), None)


def _prefix(d, t, n):
    """Prefix-LM: every query sees the first n keys, the rest causally."""
    return (d, t, _IOTAS + _CAUSAL + _const("n", n)
            + _cmp("lt", "pre", "cols", "n", "tensor<i64>")
            + _bin("or", "keep", "causal", "pre", I1, I1, I1),
            lambda i, j: (j <= i) | (j < n), None)

MASK_VARIANTS = {
    # name: (d, dtype, graph lines ending in %keep, reference mask, softcap)
    "attn_mask_window256": _window(64, "bf16", 256),
    "attn_mask_prefix100": _prefix(128, "f16", 100),
    "attn_mask_chunk128": (
        64, "bf16", _IOTAS + _CAUSAL + _const("chunk", 128)
        + _bin("div", "rc", "rows", "chunk", I64, "tensor<i64>")
        + _bin("div", "cc", "cols", "chunk", I64, "tensor<i64>")
        + _cmp("eq", "same", "rc", "cc")
        + _bin("and", "keep", "same", "causal", I1, I1, I1),
        lambda i, j: (j <= i) & (i // 128 == j // 128), None),
    "attn_mask_band": (
        128, "bf16", _IOTAS + _bin("sub", "rel", "cols", "rows")
        + _const("lo", -64) + _const("hi", 32)
        + _cmp("ge", "a", "rel", "lo", "tensor<i64>")
        + _cmp("le", "b", "rel", "hi", "tensor<i64>")
        + _bin("and", "keep", "a", "b", I1, I1, I1),
        lambda i, j: (j - i >= -64) & (j - i <= 32), None),
    "attn_mask_sinks": (
        64, "f16", _IOTAS + _CAUSAL + _bin("sub", "dist", "rows", "cols")
        + _const("w", 128) + _cmp("lt", "near", "dist", "w", "tensor<i64>")
        + _bin("and", "win", "causal", "near", I1, I1, I1)
        + _const("four", 4) + _cmp("lt", "sink", "cols", "four", "tensor<i64>")
        + _bin("or", "keep", "sink", "win", I1, I1, I1),
        lambda i, j: (j < 4) | ((j <= i) & (i - j < 128)), None),
    "attn_mask_abs50": (
        64, "bf16", _IOTAS + _bin("sub", "dist", "rows", "cols")
        + f"  %a = attnc.abs %dist : {I64}\n" + _const("w", 50)
        + _cmp("le", "keep", "a", "w", "tensor<i64>"),
        lambda i, j: (i - j).abs() <= 50, None),
    # Bottom-right: the shift Skv - Sq from the operands' extents.
    "attn_mask_window128_br": (
        64, "bf16", """\
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x64xbf16>
  %delta = arith.subi %skv, %sq : index
  %di = arith.index_cast %delta : index to i64
  %off = tensor.from_elements %di : tensor<i64>
""" + _IOTAS + _bin("add", "shifted", "rows", "off", I64, "tensor<i64>")
        + _cmp("ge", "causal", "shifted", "cols")
        + _bin("sub", "dist", "shifted", "cols") + _const("w", 128)
        + _cmp("lt", "near", "dist", "w", "tensor<i64>")
        + _bin("and", "keep", "causal", "near", I1, I1, I1),
        lambda i, j: ((j <= i + (j.shape[1] - i.shape[0]))
                      & (i + (j.shape[1] - i.shape[0]) - j < 128)), None),
    "attn_softcap30_causal": (
        128, "bf16", _IOTAS + _CAUSAL.replace("%causal", "%keep"),
        lambda i, j: j <= i, 30.0),
    # A score clamped to [-20, 20] (max(min(s, 20), -20)): bounded like a
    # softcap, at d = 64, whose TMA kernel has no peeled first step (the
    # row max behind a vote in the loops).
    "attn_clamp20_causal": (
        64, "bf16", _IOTAS + _CAUSAL.replace("%causal", "%keep"),
        lambda i, j: j <= i, ("clamp", 20.0)),
    # The masks benchmark's variants (bench/masks.py), hd128 bf16.
    "attn_mask_window1024_d128": _window(128, "bf16", 1024),
    "attn_mask_prefix1000_d128": _prefix(128, "bf16", 1000),
    "attn_softcap50_causal_d128": (
        128, "bf16", _IOTAS + _CAUSAL.replace("%causal", "%keep"),
        lambda i, j: j <= i, 50.0),
}


def mask_variant_text(name):
    d, t, lines, _, cap = MASK_VARIANTS[name]
    scores = "%ss"
    pre = ""
    if isinstance(cap, tuple):  # ("clamp", c): max(min(s, c), -c)
        c = cap[1]
        pre = (f"  %chi = arith.constant dense<{c}> : tensor<f32>\n"
               f"  %clo = arith.constant dense<{-c}> : tensor<f32>\n"
               f"  %smin = attnc.min %ss, %chi : {F32}, tensor<f32> -> {F32}\n"
               f"  %sc = attnc.max %smin, %clo : {F32}, tensor<f32> -> {F32}\n")
        scores = "%sc"
        lines = lines.replace("%ss {", "%sc {")
    elif cap is not None:
        pre = (f"  %cap = arith.constant dense<{cap}> : tensor<f32>\n"
               f"  %sd = attnc.div %ss, %cap : {F32}, tensor<f32> -> {F32}\n"
               f"  %th = attnc.tanh %sd : {F32}\n"
               f"  %sc = attnc.mul %th, %cap : {F32}, tensor<f32> -> {F32}\n")
        scores = "%sc"
        lines = lines.replace("%ss {", "%sc {").replace(
            f": {F32} -> {I64}", f": {F32} -> {I64}")
    tt = f"tensor<?x?x?x{d}x{t}>"
    return f"""\
func.func @attn(%q: {tt}, %k: {tt}, %v: {tt}) -> {tt} {{
  %s = attnc.matmul %q, %k {{transpose_b}} : {tt}, {tt} -> {F32}
  %c = arith.constant dense<{1.0 / math.sqrt(d)}> : tensor<f32>
  %ss = attnc.mul %s, %c : {F32}, tensor<f32> -> {F32}
{pre}{lines}  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, {scores}, %ninf : {I1}, {F32}, tensor<f32> -> {F32}
  %p = attnc.softmax %m : {F32}
  %pb = attnc.cast %p : {F32} to tensor<?x?x?x?x{t}>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?x{t}>, {tt} -> {tt}
  return %o : {tt}
}}
"""


def attention_text(d, t, causal):
    text = ATTN.format(d=d, t=t, scale=1.0 / math.sqrt(d),
                       mask=CAUSAL if causal else FULL)
    return text if causal else text.replace("softmax %masked", "softmax %ss")


# Modules compiled a second time with extra attnc-compile flags, named
# <module><suffix>: the same graph (so the same reference) through another
# kernel configuration. shared_p (P through shared memory) and
# mma_row_sums (the row sums on the tensor cores) are off by default, so
# their kernels are built here to be tested at all (f16 and bf16 P, d = 64
# and 128, masked and bounded-modifier steps).
COMPILE_VARIANTS = {
    "_shared_p": (["--shared-p"], ("attn_d128_bf16_causal",
                                   "attn_d128_f16_full",
                                   "attn_d128_bf16_causal_br",
                                   "attn_softcap50_causal_d128",
                                   "attn_mask_window1024_d128")),
    "_mma_sums": (["--mma-row-sums"], ("attn_d128_bf16_causal",
                                       "attn_d128_f16_full",
                                       "attn_d64_bf16_causal",
                                       "attn_softcap50_causal_d128",
                                       "attn_mask_window1024_d128",
                                       "attn_mask_prefix1000_d128")),
}


def base_module(name):
    """The module a compile variant was built from (else `name`)."""
    for suffix, (_, bases) in COMPILE_VARIANTS.items():
        if name.endswith(suffix) and name[:-len(suffix)] in bases:
            return name[:-len(suffix)]
    return name


def sources():
    src = {}
    for d in (64, 128):
        for t in ("bf16", "f16"):
            for causal in (True, False):
                name = f"attn_d{d}_{t}_{'causal' if causal else 'full'}"
                src[name] = attention_text(d, t, causal)
    src["attn_gqa_ri"] = GQA_RI
    src["attn_d128_bf16_causal_br"] = BOTTOM_RIGHT
    src["attn_d64_f16_causal_rscale"] = RUNTIME_SCALE
    for name in MASK_VARIANTS:
        src[name] = mask_variant_text(name)
    for name, (B, H, Sq, Skv, d, t, causal) in STATIC_ATTENTION.items():
        src[name] = gen_graphs.attention_text(
            "attn", [B, H, Sq, d], [B, H, Skv, d], t,
            "causal" if causal else "none")
    src["chain"] = (ROOT / "examples/elementwise_chain.mlir").read_text()
    src["attn_example"] = (ROOT / "examples/naive_attention.mlir").read_text()
    src["dropout_bf16_p10"] = DROPOUT.format(n=4096, t="bf16", p=0.1)
    src["dropout_f32_p50_n1024"] = DROPOUT.format(n=1024, t="f32", p=0.5)
    src["chain_dyn_p10"] = CHAIN.format(n=4096, t="bf16", p=0.1)
    src["chain_dyn_p0"] = CHAIN.format(n=4096, t="bf16", p=0.0)
    src["chain_f16_n1024_p30"] = CHAIN.format(n=1024, t="f16", p=0.3)
    return src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--compiler", default=str(ROOT / "build/bin/attnc-compile"))
    ap.add_argument("--runtime", default=str(ROOT / "build/lib/libattnc_runtime.so"))
    ap.add_argument("--only", default="")
    ap.add_argument("--strategy", default="",
                    help="attention tile strategy for every module "
                         "(mma_sync, wgmma; default: the target's)")
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="extra attnc-compile flag for every module "
                         "(e.g. --block-q=192), repeatable")
    ap.add_argument("--generated", type=int, default=0,
                    help="also compile this many attention graphs of "
                         "fuzz/gen_graphs.py (seed 2026) as attn_gen_* "
                         "modules: the differential test of run_tests.py")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="compiles at once (default: the CPU count)")
    args = ap.parse_args()
    out = Path(args.out)
    (out / "mlir").mkdir(parents=True, exist_ok=True)
    (out / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(args.runtime, out / "lib" / "libattnc_runtime.so")
    failed = []
    jobs = []
    src = sources()
    builds = [(name, name, []) for name in src]
    builds += [(base + suffix, base, flags)
               for suffix, (flags, bases) in COMPILE_VARIANTS.items()
               for base in bases]
    for name, base, flags in builds:
        if args.only not in name:
            continue
        path = out / "mlir" / f"{base}.mlir"
        path.write_text(src[base])
        mdir = out / "modules" / name
        if mdir.exists():
            shutil.rmtree(mdir)
        jobs.append((name, compile_command(args, path, mdir) + flags))
    for (name, _), r in zip(jobs, run_all([c for _, c in jobs], args.jobs)):
        status = "ok" if r.returncode == 0 else "FAILED"
        print(f"{name:24} {status} {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''}")
        if r.returncode:
            print(r.stderr, file=sys.stderr)
            failed.append(name)
    if args.generated:
        compile_generated(args, out)
    if not args.only or "bwd" in args.only:
        # The backward's modules (test/gpu/backward_test.py) and the
        # variants attnc.torch runs (test/gpu/torch_test.py).
        scripts = ("backward", "decode", "kv_cache", "varlen", "alibi",
                   "documents", "window", "dropout")
        commands = [[sys.executable, str(ROOT / f"test/gpu/{t}_test.py"),
                     "build", "--work", str(out), "--compiler", args.compiler]
                    for t in scripts]
        commands.append([sys.executable, "-m", "attnc.variants", "--out",
                         str(out / "torch")])
        for cmd in commands:
            env = dict(os.environ, ATTNC_COMPILE=args.compiler,
                       PYTHONPATH=str(ROOT / "python"))
            if subprocess.run(cmd, env=env, capture_output=True,
                              text=True).returncode:
                failed.append(" ".join(cmd[1:3]))
                print(f"FAILED: {' '.join(cmd)}", file=sys.stderr)
    sys.exit(1 if failed else 0)


def run_all(commands, jobs):
    """The compiles, `jobs` at a time (each is one process: LLVM and ptxas
    run one kernel at a time), results in order."""
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(lambda c: subprocess.run(
            c, capture_output=True, text=True), commands))


def compile_command(args, path, mdir):
    cmd = [args.compiler, str(path), "-o", str(mdir)]
    if args.strategy:
        cmd.append(f"--strategy={args.strategy}")
    return cmd + args.compile_arg


def compile_generated(args, out):
    """The differential test's modules: random attention spellings from the
    structured generator. Those the compiler refuses (head dim 96, ...) are
    counted, not failures; a crash would be."""
    for old in (out / "modules").glob("attn_gen_*"):
        shutil.rmtree(old)
    gen = out / "gen_mlir"
    if gen.exists():
        shutil.rmtree(gen)
    subprocess.run([sys.executable, str(ROOT / "fuzz/gen_graphs.py"),
                    "--seed", "2026", "--count", str(args.generated),
                    "--kind", "attention", "--out", str(gen)], check=True)
    compiled = refused = 0
    paths = sorted(gen.glob("*.mlir"))
    mdirs = [out / "modules" / f"attn_gen_{p.stem}" for p in paths]
    results = run_all([compile_command(args, p, m) for p, m in
                       zip(paths, mdirs)], args.jobs)
    for path, mdir, r in zip(paths, mdirs, results):
        if r.returncode == 0:
            compiled += 1
            # The generator's header says what the graph computes.
            header = path.read_text().splitlines()[0]
            spec = dict(kv.split("=", 1) for kv in
                        header.removeprefix("// attnc-gen: ").split())
            (mdir / "generated.json").write_text(json.dumps(spec))
        elif r.returncode == 1 and "error:" in r.stderr:
            refused += 1
        else:
            sys.exit(f"{path.name}: attnc-compile crashed:\n{r.stderr}")
    print(f"generated attention graphs: {compiled} compiled, {refused} "
          f"refused with a diagnostic")


if __name__ == "__main__":
    main()
