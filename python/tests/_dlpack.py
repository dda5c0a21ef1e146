"""A DLPack tensor built by hand (no torch): what attnc reads of one,
never dereferenced. Import after _support (which sets the import path)."""

import ctypes


# DLManagedTensor = DLTensor + ctx + deleter.
class _DLManaged(ctypes.Structure):
    from attnc._tensors import DLTensor
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackTensor:
    def __init__(self, data, shape, code, bits, device_type=2):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.managed = _DLManaged()
        t = self.managed.dl_tensor
        t.data = data
        t.device.device_type = device_type
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = self.shape
        t.strides = None  # compact
        t.byte_offset = 0

    def __dlpack__(self):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)
