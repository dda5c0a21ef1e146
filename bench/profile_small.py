"""One attention shape, attnc and SDPA-cuDNN, a few launches each, for ncu:

    ncu --kernel-name regex:'^attn$' --launch-skip 2 --launch-count 1 \\
        python3 bench/profile_small.py --work .gpuwork [--seq 512 --batch 32]
"""
import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import attnc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
ap.add_argument("--module", default="attn_d128_bf16_full")
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--heads", type=int, default=16)
args = ap.parse_args()
(kern,) = attnc.load(Path(args.work) / "modules" / args.module).entries
d = int(kern.attr("head_dim"))
causal = kern.attr("causal") == "true"
q, k, v = (torch.randn(args.batch, args.heads, args.seq, d, device="cuda",
                       dtype=torch.bfloat16) for _ in range(3))
o, lse = torch.empty_like(q), torch.empty(q.shape[:3], device="cuda")
plan = kern.plan(q, k, v, o=o, lse=lse)
for _ in range(4):
    plan.launch()
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(4):
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
torch.cuda.synchronize()
