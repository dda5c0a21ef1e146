"""The attention variants attnc.torch runs, as MLIR, and their compilation
(no torch needed: this runs where attnc-compile is).

    python3 -m attnc.variants --out attnc-kernels/     # compile the matrix
    python3 -m attnc.variants --list [DIR]             # what a library holds

Each variant (head dim, dtype, causal) is one module directory,
OUT/attn_d<D>_<dtype>_<causal|full>/, holding the forward kernel `attn`
(O and the logsumexp; the softmax scale a run-time argument; Hopper's
wgmma_ws strategy), its fallback `attn_fallback` (mma_sync, for tensors TMA
cannot address) and the three kernels of its backward (`attnc-compile
--backward`). Each decoding variant (head dim, dtype),
OUT/decode_d<D>_<dtype>/ (any heads, unpacked) and, for the group sizes of
DECODE_GROUPS, OUT/decode_d<D>_<dtype>_g<G>/ (GQA packed: any heads with
H = G * Hkv), holds
split-KV decoding against a KV cache with per-sequence lengths
(`decode_0`, `decode_1`, and `decode_unsplit`, which runs instead when the
split rule gives one split; attnc.torch's attention_with_kvcache).
OUT/index.json lists the variants and their kernels, read back from the
manifests. The wheel carries such a library for sm_90a (attnc/kernels/,
:func:`prebuilt_dir`); docs/pytorch.md has the matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .compiler import compile as _compile
from .compiler import compile_calibration

HEAD_DIMS = (64, 128)
DTYPE_NAMES = ("bf16", "f16")

_FUNC = """\
func.func @attn(%q: tensor<?x?x?x{d}x{t}>, %k: tensor<?x?x?x{d}x{t}>,
                %v: tensor<?x?x?x{d}x{t}>, %s: f32 {{attnc.name = "scale"}})
    -> tensor<?x?x?x{d}x{t}> {{
  %o = attnc.attention %q, %k, %v runtime_scale(%s) {{scale = 1.0 : f64}}
      : tensor<?x?x?x{d}x{t}>, tensor<?x?x?x{d}x{t}>, tensor<?x?x?x{d}x{t}> -> tensor<?x?x?x{d}x{t}>
{mask}  return %o : tensor<?x?x?x{d}x{t}>
}}
"""
_CAUSAL = """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
"""

# Decoding against a KV cache: Sq new queries (1 when decoding, more for a
# chunk of a prompt or speculative tokens) at the end of each sequence's
# first kv_lengths[b] cache positions; query i sees keys
# j <= i + kv_lengths[b] - Sq (bottom-right causal per sequence). Split-KV
# (FlashDecoding): `decode_0` writes f32 partials of up to 128 parts of
# the cache, `decode_1` merges them; `decode_unsplit` (the partial
# kernel's unsplit twin) runs instead when the rule gives one split. Heads are known at run time ("?"):
# unpacked, each query head reads its K/V head (a GQA group of G reads the
# cache G times); compiled with --gqa-group=G, --attnc-pack-gqa puts a
# group's queries in one tile, which reads the cache once, and the kernels
# require H = G * Hkv.
_DECODE = """\
func.func @decode(%q: tensor<?x{h}x?x{d}x{t}>, %k: tensor<?x{hkv}x?x{d}x{t}>,
                  %v: tensor<?x{hkv}x?x{d}x{t}>, %kv_lengths: tensor<?xi32>,
                  %s: f32 {{attnc.name = "scale"}}) -> tensor<?x{h}x?x{d}x{t}> {{
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x{h}x?x{d}x{t}>
  %o = attnc.attention %q, %k, %v runtime_scale(%s)
      kv_lengths(%kv_lengths : tensor<?xi32>) {{scale = 1.0 : f64}}
      : tensor<?x{h}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}> -> tensor<?x{h}x?x{d}x{t}>
      mask {{
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %n = tensor.extract %kv_lengths[%b] : tensor<?xi32>
        %len = arith.index_castui %n : i32 to index
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %len : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }}
  return %o : tensor<?x{h}x?x{d}x{t}>
}}
"""
# The GQA group sizes G = H / Hkv of the packed decoding variants: every
# group that divides the 32-row decode tile, 2 to 32 (MQA), which covers
# common models whole (32:8 Llama-3-8B and Mistral-7B: 4; 64:8 the 70B
# class: 8) and split by tensor parallelism (32:4, 16:2, 8:1: 8). Groups
# of 3 or 7 (24:8, 28:4) cannot be packed; they and H = Hkv run the
# unpacked variant.
DECODE_GROUPS = (2, 4, 8, 16, 32)
DECODE_SPLITS = 128


def variant_name(head_dim: int, dtype: str, causal: bool) -> str:
    return f"attn_d{head_dim}_{dtype}_{'causal' if causal else 'full'}"


def decode_variant_name(head_dim: int, dtype: str,
                        group: int | None = None) -> str:
    """decode_d<D>_<dtype> (unpacked) or, packed in GQA groups of GROUP
    query heads, decode_d<D>_<dtype>_g<GROUP>."""
    tail = f"_g{group}" if group else ""
    return f"decode_d{head_dim}_{dtype}{tail}"


def decode_args(group: int | None = None) -> list[str]:
    """attnc-compile's flags for a decoding variant."""
    return [f"--split-kv={DECODE_SPLITS}",
            *([f"--gqa-group={group}"] if group else [])]


