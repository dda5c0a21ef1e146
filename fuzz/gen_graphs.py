#!/usr/bin/env python3
"""A structured generator of valid attnc graphs (docs/fuzzing.md).

Writes COUNT random programs, each a valid input as users write them:
elementwise chains (unary and broadcasting binary ops, row reductions,
softmax spelled out, layer/RMS norm, dropout, casts) over static or
dynamic shapes, and attention spellings (QK^T, a constant or run-time
scale, top-left or bottom-right causal masks or none, softmax, P.V) over
head dims and dtypes the back-end takes and some it refuses. Every one must
compile or be refused with a diagnostic; none may crash (fuzz/run_generated.py
checks that; the seeds also feed attnc_opt_fuzzer).

usage: fuzz/gen_graphs.py --seed N --count K --out DIR
"""
import argparse
import pathlib
import random


def ttype(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


class Chain:
    """One function: a chain of elementwise and row ops on x."""

    def __init__(self, rng):
        self.rng = rng
        self.args, self.body, self.n = [], [], 0

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def arg(self, name, type_):
        self.args.append(f"%{name}: {type_} {{attnc.name = \"{name}\"}}")
        return f"%{name}"

    def emit(self, line):
        self.body.append("  " + line)

    def build(self, name):
        rng = self.rng
        dtype = rng.choice(["bf16", "f16", "f32"])
        cols = rng.choice([64, 128, 1024, 4096, 100, 8])
        lead = rng.choice([[4], [2, 8], ["?"], ["?", 16], [1]])
        shape = lead + [cols]
        full = ttype(shape, dtype)
        row = ttype([cols], dtype)
        keep = ttype(lead + [1], "f32" if dtype != "f32" else dtype)
        x = self.arg("x", full)
        cur = x
        for _ in range(rng.randint(1, 6)):
            op = rng.choice(["unary", "binary", "softmax", "norm", "dropout",
                             "cast", "scalar"])
            out = self.fresh()
            if op == "unary":
                u = rng.choice(["exp", "neg", "tanh"])
                self.emit(f"{out} = attnc.{u} {cur} : {full}")
            elif op == "binary":
                b = rng.choice(["add", "sub", "mul", "max", "div"])
                other = self.arg(f"b{self.n}", rng.choice([full, row]))
                otype = other and self.args[-1].split(": ")[1].split(" {")[0]
                self.emit(f"{out} = attnc.{b} {cur}, {other} : {full}, "
                          f"{otype} -> {full}")
            elif op == "scalar":
                c = self.fresh()
                val = rng.choice(["0.5", "2.0", "-1.0", "1.0e-3"])
                self.emit(f"{c} = arith.constant dense<{val}> : "
                          f"tensor<{dtype}>")
                b = rng.choice(["add", "mul", "div", "sub"])
                self.emit(f"{out} = attnc.{b} {cur}, {c} : {full}, "
                          f"tensor<{dtype}> -> {full}")
            elif op == "softmax":
                if rng.random() < 0.5:
                    self.emit(f"{out} = attnc.softmax {cur} : {full}")
                else:
                    mx, d, e, s = (self.fresh() for _ in range(4))
                    kt = ttype(lead + [1], dtype)
                    self.emit(f"{mx} = attnc.reduce_max {cur} : {full} -> {kt}")
                    self.emit(f"{d} = attnc.sub {cur}, {mx} : {full}, {kt} -> "
                              f"{full}")
                    self.emit(f"{e} = attnc.exp {d} : {full}")
                    self.emit(f"{s} = attnc.reduce_sum {e} : {full} -> {kt}")
                    self.emit(f"{out} = attnc.div {e}, {s} : {full}, {kt} -> "
                              f"{full}")
            elif op == "norm":
                g = self.arg(f"g{self.n}", row)
                eps = rng.choice(["1.0e-05", "1.0e-06"])
                if rng.random() < 0.5:
                    bb = self.arg(f"beta{self.n}", row)
                    self.emit(f"{out} = attnc.layer_norm {cur}, {g}, {bb} "
                              f"{{epsilon = {eps} : f64}} : {full}, {row}, "
                              f"{row} -> {full}")
                else:
                    self.emit(f"{out} = attnc.rms_norm {cur}, {g} "
                              f"{{epsilon = {eps} : f64}} : {full}, {row} -> "
                              f"{full}")
            elif op == "dropout":
                if any(a.startswith("%seed") for a in self.args):
                    self.emit(f"{out} = attnc.exp {cur} : {full}")
                else:
                    seed = self.arg("seed", "i64")
                    off = self.arg("offset", "i64")
                    p = rng.choice(["0.0", "1.0e-01", "5.0e-01"])
                    self.emit(f"{out} = attnc.dropout {cur}, {seed}, {off} "
                              f"{{probability = {p} : f64}} : {full}")
            else:  # cast there and back keeps the chain's type
                other = rng.choice([t for t in ["bf16", "f16", "f32"]
                                    if t != dtype])
                mid = self.fresh()
                self.emit(f"{mid} = attnc.cast {cur} : {full} to "
                          f"{ttype(shape, other)}")
                self.emit(f"{out} = attnc.cast {mid} : {ttype(shape, other)} "
                          f"to {full}")
            cur = out
        self.emit(f"return {cur} : {full}")
        return (f"func.func @{name}({', '.join(self.args)})\n"
                f"    -> ({full} {{attnc.name = \"y\"}}) {{\n"
                + "\n".join(self.body) + "\n}\n")


def attention(rng, name):
    d = rng.choice([64, 128, 128, 64, 96])
    dt = rng.choice(["bf16", "f16"])
    if rng.random() < 0.4:
        b, h = rng.choice([1, 2]), rng.choice([1, 4])
        sq = rng.choice([64, 100, 256, 1])
        skv = rng.choice([sq, sq, 128, 37])
        qs, ks = [b, h, sq, d], [b, h, skv, d]
    else:
        qs, ks = ["?", "?", "?", d], ["?", "?", "?", d]
    runtime_scale = rng.random() < 0.3
    mask = rng.choice(["none", "causal", "causal", "bottom_right", "window",
                       "prefix", "chunk", "sinks", "band", "brwindow"])
    if mask in ("window", "prefix", "chunk", "sinks", "band", "brwindow"):
        mask += ":" + str(rng.choice([1, 16, 64, 100, 1024]))
    softcap = rng.choice([None, None, None, 30.0, 50.0])
    return attention_text(name, qs, ks, dt, mask, runtime_scale, softcap)


def attention_text(name, qs, ks, dt, mask, runtime_scale=False, softcap=None,
                   dropout=None):
    """Attention spelled as users write it: QK^T, a constant 1/sqrt(d) or a
    run-time scale, a softcap `c * tanh(s / c)`, a mask ("none", "causal"
    top-left, "bottom_right", which needs static sequence lengths and is
    top-left otherwise, or "window:N", "prefix:N", "chunk:N", "sinks:N",
    "band:N", "brwindow:N" (a bottom-right window, shifted by Skv - Sq from
    tensor.dim) written with index arithmetic), softmax, P.V. QS and KS are
    the Q and K/V shapes [B, H, S, d], "?" for dynamic. DROPOUT (a
    probability) drops the probabilities before P.V with attnc.dropout of
    the i64 arguments `seed` and `offset`."""
    d = qs[3]
    static = "?" not in qs + ks
    ss = [qs[0], qs[1], qs[2], ks[2]]
    qt, kt = ttype(qs, dt), ttype(ks, dt)
    st, it, bt = ttype(ss, "f32"), ttype(ss, "i64"), ttype(ss, "i1")
    ot = ttype(qs, dt)
    args = [f"%q: {qt} {{attnc.name = \"q\"}}", f"%k: {kt} {{attnc.name = \"k\"}}",
            f"%v: {kt} {{attnc.name = \"v\"}}"]
    lines = [f"%s = attnc.matmul %q, %k {{transpose_b}} : {qt}, {kt} -> {st}"]
    if runtime_scale:
        args.append("%scale: f32 {attnc.name = \"scale\"}")
        lines.append("%sc = tensor.from_elements %scale : tensor<f32>")
    else:
        lines.append(f"%sc = arith.constant dense<{1.0 / d ** 0.5!r}> : "
                     "tensor<f32>")
    lines.append(f"%ss = attnc.mul %s, %sc : {st}, tensor<f32> -> {st}")
    cur = "%ss"
    if softcap is not None:
        lines.append(f"%cap = arith.constant dense<{softcap}> : tensor<f32>")
        lines.append(f"%sd = attnc.div %ss, %cap : {st}, tensor<f32> -> {st}")
        lines.append(f"%th = attnc.tanh %sd : {st}")
        lines.append(f"%sm = attnc.mul %th, %cap : {st}, tensor<f32> -> {st}")
        cur = "%sm"
    kind, _, n = mask.partition(":")
    if kind in ("window", "prefix", "chunk", "sinks", "band", "brwindow"):
        i64 = "tensor<i64>"
        lines.append(f"%rows0 = attnc.iota {cur} {{dimension = 2 : i64}} : {st} -> {it}")
        lines.append(f"%cols = attnc.iota {cur} {{dimension = 3 : i64}} : {st} -> {it}")
        lines.append(f"%n = arith.constant dense<{n}> : {i64}")
        rows = "%rows0"
        if kind == "brwindow":
            lines.append("%c2 = arith.constant 2 : index")
            lines.append(f"%sq = tensor.dim %q, %c2 : {qt}")
            lines.append(f"%skv = tensor.dim %k, %c2 : {kt}")
            lines.append("%delta = arith.subi %skv, %sq : index")
            lines.append("%di = arith.index_cast %delta : index to i64")
            lines.append(f"%off = tensor.from_elements %di : {i64}")
            lines.append(f"%rows = attnc.add %rows0, %off : {it}, {i64} -> {it}")
            rows = "%rows"
        lines.append(f"%causal = attnc.cmp le, %cols, {rows} : {it}, {it} -> {bt}")
        if kind in ("window", "sinks", "brwindow"):
            lines.append(f"%dist = attnc.sub {rows}, %cols : {it}, {it} -> {it}")
            lines.append(f"%near = attnc.cmp lt, %dist, %n : {it}, {i64} -> {bt}")
            lines.append(f"%keep0 = attnc.and %causal, %near : {bt}, {bt} -> {bt}")
        elif kind == "prefix":
            lines.append(f"%pre = attnc.cmp lt, %cols, %n : {it}, {i64} -> {bt}")
            lines.append(f"%keep0 = attnc.or %causal, %pre : {bt}, {bt} -> {bt}")
        elif kind == "chunk":
            lines.append(f"%rc = attnc.div {rows}, %n : {it}, {i64} -> {it}")
            lines.append(f"%cc = attnc.div %cols, %n : {it}, {i64} -> {it}")
            lines.append(f"%same = attnc.cmp eq, %rc, %cc : {it}, {it} -> {bt}")
            lines.append(f"%keep0 = attnc.and %same, %causal : {bt}, {bt} -> {bt}")
        else:  # band: |i - j| <= n
            lines.append(f"%dist = attnc.sub {rows}, %cols : {it}, {it} -> {it}")
            lines.append(f"%ad = attnc.abs %dist : {it}")
            lines.append(f"%keep0 = attnc.cmp le, %ad, %n : {it}, {i64} -> {bt}")
        keep = "%keep0"
        if kind == "sinks":
            lines.append(f"%four = arith.constant dense<4> : {i64}")
            lines.append(f"%sink = attnc.cmp lt, %cols, %four : {it}, {i64} -> {bt}")
            lines.append(f"%keep = attnc.or %sink, %keep0 : {bt}, {bt} -> {bt}")
            keep = "%keep"
        lines.append("%ninf = arith.constant dense<0xFF800000> : tensor<f32>")
        lines.append(f"%m = attnc.select {keep}, {cur}, %ninf : {bt}, {st}, "
                     f"tensor<f32> -> {st}")
        cur = "%m"
    elif mask != "none":
        lines.append(f"%rows = attnc.iota {cur} {{dimension = 2 : i64}} : {st} -> {it}")
        lines.append(f"%cols = attnc.iota {cur} {{dimension = 3 : i64}} : {st} -> {it}")
        lhs = "%rows"
        if mask == "bottom_right" and static:
            lines.append(f"%delta = arith.constant dense<{ks[2] - qs[2]}> : "
                         "tensor<i64>")
            lines.append(f"%rs = attnc.add %rows, %delta : {it}, "
                         f"tensor<i64> -> {it}")
            lhs = "%rs"
        lines.append(f"%keep = attnc.cmp ge, {lhs}, %cols : {it}, {it} -> {bt}")
        lines.append("%ninf = arith.constant dense<0xFF800000> : tensor<f32>")
        lines.append(f"%m = attnc.select %keep, {cur}, %ninf : {bt}, {st}, "
                     f"tensor<f32> -> {st}")
        cur = "%m"
    lines.append(f"%p = attnc.softmax {cur} : {st}")
    pt = ttype(ss, dt)
    lines.append(f"%pb = attnc.cast %p : {st} to {pt}")
    probs = "%pb"
    if dropout is not None:
        args += ["%seed: i64 {attnc.name = \"seed\"}",
                 "%offset: i64 {attnc.name = \"offset\"}"]
        lines.append(f"%pd = attnc.dropout %pb, %seed, %offset "
                     f"{{probability = {float(dropout)!r} : f64}} : {pt}")
        probs = "%pd"
    lines.append(f"%o = attnc.matmul {probs}, %v : {pt}, {kt} -> {ot}")
    lines.append(f"return %o : {ot}")
    effective = mask
    if mask == "bottom_right" and not static:
        effective = "causal"
    # What was generated, for the differential test's reference.
    header = f"// attnc-gen: mask={effective} softcap={softcap}"
    header += f" dropout={dropout}\n" if dropout is not None else "\n"
    return (header + f"func.func @{name}({', '.join(args)})\n    -> ({ot} "
            f"{{attnc.name = \"o\"}}) {{\n  " + "\n  ".join(lines) + "\n}\n")


def reference_mask(spec):
    """The mask a `// attnc-gen: mask=...` header names, as the float64
    reference of the GPU tests takes it: False, True (top-left causal),
    "bottom_right", or a function of the index tensors (i [Sq, 1], j [1, Skv])."""
    kind, _, n = spec.partition(":")
    n = int(n or 0)
    return {"none": False, "causal": True, "bottom_right": "bottom_right",
            "window": lambda i, j: (j <= i) & (i - j < n),
            "brwindow": lambda i, j: ((j <= i + j.shape[1] - i.shape[0])
                                      & (i + j.shape[1] - i.shape[0] - j < n)),
            "prefix": lambda i, j: (j <= i) | (j < n),
            "chunk": lambda i, j: (j <= i) & (i // n == j // n),
            "sinks": lambda i, j: (j < 4) | ((j <= i) & (i - j < n)),
            "band": lambda i, j: (i - j).abs() <= n}[kind]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kind", choices=["all", "chain", "attention"],
                    default="all")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(a.count):
        kind = (rng.choice(["chain", "attention"]) if a.kind == "all"
                else a.kind)
        name = f"g{a.seed}_{i}"
        text = (Chain(rng).build(name) if kind == "chain"
                else attention(rng, name))
        (out / f"{name}.mlir").write_text(text)


if __name__ == "__main__":
    main()
