"""attnc as a Hugging Face transformers attention backend.

    import attnc.hf
    attnc.hf.register()                                  # once
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="attnc")

`register` adds "attnc" to transformers' AttentionInterface (the function
below) and to its AttentionMaskInterface (SDPA's mask builder, so that
padding masks reach the function and a causal mask without padding arrives
as None, the causal flag). Generation with a cache (fewer queries than
keys: one new token, or a chunk, causal from the bottom right) runs
attnc.torch.attention_with_kvcache when no gradient is needed. Calls attnc
cannot run yet go to transformers' SDPA attention with a one-time warning
per reason: an explicit attention mask (padding), attention dropout, head
dims other than 64 and 128, dtypes other than bf16 and fp16, causal
attention of fewer queries than keys with gradients (or of more queries
than keys). `stats` counts both.
"""

from __future__ import annotations

import collections
import warnings

import torch

from . import torch as _at

__all__ = ["attention_forward", "register", "stats"]

#: Calls that ran attnc ("attnc") and that fell back to SDPA ("fallback").
stats: collections.Counter = collections.Counter()
_warned: set[str] = set()


def _fallback_reason(query, key, value, attention_mask, dropout, causal):
    if attention_mask is not None:
        return "an attention mask (padding)"
    if dropout:
        return "attention dropout"
    why = _at.supports(query)
    if why:
        return why
    sq, skv = query.shape[2], key.shape[2]
    if causal and sq > 1 and sq != skv and \
            not _against_cache(query, key, value, causal):
        return ("causal attention of fewer queries than keys, with "
                "gradients" if sq < skv else
                "causal attention of more queries than keys")
    return None


def _against_cache(query, key, value, causal) -> bool:
    """New queries at the end of a longer K/V sequence, causal from the
    bottom right (one query sees every key), needing no gradient: a
    generation step, which attention_with_kvcache runs."""
    sq, skv = query.shape[2], key.shape[2]
    return sq < skv and (causal or sq == 1) and \
        not _needs_grad(query, key, value)


def _needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def attention_forward(module, query, key, value, attention_mask,
                      dropout: float = 0.0, scaling: float | None = None,
                      is_causal: bool | None = None, **kwargs):
    """transformers' attention function signature: query (B, H, Sq, D),
    key and value (B, Hkv, Skv, D); returns ((B, Sq, H, D), None)."""
    causal = bool(is_causal if is_causal is not None else getattr(
        module, "is_causal", True))
    reason = _fallback_reason(query, key, value, attention_mask, dropout,
                              causal)
    if reason is not None:
        stats["fallback"] += 1
        if reason not in _warned:
            _warned.add(reason)
            warnings.warn(f"attnc: falling back to SDPA for {reason}",
                          stacklevel=2)
        from transformers.integrations.sdpa_attention import \
            sdpa_attention_forward
        return sdpa_attention_forward(module, query, key, value,
                                      attention_mask, dropout=dropout,
                                      scaling=scaling, is_causal=is_causal,
                                      **kwargs)
    stats["attnc"] += 1
    if _against_cache(query, key, value, causal):
        # Every cache position is valid (padding would have come as a mask).
        lengths = torch.full((query.shape[0],), key.shape[2],
                             dtype=torch.int32, device=query.device)
        o = _at.attention_with_kvcache(query, key, value, lengths,
                                       scale=scaling)
    else:
        # One query against one key, or Sq = Skv: top-left causal is the
        # bottom-right one.
        o = _at.attention(query, key, value,
                          causal=causal and query.shape[2] > 1, scale=scaling)
    return o.transpose(1, 2).contiguous(), None


def register(name: str = "attnc") -> None:
    """Registers the attention function and SDPA's mask builder as NAME."""
    from transformers import AttentionInterface
    AttentionInterface.register(name, attention_forward)
    try:
        from transformers.masking_utils import (AttentionMaskInterface,
                                                sdpa_mask)
        AttentionMaskInterface.register(name, sdpa_mask)
    except ImportError:  # transformers before the mask interface
        pass
