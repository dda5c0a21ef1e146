#!/usr/bin/env python3
"""attnc benchmark, one run on the H200 (scripts/bench.sh runs it).

    ATTNC_RUNTIME_LIB=.gpuwork/lib/libattnc_runtime.so PYTHONPATH=python \
        python3 bench/run.py [--modules .gpuwork/modules] [--out bench/results] [--quick]

In one process:
  * device-to-device copy bandwidth (torch copy_ of 2 GiB; bytes read +
    written) -- the HBM ceiling the chain is compared with;
  * attention forward, bf16, d 64/128, causal and not, S = 512..16384 at
    16384 tokens per batch (B*S = 16384), H = 16 heads: attnc (through the
    Python package, a validated launch plan per input set) vs
    torch SDPA with the FLASH_ATTENTION backend, with the CUDNN_ATTENTION
    backend, and naive eager attention (matmul, scale, mask, softmax, matmul
    in bf16). TFLOP/s = 4*B*H*S^2*d / t, halved for causal;
  * the elementwise chain dropout(x + bias) -> LayerNorm on 8x4096x4096 bf16:
    attnc's fused kernel vs eager PyTorch and torch.compile; GB/s counted as
    2 x tensor bytes (x read once, y written once) and the fraction of the
    HBM floor (2 x tensor bytes / measured copy bandwidth);
  * peak memory of one forward at B=1, H=32, d=128, causal, S = 2048..32768:
    attnc, SDPA flash and naive eager (which needs the (B, H, S, S) score
    matrix: 68.7 GB in bf16 at S = 32768, twice that with softmax's output).

Timing: triton.testing.do_bench medians (warmup 25 ms, rep 100 ms; do_bench
also clears L2 before every timed call); inputs rotate over enough sets to
exceed 4x the L2 where one set is smaller. Writes OUT/RESULTS.md,
OUT/results.json, OUT/attention_tflops.png, OUT/memory.png.
Environment: ATTNC_GIT_COMMIT (recorded in RESULTS.md).
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
import triton
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402

BF = torch.bfloat16
L2_BYTES = 60 << 20
WARMUP, REP = 25, 100


def emit_table(lines, out=None):
    """Prints a results table (its markdown lines) and writes it to OUT."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        Path(out).write_text(text)


def median_ms(fn, rep=REP):
    return do_bench(fn, warmup=WARMUP, rep=rep, return_mode="median")


def log(*a):
    print(*a, flush=True)


# ----------------------------------------------------------------------------
def env_info():
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip().splitlines()[0]
    except Exception:
        drv = "?"
    p = torch.cuda.get_device_properties(0)
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": torch.cuda.get_device_name(), "sms": p.multi_processor_count,
            "memory_gib": round(p.total_memory / 2**30, 1), "driver": drv,
            "torch": torch.__version__, "triton": triton.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "commit": os.environ.get("ATTNC_GIT_COMMIT", "unknown")}


def copy_bandwidth():
    n = 1 << 30  # 1 Gi bf16 elements = 2 GiB
    src = torch.randn(n // 4, device="cuda").to(BF).repeat(4)
    dst = torch.empty_like(src)
    t = median_ms(lambda: dst.copy_(src))
    bw = 2 * src.numel() * 2 / (t * 1e-3)
    del src, dst
    torch.cuda.empty_cache()
    return bw


# ----------------------------------------------------------------------------
def naive_attention(q, k, v, scale, causal, mask=None):
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v)


def rotating(make, set_bytes):
    n = max(1, math.ceil(4 * L2_BYTES / set_bytes))
    return [make() for _ in range(n)]


def cycler(fns):
    state = [0]

    def f():
        state[0] = (state[0] + 1) % len(fns)
        return fns[state[0]]()
    return f


