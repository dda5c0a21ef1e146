#!/usr/bin/env bash
# Installs what attnc needs to build and test on Debian 12, when it is missing.
# Idempotent and quiet when everything is there. Fails with a clear message
# when something cannot be found or installed.
set -euo pipefail

# clang-22 and libclang-rt-22-dev: the sanitizer and fuzzing build
# (make fuzz-check, docs/fuzzing.md). python3-venv and binutils (readelf):
# the wheel, its ABI check and its install test (make wheel-check,
# docs/pytorch.md).
PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools cmake
          ninja-build g++ libgtest-dev python3 clang-22 libclang-rt-22-dev
          python3-venv binutils)
CUDA_ROOT="${ATTNC_CUDA_ROOT:-${CUDA_ROOT:-/usr/local/cuda}}"

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "setup: error: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: error: apt-get could not install ${missing[*]}" >&2
    exit 1
  fi
  rm -f "$log"
fi

for tool in mlir-tblgen lit FileCheck; do
  if [ ! -x "/usr/lib/llvm-22/bin/$tool" ]; then
    echo "setup: error: /usr/lib/llvm-22/bin/$tool not found after installing LLVM/MLIR 22" >&2
    exit 1
  fi
done

if [ ! -f "$CUDA_ROOT/include/cuda.h" ] || [ ! -x "$CUDA_ROOT/bin/ptxas" ]; then
  cat >&2 <<MSG
setup: error: the CUDA toolkit was not found.
  Looked for $CUDA_ROOT/include/cuda.h and $CUDA_ROOT/bin/ptxas
  (from ATTNC_CUDA_ROOT, else CUDA_ROOT, else /usr/local/cuda).
  Install the CUDA 13 toolkit there, or point the build at it:
    make check ATTNC_CUDA_ROOT=/path/to/cuda
MSG
  exit 1
fi
