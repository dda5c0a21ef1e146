"""attnc.torch.attention_with_kvcache on the wheel's prebuilt decode
kernels (for 32:8 heads its GQA-packed variant) against the same step
compiled by the GPU tests (cache_d128_bf16_brlen_h32kv8_split, built by
test/gpu/build_modules.py) and SDPA's FlashAttention-2 and cuDNN backends,
peers in the same process.

    python3 bench/kvcache_op.py --work .gpuwork --out bench/results/kvcache_op.md

hd128 bf16, H = 32, Hkv = 8, Sq = 1, every cache position valid (SDPA has
no per-sequence lengths). The op is timed as a CUDA graph replay (what a
serving loop runs; eager it adds its Python dispatch) and eagerly; TB/s =
bytes of K and V / time; median of 3 interleaved do_bench medians (L2
flushed). Run with attnc importable (PYTHONPATH=python or the wheel).
"""

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import attnc  # noqa: E402
import attnc.torch as at  # noqa: E402
from decode import attnc_cache  # noqa: E402
from run import emit_table, env_info, median_ms  # noqa: E402

H, HKV, D, BF = 32, 8, 128, torch.bfloat16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=".gpuwork", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    info = env_info()
    packed = attnc.load(a.work / "modules" /
                        "cache_d128_bf16_brlen_h32kv8_split")
    rows = []
    for B, S in ((1, 8192), (1, 32768), (8, 8192), (8, 32768), (32, 8192),
                 (32, 32768)):
        torch.manual_seed(0)
        q = torch.randn(B, H, 1, D, device="cuda", dtype=BF)
        k = torch.randn(B, HKV, S, D, device="cuda", dtype=BF)
        v = torch.randn(B, HKV, S, D, device="cuda", dtype=BF)
        used = torch.full((B,), S, dtype=torch.int32, device="cuda")
        ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        o = at.attention_with_kvcache(q, k, v, used)
        err = (o.float() - ref.float()).abs().max().item()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            og = at.attention_with_kvcache(q, k, v, used)
        g.replay()
        err = max(err, (og.float() - ref.float()).abs().max().item())
        splits = packed["attn_0"].size_rule("splits", q, k, v,
                                            kv_lengths=used)
        fns = {"op_graph": g.replay,
               "op_eager": lambda: at.attention_with_kvcache(q, k, v, used)}
        fns["packed"], op = attnc_cache(packed, q, (k, v), used, splits)
        fns["packed"]()
        err = max(err, (op.float() - ref.float()).abs().max().item())
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION),
                         ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            kk, vv = k, v
            if name == "cudnn":  # no enable_gqa there
                kk = k.repeat_interleave(H // HKV, 1)
                vv = v.repeat_interleave(H // HKV, 1)

            def run(be=be, kk=kk, vv=vv, gqa=name == "flash"):
                with sdpa_kernel(be):
                    return F.scaled_dot_product_attention(q, kk, vv,
                                                          enable_gqa=gqa)
            try:
                run()
                fns[name] = run
            except RuntimeError:
                pass
        times = {n: [] for n in fns}
        for _ in range(3):
            for n, f in fns.items():
                times[n].append(median_ms(f))
        t = {n: statistics.median(x) * 1e3 for n, x in times.items()}
        kv = 2 * B * HKV * S * D * 2
        row = {"B": B, "S": S, "splits": splits, "err": err, "kv_bytes": kv,
               **{n + "_us": x for n, x in t.items()}}
        rows.append(row)
        print(row, flush=True)
        del g, q, k, v, o, og, op, fns
        torch.cuda.empty_cache()
    lines = [f"# attnc.torch.attention_with_kvcache — {info['gpu']}, "
             f"{info['date']}", "",
             f"commit {a.commit or info['commit']}, torch {info['torch']}. "
             "hd128 bf16, H = 32, Hkv = 8, Sq = 1, full caches; µs, TB/s = "
             "K+V bytes / time; median of 3 interleaved do_bench medians "
             "(L2 flushed). op: attnc.torch.attention_with_kvcache on the "
             "wheel's prebuilt kernels (the variant packed for 32:8), "
             "replayed from a CUDA graph and eager; packed: the GPU tests' "
             "module for the same step.", "",
             "| B | S | splits | op graph µs | TB/s | op eager µs | packed µs "
             "| TB/s | flash µs | cuDNN µs (K/V expanded) | op/packed | "
             "flash/op | max err vs SDPA |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tb = lambda us: r["kv_bytes"] / (us * 1e-6) / 1e12  # noqa: E731
        fl = r.get("flash_us")
        cu = r.get("cudnn_us")
        lines.append(
            f"| {r['B']} | {r['S']} | {r['splits']} | {r['op_graph_us']:.1f} "
            f"| {tb(r['op_graph_us']):.2f} | {r['op_eager_us']:.1f} | "
            f"{r['packed_us']:.1f} | {tb(r['packed_us']):.2f} | "
            + (f"{fl:.1f} | " if fl else "– | ")
            + (f"{cu:.1f} | " if cu else "– | ")
            + f"{r['op_graph_us'] / r['packed_us']:.2f} | "
            + (f"{fl / r['op_graph_us']:.2f} | " if fl else "– | ")
            + f"{r['err']:.1e} |")
    emit_table(lines, a.out)


if __name__ == "__main__":
    main()