def bench_attention(mods, sizes, heads=16, tokens=16384):
    rows = []
    for d in (64, 128):
        for causal in (True, False):
            name = f"attn_d{d}_bf16_{'causal' if causal else 'full'}"
            if name not in mods:
                log(f"(no module {name})")
                continue
            (kern,) = mods[name].entries
            scale = float(kern.attr("scale"))
            for S in sizes:
                B, H = max(1, tokens // S), heads
                flops = 4 * B * H * S * S * d / (2 if causal else 1)
                set_bytes = 4 * B * H * S * d * 2

                def make():
                    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=BF)
                               for _ in range(3))
                    o = torch.empty_like(q)
                    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                    return q, k, v, o, lse
                sets = rotating(make, set_bytes)
                r = {"d": d, "causal": causal, "S": S, "B": B, "H": H}
                # attnc: one validated plan per input set.
                plans = [kern.plan(q, k, v, o=o, lse=lse) for q, k, v, o, lse in sets]
                r["attnc"] = flops / (median_ms(cycler([p.launch for p in plans])) * 1e-3) / 1e12
                q, k, v, o, lse = sets[0]
                plans[0].launch()
                for label, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                       ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            fns = [lambda q=q, k=k, v=v: F.scaled_dot_product_attention(
                                q, k, v, is_causal=causal, scale=scale) for q, k, v, _, _ in sets]
                            ref = fns[0]()
                            if label == "flash":
                                torch.cuda.synchronize()
                                r["max_abs_diff_vs_flash"] = (o.float() - ref.float()).abs().max().item()
                            t = median_ms(cycler(fns))
                        r[label] = flops / (t * 1e-3) / 1e12
                    except Exception as e:
                        r[label] = float("nan")
                        log(f"  {label} unavailable: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
                try:
                    mask = torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1) if causal else None
                    fns = [lambda q=q, k=k, v=v: naive_attention(q, k, v, scale, causal, mask)
                           for q, k, v, _, _ in sets[:1]]
                    r["naive"] = flops / (median_ms(cycler(fns)) * 1e-3) / 1e12
                    del mask
                except torch.OutOfMemoryError:
                    r["naive"] = float("nan")
                torch.cuda.empty_cache()
                rows.append(r)
                log(f"attention d={d} causal={causal} S={S} B={B} H={H}: "
                    f"attnc {r['attnc']:.0f}  flash {r['flash']:.0f}  cudnn {r['cudnn']:.0f}  "
                    f"naive {r['naive']:.0f} TFLOP/s  (max|attnc-flash| "
                    f"{r.get('max_abs_diff_vs_flash', float('nan')):.2e})")
                del sets, plans
                torch.cuda.empty_cache()
    return rows


