#!/usr/bin/env python3
"""GPU test suite of attnc (runs on the H200, never in CI; no pytest).

    ATTNC_RUNTIME_LIB=.gpuwork/lib/libattnc_runtime.so PYTHONPATH=python \
        python3 test/gpu/run_tests.py [--modules .gpuwork/modules] [--only SUBSTR] [--quick]

Every kernel is launched through the attnc Python package and the C runtime
(not CuPy), on freshly drawn random inputs, with its outputs poisoned (NaN)
before each launch. Sections:

  attention  every attn_* module (d 64/128, bf16/f16, causal/full, the
             example, GQA spelled with repeat_interleave) against a float64
             reference; FlashAttention's rule: max|O - O_ref| <= 2 *
             max|O_naive - O_ref| + 1e-4 with O_naive the naive computation
             in the same low precision (LSE likewise, eps 1e-4 + 1e-6 |LSE|);
             no NaN; rows with no visible key (Skv = 0) give O = 0, LSE = -inf.
  chain      the elementwise chain (dropout(x + bias) -> LayerNorm) against
             python/attnc/reference.py (Philox mask reimplemented in torch):
             dropout-only kernels bitwise (mask and values), LayerNorm chains
             within 1 bf16/f16 ulp of the float64 reference and within 2x the
             error of bf16 rounding itself; p = 0 against F.layer_norm.
  runtime    refusals before launch (dtype, shape, strides, alignment, GQA
             heads, overlap, CPU tensor): AttncError and the poisoned output
             untouched; CUDA graph capture + replay == direct launch, bitwise,
             also after the inputs change in place.

Prints one line per case, a summary table per section, and
'N passed, N failed'. Exit status 1 if anything failed.
"""

import argparse
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402
gpu_common.use_source_package()
import attnc  # noqa: E402
from attnc import reference as ref  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
RESULTS = []  # (section, name, ok, detail)


def record(section, name, ok, detail=""):
    RESULTS.append((section, name, bool(ok), detail))
    print(f"[{section:9}] {'ok  ' if ok else 'FAIL'} {name:58} {detail}",
          flush=True)


def guarded(section, name, fn):
    try:
        fn()
    except Exception as e:  # a crash is a failure of that case, not the run
        record(section, name, False, f"exception: {type(e).__name__}: "
               f"{str(e).splitlines()[0] if str(e) else ''}")
        traceback.print_exc()


