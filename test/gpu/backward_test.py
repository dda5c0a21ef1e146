#!/usr/bin/env python3
"""The attention backward on the GPU against float64 (issue: backward).

    python3 test/gpu/backward_test.py build --work .gpuwork   # here: attnc-compile --backward
    python3 test/gpu/backward_test.py run --work .gpuwork     # on the GPU machine

Each module is one attention function compiled with its backward: `attn`
(forward: O and the logsumexp), `attn_backward_0` (delta = rowsum(dO * O)),
`attn_backward_1` (dK, dV, and dQ summed in the f32 workspace dq_accum),
`attn_backward_2` (dQ converted). The test runs the real chain: forward,
then the three backward kernels, and checks dQ, dK, dV with the
FlashAttention rule: the error against float64 at most twice the error of
the same computation done naively in the input precision, plus the
rounding of the output to its dtype (half an ulp at the largest reference
value, as FlashAttention's tests add an atol) and 1e-5 for gradients that
are exactly 0, no NaN, and dK, dV of keys no query sees
exactly 0. Outputs start as NaN so that an unwritten element fails.
"""

import itertools
import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

FUNC = """\
func.func @attn(%q: tensor<?x?x?x{d}x{t}>, %k: tensor<?x?x?x{d}x{t}>,
                %v: tensor<?x?x?x{d}x{t}>{args}) -> tensor<?x?x?x{d}x{t}> {{
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x{d}x{t}>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x{d}x{t}>
  %o = attnc.attention %q, %k, %v {{scale = {scale!r} : f64}}
      : tensor<?x?x?x{d}x{t}>, tensor<?x?x?x{d}x{t}>, tensor<?x?x?x{d}x{t}> -> tensor<?x?x?x{d}x{t}>
{mask}  return %o : tensor<?x?x?x{d}x{t}>
}}
"""
# The top-left causal mask region, alone or after a score modifier.
CAUSAL = """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
"""
MASKS = {
    "full": "",
    "causal": CAUSAL,
    "bottom_right": """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
""",
    # A softcap of 2 (tanh saturates at the test's score magnitudes, so a
    # wrong derivative shows) with the causal mask.
    "softcap2_causal": """\
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 2.0 : f32
        %y = arith.divf %x, %c : f32
        %t = math.tanh %y : f32
        %s = arith.mulf %t, %c : f32
        attnc.yield %s : f32
      }
""" + CAUSAL,
    # ALiBi's signed causal form, the slopes a tensor the regions read per
    # score in the backward: s + slope[h] * (j - i).
    "alibi_causal": """\
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %m = tensor.extract %slopes[%h] : tensor<?xf32>
        %dd = arith.subi %j, %i : index
        %d64 = arith.index_cast %dd : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %m, %df : f32
        %s = arith.addf %x, %bias : f32
        attnc.yield %s : f32
      }
""" + CAUSAL,
    # A sliding window of 100 keys (signed comparisons, as
    # --attnc-fuse-attention writes them): the backward inverts the
    # interval, so each K/V tile visits only the query tiles that see it.
    "window": """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 100 : index
        %le = arith.cmpi sle, %j, %i : index
        %jj = arith.addi %j, %c : index
        %near = arith.cmpi sgt, %jj, %i : index
        %keep = arith.andi %le, %near : i1
        attnc.yield %keep : i1
      }
""",
    # The same window with unsigned comparisons: not an interval the
    # analysis reads, so every query tile runs the mask.
    "window_unsigned": """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 100 : index
        %le = arith.cmpi ule, %j, %i : index
        %jj = arith.addi %j, %c : index
        %near = arith.cmpi ugt, %jj, %i : index
        %keep = arith.andi %le, %near : i1
        attnc.yield %keep : i1
      }
""",
}
MODULES = [(128, "bf16", "causal"), (128, "bf16", "full"),
           (128, "bf16", "bottom_right"), (64, "bf16", "causal"),
           (64, "f16", "full"), (128, "f16", "causal"),
           (64, "bf16", "window_unsigned"), (64, "bf16", "full"),
           (128, "bf16", "softcap2_causal"), (128, "bf16", "window"),
           (64, "bf16", "alibi_causal")]
