"""Reference implementations of what attnc's kernels compute, in torch.

Used by the GPU tests (test/gpu/), the benchmark (bench/) and the demo. torch
is imported lazily (``import attnc`` never needs it); the Philox generator is
written with operators only (``&``, ``>>``, ``*``, ``^``, ``+`` on int64
arrays), so it runs on torch tensors on any device and on numpy int64 arrays.

Dropout, exactly as the fusion kernel draws it
(lib/Conversion/AttncToGPU/FusionBody.cpp):

* element i is the row-major linear index over the fused iteration shape
  (the input's shape);
* its Philox-4x32-10 counter is ``offset + i // 8`` taken modulo 2**64 and
  split into c0 = low 32 bits, c1 = high 32 bits, with c2 = c3 = 0; the key is
  k0 = low 32 bits of ``seed``, k1 = high 32 bits;
* word ``(i % 8) // 2`` of the output block w gives the 16-bit draw
  b = w & 0xFFFF (i even) or w >> 16 (i odd), u = b * 2**-16; the element is
  kept iff b >= ceil(p * 2**16), i.e. u >= p;
* kept elements are multiplied by float32(1 / (1 - p)) in f32, dropped ones
  are 0. The chain computes in f32 after loading (x + bias is not rounded
  to the storage type before dropout); only the result is rounded.
"""

from __future__ import annotations

import math
import struct

M32 = 0xFFFFFFFF
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10


