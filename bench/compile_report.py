#!/usr/bin/env python3
"""Compile time and ptxas resource use of attnc's kernels, on the build machine.

    python3 bench/compile_report.py [--compiler build/bin/attnc-compile]
        [--out bench/results/compile.md] [GRAPH.mlir ...]

For each graph (default: the benchmark's attention graphs and the
elementwise chain, as test/gpu/build_modules.py writes them), runs
attnc-compile three times and keeps the fastest wall time (the whole
pipeline: parse, fuse, tile, lower, NVPTX, ptxas), then runs
`ptxas -v -arch=sm_90a` on each kernel's PTX: registers, spill stores and
loads, and any warning or performance-loss note (e.g. C7513, "wgmma ...
serialized"). Writes a markdown
table with the date, the machine's cores and the commit.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test/gpu"))


def default_graphs(tmp):
    from build_modules import sources
    src = sources()
    names = [n for n in src if re.fullmatch(r"attn_d(64|128)_(bf16|f16)_(causal|full)", n)]
    names += ["attn_gqa_ri", "attn_softcap50_causal_d128", "attn_mask_window1024_d128", "chain"]
    paths = []
    for n in names:
        p = Path(tmp) / f"{n}.mlir"
        p.write_text(src[n])
        paths.append(p)
    return paths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=str(ROOT / "build/bin/attnc-compile"))
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--out", default="")
    ap.add_argument("--arg", action="append", default=[],
                    help="extra attnc-compile flag, repeatable")
    ap.add_argument("graphs", nargs="*")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        graphs = [Path(g) for g in args.graphs] or default_graphs(tmp)
        for g in graphs:
            out = Path(tmp) / "out" / g.stem
            best = None
            for _ in range(3):
                t0 = time.perf_counter()
                r = subprocess.run([args.compiler, str(g), "-o", str(out)] + args.arg,
                                   capture_output=True, text=True)
                dt = time.perf_counter() - t0
                if r.returncode:
                    sys.exit(f"{g.name}: attnc-compile failed:\n{r.stderr}")
                best = dt if best is None else min(best, dt)
            for ptx in sorted(out.glob("*.ptx")):
                v = subprocess.run([args.ptxas, "-v", "-arch=sm_90a", str(ptx),
                                    "-o", os.devnull], capture_output=True, text=True)
                text = v.stdout + v.stderr
                regs = re.search(r"Used (\d+) registers", text)
                spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
                # ptxas reports serialized wgmmas as an info line
                # ("(C7513) Potential Performance Loss: ..."), not a warning.
                warns = [l.strip() for l in text.splitlines()
                         if "warning" in l.lower() or "performance loss" in l.lower()]
                rows.append((g.stem, ptx.stem, best, regs.group(1) if regs else "?",
                             f"{spill.group(1)}/{spill.group(2)}" if spill else "?",
                             "; ".join(warns) or "none"))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    lines = [f"# Compile time and ptxas resources, {datetime.date.today()}",
             "",
             f"- commit {commit}; build machine with {os.cpu_count()} cores; "
             f"attnc-compile {' '.join(args.arg) or '(defaults)'}; sm_90a",
             "- compile time: the fastest of 3 runs of attnc-compile on the graph "
             "(parse to cubin, ptxas included); ptxas -v on each kernel's PTX",
             "",
             "| graph | kernel | compile (s) | registers | spill st/ld (bytes) | ptxas warnings |",
             "|---|---|---:|---:|---:|---|"]
    for g, k, t, regs, spill, warns in rows:
        lines.append(f"| {g} | {k} | {t:.2f} | {regs} | {spill} | {warns} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
