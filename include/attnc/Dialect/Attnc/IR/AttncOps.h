//===- AttncOps.h - attnc ops -----------------------------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_H
#define ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_H

#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ParallelCombiningOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attnc/Dialect/Attnc/IR/AttentionMask.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncTraits.h"

#define GET_OP_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncOps.h.inc"

namespace mlir::arith {
enum class CmpIPredicate : uint64_t;
} // namespace mlir::arith

namespace attnc {
/// The NumPy broadcast of two shapes (trailing dimensions aligned, static 1
/// stretches, a dynamic extent is never broadcast), or failure when two
/// static extents other than 1 differ.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True for the ops a `attnc.fusion` body may hold and that
/// --attnc-fuse-elementwise gathers: elementwise, broadcast and row ops
/// (add and sub on floats only).
bool isFusibleElementwiseOp(mlir::Operation *op);

/// `p` as the signed integer comparison of i64 or index values: positions and
/// their differences (`i - j`) compare as signed numbers.
mlir::arith::CmpIPredicate toSignedCmpIPredicate(CmpPredicate p);
} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_H
