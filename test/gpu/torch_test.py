#!/usr/bin/env python3
"""attnc.torch on the GPU: the custom ops eagerly, under torch.compile
(fullgraph, and reduce-overhead), in a CUDA graph, under opcheck, and its
errors.

    python3 -m attnc.variants --out .gpuwork-bwd/torch        # here
    python3 test/gpu/torch_test.py --modules .gpuwork-bwd/torch   # on the GPU

Gradients are checked against float64 with the FlashAttention rule (error
at most twice the naive same-precision computation's, test/gpu/
backward_test.py's reference); compiled and graph-replayed results must
equal the eager ones bit for bit (same kernels, same inputs; dQ's atomics
make its sums order-dependent, so dQ is compared within 1e-2 relative).
"""

import argparse
import math
import sys
import tempfile
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test/gpu"))
import gpu_common  # noqa: E402
gpu_common.use_source_package()
import attnc.torch as at  # noqa: E402
from backward_test import reference_grads  # noqa: E402

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


def inputs(B, H, Hkv, S, d, dtype, seed=0):
    torch.manual_seed(seed)
    mk = lambda h: torch.randn(B, h, S, d, device="cuda", dtype=dtype,  # noqa: E731
                               requires_grad=True)
    return mk(H), mk(Hkv), mk(Hkv), torch.randn(B, H, S, d, device="cuda",
                                                dtype=dtype)


def grads(q, k, v, do, causal, scale=None):
    o = at.attention(q, k, v, causal=causal, scale=scale)
    return (o, *torch.autograd.grad(o, (q, k, v), do))


def test_eager():
    for d, dtype, causal, (H, Hkv), S in [
            (128, torch.bfloat16, True, (8, 2), 1000),
            (128, torch.bfloat16, False, (4, 4), 257),
            (64, torch.float16, True, (4, 1), 300),
            (64, torch.bfloat16, False, (2, 2), 128)]:
        q, k, v, do = inputs(2, H, Hkv, S, d, dtype)
        scale = 0.3 if d == 64 else None
        o, dq, dk, dv = grads(q, k, v, do, causal, scale)
        s = scale if scale is not None else 1 / math.sqrt(d)
        i = torch.arange(S, device="cuda")
        vis = (i[None, :] <= i[:, None]) if causal else None
        ref = reference_grads(q, k, v, do, s, vis)
        low = reference_grads(q, k, v, do, s, vis, low=dtype)
        errs = []
        ok = True
        for got, r, lo in zip((dq, dk, dv), ref, low):
            e = (got.double() - r).abs().max().item()
            el = (lo.double() - r).abs().max().item()
            ok &= e <= 2 * el + 1e-5 and not torch.isnan(got).any()
            errs.append(f"{e:.1e}/{el:.1e}")
        # The forward against SDPA in float64.
        kr = k.detach().double().repeat_interleave(H // Hkv, 1)
        vr = v.detach().double().repeat_interleave(H // Hkv, 1)
        o_ref = torch.nn.functional.scaled_dot_product_attention(
            q.detach().double(), kr, vr, is_causal=causal, scale=s)
        oe = (o.double() - o_ref).abs().max().item()
        ok &= oe < 2e-2
        check(f"eager d={d} {dtype} causal={causal} H={H}:{Hkv} S={S}", ok,
              f"o {oe:.1e} dq/dk/dv {errs}")


def test_transposed_views():
    # (B, S, H, D) storage seen as (B, H, S, D): non-contiguous inputs.
    torch.manual_seed(1)
    x = [torch.randn(2, 128, 4, 64, device="cuda", dtype=torch.bfloat16)
         for _ in range(3)]
    q, k, v = (t.transpose(1, 2).requires_grad_() for t in x)
    do = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16)
    o, dq, dk, dv = grads(q, k, v, do, True)
    qc, kc, vc = (t.detach().contiguous().requires_grad_() for t in (q, k, v))
    o2, dq2, dk2, dv2 = grads(qc, kc, vc, do, True)
    ok = torch.equal(o, o2) and torch.equal(dk, dk2) and torch.equal(dv, dv2)
    ok &= torch.allclose(dq.float(), dq2.float(), rtol=1e-2, atol=1e-2)
    check("transposed views", ok)


def test_compile():
    q, k, v, do = inputs(2, 8, 2, 512, 128, torch.bfloat16, seed=2)

    def f(q, k, v):
        return at.attention(q, k, v, causal=True).float().square().sum()

    def run(fn):
        loss = fn(q, k, v)
        return (loss, *torch.autograd.grad(loss, (q, k, v)))

    eager = run(f)
    try:
        compiled = run(torch.compile(f, fullgraph=True))
        ok = all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2)
                 for a, b in zip(eager, compiled))
        check("torch.compile(fullgraph=True)", ok)
    except Exception as e:  # noqa: BLE001
        check("torch.compile(fullgraph=True)", False, repr(e)[:400])
    try:
        ro = torch.compile(f, mode="reduce-overhead", fullgraph=True)
        for _ in range(3):
            out = run(ro)
        ok = all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2)
                 for a, b in zip(eager, out))
        check("torch.compile(mode='reduce-overhead')", ok)
    except Exception as e:  # noqa: BLE001
        check("torch.compile(mode='reduce-overhead')", False, repr(e)[:400])


