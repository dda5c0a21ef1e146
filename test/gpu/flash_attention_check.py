#!/usr/bin/env python3
"""GPU check of attnc's flash-attention kernels (run on the H200, not in CI).

Loads every kernel found under KERNEL_DIR (default .gpuwork/): one folder per
kernel with <name>.cubin and <name>.json (the docs/abi.md manifest written by
the compiler), launches it through CuPy from the manifest alone (parameter
order, grid rule, dynamic shared memory), and compares O and LSE with a
float64 reference:

  * error rule (FlashAttention's): max |O - O_ref| <= 2 * max |O_naive - O_ref|
    + EPS, where O_naive is the naive computation in the same low precision;
    LSE likewise against a naive low-precision logsumexp;
  * outputs are poisoned with NaN before every launch; no NaN may survive;
  * rows with no visible key (Skv = 0) must give O = 0 and LSE = -inf.

With --bench it also times d=128 kernels against torch SDPA (flash backend,
and cuDNN when available) with triton.testing.do_bench (median).
"""

import argparse
import glob
import json
import math
import os
import sys

import cupy
import numpy as np
import torch
import torch.nn.functional as F

EPS_O = 1e-4     # absolute slack on top of 2x the naive error (exact cases)
EPS_LSE = 1e-4
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


# ----------------------------------------------------------------------------
# Launching from the manifest
# ----------------------------------------------------------------------------
class Kernel:
    def __init__(self, folder):
        (manifest,) = glob.glob(os.path.join(folder, "*.json"))
        with open(manifest) as f:
            self.desc = json.load(f)["kernels"][0]
        self.name = self.desc["name"]
        self.module = cupy.RawModule(path=os.path.join(folder, self.desc["cubin"]))
        self.fn = self.module.get_function(self.name)
        self.smem = self.desc["dynamic_shared_memory_bytes"]
        if self.smem > 48 * 1024:
            self.fn.max_dynamic_shared_size_bytes = self.smem
        a = self.desc["attrs"]
        self.causal, self.scale = bool(a["causal"]), float(a["scale"])
        self.d, self.block_q = int(a["head_dim"]), int(a["block_q"])
        self.dtype = DTYPES[self.desc["params"][0]["dtype"]]

    def _extent(self, factors, syms):
        n = 1
        for f in factors:
            if isinstance(f, int):
                n *= f
            elif isinstance(f, str):
                n *= syms[f]
            else:
                n *= -(-syms[f["sym"]] // f["ceil_div"])
        return n

    def launch(self, q, k, v, o, lse):
        B, H, Sq, _ = q.shape
        syms = {"B": B, "H": H, "Hkv": k.shape[1], "Sq": Sq, "Skv": k.shape[2]}
        tensors = {"q": q, "k": k, "v": v, "o": o, "lse": lse}
        args = []
        for p in self.desc["params"]:
            if p["kind"] == "tensor":
                t = tensors[p["name"]]
                assert t.stride(-1) == 1 and t.data_ptr() % p["align"] == 0
                args.append(np.uint64(t.data_ptr()))
            elif p["kind"] == "size":
                args.append(np.int64(syms[p["name"]]))
            elif p["kind"] == "stride":
                args.append(np.int64(tensors[p["tensor"]].stride(p["dim"])))
            else:
                raise ValueError(p)
        grid = tuple(self._extent(g, syms) for g in self.desc["grid"])
        if 0 in grid:
            return
        self.fn(grid, tuple(self.desc["block"]), tuple(args), shared_mem=self.smem)


# ----------------------------------------------------------------------------
# References
# ----------------------------------------------------------------------------
def expand_kv(x, H):
    return x.repeat_interleave(H // x.shape[1], dim=1)


def reference(q, k, v, scale, causal, dtype):
    """Float64 reference (dtype=None) or the naive low-precision computation."""
    H = q.shape[1]
    k, v = expand_kv(k, H), expand_kv(v, H)
    if dtype is None:
        q, k, v = q.double(), k.double(), v.double()
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    Sq, Skv = q.shape[2], k.shape[2]
    if causal:
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Skv, device=q.device)[None, :]
        s = s.masked_fill(j > i, float("-inf"))
    lse = torch.logsumexp(s.float() if dtype is not None else s, dim=-1)
    p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)  # rows with no visible key
    return torch.matmul(p.to(v.dtype), v), lse


def make_inputs(B, H, Hkv, Sq, Skv, d, dtype, layout="bhsd", amp=1.0):
    def mk(h, s, a=1.0):
        if layout == "bshd":  # non-contiguous [B, H, S, d] view of [B, S, H, d]
            return (a * torch.randn(B, s, h, d, device="cuda")).to(dtype).transpose(1, 2)
        return (a * torch.randn(B, h, s, d, device="cuda")).to(dtype)
    return mk(H, Sq, amp), mk(Hkv, Skv), mk(Hkv, Skv)


