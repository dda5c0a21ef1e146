//===- KernelVersions.h - a kernel in versions by size ----------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A kernel may come in versions with other tiles, each faster for some
// sizes. The IR writes them as multi-versioning: an `scf.if` directly in the
// function body whose condition compares sizes (`tensor.dim` of a function
// argument) with constants, with one kernel in its `then` region and, in its
// `else` region, either the default kernel or another such `scf.if` (a
// size may also be at most a constant times another size: `arith.muli`). Every
// version computes the same results from the same operands; which one runs
// is the host's choice by size (the manifest's `variants`, docs/abi.md).
// The analyses that count kernels (the no-S x S check, the intensity
// report) and the GPU lowering read the versions through this file.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_KERNELVERSIONS_H
#define ATTNC_ANALYSIS_KERNELVERSIONS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace attnc {

/// `dim` of `tensor` >= value (Min) or <= value (Max); with a `per` size,
/// <= value times that size (Max only: a ragged batch's rows at most
/// `value` per sequence).
struct SizeCondition {
  enum class Kind { Min, Max };
  mlir::Value tensor;
  int64_t dim;
  Kind kind;
  int64_t value;
  mlir::Value perTensor = {};
  int64_t perDim = -1;
};

/// One version of a kernel: its kernel op and the sizes it runs for (all
/// conditions hold); the default, last, has none.
struct KernelVersion {
  mlir::Operation *kernel;
  llvm::SmallVector<SizeCondition> when;
};

/// True when `op` is an scf.if with a kernel op (GlobalBuffers.h's
/// isKernelOp) in its regions: a kernel in versions, which
/// readKernelVersions reads (or refuses).
bool isVersionedKernel(mlir::Operation *op);

/// The versions of `op` in the order a host tries them, the default last.
/// Emits a diagnostic on `op` naming the rule and fails when `op` is not a
/// versioned kernel as described above.
mlir::FailureOr<llvm::SmallVector<KernelVersion>>
readKernelVersions(mlir::scf::IfOp op);

/// The version whose conditions `sizeOf` (the extent of a tensor's
/// dimension, or none when unknown) meets first; the default when a size
/// is unknown. `versions` as readKernelVersions returns them.
const KernelVersion &selectKernelVersion(
    llvm::ArrayRef<KernelVersion> versions,
    llvm::function_ref<std::optional<int64_t>(mlir::Value, int64_t)> sizeOf);

} // namespace attnc

#endif // ATTNC_ANALYSIS_KERNELVERSIONS_H
