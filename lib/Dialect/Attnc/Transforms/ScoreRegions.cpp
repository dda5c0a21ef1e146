//===- ScoreRegions.cpp - graph masks and modifiers as regions ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The tensor-to-scalar rewrite behind the general masks and score modifiers
// of --attnc-fuse-attention. Index values become `index` (an iota of score
// dimension d is region argument d, so a tensor's broadcasting is the
// region's argument choice), i64 division is floor division as in the graph,
// and comparisons are signed: index differences such as `i - j` are
// negative for half the matrix.
//
//===----------------------------------------------------------------------===//

#include "ScoreRegions.h"

#include "attnc/Dialect/Attnc/IR/AttentionMask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

/// Rank of the scores: [batch, heads, Sq, Skv].
static constexpr int64_t kScoresRank = 4;

/// The score dimension (0 b, 1 h, 2 i, 3 j) an iota stands for once
/// broadcast against `scores`, or -1 when it would stretch a static 1.
static int64_t iotaScoreDim(IotaOp iota, RankedTensorType scores) {
  RankedTensorType t = iota.getType();
  int64_t rank = t.getRank(), dim = iota.getDimension();
  if (rank > kScoresRank || scores.getRank() != kScoresRank)
    return -1;
  int64_t sd = kScoresRank - (rank - dim);
  int64_t d = t.getDimSize(dim), s = scores.getDimSize(sd);
  bool matches =
      d == s ||
      (d != 1 && (ShapedType::isDynamic(d) || ShapedType::isDynamic(s)));
  return matches ? sd : -1;
}

/// The i64 scalar of a one-element `tensor.from_elements`.
static Value runtimeIndexScalar(Value v) {
  auto fromElements = v.getDefiningOp<tensor::FromElementsOp>();
  if (!fromElements || fromElements.getElements().size() != 1 ||
      !fromElements.getElements().front().getType().isInteger(64))
    return {};
  return fromElements.getElements().front();
}

static std::optional<int64_t> splatIndexConstant(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isInteger(64))
    return std::nullopt;
  return attr.getSplatValue<APInt>().getSExtValue();
}

/// The score dimensions (0 b, 1 h, 2 i, 3 j) along which function argument
/// `v` varies once broadcast against `scores` (right-aligned; its other
/// extents are 1), or nullopt when `v` is not a function argument that
/// broadcasts into the scores without stretching them.
static std::optional<SmallVector<int64_t>>
argumentScoreDims(Value v, RankedTensorType scores) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!arg || !type ||
      !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) ||
      type.getRank() > kScoresRank || scores.getRank() != kScoresRank)
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t sd = kScoresRank - type.getRank() + d, n = type.getDimSize(d);
    if (n == 1)
      continue;
    int64_t s = scores.getDimSize(sd);
    if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(s) && n != s)
      return std::nullopt;
    dims.push_back(sd);
  }
  return dims;
}

/// A function argument holding one value per batch and head of `scores`
/// (an ALiBi slope).
static bool isPerBlockArgument(Value v, RankedTensorType scores) {
  std::optional<SmallVector<int64_t>> dims = argumentScoreDims(v, scores);
  return dims && llvm::all_of(*dims, [](int64_t d) { return d < 2; });
}

/// A function argument holding one value per query or per key position
/// (and batch and head): a document id per token, never one per (i, j).
static bool isPerPositionArgument(Value v, RankedTensorType scores) {
  std::optional<SmallVector<int64_t>> dims = argumentScoreDims(v, scores);
  return dims &&
         !(llvm::is_contained(*dims, 2) && llvm::is_contained(*dims, 3));
}

/// The element of function argument `v` for the region arguments `args`
/// (b, h, i, j): broadcast extents read index 0.
static Value readArgument(OpBuilder &b, Location loc, Value v,
                          ValueRange args) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<Value> indices;
  for (int64_t d = 0; d < type.getRank(); ++d)
    indices.push_back(type.getDimSize(d) == 1
                          ? arith::ConstantIndexOp::create(b, loc, 0)
                          : args[kScoresRank - type.getRank() + d]);
  return tensor::ExtractOp::create(b, loc, v, indices);
}

