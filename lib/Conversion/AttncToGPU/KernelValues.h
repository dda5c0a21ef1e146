//===- KernelValues.h - a form's index values rebuilt in a kernel -*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Rebuilds the index values of a loop nest (tile starts, loop bounds, GQA
// head maps) and its mask and score regions inside the kernel that lowers
// it. The kernel builder supplies its values of the nest's leaves (size
// parameters, a run-time scale); block indices and loop induction
// variables go into the scope.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_KERNELVALUES_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_KERNELVALUES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace attnc {

class KernelValues {
public:
  /// The kernel value of leaf `v`, null when `v` is not a leaf, or failure
  /// after a diagnostic (a leaf the kernel has no value for).
  using LeafFn = std::function<mlir::FailureOr<mlir::Value>(mlir::Value)>;

  KernelValues(mlir::OpBuilder &b, mlir::Location loc, LeafFn leaf)
      : b(b), loc(loc), leaf(std::move(leaf)) {}

  /// `v` in the kernel: from `scope`, a leaf, or its index computation
  /// cloned (arith, math, affine expanded with unsigned divisions where the
  /// operands are provably non-negative). Fails with a diagnostic on
  /// anything else.
  mlir::FailureOr<mlir::Value> materialize(mlir::Value v,
                                           mlir::IRMapping &scope);
  mlir::FailureOr<mlir::Value> materialize(mlir::OpFoldResult v,
                                           mlir::IRMapping &scope);
  /// The value region `r` (a mask or score region: arith and math only)
  /// yields for block arguments `args`, its body cloned in place; with
  /// `result` (a value of the region), that value instead. `convert`, when
  /// given, may compute an arith.sitofp of the region its own way (null:
  /// cloned as it is), and, called with a factor, the product of that
  /// factor and the conversion: an arith.mulf of a conversion by a value
  /// that is the same for every score of a block (no score or position
  /// depends on it).
  using ConvertFn = llvm::function_ref<mlir::Value(mlir::arith::SIToFPOp,
                                                   mlir::Value factor)>;
  mlir::FailureOr<mlir::Value> cloneRegion(mlir::Region &r,
                                           llvm::ArrayRef<mlir::Value> args,
                                           mlir::IRMapping &scope,
                                           mlir::Value result = {},
                                           ConvertFn convert = {});

  /// How a region's tensor.extract of a tensor from above becomes a load,
  /// given the read's indices in the kernel (a value per query or key
  /// position); unset, regions hold no reads.
  using ReadFn = std::function<mlir::FailureOr<mlir::Value>(
      mlir::tensor::ExtractOp, llvm::ArrayRef<mlir::Value>)>;
  ReadFn readElement;
  /// readElement of a region's `read` of a tensor from above, its indices
  /// the region's values in `m` (block arguments, cloned ops) or else
  /// constants or values from above, materialized.
  mlir::FailureOr<mlir::Value> readRegionElement(mlir::tensor::ExtractOp read,
                                                 const mlir::IRMapping &m,
                                                 mlir::IRMapping &scope);

private:
  mlir::FailureOr<mlir::Value> expandAffine(mlir::Operation *def,
                                            mlir::IRMapping &scope);

  mlir::OpBuilder &b;
  mlir::Location loc;
  LeafFn leaf;
};

} // namespace attnc

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_KERNELVALUES_H
