#!/usr/bin/env python3
"""Split-KV (FlashDecoding) attention on the GPU against float64 (issue:
decode).

    python3 test/gpu/decode_test.py build --work .gpuwork   # here: attnc-compile --split-kv
    python3 test/gpu/decode_test.py run --work .gpuwork     # on the GPU machine

Each module is one attention function compiled with --split-kv: `attn_0`
(the partial kernel: each split's normalized output and logsumexp in f32,
[splits, B, H, Sq(, d)]) and `attn_1` (the combine: the online-softmax merge
of the splits, O in the input type), and `attn_unsplit`, the function
before the split (one kernel: O and the logsumexp), which the partial
kernel names as its `unsplit` twin for hosts to run when the rule gives one
split. Every split count gives the same attention, so each shape runs with
several (1, a few, the most the K/V tiles allow, 128), with the count the
runtime's rule chooses, and through the unsplit twin (splits=0); O is
checked with the FlashAttention rule (error against float64 at most twice
that of the naive computation in the input precision, plus half an ulp of
the largest output) and the logsumexp within 1e-3 of float64's. Outputs and
partials start as NaN so that an unwritten element fails; rows that see no
key (bottom-right causal with Sq > Skv) must give O = 0 and a logsumexp of
-inf. For each static-head module, the decode step (both kernels) is also
captured in one CUDA graph, whose replays must equal direct launches
bitwise, before and after the inputs change in place.
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
func.func @attn(%q: tensor<?x{h}x?x{d}x{t}>, %k: tensor<?x{hkv}x?x{d}x{t}>,
                %v: tensor<?x{hkv}x?x{d}x{t}>) -> tensor<?x{h}x?x{d}x{t}> {{
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x{h}x?x{d}x{t}>
  %skv = tensor.dim %k, %c2 : tensor<?x{hkv}x?x{d}x{t}>
  %o = attnc.attention %q, %k, %v {{scale = {scale!r} : f64}}
      : tensor<?x{h}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}> -> tensor<?x{h}x?x{d}x{t}>
{mask}  return %o : tensor<?x{h}x?x{d}x{t}>
}}
"""
MASKS = {
    "full": "",
    # A chunk of Sq new tokens against a cache of Skv - Sq: query i sees
    # keys j <= i + Skv - Sq.
    "br": """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
""",
}
# (head dim, dtype, mask, H, Hkv, extra attnc-compile flags); "?" heads are
# dynamic (no GQA packing: each query head reads its K/V head, unless
# --gqa-group=G packs groups of G for any H = G * Hkv), static ones with
# H > Hkv are packed (--attnc-pack-gqa). Tiles default to the target's
# decode tile (32 x 64); block_q 16 packs a group of 16 into one tile, 64
# the other way; 3 and 4 stages keep that many K/V tiles in flight (the
# bottom-right mask's two chained loops share the pipeline); --key-warps
# splits each K/V tile's keys over 2 or 4 warps that merge at the end.
MODULES = [(128, "bf16", "full", 32, 8, []),
           (128, "bf16", "br", 32, 8, ["--block-q=16"]),
           (64, "f16", "full", 16, 2, []),
           (128, "f16", "br", 16, 1, []),
           (128, "bf16", "full", 64, 1, []),
           (128, "bf16", "full", 8, 8, []),
           (128, "bf16", "br", "?", "?", []),
           # Paired K/V stages (the decode tile before 2026-12-03).
           (128, "bf16", "br", 32, 8, ["--stages=3", "--interleave-kv=false",
                                      "--block-q=32", "--block-kv=64",
                                      "--key-warps=1"]),
           (128, "f16", "br", "?", "?", ["--stages=4", "--block-kv=32",
                                        "--interleave-kv=false",
                                        "--key-warps=1"]),
           (128, "bf16", "full", 32, 8, ["--interleave-kv=false",
                                        "--block-q=32", "--block-kv=64",
                                        "--key-warps=1"]),
           (128, "bf16", "br", "?", "?", ["--gqa-group=4"]),
           (128, "bf16", "full", "?", "?", ["--gqa-group=4"]),
           (64, "f16", "full", "?", "?", ["--gqa-group=8"]),
           (128, "bf16", "full", "?", "?", ["--gqa-group=32"]),
           (128, "bf16", "full", 32, 8, ["--block-q=16", "--key-warps=4"]),
           (128, "bf16", "br", "?", "?", ["--key-warps=2"]),
           (64, "f16", "full", 16, 2, ["--key-warps=2"]),
           (128, "bf16", "br", 32, 8, ["--block-q=16", "--key-warps=4",
                                      "--stages=3"]),
           (128, "f16", "full", "?", "?", ["--gqa-group=8", "--block-q=16",
                                          "--key-warps=2"]),
           # Interleaved K/V loads: odd and even rings, key parts, chunks.
           (128, "bf16", "full", 32, 8, ["--block-q=16", "--block-kv=128",
                                        "--key-warps=4", "--interleave-kv"]),
           (128, "bf16", "br", "?", "?", ["--interleave-kv", "--stages=2"]),
           (64, "f16", "full", 16, 2, ["--interleave-kv", "--stages=4"]),
           (128, "f16", "br", 32, 8, ["--block-q=16", "--block-kv=128",
                                     "--key-warps=4", "--interleave-kv",
                                     "--stages=3"])]


