#!/usr/bin/env bash
# make wheel-check: installs the wheel in dist/ into a fresh virtual
# environment (pip install --no-index: no network, no dependencies) and runs
# the Python package's CPU tests against the installed copy, from outside
# the source tree and with nothing of the checkout on the import path
# (ATTNC_TEST_INSTALLED=1; python/tests/test_install.py checks where attnc,
# its runtime library and its prebuilt kernels came from).
#
#   scripts/wheel-check.sh [BUILD_DIR]     the venv goes to BUILD_DIR/wheel-venv
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${1:-build}
VENV=$REPO/$BUILD/wheel-venv
scripts/wheel-venv.sh "$VENV"
# The fake libcuda of the test build exercises the driver paths without a GPU.
fake=$REPO/$BUILD/lib/libattnc-fake-cuda.so
[ -f "$fake" ] || fake=
cd /
env -u PYTHONPATH -u ATTNC_RUNTIME_LIB -u ATTNC_COMPILE -u ATTNC_TORCH_MODULES \
  "$VENV/bin/python" -m attnc
env -u PYTHONPATH -u ATTNC_RUNTIME_LIB -u ATTNC_COMPILE -u ATTNC_TORCH_MODULES \
  ATTNC_TEST_INSTALLED=1 ${fake:+ATTNC_FAKE_CUDA=$fake} \
  "$VENV/bin/python" -m unittest discover -v -s "$REPO/python/tests" 2>&1 |
  tee "$REPO/$BUILD/wheel-check.log"
tail -1 "$REPO/$BUILD/wheel-check.log" | grep -q '^OK' || {
  echo "wheel-check: the CPU tests failed against the installed wheel" >&2
  exit 1
}
echo "wheel-check: passed"
