#!/usr/bin/env python3
"""Where a kernel's warpgroup-MMA waits sit among its softmax, from its SASS.

    cuobjdump -sass DIR/attn.cubin > attn.sass      # on the GPU machine
    python3 bench/sass_order.py attn.sass [--sequence]
    python3 bench/sass_order.py DIR/attn.cubin      # anywhere

An overlapped kernel (overlap_pv) issues S of step j + 1 and P V of step j
together, waits for S (`WARPGROUP.DEPBAR.LE gsb0, 0x1`), runs the softmax
and only then needs P V (`gsb0, 0x0`). ptxas may move the second wait up
(docs/attention.md, "The probabilities rounded after the P V's wait"); then
a warpgroup's softmax no longer overlaps its own P V. For every wait for S
this prints how many MUFU operations (ex2, tanh) of the step come before
the wait for P V and how many after it: a softmax that overlaps its P V has
(nearly) all of them before. `--sequence` also prints the whole kernel as
runs of the instruction classes that matter (HGMMA, waits, MUFU, shared
stores, barriers, branches). A cubin is read directly (its instructions
classed by opcode), so the question needs no GPU machine.
"""
import argparse
import itertools
import re
import sys

INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


# Mnemonic prefixes of the classes counted (WARPGROUP.DEPBAR apart: its
# class carries the number of groups it leaves in flight).
PREFIXES = (("HGMMA", "HGMMA"), ("WARPGROUP.ARRIVE", "ARRIVE"),
            ("MUFU", "MUFU"), ("STSM", "STSM"), ("STS", "STS"), ("BAR", "BAR"),
            ("SYNCS", "SYNCS"), ("BRA", "BRA"))


def classify(op, operands):
    if op.startswith("WARPGROUP.DEPBAR"):
        return "WAIT" + operands.strip().split(",")[-1].strip()
    for prefix, c in PREFIXES:
        if op.startswith(prefix):
            return c
    return None


# sm_90a opcodes (the low 12 bits of an instruction's first 64-bit word),
# read off cuobjdump listings of attnc's kernels, for the classes above; an
# encoding those listings never showed is not counted. (STSM's, 0x844, was
# read off cubins instead: the only opcode whose count rose by exactly the
# stmatrix instructions the PTX gained when shared_p's stores became them.)
OPCODES = {0x308: "MUFU", 0x388: "STS", 0x988: "STS", 0x844: "STSM", 0x51d: "BAR",
           0xb1d: "BAR", 0x5a7: "SYNCS", 0x5b2: "SYNCS", 0x9a7: "SYNCS",
           0x947: "BRA", 0x9f0: "HGMMA", 0xdf0: "HGMMA"}
WARPGROUP = 0x9c5


def cubin_classes(data):
    """The classes straight from a cubin's .text sections, where no
    disassembler is at hand: every instruction is 16 bytes; WARPGROUP is
    DEPBAR when bit 47 of its first word is set, its count in bits 8-10 of
    the second."""
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3A:0x3C], "little")
    shnum = int.from_bytes(data[0x3C:0x3E], "little")
    shstrndx = int.from_bytes(data[0x3E:0x40], "little")

    def header(i):
        h = data[shoff + i * shentsize:shoff + (i + 1) * shentsize]
        return (int.from_bytes(h[0:4], "little"),
                int.from_bytes(h[0x18:0x20], "little"),
                int.from_bytes(h[0x20:0x28], "little"))

    strtab = header(shstrndx)[1]
    for i in range(shnum):
        name_at, offset, size = header(i)
        name = data[strtab + name_at:data.index(b"\0", strtab + name_at)]
        if not name.startswith(b".text."):
            continue
        for at in range(offset, offset + size, 16):
            lo = int.from_bytes(data[at:at + 8], "little")
            hi = int.from_bytes(data[at + 8:at + 16], "little")
            op = lo & 0xFFF
            if op == WARPGROUP:
                yield f"WAIT0x{(hi >> 8) & 0x7:x}" if lo >> 47 & 1 else "ARRIVE"
            elif op in OPCODES:
                yield OPCODES[op]


def classes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x7fELF":
        yield from cubin_classes(data)
        return
    for line in data.decode(errors="replace").splitlines():
        m = INSTRUCTION.search(line)
        if m:
            c = classify(m.group(1), m.group(2))
            if c:
                yield c


def runs(seq):
    out = []
    for c, group in itertools.groupby(seq):
        n = sum(1 for _ in group)
        out.append(c + (f"x{n}" if n > 1 else ""))
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
