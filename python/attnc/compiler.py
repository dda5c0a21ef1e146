"""``attnc.compile``: run the ahead-of-time compiler from Python.

The executable is found, in order, through the ATTNC_COMPILE environment
variable, on PATH, beside this package (the bin/ directory of the prefix it
is installed in: a virtual environment, a CMake install) and, in a source
checkout, in <repo>/build/bin. The wheel does not carry it (it links LLVM
and MLIR 22); its precompiled kernels need no compiler. Compilation runs in
a subprocess (no MLIR in this process); a failure raises CompileError with
the compiler's stderr, which holds its diagnostics.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from ._capi import AttncError, source_tree

EXECUTABLE = "attnc-compile"
HOW_TO_GET = (
    "attnc-compile is built from attnc's sources (it needs LLVM/MLIR 22): "
    "`make` in a checkout builds build/bin/attnc-compile, `cmake --install "
    "build --prefix P` puts it in P/bin; then put it on PATH or set "
    "ATTNC_COMPILE")


class CompileError(AttncError):
    """attnc-compile failed (or could not be found)."""

    def __init__(self, message: str, cmd: Sequence[str] = (),
                 returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stderr = stderr


def compiler_candidates() -> list[Path]:
    """Where attnc-compile is looked for after ATTNC_COMPILE and PATH."""
    here = Path(__file__).resolve().parent
    found = [Path(sys.prefix) / "bin" / EXECUTABLE]
    # <prefix>/lib/pythonX.Y/site-packages/attnc -> <prefix>/bin
    for up in list(here.parents)[:4]:
        if (up / "bin").is_dir():
            found.append(up / "bin" / EXECUTABLE)
    checkout = source_tree()
    if checkout is not None:
        found.append(checkout / "build" / "bin" / EXECUTABLE)
    return list(dict.fromkeys(found))


def find_compiler() -> str:
    env = os.environ.get("ATTNC_COMPILE")
    if env:
        return env
    found = shutil.which(EXECUTABLE)
    if found:
        return found
    candidates = compiler_candidates()
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    raise CompileError(
        f"cannot find {EXECUTABLE} (not on PATH; looked at "
        + ", ".join(map(str, candidates)) + f"). {HOW_TO_GET}")


def compile(src: str | Path, out_dir: str | Path, chip: str = "sm_90a",
            extra_args: Sequence[str] = (), load: bool = True):
    """Compiles SRC (an .mlir file) into OUT_DIR (manifest.json, cubins).

    Runs ``attnc-compile SRC -o OUT_DIR --chip=CHIP *EXTRA_ARGS`` and returns
    the loaded Module (or OUT_DIR as a Path when LOAD is false).
    """
    cmd = [find_compiler(), str(src), "-o", str(out_dir), f"--chip={chip}",
           *map(str, extra_args)]
    return _run(cmd, src, out_dir, load)


def compile_calibration(out_dir: str | Path, chip: str = "sm_90a",
                        load: bool = True):
    """Compiles the cost model's microbenchmarks (``attnc-compile
    --calibration``) into OUT_DIR, the module ``attnc.calibrate`` times."""
    cmd = [find_compiler(), "--calibration", "-o", str(out_dir),
           f"--chip={chip}"]
    return _run(cmd, "the calibration kernels", out_dir, load)


def _run(cmd: list, src, out_dir, load: bool):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise CompileError(f"cannot run {cmd[0]}: {e}", cmd) from e
    if proc.returncode != 0:
        stderr = proc.stderr.strip()
        raise CompileError(
            f"{EXECUTABLE} failed (exit code {proc.returncode}) on {src}:\n"
            f"{stderr}", cmd, proc.returncode, proc.stderr)
    if not load:
        return Path(out_dir)
    from .runtime import load as load_module
    return load_module(out_dir)
