import sys, torch, statistics
from pathlib import Path
ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "python")); sys.path.insert(0, str(ROOT / "bench")); sys.path.insert(0, str(ROOT / "test/gpu"))
import attnc
from run import median_ms
from decode import attnc_decode, attnc_cache
H, HKV, D = 32, 8, 128
plain = attnc.load(".gpuwork-dec/modules/dec_d128_bf16_full_h32kv8")
for page in (16, 64):
    m = attnc.load(f".gpuwork-dec/modules/cache_d128_bf16_full_h32kv8_split_paged{page}")
    for B, S in ((1, 131072), (8, 32768), (32, 32768)):
        q = torch.randn(B, H, 1, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        used = torch.full((B,), S, dtype=torch.int32, device="cuda")
        splits = plain["attn_0"].size_rule("splits", q, k, v)
        fns = {"plain": attnc_decode(plain, q, k, v, splits)[0]}
        mb = S // page
        for order in ("seq", "rand", "rand_in_seq"):
            if order == "seq":
                perm = torch.arange(B * mb)
            elif order == "rand":
                perm = torch.randperm(B * mb)
            else:  # each sequence's pages shuffled within its own region
                perm = torch.cat([b * mb + torch.randperm(mb) for b in range(B)])
            perm = perm.cuda()
            pools = []
            for x in (k, v):
                pool = torch.empty(B * mb, page, HKV, D, device="cuda", dtype=x.dtype)
                pool[perm] = x.view(B, HKV, mb, page, D).permute(0, 2, 3, 1, 4).reshape(B * mb, page, HKV, D)
                pools.append(pool)
            kv = (pools[0], pools[1], perm.view(B, mb).to(torch.int32))
            fns[order] = attnc_cache(m, q, kv, used, splits)[0]
        t = {n: [] for n in fns}
        for _ in range(3):
            for n, f in fns.items():
                t[n].append(median_ms(f))
        base = statistics.median(t["plain"])
        print(f"page {page} B={B} S={S}: plain {base*1e3:.1f} us; " + ", ".join(f"{n} {statistics.median(v)/base:.3f}" for n, v in t.items() if n != "plain"), flush=True)
        del fns, kv, pools, k, v
        torch.cuda.empty_cache()