bool attnc::isScoreIndexExpr(Value v, RankedTensorType scores,
                             MatchedOps &ops) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !(type.getElementType().isInteger(1) ||
                 type.getElementType().isInteger(64)))
    return false;
  if (splatIndexConstant(v))
    return true;
  // Per-token values (document ids) of the function's arguments.
  if (type.getElementType().isInteger(64) && isPerPositionArgument(v, scores))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (runtimeIndexScalar(v)) {
    ops.insert(def);
    return true;
  }
  if (auto iota = dyn_cast<IotaOp>(def)) {
    if (iotaScoreDim(iota, scores) < 0)
      return false;
    ops.insert(def);
    return true;
  }
  bool integer = type.getElementType().isInteger(64);
  bool known =
      isa<CmpOp, AndOp, OrOp, NotOp>(def) ||
      (integer && isa<AddOp, SubOp, MulOp, DivOp, MinOp, MaxOp, AbsOp>(def));
  if (!known)
    return false;
  // A comparison of floats would read something other than positions.
  if (auto cmp = dyn_cast<CmpOp>(def);
      cmp && !cmp.getLhs().getType().getElementType().isInteger(64))
    return false;
  for (Value operand : def->getOperands())
    if (!isScoreIndexExpr(operand, scores, ops))
      return false;
  ops.insert(def);
  return true;
}

std::optional<GeneralMask> attnc::matchGeneralMask(Value v) {
  auto select = v.getDefiningOp<SelectOp>();
  if (!select)
    return std::nullopt;
  GeneralMask m;
  m.scores = cast<RankedTensorType>(v.getType());
  auto isFill = [](Value f) {
    std::optional<double> c = getSplatFloatConstant(f);
    return c && *c <= kMaskFillThreshold;
  };
  Value fill;
  if (isFill(select.getFalseValue()) &&
      select.getTrueValue().getType() == m.scores) {
    m.input = select.getTrueValue();
    fill = select.getFalseValue();
  } else if (isFill(select.getTrueValue()) &&
             select.getFalseValue().getType() == m.scores) {
    m.input = select.getFalseValue();
    fill = select.getTrueValue();
    m.negate = true;
  } else {
    return std::nullopt;
  }
  m.keep = select.getCondition();
  if (!isScoreIndexExpr(m.keep, m.scores, m.ops))
    return std::nullopt;
  m.infiniteFill = std::isinf(*getSplatFloatConstant(fill));
  m.ops.insert(select);
  return m;
}

