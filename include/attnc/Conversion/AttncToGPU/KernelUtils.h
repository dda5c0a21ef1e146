//===- KernelUtils.h - helpers shared by the kernel builders ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H
#define ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H

#include "mlir/IR/Builders.h"

#include <string>

namespace attnc {

/// The manifest's name of an element or scalar type (docs/abi.md):
/// bf16, f16, f32, f64, i1, i8, i32, i64; "" when it has none.
std::string mlirTypeToDType(mlir::Type type);

/// Element types the kernels read and write: bf16, f16, f32.
bool isSupportedDType(mlir::Type type);

/// Wraps a bare global pointer (a kernel parameter) into memref<?xT, 1> by
/// building the LLVM memref descriptor; reconcile-unrealized-casts folds the
/// cast away once memref ops are lowered, so the kernel keeps its plain
/// pointer parameter and its body can use memref and vector ops.
mlir::Value wrapGlobalPointer(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value ptr, mlir::Type elemType);

/// `v` (an index) through an opaque, side-effecting register move: LLVM
/// can neither merge the result with other computations of the same value
/// nor recompute it from its operands, nor hoist what is built on it out of
/// a loop. Used to shape live ranges where LLVM's choices cost registers in
/// a kernel's hot loop.
mlir::Value opaqueIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H
