#!/usr/bin/env python3
"""Document masks written in the graph, on the GPU against float64 (issue:
masks and score modifiers).

    python3 test/gpu/documents_test.py build --work .gpuwork   # here
    python3 test/gpu/documents_test.py run --work .gpuwork     # on the GPU

A query sees the keys of its own document: `doc_q[b, i] == doc_kv[b, j]`
with the ids function arguments per token ([B, 1, Sq, 1] and
[B, 1, 1, Skv], i64), alone or with a causal mask. The kernel reads the ids
per score in the tiles it masks; the tiles each query tile visits, and
those it needs no mask for, come from the ids (attnc.id_tile_bounds: the
query tile's least and greatest id, one pass over the keys), with the
causal mask intersected with the diagonal's. Documents have seeded lengths that are
not tile multiples; queries and keys may be split differently (Sq != Skv),
so that a query's document can have no key: its row is empty (O = 0,
logsumexp -inf). Built for the target's default strategy (with the
fallback the "odd" layout reaches; its K/V loop visits the masked tiles of
both sides in one loop), for mma_sync, and with a loop per side
(--one-masked-loop=false, its fallback too).
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402


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
# The op written directly, as a framework lowering attention would: one
# i32 tensor of ids per (batch, head, token) [B, H, S], read at the query
# and at the key position (so Sq = Skv, which the contract asks), the
# document mask and a window of 512 keys (keys [i - 511, i]): the window's
# tile bounds go to attnc.id_tile_bounds, which reduces i32 ids in the
# warp by redux.sync.
RAW = """\
func.func @attn(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %ids: tensor<?x?x?xi32> {attnc.name = "ids"}) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %ids[%b, %h, %i] : tensor<?x?x?xi32>
        %y = tensor.extract %ids[%b, %h, %j] : tensor<?x?x?xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %w = arith.constant 512 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi slt, %d, %w : index
        %c = arith.cmpi sle, %j, %i : index
        %win = arith.andi %c, %near : i1
        %keep = arith.andi %same, %win : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}
