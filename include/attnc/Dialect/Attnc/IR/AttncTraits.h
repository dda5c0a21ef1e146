//===- AttncTraits.h - traits shared by attnc ops ---------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCTRAITS_H
#define ATTNC_DIALECT_ATTNC_IR_ATTNCTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace attnc {
/// Most elements a static tensor of an attnc op may have: 2^56, so that its
/// byte size and the FLOP and index arithmetic of every layer (products of a
/// few such counts with small constants) stay inside 64 bits.
constexpr int64_t kMaxTensorElements = int64_t(1) << 56;

/// Fails with a diagnostic naming the operand or result whose static shape
/// has more than kMaxTensorElements elements (or whose extents overflow
/// 64 bits when multiplied).
mlir::LogicalResult verifyTensorSizes(mlir::Operation *op);

/// Every attnc op: no tensor larger than kMaxTensorElements.
template <typename ConcreteType>
class TensorSizesFit
    : public mlir::OpTrait::TraitBase<ConcreteType, TensorSizesFit> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyTensorSizes(op);
  }
};
} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCTRAITS_H
