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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>

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

/// One side of the keys a query sees, as a function of the query index
/// `d0`: an affine expression over `d0` and the symbols of its KeyInterval,
/// or the min or max of two such bounds.
struct KeyBound {
  enum class Kind { Affine, Min, Max };
  Kind kind = Kind::Affine;
  mlir::AffineExpr expr;
  std::shared_ptr<KeyBound> lhs, rhs;
};

/// A conjunct `qIds[.., i, ..] == kIds[.., j, ..]` of a mask region: ids
/// per query and per key position read from tensors defined above it (a
/// document mask). The reads' other indices are the region's batch or head
/// argument or constants; `queryDim` / `keyDim` is where i / j indexes.
struct IdMatch {
  mlir::Operation *queryRead, *keyRead;
  unsigned queryDim, keyDim;
};

/// The keys a mask region lets query i see, as an interval
/// `lo(i) <= j <= hi(i)` (a missing side is unbounded), where lo and hi never
/// decrease as i grows, intersected with the id matches `matches`: a query
/// tile's first and last rows then bound what the whole tile sees, and the
/// ids of its rows what the matches let it see (attnc.id_tile_bounds, at
/// run time). `exact` is false for the hull of a union that may have a gap,
/// or a conjunction with a conjunct of no such form (some key inside may
/// still be masked): then no tile is proven fully visible.
struct KeyInterval {
  std::shared_ptr<KeyBound> lo, hi;
  bool exact = true;
  llvm::SmallVector<IdMatch> matches;
  /// Values the bounds' symbols stand for: index values defined above the
  /// region, integers the region casts to index, and elements the region
  /// reads once per block (a `tensor.extract` in the region of a tensor
  /// from above at its batch and head arguments and constants; whoever
  /// evaluates the bounds reads them, see isRegionRead).
  llvm::SmallVector<mlir::Value> symbols;
  /// True when `symbol` is one of the region's per-block reads.
  static bool isRegionRead(mlir::Value symbol, mlir::Region &mask) {
    return mask.isAncestor(symbol.getParentRegion());
  }
};

/// The interval form of `mask`, or nullopt when the region is empty or is
/// not a conjunction / disjunction of signed comparisons that are linear in
/// the key index j (coefficient +-1, or j floordiv a positive constant) with
/// the rest affine in i and values from above, and of id matches (in
/// conjunctions only).
std::optional<KeyInterval> analyzeKeyInterval(mlir::Region &mask);

/// The predicate of the comparison with its operands swapped: `a slt b` is
/// `b sgt a`. Others than the signed orderings are returned unchanged.
mlir::arith::CmpIPredicate swapSignedOrder(mlir::arith::CmpIPredicate p);

/// Number and types of the block arguments of the two regions.
inline constexpr unsigned kMaskRegionArgs = 4;  // b, h, i, j : index
inline constexpr unsigned kScoreRegionArgs = 5; // s : f32, b, h, i, j : index

} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTENTIONMASK_H