/// The per-element value of `v` in the region whose arguments are `args`
/// (b, h, i, j), memoized in `memo`.
static Value emitIndex(OpBuilder &b, Location loc, Value v, ValueRange args,
                       RankedTensorType scores, IRMapping &memo) {
  if (Value known = memo.lookupOrNull(v))
    return known;
  Type index = b.getIndexType();
  Value result;
  auto get = [&](Value x) { return emitIndex(b, loc, x, args, scores, memo); };
  // Left operand first, in sequence: the order of arguments in one call is
  // unspecified in C++, and GCC and Clang would emit the region differently.
  auto operands = [&](auto op) -> std::pair<Value, Value> {
    Value l = get(op.getLhs());
    return {l, get(op.getRhs())};
  };
  if (std::optional<int64_t> c = splatIndexConstant(v)) {
    result = arith::ConstantIndexOp::create(b, loc, *c);
  } else if (isa<BlockArgument>(v)) {
    result = arith::IndexCastOp::create(b, loc, index,
                                        readArgument(b, loc, v, args));
  } else if (Value scalar = runtimeIndexScalar(v)) {
    result = arith::IndexCastOp::create(b, loc, index, scalar);
  } else {
    Operation *def = v.getDefiningOp();
    result =
        llvm::TypeSwitch<Operation *, Value>(def)
            .Case([&](IotaOp iota) { return args[iotaScoreDim(iota, scores)]; })
            .Case([&](AddOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::AddIOp::create(b, loc, l, r);
            })
            .Case([&](SubOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::SubIOp::create(b, loc, l, r);
            })
            .Case([&](MulOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::MulIOp::create(b, loc, l, r);
            })
            .Case([&](DivOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::FloorDivSIOp::create(b, loc, l, r);
            })
            .Case([&](MinOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::MinSIOp::create(b, loc, l, r);
            })
            .Case([&](MaxOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::MaxSIOp::create(b, loc, l, r);
            })
            .Case([&](AbsOp op) -> Value {
              Value x = get(op.getInput());
              Value zero = arith::ConstantIndexOp::create(b, loc, 0);
              return arith::MaxSIOp::create(
                  b, loc, x, arith::SubIOp::create(b, loc, zero, x));
            })
            .Case([&](CmpOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::CmpIOp::create(
                  b, loc, toSignedCmpIPredicate(op.getPredicate()), l, r);
            })
            .Case([&](AndOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::AndIOp::create(b, loc, l, r);
            })
            .Case([&](OrOp op) -> Value {
              auto [l, r] = operands(op);
              return arith::OrIOp::create(b, loc, l, r);
            })
            .Case([&](NotOp op) -> Value {
              Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
              return arith::XOrIOp::create(b, loc, get(op.getInput()), t);
            });
  }
  memo.map(v, result);
  return result;
}

void attnc::buildMaskRegion(OpBuilder &b, Location loc, Region &mask,
                            Value keep, bool negate, RankedTensorType scores) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> types(kMaskRegionArgs, b.getIndexType());
  SmallVector<Location> locs(kMaskRegionArgs, loc);
  Block *body = b.createBlock(&mask, {}, types, locs);
  IRMapping memo;
  Value v = emitIndex(b, loc, keep, body->getArguments(), scores, memo);
  if (negate)
    v = arith::XOrIOp::create(b, loc, v,
                              arith::ConstantIntOp::create(b, loc, 1, 1));
  YieldOp::create(b, loc, v);
}

bool attnc::isScoreTermExpr(Value v, RankedTensorType scores, MatchedOps &ops) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isF32())
    return false;
  if (getSplatFloatConstant(v) || isPerBlockArgument(v, scores))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto cast = dyn_cast<CastOp>(def)) {
    if (!cast.getInput().getType().getElementType().isInteger(64) ||
        !isScoreIndexExpr(cast.getInput(), scores, ops))
      return false;
    ops.insert(def);
    return true;
  }
  if (!isa<AddOp, SubOp, MulOp, DivOp, MinOp, MaxOp, NegOp, AbsOp>(def))
    return false;
  for (Value operand : def->getOperands())
    if (!isScoreTermExpr(operand, scores, ops))
      return false;
  ops.insert(def);
  return true;
}

/// The per-element value of term `v` in the score region whose index
/// arguments are `args` (b, h, i, j), memoized in `memo`.
static Value emitTerm(OpBuilder &b, Location loc, Value v, ValueRange args,
                      RankedTensorType scores, IRMapping &memo) {
  if (Value known = memo.lookupOrNull(v))
    return known;
  auto get = [&](Value x) { return emitTerm(b, loc, x, args, scores, memo); };
  Value result;
  if (std::optional<double> c = getSplatFloatConstant(v)) {
    result = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(*c)));
  } else if (isa<BlockArgument>(v)) {
    // The element of this batch and head.
    result = readArgument(b, loc, v, args);
  } else {
    Operation *def = v.getDefiningOp();
    auto binary = [&](auto op, auto build) -> Value {
      Value l = get(op.getLhs());
      return decltype(build)::create(b, loc, l, get(op.getRhs()));
    };
    result =
        llvm::TypeSwitch<Operation *, Value>(def)
            .Case([&](CastOp op) -> Value {
              Value i = emitIndex(b, loc, op.getInput(), args, scores, memo);
              Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
              return arith::SIToFPOp::create(b, loc, b.getF32Type(), i64);
            })
            .Case([&](AddOp op) { return binary(op, arith::AddFOp()); })
            .Case([&](SubOp op) { return binary(op, arith::SubFOp()); })
            .Case([&](MulOp op) { return binary(op, arith::MulFOp()); })
            .Case([&](DivOp op) { return binary(op, arith::DivFOp()); })
            .Case([&](MinOp op) { return binary(op, arith::MinimumFOp()); })
            .Case([&](MaxOp op) { return binary(op, arith::MaximumFOp()); })
            .Case([&](NegOp op) -> Value {
              return arith::NegFOp::create(b, loc, get(op.getInput()));
            })
            .Case([&](AbsOp op) -> Value {
              return math::AbsFOp::create(b, loc, get(op.getInput()));
            });
  }
  memo.map(v, result);
  return result;
}

