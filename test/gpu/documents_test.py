#!/usr/bin/env python3
"""Document masks written in the graph, on the GPU against float64 (issue:
masks and score modifiers).

    python3 test/gpu/documents_test.py build --work .gpuwork   # here
    python3 test/gpu/documents_test.py run --work .gpuwork     # on the GPU

A query sees the keys of its own document: `doc_q[b, i] == doc_kv[b, j]`
with the ids function arguments per token ([B, 1, Sq, 1] and
[B, 1, 1, Skv], i64), alone or with a causal mask. The kernel reads the ids
per score; with the causal mask the K/V loop stops at the diagonal (the
causal conjunct bounds the keys). Documents have seeded lengths that are
not tile multiples; queries and keys may be split differently (Sq != Skv),
so that a query's document can have no key: its row is empty (O = 0,
logsumexp -inf). Built for the target's default strategy (with the
fallback the "odd" layout reaches) and for mma_sync.
"""

import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

FUNC = """\
func.func @attn(%q: {tq}, %k: {tq}, %v: {tq}, %dq: tensor<?x1x?x1xi64> {{attnc.name = "doc_q"}}, %dk: tensor<?x1x1x?xi64> {{attnc.name = "doc_kv"}}) -> {tq} {{
  %s = attnc.matmul %q, %k {{transpose_b}} : {tq}, {tq} -> {S}
  %c = arith.constant dense<{scale!r}> : tensor<f32>
  %ss = attnc.mul %s, %c : {S}, tensor<f32> -> {S}
  %same = attnc.cmp eq, %dq, %dk : tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64> -> tensor<?x1x?x?xi1>
{keep}  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : {B1}, {S}, tensor<f32> -> {S}
  %p = attnc.softmax %m : {S}
  %pb = attnc.cast %p : {S} to {P}
  %o = attnc.matmul %pb, %v : {P}, {tq} -> {tq}
  return %o : {tq}
}}
"""
CAUSAL = """\
  %rows = attnc.iota %ss {{dimension = 2}} : {S} -> {I}
  %cols = attnc.iota %ss {{dimension = 3}} : {S} -> {I}
  %causal = attnc.cmp le, %cols, %rows : {I}, {I} -> {B1}
  %keep = attnc.and %same, %causal : tensor<?x1x?x?xi1>, {B1} -> {B1}
"""
# name: (head dim, dtype, causal)
VARIANTS = {"documents_causal": (128, "bf16", True),
            "documents": (64, "f16", False)}
STRATEGIES = {"default": [], "mma_sync": ["--strategy=mma_sync"]}


def module_text(d, t, causal):
    types = {"tq": f"tensor<?x?x?x{d}x{t}>", "S": "tensor<?x?x?x?xf32>",
             "I": "tensor<?x?x?x?xi64>", "B1": "tensor<?x?x?x?xi1>",
             "P": f"tensor<?x?x?x?x{t}>"}
    if causal:
        return FUNC.format(scale=1.0 / math.sqrt(d),
                           keep=CAUSAL.format(**types), **types)
    # The ids alone, [B, 1, Sq, Skv]: the select broadcasts them over the
    # heads.
    types["B1"] = "tensor<?x1x?x?xi1>"
    return FUNC.format(scale=1.0 / math.sqrt(d), keep="", **types).replace(
        "select %keep", "select %same")


def build(work: Path, compiler: Path):
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for name, (d, t, causal) in VARIANTS.items():
        src = work / "mlir" / f"{name}.mlir"
        src.write_text(module_text(d, t, causal))
        for strategy, flags in STRATEGIES.items():
            out = work / "modules" / f"{name}_{strategy}"
            t0 = time.time()
            subprocess.run([str(compiler), str(src), "-o", str(out)] + flags,
                           check=True)
            print(f"{name}_{strategy}: {time.time() - t0:.1f} s", flush=True)
            for ptx in out.glob("*.ptx"):
                ptx.unlink()


def doc_ids(B, S, seed, docs):
    """[B, S] ids of `docs` documents of seeded lengths per batch."""
    import torch
    g = torch.Generator().manual_seed(seed)
    ids = torch.empty(B, S, dtype=torch.int64)
    for b in range(B):
        cuts = torch.randperm(max(S - 1, 1), generator=g)[:docs - 1] + 1
        cuts = sorted(set(int(c) for c in cuts if 0 < c < S))
        ids[b] = torch.bucketize(torch.arange(S), torch.tensor(cuts or [S]),
                                 right=True)
    return ids


