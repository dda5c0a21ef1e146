#!/usr/bin/env bash
# attnc demo (`make demo` calls it): takes both example graphs through the
# compiler, prints the intensity report and what was written; when a GPU is
# present (nvidia-smi -L works and python3's torch sees CUDA), runs the
# compiled attention example through the Python package on random inputs,
# checks it against torch SDPA and prints its time and TFLOP/s beside the cost
# model's prediction (calibrated on the spot once per BUILD_DIR). Without a GPU
# it says so and stops after compiling (exit 0).
#
#   scripts/demo.sh BUILD_DIR           (default: build)
#
# ATTNC_DEMO_SKIP_COMPILE=1 reuses BUILD_DIR/demo/* compiled earlier (for a GPU
# machine without LLVM/MLIR; BUILD_DIR/lib/libattnc_runtime.so must be there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${1:-build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
COMPILE=${ATTNC_COMPILE:-$BUILD_DIR/bin/attnc-compile}
RUNTIME=${ATTNC_RUNTIME_LIB:-$BUILD_DIR/lib/libattnc_runtime.so}
OUT=$BUILD_DIR/demo
PY=${PYTHON:-python3}

line() { printf '%*s\n' 72 '' | tr ' ' '-'; }

if [ "${ATTNC_DEMO_SKIP_COMPILE:-0}" != 1 ]; then
  [ -x "$COMPILE" ] || { echo "demo: $COMPILE not found; run 'make build' first" >&2; exit 1; }
  mkdir -p "$OUT"
  for ex in naive_attention elementwise_chain; do
    src=$ROOT/examples/$ex.mlir
    line
    echo "demo: attnc-compile examples/$ex.mlir -o $OUT/$ex --report"
    line
    rm -rf "${OUT:?}/$ex"
    start=$(date +%s.%N)
    "$COMPILE" "$src" -o "$OUT/$ex" --report
    end=$(date +%s.%N)
    echo
    echo "written to $OUT/$ex (wall time $(awk "BEGIN{printf \"%.2f\", $end-$start}") s):"
    (cd "$OUT/$ex" && ls -l --time-style=+ | awk 'NR>1{printf "  %-36s %9d bytes\n", $NF, $5}')
    "$PY" - "$OUT/$ex/manifest.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
for k in m["kernels"]:
    def factor(f):
        if not isinstance(f, dict):
            return str(f)
        if "device" in f:
            return f["device"]
        q = f"ceil({f['sym']}/{f['ceil_div']})"
        return f"({q}+{f['plus']})" if "plus" in f else q
    def ext(g):
        return " x ".join(factor(f) for f in g)
    grid = ", ".join(ext(g) for g in k["grid"])
    params = ", ".join(p["name"] + (":" + p["dtype"] + str(p.get("shape", "")).replace("'", "")
                                    if p["kind"] == "tensor" else "")
                       for p in k["params"] if p["kind"] in ("tensor", "scalar"))
    print(f"  kernel {k['name']} ({k.get('kind', '?')}): grid [{grid}], block {k['block']}, "
          f"{k.get('dynamic_shared_memory_bytes', 0)} B dynamic shared memory")
    print(f"    params: {params}")
    if k.get("attrs"):
        print(f"    attrs: {json.dumps(k['attrs'])}")
EOF
  done
  # The cost model's microbenchmarks, which the GPU part calibrates with.
  "$COMPILE" --calibration -o "$OUT/calibration" >/dev/null
fi
line

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  have_gpu=1
fi
if [ $have_gpu = 0 ]; then
  echo "demo: no CUDA GPU here (nvidia-smi -L or torch.cuda unavailable): compiled only, nothing run."
  exit 0
fi
[ -f "$RUNTIME" ] || { echo "demo: $RUNTIME not found" >&2; exit 1; }

# The cost model's ceilings, measured once per build directory
# (docs/cost-model.md); ATTNC_DEVICE_FILE names another device file.
DEVICE_FILE=${ATTNC_DEVICE_FILE:-$OUT/device.json}
if [ ! -f "$DEVICE_FILE" ]; then
  echo "demo: calibrating the cost model (python3 -m attnc.calibrate)"
  ATTNC_RUNTIME_LIB=$RUNTIME PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} \
    "$PY" -m attnc.calibrate --module "$OUT/calibration" -o "$DEVICE_FILE"
fi
echo "demo: running $OUT/naive_attention on $(nvidia-smi -L | head -1)"
ATTNC_RUNTIME_LIB=$RUNTIME PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} \
  "$PY" - "$OUT/naive_attention" "$DEVICE_FILE" <<'EOF'
import sys
import torch
import torch.nn.functional as F
import attnc

mod = attnc.load(sys.argv[1])
# The attention kernel, not the fallback it names.
fallbacks = {k.fallback.name for k in mod if k.fallback is not None}
kern = next(k for k in mod if k.name not in fallbacks)
d, scale = int(kern.attr("head_dim")), float(kern.attr("scale"))
causal = kern.attr("causal") == "true"
dt = {"bf16": torch.bfloat16, "f16": torch.float16}[kern.inputs[0].dtype]
B, H, S = 4, 16, 4096
q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=dt) for _ in range(3))
o, lse = kern(q, k, v)                       # outputs allocated by attnc
ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
ref64 = F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                       is_causal=causal, scale=scale)
err = (o.double() - ref64).abs().max().item()
err_sdpa = (ref.double() - ref64).abs().max().item()
print(f"  {kern.name}: B={B} H={H} S={S} d={d} {'causal' if causal else 'full'} {kern.inputs[0].dtype}")
print(f"  max |attnc - SDPA| = {(o.float() - ref.float()).abs().max().item():.2e}; "
      f"vs float64: attnc {err:.2e}, SDPA {err_sdpa:.2e}")
plan = kern.plan(q, k, v, o=o, lse=lse)
for _ in range(5):
    plan.launch()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
n = 50
start.record()
for _ in range(n):
    plan.launch()
end.record()
torch.cuda.synchronize()
ms = start.elapsed_time(end) / n
flops = 4 * B * H * S * S * d / (2 if causal else 1)
start.record()
for _ in range(n):
    F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
end.record()
torch.cuda.synchronize()
ms_sdpa = start.elapsed_time(end) / n
print(f"  attnc {ms:.3f} ms = {flops / ms / 1e9:.0f} TFLOP/s; "
      f"torch SDPA {ms_sdpa:.3f} ms = {flops / ms_sdpa / 1e9:.0f} TFLOP/s")
e = plan.estimate(sys.argv[2])
print(f"  cost model: predicted {e.time_us / 1e3:.3f} ms, measured {ms:.3f} ms "
      f"(predicted/measured {e.time_us / 1e3 / ms:.2f}); {e.regime}, limited by "
      f"{e.limiter}: tensor {e.tensor_us:.0f} + exp {e.exp_us:.0f} + fill "
      f"{e.fill_us:.0f} us on the busiest SM, HBM {e.dram_us:.0f} us")
ok = err <= 2 * err_sdpa + 1e-4 and not torch.isnan(o).any()
print("  check against SDPA:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
EOF