def f32(x: float) -> float:
    """X rounded to the nearest float32 (as the kernel's constants are)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _mulhilo32(m: int, c):
    """(hi, lo) 32-bit halves of m * c for a 32-bit constant m and an int64
    array c of values in [0, 2**32), without int64 overflow."""
    c_lo = c & 0xFFFF
    c_hi = c >> 16
    p_lo = c_lo * m                  # < 2**48
    p_hi = c_hi * m                  # < 2**48; the product is p_hi*2**16 + p_lo
    t = p_lo + ((p_hi & 0xFFFF) << 16)   # < 2**49
    lo = t & M32
    hi = (p_hi >> 16) + (t >> 32)        # < 2**32
    return hi, lo


def philox4x32_10(c0, c1, c2, c3, k0: int, k1: int, rounds: int = PHILOX_ROUNDS):
    """Philox-4x32 on int64 arrays (or Python ints) holding 32-bit words.
    k0, k1 are Python ints. Returns the four output words."""
    k0 &= M32
    k1 &= M32
    for r in range(rounds):
        if r > 0:
            k0 = (k0 + PHILOX_W0) & M32
            k1 = (k1 + PHILOX_W1) & M32
        hi0, lo0 = _mulhilo32(PHILOX_M0, c0)
        hi1, lo1 = _mulhilo32(PHILOX_M1, c2)
        c0, c1, c2, c3 = (hi1 ^ c1 ^ k0), lo1, (hi0 ^ c3 ^ k1), lo0
    return c0, c1, c2, c3


def dropout_uniform(numel: int, seed: int, offset: int, device=None,
                    start: int = 0):
    """u(i) for i in [start, start + numel) as a float64 torch tensor
    (u = b * 2**-16 for the 16-bit draw b, exactly as the kernel computes
    it)."""
    import torch
    first_q = start // 8
    last_q = (start + numel + 7) // 8
    q = torch.arange(first_q, last_q, dtype=torch.int64, device=device)
    off = offset % (1 << 64)
    off_lo, off_hi = off & M32, off >> 32
    s = (q & M32) + off_lo
    c0 = s & M32
    c1 = ((q >> 32) + off_hi + (s >> 32)) & M32
    zero = torch.zeros_like(c0)
    seed %= 1 << 64
    words = philox4x32_10(c0, c1, zero, zero, seed & M32, seed >> 32)
    # Element 8q + 2j + h is half h (0: low, 1: high) of word j.
    w = torch.stack(words, dim=1)
    halves = torch.stack([w & 0xFFFF, w >> 16], dim=2).reshape(-1)
    halves = halves[start - 8 * first_q: start - 8 * first_q + numel]
    return halves.to(torch.float64) * (2.0 ** -16)


def dropout_keep_mask(shape, p: float, seed: int, offset: int, device=None,
                      chunk: int = 1 << 25):
    """The kernel's keep mask (bool tensor of SHAPE): rows of the last
    dimension padded to a multiple of 8 draws (attnc.dropout's counters)."""
    import torch
    n = shape[-1]
    padded = (n + 7) // 8 * 8
    rows = math.prod(shape[:-1])
    numel = rows * padded
    threshold = float(p)  # b / 2**16 >= p  <=>  b >= ceil(p * 2**16)
    out = torch.empty(numel, dtype=torch.bool, device=device)
    for start in range(0, numel, chunk):
        m = min(chunk, numel - start)
        out[start:start + m] = dropout_uniform(m, seed, offset, device,
                                               start) >= threshold
    return out.reshape(rows, padded)[:, :n].reshape(shape)


def bias_dropout(x, bias, p: float, seed: int, offset: int, keep=None):
    """f32 value of dropout(x + bias) exactly as the kernel computes it
    (before the final rounding), and the keep mask."""
    import torch
    h = x.float() + bias.float()
    if keep is None:
        keep = dropout_keep_mask(tuple(x.shape), p, seed, offset, x.device)
    scale = torch.tensor(f32(1.0 / (1.0 - p)), dtype=torch.float32,
                         device=x.device)
    return torch.where(keep, h * scale, torch.zeros((), device=x.device)), keep


def bias_dropout_layernorm(x, bias, gamma, beta, p: float, seed: int,
                           offset: int, eps: float = 1e-5, keep=None,
                           rows_per_chunk: int = 4096):
    """float64 reference of layer_norm(dropout(x + bias)) over the last dim,
    with the dropout value computed as the kernel does (f32), the LayerNorm
    in float64. Returns (y float64, keep mask)."""
    import torch
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    if keep is None:
        keep = dropout_keep_mask(tuple(x.shape), p, seed, offset, x.device)
    k2 = keep.reshape(-1, n)
    y = torch.empty(x2.shape, dtype=torch.float64, device=x.device)
    g, b = gamma.double(), beta.double()
    for r in range(0, x2.shape[0], rows_per_chunk):
        d, _ = bias_dropout(x2[r:r + rows_per_chunk], bias, p, seed, offset,
                            k2[r:r + rows_per_chunk])
        d = d.double()
        mean = d.mean(-1, keepdim=True)
        var = ((d - mean) ** 2).mean(-1, keepdim=True)
        y[r:r + rows_per_chunk] = (d - mean) / torch.sqrt(var + eps) * g + b
    return y.reshape(x.shape), keep


def attention(q, k, v, scale: float, causal, low=None, score_mod=None):
    """Attention over [B, H, Sq, d] / [B, Hkv, Skv, d] (GQA: H a multiple of
    Hkv; causal is top-left: key j is visible to query i iff j <= i).

    causal may also be a function of the index tensors (i [Sq, 1], j [1, Skv])
    returning the boolean mask of visible keys, and score_mod a function of
    the scaled scores applied before the mask (a softcap, say).

    low=None: float64 reference. low=<torch dtype>: the naive computation in
    that precision (scale folded into Q, scores and softmax in the low type,
    as FlashAttention's test reference does). Returns (O, LSE); rows with no
    visible key give O = 0 and LSE = -inf.
    """
    import torch
    H, Hkv = q.shape[1], k.shape[1]
    if H != Hkv:
        k = k.repeat_interleave(H // Hkv, dim=1)
        v = v.repeat_interleave(H // Hkv, dim=1)
    if low is None:
        q, k, v = q.double(), k.double(), v.double()
        s = torch.matmul(q, k.transpose(-1, -2)) * scale
    else:
        q, k, v = q.to(low), k.to(low), v.to(low)
        s = torch.matmul(q * scale, k.transpose(-1, -2))
    Sq, Skv = q.shape[2], k.shape[2]
    if score_mod is not None:
        s = score_mod(s)
    if callable(causal):
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Skv, device=q.device)[None, :]
        s = s.masked_fill(~causal(i, j), float("-inf"))
    elif causal:
        # True (or "top_left"): key j visible to query i iff j <= i;
        # "bottom_right": iff j <= i + Skv - Sq (the last query sees the
        # last key).
        shift = Skv - Sq if causal == "bottom_right" else 0
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Skv, device=q.device)[None, :]
        s = s.masked_fill(j > i + shift, float("-inf"))
    lse = torch.logsumexp(s.float() if low is not None else s, dim=-1)
    p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)  # rows with no visible key
    return torch.matmul(p.to(v.dtype), v), lse


def attention_chunked(q, k, v, scale: float, causal, low=None,
                      max_bytes: int = 2 << 30, score_mod=None):
    """attention() over groups of (batch, head) pairs so that the score
    matrix of one group stays under MAX_BYTES (float64 scores)."""
    import torch
    B, H, Sq, d = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    per_head = max(Sq * Skv * 8 * 3, 1)
    group = max(1, min(H, max_bytes // per_head))
    rep = H // Hkv
    # Keep whole KV groups together for GQA.
    if rep > 1:
        group = max(rep, group - group % rep)
    o_dtype = torch.float64 if low is None else low
    o = torch.empty(B, H, Sq, v.shape[-1], dtype=o_dtype, device=q.device)
    lse = torch.empty(B, H, Sq, dtype=torch.float64 if low is None
                      else torch.float32, device=q.device)
    for b in range(B):
        for h0 in range(0, H, group):
            h1 = min(H, h0 + group)
            kv0, kv1 = h0 // rep, (h1 + rep - 1) // rep
            ob, lb = attention(q[b:b + 1, h0:h1], k[b:b + 1, kv0:kv1],
                               v[b:b + 1, kv0:kv1], scale, causal, low,
                               score_mod)
            o[b:b + 1, h0:h1] = ob
            lse[b:b + 1, h0:h1] = lb
    return o, lse
