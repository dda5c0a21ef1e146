#!/usr/bin/env python3
"""Where a kernel's warpgroup-MMA waits sit among its softmax, from its SASS.

    cuobjdump -sass DIR/attn.cubin > attn.sass      # on the GPU machine
    python3 bench/sass_order.py attn.sass [--sequence]

An overlapped kernel (overlap_pv) issues S of step j + 1 and P V of step j
together, waits for S (`WARPGROUP.DEPBAR.LE gsb0, 0x1`), runs the softmax
and only then needs P V (`gsb0, 0x0`). ptxas may move the second wait up
(docs/attention.md, "The probabilities rounded after the P V's wait"); then
a warpgroup's softmax no longer overlaps its own P V. For every wait for S
this prints how many MUFU operations (ex2, tanh) of the step come before
the wait for P V and how many after it: a softmax that overlaps its P V has
(nearly) all of them before. `--sequence` also prints the whole kernel as
runs of the instruction classes that matter (HGMMA, waits, MUFU, shared
stores, barriers, branches).
"""
import argparse
import re
import sys

INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def classify(op, operands):
    if op.startswith("HGMMA"):
        return "HGMMA"
    if op.startswith("WARPGROUP.DEPBAR"):
        return "WAIT" + operands.strip().split(",")[-1].strip()
    if op.startswith("WARPGROUP.ARRIVE"):
        return "ARRIVE"
    if op.startswith("MUFU"):
        return "MUFU"
    if op.startswith("STS"):
        return "STS"
    if op.startswith("BAR"):
        return "BAR"
    if op.startswith("SYNCS"):
        return "SYNCS"
    if op.startswith("BRA"):
        return "BRA"
    return None


def classes(path):
    with open(path) as f:
        for line in f:
            m = INSTRUCTION.search(line)
            if m:
                c = classify(m.group(1), m.group(2))
                if c:
                    yield c


def runs(seq):
    out, prev, n = [], None, 0
    for c in seq:
        if c == prev:
            n += 1
            continue
        if prev:
            out.append(prev + (f"x{n}" if n > 1 else ""))
        prev, n = c, 1
    if prev:
        out.append(prev + (f"x{n}" if n > 1 else ""))
    return out


def overlap(seq):
    """(MUFU between the wait for S and the wait for P V, MUFU after the
    latter until the next MMA issue) for every wait for S."""
    steps = []
    i = 0
    while i < len(seq):
        if seq[i] != "WAIT0x1":
            i += 1
            continue
        before = after = 0
        j = i + 1
        while j < len(seq) and seq[j] not in ("WAIT0x0", "HGMMA"):
            before += seq[j] == "MUFU"
            j += 1
        if j < len(seq) and seq[j] == "WAIT0x0":
            j += 1
            while j < len(seq) and seq[j] not in ("HGMMA", "WAIT0x1"):
                after += seq[j] == "MUFU"
                j += 1
        steps.append((before, after))
        i = j
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass", nargs="+")
    ap.add_argument("--sequence", action="store_true")
    args = ap.parse_args()
    for path in args.sass:
        seq = list(classes(path))
        print(f"== {path}")
        if args.sequence:
            print(" ".join(runs(seq)))
        steps = overlap(seq)
        if not steps:
            print("no wait for S with a P V in flight (not an overlapped kernel)")
        for k, (before, after) in enumerate(steps):
            print(f"overlapped step {k}: {before} MUFU before P V's wait, "
                  f"{after} after")


if __name__ == "__main__":
    sys.exit(main())
