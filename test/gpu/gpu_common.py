"""Shared by the GPU test scripts (decode, caches, ragged batches): the
FlashAttention error rule, one case's guarded run, and the build/run CLI."""

import argparse
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fa_rule(got, ref, low, dtype):
    """FlashAttention's rule: the error of `got` against float64 `ref` is at
    most twice that of the naive computation in the input precision (`low`)
    plus half an ulp of the largest output. Returns (ok, err, err_low)."""
    import torch
    err = (got.double() - ref).abs().max().item()
    err_low = (low.double() - ref).abs().max().item()
    big = ref.abs().max().item()
    mant = 7 if dtype == torch.bfloat16 else 10
    half_ulp = math.ldexp(1.0, math.frexp(big)[1] - 1 - mant) / 2 if big \
        else 0.0
    return err <= 2 * err_low + half_ulp + 1e-5, err, err_low


def guarded(case, *args):
    """(ok, results) of `case(*args)`, an exception a failure."""
    try:
        return case(*args)
    except Exception as e:  # noqa: BLE001
        return False, {"error": repr(e)[:300]}


def main(build, run, quick_help=None):
    """`SCRIPT build --work W` compiles the modules here; `SCRIPT run --work
    W` runs them on the GPU machine."""
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["build", "run"])
    ap.add_argument("--work", default=".gpuwork", type=Path)
    ap.add_argument("--compiler", default=ROOT / "build/bin/attnc-compile",
                    type=Path)
    ap.add_argument("--small", action="store_true",
                    help="small shapes only (for compute-sanitizer)")
    ap.add_argument("--only", default="",
                    help="modules whose name contains this")
    if quick_help:
        ap.add_argument("--quick", action="store_true", help=quick_help)
    a = ap.parse_args()
    if a.mode == "build":
        build(a.work, a.compiler)
        return 0
    kwargs = {"quick": a.quick} if quick_help else {}
    return run(a.work, a.small, a.only, **kwargs)
