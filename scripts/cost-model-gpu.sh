#!/usr/bin/env bash
# The cost model on the GPU machine: installs dist/attnc-*.whl into a fresh
# virtual environment (as gpu-test-wheel.sh; torch and triton from the
# machine's python3), measures the ceilings with the wheel's calibration
# kernels (python3 -m attnc.calibrate) and prints predicted vs measured for
# every benchmark row (bench/cost_model.py). docs/cost-model.md.
#
#   scripts/cost-model-gpu.sh OUT [CHAIN]   OUT: where the device file and
#                                           results go; CHAIN: the
#                                           elementwise chain's module
# Extra arguments for bench/cost_model.py in COST_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/cost-model-gpu.sh OUT [CHAIN]}
CHAIN=${2:-}
VENV=${VENV:-/tmp/attnc-wheel-venv}
mkdir -p "$OUT"
outer=$(python3 -c "import site; print(site.getsitepackages()[0])")
scripts/wheel-venv.sh "$VENV"
inner=$("$VENV/bin/python" -c "import site; print(site.getsitepackages()[0])")
echo "$outer" > "$inner/outer-site-packages.pth"
export ATTNC_TEST_INSTALLED=1
"$VENV/bin/python" -m attnc.calibrate -o "$OUT/device.json"
"$VENV/bin/python" bench/cost_model.py --device-file "$OUT/device.json" \
  ${CHAIN:+--chain "$CHAIN"} --out "$OUT/cost-model.md" \
  --json "$OUT/cost-model.json" ${COST_ARGS:-}
