"""attnc attention as PyTorch operators, with autograd.

    import attnc.torch as at
    at.set_module_dir("attnc-kernels/")        # or ATTNC_TORCH_MODULES
    o = at.attention(q, k, v, causal=True)     # (B, H, S, D); GQA when K/V
    o.sum().backward()                         # have fewer heads

Two ``torch.library.custom_op`` operators, ``attnc::attention_fwd`` (O and
the logsumexp) and ``attnc::attention_bwd`` (dQ, dK, dV, P recomputed from
the logsumexp), with fake implementations, so that they work eagerly,
under ``torch.compile(fullgraph=True)``, in CUDA graphs and under
``torch.library.opcheck``. The softmax scale is a run-time argument.

Kernels come from a directory of precompiled modules, one per variant
(head dim, dtype, causal), each holding the forward kernel ``attn`` and the
three kernels of its backward (``attnc-compile --backward``): the one given
to :func:`set_module_dir`, else $ATTNC_TORCH_MODULES, else the library the
wheel carries (``python3 -m attnc.variants --list``). Build another with

    python3 -m attnc.variants --out attnc-kernels/

A variant that is not there is an error naming the command that builds
it. Modules load on first use; a first use inside CUDA-graph capture is
refused with a message (load them first with :func:`preload`).
"""

from __future__ import annotations

import collections
import math
import os
import threading
from pathlib import Path

import torch

from . import runtime as _runtime
from .variants import (DECODE_GROUPS, HEAD_DIMS, decode_args,
                       decode_variant_name, prebuilt_dir, variant_name)

# torch.library.custom_op, register_fake and register_autograd.
MIN_TORCH = (2, 4)


def _torch_version(text: str) -> tuple[int, int]:
    major, minor = text.split("+")[0].split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


if _torch_version(torch.__version__) < MIN_TORCH:
    raise ImportError(
        f"attnc.torch needs PyTorch >= {MIN_TORCH[0]}.{MIN_TORCH[1]} "
        f"(torch.library.custom_op); this is torch {torch.__version__}. "
        f"attnc itself (attnc.load, kernels by handle) works without torch")

__all__ = ["attention", "attention_with_kvcache", "counters", "module_dir",
           "preload", "set_module_dir"]

#: Kernel runs of the operators ("forward", "backward", "decode"), for
#: tests and for users who want to see that attnc ran (eager calls; a
#: replayed CUDA graph does not count).
counters: collections.Counter = collections.Counter()

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}

_lock = threading.Lock()
_modules: dict[str, _runtime.Module] = {}
_decode_choice: dict[tuple, _runtime.Module] = {}
_module_dir: Path | None = None


def set_module_dir(path: str | os.PathLike | None) -> None:
    """Where the precompiled modules are (None: the default,
    $ATTNC_TORCH_MODULES or the wheel's prebuilt library)."""
    global _module_dir
    with _lock:
        _module_dir = None if path is None else Path(path)
        _modules.clear()
        _decode_choice.clear()


def module_dir() -> Path:
    """The directory the kernels are loaded from (an error if none)."""
    return _dir()


def _dir() -> Path:
    if _module_dir is not None:
        return _module_dir
    env = os.environ.get("ATTNC_TORCH_MODULES")
    if env:
        return Path(env)
    prebuilt = prebuilt_dir()
    if prebuilt is None:
        raise RuntimeError(
            "attnc.torch: no module directory (this attnc has no prebuilt "
            "kernels: it is a source checkout, not the wheel); call "
            "attnc.torch.set_module_dir(DIR) or set ATTNC_TORCH_MODULES "
            "(build one with: python3 -m attnc.variants --out DIR)")
    return prebuilt


def _check_dims(q: torch.Tensor) -> tuple[int, str]:
    d = q.shape[-1]
    if d not in HEAD_DIMS or q.dtype not in DTYPES:
        raise NotImplementedError(
            f"attnc.torch: no kernels for head dim {d} and {q.dtype}; attnc "
            f"has them for head dims {HEAD_DIMS} in bf16 and fp16")
    return d, DTYPES[q.dtype]


def _load(name: str, source_call: str, flags: str) -> _runtime.Module:
    with _lock:
        m = _modules.get(name)
        if m is not None:
            return m
        path = _dir() / name
        if not (path / "manifest.json").exists():
            raise RuntimeError(
                f"attnc.torch: no compiled kernels for {name} in {_dir()}; "
                f"build them with: python3 -m attnc.variants --out "
                f"{_dir()} (or: attnc-compile {name}.mlir -o {path} "
                f"{flags}, the source from attnc.variants.{source_call})")
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError(
                f"attnc.torch: kernels {name} are first used inside CUDA "
                f"graph capture, where they cannot be loaded; call "
                f"attnc.torch.preload() or run the op once before capturing")
        m = _runtime.load(path)
        m.load_gpu()
        _modules[name] = m
        return m


