//===- AttentionMask.h - causal masks as attention regions ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Causal attention is a mask region like any other. The passes that skip
// work for causal masks (tiles wholly above the diagonal are never visited)
// recognize the two causal forms here; everything else reads the region as
// a predicate.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTENTIONMASK_H
#define ATTNC_DIALECT_ATTNC_IR_ATTENTIONMASK_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

#include <optional>

namespace attnc {

/// A causal mask: key j visible to query i iff `j <= i` (top-left aligned,
/// PyTorch's is_causal) or iff `j + seqQ <= i + seqKV` (bottom-right: the
/// last query sees the last key; FlashAttention's causal when Sq != Skv).
struct CausalMask {
  enum class Alignment { TopLeft, BottomRight };
  Alignment alignment = Alignment::TopLeft;
  /// Bottom-right only: the query and key sequence lengths, values defined
  /// above the attention op.
  mlir::Value seqQ, seqKV;
};

/// The causal mask `mask` holds, or nullopt when it is empty or holds
/// another predicate.
std::optional<CausalMask> matchCausalMask(mlir::Region &mask);

/// Fills the empty region `mask` with the body of `causal`.
void buildCausalMask(mlir::OpBuilder &b, mlir::Location loc, mlir::Region &mask,
                     const CausalMask &causal);

/// Number and types of the block arguments of the two regions.
inline constexpr unsigned kMaskRegionArgs = 4;  // b, h, i, j : index
inline constexpr unsigned kScoreRegionArgs = 5; // s : f32, b, h, i, j : index

} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTENTIONMASK_H
