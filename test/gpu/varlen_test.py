#!/usr/bin/env python3
"""Attention over a ragged ("varlen") batch on the GPU against float64
(issue: decode, ragged batches).

    python3 test/gpu/varlen_test.py build --work .gpuwork   # here
    python3 test/gpu/varlen_test.py run --work .gpuwork     # on the GPU

Sequences are packed back to back in Q, K, V [T, H, d] and located by
`starts` / `ends` [B] (FlashAttention's cu_seqlens[:-1] and cu_seqlens[1:]):
`attnc.ragged_view` of each, attention, and `attnc.ragged_pack` of the
result, which the compiler folds into one kernel that reads and writes the
packed rows. Each sequence is checked against float64 attention of its own
rows (the FlashAttention rule, as decode_test.py), and its logsumexp
[T, H] within 1e-3. Lengths include 0, 1, tile multiples and their
neighbours; one layout leaves gaps between sequences whose rows hold NaN in
Q, K and V (never read) and a sentinel in O (never written).
"""

import itertools
import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

FUNC = """\
func.func @attn(%q: tensor<?x{h}x{d}x{t}>, %k: tensor<?x{hkv}x{d}x{t}>,
                %v: tensor<?x{hkv}x{d}x{t}>, %starts: tensor<?xi32>,
                %ends: tensor<?xi32>) -> tensor<?x{h}x{d}x{t}> {{
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x{h}x{d}x{t}>, tensor<?xi32>, tensor<?xi32> -> tensor<?x{h}x?x{d}x{t}>
  %kv = attnc.ragged_view %k, %starts, %ends
      : tensor<?x{hkv}x{d}x{t}>, tensor<?xi32>, tensor<?xi32> -> tensor<?x{hkv}x?x{d}x{t}>
  %vv = attnc.ragged_view %v, %starts, %ends
      : tensor<?x{hkv}x{d}x{t}>, tensor<?xi32>, tensor<?xi32> -> tensor<?x{hkv}x?x{d}x{t}>
  %ov = attnc.attention %qv, %kv, %vv {{scale = {scale!r} : f64}}
      : tensor<?x{h}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}>, tensor<?x{hkv}x?x{d}x{t}> -> tensor<?x{h}x?x{d}x{t}>
{mask}  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x{h}x?x{d}x{t}>, tensor<?xi32>, tensor<?xi32> -> tensor<?x{h}x{d}x{t}>
  return %o : tensor<?x{h}x{d}x{t}>
}}
"""
CAUSAL = """\
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
"""
# (head dim, dtype, causal, H, Hkv)
MODULES = [(128, "bf16", True, 16, 16), (128, "bf16", False, 32, 8),
           (64, "f16", True, 8, 2), (64, "bf16", False, 4, 4)]
# Each module with the target's strategy (wgmma on sm_90a: its cp.async
# loads, like mma_sync's, start at each sequence's row) and with mma_sync.
STRATEGIES = ("", "mma_sync")


def module_name(d, t, causal, h, hkv, strategy=""):
    suffix = f"_{strategy}" if strategy else ""
    return (f"varlen_d{d}_{t}_{'causal' if causal else 'full'}_h{h}kv{hkv}"
            f"{suffix}")


def build(work: Path, compiler: Path):
    (work / "mlir").mkdir(parents=True, exist_ok=True)
    for (d, t, causal, h, hkv), strategy in itertools.product(MODULES,
                                                              STRATEGIES):
        name = module_name(d, t, causal, h, hkv, strategy)
        src = work / "mlir" / f"{name}.mlir"
        src.write_text(FUNC.format(d=d, t=t, h=h, hkv=hkv,
                                   scale=1.0 / math.sqrt(d),
                                   mask=CAUSAL if causal else ""))
        out = work / "modules" / name
        args = [f"--strategy={strategy}"] if strategy else []
        t0 = time.time()
        subprocess.run([str(compiler), str(src), "-o", str(out),
                        "--fallback=false"] + args, check=True)
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)
        for ptx in out.glob("*.ptx"):
            ptx.unlink()


def layout(lengths, gap):
    """starts, ends and the packed row count; `gap` rows between
    sequences."""
    starts, ends, row = [], [], gap
    for n in lengths:
        starts.append(row)
        ends.append(row + n)
        row += n + gap
    return starts, ends, row