def test_cuda_graph():
    q, k, v, do = inputs(2, 4, 4, 256, 64, torch.bfloat16, seed=3)
    static = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up off the capture stream
        grads(*static, do, False)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = grads(*static, do, False)
    fresh = [t.detach().clone() for t in (q, k, v)]
    for t, f in zip(static, fresh):
        t.detach().copy_(f * 0.5)
    g.replay()
    ref = grads(*[(f * 0.5).requires_grad_() for f in fresh], do, False)
    ok = all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2)
             for a, b in zip(out, ref))
    check("torch.cuda.graph capture and replay", ok)


def test_opcheck():
    q, k, v, do = inputs(1, 4, 2, 128, 64, torch.bfloat16, seed=4)
    for args in [(q, k, v, True, 0.125), (q, k, v, False, 0.2)]:
        try:
            torch.library.opcheck(torch.ops.attnc.attention_fwd.default, args)
            check(f"opcheck attention_fwd causal={args[3]}", True)
        except Exception as e:  # noqa: BLE001
            check(f"opcheck attention_fwd causal={args[3]}", False,
                  repr(e)[:600])
    o, lse = torch.ops.attnc.attention_fwd(q, k, v, True, 0.125)
    # The backward op is the forward's autograd formula and is not itself
    # differentiated (no double backward): every test but autograd's.
    try:
        torch.library.opcheck(
            torch.ops.attnc.attention_bwd.default,
            (do, q.detach(), k.detach(), v.detach(), o.detach(), lse, True,
             0.125),
            test_utils=("test_schema", "test_autograd_registration",
                        "test_faketensor"))
        check("opcheck attention_bwd", True)
    except Exception as e:  # noqa: BLE001
        check("opcheck attention_bwd", False, repr(e)[:600])


def kvcache_inputs(B, H, Hkv, Sq, Smax, d, dtype, lengths, seed=5):
    """q, caches, lengths; cache positions past each length are NaN, which
    the kernel must never read."""
    torch.manual_seed(seed)
    q = torch.randn(B, H, Sq, d, device="cuda", dtype=dtype)
    k = torch.randn(B, Hkv, Smax, d, device="cuda", dtype=dtype)
    v = torch.randn(B, Hkv, Smax, d, device="cuda", dtype=dtype)
    for b, n in enumerate(lengths):
        k[b, :, n:] = float("nan")
        v[b, :, n:] = float("nan")
    used = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    return q, k, v, used


def kvcache_check(o, q, k, v, used, scale):
    """O against float64 by the FlashAttention rule: query i of sequence b
    sees keys j < used[b] with j <= i + used[b] - Sq."""
    Sq, Smax = q.shape[2], k.shape[2]
    i = torch.arange(Sq, device="cuda")[:, None]
    j = torch.arange(Smax, device="cuda")[None, :]
    n = used.long()[:, None, None, None]
    vis = (j < n) & (j <= i + n - Sq)
    kk, vv = (x.nan_to_num(0.0) for x in (k, v))
    ref, _ = gpu_common.reference(q, kk, vv, scale, torch.float64, visible=vis)
    low, _ = gpu_common.reference(q, kk, vv, scale, q.dtype, visible=vis)
    if torch.isnan(o).any():
        return False, "NaN"
    ok, err, err_low = gpu_common.fa_rule(o, ref, low, q.dtype)
    return ok, f"err {err:.1e} <= 2x{err_low:.1e}"


