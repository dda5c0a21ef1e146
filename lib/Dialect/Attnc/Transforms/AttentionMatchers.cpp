//===- AttentionMatchers.cpp - pieces of attention in the graph -----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Use-def matchers for the scale (constant or run-time), softmax and
// causal-mask parts of an attention chain, in the spellings
// --attnc-fuse-attention recognises. They only read the IR; the pattern in
// FuseAttention.cpp decides whether the consumed ops may go.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

std::optional<double> attnc::getSplatFloatConstant(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr))
    if (dense.isSplat())
      return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

Value attnc::getRuntimeScalar(Value t) {
  auto fromElements = t.getDefiningOp<tensor::FromElementsOp>();
  if (!fromElements || fromElements.getElements().size() != 1)
    return {};
  Value scalar = fromElements.getElements().front();
  auto type = dyn_cast<FloatType>(scalar.getType());
  if (!type || type.getWidth() > 32)
    return {};
  return scalar;
}

std::optional<ScaleMatch> attnc::matchScale(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op || !isa<MulOp, DivOp>(op))
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (isa<MulOp>(op)) {
    for (auto [x, t] : {std::pair(lhs, rhs), std::pair(rhs, lhs)}) {
      Value scalar = getRuntimeScalar(t);
      if (scalar && x.getType() == v.getType())
        return ScaleMatch{x, 1.0, scalar, op};
    }
  }
  // The factor must broadcast into the scaled operand, not grow it.
  if (std::optional<double> c = getSplatFloatConstant(rhs);
      c && lhs.getType() == v.getType()) {
    if (isa<MulOp>(op))
      return ScaleMatch{lhs, *c, Value(), op};
    if (*c != 0.0)
      return ScaleMatch{lhs, 1.0 / *c, Value(), op};
    return std::nullopt;
  }
  if (std::optional<double> c = getSplatFloatConstant(lhs);
      c && isa<MulOp>(op) && rhs.getType() == v.getType())
    return ScaleMatch{rhs, *c, Value(), op};
  return std::nullopt;
}

std::optional<Value> attnc::matchSoftmax(Value v, MatchedOps &ops) {
  if (auto softmax = v.getDefiningOp<SoftmaxOp>()) {
    ops.insert(softmax);
    return softmax.getInput();
  }
  // div(e, reduce_sum(e)), the quotient shaped like e.
  auto div = v.getDefiningOp<DivOp>();
  if (!div || div.getType() != div.getLhs().getType())
    return std::nullopt;
  Value e = div.getLhs();
  auto sum = div.getRhs().getDefiningOp<ReduceSumOp>();
  auto exp = e.getDefiningOp<ExpOp>();
  if (!sum || !exp || sum.getInput() != e)
    return std::nullopt;
  // exp(sub(x, reduce_max(x))), or exp(x) when the max is not subtracted.
  Value x = exp.getInput();
  SmallVector<Operation *> maxOps;
  if (auto sub = x.getDefiningOp<SubOp>()) {
    auto max = sub.getRhs().getDefiningOp<ReduceMaxOp>();
    if (max && max.getInput() == sub.getLhs() &&
        sub.getType() == sub.getLhs().getType()) {
      maxOps = {sub, max};
      x = sub.getLhs();
    }
  }
  ops.insert(div);
  ops.insert(sum);
  ops.insert(exp);
  ops.insert(maxOps.begin(), maxOps.end());
  return x;
}

namespace {
/// Which index an iota gives once broadcast against the scores.
enum class IotaRole { None, Row, Col };
} // namespace

/// Extent `d` of a mask operand may stand for extent `s` of the scores only
/// when it does not stretch: a static 1 against anything else would repeat
/// index 0.
static bool indexExtentMatches(int64_t d, int64_t s) {
  return d == s ||
         (d != 1 && (ShapedType::isDynamic(d) || ShapedType::isDynamic(s)));
}

static IotaRole classifyIota(Value v, RankedTensorType scores) {
  if (!v)
    return IotaRole::None;
  auto iota = v.getDefiningOp<IotaOp>();
  if (!iota)
    return IotaRole::None;
  RankedTensorType t = iota.getType();
  int64_t rank = t.getRank(), dim = iota.getDimension();
  if (rank < 2 || rank > scores.getRank())
    return IotaRole::None;
  int64_t scoresDim = scores.getRank() - (rank - dim);
  if (!indexExtentMatches(t.getDimSize(dim), scores.getDimSize(scoresDim)))
    return IotaRole::None;
  if (dim == rank - 2)
    return IotaRole::Row;
  if (dim == rank - 1)
    return IotaRole::Col;
  return IotaRole::None;
}

/// The offset `t` holds: the scalar of a one-element i64
/// `tensor.from_elements`, or an i64 splat constant.
static std::optional<IndexOffset> matchOffset(Value t) {
  if (auto fromElements = t.getDefiningOp<tensor::FromElementsOp>()) {
    if (fromElements.getElements().size() != 1 ||
        !fromElements.getElements().front().getType().isInteger(64))
      return std::nullopt;
    return IndexOffset{fromElements.getElements().front()};
  }
  Attribute attr;
  if (!matchPattern(t, m_Constant(&attr)))
    return std::nullopt;
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense || !dense.isSplat() || !dense.getElementType().isInteger(64))
    return std::nullopt;
  return IndexOffset{Value(), dense.getSplatValue<APInt>().getSExtValue()};
}

