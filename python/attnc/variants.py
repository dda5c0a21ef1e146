"""The attention variants attnc.torch runs, as MLIR, and their compilation
(no torch needed: this runs where attnc-compile is).

    python3 -m attnc.variants --out attnc-kernels/

Each variant (head dim, dtype, causal) is one module directory,
OUT/attn_d<D>_<dtype>_<causal|full>/, holding the forward kernel `attn`
(O and the logsumexp; the softmax scale a run-time argument) and the three
kernels of its backward (`attnc-compile --backward`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .compiler import compile as _compile

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

def variant_name(head_dim: int, dtype: str, causal: bool) -> str:
    return f"attn_d{head_dim}_{dtype}_{'causal' if causal else 'full'}"


def source(head_dim: int, dtype: str, causal: bool) -> str:
    """The MLIR of one variant (what `build` compiles)."""
    return _FUNC.format(d=head_dim, t=dtype, mask=_CAUSAL if causal else "")


def build(out: str | os.PathLike, head_dims=HEAD_DIMS, dtypes=DTYPE_NAMES,
          causal=(False, True), extra_args=()) -> list[Path]:
    """Compiles every variant (forward and backward) into OUT/<variant>/."""
    out = Path(out)
    (out / "mlir").mkdir(parents=True, exist_ok=True)
    built = []
    for d in head_dims:
        for t in dtypes:
            for c in causal:
                name = variant_name(d, t, c)
                src = out / "mlir" / f"{name}.mlir"
                src.write_text(source(d, t, c))
                built.append(_compile(src, out / name,
                                      extra_args=["--backward", *extra_args],
                                      load=False))
    return built


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m attnc.variants")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    for p in build(a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
