"""Describing caller tensors and workspaces to the C runtime.

Anything with ``data_ptr()``, ``shape``, ``stride()`` and ``dtype`` (torch
tensors, and the fakes the CPU tests use) or with ``__dlpack__`` (cupy, ...)
is accepted. Strides are in elements, as in torch and DLPack. The C library
does all checking of shapes and layouts; this module only reads the numbers.
A workspace is also accepted as a raw ``(pointer, nbytes)`` pair.
"""

from __future__ import annotations

import ctypes
import operator
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, \
    c_uint64, c_void_p
from typing import Any, NamedTuple

from ._capi import AttncError

# Spellings of dtypes by torch (str(torch.bfloat16) == "torch.bfloat16"),
# numpy and attnc itself.
_DTYPE_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16",
    "f16": "f16", "float16": "f16", "half": "f16",
    "f32": "f32", "float32": "f32", "float": "f32",
    "f64": "f64", "float64": "f64", "double": "f64",
    "i1": "i1", "bool": "i1",
    "i8": "i8", "int8": "i8",
    "i32": "i32", "int32": "i32", "int": "i32",
    "i64": "i64", "int64": "i64", "long": "i64",
}

TORCH_DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32",
                "f64": "float64", "i1": "bool", "i8": "int8",
                "i32": "int32", "i64": "int64"}


def dtype_name(dtype: Any) -> str | None:
    """attnc's name for a torch/numpy/attnc dtype, or None if unknown."""
    text = str(dtype)
    if text.startswith("torch."):
        text = text[len("torch."):]
    return _DTYPE_ALIASES.get(text)


_DTYPE_SIZES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1,
                "i32": 4, "i64": 8}


class Described(NamedTuple):
    data: int
    dtype: str | None  # None: a dtype attnc has no name for
    dtype_text: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    itemsize: int | None = None  # bytes per element, when known


# DLPack (v0.x ABI, unversioned "dltensor" capsules).
class _DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", _DLDevice),
        ("ndim", c_int32),
        ("dtype", _DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


_DL_CUDA_DEVICES = {2, 13}  # kDLCUDA, kDLCUDAManaged
# (code, bits) -> dtype; codes kDLInt=0, kDLFloat=2, kDLBfloat=4, kDLBool=6.
_DL_DTYPES = {(2, 16): "f16", (2, 32): "f32", (2, 64): "f64",
              (4, 16): "bf16", (6, 8): "i1", (0, 8): "i8", (0, 32): "i32",
              (0, 64): "i64"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj: Any, name: str) -> Described:
    capsule = obj.__dlpack__()
    # The capsule is left unconsumed: its destructor frees it, while OBJ,
    # which the caller keeps, owns the memory.
    address = _get_pointer(capsule, b"dltensor")
    t = ctypes.cast(address, POINTER(DLTensor)).contents
    if t.device.device_type not in _DL_CUDA_DEVICES:
        raise AttncError(f"{name} is not in CUDA memory (DLPack device type "
                         f"{t.device.device_type})", "ATTNC_ERROR_VALIDATION")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:  # compact row-major
        acc, rev = 1, []
        for size in reversed(shape):
            rev.append(acc)
            acc *= size
        strides = tuple(reversed(rev))
    key = (t.dtype.code, t.dtype.bits)
    dtype = _DL_DTYPES.get(key) if t.dtype.lanes == 1 else None
    return Described((t.data or 0) + t.byte_offset, dtype,
                     f"DLPack(code={key[0]}, bits={key[1]}, "
                     f"lanes={t.dtype.lanes})", shape, strides,
                     t.dtype.bits * t.dtype.lanes // 8)


# dtype object -> (attnc name, text, bytes per element): every launch
# describes its tensors, and a dtype's answers never change.
_dtype_info: dict[Any, tuple[str | None, str, int | None]] = {}


def _info(obj: Any) -> tuple[str | None, str, int | None]:
    dtype = obj.dtype
    try:
        return _dtype_info[dtype]
    except (KeyError, TypeError):  # new, or not hashable
        pass
    name = dtype_name(dtype)
    if hasattr(obj, "element_size"):
        itemsize = int(obj.element_size())
    else:
        itemsize = getattr(dtype, "itemsize", _DTYPE_SIZES.get(name))
    info = (name, str(dtype), itemsize)
    try:
        _dtype_info[dtype] = info
    except TypeError:
        pass
    return info


def describe(obj: Any, name: str) -> Described:
    """Reads pointer, dtype, shape and strides of tensor argument NAME."""
    if hasattr(obj, "data_ptr") and hasattr(obj, "stride"):
        device = getattr(obj, "device", None)
        device_type = getattr(device, "type", None)
        if device_type is not None and device_type != "cuda":
            raise AttncError(f"{name} is on {device}, not on a CUDA device",
                             "ATTNC_ERROR_VALIDATION")
        dtype, text, itemsize = _info(obj)
        return Described(int(obj.data_ptr()), dtype, text,
                         tuple(map(operator.index, obj.shape)),
                         tuple(map(operator.index, obj.stride())), itemsize)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, name)
    raise TypeError(f"{name}: expected a tensor (an object with data_ptr(), "
                    f"shape, stride() and dtype, or __dlpack__), got "
                    f"{type(obj).__name__}")


def describe_workspace(obj: Any, name: str) -> tuple[int, int]:
    """(pointer, size in bytes) of workspace argument NAME: a contiguous
    tensor of any dtype, or a ``(pointer, nbytes)`` pair."""
    if isinstance(obj, tuple):
        if len(obj) != 2:
            raise TypeError(f"workspace {name}: expected a tensor or a "
                            f"(pointer, nbytes) pair, got a tuple of "
                            f"{len(obj)}")
        return operator.index(obj[0]), operator.index(obj[1])
    t = describe(obj, name)
    if t.itemsize is None:
        raise AttncError(f"workspace {name}: cannot tell the element size of "
                         f"dtype {t.dtype_text}", "ATTNC_ERROR_VALIDATION")
    # Compact row-major, ignoring one-element dimensions (any stride).
    expected = 1
    for size, stride in reversed(list(zip(t.shape, t.strides))):
        if size != 1 and stride != expected:
            raise AttncError(f"workspace {name} must be contiguous (shape "
                             f"{list(t.shape)}, strides {list(t.strides)})",
                             "ATTNC_ERROR_VALIDATION")
        expected *= size
    numel = 1
    for size in t.shape:
        numel *= size
    return t.data, numel * t.itemsize
