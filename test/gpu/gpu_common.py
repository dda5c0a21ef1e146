"""Shared by the GPU test scripts (decode, caches, ragged batches): the
FlashAttention error rule, one case's guarded run, and the build/run CLI."""

import argparse
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# ATTNC_TEST_INSTALLED=1 (scripts/gpu-test.sh --installed): the suite tests
# the attnc installed in the interpreter (the wheel), not python/attnc.
INSTALLED = os.environ.get("ATTNC_TEST_INSTALLED") == "1"


def use_source_package():
    """Puts the checkout's python/ first on the import path, unless the
    suite tests an installed attnc; then checks that `import attnc` gives
    the installed copy."""
    if not INSTALLED:
        if str(ROOT / "python") not in sys.path:
            sys.path.insert(0, str(ROOT / "python"))
        return
    import attnc
    where = Path(attnc.__file__).resolve()
    if where.is_relative_to(ROOT / "python"):
        sys.exit(f"ATTNC_TEST_INSTALLED=1 but attnc comes from {where}")


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


def reference(q, k, v, scale, dt, modify=None, visible=None, keep=None,
              dropout=0.0):
    """Attention in precision `dt` (scores in f32 at least), query head h
    reading K/V head h // (H / Hkv) (GQA): `modify(scores)` before the
    mask, `visible` (bool, broadcasting to [B, H, Sq, Skv]) the mask, `keep` (bool [B, H, Sq, Skv])
    the probabilities dropout keeps (scaled by 1 / (1 - dropout)). Returns
    (O, logsumexp), the logsumexp (of the undropped softmax) only for
    float64; rows that see no key give O = 0."""
    import torch
    B, H, Sq = q.shape[:3]
    Hkv, Skv = k.shape[1], k.shape[2]
    # Query head h reads K/V head h // G: the G heads of a group multiply
    # their K/V head as one [G * Sq, d] matrix, so K and V are never
    # repeated (a float64 copy per query head is 32 GiB at H = 256 and
    # 128k keys).
    G = H // Hkv
    qg = q.to(dt).reshape(B, Hkv, G * Sq, q.shape[3])
    acc = dt if dt == torch.float64 else torch.float32
    s = torch.matmul(qg, k.to(dt).transpose(-1, -2)).to(acc) * scale
    s = s.view(B, H, Sq, Skv)
    if modify is not None:
        s = modify(s)
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, dim=-1) if dt == torch.float64 else None
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    if keep is not None:
        p = p * keep / (1.0 - dropout)
    o = torch.matmul(p.to(dt).reshape(B, Hkv, G * Sq, Skv), v.to(dt))
    return o.view(B, H, Sq, v.shape[3]), lse


def check_output(o, lse, ref, low, ref_lse, dtype):
    """(ok, results): O by the FlashAttention rule, the logsumexp within
    1e-3 where finite, and rows that see no key O = 0 and logsumexp -inf."""
    import torch
    if torch.isnan(o).any():
        return False, {"o": "NaN"}
    ok, err, err_low = fa_rule(o, ref, low, dtype)
    finite = torch.isfinite(ref_lse)
    lse_err = (lse.double() - ref_lse)[finite].abs().max().item() \
        if finite.any() else 0.0
    empty = ~finite
    empty_ok = bool((lse[empty] == float("-inf")).all()) and \
        bool((o.float()[empty] == 0).all())
    ok &= lse_err <= 1e-3 and empty_ok
    return ok, {"o": f"{err:.2e}/{err_low:.2e}", "lse": f"{lse_err:.1e}",
                "empty_rows": int(empty.sum().item())}


# The target's default strategy (wgmma_ws on sm_90a, with the fallback
# that tensors TMA cannot address reach) and mma_sync.
STRATEGIES = {"default": [], "mma_sync": ["--strategy=mma_sync"]}
# Masks with tiles to mask on both sides of the visible ones (windows,
# documents) visit those tiles in one K/V loop by default; they also run
# with a loop per side (the default's kernels and fallback, built with
# --one-masked-loop=false).
INTERVAL_STRATEGIES = dict(STRATEGIES,
                           loop_per_side=["--one-masked-loop=false"])


def build_strategies(work, compiler, sources, strategies=None):
    """Compiles each {name: MLIR text} once per strategy of `strategies`
    (default STRATEGIES) into WORK/modules/NAME_STRATEGY (PTX dropped: the
    cubins are what runs)."""
    import subprocess
    import time
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        src = work / "mlir" / f"{name}.mlir"
        src.write_text(text)
        for strategy, flags in (strategies or STRATEGIES).items():
            out = work / "modules" / f"{name}_{strategy}"
            t0 = time.time()
            subprocess.run([str(compiler), str(src), "-o", str(out)] + flags,
                           check=True)
            print(f"{name}_{strategy}: {time.time() - t0:.1f} s", flush=True)
            for ptx in out.glob("*.ptx"):
                ptx.unlink()


def layouts(strategy):
    """The layouts a strategy's module is run on: "odd" (tensors one
    element off 16-byte alignment, misalign()) reaches the default's
    fallback (that of loop_per_side too)."""
    if strategy in ("default", "loop_per_side"):
        return ["bhsd", "odd"]
    return ["bhsd"]


def launch_only():
    """ATTNC_TEST_LAUNCH_ONLY=1: cases launch attnc's kernels and check
    nothing (for compute-sanitizer's racecheck, which stops with an
    internal error, "failed to handle a hardware exception", once the
    references' cuBLAS kernels run in the same process; the kernels alone
    are clean, and the normal run checks the results)."""
    import os
    return bool(os.environ.get("ATTNC_TEST_LAUNCH_ONLY"))


def misalign(x):
    """`x` copied to an address 2 bytes past an aligned one: TMA cannot
    address it."""
    import torch
    return torch.cat([x.new_zeros(1), x.flatten()])[1:].view(x.shape)


def run_strategies(work, only, names, cases, extra=(), strategies=None):
    """Loads each module NAME_STRATEGY (`names` x `strategies`, default
    STRATEGIES, then the
    (module, name, strategy) triples of `extra`: modules of a name built
    with other options) whose name contains `only` and runs, guarded, every
    (label, case, args) that `cases(name, strategy, module)` yields; prints
    a line per case and the count. Returns the exit status."""
    use_source_package()
    import attnc
    failures = total = 0
    modules = [(f"{n}_{s}", n, s) for n in names
               for s in (strategies or STRATEGIES)]
    for mod, name, strategy in modules + list(extra):
        if only not in mod:
            continue
        m = attnc.load(work / "modules" / mod)
        for label, case, args in cases(name, strategy, m):
            total += 1
            ok, res = guarded(case, *args)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {mod} {label} {res}",
                  flush=True)
    print(f"{total - failures}/{total} passed")
    return 1 if failures else 0


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
