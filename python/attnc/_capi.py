"""ctypes declarations of libattnc_runtime.so (include/attnc-c/Runtime.h).

The library is found, in order, through the ATTNC_RUNTIME_LIB environment
variable, next to this package, and in <repo>/build/lib. It is opened on first
use, so ``import attnc`` works (and ``attnc.compile`` runs) before the runtime
is built. Every C status other than ATTNC_OK becomes an ``AttncError`` carrying
the library's message.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (POINTER, Structure, Union, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t, c_uint64, c_void_p)
from pathlib import Path

LIBRARY_NAME = "libattnc_runtime.so"

STATUS_NAMES = {
    0: "ATTNC_OK",
    1: "ATTNC_ERROR_INVALID_ARGUMENT",
    2: "ATTNC_ERROR_IO",
    3: "ATTNC_ERROR_MANIFEST",
    4: "ATTNC_ERROR_NOT_FOUND",
    5: "ATTNC_ERROR_VALIDATION",
    6: "ATTNC_ERROR_CUDA",
    7: "ATTNC_ERROR_NO_DRIVER",
}

# attnc_dtype, attnc_param_kind and attnc_role values.
DTYPES = {1: "bf16", 2: "f16", 3: "f32", 4: "f64", 5: "i1", 6: "i8",
          7: "i32", 8: "i64"}
DTYPE_CODES = {name: code for code, name in DTYPES.items()}
PARAM_KINDS = {0: "tensor", 1: "size", 2: "stride", 3: "scalar",
               4: "tensormap", 5: "workspace"}
ROLES = {0: None, 1: "input", 2: "output"}
# attnc_factor_kind and attnc_constraint_kind values.
FACTOR_CONSTANT, FACTOR_SYMBOL, FACTOR_NUM_SMS = 0, 1, 2
CONSTRAINT_KINDS = {0: "divisible", 1: "equal", 2: "min", 3: "max",
                    4: "ratio", 5: "at_most"}
# attnc_size_rule_kind values.
SIZE_RULE_KINDS = {0: "kv_splits"}


class AttncError(RuntimeError):
    """An error reported by the attnc runtime or compiler.

    ``status`` is the C status name (e.g. ``"ATTNC_ERROR_VALIDATION"``) when
    the error comes from libattnc_runtime.so, else None.
    """

    def __init__(self, message: str, status: str | None = None):
        super().__init__(message)
        self.status = status


class ParamInfo(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("kind", c_int),
        ("dtype", c_int),
        ("role", c_int),
        ("rank", c_int32),
        ("align", c_int64),
        ("contiguous_last", c_int32),
        ("tensor", c_char_p),
        ("dim", c_int32),
    ]


class Factor(Structure):
    _fields_ = [
        ("kind", c_int),
        ("value", c_int64),
        ("symbol", c_char_p),
        ("ceil_div", c_int64),
        ("plus", c_char_p),
    ]


class TensorMapInfo(Structure):
    _fields_ = [
        ("tensor", c_char_p),
        ("tensor_index", c_size_t),
        ("rank", c_int32),
        ("box", POINTER(c_int64)),
        ("swizzle", c_int32),
        ("oob_fill_nan", c_int32),
    ]


class WorkspaceInfo(Structure):
    _fields_ = [("num_byte_factors", c_size_t), ("zero_init", c_int32)]


class ConstraintInfo(Structure):
    _fields_ = [
        ("kind", c_int),
        ("lhs", c_char_p),
        ("rhs", c_char_p),
        ("value", c_int64),
    ]


class SizeRuleInfo(Structure):
    _fields_ = [
        ("kind", c_int),
        ("symbol", c_char_p),
        ("max", c_int64),
        ("ctas_per_sm", c_int64),
        ("num_kv_tiles", c_size_t),
    ]


class PlanOptions(Structure):
    _fields_ = [("num_sms", c_int64)]


class TensorDesc(Structure):
    _fields_ = [
        ("data", c_uint64),
        ("dtype", c_int),
        ("rank", c_int32),
        ("sizes", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
    ]


class _ScalarValue(Union):
    _fields_ = [("i", c_int64), ("f", c_double)]


class ScalarDesc(Structure):
    _fields_ = [("is_float", c_int32), ("value", _ScalarValue)]


class Estimate(Structure):
    _fields_ = [(name, c_double) for name in (
        "time_us", "launch_us", "mma_us", "softmax_us", "shared_us",
        "fill_us", "sm_us", "dram_us", "reduce_us", "cta_us", "waves",
        "steps")] + [
        ("ctas_per_sm", c_int64),
        ("limiter", ctypes.c_char * 16),
        ("regime", ctypes.c_char * 16),
    ]


_P = c_void_p  # every opaque handle
_S = c_int  # attnc_status

# name: (restype, argtypes)
_SIGNATURES = {
    "attnc_last_error": (c_char_p, []),
    "attnc_status_name": (c_char_p, [c_int]),
    "attnc_dtype_name": (c_char_p, [c_int]),
    "attnc_dtype_from_name": (c_int, [c_char_p]),
    "attnc_dtype_size": (c_size_t, [c_int]),
    "attnc_module_load": (_S, [c_char_p, POINTER(_P)]),
    "attnc_manifest_parse": (_S, [c_char_p, c_size_t, c_char_p, POINTER(_P)]),
    "attnc_module_unload": (None, [_P]),
    "attnc_module_name": (c_char_p, [_P]),
    "attnc_module_chip": (c_char_p, [_P]),
    "attnc_module_num_kernels": (c_size_t, [_P]),
    "attnc_module_kernel_at": (_P, [_P, c_size_t]),
    "attnc_module_get_kernel": (_S, [_P, c_char_p, POINTER(_P)]),
    "attnc_kernel_name": (c_char_p, [_P]),
    "attnc_kernel_kind": (c_char_p, [_P]),
    "attnc_kernel_fallback": (_P, [_P]),
    "attnc_kernel_unsplit": (_P, [_P]),
    "attnc_kernel_num_variants": (c_size_t, [_P]),
    "attnc_kernel_variant": (_P, [_P, c_size_t]),
    "attnc_kernel_variant_num_conditions": (c_size_t, [_P, c_size_t]),
    "attnc_kernel_variant_condition": (_S, [_P, c_size_t, c_size_t,
                                            POINTER(ConstraintInfo)]),
    "attnc_kernel_programmatic_launch": (c_int, [_P]),
    "attnc_kernel_num_params": (c_size_t, [_P]),
    "attnc_kernel_param": (_S, [_P, c_size_t, POINTER(ParamInfo)]),
    "attnc_kernel_find_param": (_S, [_P, c_char_p, POINTER(c_int64)]),
    "attnc_kernel_param_dim": (_S, [_P, c_size_t, c_int32, POINTER(c_int64),
                                    POINTER(c_char_p)]),
    "attnc_kernel_launch_config": (None, [_P, POINTER(c_int64),
                                          POINTER(c_int64)]),
    "attnc_kernel_attr": (c_char_p, [_P, c_char_p]),
    "attnc_kernel_grid_num_factors": (c_size_t, [_P, c_int32]),
    "attnc_kernel_grid_factor": (_S, [_P, c_int32, c_size_t,
                                      POINTER(Factor)]),
    "attnc_kernel_param_tensormap": (_S, [_P, c_size_t,
                                          POINTER(TensorMapInfo)]),
    "attnc_kernel_param_workspace": (_S, [_P, c_size_t,
                                          POINTER(WorkspaceInfo)]),
    "attnc_kernel_param_workspace_factor": (_S, [_P, c_size_t, c_size_t,
                                                 POINTER(Factor)]),
    "attnc_kernel_num_constraints": (c_size_t, [_P]),
    "attnc_kernel_constraint": (_S, [_P, c_size_t, POINTER(ConstraintInfo)]),
    "attnc_kernel_num_size_rules": (c_size_t, [_P]),
    "attnc_kernel_size_rule_info": (_S, [_P, c_size_t,
                                         POINTER(SizeRuleInfo)]),
    "attnc_kernel_size_rule_factor": (_S, [_P, c_size_t, c_size_t,
                                           POINTER(Factor)]),
    "attnc_kernel_size_rule": (_S, [_P, c_char_p, POINTER(TensorDesc),
                                    c_size_t, c_int32, POINTER(c_int64)]),
    "attnc_plan_create": (_S, [_P, POINTER(TensorDesc), c_size_t,
                               POINTER(ScalarDesc), c_size_t, POINTER(_P)]),
    "attnc_plan_create_with_options": (_S, [_P, POINTER(TensorDesc), c_size_t,
                                            POINTER(ScalarDesc), c_size_t,
                                            POINTER(PlanOptions),
                                            POINTER(_P)]),
    "attnc_plan_destroy": (None, [_P]),
    "attnc_plan_kernel": (_P, [_P]),
    "attnc_plan_grid": (None, [_P, POINTER(c_int64)]),
    "attnc_plan_is_empty": (c_int, [_P]),
    "attnc_plan_symbol": (_S, [_P, c_char_p, POINTER(c_int64)]),
    "attnc_plan_workspace_bytes": (_S, [_P, c_size_t, POINTER(c_uint64)]),
    "attnc_plan_num_params": (c_size_t, [_P]),
    "attnc_plan_param": (_S, [_P, c_size_t, POINTER(c_void_p),
                              POINTER(c_size_t)]),
    "attnc_module_load_gpu": (_S, [_P]),
    "attnc_plan_launch": (_S, [_P, _P]),
    "attnc_launch": (_S, [_P, POINTER(TensorDesc), c_size_t,
                          POINTER(ScalarDesc), c_size_t, _P]),
    "attnc_graph_begin": (_S, [_P]),
    "attnc_graph_end": (_S, [_P, POINTER(_P)]),
    "attnc_graph_replay": (_S, [_P, _P]),
    "attnc_graph_destroy": (None, [_P]),
    "attnc_device_model_parse": (_S, [c_char_p, c_size_t, POINTER(_P)]),
    "attnc_device_model_builtin": (_S, [c_char_p, POINTER(_P)]),
    "attnc_device_model_destroy": (None, [_P]),
    "attnc_device_model_json": (c_char_p, [_P]),
    "attnc_plan_estimate": (_S, [_P, _P, POINTER(Estimate)]),
}

_lock = threading.Lock()
_lib = None


def repo_root() -> Path:
    """The source tree this package sits in (python/attnc/ -> repo)."""
    return Path(__file__).resolve().parents[2]


def source_tree() -> Path | None:
    """repo_root() when this package runs from an attnc checkout, None when
    it is installed (a wheel, a CMake install)."""
    root = repo_root()
    if (root / "python" / "attnc").is_dir() and \
            (root / "CMakeLists.txt").is_file():
        return root
    return None


def library_candidates() -> list[Path]:
    env = os.environ.get("ATTNC_RUNTIME_LIB")
    if env:
        return [Path(env)]
    found = [Path(__file__).resolve().parent / LIBRARY_NAME]
    checkout = source_tree()
    if checkout is not None:
        found.append(checkout / "build" / "lib" / LIBRARY_NAME)
    return found


def lib():
    """The loaded library, opened on first use."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            candidates = library_candidates()
            path = next((p for p in candidates if p.is_file()), None)
            if path is None:
                raise AttncError(
                    f"cannot find {LIBRARY_NAME}: looked at "
                    + ", ".join(str(p) for p in candidates)
                    + " (the wheel carries it: pip install attnc; from "
                    "a checkout, build the attnc_runtime target; or set "
                    "ATTNC_RUNTIME_LIB)")
            try:
                handle = ctypes.CDLL(str(path))
            except OSError as e:
                raise AttncError(f"cannot load {path}: {e}") from e
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(handle, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = handle
    return _lib


def check(status: int) -> None:
    """Raises AttncError with the C library's message unless status is OK."""
    if status != 0:
        message = lib().attnc_last_error().decode("utf-8", "replace")
        raise AttncError(message, STATUS_NAMES.get(status, str(status)))


def text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8")
