"""Shared setup of the CPU tests: import path, fixtures, fake tensors.

The tests run with ``python3 -m unittest discover -s python/tests`` from any
directory; they need libattnc_runtime.so (ATTNC_RUNTIME_LIB, or
<repo>/build/lib) but no GPU, no torch and no numpy.

With ATTNC_TEST_INSTALLED=1 they test the attnc installed in the running
interpreter (the wheel, scripts/wheel-check.sh) instead of python/attnc:
the source tree is kept off the import path and test_install.py checks
that what was imported is the installed copy.
"""

import os
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
INPUTS = REPO / "test" / "Runtime" / "Inputs"
INSTALLED = os.environ.get("ATTNC_TEST_INSTALLED") == "1"
if not INSTALLED and str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def child_pythonpath() -> str:
    """PYTHONPATH for a child interpreter that imports the same attnc and
    this directory's helpers."""
    tests = str(Path(__file__).resolve().parent)
    if INSTALLED:
        return tests
    return os.pathsep.join([str(PYTHON_DIR), tests])


class FakeDType:
    """Prints like a torch dtype ("torch.bfloat16")."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeTensor:
    """Just what attnc reads of a tensor; never dereferenced."""

    def __init__(self, ptr, shape, dtype, strides=None):
        self.ptr = ptr
        self.shape = tuple(shape)
        self.dtype = dtype
        if strides is None:
            acc, rev = 1, []
            for size in reversed(self.shape):
                rev.append(acc)
                acc *= size
            strides = tuple(reversed(rev))
        self.strides = tuple(strides)

    def data_ptr(self):
        return self.ptr

    def stride(self):
        return self.strides