def nan_like(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


# ----------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------
def attn_cases(quick):
    # (B, H, Hkv, Sq, Skv, layout, amp)
    c = [(1, 1, 1, 1, 1, "bhsd", 1), (2, 3, 3, 17, 17, "bhsd", 1),
         (1, 16, 16, 128, 128, "bhsd", 1), (4, 4, 4, 1000, 1000, "bhsd", 1),
         (2, 8, 8, 4096, 4096, "bhsd", 1), (3, 5, 5, 4097, 4097, "bhsd", 1),
         (1, 2, 2, 16384, 16384, "bhsd", 1),
         (4, 16, 16, 1000, 1000, "bhsd", 1),   # batch*heads = 64
         (64, 1, 1, 129, 129, "bhsd", 1),      # batch*heads = 64 over batch
         (2, 8, 2, 1000, 1000, "bhsd", 1),     # GQA H=8, Hkv=2
         (1, 8, 2, 4097, 4097, "bhsd", 1),
         (2, 8, 1, 1000, 1000, "bhsd", 1),     # MQA Hkv=1
         (1, 8, 1, 17, 17, "bhsd", 1),
         (2, 4, 4, 333, 333, "bshd", 1),       # non-contiguous [B,S,H,d] view
         (1, 2, 2, 17, 1000, "bhsd", 1),       # Sq < Skv
         (1, 2, 2, 1000, 17, "bhsd", 1),       # Sq > Skv (top-left causal)
         (1, 2, 1, 64, 0, "bhsd", 1),          # Skv = 0: every row masked
         (2, 2, 2, 1000, 1000, "bhsd", 55),    # logits ~ +-1e4 (std 3e3)
         (2, 4, 2, 300, 300, "bhsd", -5),      # every logit about -280
         (1, 8, 2, 4097, 4097, "bhsd", 55),
         # Causal d = 128 grids whose K/V heads exceed l2_group_mib's 32
         # MiB take their heads in groups: 7 + 6 of 13, two batches of 4 + 4,
         # GQA 12:4 in groups of 6 query heads (2 K/V heads).
         (1, 13, 13, 300, 5200, "bhsd", 1),
         (2, 8, 8, 1000, 8200, "bhsd", 1),
         (1, 12, 4, 300, 18000, "bhsd", 1)]
    if quick:
        c = [x for x in c if x[3] <= 4097 and x[0] * x[1] <= 16]
    return c


def odd_view(shape, dtype):
    """A [..., d] tensor TMA cannot address: its base 2 bytes past a 16-byte
    boundary, its rows d + 1 elements apart."""
    *outer, d = shape
    n = math.prod(outer) * (d + 1)
    flat = torch.empty(n + 1, device="cuda", dtype=dtype)
    return flat[1:].view(*outer, d + 1)[..., :d]


def make_qkv(B, H, Hkv, Sq, Skv, d, dtype, layout, amp):
    def mk(h, s, a):
        if layout == "bshd":
            t = torch.randn(B, s, h, d, device="cuda", dtype=torch.float32)
            return (a * t).to(dtype).transpose(1, 2)
        t = (a * torch.randn(B, h, s, d, device="cuda")).to(dtype)
        if layout == "odd":
            t = odd_view((B, h, s, d), dtype).copy_(t)
        return t
    # amp scales Q and K: logit std = amp^2 (scale = 1/sqrt(d) cancels sqrt(d)).
    if amp < 0:
        # Q and K along one direction per head with opposite signs, plus
        # noise: every logit about -amp^2 sqrt(d), so that a bounded modifier
        # (a softcap) saturates at its lower end in every row: the static
        # row max (the bound's middle) must not flush those probabilities.
        u = torch.randn(1, Hkv, 1, d, device="cuda")
        qd = u.repeat_interleave(H // Hkv, dim=1)
        q = (-amp * (qd + 0.3 * torch.randn(B, H, Sq, d, device="cuda")))
        k = (amp * (u + 0.3 * torch.randn(B, Hkv, Skv, d, device="cuda")))
        return q.to(dtype), k.to(dtype), mk(Hkv, Skv, 1.0)
    return mk(H, Sq, amp), mk(Hkv, Skv, amp), mk(Hkv, Skv, 1.0)


def check_attention(kern, B, H, Hkv, Sq, Skv, layout, amp, variant=None):
    d = int(kern.attr("head_dim"))
    scale = float(kern.attr("scale"))
    mask = kern.attr("mask")
    score_mod = None
    if variant is not None:
        # A mask / modifier written in the graph: the reference applies the
        # same Python definition to the graph's scaled scores (the kernel's
        # scale attribute may have absorbed a modifier's constant).
        _, _, _, causal, cap = variant
        # The graph's own constant: 1/sqrt(d), or none (1) when the graph
        # scales by a run-time argument instead (multiplied in below).
        has_runtime = any(p.name == "scale" for p in kern.scalars)
        scale = 1.0 if has_runtime else 1.0 / math.sqrt(d)
        if isinstance(cap, tuple):  # ("clamp", c)
            score_mod = lambda s: s.clamp(-cap[1], cap[1])  # noqa: E731
        elif cap is not None:
            score_mod = lambda s: cap * torch.tanh(s / cap)  # noqa: E731
    else:
        causal = {"none": False, "causal": True,
                  "causal_bottom_right": "bottom_right"}[mask]
    dtype = DT[kern.inputs[0].dtype]
    q, k, v = make_qkv(B, H, Hkv, Sq, Skv, d, dtype, layout, amp)
    o = nan_like((B, H, Sq, d), dtype)
    if layout == "odd":
        o = odd_view((B, H, Sq, d), dtype).fill_(float("nan"))
    lse = nan_like((B, H, Sq), torch.float32)
    scalars = {}
    if any(p.name == "scale" for p in kern.scalars):
        # A run-time softmax scale multiplies the compiled one.
        runtime = 1.0 / math.sqrt(d)
        scalars["scale"] = runtime
        scale *= runtime
    # Unaddressable by TMA: the call must go to the kernel's fallback.
    # A persistent kernel runs on 3 CTAs instead of one per SM, so that
    # every shape walks (or draws) many tiles per CTA and a partial round.
    sms = 3 if kern.attr("strategy") == "wgmma_ws_persistent" else None
    ran = kern.plan(q, k, v, o=o, lse=lse, num_sms=sms, **scalars).kernel
    wrong_kernel = layout == "odd" and ran is not kern.fallback
    kern(q, k, v, o=o, lse=lse, num_sms=sms, **scalars)
    torch.cuda.synchronize()
    o_ref, lse_ref = ref.attention_chunked(q, k, v, scale, causal,
                                           score_mod=score_mod)
    o_low, lse_low = ref.attention_chunked(q, k, v, scale, causal, dtype,
                                           score_mod=score_mod)
    nan = bool(torch.isnan(o).any() or torch.isnan(lse).any())
    if o.numel():
        err = (o.double() - o_ref).abs().max().item()
        err_low = (o_low.double() - o_ref).abs().max().item()
    else:
        err = err_low = 0.0
    if math.isnan(err_low):  # the naive low-precision run overflowed
        err_low = math.inf
    fin = torch.isfinite(lse_ref)
    same_inf = bool((torch.isfinite(lse) == fin).all()) and bool(
        (lse[~fin] == float("-inf")).all())
    zero_rows = True
    if (~fin).any():  # rows with no visible key: O must be exactly 0
        zero_rows = bool((o[~fin] == 0).all())
    if fin.any():
        lerr = (lse.double() - lse_ref)[fin].abs().max().item()
        lerr_low = (lse_low.double() - lse_ref)[fin].abs().max().item()
        lmag = lse_ref[fin].abs().max().item()
        if math.isnan(lerr_low):
            lerr_low = math.inf
    else:
        lerr = lerr_low = lmag = 0.0
    # One unit in the last place of the output dtype at O's magnitude: with
    # near one-hot rows (large logits) both errors are a rounding of the
    # same value, and the low-precision run can round the lucky way (found
    # by the differential test: 1.95e-3 against 2 x 4.77e-4, f16, |O| ~ 3).
    out_ulp = torch.finfo(dtype).eps * (o_ref.abs().max().item()
                                        if o.numel() else 0.0)
    ok_o = err <= 2 * err_low + 1e-4 + out_ulp
    ok_l = lerr <= 2 * lerr_low + 1e-4 + 1e-6 * lmag
    ok = not nan and same_inf and zero_rows and ok_o and ok_l and not wrong_kernel
    why = [f"ran {ran.name}, not the fallback"] if wrong_kernel else []
    if nan:
        why.append("NaN left")
    if not same_inf:
        why.append("LSE finiteness differs")
    if not zero_rows:
        why.append("masked rows not 0")
    if not ok_o:
        why.append("O error")
    if not ok_l:
        why.append("LSE error")
    return ok, (f"err {err:.2e} <= 2x{err_low:.2e}; lse {lerr:.2e} <= "
                f"2x{lerr_low:.2e}" + (f"  [{', '.join(why)}]" if why else ""))


def generated_cases(kern):
    """Shapes for a generated attention module: its own where static, a few
    small ones (odd sizes, Sq < Skv, Sq > Skv) where dynamic."""
    q, k = kern.inputs[0].shape, kern.inputs[1].shape
    if all(isinstance(d, int) for d in q + k):
        return [(q[0], q[1], k[1], q[2], k[2], "bhsd", 1)]
    return [(1, 1, 1, 1, 1, "bhsd", 1), (2, 3, 3, 77, 77, "bhsd", 1),
            (1, 2, 2, 100, 300, "bhsd", 1), (1, 2, 2, 300, 100, "bhsd", 1),
            (2, 2, 2, 129, 129, "bhsd", 55)]


def test_attention(mods, quick):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from build_modules import (MASK_VARIANTS, STATIC_ATTENTION, base_module,
                               gen_graphs)
    for name, mod in mods.items():
        if not name.startswith("attn"):
            continue
        (kern,) = mod.entries
        cases = attn_cases(quick)
        # (A compile variant computes what its base module does.)
        variant = MASK_VARIANTS.get(base_module(name))
        if name.startswith("attn_gen_"):  # the differential test
            cases = generated_cases(kern)
            spec_file = Path(mod.directory) / "generated.json"
            if spec_file.exists():
                spec = json.loads(spec_file.read_text())
                cap = None if spec["softcap"] == "None" else float(spec["softcap"])
                variant = (None, None, None,
                           gen_graphs.reference_mask(spec["mask"]), cap)
        elif name in STATIC_ATTENTION:  # compiled for one shape only
            B, H, Sq, Skv = STATIC_ATTENTION[name][:4]
            cases = [(B, H, H, Sq, Skv, "bhsd", 1),
                     (B, H, H, Sq, Skv, "bhsd", 55)]
        runs = [(kern, c) for c in cases]
        fb = kern.fallback
        if fb is not None:
            # The fallback on its own (aligned tensors), on the quick list
            # or the graph's own cases; then through the kernel with
            # tensors TMA cannot address, which must reach it.
            own = cases if name.startswith("attn_gen_") or name in STATIC_ATTENTION \
                else attn_cases(True)
            runs += [(fb, c) for c in own]
            if name not in STATIC_ATTENTION:
                runs += [(kern, c[:5] + ("odd",) + c[6:]) for c in cases
                         if c[5] == "bhsd" and c[3] <= 4097 and c[0] * c[1] <= 16]
        for (kk, (B, H, Hkv, Sq, Skv, layout, amp)) in runs:
            if name == "attn_gqa_ri":  # its graph has H=8, Hkv=2 (static)
                if H != 8:
                    continue
                Hkv = 2
            case = (f"{kk.name if kk is fb else name} B{B} H{H}/{Hkv} Sq{Sq} "
                    f"Skv{Skv} {layout}{' amp' + str(amp) if amp != 1 else ''}")

            def run(kk=kk, B=B, H=H, Hkv=Hkv, Sq=Sq, Skv=Skv, layout=layout,
                    amp=amp, case=case):
                ok, detail = check_attention(kk, B, H, Hkv, Sq, Skv,
                                             layout, amp, variant)
                record("attention", case, ok, detail)
            guarded("attention", case, run)


# ----------------------------------------------------------------------------
# Elementwise chains
# ----------------------------------------------------------------------------
def ulp(x64, dtype):
    """One ulp of the storage type at |x| (subnormals: the smallest one)."""
    fi = torch.finfo(dtype)
    mant = {torch.bfloat16: 7, torch.float16: 10, torch.float32: 23}[dtype]
    e = torch.floor(torch.log2(x64.abs().clamp_min(fi.tiny)))
    return torch.pow(2.0, e - mant)


ABS_SLACK = 4e-6
SEEDS = [(0, 0), (0x123456789ABCDEF0, 12345), (42, (1 << 32) - 3),
         (-7, -9)]  # high key bits; counter carries into c1; 64-bit wrap


def chain_inputs(rows_shape, n, dtype, strided=False):
    shape = tuple(rows_shape) + (n,)
    if strided:  # rows not contiguous: a [.., n] view of [.., n + 64]
        big = torch.randn(*rows_shape, n + 64, device="cuda").to(dtype)
        x = big[..., :n]
    else:
        x = torch.randn(shape, device="cuda").to(dtype)
    bias = torch.randn(n, device="cuda").to(dtype)
    gamma = (1 + 0.5 * torch.randn(n, device="cuda")).to(dtype)
    beta = (0.5 * torch.randn(n, device="cuda")).to(dtype)
    return x, bias, gamma, beta


def check_dropout_kernel(kern, p, rows, n, dtype, seed, offset, strided):
    x, bias, _, _ = chain_inputs((rows,), n, dtype, strided)
    y = nan_like((rows, n), dtype)
    kern(x, bias, y=y, seed=seed, offset=offset)
    torch.cuda.synchronize()
    val, keep = ref.bias_dropout(x, bias, p, seed, offset)
    expect = val.to(dtype)
    h = x.float() + bias.float()
    nz = h != 0
    got_keep = y != 0
    mask_mismatch = int(((got_keep != keep) & nz).sum())
    bitwise = int((y.view(torch.int16 if dtype != torch.float32 else torch.int32)
                   != expect.view(torch.int16 if dtype != torch.float32
                                  else torch.int32)).sum())
    nan = int(torch.isnan(y).sum())
    frac = keep.float().mean().item()
    ok = nan == 0 and mask_mismatch == 0 and bitwise == 0 and \
        abs(frac - (1 - p)) < 0.01
    detail = (f"mask mismatches {mask_mismatch}/{keep.numel()}, values not "
              f"bitwise equal {bitwise}, keep {frac:.4f}, NaN {nan}")
    if mask_mismatch:
        idx = torch.nonzero(((got_keep != keep) & nz).reshape(-1))[:5, 0]
        detail += f"; first bad linear idx {idx.tolist()}"
    return ok, detail


def check_ln_chain(kern, p, rows_shape, n, dtype, seed, offset, strided,
                   scalar_names=("seed", "offset")):
    x, bias, gamma, beta = chain_inputs(rows_shape, n, dtype, strided)
    y = nan_like(tuple(rows_shape) + (n,), dtype)
    kern(x, bias, gamma, beta, y=y,
         **{scalar_names[0]: seed, scalar_names[1]: offset})
    torch.cuda.synchronize()
    y_ref, keep = ref.bias_dropout_layernorm(x, bias, gamma, beta, p, seed,
                                             offset)
    nan = int(torch.isnan(y).sum())
    err = (y.double() - y_ref).abs()
    u = ulp(y_ref, dtype)
    ulps = (err / u).max().item()
    # 1 ulp of the result, plus f32 slack for results near 0 that come from
    # cancellation in gamma * x_hat + beta (terms of size ~1, f32 eps 6e-8).
    over = int((err > u + ABS_SLACK).sum())
    round_err = (y_ref.to(dtype).double() - y_ref).abs().max().item()
    bitwise = (y == y_ref.to(dtype)).float().mean().item()
    ok = nan == 0 and over == 0 and err.max().item() <= 2 * round_err + 1e-6
    detail = (f"max err {err.max().item():.2e} <= 2x round {round_err:.2e}; "
              f"max {ulps:.2f} ulp, >1ulp+{ABS_SLACK:.0e} {over}; ==round(ref) {bitwise:.4f}; "
              f"keep {keep.float().mean().item():.4f}; NaN {nan}")
    if over:
        bad = torch.nonzero((err > u + ABS_SLACK).reshape(-1))[:5, 0]
        detail += f"; first >1ulp idx {bad.tolist()}"
    return ok, detail


def check_p0_layernorm(kern, rows, n, dtype):
    x, bias, gamma, beta = chain_inputs((rows,), n, dtype)
    y = nan_like((rows, n), dtype)
    kern(x, bias, gamma, beta, y=y, seed=1, offset=2)
    torch.cuda.synchronize()
    h = x.double() + bias.double()
    y_ref = F.layer_norm(h, (n,), gamma.double(), beta.double(), 1e-5)
    eager = F.layer_norm(x + bias, (n,), gamma, beta, 1e-5)  # bf16 eager
    err = (y.double() - y_ref).abs().max().item()
    err_eager = (eager.double() - y_ref).abs().max().item()
    e = (y.double() - y_ref).abs()
    ulps = (e / ulp(y_ref, dtype)).max().item()
    over = int((e > ulp(y_ref, dtype) + ABS_SLACK).sum())
    nan = int(torch.isnan(y).sum())
    # The kernel does not round x + bias to bf16 (eager torch does): it must
    # be within 1 ulp of the float64 LayerNorm of x + bias.
    ok = nan == 0 and over == 0 and err <= 2 * err_eager + 1e-6
    return ok, (f"vs F.layer_norm(f64): err {err:.2e} (max {ulps:.2f} ulp, >1ulp+slack {over}), eager "
                f"bf16 F.layer_norm err {err_eager:.2e}; NaN {nan}")


def test_chains(mods, quick):
    if "chain" in mods:
        kern = mods["chain"]["bias_dropout_layernorm"]
        for seed, off in (SEEDS[:2] if quick else SEEDS):
            case = f"chain (example 8x4096x4096 bf16 p=0.1) seed {seed:#x} off {off}"
            guarded("chain", case, lambda: record("chain", case, *check_ln_chain(
                kern, 0.1, (8, 4096), 4096, torch.bfloat16, seed, off, False)))
    if "dropout_bf16_p10" in mods:
        kern = mods["dropout_bf16_p10"]["bias_dropout"]
        for rows, strided in ((1, False), (3000, False), (777, True)):
            for seed, off in SEEDS:
                case = f"dropout bf16 p=0.1 rows {rows}{' strided' if strided else ''} seed {seed:#x} off {off}"
                guarded("chain", case, lambda: record("chain", case, *check_dropout_kernel(
                    kern, 0.1, rows, 4096, torch.bfloat16, seed, off, strided)))
    if "dropout_f32_p50_n1024" in mods:
        kern = mods["dropout_f32_p50_n1024"]["bias_dropout"]
        for seed, off in SEEDS[1:3]:
            case = f"dropout f32 p=0.5 n=1024 rows 5000 seed {seed:#x} off {off}"
            guarded("chain", case, lambda: record("chain", case, *check_dropout_kernel(
                kern, 0.5, 5000, 1024, torch.float32, seed, off, False)))
    if "chain_dyn_p10" in mods:
        kern = mods["chain_dyn_p10"]["bias_dropout_layernorm"]
        for rows, strided in ((1, False), (1000, False), (513, True)):
            seed, off = SEEDS[1]
            case = f"chain dyn bf16 p=0.1 rows {rows}{' strided' if strided else ''}"
            guarded("chain", case, lambda: record("chain", case, *check_ln_chain(
                kern, 0.1, (rows,), 4096, torch.bfloat16, seed, off, strided)))
    if "chain_f16_n1024_p30" in mods:
        kern = mods["chain_f16_n1024_p30"]["bias_dropout_layernorm"]
        case = "chain dyn f16 n=1024 p=0.3 rows 4000"
        guarded("chain", case, lambda: record("chain", case, *check_ln_chain(
            kern, 0.3, (4000,), 1024, torch.float16, 99, 7, False)))
    if "chain_dyn_p0" in mods:
        kern = mods["chain_dyn_p0"]["bias_dropout_layernorm"]
        for rows in (1, 4096):
            case = f"chain p=0 (bias + LayerNorm) rows {rows} vs F.layer_norm"
            guarded("chain", case, lambda: record("chain", case, *check_p0_layernorm(
                kern, rows, 4096, torch.bfloat16)))


# ----------------------------------------------------------------------------
# Runtime: refusals and graphs
# ----------------------------------------------------------------------------
def expect_refusal(case, launch, outputs):
    for o in outputs:
        o.fill_(float("nan"))
    torch.cuda.synchronize()
    try:
        launch()
        torch.cuda.synchronize()
        record("runtime", case, False, "no AttncError")
        return
    except attnc.AttncError as e:
        msg, status = str(e).splitlines()[0], e.status
    torch.cuda.synchronize()
    untouched = all(bool(torch.isnan(o).all()) for o in outputs)
    record("runtime", case, untouched and status == "ATTNC_ERROR_VALIDATION",
           f"{status}: {msg[:110]}" + ("" if untouched else " [OUTPUT WRITTEN]"))


def test_runtime(mods):
    name = "attn_d128_bf16_causal" if "attn_d128_bf16_causal" in mods else "attn_example"
    if name in mods:
        (kern,) = mods[name].entries
        B, H, S, d = 2, 4, 300, 128
        bf = torch.bfloat16
        q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=bf) for _ in range(3))
        o = nan_like((B, H, S, d), bf)
        lse = nan_like((B, H, S), torch.float32)
        outs = (o, lse)
        expect_refusal("attention: q in f16", lambda: kern(q.half(), k, v, o=o, lse=lse), outs)
        expect_refusal("attention: lse in bf16",
                       lambda: kern(q, k, v, o=o, lse=torch.empty(B, H, S, device="cuda", dtype=bf)), (o,))
        expect_refusal("attention: head dim 64 into a d=128 kernel",
                       lambda: kern(q[..., :64].contiguous(), k[..., :64].contiguous(),
                                    v[..., :64].contiguous(), o=o[..., :64].contiguous(), lse=lse), (lse,))
        expect_refusal("attention: k batch 1 vs q batch 2",
                       lambda: kern(q, k[:1], v[:1], o=o, lse=lse), outs)
        expect_refusal("attention: q rank 3",
                       lambda: kern(q[0], k, v, o=o, lse=lse), outs)
        qt = torch.randn(B, H, d, S, device="cuda", dtype=bf).transpose(-1, -2)
        expect_refusal("attention: q innermost stride != 1",
                       lambda: kern(qt, k, v, o=o, lse=lse), outs)
        flat = torch.randn(q.numel() + 8, device="cuda", dtype=bf)
        qm = flat[1:1 + q.numel()].view(B, H, S, d)
        if kern.fallback is None:
            expect_refusal("attention: q misaligned by 2 bytes",
                           lambda: kern(qm, k, v, o=o, lse=lse), outs)
        else:
            ran = kern.plan(qm, k, v, o=o, lse=lse).kernel
            record("runtime", "attention: q misaligned by 2 bytes runs the fallback",
                   ran is kern.fallback, f"plan runs {ran.name}")
        q6 = torch.randn(B, 6, S, d, device="cuda", dtype=bf)
        k4 = torch.randn(B, 4, S, d, device="cuda", dtype=bf)
        o6 = nan_like((B, 6, S, d), bf)
        l6 = nan_like((B, 6, S), torch.float32)
        expect_refusal("attention: GQA H=6 not a multiple of Hkv=4",
                       lambda: kern(q6, k4, k4, o=o6, lse=l6), (o6, l6))
        expect_refusal("attention: o overlaps q",
                       lambda: kern(q, k, v, o=q, lse=lse), (lse,))
        expect_refusal("attention: q on the CPU",
                       lambda: kern(q.cpu(), k, v, o=o, lse=lse), outs)

        def graph_attention():
            o1, l1 = nan_like((B, H, S, d), bf), nan_like((B, H, S), torch.float32)
            kern(q, k, v, o=o1, lse=l1)
            o2, l2 = nan_like((B, H, S, d), bf), nan_like((B, H, S), torch.float32)
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                with attnc.Graph() as g:
                    kern(q, k, v, o=o2, lse=l2)
                g.replay()
            s.synchronize()
            torch.cuda.synchronize()
            same1 = torch.equal(o1, o2) and torch.equal(l1, l2)
            # Change the inputs in place, replay, compare with a direct launch.
            for t in (q, k, v):
                t.copy_(torch.randn_like(t))
            o2.fill_(float("nan"))
            torch.cuda.synchronize()
            with torch.cuda.stream(s):
                g.replay()
            s.synchronize()
            kern(q, k, v, o=o1, lse=l1)
            torch.cuda.synchronize()
            same2 = torch.equal(o1, o2) and torch.equal(l1, l2)
            record("runtime", "attention: graph replay == direct launch",
                   same1 and same2, f"first {same1}, after in-place input change {same2}")
        guarded("runtime", "attention: graph replay == direct launch", graph_attention)

    if "chain" in mods:
        kern = mods["chain"]["bias_dropout_layernorm"]
        x, bias, gamma, beta = chain_inputs((8, 4096), 4096, torch.bfloat16)
        y = nan_like((8, 4096, 4096), torch.bfloat16)
        expect_refusal("chain: x of shape 8x4096x4095",
                       lambda: kern(x[..., :4095], bias, gamma, beta, y=y, seed=1, offset=0), (y,))
        expect_refusal("chain: bias in f32",
                       lambda: kern(x, bias.float(), gamma, beta, y=y, seed=1, offset=0), (y,))
        expect_refusal("chain: x innermost stride 2",
                       lambda: kern(torch.randn(8, 4096, 8192, device="cuda", dtype=torch.bfloat16)[..., ::2],
                                    bias, gamma, beta, y=y, seed=1, offset=0), (y,))
        expect_refusal("chain: seed given as a float",
                       lambda: kern(x, bias, gamma, beta, y=y, seed=1.5, offset=0), (y,))

        def graph_chain():
            y1 = nan_like(y.shape, torch.bfloat16)
            kern(x, bias, gamma, beta, y=y1, seed=7, offset=11)
            y2 = nan_like(y.shape, torch.bfloat16)
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                with attnc.Graph() as g:
                    kern(x, bias, gamma, beta, y=y2, seed=7, offset=11)
                g.replay()
                g.replay()
            s.synchronize()
            torch.cuda.synchronize()
            same = torch.equal(y1.view(torch.int16), y2.view(torch.int16))
            record("runtime", "chain: graph replay == direct launch", same,
                   "bitwise" if same else "differs")
        guarded("runtime", "chain: graph replay == direct launch", graph_chain)


