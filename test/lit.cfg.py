# -*- Python -*-
# lit configuration of the attnc test suite (check-attnc).

import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "gpu"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attnc_obj_root, "test")
# The sanitizer build (ATTNC_FUZZ) runs the tools, the runtime's C++ tests
# and the fuzz regressions; the Python tests, which would load an
# ASan-instrumented runtime into an uninstrumented interpreter, keep the
# normal build.
if getattr(config, "attnc_sanitized", False):
    config.excludes.append("Python")
    config.available_features.add("asan")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attnc_src_root", config.attnc_src_root))
config.substitutions.append(("%attnc_obj_root", config.attnc_obj_root))
config.substitutions.append(("%attnc_lib_dir", config.attnc_lib_dir))
config.substitutions.append(("%attnc_tools_dir", config.attnc_tools_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%cuda_root", config.cuda_root))

# lit scrubs the environment; the NVVM target finds libdevice and ptxas
# through CUDA_ROOT, so set it for every test.
config.environment["CUDA_ROOT"] = config.cuda_root
config.environment["CUDA_HOME"] = config.cuda_root

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

tool_dirs = [config.attnc_tools_dir, config.llvm_tools_dir]
tools = ["attnc-opt", "FileCheck", "count", "not"]
for extra in ["attnc-compile", "attnc-runtime-tests",
              "attnc-runtime-driver-tests"]:
    if os.path.exists(os.path.join(config.attnc_tools_dir, extra)):
        tools.append(extra)
        config.available_features.add(extra)
llvm_config.add_tool_substitutions(tools, tool_dirs)

if os.path.exists(os.path.join(config.cuda_root, "bin", "ptxas")):
    config.available_features.add("ptxas")
