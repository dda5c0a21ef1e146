#!/usr/bin/env python3
"""attnc-compile writes nothing outside its -o directory, on any input.

Runs attnc-compile on each input file (a campaign's corpus, say) from an
empty working directory inside an empty sandbox, with -o pointing into it,
and checks afterwards that every file in the sandbox lies under that -o
directory; also that the tool exits 0 (compiled) or 1 with a diagnostic
(refused), within 10 s. Prints the counts; exits 1 on any violation.

usage: fuzz/check_outputs.py ATTNC_COMPILE INPUT_DIR [LIMIT]
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

compiler = os.path.abspath(sys.argv[1])
inputs = sorted(p for p in pathlib.Path(sys.argv[2]).iterdir() if p.is_file())
if len(sys.argv) > 3:
    inputs = inputs[:int(sys.argv[3])]
counts = {"compiled": 0, "refused": 0}
violations = []
for path in inputs:
    sandbox = pathlib.Path(tempfile.mkdtemp(prefix="attnc-out-"))
    try:
        work = sandbox / "work"
        work.mkdir()
        src = work / "input.mlir"
        shutil.copyfile(path, src)
        try:
            # Diagnostics quote the input, which may be any bytes.
            r = subprocess.run([compiler, "input.mlir", "-o", "out"], cwd=work,
                               capture_output=True, text=True,
                               errors="replace", timeout=10)
        except subprocess.TimeoutExpired:
            violations.append(f"{path.name}: hang (> 10 s)")
            continue
        if r.returncode == 0:
            counts["compiled"] += 1
        elif r.returncode == 1 and "error" in r.stderr:
            counts["refused"] += 1
        else:
            violations.append(f"{path.name}: exit {r.returncode}: "
                              f"{r.stderr[-300:]}")
        out = (work / "out").resolve()
        for f in sandbox.rglob("*"):
            if f.is_dir() or f == src:
                continue
            if out not in f.resolve().parents:
                violations.append(f"{path.name}: wrote {f.relative_to(sandbox)}")
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
print(f"check_outputs: {len(inputs)} inputs, {counts['compiled']} compiled, "
      f"{counts['refused']} refused, {len(violations)} violations "
      "(files outside -o, crashes, hangs)")
for v in violations:
    print("VIOLATION", v)
sys.exit(1 if violations else 0)
