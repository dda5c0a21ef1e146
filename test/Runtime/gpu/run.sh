#!/usr/bin/env bash
# Builds and runs the runtime's GPU smoke test (smoke.cpp) against
# build/lib/libattnc_runtime.so. Needs an sm_90 GPU and the CUDA toolkit;
# BUILD_ONLY=1 only builds (into build/runtime-gpu-smoke).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
cuda="${ATTNC_CUDA_ROOT:-/usr/local/cuda}"
out="$repo/build/runtime-gpu-smoke"
if [ -z "${SKIP_BUILD:-}" ]; then
  mkdir -p "$out"
  cp "$here/manifest.json" "$out/"
  "$cuda/bin/nvcc" -arch=sm_90a -cubin -O2 -o "$out/kernels.cubin" "$here/kernels.cu"
  "$cuda/bin/nvcc" -O2 -std=c++17 -I "$repo/include" -o "$out/smoke" \
    "$here/smoke.cpp" -L "$repo/build/lib" -lattnc_runtime \
    -Xlinker -rpath -Xlinker "$repo/build/lib"
fi
[ -n "${BUILD_ONLY:-}" ] && exit 0
"$out/smoke" "$out"
