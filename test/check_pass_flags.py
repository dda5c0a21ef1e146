"""Fails when a pass flag declared in include/**/Passes.td has no lit RUN line.

Used by test/pass-flags.test. A flag counts as tested when some file under
test/ has a RUN: line that passes it to a tool (`--flag` or `-flag`, alone or
with options, or inside a `--pass-pipeline`).
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
flags = []
for td in sorted((root / "include").rglob("Passes.td")):
    flags += re.findall(r'Pass<"([a-z0-9-]+)"', td.read_text())
if not flags:
    sys.exit("no pass flags found: is the Passes.td pattern out of date?")

runs = []
for f in (root / "test").rglob("*"):
    if f.is_file() and f.suffix in (".mlir", ".test"):
        runs += [l for l in f.read_text().splitlines() if "RUN:" in l]

# `--flag`, or the flag nested in a --pass-pipeline (passes anchored on an
# op other than builtin.module, e.g. gpu.module(flag)).
missing = [f for f in flags
           if not any(re.search(r"(^|\s)--?%s($|[\s={'\"])" % re.escape(f), r)
                      or re.search(r"--pass-pipeline=.*[(,]%s[){,]"
                                   % re.escape(f), r)
                      for r in runs)]
for f in missing:
    print(f"pass --{f} has no lit test that runs it")
print(f"{len(flags) - len(missing)}/{len(flags)} pass flags are run by a lit test")
sys.exit(1 if missing else 0)