def _module(q: torch.Tensor, causal: bool) -> _runtime.Module:
    d, t = _check_dims(q)
    return _load(variant_name(d, t, causal), f"source({d}, '{t}', {causal})",
                 "--backward")


def _decode_module(q: torch.Tensor, kv_heads: int) -> _runtime.Module:
    """The decoding variant packed in GQA groups of q's heads / kv_heads
    when the library has one (each K/V byte read once), else the unpacked
    one (a GQA group of G reads the cache G times). The choice is
    remembered: a decode loop calls this once per layer and step."""
    d, t = _check_dims(q)
    heads = (q.shape[1], kv_heads)
    m = _decode_choice.get((d, t, heads))
    if m is not None:
        return m
    group = heads[0] // heads[1] if heads[1] and heads[0] % heads[1] == 0 \
        else 0
    if group < 2 or not (_dir() / decode_variant_name(d, t, group) /
                         "manifest.json").exists():
        group = None
    m = _load(decode_variant_name(d, t, group), f"decode_source({d}, '{t}')",
              " ".join(decode_args(group)))
    _decode_choice[(d, t, heads)] = m
    return m


def preload(head_dims=HEAD_DIMS, dtypes=tuple(DTYPES),
            causal=(False, True), decode=True) -> None:
    """Loads the variants' kernels into the current CUDA context now."""
    for d in head_dims:
        for dt in dtypes:
            q = torch.empty(1, 1, 1, d, dtype=dt, device="cuda")
            for c in causal:
                _module(q, c)
            if decode:
                _decode_module(q, 1)
                for g in DECODE_GROUPS:
                    _decode_module(q.expand(1, g, 1, d), 1)


def _rows_contiguous(x: torch.Tensor) -> torch.Tensor:
    # The kernels take any outer strides but move rows in 16-byte pieces
    # (the forward's TMA fallback takes any alignment, the backward not).
    size = x.element_size()
    aligned = x.stride(-1) == 1 and x.data_ptr() % 16 == 0 and all(
        s * size % 16 == 0 for s in x.stride()[:-1])
    return x if aligned else x.contiguous()


def supports(q: torch.Tensor) -> str | None:
    """Why attnc has no kernel for q's head dim and dtype, or None."""
    if q.shape[-1] not in HEAD_DIMS:
        return f"head dim {q.shape[-1]} (attnc has {HEAD_DIMS})"
    if q.dtype not in DTYPES:
        return f"dtype {q.dtype} (attnc has bf16 and fp16)"
    return None


def _check(q, k, v):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("attnc.torch.attention takes (B, H, S, D) tensors")
    if k.shape != v.shape or q.shape[0] != k.shape[0] or \
            q.shape[-1] != k.shape[-1]:
        raise ValueError(f"attnc.torch.attention: q {tuple(q.shape)}, k "
                         f"{tuple(k.shape)}, v {tuple(v.shape)} do not fit "
                         f"(B, H, Sq, D), (B, Hkv, Skv, D) twice")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"attnc.torch.attention: {q.shape[1]} query heads "
                         f"are not a multiple of {k.shape[1]} K/V heads")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError("attnc.torch.attention: q, k, v differ in dtype")


@torch.library.custom_op("attnc::attention_fwd", mutates_args=())
def attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  causal: bool, scale: float
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    _check(q, k, v)
    q, k, v = (_rows_contiguous(x) for x in (q, k, v))
    B, H, Sq, _ = q.shape
    o = q.new_empty(B, H, Sq, v.shape[-1])
    lse = q.new_empty(B, H, Sq, dtype=torch.float32)
    _module(q, causal)["attn"](q, k, v, o=o, lse=lse, scale=scale)
    counters["forward"] += 1
    return o, lse


@attention_fwd.register_fake
def _(q, k, v, causal, scale):
    B, H, Sq, _ = q.shape
    return (q.new_empty(B, H, Sq, v.shape[-1]),
            q.new_empty(B, H, Sq, dtype=torch.float32))


