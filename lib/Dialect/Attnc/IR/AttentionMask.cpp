//===- AttentionMask.cpp - causal masks as attention regions --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Builds and recognizes the two causal mask bodies. Recognition is by
// use-def on the yielded i1, in the forms buildCausalMask writes and their
// mirror images (operands swapped with the predicate reversed).
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttentionMask.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace attnc;

/// `lhs <= rhs` as an unsigned or signed comparison of `cmp`, with its
/// operands in that order; nullopt for other predicates.
static std::optional<std::pair<Value, Value>>
matchLessEqual(arith::CmpIOp cmp) {
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::ule:
  case arith::CmpIPredicate::sle:
    return std::make_pair(cmp.getLhs(), cmp.getRhs());
  case arith::CmpIPredicate::uge:
  case arith::CmpIPredicate::sge:
    return std::make_pair(cmp.getRhs(), cmp.getLhs());
  default:
    return std::nullopt;
  }
}

/// `arg + other` (either order) where `other` is defined outside `region`.
static Value matchAddOfOuter(Value v, BlockArgument arg, Region &region) {
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return {};
  for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                      std::pair(add.getRhs(), add.getLhs())})
    if (x == arg && !region.isAncestor(y.getParentRegion()))
      return y;
  return {};
}

std::optional<CausalMask> attnc::matchCausalMask(Region &mask) {
  if (mask.empty())
    return std::nullopt;
  Block &body = mask.front();
  if (body.getNumArguments() != kMaskRegionArgs)
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  auto cmp = yield.getValues()[0].getDefiningOp<arith::CmpIOp>();
  std::optional<std::pair<Value, Value>> le =
      cmp ? matchLessEqual(cmp) : std::nullopt;
  if (!le)
    return std::nullopt;
  BlockArgument i = body.getArgument(2), j = body.getArgument(3);
  if (le->first == j && le->second == i)
    return CausalMask{};
  Value seqQ = matchAddOfOuter(le->first, j, mask);
  Value seqKV = matchAddOfOuter(le->second, i, mask);
  if (seqQ && seqKV)
    return CausalMask{CausalMask::Alignment::BottomRight, seqQ, seqKV};
  return std::nullopt;
}

void attnc::buildCausalMask(OpBuilder &b, Location loc, Region &mask,
                            const CausalMask &causal) {
  OpBuilder::InsertionGuard guard(b);
  Type index = b.getIndexType();
  SmallVector<Type> types(kMaskRegionArgs, index);
  SmallVector<Location> locs(kMaskRegionArgs, loc);
  Block *body = b.createBlock(&mask, {}, types, locs);
  Value i = body->getArgument(2), j = body->getArgument(3);
  Value lhs = j, rhs = i;
  if (causal.alignment == CausalMask::Alignment::BottomRight) {
    // j + Sq <= i + Skv: both sides are non-negative, so the unsigned
    // comparison is exact even when Skv < Sq.
    lhs = arith::AddIOp::create(b, loc, j, causal.seqQ);
    rhs = arith::AddIOp::create(b, loc, i, causal.seqKV);
  }
  Value keep =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, lhs, rhs);
  YieldOp::create(b, loc, keep);
}