def test_kvcache():
    for d, dtype, (H, Hkv), Sq, Smax, lengths in [
            # Packed variants (the library's DECODE_GROUPS: 4, 8, 16, 2,
            # 32) and unpacked ones (8:8, 24:8).
            (128, torch.bfloat16, (32, 8), 1, 4096, [4096, 1, 1000, 0]),
            (128, torch.bfloat16, (24, 8), 2, 1500, [1500, 2, 700]),
            (128, torch.bfloat16, (32, 1), 1, 5000, [5000, 4999]),
            (128, torch.float16, (64, 8), 3, 3000, [3000, 3, 2, 1500]),
            (64, torch.bfloat16, (16, 4), 1, 777, [777, 1]),
            (128, torch.float16, (16, 1), 16, 2048, [2048, 16, 17, 5]),
            (64, torch.float16, (8, 8), 4, 1000, [4, 500, 1000, 3]),
            (64, torch.bfloat16, (4, 2), 1, 65536, [65536, 70000]),
            # A batch that fills the GPU: one split, the unsplit twin.
            (128, torch.bfloat16, (32, 8), 1, 1024,
             [1024 - 13 * i for i in range(64)])]:
        q, k, v, used = kvcache_inputs(len(lengths), H, Hkv, Sq, Smax, d,
                                       dtype, lengths)
        scale = 0.1 if d == 64 else None
        o = at.attention_with_kvcache(q, k, v, used, scale=scale)
        ok, res = kvcache_check(o, q, k, v, used.clamp(max=Smax),
                                scale or 1 / math.sqrt(d))
        m = at._decode_module(q, Hkv)
        # Where the rule gives one split, the unsplit twin ran.
        splits = m["decode_0"].size_rule("splits", q, k, v, kv_lengths=used)
        res = f"{res}, splits={splits}" + \
            (" (unsplit twin)" if splits == 1 else "")
        packed = any(c.kind == "ratio" and c.value == H // Hkv
                     for c in m["decode_0"].constraints)
        if packed != (H % Hkv == 0 and H // Hkv in at.DECODE_GROUPS):
            check(f"kvcache d={d} H={H}:{Hkv} variant", False, m.name)
        check(f"kvcache d={d} {dtype} H={H}:{Hkv} "
              f"{'packed' if packed else 'unpacked'} Sq={Sq} "
              f"Smax={Smax} lengths={lengths}", ok, res)
    # One captured graph, replayed over new lengths and contents.
    q, k, v, used = kvcache_inputs(2, 8, 2, 1, 8192, 128, torch.bfloat16,
                                   [8192, 8192])
    at.attention_with_kvcache(q, k, v, used)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = at.attention_with_kvcache(q, k, v, used)
    ok, res = True, []
    for lengths in ([1, 8192], [3000, 17], [0, 1]):
        q2, k2, v2, used2 = kvcache_inputs(2, 8, 2, 1, 8192, 128,
                                           torch.bfloat16, lengths,
                                           seed=sum(lengths))
        for dst, src in ((q, q2), (k, k2), (v, v2), (used, used2)):
            dst.copy_(src)
        g.replay()
        good, r = kvcache_check(out, q, k, v, used, 1 / math.sqrt(128))
        ok &= good
        res.append(f"{lengths}: {r}")
    check("kvcache CUDA graph replayed over lengths", ok, "; ".join(res))
    f = torch.compile(lambda q, k, v, n: at.attention_with_kvcache(q, k, v, n)
                      .float().sum(), fullgraph=True)
    q, k, v, used = kvcache_inputs(2, 8, 8, 2, 512, 64, torch.bfloat16,
                                   [512, 100])
    try:
        got = f(q, k, v, used)
        want = at.attention_with_kvcache(q, k, v, used).float().sum()
        check("kvcache torch.compile(fullgraph=True)",
              torch.allclose(got, want, rtol=1e-3, atol=1e-2))
    except Exception as e:  # noqa: BLE001
        check("kvcache torch.compile(fullgraph=True)", False, repr(e)[:400])
    try:
        torch.library.opcheck(torch.ops.attnc.attention_kvcache.default,
                              (q, k.nan_to_num(0.0), v.nan_to_num(0.0), used,
                               0.125),
                              test_utils=("test_schema", "test_faketensor"))
        check("opcheck attention_kvcache", True)
    except Exception as e:  # noqa: BLE001
        check("opcheck attention_kvcache", False, repr(e)[:600])
    try:
        at.attention_with_kvcache(q, k, v, used.long())
        check("kvcache int64 lengths refused", False, "no error")
    except ValueError as e:
        check("kvcache int64 lengths refused", "int32" in str(e), str(e)[:120])


def test_errors(modules):
    with tempfile.TemporaryDirectory() as empty:
        at.set_module_dir(empty)
        q, k, v, _ = inputs(1, 2, 2, 16, 64, torch.bfloat16)
        try:
            at.attention(q, k, v)
            check("missing variant error", False, "no error")
        except RuntimeError as e:
            check("missing variant error",
                  "python3 -m attnc.variants" in str(e) and
                  "attn_d64_bf16_full" in str(e), str(e)[:200])
    at.set_module_dir(modules)
    q, k, v, _ = inputs(1, 2, 2, 16, 64, torch.bfloat16)
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            at.attention(q, k, v)
        check("first use inside capture refused", False, "no error")
    except RuntimeError as e:
        check("first use inside capture refused", "capture" in str(e),
              str(e)[:200])
    try:
        at.attention(q, k, v[:, :, :, :32])
        check("bad shapes refused", False)
    except ValueError as e:
        check("bad shapes refused", True, str(e)[:120])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", help="attnc.torch's module directory "
                    "(default: .gpuwork-bwd/torch, or with "
                    "ATTNC_TEST_INSTALLED=1 the installed wheel's prebuilt "
                    "kernels)")
    a = ap.parse_args()
    if a.modules is None and not gpu_common.INSTALLED:
        a.modules = str(ROOT / ".gpuwork-bwd/torch")
    at.set_module_dir(a.modules)
    print(f"kernels from {at.module_dir()}")
    for t in (lambda: test_errors(a.modules), test_eager,
              test_transposed_views, test_opcheck, test_compile,
              test_cuda_graph, test_kvcache):
        try:
            t()
        except Exception:  # noqa: BLE001
            check(getattr(t, "__name__", "test"), False,
                  traceback.format_exc()[-800:])
    print(f"{sum(results)}/{len(results)} passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