def group_of(extra):
    """G of a module packed with --gqa-group=G, else None."""
    return next((int(f.split("=")[1]) for f in extra
                 if f.startswith("--gqa-group=")), None)


def heads_of(h, hkv, extra):
    """The (H, Hkv) a module runs: its static heads; 8 on 2 for dynamic
    ones; for a group G several head counts with H = G * Hkv."""
    g = group_of(extra)
    if g:
        return [(g * n, n) for n in (1, 2, 8)]
    return [(8, 2) if h == "?" else (h, hkv)]


def module_name(d, t, mask, h, hkv, extra=()):
    heads = "dyn" if h == "?" else f"h{h}kv{hkv}"
    tag = "".join("_" + f.lstrip("-").replace("=", "").replace("-", "")
                  for f in extra)
    return f"dec_d{d}_{t}_{mask}_{heads}{tag}"


def build(work: Path, compiler: Path):
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for d, t, mask, h, hkv, extra in MODULES:
        name = module_name(d, t, mask, h, hkv, extra)
        src = work / "mlir" / f"{name}.mlir"
        src.write_text(FUNC.format(d=d, t=t, h=h, hkv=hkv,
                                   scale=1.0 / math.sqrt(d),
                                   mask=MASKS[mask]))
        out = work / "modules" / name
        t0 = time.time()
        subprocess.run([str(compiler), str(src), "-o", str(out),
                        "--split-kv=128", "--fallback=false"] + extra,
                       check=True)
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)
        for ptx in out.glob("*.ptx"):  # the cubins are what runs
            ptx.unlink()


def reference(q, k, v, scale, visible, low=None):
    """O and the logsumexp by the textbook formulas in float64 (low=None)
    or naively in `low`. GQA: query head h reads K/V head h // (H / Hkv),
    so the query heads of a K/V head are multiplied as one group's rows
    (repeating K/V per query head in float64 took 32 GiB at H = 256,
    Skv = 128k, more than an H100 has free)."""
    import torch
    B, H, Sq, d = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    rows = H // Hkv * Sq
    dt = torch.float64 if low is None else low
    q, k, v = (x.to(dt) for x in (q, k, v))
    s = torch.matmul(q.reshape(B, Hkv, rows, d), k.transpose(-1, -2))
    s = s.reshape(B, H, Sq, Skv) * scale
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s.double(), dim=-1)
    p = torch.nan_to_num(torch.softmax(s.float() if low else s, dim=-1),
                         nan=0.0).to(dt)
    o = torch.matmul(p.reshape(B, Hkv, rows, Skv), v)
    return o.reshape(B, H, Sq, v.shape[-1]), lse


