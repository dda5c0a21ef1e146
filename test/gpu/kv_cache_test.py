#!/usr/bin/env python3
"""Attention over a K/V cache with per-sequence used lengths
(`attnc.attention ... kv_lengths(%used)`) on the GPU against float64
(issue: decode).

    python3 test/gpu/kv_cache_test.py build --work .gpuwork   # here
    python3 test/gpu/kv_cache_test.py run --work .gpuwork     # on the GPU

Batch b attends to keys j < min(used[b], Skv). The cache past each
sequence's length is filled with NaN: a kernel that reads one of those keys
or values into P V (instead of skipping its tiles and zero-filling the
tail) produces NaN and fails. Lengths are ragged within a batch and
include empty sequences (O = 0, logsumexp -inf) and lengths past the cache
(clamped). Split-KV modules run several split counts, as decode_test.py;
two modules are compiled without --split-kv (one kernel, prefill-like).

Paged modules (`attnc.paged_kv`, pages of 16, 64 and 256 rows) read the same
cache from pools whose pages are randomly permuted (pages no sequence owns
hold NaN) through a block table whose entries past each sequence's length
are -1: a wrong page, or a read of an entry past the length, shows.

The CUDA-graph case is the serving loop's: the decode step is captured
once for a cache of 64k tokens (the split count fixed from it), then the
lengths are updated in place to 1, 1000 and 64k and the graph replayed:
each replay must match float64 for the lengths it was given (paged: with
the pages moved and the table rewritten in place before each replay).
"""

import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
from decode_test import MASKS, reference  # noqa: E402

# A chunk of Sq new tokens at the end of each sequence's used length:
# query i sees keys j <= i + used[b] - Sq (bottom-right per sequence; the
# mask reads the lengths, which the flash form reads once per block).
MASKS = dict(MASKS, brlen="""\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %n = tensor.extract %used[%b] : tensor<?xi32>
        %len = arith.index_castui %n : i32 to index
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %len : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
""")

FUNC = """\
func.func @attn(%q: tensor<?x{h}x?x{d}x{t}>, %k: tensor<?x{hkv}x?x{d}x{t}>,
                %v: tensor<?x{hkv}x?x{d}x{t}>, %used: tensor<?xi32>)
    -> tensor<?x{h}x?x{d}x{t}> {{
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x{h}x?x{d}x{t}>
  %skv = tensor.dim %k, %c2 : tensor<?x{hkv}x?x{d}x{t}>
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>)
      {{scale = {scale!r} : f64}}
      : tensor<?x{h}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}> -> tensor<?x{h}x?x{d}x{t}>
{mask}  return %o : tensor<?x{h}x?x{d}x{t}>
}}
"""
# A paged cache (vLLM's layout): pools [NB, page, Hkv, d] and one block
# table [B, MB]; the attention sees [B, Hkv, MB * page, d].
FUNC_PAGED = """\
func.func @attn(%q: tensor<?x{h}x?x{d}x{t}>, %kp: tensor<?x{page}x{hkv}x{d}x{t}>,
                %vp: tensor<?x{page}x{hkv}x{d}x{t}>, %table: tensor<?x?xi32>,
                %used: tensor<?xi32>) -> tensor<?x{h}x?x{d}x{t}> {{
  %c2 = arith.constant 2 : index
  %k = attnc.paged_kv %kp, %table {{page_size = {page}}}
      : tensor<?x{page}x{hkv}x{d}x{t}>, tensor<?x?xi32> -> tensor<?x{hkv}x?x{d}x{t}>
  %v = attnc.paged_kv %vp, %table {{page_size = {page}}}
      : tensor<?x{page}x{hkv}x{d}x{t}>, tensor<?x?xi32> -> tensor<?x{hkv}x?x{d}x{t}>
  %sq = tensor.dim %q, %c2 : tensor<?x{h}x?x{d}x{t}>
  %skv = tensor.dim %k, %c2 : tensor<?x{hkv}x?x{d}x{t}>
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>)
      {{scale = {scale!r} : f64}}
      : tensor<?x{h}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}> -> tensor<?x{h}x?x{d}x{t}>
{mask}  return %o : tensor<?x{h}x?x{d}x{t}>
}}
"""
# (head dim, dtype, mask, H, Hkv, page size (0: contiguous), attnc-compile
# flags). Pages of 16 are four per K/V tile (a lookup per row), of 64 and
# 256 one or a quarter of a page per tile (a lookup per tile).
MODULES = [(128, "bf16", "full", 32, 8, 0, ["--split-kv=128"]),
           (128, "f16", "br", 16, 4, 0, ["--split-kv=128"]),
           (64, "bf16", "full", "?", "?", 0, ["--split-kv=128"]),
           (128, "bf16", "full", 32, 8, 0, []),
           (64, "f16", "br", 8, 8, 0, []),
           (128, "bf16", "full", 32, 8, 16, ["--split-kv=128"]),
           (128, "bf16", "full", 32, 8, 64, ["--split-kv=128"]),
           (128, "f16", "br", 16, 4, 256, ["--split-kv=128"]),
           (64, "bf16", "br", 8, 2, 64, []),
           # GQA 8 and 16: two and one groups per packed tile of 16 rows.
           (128, "bf16", "full", 64, 8, 16, ["--split-kv=128",
                                             "--block-q=16"]),
           (128, "f16", "br", 16, 1, 64, ["--split-kv=128", "--block-q=16"]),
           (128, "bf16", "brlen", 32, 8, 0, ["--split-kv=128"]),
           (64, "f16", "brlen", 16, 4, 16, ["--split-kv=128"]),
           (128, "bf16", "brlen", 8, 8, 0, [])]