# ----------------------------------------------------------------------------
def bench_chain(mods, copy_bw, p=0.1):
    if "chain" not in mods:
        return None
    kern = mods["chain"]["bias_dropout_layernorm"]
    shape, n = (8, 4096, 4096), 4096
    x = torch.randn(shape, device="cuda").to(BF)
    bias, gamma, beta = (torch.randn(n, device="cuda").to(BF) for _ in range(3))
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * x.element_size()  # read x, write y
    floor_ms = nbytes / copy_bw * 1e3

    def eager(x, bias, gamma, beta):
        return F.layer_norm(F.dropout(x + bias, p, training=True), (n,), gamma, beta, 1e-5)

    res = {"shape": list(shape), "bytes_min": nbytes, "floor_ms": floor_ms}
    plan = kern.plan(x, bias, gamma, beta, y=y, seed=1234, offset=0)
    res["attnc_ms"] = median_ms(plan.launch)
    res["eager_ms"] = median_ms(lambda: eager(x, bias, gamma, beta))
    try:
        t0 = time.time()
        comp = torch.compile(eager)
        comp(x, bias, gamma, beta)
        torch.cuda.synchronize()
        res["compile_s"] = time.time() - t0
        res["compiled_ms"] = median_ms(lambda: comp(x, bias, gamma, beta))
    except Exception as e:
        log(f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        res["compiled_ms"] = float("nan")
    for k in ("attnc", "eager", "compiled"):
        t = res[f"{k}_ms"]
        res[f"{k}_GBps"] = nbytes / (t * 1e-3) / 1e9
        res[f"{k}_of_floor"] = floor_ms / t
    log(f"chain 8x4096x4096 bf16: floor {floor_ms:.3f} ms; attnc {res['attnc_ms']:.3f} ms, "
        f"eager {res['eager_ms']:.3f} ms, torch.compile {res['compiled_ms']:.3f} ms")
    del x, y
    torch.cuda.empty_cache()
    return res


# ----------------------------------------------------------------------------
def peak_extra(fn):
    """Peak bytes allocated by FN beyond what was live before it."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    try:
        out = fn()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del out
        return peak, None
    except torch.OutOfMemoryError as e:
        return None, "OOM"
    finally:
        torch.cuda.empty_cache()


def bench_memory(mods, sizes, H=32, d=128):
    name = "attn_d128_bf16_causal"
    (kern,) = mods[name].entries
    scale = float(kern.attr("scale"))
    rows = []
    for S in sizes:
        q, k, v = (torch.randn(1, H, S, d, device="cuda", dtype=BF) for _ in range(3))
        r = {"S": S, "H": H, "d": d, "inputs_bytes": 3 * q.numel() * 2,
             "naive_scores_bytes": H * S * S * 2}
        r["attnc"], _ = peak_extra(lambda: kern(q, k, v))
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            r["flash"], _ = peak_extra(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale))

        def naive():
            mask = torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1)
            return naive_attention(q, k, v, scale, True, mask)
        r["naive"], r["naive_error"] = peak_extra(naive)
        if S == max(sizes):  # times at the largest size too
            o = torch.empty_like(q)
            lse = torch.empty(1, H, S, device="cuda", dtype=torch.float32)
            plan = kern.plan(q, k, v, o=o, lse=lse)
            flops = 4 * H * S * S * d / 2
            r["attnc_tflops"] = flops / (median_ms(plan.launch, rep=200) * 1e-3) / 1e12
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                r["flash_tflops"] = flops / (median_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=True, scale=scale), rep=200) * 1e-3) / 1e12
            del o, lse, plan
        gb = lambda b: "OOM" if b is None else f"{b / 1e9:.3f} GB"
        log(f"memory S={S} H={H}: attnc {gb(r['attnc'])}, flash {gb(r['flash'])}, "
            f"naive {gb(r['naive'])} (scores alone {r['naive_scores_bytes'] / 1e9:.1f} GB)")
        rows.append(r)
        del q, k, v
        torch.cuda.empty_cache()
    return rows


# ----------------------------------------------------------------------------
def plots(out, att, mem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    styles = {"attnc": ("tab:red", "o"), "flash": ("tab:blue", "s"),
              "cudnn": ("tab:green", "^"), "naive": ("tab:gray", "x")}
    labels = {"attnc": "attnc", "flash": "SDPA flash", "cudnn": "SDPA cuDNN",
              "naive": "naive eager"}
    for i, d in enumerate((64, 128)):
        for j, causal in enumerate((True, False)):
            ax = axes[i][j]
            rs = [r for r in att if r["d"] == d and r["causal"] == causal]
            for peer, (c, m) in styles.items():
                ax.plot([r["S"] for r in rs], [r[peer] for r in rs], color=c,
                        marker=m, label=labels[peer])
            ax.set_xscale("log", base=2)
            ax.set_title(f"d={d}, {'causal' if causal else 'non-causal'}, bf16, "
                         f"B*S=16384, H={rs[0]['H'] if rs else '?'}")
            ax.set_ylabel("TFLOP/s")
            ax.set_xlabel("S")
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
    axes[0][0].legend()
    fig.suptitle("Attention forward on " + torch.cuda.get_device_name())
    fig.tight_layout()
    fig.savefig(out / "attention_tflops.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 5))
    S = [r["S"] for r in mem]
    for peer, (c, m) in styles.items():
        if peer == "cudnn":
            continue
        pts = [(r["S"], r[peer] / 2**30) for r in mem if r.get(peer) is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=c, marker=m,
                ms=9 if peer == "attnc" else 6, zorder=3 if peer != "attnc" else 2,
                label=labels[peer] + " (measured peak)")
        ooms = [r["S"] for r in mem if r.get(peer) is None]
        for s in ooms:
            ax.annotate("OOM", (s, 140), color=c, ha="center")
    ax.plot(S, [r["naive_scores_bytes"] / 2**30 for r in mem], color="tab:gray",
            ls="--", label="(B,H,S,S) bf16 score matrix")
    ax.axhline(torch.cuda.get_device_properties(0).total_memory / 2**30,
               color="k", lw=0.8, ls=":", label="GPU memory")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("S")
    ax.set_ylabel("GiB beyond the inputs (peak)")
    ax.set_title(f"Attention forward memory, B=1, H={mem[0]['H']}, d=128, causal, bf16")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "memory.png", dpi=110)
    plt.close(fig)


def markdown(info, bw, att, chain, mem):
    L = ["# attnc benchmark results", "",
         f"- date: {info['date']}", f"- GPU: {info['gpu']} ({info['sms']} SMs, {info['memory_gib']} GiB), driver {info['driver']}",
         f"- torch {info['torch']} (CUDA {info['cuda']}, cuDNN {info['cudnn']}), triton {info['triton']}",
         f"- attnc commit: {info['commit']}",
         f"- measured device-to-device copy bandwidth: {bw / 1e12:.2f} TB/s (bytes read + written)",
         "- timing: `triton.testing.do_bench` median (warmup 25 ms, rep 100 ms, L2 cleared before each call), inputs rotated over sets totalling >= 4x L2",
         "- produced by `scripts/bench.sh` (bench/run.py); one run, one process", "",
         "## Attention forward, bf16, B*S = 16384 tokens, H = 16, TFLOP/s",
         "", "TFLOP/s = 4·B·H·S²·d / t (÷2 when causal). attnc runs through its Python package (`attnc.load`, a launch plan).", "",
         "| d | causal | S | B | attnc | SDPA flash | SDPA cuDNN | naive eager | attnc / flash | attnc / cuDNN |",
         "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in att:
        L.append(f"| {r['d']} | {'yes' if r['causal'] else 'no'} | {r['S']} | {r['B']} | {r['attnc']:.0f} | "
                 f"{r['flash']:.0f} | {r['cudnn']:.0f} | {r['naive']:.0f} | {r['attnc'] / r['flash']:.2f} | "
                 f"{r['attnc'] / r['cudnn']:.2f} |")
    if chain:
        L += ["", "## Elementwise chain: dropout(x + bias, p=0.1) → LayerNorm, 8×4096×4096 bf16", "",
              f"Minimal traffic {chain['bytes_min'] / 1e9:.3f} GB (x read once, y written once); HBM floor "
              f"{chain['floor_ms']:.3f} ms at the measured copy bandwidth.", "",
              "| implementation | time (ms) | GB/s | fraction of HBM floor |", "|---|---:|---:|---:|"]
        for k, lab in (("attnc", "attnc (one fused kernel)"), ("eager", "eager PyTorch"),
                       ("compiled", "torch.compile")):
            L.append(f"| {lab} | {chain[f'{k}_ms']:.3f} | {chain[f'{k}_GBps']:.0f} | {chain[f'{k}_of_floor']:.2f} |")
        if "compile_s" in chain:
            L.append(f"\n(torch.compile's first call took {chain['compile_s']:.1f} s.)")
    if mem:
        L += ["", f"## Peak memory of one attention forward, B=1, H={mem[0]['H']}, d=128, causal, bf16", "",
              "Peak bytes allocated beyond the inputs (torch.cuda.max_memory_allocated), outputs included "
              "(attnc's and SDPA flash's are O and LSE alone, O(S); their curves coincide in `memory.png`).", "",
              "| S | inputs | attnc | SDPA flash | naive eager | naive's S×S scores alone |", "|---:|---:|---:|---:|---:|---:|"]
        gb = lambda b: "OOM" if b is None else f"{b / 1e9:.3f} GB"
        for r in mem:
            L.append(f"| {r['S']} | {r['inputs_bytes'] / 1e9:.3f} GB | {gb(r['attnc'])} | {gb(r['flash'])} | "
                     f"{gb(r['naive'])} | {r['naive_scores_bytes'] / 1e9:.1f} GB |")
        last = mem[-1]
        if "attnc_tflops" in last:
            L.append(f"\nAt S={last['S']}, H={last['H']}: attnc {last['attnc_tflops']:.0f} TFLOP/s, "
                     f"SDPA flash {last['flash_tflops']:.0f} TFLOP/s.")
    L += ["", "Plots: `attention_tflops.png` (TFLOP/s vs S per configuration and peer), `memory.png` (memory vs S).", ""]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", default=str(ROOT / ".gpuwork/modules"))
    ap.add_argument("--out", default=str(ROOT / "bench/results"))
    ap.add_argument("--quick", action="store_true", help="two sizes, no memory sweep")
    ap.add_argument("--skip", default="", help="comma list of attention,chain,memory")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mods = {d.name: attnc.load(d) for d in sorted(Path(args.modules).iterdir())
            if (d / "manifest.json").exists()}
    info = env_info()
    log(json.dumps(info))
    torch.manual_seed(0)
    bw = copy_bandwidth()
    log(f"copy bandwidth {bw / 1e12:.2f} TB/s")
    skip = args.skip.split(",")
    sizes = [1024, 8192] if args.quick else [512, 1024, 2048, 4096, 8192, 16384]
    att, chain, mem = [], None, []
    for section, fn in (("attention", lambda: bench_attention(mods, sizes)),
                        ("chain", lambda: bench_chain(mods, bw)),
                        ("memory", lambda: bench_memory(mods, [4096, 32768] if args.quick else
                                                        [2048, 4096, 8192, 16384, 32768]))):
        if section in skip:
            continue
        try:
            res = fn()
        except Exception:
            traceback.print_exc()
            continue
        if section == "attention":
            att = res
        elif section == "chain":
            chain = res
        else:
            mem = res
    (out / "results.json").write_text(json.dumps(
        {"info": info, "copy_bandwidth": bw, "attention": att, "chain": chain, "memory": mem},
        indent=1, default=str))
    md = markdown(info, bw, att, chain, mem)
    (out / "RESULTS.md").write_text(md)
    try:
        if att and mem:
            plots(out, att, mem)
    except Exception:
        traceback.print_exc()
    print("\n" + md)


if __name__ == "__main__":
    main()
