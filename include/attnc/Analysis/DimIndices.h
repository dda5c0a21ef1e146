//===- DimIndices.h - dimension queries that read past a shape --*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// `tensor.dim` and `memref.dim` verify with any constant index; one past the
// rank is undefined behaviour at run time, and upstream shape reasoning
// (ValueBoundsConstraintSet, which attnc's tiling and flash-form analysis
// use) reads out of bounds on it. attnc refuses such a query up front.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_DIMINDICES_H
#define ATTNC_ANALYSIS_DIMINDICES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace attnc {

/// Emits an error on every dim query under `root` whose constant index is
/// outside [0, rank) of its ranked source, and fails if there is one.
mlir::LogicalResult checkDimIndices(mlir::Operation *root);

} // namespace attnc

#endif // ATTNC_ANALYSIS_DIMINDICES_H
