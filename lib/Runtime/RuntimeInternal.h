//===- RuntimeInternal.h - Shared state of the runtime's C API ---*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The structs behind the opaque handles of attnc-c/Runtime.h and the helpers
// the three parts of the runtime share: Manifest.cpp fills Module/Kernel from
// manifest.json, Validate.cpp turns call arguments into a Plan, Runtime.cpp
// loads cubins and launches. Nothing here includes cuda.h: the CUDA handles
// are kept as opaque pointers so the CPU-only parts never depend on it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_RUNTIMEINTERNAL_H
#define ATTNC_LIB_RUNTIME_RUNTIMEINTERNAL_H

#include "attnc-c/Runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attnc::rt {

/// One entry of a tensor shape: static when `symbol` is empty.
struct Dim {
  int64_t extent = -1;
  std::string symbol;
};

struct Param {
  std::string name;
  attnc_param_kind kind = ATTNC_PARAM_TENSOR;
  attnc_dtype dtype = ATTNC_DTYPE_INVALID;
  // Tensor only.
  std::vector<Dim> shape;
  attnc_role role = ATTNC_ROLE_NONE;
  int64_t align = 16;
  /// Alignment, in bytes, every outer stride must have (0: none).
  int64_t rowAlign = 0;
  bool contiguousLast = true;
  // Stride only: `tensorIndex` is the parameter index of `tensor`.
  std::string tensor;
  int32_t dim = 0;
  int64_t tensorIndex = -1;
};

/// ceil(symbol / ceilDiv) when `symbol` is set, else `value`.
struct GridFactor {
  int64_t value = 1;
  std::string symbol;
  int64_t ceilDiv = 1;
};

} // namespace attnc::rt

// The opaque handle types are defined at global scope, where the C header
// declared them.
struct attnc_kernel {
  attnc_module *module = nullptr;
  std::string name;
  std::string entry; // function symbol in the cubin
  std::string kind;
  std::string cubin; // file name relative to the module directory
  std::vector<attnc::rt::Param> params;
  std::vector<attnc::rt::GridFactor> grid[3];
  int64_t block[3] = {1, 1, 1};
  int64_t sharedMemoryBytes = 0;
  std::map<std::string, std::string> attrs;
  /// Loaded functions, one per CUDA context (CUcontext -> CUfunction).
  std::vector<std::pair<void *, void *>> functions;
};

struct attnc_module {
  std::string dir; // empty: not launchable
  std::string name;
  std::string chip;
  std::vector<std::unique_ptr<attnc_kernel>> kernels;
  /// Loaded cubins (CUcontext, CUmodule), for unloading.
  std::vector<std::pair<void *, void *>> cuModules;
  std::mutex gpuMutex;
};

struct attnc_plan {
  const attnc_kernel *kernel = nullptr;
  int64_t grid[3] = {1, 1, 1};
  bool empty = false;
  std::vector<std::pair<std::string, int64_t>> symbols;
  /// Packed parameters: bytes[offsets[i] .. offsets[i] + sizes[i]).
  std::vector<uint64_t> storage; // 8-byte slots keep every value aligned
  std::vector<size_t> offsets;
  std::vector<size_t> sizes;
};

namespace attnc::rt {

/// Records MESSAGE as this thread's last error and returns STATUS.
attnc_status fail(attnc_status status, std::string message);
/// Clears the last error and returns ATTNC_OK.
attnc_status ok();

/// Shape as text, e.g. "[B, H, Sq, 128]".
std::string formatShape(const std::vector<Dim> &shape);

/// Rank of tensor parameter P.
inline int32_t rankOf(const Param &p) {
  return static_cast<int32_t>(p.shape.size());
}

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_RUNTIMEINTERNAL_H
