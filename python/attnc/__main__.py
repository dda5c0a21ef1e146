"""``python3 -m attnc``: what this installation of attnc has.

Prints the package's version and place, the runtime library it loads, the
compiler it would run (or how to get one) and the prebuilt kernel library's
variants. Exit status 1 when the runtime library cannot be loaded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import __version__, _capi
from .compiler import CompileError, find_compiler
from .variants import format_listing, listing, prebuilt_dir


def main() -> int:
    print(f"attnc {__version__} at {Path(__file__).resolve().parent}")
    status = 0
    try:
        handle = _capi.lib()
        print(f"runtime: {handle._name} (loaded)")
    except _capi.AttncError as e:
        print(f"runtime: {e}")
        status = 1
    try:
        print(f"compiler: {find_compiler()}")
    except CompileError as e:
        print(f"compiler: none ({e})")
    library = prebuilt_dir()
    if library is None:
        print("prebuilt kernels: none (a source checkout; build a library "
              "with python3 -m attnc.variants --out DIR)")
    else:
        variants = listing(library)
        print(f"prebuilt kernels: {len(variants)} variants in {library}")
        print(format_listing(variants))
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python3 -m attnc | head`: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