def source(head_dim: int, dtype: str, causal: bool) -> str:
    """The MLIR of one variant (what `build` compiles)."""
    return _FUNC.format(d=head_dim, t=dtype, mask=_CAUSAL if causal else "")


def decode_source(head_dim: int, dtype: str,
                  heads: tuple[int, int] | None = None) -> str:
    """The MLIR of decoding (HEADS: static (H, Hkv), packed by
    --split-kv alone; the library's variants have run-time heads)."""
    h, hkv = heads if heads else ("?", "?")
    return _DECODE.format(d=head_dim, t=dtype, h=h, hkv=hkv)


def build(out: str | os.PathLike, head_dims=HEAD_DIMS, dtypes=DTYPE_NAMES,
          causal=(False, True), extra_args=(), decode=True,
          groups=DECODE_GROUPS) -> list[Path]:
    """Compiles every variant (forward and backward; with DECODE the
    decoding ones, packed for GROUPS) into OUT/<variant>/ and writes
    OUT/index.json."""
    out = Path(out)
    (out / "mlir").mkdir(parents=True, exist_ok=True)
    built = []

    def one(name, text, args):
        src = out / "mlir" / f"{name}.mlir"
        src.write_text(text)
        built.append(_compile(src, out / name, extra_args=[*args, *extra_args],
                              load=False))

    for d in head_dims:
        for t in dtypes:
            for c in causal:
                one(variant_name(d, t, c), source(d, t, c), ["--backward"])
            if decode:
                for group in (None, *groups):
                    one(decode_variant_name(d, t, group),
                        decode_source(d, t), decode_args(group))
    # The cost model's microbenchmarks, for python3 -m attnc.calibrate.
    built.append(compile_calibration(out / CALIBRATION, load=False))
    write_index(out)
    return built


INDEX = "index.json"
# The library's module of microbenchmark kernels (not a variant).
CALIBRATION = "calibration"
# A kernel's role in a variant, from its manifest kind; the kernels of a
# backward are an attention_backward kernel and fusions (delta, dQ).
ROLES = {"attention": "forward", "attention_backward": "backward",
         "attention_partial": "decode partials",
         "attention_combine": "decode combine"}


def _condition(c: dict) -> str:
    """A manifest constraint as text: `Sq >= 4096`."""
    if c["kind"] in ("min", "max"):
        return f"{c['sym']} {'>=' if c['kind'] == 'min' else '<='} {c['value']}"
    if c["kind"] == "at_most":
        return f"{c['lhs']} <= {c['value']} * {c['rhs']}"
    return f"{c['kind']}({c['lhs']}, {c['rhs']})"


