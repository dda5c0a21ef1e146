"""Modules, kernels, launches and CUDA graphs over libattnc_runtime.so.

A Module is a directory written by ``attnc-compile`` (docs/abi.md); loading
it reads only the manifest, so it works without a GPU. Calling a Kernel
validates the arguments in the C library (which names the offending
parameter, dimension and rule), allocates missing outputs and workspaces
with torch and launches on the current torch stream; a call the kernel
refuses and its fallback (docs/abi.md) accepts runs the fallback. Tensormaps
are built by the runtime from the tensors they describe and never passed.
torch is never imported here: it is used only when the caller's tensors are
torch tensors or torch is already imported.
"""

from __future__ import annotations

import ctypes
import operator
import sys
import threading
from collections import OrderedDict
from ctypes import byref, c_char_p, c_int64, c_size_t, c_void_p
from pathlib import Path
from typing import Any, NamedTuple

from . import _capi
from ._capi import AttncError, check, lib, text
from ._tensors import TORCH_DTYPES, describe, describe_workspace

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class Param(NamedTuple):
    """One kernel parameter as the manifest declares it.

    Factors (``bytes``, and ``Kernel.grid``) are written as in the manifest:
    an int, a symbol name, ``{"sym": S, "ceil_div": K}`` (with ``"plus": P``
    when P's value is added to the quotient) or ``{"device": "num_sms"}``.
    """
    name: str
    kind: str  # tensor, size, stride, scalar, tensormap or workspace
    dtype: str  # tensormap: its tensor's; workspace: "i8"
    role: str | None  # "input"/"output" for tensors
    shape: tuple  # tensors: ints (static) and str (size symbols)
    align: int
    tensor: str | None  # strides and tensormaps: the tensor's name
    dim: int
    box: tuple = ()  # tensormap: elements per dimension, outermost first
    swizzle: int = 0  # tensormap: bytes
    oob_fill: str | None = None  # tensormap: "zero" or "nan"
    bytes: tuple = ()  # workspace: factors whose product is its size
    zero_init: bool = False  # workspace: zeroed before every launch


class Constraint(NamedTuple):
    """A rule on size symbols: divisible (lhs % rhs == 0, rhs > 0), equal
    (lhs == rhs), min (lhs >= value), max (lhs <= value; min and max have
    rhs None), ratio (lhs == value * rhs) or at_most (lhs <= value * rhs)."""
    kind: str
    lhs: str
    rhs: str | None
    value: int


def load(directory: str | Path) -> "Module":
    """Loads DIRECTORY/manifest.json (no GPU needed)."""
    handle = c_void_p()
    check(lib().attnc_module_load(str(directory).encode(), byref(handle)))
    return Module(handle, str(directory))


class Module:
    """A loaded manifest and its kernels; cubins load at the first launch."""

    def __init__(self, handle: c_void_p, directory: str | None):
        self._handle = handle
        self.directory = directory
        self.name = text(lib().attnc_module_name(handle))
        self.chip = text(lib().attnc_module_chip(handle))
        self._kernels = {}
        for i in range(lib().attnc_module_num_kernels(handle)):
            k = Kernel(self, c_void_p(lib().attnc_module_kernel_at(handle, i)))
            self._kernels[k.name] = k

    @classmethod
    def from_json(cls, manifest: str, directory: str | None = None):
        """A module from manifest text; DIRECTORY holds its cubins."""
        data = manifest.encode()
        handle = c_void_p()
        check(lib().attnc_manifest_parse(
            data, len(data), None if directory is None else
            str(directory).encode(), byref(handle)))
        return cls(handle, directory)

    @property
    def kernels(self) -> list[str]:
        return list(self._kernels)

    def kernel(self, name: str) -> "Kernel":
        if name not in self._kernels:
            kernel = c_void_p()
            check(lib().attnc_module_get_kernel(self._handle, name.encode(),
                                                byref(kernel)))
        return self._kernels[name]

    __getitem__ = kernel

    def __iter__(self):
        return iter(self._kernels.values())

    @property
    def entries(self) -> list["Kernel"]:
        """The kernels a program calls: those that are no other kernel's
        ``fallback`` or variant (they run through the kernel naming them)."""
        backing = {k.fallback.name for k in self if k.fallback is not None}
        backing |= {v.name for k in self for v, _ in k.variants}
        return [k for k in self if k.name not in backing]

    def __len__(self):
        return len(self._kernels)

    def load_gpu(self) -> None:
        """Loads every cubin into the current CUDA context now (optional)."""
        check(lib().attnc_module_load_gpu(self._handle))

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _capi._lib is not None:
            _capi._lib.attnc_module_unload(handle)

    def __repr__(self):
        return f"<attnc.Module {self.name!r} kernels={self.kernels}>"