def decode(m, q, k, v, splits, o=None):
    """The two kernels of a split-KV module: partials, then the combine."""
    import torch
    B, H, Sq, d = q.shape
    nan = lambda *s: torch.full(s, float("nan"), dtype=torch.float32,  # noqa: E731
                                device=q.device)
    op, lp = nan(splits, B, H, Sq, v.shape[-1]), nan(splits, B, H, Sq)
    m["attn_0"](q, k, v, o_partial=op, lse_partial=lp)
    if o is None:
        o = torch.full((B, H, Sq, v.shape[-1]), float("nan"), dtype=q.dtype,
                       device=q.device)
    m["attn_1"](op, lp, o=o)
    return o, op, lp


def unsplit(m, q, k, v):
    """The module's unsplit twin (the partial kernel's `unsplit`): O and
    the logsumexp in one launch, as a host runs it when the rule gives 1."""
    import torch
    B, H, Sq, _ = q.shape
    o = torch.full((B, H, Sq, v.shape[-1]), float("nan"), dtype=q.dtype,
                   device=q.device)
    lse = torch.full((B, H, Sq), float("nan"), dtype=torch.float32,
                     device=q.device)
    m["attn_0"].unsplit(q, k, v, o=o, lse=lse)
    return o, lse


def run_case(m, B, H, Hkv, Sq, Skv, mask, dtype, d, splits):
    """splits = 0: the unsplit twin instead of the two kernels."""
    import torch
    dev = "cuda"
    torch.manual_seed(B * 1000003 + H * 1009 + Sq * 31 + Skv)
    q = torch.randn(B, H, Sq, d, dtype=dtype, device=dev)
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device=dev)
    scale = 1.0 / math.sqrt(d)
    if splits:
        o, _, lp = decode(m, q, k, v, splits)
    else:
        o, lse = unsplit(m, q, k, v)
        lp = lse[None]
    torch.cuda.synchronize()
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    visible = {"full": None, "br": j <= i + (Skv - Sq)}[mask]
    ref, lse_ref = reference(q, k, v, scale, visible)
    low, _ = reference(q, k, v, scale, visible, low=dtype)
    res = {}
    if torch.isnan(o).any():
        return False, {"o": "NaN"}
    ok, err, err_low = gpu_common.fa_rule(o, ref, low, dtype)
    res["o"] = f"{err:.2e}/{err_low:.2e}"
    # The merged logsumexp of the splits equals the row's.
    part_lse = torch.logsumexp(lp.double(), dim=0)
    fin = torch.isfinite(lse_ref)
    lse_err = (part_lse[fin] - lse_ref[fin]).abs().max().item() \
        if fin.any() else 0.0
    res["lse"] = f"{lse_err:.1e}"
    ok &= lse_err <= 1e-3 and bool((part_lse[~fin] == -math.inf).all())
    if visible is not None:
        empty = ~visible.any(1)
        if empty.any():
            z = bool((o[:, :, empty] == 0).all())
            res["empty_rows_zero"] = z
            ok &= z
    return ok, res


