"""``attnc.compile``: run the ahead-of-time compiler from Python.

The executable is found through the ATTNC_COMPILE environment variable, then
PATH, then <repo>/build/bin/attnc-compile. Compilation runs in a subprocess
(no MLIR in this process); a failure raises CompileError with the compiler's
stderr, which holds its diagnostics.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from ._capi import AttncError, repo_root

EXECUTABLE = "attnc-compile"


class CompileError(AttncError):
    """attnc-compile failed (or could not be found)."""

    def __init__(self, message: str, cmd: Sequence[str] = (),
                 returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stderr = stderr


def find_compiler() -> str:
    env = os.environ.get("ATTNC_COMPILE")
    if env:
        return env
    found = shutil.which(EXECUTABLE)
    if found:
        return found
    built = repo_root() / "build" / "bin" / EXECUTABLE
    if built.is_file():
        return str(built)
    raise CompileError(f"cannot find {EXECUTABLE}: set ATTNC_COMPILE, put it "
                       f"on PATH, or build it into {built}")


def compile(src: str | Path, out_dir: str | Path, chip: str = "sm_90a",
            extra_args: Sequence[str] = (), load: bool = True):
    """Compiles SRC (an .mlir file) into OUT_DIR (manifest.json, cubins).

    Runs ``attnc-compile SRC -o OUT_DIR --chip=CHIP *EXTRA_ARGS`` and returns
    the loaded Module (or OUT_DIR as a Path when LOAD is false).
    """
    cmd = [find_compiler(), str(src), "-o", str(out_dir), f"--chip={chip}",
           *map(str, extra_args)]
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
