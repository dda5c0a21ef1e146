#!/usr/bin/env bash
# attnc benchmark: one command, run ON the GPU machine (the H200) from the
# repository root. Compile the modules first on the build machine:
#
#   python3 test/gpu/build_modules.py          # -> .gpuwork/{modules,lib}
#   ATTNC_GIT_COMMIT=$(git rev-parse --short HEAD) scripts/bench.sh [OUT_DIR]
#
# Writes OUT_DIR (default bench/results): RESULTS.md, results.json,
# attention_tflops.png, memory.png, log.txt. See bench/run.py for what is
# measured and how. Extra arguments for bench/run.py: BENCH_ARGS (--quick).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-bench/results}
WORK=${WORK:-.gpuwork}
export ATTNC_RUNTIME_LIB=${ATTNC_RUNTIME_LIB:-$PWD/$WORK/lib/libattnc_runtime.so}
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
if [ -z "${ATTNC_GIT_COMMIT:-}" ]; then
  ATTNC_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  export ATTNC_GIT_COMMIT
fi
mkdir -p "$OUT_DIR"
python3 bench/run.py --modules "$WORK/modules" --out "$OUT_DIR" ${BENCH_ARGS:-} 2>&1 | tee "$OUT_DIR/log.txt"
