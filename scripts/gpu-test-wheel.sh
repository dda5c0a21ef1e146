#!/usr/bin/env bash
# The GPU suite against the installed wheel, ON the GPU machine: installs
# dist/attnc-*.whl into a fresh virtual environment (offline) and runs
# scripts/gpu-test.sh --installed there (docs/pytorch.md).
#
#   scripts/gpu-test-wheel.sh [WORK]     WORK: the modules (default .gpuwork)
#
# torch (and transformers) stay where the machine has them: the new
# environment sees the site-packages of the python3 on PATH through a .pth
# file, after its own, so `import attnc` finds the wheel's copy.
# Environment: as gpu-test.sh; VENV (default /tmp/attnc-wheel-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/attnc-wheel-venv}
outer=$(python3 -c "import site; print(site.getsitepackages()[0])")
scripts/wheel-venv.sh "$VENV"
inner=$("$VENV/bin/python" -c "import site; print(site.getsitepackages()[0])")
echo "$outer" > "$inner/outer-site-packages.pth"
echo "gpu-test-wheel: torch from $outer"
PATH=$VENV/bin:$PATH exec scripts/gpu-test.sh --installed "${1:-.gpuwork}"
