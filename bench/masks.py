#!/usr/bin/env python3
"""Masks and score modifiers: attnc's compiled variants against FlexAttention.

Run on the GPU machine after `python3 test/gpu/build_modules.py` (modules in
WORK/modules): for B=4, H=16, hd128 bf16, S in {4096, 8192}, every variant of
test/gpu/build_modules.MASK_VARIANTS named in VARIANTS, plus attnc's plain
causal kernel. Each variant's mask and softcap are one Python definition
there, next to the graph attnc compiled: the same function is Flex's
mask_mod (and the softcap its score_mod), with the block mask built once
outside the timing, under torch.compile. TFLOP/s = 4 d B H (visible (i, j)
pairs, counted exactly) / t; the median of 3 interleaved repetitions.

ALiBi's module comes from test/gpu/alibi_test.py (build it into the same
WORK).

With --also SUFFIX, a variant whose module was also compiled as
<module>SUFFIX (build_modules.COMPILE_VARIANTS, e.g. _shared_p) has that
kernel timed in the same interleaved rounds, its output checked against
Flex's too (columns attnc<SUFFIX>, its ratios to attnc's plain causal).

usage: bench/masks.py [--work .gpuwork] [--json OUT] [--only a,b] [--also S]
"""
import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import torch
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test/gpu"))
import attnc  # noqa: E402
from build_modules import MASK_VARIANTS  # noqa: E402
from documents_test import doc_ids  # noqa: E402

VARIANTS = {"causal": "attn_d128_bf16_causal",
            "window1024": "attn_mask_window1024_d128",
            "prefix1000": "attn_mask_prefix1000_d128",
            "softcap50_causal": "attn_softcap50_causal_d128",
            # test/gpu/alibi_test.py's module: ALiBi's signed causal form,
            # s + slope[h] * (j - i), slopes 2^(-8 (h + 1) / H) as a tensor.
            "alibi_causal": "alibi_causal_default",
            # test/gpu/documents_test.py's module: four documents of seeded
            # lengths per sequence (ids per token), causal within each.
            "documents4_causal": "documents_causal_default"}
B, H, D = 4, 16, 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--json", default="")
    ap.add_argument("--only", default="",
                    help="comma-separated variants (plain causal is always "
                         "measured: the ratios are against it)")
    ap.add_argument("--also", default="",
                    help="module-name suffix of a second build to time "
                         "beside each variant's (e.g. _shared_p)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else set(VARIANTS)
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    # Every variant's score_mod and block mask is a new specialization:
    # past dynamo's default limit of 8, Flex falls back to its eager
    # reference (measured 6 TFLOP/s), which is not the peer.
    torch._dynamo.config.cache_size_limit = 64
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 64
    flex = torch.compile(flex_attention)
    rows = []
    for S in (4096, 8192):
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        i = torch.arange(S, device="cuda")[:, None]
        j = torch.arange(S, device="cuda")[None, :]
        for label, module in VARIANTS.items():
            if label not in only and label != "causal":
                continue
            if module in MASK_VARIANTS:
                _, _, _, mask_fn, cap = MASK_VARIANTS[module]
            else:
                mask_fn, cap = (lambda a, b: b <= a), None
            docs = None
            if label.startswith("documents"):
                docs = doc_ids(B, S, S * 13 + 4, 4).cuda()
                vis = (docs[:, :, None] == docs[:, None, :]) & (j <= i)
                # (Per sequence, averaged over the batch.)
                pairs = vis.sum().item() / B
            else:
                pairs = int(mask_fn(i, j).sum().item())
            flops = 4 * D * B * H * pairs
            mod = attnc.load(Path(args.work) / "modules" / module)
            (kern,) = mod.entries
            extra = {}
            if label == "alibi_causal":
                hs = torch.arange(H, device="cuda", dtype=torch.float32)
                slopes = torch.pow(2.0, -8.0 * (hs + 1) / H)
                extra["slopes"] = slopes.reshape(H, 1, 1)
            if docs is not None:
                extra["doc_q"] = docs.view(B, 1, S, 1)
                extra["doc_kv"] = docs.view(B, 1, 1, S)
            plan = kern.plan(q, k, v, o=o, lse=lse, **extra)
            alt_dir = Path(args.work) / "modules" / (module + args.also)
            alt = None
            if args.also and alt_dir.exists():
                (alt_kern,) = attnc.load(alt_dir).entries
                o_alt = torch.empty_like(q)
                alt = alt_kern.plan(q, k, v, o=o_alt,
                                    lse=torch.empty_like(lse), **extra)

            def mask_mod(b, h, qi, kj, f=mask_fn):
                return f(qi, kj)
            if docs is not None:
                def mask_mod(b, h, qi, kj, dd=docs):
                    return (dd[b, qi] == dd[b, kj]) & (kj <= qi)
            score_mod = None
            if cap is not None:
                def score_mod(s, b, h, qi, kj, c=cap):
                    return c * torch.tanh(s / c)
            if label == "alibi_causal":
                def score_mod(s, b, h, qi, kj, sl=slopes):
                    return s + sl[h] * (kj - qi)
            t0 = time.time()
            block = create_block_mask(mask_mod, B if docs is not None else None,
                                      None, S, S)
            ref = flex(q, k, v, score_mod=score_mod, block_mask=block)
            torch.cuda.synchronize()
            flex_first_s = time.time() - t0
            plan.launch()
            torch.cuda.synchronize()
            diff = (o.float() - ref.float()).abs().max().item()
            times = {"attnc": [], "flex": []}
            fns = {"attnc": plan.launch,
                   "flex": lambda: flex(q, k, v, score_mod=score_mod,
                                        block_mask=block)}
            if alt is not None:
                alt.launch()
                torch.cuda.synchronize()
                alt_diff = (o_alt.float() - ref.float()).abs().max().item()
                times["attnc" + args.also] = []
                fns["attnc" + args.also] = alt.launch
            for _ in range(3):
                for name, fn in fns.items():
                    times[name].append(do_bench(fn, warmup=25, rep=100,
                                                return_mode="median"))
            r = {"variant": label, "S": S, "B": B, "H": H, "d": D,
                 "visible_pairs": pairs, "max_abs_diff_vs_flex": diff,
                 "flex_first_call_s": flex_first_s}
            for name, ts in times.items():
                r[name] = flops / (sorted(ts)[1] * 1e-3) / 1e12
            r["ratio"] = r["attnc"] / r["flex"]
            alt_note = ""
            if alt is not None:
                r["max_abs_diff_vs_flex" + args.also] = alt_diff
                alt_note = (f"  attnc{args.also} {r['attnc' + args.also]:6.1f}"
                            f" |diff| {alt_diff:.1e}")
            rows.append(r)
            print(f"S={S} {label:18} attnc {r['attnc']:6.1f}  flex "
                  f"{r['flex']:6.1f} TFLOP/s  x{r['ratio']:.2f}  "
                  f"|diff| {diff:.1e}  flex first call {flex_first_s:.1f} s"
                  f"{alt_note}", flush=True)
        for S_rows in [x for x in rows if x["S"] == S]:
            base = next(x for x in rows if x["S"] == S and x["variant"] == "causal")
            S_rows["vs_attnc_causal"] = S_rows["attnc"] / base["attnc"]
            if args.also and "attnc" + args.also in S_rows:
                S_rows["vs_attnc_causal" + args.also] = (
                    S_rows["attnc" + args.also] / base["attnc"])
    info = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "commit": os.environ.get("ATTNC_GIT_COMMIT", "unknown")}
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "rows": rows},
                                              indent=1))


if __name__ == "__main__":
    main()