# The tensors a variant's regions read: extra function arguments.
EXTRA_ARGS = {"alibi_causal":
              ', %slopes: tensor<?xf32> {attnc.name = "slopes"}'}


# Every module is built with each backward strategy (--backward-strategy):
# wgmma_persistent is wgmma's kernel on a grid of one CTA per SM walking its
# K/V tiles (more tiles than CTAs at every shape here but the smallest).
STRATEGIES = ("mma_sync", "wgmma", "wgmma_persistent")
# Configurations besides the strategies' defaults, as a module suffix ->
# (the head dims it applies to, the masks it applies to or None for all,
# its attnc-compile arguments): at d = 64 the wgmma kernel's two-warpgroup
# form with 128-row query tiles (dQ's rows split between the warpgroups);
# for the window, a loop per side of its masked query tiles
# (--one-masked-loop=false; the default visits both in one loop) with
# either strategy.
CONFIGS = {
    "wgmma_q128": ((64,), None, ["--backward-strategy=wgmma",
                                 "--block-q", "128", "--block-kv", "128"]),
    # The causal grid's heads in L2 groups of a 1 MiB budget, so that the
    # test shapes' heads group (the default 32 MiB groups from S = 4k on).
    "wgmma_l2g": ((64, 128), ("causal",), ["--backward-strategy=wgmma",
                                           "--l2-group-mib=1"]),
    "loop_per_side": ((64, 128), ("window",),
                      ["--backward-strategy=mma_sync",
                       "--one-masked-loop=false"]),
    "wgmma_loop_per_side": ((64, 128), ("window",),
                            ["--backward-strategy=wgmma",
                             "--one-masked-loop=false"]),
}


def variants():
    """(d, t, mask, suffix, compile arguments) of every module."""
    for (d, t, mask), strategy in itertools.product(MODULES, STRATEGIES):
        yield d, t, mask, strategy, [f"--backward-strategy={strategy}"]
    for (d, t, mask), (suffix, (dims, masks, args)) in itertools.product(
            MODULES, CONFIGS.items()):
        if d in dims and (masks is None or mask in masks):
            yield d, t, mask, suffix, args


def module_name(d, t, mask, strategy="mma_sync"):
    suffix = "" if strategy == "mma_sync" else f"_{strategy}"
    return f"bwd_d{d}_{t}_{mask}{suffix}"


def build(work: Path, compiler: Path):
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for d, t, mask, strategy, args in variants():
        name = module_name(d, t, mask, strategy)
        src = work / "mlir" / f"{name}.mlir"
        src.write_text(FUNC.format(d=d, t=t, scale=1.0 / math.sqrt(d),
                                   mask=MASKS[mask],
                                   args=EXTRA_ARGS.get(mask, "")))
        out = work / "modules" / name
        t0 = time.time()
        subprocess.run([str(compiler), str(src), "-o", str(out), "--backward",
                        "--fallback=false"] + args, check=True)
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)
        for ptx in out.glob("*.ptx"):  # the cubins are what runs
            ptx.unlink()