"""
WINDOW = 512

# name: (head dim, dtype, causal)
VARIANTS = {"documents_causal": (128, "bf16", True),
            "documents": (64, "f16", False),
            "documents_i32_window": (64, "bf16", "window")}


def module_text(d, t, causal):
    if causal == "window":
        return RAW
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
    gpu_common.build_strategies(
        work, compiler,
        {name: module_text(*spec) for name, spec in VARIANTS.items()},
        gpu_common.INTERVAL_STRATEGIES)


def doc_ids(B, S, seed, docs, pattern="seeded"):
    """[B, S] ids per batch: `docs` documents of seeded lengths (sorted ids,
    as packed sequences have), runs of 37 tokens cycling through `docs` ids
    (one id in many places: the tile bounds then cover their hull, every
    tile masked), or documents of 256 tokens (runs that end on tile
    boundaries)."""
    import torch
    if pattern == "cyclic":
        pos = torch.arange(S)
        return torch.stack([(pos // 37 + b) % docs for b in range(B)])
    if pattern == "aligned":
        return (torch.arange(S) // 256).expand(B, S).clone()
    g = torch.Generator().manual_seed(seed)
    ids = torch.empty(B, S, dtype=torch.int64)
    for b in range(B):
        cuts = torch.randperm(max(S - 1, 1), generator=g)[:docs - 1] + 1
        cuts = sorted(set(int(c) for c in cuts if 0 < c < S))
        ids[b] = torch.bucketize(torch.arange(S), torch.tensor(cuts or [S]),
                                 right=True)
    return ids


def run_case(m, causal, B, H, Sq, Skv, docs, pattern, dtype, d, layout):
    import torch
    dev = "cuda"
    torch.manual_seed(B * 7919 + Sq * 31 + Skv + docs)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, H, Skv, d, dtype=dtype, device=dev)
    if layout == "odd":  # an offset TMA cannot address: the fallback runs
        q, k, v = (gpu_common.misalign(x) for x in (q, k, v))
    o = torch.full((B, H, Sq, d), 7.0, dtype=dtype, device=dev)
    lse = torch.empty(B, H, Sq, dtype=torch.float32, device=dev)
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    if causal == "window":
        # [B, H, S] i32 ids, other documents per head.
        ids = torch.stack([doc_ids(B, Sq, Sq * 13 + docs + h, docs, pattern)
                           for h in range(H)], dim=1)
        ids = ids.to(torch.int32).to(dev)
        m["attn"](q, k, v, o=o, lse=lse, ids=ids)
        vis = ((ids[:, :, :, None] == ids[:, :, None, :]) & (j <= i) &
               (i - j < WINDOW))
    else:
        dq = doc_ids(B, Sq, Sq * 13 + docs, docs, pattern).to(dev)
        # Keys split at other places when Skv != Sq (some query documents
        # may have no key), at the same ones otherwise.
        dk = dq if Skv == Sq else doc_ids(B, Skv, Skv * 17 + docs, docs,
                                          pattern).to(dev)
        m["attn"](q, k, v, o=o, lse=lse, doc_q=dq.view(B, 1, Sq, 1),
                  doc_kv=dk.view(B, 1, 1, Skv))
        vis = dq[:, None, :, None] == dk[:, None, None, :]
        if causal:
            vis = vis & (j <= i)
    torch.cuda.synchronize()
    if gpu_common.launch_only():
        return True, {"launched": True}
    scale = 1.0 / math.sqrt(d)
    ref, ref_lse = gpu_common.reference(q, k, v, scale, torch.float64,
                                        visible=vis)
    low, _ = gpu_common.reference(q, k, v, scale, dtype, visible=vis)
    return gpu_common.check_output(o, lse, ref, low, ref_lse, dtype)


# (B, H, Sq, Skv, documents, pattern)
CASES = [(1, 4, 1, 1, 1, "seeded"), (2, 4, 100, 100, 3, "seeded"),
         (1, 8, 1000, 1000, 4, "seeded"), (2, 4, 257, 513, 5, "seeded"),
         (1, 4, 513, 257, 2, "seeded"), (1, 8, 4097, 4097, 4, "seeded"),
         (2, 2, 3000, 3000, 30, "seeded"), (2, 4, 700, 700, 3, "cyclic"),
         (1, 4, 300, 517, 2, "cyclic"), (1, 4, 1024, 1024, 0, "aligned"),
         (1, 4, 1100, 1100, 0, "aligned"), (1, 2, 2048, 1500, 0, "aligned")]


def refuses_unequal_lengths(m, dtype, d):
    """One ids tensor at both positions: the runtime refuses Sq != Skv
    before launching (the contract's equal(Sq, Skv))."""
    import torch
    q = torch.randn(1, 2, 128, d, dtype=dtype, device="cuda")
    k = torch.randn(1, 2, 256, d, dtype=dtype, device="cuda")
    ids = torch.zeros(1, 2, 128, dtype=torch.int32, device="cuda")
    o = torch.empty_like(q)
    lse = torch.empty(1, 2, 128, dtype=torch.float32, device="cuda")
    try:
        m["attn"](q, k, k, o=o, lse=lse, ids=ids)
    except Exception as e:  # noqa: BLE001
        return "Sq" in str(e) and "Skv" in str(e), {"refused": str(e)[:120]}
    return False, {"refused": False}


def run(work: Path, small: bool, only: str = ""):
    import torch

    def cases(name, strategy, m):
        d, t, causal = VARIANTS[name]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        if causal == "window":
            yield ("refuses Sq != Skv", refuses_unequal_lengths, (m, dtype, d))
        for (B, H, Sq, Skv, docs, pattern) in CASES:
            if small and max(Sq, Skv) > 1100:
                continue
            if causal == "window" and Sq != Skv:
                continue
            for layout in gpu_common.layouts(strategy):
                yield (f"B{B} H{H} Sq{Sq} Skv{Skv} docs{docs} {pattern} "
                       f"{layout}",
                       run_case, (m, causal, B, H, Sq, Skv, docs, pattern,
                                  dtype, d, layout))
    return gpu_common.run_strategies(work, only, VARIANTS, cases,
                                     strategies=gpu_common.INTERVAL_STRATEGIES)


if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