std::optional<ScoreModStep> attnc::matchScoreModStep(Value x, Value *input) {
  Operation *def = x.getDefiningOp();
  if (!def || !isa<FloatType>(getElementTypeOrSelf(x.getType())))
    return std::nullopt;
  if (isa<TanhOp, NegOp, ExpOp, AbsOp>(def)) {
    *input = def->getOperand(0);
    return ScoreModStep{def, 0, std::nullopt};
  }
  if (!isa<AddOp, SubOp, MulOp, DivOp, MinOp, MaxOp>(def))
    return std::nullopt;
  for (unsigned k = 0; k < 2; ++k) {
    Value score = def->getOperand(k), other = def->getOperand(1 - k);
    if (score.getType() != x.getType())
      continue;
    std::optional<double> c = getSplatFloatConstant(other);
    if (c) {
      *input = score;
      return ScoreModStep{def, k, c, {}, {}};
    }
    auto scores = cast<RankedTensorType>(x.getType());
    MatchedOps termOps;
    if (isScoreTermExpr(other, scores, termOps)) {
      *input = score;
      return ScoreModStep{def, k, std::nullopt, other, std::move(termOps)};
    }
  }
  return std::nullopt;
}

void attnc::buildScoreRegion(OpBuilder &b, Location loc, Region &score,
                             ArrayRef<ScoreModStep> steps,
                             RankedTensorType scores) {
  OpBuilder::InsertionGuard guard(b);
  Type f32 = b.getF32Type(), index = b.getIndexType();
  SmallVector<Type> types = {f32, index, index, index, index};
  SmallVector<Location> locs(kScoreRegionArgs, loc);
  Block *body = b.createBlock(&score, {}, types, locs);
  Value s = body->getArgument(0);
  IRMapping memo;
  for (const ScoreModStep &step : steps) {
    Value c;
    if (step.constant)
      c = arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(static_cast<float>(*step.constant)));
    else if (step.term)
      c = emitTerm(b, loc, step.term, body->getArguments().drop_front(), scores,
                   memo);
    Value l = s, r = c;
    if (c && step.scoreOperand == 1)
      std::swap(l, r);
    s = llvm::TypeSwitch<Operation *, Value>(step.op)
            .Case([&](TanhOp) { return math::TanhOp::create(b, loc, s); })
            .Case([&](NegOp) { return arith::NegFOp::create(b, loc, s); })
            .Case([&](ExpOp) { return math::ExpOp::create(b, loc, s); })
            .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, s); })
            .Case([&](AddOp) { return arith::AddFOp::create(b, loc, l, r); })
            .Case([&](SubOp) { return arith::SubFOp::create(b, loc, l, r); })
            .Case([&](MulOp) { return arith::MulFOp::create(b, loc, l, r); })
            .Case([&](DivOp) { return arith::DivFOp::create(b, loc, l, r); })
            .Case(
                [&](MinOp) { return arith::MinimumFOp::create(b, loc, l, r); })
            .Case(
                [&](MaxOp) { return arith::MaximumFOp::create(b, loc, l, r); });
  }
  YieldOp::create(b, loc, s);
}