class Kernel:
    """One kernel of a Module. Call it to launch:

        o, lse = kernel(q, k, v)               # outputs allocated with torch
        kernel(q, k, v, o=o, lse=lse, seed=1)  # outputs/scalars by name

    Positional arguments are the input tensors in manifest order; outputs and
    scalars are passed by name. Returns the outputs (one or a tuple).
    """

    def __init__(self, module: Module, handle: c_void_p):
        self.module = module  # keeps the C module alive
        self._handle = handle
        self.name = text(lib().attnc_kernel_name(handle))
        self.kind = text(lib().attnc_kernel_kind(handle))
        block = (c_int64 * 3)()
        smem = c_int64()
        lib().attnc_kernel_launch_config(handle, block, byref(smem))
        self.block = tuple(block)
        self.shared_memory_bytes = smem.value
        self.params = [self._param(i) for i in
                       range(lib().attnc_kernel_num_params(handle))]
        self.inputs = [p for p in self.params if p.role == "input"]
        self.outputs = [p for p in self.params if p.role == "output"]
        self.scalars = [p for p in self.params if p.kind == "scalar"]
        self.workspaces = [p for p in self.params if p.kind == "workspace"]
        self.tensormaps = [p for p in self.params if p.kind == "tensormap"]
        self.grid = tuple(
            tuple(self._factor(lib().attnc_kernel_grid_factor, axis, j)
                  for j in range(lib().attnc_kernel_grid_num_factors(
                      handle, axis)))
            for axis in range(3))
        self.constraints = [self._constraint(i) for i in range(
            lib().attnc_kernel_num_constraints(handle))]
        # How to choose the size symbols the caller picks (size_rule()).
        self.size_rules = [self._size_rule_info(i) for i in range(
            lib().attnc_kernel_num_size_rules(handle))]
        self._known = {p.name: p for p in self.inputs + self.outputs +
                       self.workspaces + self.scalars}
        # Plans of recent calls (see _cached_plan), most recent last.
        self._plans: OrderedDict = OrderedDict()
        self._plans_lock = threading.Lock()
        self._described = [p for p in self.params
                           if p.kind in ("tensor", "workspace")]

    @property
    def fallback(self) -> "Kernel | None":
        """The manifest's ``fallback``: the kernel of the same module that
        runs the calls this one refuses and it accepts (tensors only this
        kernel's alignment or TMA rules refuse), or None."""
        handle = lib().attnc_kernel_fallback(self._handle)
        if not handle:
            return None
        return self.module.kernel(text(lib().attnc_kernel_name(handle)))

    @property
    def variants(self) -> list[tuple["Kernel", tuple[Constraint, ...]]]:
        """The manifest's ``variants``, in order: kernels of the same module
        that take this one's arguments and compute the same result with
        other tiles, each with the conditions on sizes where it runs. A plan
        of this kernel runs the first variant whose conditions the call
        meets and that accepts the arguments (``Plan.kernel`` says which),
        else this kernel."""
        out = []
        for i in range(lib().attnc_kernel_num_variants(self._handle)):
            handle = lib().attnc_kernel_variant(self._handle, i)
            conditions = []
            for j in range(lib().attnc_kernel_variant_num_conditions(
                    self._handle, i)):
                c = _capi.ConstraintInfo()
                check(lib().attnc_kernel_variant_condition(self._handle, i, j,
                                                           byref(c)))
                conditions.append(Constraint(_capi.CONSTRAINT_KINDS[c.kind],
                                             text(c.lhs), text(c.rhs),
                                             c.value))
            out.append((self.module.kernel(
                text(lib().attnc_kernel_name(handle))), tuple(conditions)))
        return out

    @property
    def unsplit(self) -> "Kernel | None":
        """The manifest's ``unsplit``, on the partial kernel of a split-KV
        function: the kernel that computes the function's result in one
        launch, from the same inputs (not the partials) into its outputs.
        Run it instead of this kernel and the combine when
        ``size_rule("splits", ...)`` gives 1. None when there is none."""
        handle = lib().attnc_kernel_unsplit(self._handle)
        if not handle:
            return None
        return self.module.kernel(text(lib().attnc_kernel_name(handle)))

    @property
    def programmatic_launch(self) -> bool:
        """The manifest's ``programmatic_launch``: the kernel waits for the
        kernel before it on the stream (griddepcontrol.wait), so its launch
        may overlap that kernel's end (the split-KV combine)."""
        return bool(lib().attnc_kernel_programmatic_launch(self._handle))

    @property
    def needs_num_sms(self) -> bool:
        """Whether the grid or a workspace size depends on the SM count."""
        factors = [f for axis in self.grid for f in axis]
        factors += [f for p in self.workspaces for f in p.bytes]
        return {"device": "num_sms"} in factors

    def _factor(self, query, index, j):
        f = _capi.Factor()
        check(query(self._handle, index, j, byref(f)))
        if f.kind == _capi.FACTOR_NUM_SMS:
            return {"device": "num_sms"}
        if f.kind == _capi.FACTOR_SYMBOL:
            if f.plus:
                return {"sym": text(f.symbol), "ceil_div": f.ceil_div,
                        "plus": text(f.plus)}
            return (text(f.symbol) if f.ceil_div == 1 else
                    {"sym": text(f.symbol), "ceil_div": f.ceil_div})
        return f.value

    def _constraint(self, i: int) -> Constraint:
        c = _capi.ConstraintInfo()
        check(lib().attnc_kernel_constraint(self._handle, i, byref(c)))
        return Constraint(_capi.CONSTRAINT_KINDS[c.kind], text(c.lhs),
                          text(c.rhs), c.value)

    def _size_rule_info(self, i: int) -> dict:
        r = _capi.SizeRuleInfo()
        check(lib().attnc_kernel_size_rule_info(self._handle, i, byref(r)))
        return {"kind": _capi.SIZE_RULE_KINDS.get(r.kind, str(r.kind)),
                "symbol": text(r.symbol),
                "kv_tiles": tuple(
                    self._factor(lib().attnc_kernel_size_rule_factor, i, j)
                    for j in range(r.num_kv_tiles)),
                "max": r.max, "ctas_per_sm": r.ctas_per_sm}

    def size_rule(self, symbol: str, *tensors,
                  num_sms: int | None = None, **named) -> int:
        """The value the kernel's size rule gives SYMBOL (the split count
        ``"splits"`` of a split-KV kernel) for a call whose leading tensor
        arguments, in manifest order, are TENSORS (e.g. q, k, v), or are
        named (e.g. ``block_table=t``; the ones before the last named must
        be given too): the size to allocate the tensors whose shape has
        SYMBOL with. NUM_SMS is the device's SM count; by default that of
        the torch tensors' device, else the driver's for its current device.
        Any value the kernel's constraints allow is correct; the rule
        chooses a fast one."""
        params = [p for p in self.params
                  if p.kind in ("tensor", "workspace")]
        names = [p.name for p in params]
        if len(tensors) > len(params):
            raise TypeError(f"{self.name}.size_rule() takes at most "
                            f"{len(params)} tensors "
                            f"({', '.join(names)}), got {len(tensors)}")
        given = dict(zip(names, tensors))
        for name, t in named.items():
            if name not in names or name in given:
                raise TypeError(f"{self.name}.size_rule() got an unexpected "
                                f"or repeated tensor '{name}' (tensors: "
                                f"{', '.join(names)})")
            given[name] = t
        count = max((names.index(n) + 1 for n in given), default=0)
        missing = [n for n in names[:count] if n not in given]
        if missing:
            raise TypeError(f"{self.name}.size_rule() binds tensors in "
                            f"manifest order; pass {', '.join(missing)} too")
        params = params[:count]
        tensors = [given[n] for n in names[:count]]
        descs, arrays = _descriptors(
            self, params, {p.name: t for p, t in zip(params, tensors)})
        if num_sms is None:
            device = next((t.device for t in tensors if _is_torch(t)), None)
            num_sms = 0 if device is None else _device_num_sms(device)
        value = c_int64()
        check(lib().attnc_kernel_size_rule(self._handle, symbol.encode(),
                                           descs, len(params), num_sms,
                                           byref(value)))
        del arrays  # sizes/strides lived until the call returned
        return value.value

    def _param(self, i: int) -> Param:
        info = _capi.ParamInfo()
        check(lib().attnc_kernel_param(self._handle, i, byref(info)))
        kind = _capi.PARAM_KINDS.get(info.kind, str(info.kind))
        shape, extra = [], {}
        for d in range(info.rank if kind == "tensor" else 0):
            extent, symbol = c_int64(), c_char_p()
            check(lib().attnc_kernel_param_dim(self._handle, i, d,
                                               byref(extent), byref(symbol)))
            shape.append(text(symbol.value) if symbol.value else extent.value)
        if kind == "tensormap":
            m = _capi.TensorMapInfo()
            check(lib().attnc_kernel_param_tensormap(self._handle, i,
                                                     byref(m)))
            extra = dict(box=tuple(m.box[d] for d in range(m.rank)),
                         swizzle=m.swizzle,
                         oob_fill="nan" if m.oob_fill_nan else "zero")
        elif kind == "workspace":
            w = _capi.WorkspaceInfo()
            check(lib().attnc_kernel_param_workspace(self._handle, i,
                                                     byref(w)))
            extra = dict(bytes=tuple(
                self._factor(lib().attnc_kernel_param_workspace_factor, i, j)
                for j in range(w.num_byte_factors)),
                zero_init=bool(w.zero_init))
        return Param(text(info.name), kind,
                     _capi.DTYPES.get(info.dtype, "?"),
                     _capi.ROLES[info.role], tuple(shape), info.align,
                     text(info.tensor), info.dim, **extra)

    def attr(self, key: str) -> str | None:
        """An ``attrs`` entry of the manifest as text, or None."""
        return text(lib().attnc_kernel_attr(self._handle, key.encode()))

    def _bind(self, args: tuple, kwargs: dict) -> tuple[dict, dict]:
        """Maps the call's arguments to parameter names."""
        if len(args) > len(self.inputs):
            raise TypeError(f"{self.name}() takes {len(self.inputs)} input "
                            f"tensors positionally "
                            f"({', '.join(p.name for p in self.inputs)}), got "
                            f"{len(args)}")
        tensors = {p.name: a for p, a in zip(self.inputs, args)}
        scalars = {}
        known = self._known
        for key, value in kwargs.items():
            p = known.get(key)
            if p is None:
                tensormap = next((m for m in self.tensormaps if m.name == key),
                                 None)
                if tensormap is not None:
                    raise TypeError(f"{self.name}() got {key!r}, a tensormap "
                                    f"the runtime builds from "
                                    f"{tensormap.tensor!r}: do not pass it")
                raise TypeError(f"{self.name}() got an unexpected argument "
                                f"{key!r} (parameters: {', '.join(known)})")
            if key in tensors:
                raise TypeError(f"{self.name}() got {key!r} twice")
            (scalars if p.kind == "scalar" else tensors)[key] = value
        for p in self.inputs + self.scalars:
            if p.name not in tensors and p.name not in scalars:
                raise TypeError(f"{self.name}() is missing {p.kind} "
                                f"{p.name!r}")
        return tensors, scalars

    def _allocate(self, tensors: dict, num_sms: int | None,
                  outputs: bool = True) -> list:
        """Creates the outputs (unless not OUTPUTS) and workspaces the
        caller left out, with torch. Returns the workspaces it made."""
        missing = [p for p in (self.outputs if outputs else []) +
                   self.workspaces if tensors.get(p.name) is None]
        if not missing:
            return []
        # Made where the CUDA inputs are; an input on the host is refused
        # when the plan describes it, so any device does for the others.
        torch_inputs = [tensors[p.name] for p in self.inputs
                        if _is_torch(tensors[p.name])]
        like = next((t for t in torch_inputs if t.is_cuda),
                    torch_inputs[0] if torch_inputs else None)
        if like is None:
            what = missing[0].role or missing[0].kind  # output, workspace
            raise AttncError(f"{self.name}: cannot allocate {what} "
                             f"{missing[0].name} without torch tensor inputs; "
                             f"pass it explicitly")
        symbols = {}
        for p in self.inputs:
            for dim, size in zip(p.shape, tensors[p.name].shape):
                if isinstance(dim, str):
                    symbols.setdefault(dim, int(size))
        torch = sys.modules["torch"]
        made = []
        for p in missing:
            if p.kind == "workspace":
                if num_sms is None:
                    num_sms = _device_num_sms(like.device) if like.is_cuda \
                        else 1
                size = _workspace_bytes(self.name, p, symbols, num_sms)
                # The caching allocator's blocks are 512-byte aligned.
                tensors[p.name] = torch.empty(size, dtype=torch.uint8,
                                              device=like.device)
                made.append(tensors[p.name])
                continue
            unbound = [d for d in p.shape
                       if isinstance(d, str) and d not in symbols]
            if unbound:
                raise AttncError(f"{self.name}: cannot allocate output "
                                 f"{p.name}: size {unbound[0]} is not set by "
                                 f"any input; pass {p.name} explicitly")
            shape = [symbols[d] if isinstance(d, str) else d for d in p.shape]
            tensors[p.name] = torch.empty(
                shape, dtype=getattr(torch, TORCH_DTYPES[p.dtype]),
                device=like.device)
        return made

    def plan(self, *args, num_sms: int | None = None, **kwargs) -> "Plan":
        """Validates a call and returns its launch plan, without launching.
        Outputs are not allocated: pass every tensor. A workspace left out
        is made with torch (when the inputs are torch tensors) and lives as
        long as the plan. NUM_SMS, when given, is the SM count that
        {"device": "num_sms"} factors use (else torch's device, else the
        driver's current device). The plan's ``kernel`` is the kernel it
        launches: this one, or its ``fallback`` when this one refuses the
        tensors and the fallback accepts them."""
        tensors, scalars = self._bind(args, kwargs)
        torch_inputs = any(_is_torch(tensors[p.name]) for p in self.inputs)
        owned = (self._allocate(tensors, num_sms, outputs=False)
                 if torch_inputs else [])
        plan = Plan(self, tensors, scalars, num_sms)
        plan.owned_workspaces = owned
        return plan

    #: Plans a kernel keeps for repeated calls (see _cached_plan).
    PLAN_CACHE_SIZE = 8

    def _plan_key(self, tensors: dict, scalars: dict,
                  num_sms: int | None) -> tuple | None:
        """What a plan depends on: each tensor's pointer, dtype, shape,
        strides and device, the scalars (with their types) and the SM count;
        None when an argument is not a torch tensor or a plain number."""
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        key = []
        for p in self._described:
            t = tensors.get(p.name)
            if not isinstance(t, torch.Tensor):
                return None
            key.append((t.data_ptr(), t.dtype, t.shape, t.stride(),
                        t.get_device()))
        for p in self.scalars:
            v = scalars[p.name]
            if type(v) not in (int, float, bool):
                return None
            key.append((type(v), v))
        key.append(num_sms)
        return tuple(key)

    def _cached_plan(self, tensors: dict, scalars: dict,
                     num_sms: int | None) -> "Plan":
        """The plan of a call, reused from an earlier call with the same
        key (_plan_key): validation, descriptors, grid and tensor maps depend
        on nothing else, and the tensors of this call are alive while it
        launches. A cached plan keeps no tensor alive. Inside a capture (a
        Graph keeps its plans and their tensors) every call plans afresh."""
        key = None
        if _active_capture() is None:
            key = self._plan_key(tensors, scalars, num_sms)
        if key is not None:
            with self._plans_lock:  # calls may come from several threads
                plan = self._plans.get(key)
                if plan is not None:
                    self._plans.move_to_end(key)
                    return plan
        plan = Plan(self, tensors, scalars, num_sms)
        if key is not None:
            plan.arguments = None
            with self._plans_lock:
                self._plans[key] = plan
                if len(self._plans) > self.PLAN_CACHE_SIZE:
                    self._plans.popitem(last=False)
        return plan

    def __call__(self, *args, stream: Any = None, num_sms: int | None = None,
                 **kwargs):
        tensors, scalars = self._bind(args, kwargs)
        made = self._allocate(tensors, num_sms)
        plan = self._cached_plan(tensors, scalars, num_sms)
        handle = plan.launch(stream)
        if made and _active_capture() is None:
            _keep_until_done(made, handle)
        outs = tuple(tensors[p.name] for p in self.outputs)
        return outs[0] if len(outs) == 1 else outs

    def __repr__(self):
        return (f"<attnc.Kernel {self.name!r} "
                f"({', '.join(p.name for p in self.params)})>")