def describe(module_dir: str | os.PathLike) -> dict:
    """One variant of a library as its manifest states it: head dim, dtype,
    mask, chip and, per kernel, its role and strategy."""
    module_dir = Path(module_dir)
    manifest = json.loads((module_dir / "manifest.json").read_text())
    kernels = {}
    fallbacks = {k["fallback"] for k in manifest["kernels"]
                 if k.get("fallback")}
    # A split function's unsplit twin: run when the split rule gives 1.
    twins = {k["unsplit"] for k in manifest["kernels"] if k.get("unsplit")}
    # A kernel's size variants, each with the sizes it runs for.
    sized = {v["kernel"]: " and ".join(map(_condition, v["when"]))
             for k in manifest["kernels"] for v in k.get("variants", ())}
    for k in manifest["kernels"]:
        attrs = k.get("attrs", {})
        role = ROLES.get(k.get("kind"), "backward")
        if k["name"] in twins:
            role = "decode one split"
        if k["name"] in fallbacks:
            role += " fallback"
        if k["name"] in sized:
            role += f" when {sized[k['name']]}"
        kernels[k["name"]] = {"role": role,
                              "strategy": attrs.get("strategy", "fusion")}
    main = next(k for k in manifest["kernels"]
                if k.get("kind") in ("attention", "attention_partial"))
    q = next(p for p in main["params"] if p["name"] == "q")
    k = next(p for p in main["params"] if p["name"] == "k")
    heads = [q["shape"][1], k["shape"][1]]
    static = not any(isinstance(h, str) for h in heads)
    # Packed GQA: the grid runs over the K/V heads, a group per tile; with
    # run-time heads the kernel requires H = G * Hkv.
    packed = heads[0] != heads[1] and main["grid"][1] == [heads[1]]
    group = next((c["value"] for c in main.get("constraints", ())
                  if c["kind"] == "ratio"), None)
    return {"name": module_dir.name, "chip": manifest.get("chip"),
            "head_dim": main["attrs"]["head_dim"], "dtype": q["dtype"],
            "mask": main["attrs"].get("mask", "none"),
            "heads": f"{heads[0]}:{heads[1]}" if static else "any",
            "gqa_packed": packed, "gqa_group": group, "kernels": kernels}


def write_index(out: str | os.PathLike) -> Path:
    """OUT/index.json: every module directory of OUT, described."""
    out = Path(out)
    variants = [describe(p.parent) for p in sorted(out.glob("*/manifest.json"))
                if p.parent.name != CALIBRATION]
    path = out / INDEX
    path.write_text(json.dumps({"variants": variants}, indent=1) + "\n")
    return path


def prebuilt_dir() -> Path | None:
    """The kernel library installed with this package (the wheel's
    attnc/kernels/), or None when there is none (a source checkout)."""
    path = Path(__file__).resolve().parent / "kernels"
    return path if (path / INDEX).is_file() else None


def listing(library: str | os.PathLike | None = None) -> list[dict]:
    """The variants of LIBRARY (default: the prebuilt one; [] if none)."""
    library = Path(library) if library is not None else prebuilt_dir()
    if library is None or not (library / INDEX).is_file():
        return []
    return json.loads((library / INDEX).read_text())["variants"]


def format_listing(variants: list[dict]) -> str:
    lines = []
    for v in variants:
        kernels = ", ".join(f"{n} ({k['role']}, {k['strategy']})"
                            for n, k in v["kernels"].items())
        packed = " (GQA packed)" if v.get("gqa_packed") else ""
        if v.get("gqa_group"):
            packed = f" (GQA packed: H = {v['gqa_group']} * Hkv)"
        lines.append(f"{v['name']}: d={v['head_dim']} {v['dtype']} "
                     f"heads={v['heads']}{packed} mask={v['mask']} "
                     f"{v['chip']}: {kernels}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m attnc.variants")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", help="compile the variant matrix into OUT")
    g.add_argument("--list", nargs="?", const="", metavar="DIR",
                   help="list a library's variants (default: the prebuilt)")
    a = ap.parse_args(argv)
    if a.list is not None:
        variants = listing(a.list or None)
        if not variants:
            print(f"no kernel library at {a.list or 'attnc/kernels'}",
                  file=sys.stderr)
            return 1
        print(format_listing(variants))
        return 0
    for p in build(a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
