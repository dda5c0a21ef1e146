//===- KernelABI.h - What a host needs to launch a kernel -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The launch contract of one generated kernel: its parameters in order, the
// grid and block rule and its dynamic shared memory. Kernel builders fill it;
// attnc-compile serializes it as the manifest described in docs/abi.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_KERNELABI_H
#define ATTNC_CONVERSION_KERNELABI_H

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace attnc {

/// One entry of a tensor's shape: a static extent or a size symbol.
using ABIDim = std::variant<int64_t, std::string>;

/// One kernel parameter, in launch order (docs/abi.md, "Kernel parameters").
struct ABIParam {
  enum class Kind { Tensor, Size, Stride, Scalar };
  Kind kind;
  std::string name;
  /// Element type for tensors; value type for sizes, strides and scalars.
  std::string dtype;
  /// Tensor only.
  std::vector<ABIDim> shape;
  std::string role; // "input" or "output"
  int64_t align = 16;
  /// Alignment every outer stride must have, bytes (0: none; docs/abi.md).
  int64_t rowAlign = 0;
  /// Stride only: which tensor and dimension.
  std::string tensor;
  int64_t dim = 0;
};

/// One factor of a grid extent: `value` when `sym` is empty, else
/// ceil(sym / ceilDiv).
struct GridFactor {
  int64_t value = 1;
  std::string sym;
  int64_t ceilDiv = 1;
};

/// Everything a host needs to launch one kernel.
struct KernelABI {
  std::string name;
  std::string kind; // "attention" or "fusion"
  std::vector<ABIParam> params;
  std::vector<GridFactor> grid[3];
  int64_t block[3] = {1, 1, 1};
  int64_t dynamicSharedMemoryBytes = 0;
  /// What was compiled in (causal, scale, tile sizes, ...), as JSON scalars
  /// rendered to text.
  std::map<std::string, std::string> attrs;
};

/// The kernel's entry of the manifest (docs/abi.md), without the file
/// names, as JSON text.
std::string kernelABIToJSON(const KernelABI &abi);

} // namespace attnc

#endif // ATTNC_CONVERSION_KERNELABI_H