def graph_case(m, dtype, d, H, Hkv):
    """The decode step (partials, combine) captured in one CUDA graph: its
    replay equals direct launches bitwise, also after the inputs change in
    place (the graph keeps the buffers)."""
    import torch
    gpu_common.use_source_package()
    import attnc
    B, Sq, Skv = 3, 1, 5000
    q = torch.randn(B, H, Sq, d, dtype=dtype, device="cuda")
    k = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
    v = torch.randn(B, Hkv, Skv, d, dtype=dtype, device="cuda")
    splits = m["attn_0"].size_rule("splits", q, k, v)
    direct, _, _ = decode(m, q, k, v, splits)
    op = torch.empty(splits, B, H, Sq, d, device="cuda")
    lp = torch.empty(splits, B, H, Sq, device="cuda")
    o = torch.full_like(q, float("nan"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with attnc.Graph() as g:
            m["attn_0"](q, k, v, o_partial=op, lse_partial=lp)
            m["attn_1"](op, lp, o=o)
        g.replay()
    s.synchronize()
    same1 = torch.equal(o, direct)
    for t in (q, k, v):
        t.copy_(torch.randn_like(t))
    o.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        g.replay()
    s.synchronize()
    direct, _, _ = decode(m, q, k, v, splits)
    torch.cuda.synchronize()
    same2 = torch.equal(o, direct)
    return same1 and same2, {"first": same1, "after_update": same2,
                             "splits": splits}


def refused_case(m, dtype, d, g):
    """A packed module's kernels refuse heads that are not G * Hkv (here
    2 G query heads on one K/V head) before launching, naming the rule."""
    import torch
    import attnc
    q = torch.randn(1, 2 * g, 1, d, dtype=dtype, device="cuda")
    k = torch.randn(1, 1, 100, d, dtype=dtype, device="cuda")
    try:
        decode(m, q, k, k, 1)
    except attnc.AttncError as e:
        want = f"H (= {2 * g}) must be {g} times Hkv (= 1)"
        return want in str(e), {"error": str(e)}
    return False, {"error": None}


SHAPES = [  # B, Sq, Skv (heads from the module; dynamic: 8 on 2)
    (1, 1, 1), (2, 1, 1000), (1, 1, 8192), (3, 4, 513), (1, 16, 64),
    (1, 5, 3), (2, 3, 65), (1, 1, 131072), (4, 2, 32768), (2, 7, 1),
]


def run(work: Path, small: bool, only: str = "", quick: bool = False):
    import torch
    gpu_common.use_source_package()
    import attnc
    failures = total = 0
    for d, t, mask, h, hkv, extra in MODULES:
        name = module_name(d, t, mask, h, hkv, extra)
        if only not in name:
            continue
        m = attnc.load(work / "modules" / name)
        bkv = int(m["attn_0"].attr("block_kv"))
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        for (H, Hkv), (B, Sq, Skv) in [(hs, s) for hs in heads_of(h, hkv, extra)
                                       for s in SHAPES]:
            if small and B * H * Skv > 1 << 16:
                continue
            if quick and Skv > 1000:
                continue
            tiles = -(-Skv // bkv)
            rule = m["attn_0"].size_rule(
                "splits",
                *(torch.empty(s, dtype=dtype, device="cuda")
                  for s in ((B, H, Sq, d), (B, Hkv, Skv, d))))
            # 0: the unsplit twin, which hosts run when the rule gives 1.
            counts = sorted({0, 1, rule} if quick else
                            {0, 1, 3, min(tiles, 128), 128, rule})
            for splits in counts:
                total += 1
                ok, res = gpu_common.guarded(run_case, m, B, H, Hkv, Sq, Skv,
                                             mask, dtype, d, splits)
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name} B={B} H={H} "
                      f"Hkv={Hkv} Sq={Sq} Skv={Skv} splits={splits} {res}",
                      flush=True)
        if not small and (h != "?" or group_of(extra)):
            H, Hkv = heads_of(h, hkv, extra)[-1]
            total += 1
            ok, res = gpu_common.guarded(graph_case, m, dtype, d, H, Hkv)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name} CUDA graph replay "
                  f"{res}", flush=True)
        if group_of(extra):
            # Heads that are not one group per K/V head are refused
            # before launching, naming the rule.
            g = group_of(extra)
            total += 1
            ok, res = gpu_common.guarded(refused_case, m, dtype, d, g)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name} H != {g} * Hkv "
                  f"refused {res}", flush=True)
    print(f"{total - failures}/{total} passed")
    return 1 if failures else 0



if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run, quick_help="Skv <= 1000 and split counts 1 and the rule's only (for racecheck, which is slow)"))