namespace {
/// One side of a mask comparison: an iota, possibly shifted.
struct IndexOperand {
  IotaRole role = IotaRole::None;
  std::optional<IndexOffset> offset;
  SmallVector<Operation *> ops;
};
} // namespace

/// `v` as an iota, `iota + offset`, `offset + iota` or `iota - offset`,
/// where the offset broadcasts into the iota without growing it.
static IndexOperand classifyIndex(Value v, RankedTensorType scores) {
  IndexOperand result;
  if ((result.role = classifyIota(v, scores)) != IotaRole::None) {
    result.ops = {v.getDefiningOp()};
    return result;
  }
  Operation *shift = v.getDefiningOp();
  if (!shift || !isa<AddOp, SubOp>(shift))
    return result;
  Value lhs = shift->getOperand(0), rhs = shift->getOperand(1);
  SmallVector<std::tuple<Value, Value, int64_t>, 2> candidates = {
      {lhs, rhs, isa<AddOp>(shift) ? 1 : -1}};
  if (isa<AddOp>(shift))
    candidates.push_back({rhs, lhs, 1});
  for (auto [iota, t, sign] : candidates) {
    std::optional<IndexOffset> offset = matchOffset(t);
    IotaRole role = classifyIota(iota, scores);
    if (!offset || role == IotaRole::None || iota.getType() != v.getType())
      continue;
    offset->sign = sign;
    result.role = role;
    result.offset = offset;
    result.ops = {shift, iota.getDefiningOp()};
    if (Operation *def = t.getDefiningOp();
        isa_and_nonnull<tensor::FromElementsOp>(def))
      result.ops.push_back(def);
    return result;
  }
  return result;
}

/// `a P b` == `b swap(P) a`.
static CmpPredicate swapPredicate(CmpPredicate p) {
  switch (p) {
  case CmpPredicate::lt:
    return CmpPredicate::gt;
  case CmpPredicate::le:
    return CmpPredicate::ge;
  case CmpPredicate::gt:
    return CmpPredicate::lt;
  case CmpPredicate::ge:
    return CmpPredicate::le;
  default:
    return p;
  }
}

/// `!(a P b)` == `a negate(P) b`.
static CmpPredicate negatePredicate(CmpPredicate p) {
  switch (p) {
  case CmpPredicate::eq:
    return CmpPredicate::ne;
  case CmpPredicate::ne:
    return CmpPredicate::eq;
  case CmpPredicate::lt:
    return CmpPredicate::ge;
  case CmpPredicate::le:
    return CmpPredicate::gt;
  case CmpPredicate::gt:
    return CmpPredicate::le;
  case CmpPredicate::ge:
    return CmpPredicate::lt;
  }
  llvm_unreachable("unknown predicate");
}

static bool isMaskFill(Value v) {
  std::optional<double> c = getSplatFloatConstant(v);
  return c && *c <= kMaskFillThreshold;
}

MaskMatch attnc::matchMask(Value v) {
  MaskMatch result;
  auto select = v.getDefiningOp<SelectOp>();
  if (!select)
    return result;
  auto scores = cast<RankedTensorType>(v.getType());
  // select(keep, x, fill) or select(drop, fill, x).
  bool fillOnTrue;
  Value x;
  if (isMaskFill(select.getFalseValue()) &&
      select.getTrueValue().getType() == scores) {
    fillOnTrue = false;
    x = select.getTrueValue();
  } else if (isMaskFill(select.getTrueValue()) &&
             select.getFalseValue().getType() == scores) {
    fillOnTrue = true;
    x = select.getFalseValue();
  } else {
    return result;
  }
  auto cmp = select.getCondition().getDefiningOp<CmpOp>();
  if (!cmp)
    return result;
  IndexOperand lhsIndex = classifyIndex(cmp.getLhs(), scores);
  IndexOperand rhsIndex = classifyIndex(cmp.getRhs(), scores);
  IotaRole lhs = lhsIndex.role, rhs = rhsIndex.role;
  if (lhs == IotaRole::None || rhs == IotaRole::None)
    return result;

  result.input = x;
  result.infiniteFill = std::isinf(*getSplatFloatConstant(
      fillOnTrue ? select.getTrueValue() : select.getFalseValue()));
  result.ops.insert(select);
  result.ops.insert(cmp);
  result.ops.insert(lhsIndex.ops.begin(), lhsIndex.ops.end());
  result.ops.insert(rhsIndex.ops.begin(), rhsIndex.ops.end());
  result.kind = MaskKind::Other;
  if (lhs == rhs || (lhsIndex.offset && rhsIndex.offset))
    return result;
  // `row + a P col + c` keeps the same keys as `row + (a - c) P col`.
  const IndexOperand &rowSide = lhs == IotaRole::Row ? lhsIndex : rhsIndex;
  const IndexOperand &colSide = lhs == IotaRole::Row ? rhsIndex : lhsIndex;
  if (rowSide.offset) {
    result.offset = rowSide.offset;
  } else if (colSide.offset) {
    result.offset = colSide.offset;
    result.offset->sign = -result.offset->sign;
  }
  // Normalise to `row P col` = the condition that keeps key col for query row.
  CmpPredicate p = cmp.getPredicate();
  if (lhs == IotaRole::Col)
    p = swapPredicate(p);
  if (fillOnTrue)
    p = negatePredicate(p);
  if (p == CmpPredicate::ge)
    result.kind = MaskKind::Causal;
  else
    result.offset.reset();
  return result;
}