def run_case(m, causal, B, H, Sq, Skv, docs, dtype, d, layout):
    import torch
    dev = "cuda"
    torch.manual_seed(B * 7919 + Sq * 31 + Skv + docs)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    if layout == "odd":  # an offset TMA cannot address: the fallback runs
        q, k, v = ((lambda x: torch.cat([x.new_zeros(1), x.flatten()])[1:]
                    .view(x.shape))(x) for x in (q, k, v))
    dq = doc_ids(B, Sq, Sq * 13 + docs, docs).to(dev)
    # Keys split at other places when Skv != Sq (some query documents may
    # have no key), at the same ones otherwise.
    dk = dq if Skv == Sq else doc_ids(B, Skv, Skv * 17 + docs, docs).to(dev)
    o = torch.full((B, H, Sq, d), 7.0, dtype=dtype, device=dev)
    lse = torch.empty(B, H, Sq, dtype=torch.float32, device=dev)
    m["attn"](q, k, v, o=o, lse=lse, doc_q=dq.view(B, 1, Sq, 1),
              doc_kv=dk.view(B, 1, 1, Skv))
    torch.cuda.synchronize()
    vis = dq[:, None, :, None] == dk[:, None, None, :]
    if causal:
        i = torch.arange(Sq, device=dev)[:, None]
        j = torch.arange(Skv, device=dev)[None, :]
        vis = vis & (j <= i)
    scale = 1.0 / math.sqrt(d)
    refs, ref_lse = [], None
    for dt in (torch.float64, dtype):
        acc = dt if dt == torch.float64 else torch.float32
        s = torch.matmul(q.to(dt), k.to(dt).transpose(-1, -2)).to(acc) * scale
        s = s.masked_fill(~vis, float("-inf"))
        if dt == torch.float64:
            ref_lse = torch.logsumexp(s, dim=-1)
        p = torch.softmax(s, dim=-1).nan_to_num(0.0).to(dt)
        refs.append(torch.matmul(p, v.to(dt)))
    if torch.isnan(o).any():
        return False, {"o": "NaN"}
    ok, err, err_low = gpu_common.fa_rule(o, refs[0], refs[1], dtype)
    finite = torch.isfinite(ref_lse)
    lse_err = (lse.double() - ref_lse)[finite].abs().max().item() \
        if finite.any() else 0.0
    empty = ~finite
    empty_ok = bool((lse[empty] == float("-inf")).all()) and \
        bool((o.float()[empty] == 0).all())
    ok &= lse_err <= 1e-3 and empty_ok
    return ok, {"o": f"{err:.2e}/{err_low:.2e}", "lse": f"{lse_err:.1e}",
                "empty_rows": int(empty.sum().item())}


# (B, H, Sq, Skv, documents)
CASES = [(1, 4, 1, 1, 1), (2, 4, 100, 100, 3), (1, 8, 1000, 1000, 4),
         (2, 4, 257, 513, 5), (1, 4, 513, 257, 2), (1, 8, 4097, 4097, 4),
         (2, 2, 3000, 3000, 30)]


def run(work: Path, small: bool, only: str = ""):
    import torch
    sys.path.insert(0, str(ROOT / "python"))
    import attnc
    failures = total = 0
    for name, (d, t, causal) in VARIANTS.items():
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        for strategy in STRATEGIES:
            mod = f"{name}_{strategy}"
            if only not in mod:
                continue
            m = attnc.load(work / "modules" / mod)
            for (B, H, Sq, Skv, docs) in CASES:
                if small and max(Sq, Skv) > 1000:
                    continue
                layouts = ["bhsd", "odd"] if strategy == "default" else ["bhsd"]
                for layout in layouts:
                    total += 1
                    ok, res = gpu_common.guarded(run_case, m, causal, B, H, Sq,
                                                 Skv, docs, dtype, d, layout)
                    failures += not ok
                    print(f"{'PASS' if ok else 'FAIL'} {mod} B{B} H{H} "
                          f"Sq{Sq} Skv{Skv} docs{docs} {layout} {res}",
                          flush=True)
    print(f"{total - failures}/{total} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
