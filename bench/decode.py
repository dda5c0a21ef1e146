"""Decode attention (one query token per sequence against a K/V cache)
against SDPA's FlashAttention-2 and cuDNN backends, peers in the same
process (H200).

    python3 bench/decode.py --work .gpuwork --out bench/results/decode.md

hd128 bf16, 32 query heads, 8 K/V heads, contiguous cache [B, 8, Skv, 128].
Effective bandwidth = bytes of K and V / time (L2 flushed between calls by
do_bench), the median of 3 interleaved repetitions of do_bench medians.
attnc runs its two kernels (split-KV partials, combine) with the split count
its runtime's rule chooses for the shape, or, where the rule gives one
split, the partial kernel's unsplit twin (one kernel); the same step over a cache with
per-sequence lengths, contiguous and paged (pages of 64 and 16 rows in a
random order), is timed against it. Peers get enable_gqa=True; a
backend that refuses it gets K/V expanded to 32 heads (noted in the table;
the bytes counted stay those of the 8-head cache).
"""

import argparse
import datetime
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "test/gpu"))
import attnc  # noqa: E402
from run import copy_bandwidth, emit_table, env_info, median_ms  # noqa: E402

BF = torch.bfloat16
H, HKV, D = 32, 8, 128


def attnc_step(m, q, k, v, splits, extra=None):
    """The decode step as a host runs it: with one split the partial
    kernel's unsplit twin (one launch), else the partials and the combine."""
    B, _, Sq, d = q.shape
    extra = extra or {}
    o = torch.empty_like(q)
    twin = m["attn_0"].unsplit
    if splits == 1 and twin is not None:
        lse = torch.empty(B, H, Sq, device="cuda", dtype=torch.float32)
        p = twin.plan(q, k, v, o=o, lse=lse, **extra)
        return p.launch, o
    op = torch.empty(splits, B, H, Sq, d, device="cuda", dtype=torch.float32)
    lp = torch.empty(splits, B, H, Sq, device="cuda", dtype=torch.float32)
    p0 = m["attn_0"].plan(q, k, v, o_partial=op, lse_partial=lp, **extra)
    p1 = m["attn_1"].plan(op, lp, o=o)

    def run():
        p0.launch()
        p1.launch()
    return run, o


def attnc_decode(m, q, k, v, splits):
    return attnc_step(m, q, k, v, splits)


def attnc_cache(m, q, kv, used, splits):
    """The decode step of a cache module (kv_lengths; paged when `kv` holds
    pools and a block table)."""
    extra = {"kv_lengths": used}
    if len(kv) == 3:
        extra["block_table"] = kv[2]
    return attnc_step(m, q, kv[0], kv[1], splits, extra)


def paged_view(k, v, page, gen):
    """Pools [B * S / page, page, Hkv, d] holding the pages of K and V in a
    random order, and the block table that finds them."""
    B, hkv, S, d = k.shape
    mb = S // page
    perm = torch.randperm(B * mb, generator=gen).to("cuda")
    pools = []
    for x in (k, v):
        pool = torch.empty(B * mb, page, hkv, d, device="cuda", dtype=x.dtype)
        pool[perm] = x.view(B, hkv, mb, page, d).permute(0, 2, 3, 1, 4) \
            .reshape(B * mb, page, hkv, d)
        pools.append(pool)
    return pools[0], pools[1], perm.view(B, mb).to(torch.int32)


