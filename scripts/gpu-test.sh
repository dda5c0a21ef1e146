#!/usr/bin/env bash
# GPU test suite of attnc: one command, run ON the GPU machine (the H200) from
# the repository root. Never run by CI.
#
#   scripts/gpu-test.sh [--installed] [WORK]      WORK defaults to .gpuwork
#
# --installed: the suite tests the attnc installed in the python3 on PATH
# (a virtual environment holding the wheel, docs/pytorch.md) instead of
# python/attnc: its runtime library, and for attnc.torch and the Llama
# test its prebuilt kernels. Nothing of the checkout's python/ is imported
# (ATTNC_TEST_INSTALLED=1; the tests check where attnc came from).
#
# The GPU machine has no LLVM/MLIR, so the modules are compiled beforehand on
# the build machine:
#
#   python3 test/gpu/build_modules.py            # -> .gpuwork/{modules,lib,mlir}
#
# and WORK travels with the repository (for the lent H200: run with
# carry [".gpuwork"]). Steps:
#   1. test/gpu/run_tests.py: every module's numerics through the attnc Python
#      package + libattnc_runtime.so vs float64 references, runtime refusals,
#      CUDA graph replay (see its docstring for the rules);
#   2. python/tests/gpu (the runtime's own GPU smoke test) on two modules;
#   3. test/gpu/backward_test.py (the attention backward against float64),
#      test/gpu/decode_test.py (split-KV decoding against float64),
#      test/gpu/kv_cache_test.py (per-sequence lengths, paged caches, CUDA
#      graphs replayed over changing lengths and pages),
#      test/gpu/varlen_test.py (ragged batches against float64),
#      test/gpu/alibi_test.py (score modifiers reading per-head tensors),
#      test/gpu/documents_test.py (document masks: ids read per position),
#      test/gpu/window_test.py (a window whose size comes at run time),
#      test/gpu/dropout_test.py (dropout of the probabilities, its Philox
#      mask against the reference's) and
#      test/gpu/torch_test.py (attnc.torch: eager, torch.compile, CUDA graphs,
#      opcheck) and test/gpu/hf_test.py (a small Llama trained with attnc as
#      transformers' attention backend, when transformers is installed);
#   4. compute-sanitizer memcheck and racecheck on a small launch of each kernel
#      kind (test/gpu/sanitize_driver.py; no torch, exact-size allocations),
#      and on the backward's small shapes.
# Environment: GPU_TEST_ARGS (extra args for run_tests.py, e.g. --quick),
# SKIP_SANITIZER=1, ONLY_SANITIZER=1 (step 4 alone), LOG_DIR (logs are
# written there; default WORK/logs).
set -uo pipefail
cd "$(dirname "$0")/.."
INSTALLED=0
if [ "${1:-}" = --installed ]; then INSTALLED=1; shift; fi
WORK=${1:-.gpuwork}
LOG_DIR=${LOG_DIR:-$WORK/logs}
mkdir -p "$LOG_DIR"
export PYTHONUNBUFFERED=1
TORCH_MODULES=(--modules "$WORK/torch")
if [ $INSTALLED = 1 ]; then
  unset PYTHONPATH ATTNC_RUNTIME_LIB ATTNC_TORCH_MODULES ATTNC_COMPILE
  export ATTNC_TEST_INSTALLED=1
  TORCH_MODULES=()
  where=$(cd / && python3 -c "import attnc; print(attnc.__file__)") || {
    echo "gpu-test: --installed but python3 ($(command -v python3)) cannot import attnc" >&2
    exit 2
  }
  case $where in
    "$PWD"/python/*) echo "gpu-test: --installed but attnc comes from $where" >&2; exit 2 ;;
  esac
  (cd / && python3 -m attnc) | head -4
else
  export ATTNC_RUNTIME_LIB=${ATTNC_RUNTIME_LIB:-$PWD/$WORK/lib/libattnc_runtime.so}
  export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
  if [ ! -f "$ATTNC_RUNTIME_LIB" ]; then
    echo "gpu-test: $ATTNC_RUNTIME_LIB missing; run python3 test/gpu/build_modules.py first" >&2
    exit 2
  fi
fi
if [ ! -d "$WORK/modules" ]; then
  echo "gpu-test: $WORK/modules missing; run python3 test/gpu/build_modules.py first" >&2
  exit 2
fi
nvidia-smi -L || { echo "gpu-test: no GPU" >&2; exit 2; }
status=0
summary=()
[ $INSTALLED = 1 ] && summary+=("attnc from the installed package at ${where%/__init__.py}")

if [ "${ONLY_SANITIZER:-0}" != 1 ]; then
echo "== 1. numerics, refusals, graphs (test/gpu/run_tests.py) =="
if python3 test/gpu/run_tests.py --modules "$WORK/modules" --json "$LOG_DIR/results.json" \
     ${GPU_TEST_ARGS:-} 2>&1 | tee "$LOG_DIR/run_tests.log"; then
  summary+=("run_tests.py: ok ($(grep -E '^[0-9]+ passed' "$LOG_DIR/run_tests.log"))")
else
  status=1; summary+=("run_tests.py: FAILED ($(grep -E '^[0-9]+ passed' "$LOG_DIR/run_tests.log"))")
fi

echo "== 2. python/tests/gpu (runtime smoke test) =="
for m in attn_example chain; do
  if ATTNC_TEST_MODULE_DIR=$WORK/modules/$m python3 -m unittest discover \
       -s python/tests/gpu -t python/tests 2>&1 | tee "$LOG_DIR/unittest_$m.log"; then
    summary+=("python/tests/gpu on $m: ok")
  else
    status=1; summary+=("python/tests/gpu on $m: FAILED")
  fi
done

echo "== 3. attention backward and attnc.torch =="
# run_test NAME COMMAND...: the command's output in LOG_DIR/NAME.log, its
# last line in the summary.
run_test() {
  local name=$1; shift
  if "$@" 2>&1 | tee "$LOG_DIR/$name.log"; then
    summary+=("$name: ok ($(tail -1 "$LOG_DIR/$name.log"))")
  else
    status=1; summary+=("$name: FAILED ($(tail -1 "$LOG_DIR/$name.log"))")
  fi
}
for t in backward decode kv_cache varlen alibi documents window dropout; do
  run_test "$t" python3 "test/gpu/${t}_test.py" run --work "$WORK"
done
run_test torch python3 test/gpu/torch_test.py "${TORCH_MODULES[@]}"
if python3 -c "import transformers" 2>/dev/null; then
  if python3 test/gpu/hf_test.py "${TORCH_MODULES[@]}" 2>&1 | tee "$LOG_DIR/hf.log"; then
    summary+=("hf_test.py: ok")
  else
    status=1; summary+=("hf_test.py: FAILED ($(tail -1 "$LOG_DIR/hf.log"))")
  fi
else
  summary+=("hf_test.py: skipped (no transformers)")
fi

fi
if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  echo "== 4. compute-sanitizer =="
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  M=$WORK/modules
  small=(
    "$M/attn_d128_bf16_causal:B=1,H=4,Hkv=2,Sq=300,Skv=77"
    "$M/attn_d128_bf16_causal:B=1,H=2,Hkv=1,Sq=77,Skv=300"
    "$M/attn_d64_f16_full:B=2,H=2,Hkv=2,Sq=130,Skv=257"
    "$M/attn_d128_bf16_causal:B=1,H=4,Hkv=2,Sq=300,Skv=77,fallback=1"
    "$M/attn_d64_f16_full:B=2,H=2,Hkv=2,Sq=130,Skv=257,fallback=1"
    "$M/attn_d64_bf16_causal:B=1,H=1,Hkv=1,Sq=5,Skv=0,fallback=1"
    "$M/attn_d64_bf16_causal:B=1,H=1,Hkv=1,Sq=5,Skv=0"
    "$M/attn_d128_bf16_causal_br:B=1,H=2,Hkv=1,Sq=300,Skv=77"
    "$M/attn_d64_f16_causal_rscale:B=2,H=2,Hkv=2,Sq=130,Skv=257"
    "$M/attn_mask_window256:B=1,H=2,Hkv=2,Sq=700,Skv=700"
    "$M/attn_mask_sinks:B=1,H=2,Hkv=1,Sq=300,Skv=77"
    "$M/attn_mask_chunk128:B=1,H=1,Hkv=1,Sq=77,Skv=300"
    "$M/attn_softcap30_causal:B=1,H=2,Hkv=2,Sq=130,Skv=257"
    "$M/attn_d128_bf16_causal_shared_p:B=1,H=4,Hkv=2,Sq=300,Skv=77"
    "$M/attn_softcap50_causal_d128_shared_p:B=1,H=2,Hkv=2,Sq=300,Skv=300"
    "$M/chain_dyn_p10:rows=5"
    "$M/dropout_bf16_p10:rows=3"
    "$M/chain_f16_n1024_p30:rows=4"
  )
  # The example chain (static 8x4096x4096, 32768 CTAs) under memcheck only;
  # racecheck sees its kernel through chain_dyn_p10 (same code, D0 rows).
  for tool in memcheck racecheck; do
    specs=("${small[@]}")
    [ $tool = memcheck ] && specs+=("$M/chain")
    log="$LOG_DIR/sanitizer_$tool.log"
    echo "-- compute-sanitizer --tool $tool: ${#specs[@]} launches" | tee "$log"
    if timeout "${SANITIZER_TIMEOUT:-300}" "$CS" --tool "$tool" --error-exitcode 3 \
         python3 test/gpu/sanitize_driver.py "${specs[@]}" >>"$log" 2>&1; then
      r=ok
    else
      r="FAILED (rc $?)"; status=1
    fi
    grep -E "^(attn|chain|dropout|bias|naive)|ERROR SUMMARY|RACECHECK SUMMARY|NaN" "$log" | tail -20
    errs=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    echo "   $tool: $r  ${errs}"
    summary+=("compute-sanitizer $tool (${#specs[@]} launches: attention d128/d64 causal (top-left, bottom-right)/full/GQA/Skv=0/runtime scale, fallbacks, window/sinks/chunk masks, softcap, P through shared memory, chains, dropout): $r ${errs}")
  done
  # Python-driven chains on small shapes, torch allocating exact sizes:
  # the backward (forward, delta, the K/V-stationary kernel, dQ's
  # conversion) and split-KV decoding (partials, combine; racecheck, which
  # is slow, on the --quick subset).
  sanitize_script() { # NAME TOOL SCRIPT ARGS...
    local name=$1 tool=$2; shift 2
    local log="$LOG_DIR/sanitizer_${name}_$tool.log" r
    if PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "${SANITIZER_TIMEOUT:-600}" \
         "$CS" --tool "$tool" ${CS_FILTER:-} --error-exitcode 3 python3 "$@" \
         >"$log" 2>&1; then
      r=ok
    else
      r="FAILED (rc $?)"; status=1
    fi
    local errs
    errs=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    echo "   $name $tool: $r $(tail -1 "$log") ${errs}"
    summary+=("compute-sanitizer $tool on $name (small shapes): $r ${errs}")
  }
  for tool in memcheck racecheck; do
    sanitize_script backward "$tool" test/gpu/backward_test.py run \
      --work "$WORK" --small
    sanitize_script decode "$tool" test/gpu/decode_test.py run \
      --work "$WORK" --small $([ "$tool" = racecheck ] && echo --quick)
    sanitize_script kv_cache "$tool" test/gpu/kv_cache_test.py run \
      --work "$WORK" --small $([ "$tool" = racecheck ] && echo --quick)
    sanitize_script varlen "$tool" test/gpu/varlen_test.py run \
      --work "$WORK" --small
    # Racecheck on attnc's kernels alone: it reports cuBLAS's TMA kernels
    # (the bf16 references) as hazards and, filtered to attnc's, stops with
    # an internal error once they run (gpu_common.launch_only).
    only=$([ "$tool" = racecheck ] && echo 1)
    ATTNC_TEST_LAUNCH_ONLY=$only CS_FILTER="--kernel-name kns=attn" \
      sanitize_script alibi "$tool" test/gpu/alibi_test.py run --work "$WORK" \
      --small
    ATTNC_TEST_LAUNCH_ONLY=$only CS_FILTER="--kernel-name kns=attn" \
      sanitize_script documents "$tool" test/gpu/documents_test.py run \
      --work "$WORK" --small
    ATTNC_TEST_LAUNCH_ONLY=$only CS_FILTER="--kernel-name kns=attn" \
      sanitize_script window "$tool" test/gpu/window_test.py run \
      --work "$WORK" --small
    ATTNC_TEST_LAUNCH_ONLY=$only CS_FILTER="--kernel-name kns=attn" \
      sanitize_script dropout "$tool" test/gpu/dropout_test.py run \
      --work "$WORK" --small
  done
fi

echo
echo "== gpu-test summary =="
for s in "${summary[@]}"; do echo "  $s"; done
[ $status = 0 ] && echo "gpu-test: ALL OK" || echo "gpu-test: FAILURES (see above and $LOG_DIR)"
exit $status
