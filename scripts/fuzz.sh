#!/usr/bin/env bash
# The sanitizer build and a time-bounded fuzz pass (docs/fuzzing.md).
#
#   scripts/fuzz.sh check            # CI: build, sanitizer lit run, regressions,
#                                    # FUZZ_SECONDS (default 60) per target
#   scripts/fuzz.sh campaign SECONDS [JOBS]
#                                    # a long run on a build machine; keeps its
#                                    # corpus in build-fuzz/corpus
#
# The build lives in FUZZ_BUILD_DIR (default build-fuzz): clang-22 with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer (-DATTNC_FUZZ=ON).
# Exits non-zero on any crash, sanitizer report, leak or hang (> 10 s for one
# input); the offending input is left in $FUZZ_BUILD_DIR/artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-check}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
CUDA=${ATTNC_CUDA_ROOT:-/usr/local/cuda}
JOBS=${JOBS:-$(nproc)}

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DATTNC_FUZZ=ON -DATTNC_CUDA_ROOT="$CUDA" >/dev/null
fi
ninja -C "$BUILD" -j"$JOBS" attnc_opt_fuzzer attnc_manifest_fuzzer attnc-opt \
  attnc-compile attnc_runtime attnc-runtime-tests attnc-runtime-driver-tests \
  attnc-fake-cuda attnc-target-tests 2>&1 | tail -1

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in the
# instrumented copies of its inline code (attnc's) but the uninstrumented
# copies in libMLIR.so hand out that memory without unpoisoning it: false
# use-after-poison reports, not bugs.
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

BUILD=$(cd "$BUILD" && pwd)
seeds="$BUILD/seeds"
rm -rf "$seeds" && python3 fuzz/make_seeds.py "$seeds" >/dev/null
# Valid graphs of the structured generator: seeds, and the bases that one in
# eight of the compiler target's mutation chains restart from.
export ATTNC_FUZZ_BASES="$BUILD/bases"
rm -rf "$ATTNC_FUZZ_BASES"
python3 fuzz/gen_graphs.py --seed 7 --count 400 --out "$ATTNC_FUZZ_BASES" >/dev/null
cp "$ATTNC_FUZZ_BASES"/* "$seeds"/
mkdir -p "$BUILD/artifacts" "$BUILD/corpus/opt" "$BUILD/corpus/manifest"
common=(-timeout=10 -rss_limit_mb=4096 -max_len=65536
        -artifact_prefix="$BUILD/artifacts/" -print_final_stats=1)

run_regressions() {
  # Every input a campaign ever crashed on, once each.
  # fuzz/upstream holds reproducers of crashes in upstream MLIR alone: the
  # target must skip them by signature.
  local opt_inputs=(fuzz/regressions/opt/* fuzz/upstream/*)
  local man_inputs=(fuzz/regressions/manifest/*)
  if [ -e "${opt_inputs[0]}" ]; then
    ATTNC_FUZZ_STATS=1 "$BUILD/bin/attnc_opt_fuzzer" "${common[@]}" "${opt_inputs[@]}"
  fi
  if [ -e "${man_inputs[0]}" ]; then
    "$BUILD/bin/attnc_manifest_fuzzer" "${common[@]}" "${man_inputs[@]}"
  fi
}

case "$MODE" in
  check)
    python3 /usr/lib/llvm-22/bin/lit -q "$BUILD/test"
    run_regressions
    secs=${FUZZ_SECONDS:-60}
    ATTNC_FUZZ_STATS=1 "$BUILD/bin/attnc_opt_fuzzer" "${common[@]}" \
      -dict=fuzz/attnc.dict -max_total_time="$secs" \
      "$BUILD/corpus/opt" "$seeds"
    "$BUILD/bin/attnc_manifest_fuzzer" "${common[@]}" -max_total_time="$secs" \
      "$BUILD/corpus/manifest" fuzz/corpus/manifest
    echo "fuzz: check passed"
    ;;
  campaign)
    # FUZZ_RUNS bounds each worker's inputs as SECONDS bounds its time;
    # the upstream lowering to NVVM runs on one input in
    # ATTNC_FUZZ_NVVM_EVERY (default 16), the attnc passes on all.
    secs=${2:?seconds}
    jobs=${3:-1}
    run_regressions
    export ATTNC_FUZZ_NVVM_EVERY=${ATTNC_FUZZ_NVVM_EVERY:-16}
    logs="$BUILD/campaign" && rm -rf "$logs" && mkdir -p "$logs"
    dict=$PWD/fuzz/attnc.dict
    (cd "$logs" && ATTNC_FUZZ_STATS=1 "$BUILD/bin/attnc_opt_fuzzer" \
      "${common[@]}" -dict="$dict" -max_total_time="$secs" \
      -runs="${FUZZ_RUNS:--1}" -jobs="$jobs" -workers="$jobs" \
      "$BUILD/corpus/opt" "$seeds") || status=$?
    # Each worker prints its counts at exit (fuzz-N.log): their sum.
    cat "$logs"/fuzz-*.log | python3 -c '
import re, sys
keys = ["inputs", "parsed", "verified", "reached the GPU conversion", "gave kernels", "skipped (upstream crash signatures)"]
total = [0] * len(keys)
for line in sys.stdin:
    if line.startswith("attnc_opt_fuzzer:"):
        for i, n in enumerate(re.findall(r"(\d+) ", line)[:len(keys)]):
            total[i] += int(n)
print("campaign: " + ", ".join(f"{n} {k}" for n, k in zip(total, keys)))'
    exit "${status:-0}"
    ;;
  *)
    echo "usage: scripts/fuzz.sh check | campaign SECONDS [JOBS]" >&2
    exit 2
    ;;
esac