def peer(backend, q, k, v):
    try:
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        note = ""
    except RuntimeError:
        k = k.repeat_interleave(H // HKV, dim=1)
        v = v.repeat_interleave(H // HKV, dim=1)
        note = " (K/V expanded)"

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v,
                                                  enable_gqa=not note)
    run()
    return run, note


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=".gpuwork", type=Path)
    ap.add_argument("--module", default="dec_d128_bf16_full_h32kv8")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--batches", default="1,8,32,128")
    ap.add_argument("--lengths", default="1024,8192,32768,131072")
    ap.add_argument("--max-gb", type=float, default=16.0,
                    help="skip shapes whose K+V exceed this")
    ap.add_argument("--cache-modules",
                    default="cache_d128_bf16_full_h32kv8_split,"
                            "cache_d128_bf16_full_h32kv8_split_paged64,"
                            "cache_d128_bf16_full_h32kv8_split_paged16",
                    help="kv_lengths modules (contiguous, paged) timed "
                         "against the plain one; empty: none")
    a = ap.parse_args()
    info = env_info()
    bw = copy_bandwidth()
    m = attnc.load(a.work / "modules" / a.module)
    caches = {n: attnc.load(a.work / "modules" / n)
              for n in a.cache_modules.split(",") if n}
    rows = []
    for B in map(int, a.batches.split(",")):
        for S in map(int, a.lengths.split(",")):
            kv_bytes = 2 * B * HKV * S * D * 2
            if kv_bytes > a.max_gb * 1e9:
                continue
            torch.manual_seed(0)
            q = torch.randn(B, H, 1, D, device="cuda", dtype=BF)
            k = torch.randn(B, HKV, S, D, device="cuda", dtype=BF)
            v = torch.randn(B, HKV, S, D, device="cuda", dtype=BF)
            splits = m["attn_0"].size_rule("splits", q, k, v)
            fns, notes = {}, {}
            fns["attnc"], o = attnc_decode(m, q, k, v, splits)
            for name, be in (("flash", SDPBackend.FLASH_ATTENTION),
                             ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    fns[name], notes[name] = peer(be, q, k, v)
                except RuntimeError as e:
                    notes[name] = f" unavailable: {str(e)[:60]}"
            fns["attnc"]()
            ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            err = (o.float() - ref.float()).abs().max().item()
            # The same cache with kv_lengths = Skv, contiguous and paged
            # (pages randomly placed in the pool); errors against SDPA too.
            used = torch.full((B,), S, dtype=torch.int32, device="cuda")
            kv = None
            gen = torch.Generator().manual_seed(B + S)
            for name, cm in caches.items():
                page = int(name.split("paged")[1]) if "paged" in name else 0
                kv = paged_view(k, v, page, gen) if page else (k, v)
                tag = f"paged{page}" if page else "lengths"
                fns[tag], oc = attnc_cache(cm, q, kv, used, splits)
                fns[tag]()
                err = max(err, (oc.float() - ref.float()).abs().max().item())
            times = {n: [] for n in fns}
            for _ in range(3):
                for n, f in fns.items():
                    times[n].append(median_ms(f))
            t = {n: statistics.median(v) for n, v in times.items()}
            row = {"B": B, "Skv": S, "splits": splits, "kv_mb": kv_bytes / 1e6,
                   "err": err, "notes": notes}
            for n, ms in t.items():
                row[n + "_us"] = ms * 1e3
                row[n + "_tbs"] = kv_bytes / (ms * 1e-3) / 1e12
            rows.append(row)
            print(row, flush=True)
            del q, k, v, o, fns, kv
            torch.cuda.empty_cache()
    lines = [f"# Decode attention (split-KV) — {info['gpu']}, {info['date']}",
             "", f"commit {info['commit']}, torch {info['torch']}, cuDNN "
             f"{info['cudnn']}, copy bandwidth {bw / 1e12:.2f} TB/s. hd128 "
             "bf16, H = 32, Hkv = 8, Sq = 1, contiguous cache; TB/s = bytes "
             "of K and V / time; median of 3 interleaved do_bench medians "
             "(L2 flushed).", "",
             "| B | Skv | K+V MB | splits | attnc µs | TB/s | flash µs | TB/s "
             "| cuDNN µs | TB/s | ×flash | ×cuDNN | max err vs SDPA |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = r.get("flash_us")
        c = r.get("cudnn_us")
        lines.append(
            f"| {r['B']} | {r['Skv']} | {r['kv_mb']:.0f} | {r['splits']} | "
            f"{r['attnc_us']:.1f} | {r['attnc_tbs']:.2f} | "
            + (f"{f:.1f} | {r['flash_tbs']:.2f} | " if f else "– | – | ")
            + (f"{c:.1f} | {r['cudnn_tbs']:.2f} | " if c else "– | – | ")
            + (f"{f / r['attnc_us']:.2f} | " if f else "– | ")
            + (f"{c / r['attnc_us']:.2f} | " if c else "– | ")
            + f"{r['err']:.1e} |")
    notes = {n for r in rows for n in r["notes"].values() if n}
    if notes:
        lines += ["", "Notes: " + "; ".join(sorted(notes))]
    tags = [t for t in ("lengths", "paged64", "paged16")
            if rows and t + "_us" in rows[0]]
    if tags:
        lines += ["", "The same decode step over a cache with per-sequence "
                  "lengths (kv_lengths = Skv): contiguous, and paged "
                  "(attnc.paged_kv, pages of 64 and 16 rows in a random "
                  "order in the pool; one block table); time relative to "
                  "the plain kernel above (same split count, interleaved).",
                  "", "| B | Skv | plain µs | "
                  + " | ".join(f"{t} µs | ×plain" for t in tags) + " |",
                  "|---|---|---|" + "---|---|" * len(tags)]
        for r in rows:
            lines.append(f"| {r['B']} | {r['Skv']} | {r['attnc_us']:.1f} | "
                         + " | ".join(f"{r[t + '_us']:.1f} | "
                                      f"{r[t + '_us'] / r['attnc_us']:.3f}"
                                      for t in tags) + " |")
    emit_table(lines, a.out)


if __name__ == "__main__":
    main()
