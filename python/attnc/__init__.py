"""attnc: load and launch kernels compiled by attnc-compile.

    import attnc
    m = attnc.load("out/")                 # manifest.json + cubins
    o, lse = m["attention_fwd"](q, k, v)   # torch tensors in, outputs out
    with attnc.Graph() as g:               # CUDA graph of launches
        m["attention_fwd"](q, k, v, o=o, lse=lse)
    g.replay()

Pure Python over libattnc_runtime.so (ctypes); torch is optional and only
imported by the caller. See docs/runtime.md; ``python3 -m attnc`` says what
this installation has (runtime, compiler, prebuilt kernels).
"""

# The project's version (CMakeLists.txt's; scripts/build_wheel.py checks).
__version__ = "0.1.0"

from ._capi import AttncError
from .compiler import CompileError, compile, find_compiler
from .runtime import Constraint, Graph, Kernel, Module, Param, Plan, load

__all__ = ["__version__", "AttncError", "CompileError", "Constraint", "Graph",
           "Kernel", "Module", "Param", "Plan", "compile", "find_compiler",
           "load"]