# ----------------------------------------------------------------------------
def summary():
    print("\n== summary ==")
    print(f"{'section':10} {'passed':>6} {'failed':>6}")
    for sec in dict.fromkeys(r[0] for r in RESULTS):
        rs = [r for r in RESULTS if r[0] == sec]
        print(f"{sec:10} {sum(r[2] for r in rs):6} {sum(not r[2] for r in rs):6}")
    fails = [r for r in RESULTS if not r[2]]
    for r in fails:
        print(f"FAILED [{r[0]}] {r[1]}: {r[3]}")
    passed = sum(r[2] for r in RESULTS)
    print(f"{passed} passed, {len(fails)} failed")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", default=str(ROOT / ".gpuwork/modules"))
    ap.add_argument("--only", default="", help="substring of module names")
    ap.add_argument("--sections", default="attention,chain,runtime")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="", help="write the results here")
    args = ap.parse_args()
    torch.manual_seed(int(time.time()))  # fresh inputs every run
    mods = {}
    for d in sorted(Path(args.modules).iterdir()):
        if (d / "manifest.json").exists() and args.only in d.name:
            mods[d.name] = attnc.load(d)
    print(torch.cuda.get_device_name(), "torch", torch.__version__,
          "modules:", ", ".join(mods), flush=True)
    t0 = time.time()
    secs = args.sections.split(",")
    if "attention" in secs:
        test_attention(mods, args.quick)
    if "chain" in secs:
        test_chains(mods, args.quick)
    if "runtime" in secs:
        test_runtime(mods)
    print(f"({time.time() - t0:.1f} s)")
    fails = summary()
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS, indent=1))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
