#!/usr/bin/env bash
# ncu's reading of every cost-model benchmark row, to set its regimes
# against the model's (bench/cost_model_ncu.py). Run after
# scripts/cost-model-gpu.sh, with its virtual environment and device file.
# --clock-control none: the kernels run at the clocks the benchmark sees.
#
#   scripts/cost-model-ncu.sh OUT [CHAIN]   OUT: cost-model-gpu.sh's OUT
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/cost-model-ncu.sh OUT [CHAIN]}
CHAIN=${2:-}
VENV=${VENV:-/tmp/attnc-wheel-venv}
export ATTNC_TEST_INSTALLED=1
metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
ncu --csv --clock-control none -k regex:'attn|decode|bias_dropout' \
  --metrics "$metrics" \
  "$VENV/bin/python" bench/cost_model.py --device-file "$OUT/device.json" \
  ${CHAIN:+--chain "$CHAIN"} --ncu-rows ${COST_ARGS:-} > "$OUT/ncu.csv"
python3 bench/cost_model_ncu.py "$OUT/cost-model.json" "$OUT/ncu.csv" \
  --out "$OUT/cost-model-ncu.md"
