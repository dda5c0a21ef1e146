#!/usr/bin/env bash
# Creates a fresh virtual environment VENV and installs dist/attnc-*.whl
# into it offline (pip install --no-index: the wheel has no dependencies).
# Used by scripts/wheel-check.sh (CI) and scripts/gpu-test-wheel.sh (H200).
#
#   scripts/wheel-venv.sh VENV
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:?usage: scripts/wheel-venv.sh VENV}
wheels=(dist/attnc-*.whl)
if [ ! -f "${wheels[0]}" ]; then
  echo "wheel-venv: no dist/attnc-*.whl; run make wheel" >&2
  exit 2
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-index --no-cache-dir --quiet \
  --disable-pip-version-check "$PWD/${wheels[0]}"
echo "wheel-venv: ${wheels[0]} installed into $VENV"
