#!/usr/bin/env python3
"""Writes the seed corpus of attnc_opt_fuzzer: every lit input and example,
split at `// -----` (-split-input-file) into one file per module.

usage: fuzz/make_seeds.py OUT_DIR
"""
import hashlib
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
sources = sorted(root.glob("test/**/*.mlir")) + sorted(root.glob("examples/*.mlir"))
sources += sorted(root.glob("fuzz/regressions/opt/*"))
count = 0
for path in sources:
    if "Inputs" in path.parts and path.suffix != ".mlir":
        continue
    text = path.read_text(errors="replace")
    for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
        # RUN and CHECK lines carry no IR; keep the seeds small.
        lines = [l for l in chunk.splitlines() if not re.match(r"\s*//", l)]
        body = "\n".join(lines).strip() + "\n"
        if len(body) < 8:
            continue
        name = hashlib.sha1(body.encode()).hexdigest()[:16]
        (out / name).write_text(body)
        count += 1
print(f"make_seeds: {count} seeds from {len(sources)} files in {out}")
