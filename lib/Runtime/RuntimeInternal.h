//===- RuntimeInternal.h - Shared state of the runtime ----------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The structs behind the opaque handles of attnc-c/Runtime.h and the helpers
// the parts of the runtime share: Manifest.cpp fills Module/Kernel from
// manifest.json (KernelQueries.cpp answers questions about them),
// Validate.cpp and Plan.cpp turn call arguments into a Plan, Runtime.cpp
// loads cubins, encodes tensormaps and launches. Nothing here includes
// cuda.h: the CUDA handles are kept as opaque pointers and the tensormap
// request in plain types, so the CPU-only parts never depend on it.
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

/// A factor of a grid extent or of a workspace's byte size: `value`,
/// ceil(symbol / ceilDiv), or the device's SM count.
struct Factor {
  attnc_factor_kind kind = ATTNC_FACTOR_CONSTANT;
  int64_t value = 1;
  std::string symbol;
  int64_t ceilDiv = 1;
  /// A symbol added to ceil(symbol / ceilDiv); empty for none.
  std::string plus;

  /// The size symbols it reads: none unless ATTNC_FACTOR_SYMBOL, else its
  /// dividend and the one it adds.
  std::vector<const std::string *> symbols() const {
    if (kind != ATTNC_FACTOR_SYMBOL)
      return {};
    if (plus.empty())
      return {&symbol};
    return {&symbol, &plus};
  }
};

struct Param {
  std::string name;
  attnc_param_kind kind = ATTNC_PARAM_TENSOR;
  /// The element type (tensor; tensormap: its tensor's) or value type.
  attnc_dtype dtype = ATTNC_DTYPE_INVALID;
  // Tensor only.
  std::vector<Dim> shape;
  attnc_role role = ATTNC_ROLE_NONE;
  int64_t align = 16;
  /// Alignment, in bytes, every outer stride must have (0: none).
  int64_t rowAlign = 0;
  bool contiguousLast = true;
  // Stride and tensormap: `tensorIndex` is the parameter index of `tensor`.
  std::string tensor;
  int32_t dim = 0;
  int64_t tensorIndex = -1;
  // Tensormap only: box in elements, outermost first as in the manifest.
  std::vector<int64_t> box;
  int32_t swizzle = 0;
  bool oobFillNaN = false;
  // Workspace only: the product of `bytes` is the minimum size.
  std::vector<Factor> bytes;
  bool zeroInit = false;
  /// Workspace only, optional: its typed view, a contiguous row-major
  /// array a tensormap may map (viewDtype INVALID: none).
  attnc_dtype viewDtype = ATTNC_DTYPE_INVALID;
  std::vector<Dim> viewShape;
};

struct Constraint {
  attnc_constraint_kind kind = ATTNC_CONSTRAINT_DIVISIBLE;
  std::string lhs, rhs; // min: lhs is the symbol, rhs is empty
  int64_t value = 0;    // min only
};

/// A kernel of the same module that runs a kernel's calls whose sizes meet
/// `when` (the manifest's `variants`): the same computation with other
/// tiles, which measured faster there. Resolved once every kernel is read.
struct Variant {
  std::string kernelName;
  const attnc_kernel *kernel = nullptr;
  std::vector<Constraint> when;
};

/// How to choose a size symbol that the caller picks (the manifest's
/// size_rules): kv_splits from the grid with `symbol` set to 1, the K/V
/// tiles of a row (the product of `kvTiles`), `max` and `ctasPerSM`.
struct SizeRule {
  attnc_size_rule_kind kind = ATTNC_SIZE_RULE_KV_SPLITS;
  std::string symbol;
  std::vector<Factor> kvTiles;
  int64_t max = 1;
  int64_t ctasPerSM = 1;
};

/// The largest `max` of a kv_splits rule.
constexpr int64_t kMaxKVSplits = 128;

/// The kv_splits rule (one wave, in integers): the split count for CTAS
/// blocks with one split,
/// TILES K/V tiles per row and SLOTS = num_sms * ctas_per_sm blocks
/// resident at once, at most MAX (docs/abi.md). Always in [1, MAX].
int64_t kvSplits(uint64_t ctas, uint64_t tiles, uint64_t slots, int64_t max);

/// CUDA's limits on gridDim.x, .y and .z: the manifest reader refuses grid
/// constants beyond them, the plan computed extents.
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};