def check_case(kern, B, H, Hkv, Sq, Skv, layout="bhsd"):
    amp = 8.0 if layout == "bhsd_large" else 1.0  # large logits: |scores| ~ 90
    q, k, v = make_inputs(B, H, Hkv, Sq, Skv, kern.d, kern.dtype,
                          layout.replace("_large", ""), amp)
    o = torch.full((B, H, Sq, kern.d), float("nan"), device="cuda", dtype=kern.dtype)
    lse = torch.full((B, H, Sq), float("nan"), device="cuda", dtype=torch.float32)
    kern.launch(q, k, v, o, lse)
    torch.cuda.synchronize()
    o_ref, lse_ref = reference(q, k, v, kern.scale, kern.causal, None)
    o_low, lse_low = reference(q, k, v, kern.scale, kern.causal, kern.dtype)
    nan = bool(torch.isnan(o).any() or torch.isnan(lse).any())
    err = (o.double() - o_ref).abs().max().item() if o.numel() else 0.0
    err_low = (o_low.double() - o_ref).abs().max().item() if o.numel() else 0.0
    fin = torch.isfinite(lse_ref)
    same_inf = bool((torch.isfinite(lse) == fin).all())
    lerr = (lse.double() - lse_ref)[fin].abs().max().item() if fin.any() else 0.0
    lerr_low = (lse_low.double() - lse_ref)[fin].abs().max().item() if fin.any() else 0.0
    ok = (not nan and same_inf and err <= 2 * err_low + EPS_O
          and lerr <= 2 * lerr_low + EPS_LSE)
    return ok, err, err_low, lerr, lerr_low, nan


def correctness(kernels):
    sizes = [1, 17, 128, 1000, 4096, 4097]
    bh = [(1, 1), (2, 3), (1, 16), (4, 4), (2, 8), (3, 5)]
    cases = []
    for i, S in enumerate(sizes):
        B, H = bh[i % len(bh)]
        cases.append((B, H, H, S, S, "bhsd"))
    cases += [(2, 8, 2, 1000, 1000, "bhsd"),   # GQA
              (1, 8, 2, 4097, 4097, "bhsd"),
              (2, 4, 4, 333, 333, "bshd"),     # strided (non-contiguous) layout
              (1, 2, 2, 17, 1000, "bhsd"),     # Sq < Skv
              (1, 2, 2, 1000, 17, "bhsd"),     # Sq > Skv
              (1, 2, 1, 64, 0, "bhsd"),        # Skv = 0: every row fully masked
              (16, 1, 1, 129, 129, "bhsd"),
              (2, 2, 2, 1000, 1000, "bhsd_large")]  # large logits
    failures = 0
    print(f"{'kernel':34} {'B':>2} {'H':>2} {'Hkv':>3} {'Sq':>5} {'Skv':>5} "
          f"{'err':>9} {'2*naive':>9} {'lse_err':>9} {'2*naive':>9} ok")
    for kern in kernels:
        for (B, H, Hkv, Sq, Skv, layout) in cases:
            ok, e, el, le, lel, nan = check_case(kern, B, H, Hkv, Sq, Skv, layout)
            failures += not ok
            print(f"{kern.name:34} {B:2} {H:2} {Hkv:3} {Sq:5} {Skv:5} {e:9.2e} "
                  f"{2 * el:9.2e} {le:9.2e} {2 * lel:9.2e} "
                  f"{'ok' if ok else 'FAIL'}{' NaN' if nan else ''}")
    return failures


# ----------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------
def bench(kernels):
    from triton.testing import do_bench
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows, peers = [], {}
    for kern in kernels:
        if kern.dtype != torch.bfloat16:
            continue
        for S in (4096, 8192, 16384):
            B, H = 16384 // S * 2, 16  # B*S = 32k tokens, 16 heads
            q, k, v = make_inputs(B, H, H, S, S, kern.d, kern.dtype)
            o = torch.empty_like(q)
            lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
            flops = 4 * B * H * S * S * kern.d / (2 if kern.causal else 1)
            t = do_bench(lambda: kern.launch(q, k, v, o, lse), warmup=25, rep=200,
                         return_mode="median")
            res = {"kernel": kern.name, "B": B, "H": H, "S": S, "attnc": flops / t / 1e9}
            key = (kern.d, kern.causal, S)
            if key not in peers:  # time each SDPA configuration once
                peers[key] = {}
                for label, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                       ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            f = lambda: F.scaled_dot_product_attention(
                                q, k, v, is_causal=kern.causal, scale=kern.scale)
                            ts = do_bench(f, warmup=25, rep=200, return_mode="median")
                        peers[key][label] = flops / ts / 1e9
                    except Exception:  # backend unavailable for this shape
                        peers[key][label] = float("nan")
            res.update(peers[key])
            rows.append(res)
            print(res, flush=True)
    print("\n| kernel | B | H | S | attnc TFLOP/s | SDPA flash | ratio | SDPA cuDNN |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kernel']} | {r['B']} | {r['H']} | {r['S']} | {r['attnc']:.0f} | "
              f"{r['flash']:.0f} | {r['attnc'] / r['flash']:.2f} | {r['cudnn']:.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("KERNEL_DIR", ".gpuwork"))
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--only", default="", help="substring filter on kernel names")
    args = ap.parse_args()
    torch.manual_seed(0)
    folders = sorted(f for f in glob.glob(os.path.join(args.dir, "*"))
                     if os.path.isdir(f) and args.only in os.path.basename(f))
    kernels = [Kernel(f) for f in folders]
    print(torch.cuda.get_device_name(), torch.__version__, cupy.__version__)
    failures = 0 if args.no_check else correctness(kernels)
    if args.bench:
        bench(kernels)
    print(f"\n{len(kernels)} kernels, {failures} failing cases")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