def module_name(d, t, mask, h, hkv, page, extra):
    heads = "dyn" if h == "?" else f"h{h}kv{hkv}"
    split = "split" if any("split-kv" in f for f in extra) else "one"
    layout = f"_paged{page}" if page else ""
    tile = "".join("_" + f.lstrip("-").replace("=", "").replace("-", "")
                   for f in extra if not f.startswith("--split-kv"))
    return f"cache_d{d}_{t}_{mask}_{heads}_{split}{layout}{tile}"


def build(work: Path, compiler: Path):
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for d, t, mask, h, hkv, page, extra in MODULES:
        name = module_name(d, t, mask, h, hkv, page, extra)
        src = work / "mlir" / f"{name}.mlir"
        src.write_text((FUNC_PAGED if page else FUNC).format(
            d=d, t=t, h=h, hkv=hkv, page=page, scale=1.0 / math.sqrt(d),
            mask=MASKS[mask]))
        out = work / "modules" / name
        t0 = time.time()
        subprocess.run([str(compiler), str(src), "-o", str(out),
                        "--fallback=false"] + extra, check=True)
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)
        for ptx in out.glob("*.ptx"):
            ptx.unlink()


def attend(m, q, kv, used, splits, o=None, partials=None):
    """O (and the f32 partial logsumexps, or None) of one module's call;
    `kv` is (k, v) or a paged (k pool, v pool, table)."""
    import torch
    B, H, Sq, _ = q.shape
    dv = kv[1].shape[-1]
    if o is None:
        o = torch.full((B, H, Sq, dv), float("nan"), dtype=q.dtype,
                       device=q.device)
    # Keywords: the manifest orders the kernel's tensors q, k, v,
    # kv_lengths, block_table.
    extra = {"kv_lengths": used}
    if len(kv) == 3:
        extra["block_table"] = kv[2]
    if splits is None:  # one kernel
        m["attn"](q, kv[0], kv[1], o=o, **extra)
        return o, None
    if splits == 0:  # a split module's unsplit twin (one kernel, O and LSE)
        lse = torch.full((B, H, Sq), float("nan"), dtype=torch.float32,
                         device=q.device)
        m["attn_0"].unsplit(q, kv[0], kv[1], o=o, lse=lse, **extra)
        return o, lse[None]
    nan = lambda *s: torch.full(s, float("nan"), dtype=torch.float32,  # noqa: E731
                                device=q.device)
    op, lp = partials or (nan(splits, B, H, Sq, dv), nan(splits, B, H, Sq))
    m["attn_0"](q, kv[0], kv[1], o_partial=op, lse_partial=lp, **extra)
    m["attn_1"](op, lp, o=o)
    return o, lp


