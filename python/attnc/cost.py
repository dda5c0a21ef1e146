"""The cost model from Python (docs/cost-model.md).

A ``Device`` is a built-in datasheet device (``Device.builtin("h200")``) or a
device file written by ``python3 -m attnc.calibrate`` (``Device.load(path)``);
``Plan.estimate(device)`` prices one launch from the kernel's schedule in its
manifest and the plan's sizes, in libattnc_runtime.so, the same code the
compiler's intensity report uses.
"""

from __future__ import annotations

import json
from ctypes import byref, c_void_p
from dataclasses import dataclass
from pathlib import Path

from . import _capi
from ._capi import check, lib, text


class Device:
    """A device the cost model prices kernels on."""

    def __init__(self, handle: c_void_p):
        self._handle = handle

    @classmethod
    def builtin(cls, name: str) -> "Device":
        handle = c_void_p()
        check(lib().attnc_device_model_builtin(name.encode(), byref(handle)))
        return cls(handle)

    @classmethod
    def parse(cls, document: str) -> "Device":
        data = document.encode()
        handle = c_void_p()
        check(lib().attnc_device_model_parse(data, len(data), byref(handle)))
        return cls(handle)

    @classmethod
    def load(cls, path: str | Path) -> "Device":
        return cls.parse(Path(path).read_text())

    @classmethod
    def named(cls, name_or_path: str | Path) -> "Device":
        """A device file when NAME_OR_PATH is one, else a built-in device."""
        path = Path(name_or_path)
        return cls.load(path) if path.is_file() else cls.builtin(str(path))

    def json(self) -> dict:
        return json.loads(text(lib().attnc_device_model_json(self._handle)))

    @property
    def name(self) -> str:
        return self.json()["name"]

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _capi._lib is not None:
            _capi._lib.attnc_device_model_destroy(handle)


@dataclass
class Estimate:
    """One launch as the cost model prices it, in microseconds."""
    time_us: float
    launch_us: float
    tensor_us: float
    exp_us: float
    shared_us: float
    fill_us: float
    sm_us: float
    dram_us: float
    reduce_us: float
    cta_us: float
    waves: float
    steps: float
    ctas_per_sm: int
    limiter: str
    regime: str

    def __add__(self, other: "Estimate") -> "Estimate":
        """Two launches one after the other: times add; the limiter and
        regime are the longer one's."""
        longer = self if self.time_us >= other.time_us else other
        fields = {k: getattr(self, k) + getattr(other, k) for k in (
            "time_us", "launch_us", "tensor_us", "exp_us", "shared_us",
            "fill_us", "sm_us", "dram_us", "reduce_us", "cta_us", "waves",
            "steps")}
        return Estimate(**fields, ctas_per_sm=longer.ctas_per_sm,
                        limiter=longer.limiter, regime=longer.regime)


def estimate(plan, device: Device) -> Estimate:
    """The predicted time of one launch of PLAN (a runtime.Plan)."""
    out = _capi.Estimate()
    check(lib().attnc_plan_estimate(plan._handle, device._handle, byref(out)))
    return Estimate(out.time_us, out.launch_us, out.mma_us, out.softmax_us,
                    out.shared_us, out.fill_us, out.sm_us, out.dram_us,
                    out.reduce_us, out.cta_us, out.waves, out.steps,
                    out.ctas_per_sm,
                    out.limiter.decode(), out.regime.decode())