@torch.library.custom_op("attnc::attention_bwd", mutates_args=())
def attention_bwd(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                  causal: bool, scale: float
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    do, q, k, v, o = (_rows_contiguous(x) for x in (do, q, k, v, o))
    m = _module(q, causal)
    B, H, Sq, d = q.shape
    # delta = rowsum(dO * O); dQ accumulates in an f32 workspace the
    # runtime zeroes; both from torch's allocator.
    delta = q.new_empty(B, H, Sq, 1, dtype=torch.float32)
    m["attn_backward_0"](do, o, result0=delta)
    dq_accum = q.new_empty(B, H, Sq, d, dtype=torch.float32)
    dk, dv = k.new_empty(k.shape), v.new_empty(v.shape)
    m["attn_backward_1"](q, k, v, do, lse, delta, dk=dk, dv=dv,
                         dq_accum=dq_accum, scale=scale)
    dq = q.new_empty(q.shape)
    m["attn_backward_2"](dq_accum, dq=dq)
    counters["backward"] += 1
    return dq, dk, dv


@attention_bwd.register_fake
def _(do, q, k, v, o, lse, causal, scale):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, causal, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal, ctx.scale = causal, scale


def _backward(ctx, do, dlse):
    q, k, v, o, lse = ctx.saved_tensors
    # The logsumexp is an output for the backward's sake; its gradient
    # (none, in every use of `attention`) is not propagated.
    dq, dk, dv = attention_bwd(do, q, k, v, o, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


attention_fwd.register_autograd(_backward, setup_context=_setup_context)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              causal: bool = False, scale: float | None = None
              ) -> torch.Tensor:
    """softmax(scale · Q Kᵀ [masked]) V for (B, H, Sq, D) Q and (B, Hkv,
    Skv, D) K, V; query head h reads K/V head h // (H // Hkv). causal is
    top-left (key j visible to query i iff j <= i, SDPA's is_causal).
    scale defaults to 1/sqrt(D)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    o, _ = attention_fwd(q, k, v, causal, float(scale))
    return o


@torch.library.custom_op("attnc::attention_kvcache", mutates_args=())
def attention_kvcache(q: torch.Tensor, k_cache: torch.Tensor,
                      v_cache: torch.Tensor, cache_seqlens: torch.Tensor,
                      scale: float) -> torch.Tensor:
    _check(q, k_cache, v_cache)
    if cache_seqlens.dtype != torch.int32 or \
            tuple(cache_seqlens.shape) != (q.shape[0],):
        raise ValueError(f"attnc.torch.attention_with_kvcache: cache_seqlens "
                         f"must be int32 of shape ({q.shape[0]},), got "
                         f"{cache_seqlens.dtype} {tuple(cache_seqlens.shape)}")
    q, k_cache, v_cache = (_rows_contiguous(x) for x in (q, k_cache, v_cache))
    m = _decode_module(q, k_cache.shape[1])
    partials = m["decode_0"]
    lengths = cache_seqlens.contiguous()
    # The split count is the runtime's rule for this device and cache size
    # (parts of at least one K/V tile, at most DECODE_SPLITS); the f32
    # partials come from torch's allocator.
    splits = partials.size_rule("splits", q, k_cache, v_cache,
                                kv_lengths=lengths)
    B, H, Sq, d = q.shape
    twin = partials.unsplit
    if splits == 1 and twin is not None:
        # One split: the function before the split, in one launch (the
        # combine would only convert the partial).
        o = q.new_empty(B, H, Sq, d)
        lse = q.new_empty(B, H, Sq, dtype=torch.float32)
        twin(q, k_cache, v_cache, kv_lengths=lengths, o=o, lse=lse,
             scale=scale)
        counters["decode"] += 1
        return o
    o_part = q.new_empty(splits, B, H, Sq, d, dtype=torch.float32)
    lse_part = q.new_empty(splits, B, H, Sq, dtype=torch.float32)
    partials(q, k_cache, v_cache, kv_lengths=lengths, o_partial=o_part,
             lse_partial=lse_part, scale=scale)
    o = q.new_empty(B, H, Sq, d)
    m["decode_1"](o_part, lse_part, o=o)
    counters["decode"] += 1
    return o


@attention_kvcache.register_fake
def _(q, k_cache, v_cache, cache_seqlens, scale):
    return q.new_empty(q.shape)


def attention_with_kvcache(q: torch.Tensor, k_cache: torch.Tensor,
                           v_cache: torch.Tensor, cache_seqlens: torch.Tensor,
                           scale: float | None = None) -> torch.Tensor:
    """Attention of Sq new queries against a KV cache, for inference
    (no autograd): q (B, H, Sq, D), caches (B, Hkv, S_max, D), cache_seqlens
    (B,) int32 on the GPU: how many positions of each sequence's cache are
    valid, the Sq new tokens' K/V included (written there by the caller).
    Query i of sequence b sees keys j <= cache_seqlens[b] - Sq + i (causal
    from the bottom right of each sequence; with Sq = 1 every valid key);
    positions past cache_seqlens[b] are never read. A data-only change of
    cache_seqlens needs no new kernels, so one captured CUDA graph serves
    every length. Split-KV (FlashDecoding) with up to 128 parts; the
    query heads of a GQA group share one tile (each K/V byte read once)
    when the library has a variant for the group size H / Hkv
    (attnc.variants.DECODE_GROUPS: 2 to 32), else each query head reads
    its K/V head."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return attention_kvcache(q, k_cache, v_cache, cache_seqlens,
                             float(scale))