def rule(m, q, kv, used):
    """The runtime's split count for this call (a paged cache's tile count
    comes from its block table)."""
    named = {"kv_lengths": used, "block_table": kv[2]} if len(kv) == 3 else {}
    return m["attn_0"].size_rule("splits", q, kv[0], kv[1], **named)


def paginate(k, v, used, page, gen, pools=None):
    """The cache [B, Hkv, MB * page, d] as pools of pages in random order
    (NaN in pages no sequence owns) and a block table; entries wholly past
    a sequence's length are -1, which the kernel must never read. With
    `pools` (k pool, v pool, table), refills those in place."""
    import torch
    B, Hkv, S, d = k.shape
    mb = S // page
    nb = B * mb + 3
    perm = torch.randperm(nb, generator=gen)[:B * mb].to(k.device)
    if pools is None:
        pools = (torch.full((nb, page, Hkv, d), float("nan"), dtype=k.dtype,
                            device=k.device),
                 torch.full((nb, page, Hkv, v.shape[-1]), float("nan"),
                            dtype=v.dtype, device=v.device),
                 torch.empty(B, mb, dtype=torch.int32, device=k.device))
    kp, vp, table = pools
    kp.fill_(float("nan"))
    vp.fill_(float("nan"))
    for x, pool in ((k, kp), (v, vp)):
        pool[perm] = x.view(B, Hkv, mb, page, x.shape[-1]).permute(
            0, 2, 3, 1, 4).reshape(B * mb, page, Hkv, x.shape[-1])
    t = perm.view(B, mb).to(torch.int32)
    owned = torch.arange(mb, device=k.device)[None, :] * page < \
        used.clamp(min=0).to(torch.int64)[:, None]
    table.copy_(torch.where(owned, t, torch.full_like(t, -1)))
    return pools


def poison(k, v, used):
    """NaN in every cache row past its sequence's length."""
    for b, n in enumerate(used.tolist()):
        k[b, :, max(n, 0):] = float("nan")
        v[b, :, max(n, 0):] = float("nan")


def check(o, lp, q, k, v, used, mask, d):
    """O against float64 (the FlashAttention rule, as decode_test.py) and
    the merged partial logsumexp within 1e-3; rows that see no key: O = 0."""
    import torch
    dtype = q.dtype
    B, H, Sq, _ = q.shape
    Skv = k.shape[2]
    dev = q.device
    i = torch.arange(Sq, device=dev)[None, :, None]
    j = torch.arange(Skv, device=dev)[None, None, :]
    n = used.clamp(min=0).to(torch.int64)[:, None, None]
    visible = j < n
    if mask == "br":
        visible = visible & (j <= i + (Skv - Sq))
    if mask == "brlen":  # the raw length, as the mask reads it
        visible = visible & (j + Sq <= i + used.to(torch.int64)[:, None, None])
    visible = visible[:, None]  # [B, 1, Sq, Skv]
    # The reference reads the cache with its poison zeroed: masked keys
    # never count, visible ones are all finite.
    kz, vz = torch.nan_to_num(k, nan=0.0), torch.nan_to_num(v, nan=0.0)
    scale = 1.0 / math.sqrt(d)
    ref, lse_ref = reference(q, kz, vz, scale, visible)
    low, _ = reference(q, kz, vz, scale, visible, low=dtype)
    if torch.isnan(o).any():
        return False, {"o": "NaN"}
    ok, err, err_low = gpu_common.fa_rule(o, ref, low, dtype)
    res = {"o": f"{err:.2e}/{err_low:.2e}"}
    empty = ~visible.expand(B, H, Sq, Skv).any(-1)
    if empty.any():
        z = bool((o[empty] == 0).all())
        res["empty_rows_zero"] = z
        ok &= z
    if lp is not None:
        part = torch.logsumexp(lp.double(), dim=0)
        fin = torch.isfinite(lse_ref)
        lse_err = (part[fin] - lse_ref[fin]).abs().max().item() \
            if fin.any() else 0.0
        res["lse"] = f"{lse_err:.1e}"
        ok &= lse_err <= 1e-3 and bool((part[~fin] == -math.inf).all())
    return ok, res