def _is_torch(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "torch"


def _device_num_sms(device: Any) -> int:
    torch = sys.modules["torch"]
    return torch.cuda.get_device_properties(device).multi_processor_count


def _workspace_bytes(kernel: str, p: Param, symbols: dict,
                     num_sms: int) -> int:
    """The product of P's byte factors, as the runtime computes it."""
    size = 1
    for f in p.bytes:
        if isinstance(f, int):
            size *= f
        elif f == {"device": "num_sms"}:
            size *= num_sms
        else:
            sym, div = (f, 1) if isinstance(f, str) else (f["sym"],
                                                          f["ceil_div"])
            plus = None if isinstance(f, str) else f.get("plus")
            for s in (sym, plus):
                if s is not None and s not in symbols:
                    raise AttncError(f"{kernel}: cannot allocate workspace "
                                     f"{p.name}: size {s} is not set by any "
                                     f"input; pass {p.name} explicitly")
            size *= -(-symbols[sym] // div) + (symbols[plus] if plus else 0)
    return size


def _keep_until_done(tensors: list, stream: int | None) -> None:
    """Workspaces made for one launch go back to torch's caching allocator
    when the call returns: if the kernel runs on a stream other than torch's
    current one, the allocator must wait for that stream before reusing
    them. (Inside a Graph, the graph keeps them instead.)"""
    torch = sys.modules["torch"]
    device = tensors[0].device
    if stream == (torch.cuda.current_stream(device).cuda_stream or None):
        return
    external = torch.cuda.ExternalStream(stream or 0, device=device)
    for t in tensors:
        t.record_stream(external)


def _descriptors(kernel: Kernel, params: list, tensors: dict) -> tuple:
    """One TensorDesc per parameter of PARAMS (tensors and workspaces, in
    manifest order) from TENSORS by name, and the ctypes arrays they point
    into, which must live until the C call returns."""
    descs = (_capi.TensorDesc * max(len(params), 1))()
    arrays = []
    for i, p in enumerate(params):
        if p.name not in tensors:
            raise TypeError(f"{kernel.name}: missing {p.kind} {p.name!r}")
        if p.kind == "workspace":
            data, nbytes = describe_workspace(tensors[p.name], p.name)
            sizes, strides = (c_int64 * 1)(nbytes), (c_int64 * 1)(1)
            arrays += [sizes, strides]
            descs[i] = _capi.TensorDesc(data, _capi.DTYPE_CODES["i8"], 1,
                                        sizes, strides)
            continue
        t = describe(tensors[p.name], p.name)
        if t.dtype is None:
            raise AttncError(f"{kernel.name}: {p.name} has dtype "
                             f"{t.dtype_text}, which attnc does not "
                             f"support (the kernel expects {p.dtype})",
                             "ATTNC_ERROR_VALIDATION")
        sizes = (c_int64 * max(len(t.shape), 1))(*t.shape)
        strides = (c_int64 * max(len(t.strides), 1))(*t.strides)
        arrays += [sizes, strides]
        descs[i] = _capi.TensorDesc(t.data, _capi.DTYPE_CODES[t.dtype],
                                    len(t.shape), sizes, strides)
    return descs, arrays


def _scalar(p: Param, value: Any) -> _capi.ScalarDesc:
    s = _capi.ScalarDesc()
    if isinstance(value, float) or (not isinstance(value, int) and
                                    not hasattr(value, "__index__")):
        s.is_float = 1
        s.value.f = float(value)
        return s
    v = operator.index(value)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise AttncError(f"scalar {p.name} = {v} does not fit in 64 bits",
                         "ATTNC_ERROR_VALIDATION")
    s.value.i = v
    return s


class Plan:
    """A validated call: grid, packed parameters; launchable repeatedly.

    ``kernel`` is the kernel it launches: the one it was made for, or that
    kernel's fallback (then parameter indices and workspace sizes are the
    fallback's)."""

    def __init__(self, kernel: Kernel, tensors: dict, scalars: dict,
                 num_sms: int | None = None):
        self.kernel = kernel
        # One descriptor per tensor or workspace, in manifest order.
        params = [p for p in kernel.params
                  if p.kind in ("tensor", "workspace")]
        self.arguments = dict(tensors)  # keeps the tensors alive
        descs, self._arrays = _descriptors(kernel, params, tensors)
        scalar_descs = (_capi.ScalarDesc * max(len(kernel.scalars), 1))(
            *[_scalar(p, scalars[p.name]) for p in kernel.scalars])
        self._device = next((tensors[p.name].device for p in params
                             if _is_torch(tensors[p.name])), None)
        self._device_index = getattr(self._device, "index", None)
        # A fallback or variant, if the plan picks it, uses the same count.
        if num_sms is None and self._device is not None and any(
                k is not None and k.needs_num_sms
                for k in [kernel, kernel.fallback] + [
                    x for v, _ in kernel.variants for x in (v, v.fallback)]):
            num_sms = _device_num_sms(self._device)
        options = _capi.PlanOptions(num_sms or 0)
        self._handle = c_void_p()
        check(lib().attnc_plan_create_with_options(
            kernel._handle, descs, len(params), scalar_descs,
            len(kernel.scalars), byref(options), byref(self._handle)))
        self._arrays = None
        launched = lib().attnc_plan_kernel(self._handle)
        if launched != kernel._handle.value:
            self.kernel = kernel.module.kernel(
                text(lib().attnc_kernel_name(launched)))

    @property
    def grid(self) -> tuple[int, int, int]:
        g = (c_int64 * 3)()
        lib().attnc_plan_grid(self._handle, g)
        return tuple(g)

    @property
    def empty(self) -> bool:
        return bool(lib().attnc_plan_is_empty(self._handle))

    def symbol(self, name: str) -> int:
        v = c_int64()
        check(lib().attnc_plan_symbol(self._handle, name.encode(), byref(v)))
        return v.value

    def workspace_bytes(self, name: str) -> int:
        """The size in bytes workspace NAME needs for this call."""
        index = next((i for i, p in enumerate(self.kernel.params)
                      if p.name == name and p.kind == "workspace"), None)
        if index is None:
            raise KeyError(f"{self.kernel.name} has no workspace {name!r}")
        v = ctypes.c_uint64()
        check(lib().attnc_plan_workspace_bytes(self._handle, index, byref(v)))
        return v.value

    def param_bytes(self, index: int) -> bytes:
        """Parameter INDEX (of ``self.kernel.params``) exactly as
        cuLaunchKernel receives it."""
        ptr, size = c_void_p(), c_size_t()
        check(lib().attnc_plan_param(self._handle, index, byref(ptr),
                                     byref(size)))
        return ctypes.string_at(ptr, size.value)

    def estimate(self, device) -> "Estimate":
        """The cost model's predicted time of this launch on DEVICE (an
        attnc.cost.Device, a built-in device name or a device file)."""
        from . import cost
        if not isinstance(device, cost.Device):
            device = cost.Device.named(device)
        return cost.estimate(self, device)

    def launch(self, stream: Any = None) -> int | None:
        """Launches on STREAM (torch's current one by default); returns the
        CUstream used."""
        capture = _active_capture()
        if capture is not None:
            capture._keep.append(self)
            if stream is None:
                stream = capture.stream
        index = self._device_index
        if index is None:
            handle = _stream_handle(stream, self._device)
            check(lib().attnc_plan_launch(self._handle, handle))
            return handle
        torch = sys.modules["torch"]
        raw, current = _torch_cuda_entry_points(torch)
        if stream is None and raw is not None:
            handle = raw(index) or None  # torch's current stream, as below
        else:
            handle = _stream_handle(stream, self._device)
        # Launch in the tensors' device context, as torch would (the
        # tensors exist, so torch's CUDA state is initialized).
        if current() == index:
            check(lib().attnc_plan_launch(self._handle, handle))
        else:
            with torch.cuda.device(index):
                check(lib().attnc_plan_launch(self._handle, handle))
        return handle

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _capi._lib is not None:
            _capi._lib.attnc_plan_destroy(handle)


_entry_points = None


def _torch_cuda_entry_points(torch) -> tuple:
    """torch's raw current-stream query (None where torch lacks it) and
    its current-device query, looked up once."""
    global _entry_points
    if _entry_points is None:
        c = torch._C
        _entry_points = (getattr(c, "_cuda_getCurrentRawStream", None),
                         getattr(c, "_cuda_getDevice",
                                 torch.cuda.current_device))
    return _entry_points


def _stream_handle(stream: Any, device: Any = None) -> int | None:
    """A CUstream as an int: given explicitly, else torch's current one."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            return None  # the legacy default stream
        return torch.cuda.current_stream(device).cuda_stream or None
    if isinstance(stream, int):
        return stream or None
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream or None
    raise TypeError(f"stream must be an int (CUstream) or have .cuda_stream, "
                    f"got {type(stream).__name__}")


_captures = threading.local()


def _active_capture() -> "Graph | None":
    stack = getattr(_captures, "stack", None)
    return stack[-1] if stack else None


class Graph:
    """Records launches into a CUDA graph and replays them:

        with attnc.Graph(stream) as g:   # or torch's current stream
            kernel(q, k, v, o=o)         # launched on the capture stream
        g.replay()

    The legacy default stream cannot be captured: use e.g.
    ``with torch.cuda.stream(torch.cuda.Stream()):``. The graph keeps the
    recorded tensors alive; replays read and write the same memory.
    """

    def __init__(self, stream: Any = None):
        self.stream = _stream_handle(stream)
        self._keep = []
        self._handle = None

    def __enter__(self) -> "Graph":
        check(lib().attnc_graph_begin(self.stream))
        _captures.stack = getattr(_captures, "stack", []) + [self]
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _captures.stack = _captures.stack[:-1]
        handle = c_void_p()
        status = lib().attnc_graph_end(self.stream, byref(handle))
        if exc_type is not None:  # the first error wins
            if status == 0:
                lib().attnc_graph_destroy(handle)
            return
        check(status)
        self._handle = handle

    def replay(self, stream: Any = None) -> None:
        if self._handle is None:
            raise AttncError("replay of a graph that was not recorded")
        check(lib().attnc_graph_replay(
            self._handle, self.stream if stream is None
            else _stream_handle(stream)))

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _capi._lib is not None:
            _capi._lib.attnc_graph_destroy(handle)