def run_case(m, lengths, gap, causal, dtype, d, H, Hkv):
    import torch
    dev = "cuda"
    starts, ends, T = layout(lengths, gap)
    torch.manual_seed(sum(lengths) * 31 + gap)
    q = torch.randn(T, H, d, dtype=dtype, device=dev)
    k = torch.randn(T, Hkv, d, dtype=dtype, device=dev)
    v = torch.randn(T, Hkv, d, dtype=dtype, device=dev)
    covered = torch.zeros(T, dtype=torch.bool, device=dev)
    for s, e in zip(starts, ends):
        covered[s:e] = True
    for x in (q, k, v):  # rows no sequence owns are never read
        x[~covered] = float("nan")
    o = torch.full((T, H, d), 7.0, dtype=dtype, device=dev)
    lse = torch.full((T, H), 7.0, dtype=torch.float32, device=dev)
    st = torch.tensor(starts, dtype=torch.int32, device=dev)
    en = torch.tensor(ends, dtype=torch.int32, device=dev)
    plan = m["attn"].plan(q, k, v, q_starts=st, q_ends=en, o=o, lse=lse)
    plan.launch()
    torch.cuda.synchronize()
    ok, worst, worst_low, lse_err = True, 0.0, 0.0, 0.0
    scale = 1.0 / math.sqrt(d)
    for s, e in zip(starts, ends):
        n = e - s
        if n == 0:
            continue
        # [1, H, n, d] per sequence, GQA by repeating K/V heads.
        qs, ks, vs = (x[s:e].transpose(0, 1)[None] for x in (q, k, v))
        ks = ks.repeat_interleave(H // Hkv, dim=1)
        vs = vs.repeat_interleave(H // Hkv, dim=1)
        i = torch.arange(n, device=dev)[:, None]
        j = torch.arange(n, device=dev)[None, :]
        vis = (j <= i) if causal else torch.ones(n, n, dtype=torch.bool,
                                                  device=dev)
        refs = []
        for dt in (torch.float64, dtype):
            sc = torch.matmul(qs.to(dt), ks.to(dt).transpose(-1, -2)) * scale
            sc = sc.masked_fill(~vis, float("-inf"))
            if dt == torch.float64:
                ref_lse = torch.logsumexp(sc, dim=-1)
            p = torch.softmax(sc.float() if dt != torch.float64 else sc,
                              dim=-1).to(dt)
            refs.append(torch.matmul(p, vs.to(dt)))
        got = o[s:e].transpose(0, 1)[None]
        if torch.isnan(got).any():
            return False, {"o": f"NaN in sequence at {s}"}
        good, err, err_low = gpu_common.fa_rule(got, refs[0], refs[1], dtype)
        ok &= good
        worst, worst_low = max(worst, err), max(worst_low, err_low)
        got_lse = lse[s:e].transpose(0, 1)[None].double()
        lse_err = max(lse_err, (got_lse - ref_lse).abs().max().item())
    ok &= lse_err <= 1e-3
    untouched = bool((o[~covered] == 7.0).all()) and \
        bool((lse[~covered] == 7.0).all())
    ok &= untouched
    return ok, {"o": f"{worst:.2e}/{worst_low:.2e}", "lse": f"{lse_err:.1e}",
                "gaps_untouched": untouched, "kernel": plan.kernel.name}


CASES = [  # lengths of the sequences, rows between them
    ([1], 0), ([0], 3), ([5, 0, 7], 0), ([64, 65, 63, 128], 0),
    ([300, 1, 257], 5), ([1000, 17, 4097], 0), ([256, 512, 255, 1], 9),
    ([2048] * 4, 0), ([8191, 3], 2),
    # The compact grid's search: an empty batch (every block leaves), a
    # sequence past the first round of 128, 300 short sequences (three
    # rounds, empty ones among them; counted by the warps together), and
    # 700 (six rounds: two groups of four warps' rounds, or one of eight).
    ([], 5), ([3] * 129, 0), ([(i * 37) % 190 for i in range(300)], 1),
    ([(i * 53) % 170 for i in range(700)], 2),
]


def run(work: Path, small: bool, only: str = ""):
    import torch
    gpu_common.use_source_package()
    import attnc
    failures = total = 0
    for (d, t, causal, h, hkv), strategy in itertools.product(MODULES,
                                                              STRATEGIES):
        name = module_name(d, t, causal, h, hkv, strategy)
        if only not in name:
            continue
        m = attnc.load(work / "modules" / name)
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[t]
        # Every version of the kernel (a ragged batch of short sequences
        # runs 64 x 64 tiles at d = 128) must run some case.
        unrun = {"attn"} | {v.name for v, _ in m["attn"].variants}
        for lengths, gap in CASES:
            if small and sum(lengths) > 1200:
                continue
            total += 1
            ok, res = gpu_common.guarded(run_case, m, lengths, gap, causal,
                                         dtype, d, h, hkv)
            failures += not ok
            if ok:
                unrun.discard(res["kernel"])
            shown = lengths if len(lengths) <= 8 else \
                f"[{len(lengths)} sequences]"
            print(f"{'PASS' if ok else 'FAIL'} {name} lengths={shown} "
                  f"gap={gap} {res}", flush=True)
        if unrun and not small:
            failures += 1
            print(f"FAIL {name}: no case ran {sorted(unrun)}", flush=True)
    print(f"{total - failures}/{total} passed")
    return 1 if failures else 0



if __name__ == "__main__":
    sys.exit(gpu_common.main(build, run))