SHAPES = [  # B, Sq, Skv, used lengths (one per sequence)
    (1, 1, 1, [1]), (1, 1, 1, [0]), (4, 1, 1000, [0, 1, 503, 1000]),
    (3, 4, 513, [64, 65, 600]), (2, 16, 64, [63, 16]),
    (4, 1, 8192, [8192, 1, 4097, 0]), (2, 3, 65, [3, 2]),
    (2, 1, 131072, [131072, 70001]), (3, 2, 32768, [32768, 1, 12345]),
    (2, 7, 1, [1, 0]),
]


def graph_case(m, dtype, d, H, Hkv, page, mask):
    """Capture at Skv = 64k, replay at lengths 1, 1000 and 64k (a paged
    cache: each replay with its pages moved, the table updated in place)."""
    import torch
    gpu_common.use_source_package()
    import attnc
    B, Sq, Skv = 2, 1, 65536
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device="cuda")
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
    used = torch.full((B,), Skv, dtype=torch.int32, device="cuda")
    kv = paginate(k, v, used, page, gen) if page else (k, v)
    splits = rule(m, q, kv, used)
    op = torch.empty(splits, B, H, Sq, d, device="cuda")
    lp = torch.empty(splits, B, H, Sq, device="cuda")
    o = torch.empty(B, H, Sq, d, dtype=dtype, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with attnc.Graph() as g:
            attend(m, q, kv, used, splits, o=o, partials=(op, lp))
    s.synchronize()
    ok, res = True, {"splits": splits}
    for lengths in ([1, 1], [1000, 1000], [Skv, Skv], [1, Skv], [1000, 0]):
        used.copy_(torch.tensor(lengths, dtype=torch.int32))
        if page:
            paginate(k, v, used, page, gen, pools=kv)
        o.fill_(float("nan"))
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            g.replay()
        s.synchronize()
        good, r = check(o, None, q, k, v, used, mask, d)
        ok &= good
        res[str(lengths)] = r["o"]
    return ok, res


def run(work: Path, small: bool, only: str = "", quick: bool = False):
    import torch
    gpu_common.use_source_package()
    import attnc
    failures = total = 0
    for d, t, mask, h, hkv, page, extra in MODULES:
        name = module_name(d, t, mask, h, hkv, page, extra)
        if only not in name:
            continue
        m = attnc.load(work / "modules" / name)
        split = "attn_0" in m.kernels
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        H, Hkv = (8, 2) if h == "?" else (h, hkv)
        for B, Sq, Skv, lengths in SHAPES:
            if small and B * H * Skv > 1 << 16:
                continue
            if quick and Skv > 1000:
                continue
            torch.manual_seed(B * 1000003 + Sq * 31 + Skv)
            gen = torch.Generator().manual_seed(Skv)
            if page:  # the view holds whole pages
                Skv = -(-Skv // page) * page
            q = torch.randn(B, H, Sq, d, dtype=dtype, device="cuda")
            k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
            v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
            # One past the cache: clamped to Skv.
            used = torch.tensor([n if n < Skv else Skv + 5 for n in lengths],
                                dtype=torch.int32, device="cuda")
            poison(k, v, used)
            kv = paginate(k, v, used, page, gen) if page else (k, v)
            counts = [None]
            if split:
                bkv = int(m["attn_0"].attr("block_kv"))
                chosen = rule(m, q, kv, used)
                # 0: the unsplit twin, run by hosts when the rule gives 1.
                counts = sorted({0, 1, chosen} if quick else
                                {0, 1, 3, min(-(-Skv // bkv), 128), 128,
                                 chosen})
            for splits in counts:
                total += 1
                def case():
                    o, lp = attend(m, q, kv, used, splits)
                    torch.cuda.synchronize()
                    return check(o, lp, q, k, v, used, mask, d)
                ok, res = gpu_common.guarded(case)
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name} B={B} H={H} "
                      f"Hkv={Hkv} Sq={Sq} Skv={Skv} used={lengths} "
                      f"splits={splits} {res}", flush=True)
        if not small and not quick and split and h != "?":
            total += 1
            ok, res = gpu_common.guarded(graph_case, m, dtype, d, H, Hkv,
                                         page, mask)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name} CUDA graph at 64k, "
                  f"replays {res}", flush=True)
    print(f"{total - failures}/{total} passed")
    return 1 if failures else 0



if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run, quick_help="Skv <= 1000, split counts 1 and the rule's"))
