#!/usr/bin/env python3
"""A tiny launch of one attnc kernel, for compute-sanitizer (memcheck,
racecheck). No torch: memory comes straight from the driver (cuMemAlloc, one
allocation per tensor, sized exactly, so memcheck sees every overrun), inputs
from numpy, outputs poisoned with 0xFF bytes (NaN) and checked afterwards.

    compute-sanitizer --tool memcheck python3 test/gpu/sanitize_driver.py \
        MODULE_DIR[:k=v,k=v...] ...

One launch per argument, in one process. Attention modules take B, H, Hkv,
Sq, Skv (defaults 1, 4, 2, 300, 77: not tile multiples, GQA); fusion modules
take rows (dynamic leading dimension; ignored for static shapes). Exit 1 on
a NaN left in an output.
"""

import ctypes
import sys
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402
gpu_common.use_source_package()
import attnc  # noqa: E402
from attnc.runtime import _workspace_bytes  # noqa: E402

cuda = ctypes.CDLL("libcuda.so.1")


def ck(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed: CUresult {status}")


NP = {"bf16": np.uint16, "f16": np.float16, "f32": np.float32}
TORCH_NAMES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


class DevTensor:
    """Just enough of a tensor for attnc: data_ptr, shape, stride, dtype."""

    def __init__(self, dtype, shape, host=None):
        self.dtype = TORCH_NAMES[dtype]
        self.kind = dtype
        self.shape = tuple(shape)
        st, acc = [], 1
        for s in reversed(self.shape):
            st.append(acc)
            acc *= s
        self._stride = tuple(reversed(st))
        self.numel = acc
        self.nbytes = acc * np.dtype(NP[dtype]).itemsize
        self.ptr = c_uint64(0)
        if self.nbytes:
            ck(cuda.cuMemAlloc_v2(byref(self.ptr), c_size_t(self.nbytes)), "cuMemAlloc")
        if host is not None and self.nbytes:
            buf = np.ascontiguousarray(host)
            ck(cuda.cuMemcpyHtoD_v2(self.ptr, buf.ctypes.data_as(c_void_p),
                                    c_size_t(self.nbytes)), "cuMemcpyHtoD")
        elif self.nbytes:
            ck(cuda.cuMemsetD8_v2(self.ptr, ctypes.c_ubyte(0xFF), c_size_t(self.nbytes)),
               "cuMemsetD8")

    def data_ptr(self):
        return self.ptr.value

    def stride(self):
        return self._stride

    def to_float(self):
        out = np.empty(self.numel, dtype=NP[self.kind])
        if self.nbytes:
            ck(cuda.cuMemcpyDtoH_v2(out.ctypes.data_as(c_void_p), self.ptr,
                                    c_size_t(self.nbytes)), "cuMemcpyDtoH")
        if self.kind == "bf16":
            return (out.astype(np.uint32) << 16).view(np.float32)
        return out.astype(np.float32)


def random_host(dtype, shape, rng, scale=1.0, shift=0.0):
    a = (shift + scale * rng.standard_normal(shape)).astype(np.float32)
    if dtype == "bf16":
        return (a.view(np.uint32) >> 16).astype(np.uint16)
    return a.astype(NP[dtype])


def run_case(spec, rng):
    mdir, _, rest = spec.partition(":")
    opts = dict(a.split("=") for a in rest.split(",") if a)
    (kern,) = attnc.load(mdir).entries
    if opts.pop("fallback", "0") == "1":  # the fallback kernel itself
        kern = kern.fallback
    sym = {"B": int(opts.get("B", 1)), "H": int(opts.get("H", 4)),
           "Hkv": int(opts.get("Hkv", 2)), "Sq": int(opts.get("Sq", 300)),
           "Skv": int(opts.get("Skv", 77)), "D0": int(opts.get("rows", 3))}
    args, outs, kw_workspaces = {}, [], {}
    for p in kern.inputs + kern.outputs:
        shape = [d if isinstance(d, int) else sym[d] for d in p.shape]
        if p.role == "input":
            gamma_like = p.name in ("gamma",) and kern.kind == "fusion" and len(shape) == 1
            host = random_host(p.dtype, shape, rng, 0.5 if gamma_like else 1.0,
                               1.0 if gamma_like else 0.0)
            args[p.name] = DevTensor(p.dtype, shape, host)
        else:
            t = DevTensor(p.dtype, shape)
            args[p.name] = t
            outs.append(t)
    # Workspaces (a persistent kernel's tile counter): raw driver memory,
    # poisoned; the runtime zeroes those that say zero_init.
    # A persistent kernel runs on 3 CTAs, each walking many tiles; other
    # kernels on the device's SM count (what the runtime takes without one).
    sms = 3 if kern.attr("strategy") == "wgmma_ws_persistent" else None
    device_sms = c_int()
    ck(cuda.cuDeviceGetAttribute(byref(device_sms), 16, 0),  # SM count
       "cuDeviceGetAttribute")
    for p in kern.workspaces:
        n = _workspace_bytes(kern.name, p, sym, sms or device_sms.value)
        ws = DevTensor("bf16", [(n + 1) // 2])
        args[p.name] = ws
        kw_workspaces[p.name] = (ws.data_ptr(), n)
    for i, p in enumerate(kern.scalars):
        args[p.name] = (0.125 if p.dtype in ("f32", "f64")
                        else [0x123456789, 5][i % 2])
    ins = [args[p.name] for p in kern.inputs]
    kw = {k: v for k, v in args.items() if k not in {p.name for p in kern.inputs}}
    kw.update(kw_workspaces)
    kern(*ins, num_sms=sms, **kw)
    ck(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
    bad = 0
    for t, p in zip(outs, kern.outputs):
        a = t.to_float()
        if p.name == "lse":  # -inf only where no key is visible (Skv = 0)
            a = np.where(np.isneginf(a), 0.0, a)
        n = int(np.isnan(a).sum())
        bad += n
        print(f"{kern.name}: output {p.name} {list(t.shape)}: {n} NaN, "
              f"max |x| {np.nanmax(np.abs(a)) if a.size else 0:.3g}")
    for t in args.values():
        if isinstance(t, DevTensor) and t.nbytes:
            ck(cuda.cuMemFree_v2(t.ptr), "cuMemFree")
    print(f"{Path(mdir).name} {opts}: {'ok' if not bad else 'NaN LEFT'}", flush=True)
    return bad


def main():
    ck(cuda.cuInit(0), "cuInit")
    dev, ctx = c_int(), c_void_p()
    ck(cuda.cuDeviceGet(byref(dev), 0), "cuDeviceGet")
    ck(cuda.cuDevicePrimaryCtxRetain(byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ck(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    rng = np.random.default_rng()
    bad = sum(run_case(spec, rng) for spec in sys.argv[1:])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