/// Bytes and alignment of a tensormap kernel parameter (a CUtensorMap). The
/// driver needs 64-byte alignment; cuda.h declares the type alignas(128), and
/// C++ (the runtime, a driver stand-in) may only form a CUtensorMap* to
/// memory aligned as its type says.
constexpr size_t kTensorMapBytes = 128;
constexpr size_t kTensorMapAlign = 128;

/// What cuTensorMapEncodeTiled needs, in the driver's order: dimension 0 is
/// the innermost. `strides` holds the rank - 1 outer strides in bytes.
struct TensorMapRequest {
  attnc_dtype dtype = ATTNC_DTYPE_INVALID;
  uint64_t address = 0;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box;
  int32_t swizzle = 0;
  bool oobFillNaN = false;
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
  std::vector<attnc::rt::Factor> grid[3];
  std::vector<attnc::rt::Constraint> constraints;
  std::vector<attnc::rt::SizeRule> sizeRules;
  int64_t block[3] = {1, 1, 1};
  int64_t sharedMemoryBytes = 0;
  /// Registers per thread (the manifest's `registers`), 0 when unknown.
  int64_t registers = 0;
  std::map<std::string, std::string> attrs;
  /// The manifest's `fallback`: the kernel of the same module that runs the
  /// calls this one refuses and it accepts (TMA or alignment rules it cannot
  /// meet). Resolved, and checked to take the same arguments, once every
  /// kernel of the module is read; null when there is none.
  std::string fallbackName;
  const attnc_kernel *fallback = nullptr;
  /// The manifest's `unsplit`, on a split-KV partial kernel: the kernel of
  /// the same module that computes the function's result in one launch,
  /// which a host runs instead of this kernel and the combine when the
  /// `splits` size rule gives 1. Resolved like the fallback; null when none.
  std::string unsplitName;
  const attnc_kernel *unsplit = nullptr;
  /// The manifest's `variants`, in order: a plan of this kernel runs the
  /// first whose `when` the call's sizes meet and that accepts the call.
  std::vector<attnc::rt::Variant> variants;
  /// The manifest's `programmatic_launch`: the kernel waits for the grids
  /// before it (griddepcontrol.wait) before touching global memory, so it is
  /// launched with programmatic stream serialization.
  bool programmaticLaunch = false;
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
  /// Per parameter: the workspace's required bytes (0 for other kinds), and
  /// its pointer, zeroed before each launch when the manifest says so.
  std::vector<uint64_t> workspaceBytes;
  std::vector<uint64_t> workspaceData;
  /// Packed parameters: bytes[offsets[i] .. offsets[i] + sizes[i]). Each
  /// value sits at a multiple of its alignment (128 for a CUtensorMap) from
  /// a 128-byte aligned start, as the driver copies it from there.
  struct alignas(attnc::rt::kTensorMapAlign) Chunk {
    unsigned char bytes[attnc::rt::kTensorMapAlign];
  };
  std::vector<Chunk> storage;
  std::vector<size_t> offsets;
  std::vector<size_t> sizes;

  unsigned char *param(size_t i) {
    return reinterpret_cast<unsigned char *>(storage.data()) + offsets[i];
  }
  const unsigned char *param(size_t i) const {
    return reinterpret_cast<const unsigned char *>(storage.data()) + offsets[i];
  }
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

/// True when some extent of `t` is 0.
inline bool hasNoElements(const attnc_tensor &t) {
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] == 0)
      return true;
  return false;
}

/// V as "0x1f0".
std::string hexText(uint64_t v);
/// A dtype's name, "<invalid>" for a value that is none.
const char *dtypeText(attnc_dtype d);
/// A product of factors as text, e.g. "num_sms*ceil(Sq/64)",
/// "ceil(T/128)+B" (a sum in parentheses when it has co-factors); "" for
/// none.
std::string productText(const std::vector<Factor> &factors);

// The GPU half (Runtime.cpp) as the CPU half needs it at plan time; both
// load the driver on first use and fail with ATTNC_ERROR_NO_DRIVER without
// one.

/// The multiprocessor count of the current context's device, or of device
/// 0 when no context is current (the device a launch would then use).
attnc_status deviceNumSMs(int64_t &numSMs);
/// Encodes REQUEST with cuTensorMapEncodeTiled into OUT (kTensorMapBytes,
/// kTensorMapAlign-aligned). WHAT names the parameter in errors.
attnc_status encodeTensorMap(const TensorMapRequest &request, void *out,
                             const std::string &what);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_RUNTIMEINTERNAL_H
