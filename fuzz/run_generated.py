#!/usr/bin/env python3
"""Runs generated graphs (fuzz/gen_graphs.py) through attnc-opt's pipeline:
each must compile (exit 0) or be refused with a diagnostic (exit 1, an
`error:` on stderr); a crash, an abort, an LLVM ERROR or a hang over 10 s
fails. Prints the counts.

usage: fuzz/run_generated.py ATTNC_OPT DIR [PIPELINE_OPTIONS]
"""
import pathlib
import subprocess
import sys

opt, folder = sys.argv[1], pathlib.Path(sys.argv[2])
options = sys.argv[3] if len(sys.argv) > 3 else ""
compiled = refused = 0
failures = []
for path in sorted(folder.glob("*.mlir")):
    try:
        r = subprocess.run([opt, str(path), f"--attnc-pipeline={options}"],
                           capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        failures.append(f"{path.name}: hang (> 10 s)")
        continue
    if r.returncode == 0:
        compiled += 1
    elif (r.returncode == 1 and "error:" in r.stderr
          and "LLVM ERROR" not in r.stderr and "Stack dump" not in r.stderr):
        refused += 1
    else:
        failures.append(f"{path.name}: exit {r.returncode}\n{r.stderr[-2000:]}")
print(f"generated graphs: {compiled} compiled, {refused} refused with a "
      f"diagnostic, {len(failures)} failed")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
