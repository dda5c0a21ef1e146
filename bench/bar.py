#!/usr/bin/env python3
"""The Hopper attention issue's performance bar, measured as it is written.

    # build machine: the GQA 32:8 graph the bar names (in WORK/bar-modules:
    # its heads are static, so the GPU suite's generic shapes do not fit it)
    python3 bench/bar.py build [--work .gpuwork]
    # H200 (carry .gpuwork)
    ATTNC_RUNTIME_LIB=.gpuwork/lib/libattnc_runtime.so PYTHONPATH=python \
        python3 bench/bar.py run [--work .gpuwork] [--out FILE.md] [--only d128,causal]

Every row times attnc, SDPA's FlashAttention-2 backend and SDPA's cuDNN
backend in the same process: three rounds, the three interleaved in each
(triton.testing.do_bench medians, L2 cleared, inputs rotated over more than
4x L2), and the median of the three rounds per implementation. TFLOP/s =
4·B·H·Sq·Skv·d / t, halved when causal. Rows: d = 128 and 64, bf16, causal
and not, S = 512 .. 16384 at B·S = 16k tokens, H = 16; fp16 at S = 4096 and
8192; S in {1000, 4097, 8191}; GQA 32:8 (causal, d = 128); B·S = 32k. Each
row states the bar it is held to and whether it passes (a 1.0x bar passes
at >= 0.98x, as the issue says).
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test/gpu"))

GQA_NAME = "attn_gqa32x8_causal"


def gqa_source(heads=32, kv_heads=8):
    from build_modules import GQA_RI
    text = GQA_RI.replace("?x8x", "?xHQx").replace("?x2x", "?xHKVx")
    text = text.replace("repeats = 4", f"repeats = {heads // kv_heads}")
    return text.replace("HQ", str(heads)).replace("HKV", str(kv_heads))


def build(args):
    work = Path(args.work)
    src = work / "mlir" / f"{GQA_NAME}.mlir"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(gqa_source())
    out = work / "bar-modules" / GQA_NAME
    subprocess.run([args.compiler, str(src), "-o", str(out)], check=True)
    print(f"built {out}")
    (work / "bar-build.md").write_text(kernel_table(args, work))


def kernel_table(args, work):
    """What the bar's kernels cost to build, on this (build) machine: each
    module compiled again alone (nothing else running), attnc-compile's own
    timing per kernel, and ptxas -v of every kernel it wrote (registers,
    spills, and whether ptxas serialized the warpgroup MMAs: note C7513)."""
    import re
    import tempfile
    ptxas = Path(args.cuda_root) / "bin" / "ptxas"
    names = [f"attn_d{d}_{t}_{m}" for d in (128, 64) for t in ("bf16", "f16")
             for m in ("full", "causal")] + [GQA_NAME]
    lines = ["| module | kernel | strategy | registers | spill stores / loads (bytes) "
             "| C7513 | attnc-compile s per kernel |", "|---|---|---|---:|---|---|---:|"]
    for name in names:
        src = work / "mlir" / f"{name}.mlir"
        if not src.exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            log = subprocess.run([args.compiler, str(src), "-o", tmp], check=True,
                                 capture_output=True, text=True).stdout
            per_kernel = re.search(r"\(([0-9.]+) s per kernel\)", log).group(1)
            manifest = __import__("json").loads((Path(tmp) / "manifest.json").read_text())
            for k in manifest["kernels"]:
                r = subprocess.run([str(ptxas), "-v", "-arch=sm_90a", str(Path(tmp) / k["ptx"]),
                                    "-o", "/dev/null"], capture_output=True, text=True)
                regs = re.search(r"Used (\d+) registers", r.stderr).group(1)
                spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", r.stderr)
                lines.append(f"| {name} | {k['name']} | {k['attrs']['strategy']} | {regs} | "
                             f"{spills.group(1)} / {spills.group(2)} | "
                             f"{'yes' if 'C7513' in r.stderr else 'no'} | {per_kernel} |")
    return "\n".join(lines) + "\n"


def rows():
    """(module, d, dtype, causal, S, B, H, Hkv, bar kind)."""
    r = []
    for d in (128, 64):
        for causal in (False, True):
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                r.append((d, "bf16", causal, s, 16384 // s, 16, 16))
    for d in (128, 64):
        for causal in (False, True):
            for s in (4096, 8192):
                r.append((d, "f16", causal, s, 16384 // s, 16, 16))
    for causal in (False, True):
        for s in (1000, 4097, 8191):
            r.append((128, "bf16", causal, s, max(1, 16384 // s), 16, 16))
        r.append((128, "bf16", causal, 4096, 8, 16, 16))  # B·S = 32k
    for s in (4096, 8192):
        r.append((128, "bf16", True, s, 16384 // s, 32, 8))
    return r


def bars(d, dtype, causal, s, h, hkv, ratio_cudnn, ratio_flash):
    """The bars a row is held to: [(name, value, threshold)]."""
    out = []
    regular = s in (512, 1024, 2048, 4096, 8192, 16384) and h == hkv
    if regular and s >= 4096:
        if d == 128:
            t = 0.95 if causal else 0.98
            out.append(("x cuDNN", ratio_cudnn, t))
        else:
            out.append(("x cuDNN", ratio_cudnn, 0.9))
    elif not regular:
        out.append(("x cuDNN", ratio_cudnn, 0.9))
    if regular:
        t = 1.3 if (d == 128 or s >= 2048) else 1.1
        out.append(("x flash", ratio_flash, t))
    return out


def run(args):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from triton.testing import do_bench

    # run.py's input cycler and L2 size (bench/ is this script's directory
    # on sys.path).
    from run import L2_BYTES, cycler
    sys.path.insert(0, str(ROOT / "python"))
    import attnc

    mods = {}
    for name in os.listdir(Path(args.work) / "modules"):
        if name.startswith("attn_d"):
            mods[name] = attnc.load(Path(args.work) / "modules" / name)
    mods[GQA_NAME] = attnc.load(Path(args.work) / "bar-modules" / GQA_NAME)
    lines = []
    info = torch.cuda.get_device_name()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines += [f"# The Hopper attention bar, {stamp}", "",
              f"{info}, torch {torch.__version__}, attnc {os.environ.get('ATTNC_GIT_COMMIT', '?')}; "
              "median of 3 interleaved rounds (do_bench medians), peers in the same process.", "",
              "| d | dtype | causal | S | B | H:Hkv | attnc | flash | cuDNN | x flash | x cuDNN | bar |",
              "|---:|---|:---:|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    failed = 0
    for d, dtype, causal, s, b, h, hkv in rows():
        tags = {f"d{d}", dtype, "causal" if causal else "full", f"S{s}"}
        if not set(args.only.split(",") if args.only else []) <= tags:
            continue
        name = (GQA_NAME if h != hkv else
                f"attn_d{d}_{dtype}_{'causal' if causal else 'full'}")
        if name not in mods:
            print(f"(no module {name})", flush=True)
            continue
        (kern,) = mods[name].entries
        scale = float(kern.attr("scale"))
        dt = torch.bfloat16 if dtype == "bf16" else torch.float16
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        set_bytes = (2 * b * h + 2 * b * hkv) * s * d * 2
        n = max(1, -(-4 * L2_BYTES // set_bytes))
        sets = []
        for _ in range(n):
            q = torch.randn(b, h, s, d, device="cuda", dtype=dt)
            k = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
            v = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
            o = torch.empty_like(q)
            lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
            sets.append((q, k, v, o, lse))
        plans = [kern.plan(q, k, v, o=o, lse=lse) for q, k, v, o, lse in sets]

        def sdpa(backend):
            def call(q, k, v):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, scale=scale, enable_gqa=h != hkv)
            return cycler([lambda q=q, k=k, v=v: call(q, k, v) for q, k, v, _, _ in sets])

        impls = {"attnc": cycler([p.launch for p in plans]),
                 "flash": sdpa(SDPBackend.FLASH_ATTENTION),
                 "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
        times = {k: [] for k in impls}
        for _ in range(3):
            for key, fn in impls.items():
                try:
                    times[key].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
                except Exception as e:  # a backend that refuses the shape
                    print(f"  {key}: {type(e).__name__}: {str(e)[:80]}", flush=True)
                    times[key].append(float("nan"))
        tf = {k: flops / (statistics.median(t) * 1e-3) / 1e12 for k, t in times.items()}
        rf, rc = tf["attnc"] / tf["flash"], tf["attnc"] / tf["cudnn"]
        verdicts = []
        for label, value, threshold in bars(d, dtype, causal, s, h, hkv, rc, rf):
            ok = value >= threshold
            failed += not ok
            verdicts.append(f"{label} >= {threshold}: {'pass' if ok else 'FAIL'}")
        line = (f"| {d} | {dtype} | {'yes' if causal else 'no'} | {s} | {b} | {h}:{hkv} | "
                f"{tf['attnc']:.0f} | {tf['flash']:.0f} | {tf['cudnn']:.0f} | {rf:.2f} | "
                f"{rc:.2f} | {'; '.join(verdicts)} |")
        print(line, flush=True)
        lines.append(line)
        del sets, plans, impls
        torch.cuda.empty_cache()
    lines += ["", f"{failed} bar checks fail."]
    table = Path(args.work) / "bar-build.md"
    if table.exists():  # written by `bar.py build` on the build machine
        lines += ["", "The kernels, built on the 2-core build machine (`bar.py build`):", "",
                  table.read_text().rstrip()]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["build", "run"])
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--compiler", default=str(ROOT / "build/bin/attnc-compile"))
    ap.add_argument("--cuda-root", default="/usr/local/cuda")
    ap.add_argument("--out", default="")
    ap.add_argument("--only", default="",
                    help="run: only the rows with all these comma-separated "
                         "tags (d128, d64, bf16, f16, causal, full, S1000)")
    args = ap.parse_args()
    build(args) if args.mode == "build" else run(args)


if __name__ == "__main__":
    main()
