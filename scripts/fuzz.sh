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

seeds="$BUILD/seeds"
rm -rf "$seeds" && python3 fuzz/make_seeds.py "$seeds" >/dev/null
mkdir -p "$BUILD/artifacts" "$BUILD/corpus/opt" "$BUILD/corpus/manifest"
common=(-timeout=10 -rss_limit_mb=4096 -max_len=65536
        -artifact_prefix="$BUILD/artifacts/" -print_final_stats=1)

run_regressions() {
  # Every input a campaign ever crashed on, once each.
  local opt_inputs=(fuzz/regressions/opt/*) man_inputs=(fuzz/regressions/manifest/*)
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
    secs=${2:?seconds}
    jobs=${3:-1}
    run_regressions
    ATTNC_FUZZ_STATS=1 "$BUILD/bin/attnc_opt_fuzzer" "${common[@]}" \
      -dict=fuzz/attnc.dict -max_total_time="$secs" -jobs="$jobs" \
      -workers="$jobs" "$BUILD/corpus/opt" "$seeds"
    ;;
  *)
    echo "usage: scripts/fuzz.sh check | campaign SECONDS [JOBS]" >&2
    exit 2
    ;;
esac