def reference_grads(q, k, v, do, scale, visible, low=None, cap=None,
                    bias=None):
    """dQ, dK, dV of softmax attention by the textbook formulas, in float64
    (low=None) or naively in `low`. `visible` is the [Sq, Skv] boolean mask
    or None; `cap` a softcap cap·tanh(s / cap) of the scaled scores; `bias`
    a tensor added to the scaled scores (its derivative is 1). GQA:
    K/V heads repeated, their gradients summed back."""
    import torch
    H, Hkv = q.shape[1], k.shape[1]
    rep = H // Hkv
    dt = torch.float64 if low is None else low
    q, k, v, do = (x.to(dt) for x in (q, k, v, do))
    kr = k.repeat_interleave(rep, dim=1)
    vr = v.repeat_interleave(rep, dim=1)
    s = torch.matmul(q, kr.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias.to(s.dtype if low is None else torch.float32).to(dt)
    slope = None
    if cap is not None:
        t = torch.tanh(s / cap)
        s, slope = cap * t, 1 - t * t
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    p = torch.nan_to_num(torch.softmax(s.float() if low else s, dim=-1),
                         nan=0.0).to(dt)
    o = torch.matmul(p, vr)
    dv = torch.matmul(p.transpose(-1, -2), do)
    dp = torch.matmul(do, vr.transpose(-1, -2))
    delta = (do.float() * o.float()).sum(-1, keepdim=True).to(dt) if low \
        else (do * o).sum(-1, keepdim=True)
    ds = p * (dp - delta)
    if slope is not None:
        ds = ds * slope
    dq = torch.matmul(ds, kr) * scale
    dk = torch.matmul(ds.transpose(-1, -2), q) * scale
    B, _, Skv, d = kr.shape
    dk = dk.reshape(B, Hkv, rep, Skv, d).sum(2)
    dv = dv.reshape(B, Hkv, rep, Skv, dv.shape[-1]).sum(2)
    return dq, dk, dv


def run_case(m, B, H, Hkv, Sq, Skv, mask, dtype, d):
    import torch
    dev = "cuda"
    torch.manual_seed(B * 1000003 + H * 1009 + Sq * 31 + Skv)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    do = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    scale = 1.0 / math.sqrt(d)
    nan = lambda *s, t=dtype: torch.full(s, float("nan"), dtype=t, device=dev)  # noqa: E731
    o, lse = nan(B, H, Sq, d), nan(B, H, Sq, t=torch.float32)
    extra, bias = {}, None
    if mask == "alibi_causal":
        hs = torch.arange(H, device=dev, dtype=torch.float32)
        extra["slopes"] = 4.0 * torch.pow(2.0, -8.0 * (hs + 1) / H)
        ii = torch.arange(Sq, device=dev)[:, None]
        jj = torch.arange(Skv, device=dev)[None, :]
        bias = extra["slopes"].double().view(1, H, 1, 1) * (jj - ii).double()
    m["attn"](q, k, v, o=o, lse=lse, **extra)
    delta = nan(B, H, Sq, 1, t=torch.float32)
    m["attn_backward_0"](do, o, result0=delta)
    ws = nan(B, H, Sq, d, t=torch.float32)  # zeroed by the runtime
    dk, dv = nan(B, Hkv, Skv, d), nan(B, Hkv, Skv, d)
    main = m["attn_backward_1"]
    # The kernel that runs: the first size variant whose conditions hold
    # (d = 64 on sm_90a: 128 x 128 tiles from Sq = 2048, 4096 causal),
    # else the kernel.
    ran = main.plan(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws,
                    **extra).kernel.name
    sizes = {"B": B, "H": H, "Hkv": Hkv, "Sq": Sq, "Skv": Skv}
    want = next((var.name for var, conds in main.variants
                 if all(sizes[c.lhs] >= c.value if c.kind == "min" else
                        sizes[c.lhs] <= c.value for c in conds)), main.name)
    # A persistent kernel runs on 3 CTAs instead of one per SM, so that each
    # walks several K/V tiles (and the serpentine's last, partial round)
    # at every shape here.
    sms = 3 if main.attr("strategy") == "wgmma_persistent" else None
    main(q, k, v, do, lse, delta, dk=dk, dv=dv, dq_accum=ws, num_sms=sms,
         **extra)
    dq = nan(B, H, Sq, d)
    m["attn_backward_2"](ws, dq=dq)
    torch.cuda.synchronize()

    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    visible = {"full": None, "causal": j <= i,
               "bottom_right": j <= i + (Skv - Sq),
               "window": (j <= i) & (j + 100 > i),
               "window_unsigned": (j <= i) & (j + 100 > i),
               "softcap2_causal": j <= i, "alibi_causal": j <= i}[mask]
    cap = 2.0 if mask.startswith("softcap2") else None
    ref = reference_grads(q, k, v, do, scale, visible, cap=cap, bias=bias)
    low = reference_grads(q, k, v, do, scale, visible, low=dtype, cap=cap,
                          bias=bias)
    result = {"kernel": ran}
    ok = ran == want
    for name, got, r, lo in zip(("dq", "dk", "dv"), (dq, dk, dv), ref, low):
        if torch.isnan(got).any():
            result[name] = "NaN"
            ok = False
            continue
        err = (got.double() - r).abs().max().item() if got.numel() else 0.0
        err_low = (lo.double() - r).abs().max().item() if got.numel() else 0.0
        if math.isnan(err_low):
            err_low = math.inf
        # Plus the rounding of the output itself to its dtype (half an ulp at
        # the largest reference value), which no kernel avoids and the naive
        # computation's largest error may happen to miss (a dV row summed
        # over 1000 queries is ~5, where a bf16 ulp is 2^-5).
        big = r.abs().max().item() if got.numel() else 0.0
        half_ulp = (math.ldexp(1.0, math.frexp(big)[1] - 1 - 7) / 2
                    if big and dtype == torch.bfloat16 else
                    math.ldexp(1.0, math.frexp(big)[1] - 1 - 10) / 2 if big
                    else 0.0)
        good = err <= 2 * err_low + half_ulp + 1e-5
        result[name] = f"{err:.2e}/{err_low:.2e}"
        ok &= good
    if visible is not None and Skv:
        # Keys no query sees: exactly 0 (nothing may leak from other rows).
        unseen = ~visible.any(0)
        if unseen.any():
            z = bool((dk[:, :, unseen] == 0).all()) and bool(
                (dv[:, :, unseen] == 0).all())
            result["unseen_keys_zero"] = z
            ok &= z
    return ok, result


def run(work: Path, small: bool, only: str = ""):
    import torch
    gpu_common.use_source_package()
    import attnc
    cases = []
    for d, t, mask, strategy, _ in variants():
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        # Tails of both tiles, GQA and MQA, Sq != Skv both ways (with
        # bottom-right, rows that see no key).
        shapes = [(2, 2, 2, 1, 1), (1, 2, 2, 17, 17), (1, 8, 2, 257, 257),
                  (1, 4, 1, 130, 130), (1, 2, 2, 100, 300),
                  (1, 2, 2, 300, 100)]
        if not small:
            shapes += [(2, 2, 2, 128, 128), (1, 2, 2, 1000, 1000)]
        if t == "bf16" and not small:
            shapes += [(1, 2, 2, 4096, 4096), (1, 1, 1, 4097, 4097),
                       (2, 8, 2, 1024, 1024)]
        if strategy == "wgmma_l2g":
            # Groups of two K/V heads and a last of one; one head each,
            # over two batches with GQA.
            shapes += [(1, 3, 3, 1000, 1000), (2, 6, 3, 700, 700)]
        for s in shapes:
            name = module_name(d, t, mask, strategy)
            if only in name:
                cases.append((name, d, dtype, mask, s))
    failures = 0
    mods = {}
    for name, d, dtype, mask, (B, H, Hkv, Sq, Skv) in cases:
        m = mods.setdefault(name, attnc.load(work / "modules" / name))
        ok, res = gpu_common.guarded(run_case, m, B, H, Hkv, Sq, Skv, mask,
                                     dtype, d)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} B={B} H={H} Hkv={Hkv} "
              f"Sq={Sq} Skv={Skv} {res}", flush=True)
    print(f"{len(cases) - failures}/{len(cases)} passed")
    return 1 if failures else 0



if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
