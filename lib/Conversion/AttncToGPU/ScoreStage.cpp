//===- ScoreStage.cpp - scale, modify, mask and online softmax ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Softmax runs on exp2: exp(x) = exp2(x * log2 e), with the scale folded
// into the same fma when no score modifier needs the scaled score itself.
// exp2 is ex2.approx.ftz.f32 through its LLVM intrinsic: math.exp2 lowers to
// the non-ftz form, which ptxas wraps in a range check and two conditional
// multiplies around MUFU.EX2; softmax loses nothing by flushing subnormal
// probabilities to 0.
//
//===----------------------------------------------------------------------===//

#include "ScoreStage.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace attnc;

/// log2(e): softmax runs on exp2.
static constexpr double kLog2e = 1.4426950408889634;

SmallVector<Value> OnlineSoftmaxState::flatten() const {
  SmallVector<Value> all(rowMax);
  llvm::append_range(all, rowSum);
  llvm::append_range(all, acc);
  llvm::append_range(all, pendingScale);
  llvm::append_range(all, pending);
  return all;
}

OnlineSoftmaxState
OnlineSoftmaxState::unflatten(ValueRange all, const OnlineSoftmaxState &like) {
  size_t rows = like.rowMax.size(), accs = like.acc.size(),
         scales = like.pendingScale.size();
  OnlineSoftmaxState s;
  s.rowMax.assign(all.begin(), all.begin() + rows);
  s.rowSum.assign(all.begin() + rows, all.begin() + 2 * rows);
  auto rest = all.begin() + 2 * rows;
  s.acc.assign(rest, rest + accs);
  s.pendingScale.assign(rest + accs, rest + accs + scales);
  s.pending.assign(rest + accs + scales, all.end());
  return s;
}

static SmallVector<SmallVector<int64_t>>
groupBySlot(const AccumulatorLayout &layout) {
  SmallVector<SmallVector<int64_t>> slots(layout.numRowSlots());
  for (int64_t e = 0; e < layout.numElements(); ++e)
    slots[layout.rowSlot(e)].push_back(e);
  return slots;
}

ScoreStage::ScoreStage(OpBuilder &b, Location loc,
                       const AccumulatorLayout &scores,
                       const AccumulatorLayout &output,
                       const ScoreScaling &scaling)
    : loc(loc), scores(scores), output(output), scaling(scaling),
      scoreSlots(groupBySlot(scores)), outputSlots(groupBySlot(output)) {
  Type f32 = b.getF32Type();
  auto c = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(v)));
  };
  zero = c(0.0);
  one = c(1.0);
  negInf = c(-std::numeric_limits<double>::infinity());
  // Products of constants are taken in double and rounded once.
  auto times = [&](double k) -> Value {
    Value v = c(scaling.constantScale * k);
    if (scaling.runtimeScale)
      v = arith::MulFOp::create(b, loc, v, scaling.runtimeScale);
    return v;
  };
  scale = times(1.0);
  if (scaling.modified) {
    expScale = c(kLog2e * scaling.modifierFactor);
    lseScale = c(scaling.modifierFactor);
  } else {
    expScale = times(kLog2e);
    lseScale = scale;
  }
  if (scaling.rescaleThreshold >= 0.0)
    threshold = c(scaling.rescaleThreshold);
  if (scaling.maxFloor)
    maxFloor = c(*scaling.maxFloor);
  keptScale = one;
  if (scaling.dropout > 0.0) {
    std::tie(dropKey0, dropKey1) = splitI64(b, loc, scaling.dropoutSeed);
    // u = draw / 2^16 >= p  <=>  draw >= ceil(p * 2^16).
    dropThreshold = static_cast<uint32_t>(std::ceil(scaling.dropout * 65536.0));
    keptScale = c(1.0 / (1.0 - scaling.dropout));
  }
}

std::optional<std::pair<Value, double>>
attnc::trailingPositiveFactor(Region &r) {
  if (r.empty())
    return std::nullopt;
  auto mul = cast<YieldOp>(r.front().getTerminator())
                 .getValues()[0]
                 .getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getParentRegion() != &r)
    return std::nullopt;
  for (auto [x, k] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    FloatAttr c;
    if (matchPattern(k, m_Constant(&c)) && c.getValue().isFinite() &&
        !c.getValue().isNegative() && !c.getValue().isZero())
      return std::make_pair(x, c.getValue().convertToDouble());
  }
  return std::nullopt;
}

std::optional<std::pair<double, double>> attnc::scoreRange(Value v) {
  // Ends may be infinite on the way (min(s, c) has an upper end only); a
  // NaN end (inf - inf, 0 * inf) widens to unbounded.
  using Range = std::pair<double, double>;
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Range all(-inf, inf);
  auto clean = [&](double lo, double hi) {
    return Range(std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi);
  };
  std::function<Range(Value, int)> range = [&](Value x, int depth) -> Range {
    FloatAttr cst;
    if (matchPattern(x, m_Constant(&cst))) {
      double c = cst.getValue().convertToDouble();
      return Range(c, c);
    }
    Operation *def = x.getDefiningOp();
    if (!def || depth > 16)
      return all;
    auto arg = [&](unsigned i) { return range(def->getOperand(i), depth + 1); };
    if (isa<math::TanhOp>(def))
      return Range(-1.0, 1.0);
    if (isa<math::ExpOp>(def)) {
      Range a = arg(0);
      return Range(std::exp(a.first), std::exp(a.second));
    }
    if (isa<math::AbsFOp>(def)) {
      auto [lo, hi] = arg(0);
      double far = std::max(std::fabs(lo), std::fabs(hi));
      return Range(
          lo <= 0.0 && hi >= 0.0 ? 0.0 : std::min(std::fabs(lo), std::fabs(hi)),
          far);
    }
    if (isa<arith::NegFOp>(def)) {
      Range a = arg(0);
      return Range(-a.second, -a.first);
    }
    if (isa<arith::AddFOp>(def)) {
      Range l = arg(0), r = arg(1);
      return clean(l.first + r.first, l.second + r.second);
    }
    if (isa<arith::SubFOp>(def)) {
      Range l = arg(0), r = arg(1);
      return clean(l.first - r.second, l.second - r.first);
    }
    if (isa<arith::MulFOp>(def)) {
      Range l = arg(0), r = arg(1);
      double p[] = {l.first * r.first, l.first * r.second, l.second * r.first,
                    l.second * r.second};
      if (llvm::any_of(p, [](double x) { return std::isnan(x); }))
        return all;
      return Range(*std::min_element(std::begin(p), std::end(p)),
                   *std::max_element(std::begin(p), std::end(p)));
    }
    if (auto div = dyn_cast<arith::DivFOp>(def)) {
      FloatAttr k;
      if (!matchPattern(div.getRhs(), m_Constant(&k)) || k.getValue().isZero())
        return all;
      double d = k.getValue().convertToDouble();
      Range a = arg(0);
      return d > 0 ? Range(a.first / d, a.second / d)
                   : Range(a.second / d, a.first / d);
    }
    if (isa<arith::MinNumFOp, arith::MinimumFOp>(def)) {
      Range l = arg(0), r = arg(1);
      return Range(std::min(l.first, r.first), std::min(l.second, r.second));
    }
    if (isa<arith::MaxNumFOp, arith::MaximumFOp>(def)) {
      Range l = arg(0), r = arg(1);
      return Range(std::max(l.first, r.first), std::max(l.second, r.second));
    }
    if (auto sel = dyn_cast<arith::SelectOp>(def)) {
      Range l = range(sel.getTrueValue(), depth + 1),
            r = range(sel.getFalseValue(), depth + 1);
      return Range(std::min(l.first, r.first), std::max(l.second, r.second));
    }
    return all;
  };
  Range r = range(v, 0);
  if (!std::isfinite(r.first) || !std::isfinite(r.second))
    return std::nullopt;
  return r;
}

std::optional<double> attnc::rowMaxFloor(std::pair<double, double> range,
                                         double modifierFactor,
                                         Type probability) {
  double expScale = kLog2e * modifierFactor;
  // log2 of the smallest and largest probability kept exact enough: f32's
  // and bf16's normal range reaches 2^-126 (a flushed probability is then
  // 2^-26 of the least one kept) and the sums of up to 2^31 keys stay far
  // below f32's 2^128; f16's normal range starts at 2^-14.
  double lo = -100.0, hi = 64.0;
  if (probability.isF16()) {
    lo = -16.0;
    hi = 8.0;
  }
  double low = range.first * expScale, high = range.second * expScale;
  if (!(expScale > 0.0) || high - low > hi - lo)
    return std::nullopt;
  // A max at or above the floor keeps every probability at most 2^hi; the
  // row's largest is 1 where its first step's max is above the floor, else
  // at least 2^(low - high + hi) >= 2^lo.
  return (high - hi) / expScale;
}

Value attnc::approxExp2(OpBuilder &b, Location loc, Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{x})
      .getResult(0);
}

Value ScoreStage::exp2(OpBuilder &b, Value x) const {
  return approxExp2(b, loc, x);
}

OnlineSoftmaxState ScoreStage::initialState(OpBuilder &b) const {
  OnlineSoftmaxState st;
  st.rowMax.assign(scores.numRowSlots(), negInf);
  st.rowSum.assign(scores.numRowSlots(), zero);
  st.acc.assign(output.numElements(), zero);
  return st;
}

/// The tile-relative row of each row slot of `layout`.
static SmallVector<Value> slotRows(OpBuilder &b, Location loc,
                                   const AccumulatorLayout &layout) {
  SmallVector<Value> rows;
  for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot)
    rows.push_back(layout.slotRow(b, loc, slot));
  return rows;
}

/// The column of element `e`, one value per column of the layout.
static Value columnOf(OpBuilder &b, Location loc,
                      const AccumulatorLayout &layout, int64_t e,
                      DenseMap<int64_t, Value> &columns) {
  Value &c = columns[layout.columnKey(e)];
  if (!c)
    c = layout.column(b, loc, e);
  return c;
}

// modify and mask walk the elements in the layout's order (the order the
// MMA produced them), not slot by slot: measured, that order keeps the
// masked loop's register pressure at the unmasked loop's.
void ScoreStage::modify(OpBuilder &b, SmallVectorImpl<Value> &s,
                        Modifier modifier) const {
  SmallVector<Value> rows = slotRows(b, loc, scores);
  DenseMap<int64_t, Value> columns;
  Position at;
  at.rowBase = scores.rowBase(b, loc);
  at.colBase = scores.columnBase(b, loc);
  for (int64_t e = 0; e < scores.numElements(); ++e) {
    // (contract: the modifier's first add may take it into an FMA.)
    Value scaled = arith::MulFOp::create(b, loc, s[e], scale,
                                         arith::FastMathFlags::contract);
    at.rowOffset = scores.slotRowOffset(scores.rowSlot(e));
    at.colOffset = scores.columnOffset(e);
    s[e] = modifier(b, scaled, rows[scores.rowSlot(e)],
                    columnOf(b, loc, scores, e, columns), at);
  }
}

void ScoreStage::mask(OpBuilder &b, SmallVectorImpl<Value> &s,
                      Predicate visible) const {
  SmallVector<Value> rows = slotRows(b, loc, scores);
  DenseMap<int64_t, Value> columns;
  for (int64_t e = 0; e < scores.numElements(); ++e) {
    Value keep = visible(b, rows[scores.rowSlot(e)],
                         columnOf(b, loc, scores, e, columns));
    s[e] = arith::SelectOp::create(b, loc, keep, s[e], negInf);
  }
}

/// Whether some thread of the warp has one of `preds` (vote.sync.any over
/// their or): a warp-uniform i1 to branch on.
static Value anyInWarp(OpBuilder &b, Location loc, ArrayRef<Value> preds) {
  Value any = preds.front();
  for (Value p : preds.drop_front())
    any = arith::OrIOp::create(b, loc, any, p);
  return NVVM::VoteSyncOp::create(
      b, loc, b.getI1Type(),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(-1)), any,
      NVVM::VoteSyncKind::any);
}

bool ScoreStage::maskColumns(OpBuilder &b, SmallVectorImpl<Value> &s,
                             ColumnRange range, Predicate visible) const {
  Value colBase = scores.columnBase(b, loc);
  if (!colBase)
    return false;
  SmallVector<Value> rows = slotRows(b, loc, scores);
  SmallVector<std::pair<Value, Value>> ranges;
  for (Value row : rows)
    ranges.push_back(range(b, row, colBase));
  // The tests of sides `lo` (first <= offset) and `hi` (offset <= last).
  auto masked = [&](OpBuilder &b, bool lo, bool hi) {
    SmallVector<Value> t(s.begin(), s.end());
    DenseMap<int64_t, Value> columns;
    for (int64_t e = 0; e < scores.numElements(); ++e) {
      auto [first, last] = ranges[scores.rowSlot(e)];
      Value offset = arith::ConstantOp::create(
          b, loc, b.getI32IntegerAttr(scores.columnOffset(e)));
      auto both = [&](Value x, Value y) -> Value {
        return x ? arith::AndIOp::create(b, loc, x, y).getResult() : y;
      };
      Value keep;
      if (first && lo)
        keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, first,
                                     offset);
      if (last && hi)
        keep = both(keep, arith::CmpIOp::create(
                              b, loc, arith::CmpIPredicate::sle, offset, last));
      if (visible)
        keep = both(keep, visible(b, rows[scores.rowSlot(e)],
                                  columnOf(b, loc, scores, e, columns)));
      if (keep)
        t[e] = arith::SelectOp::create(b, loc, keep, t[e], negInf);
    }
    return t;
  };
  bool twoSided =
      llvm::all_of(ranges, [](const auto &r) { return r.first && r.second; });
  if (!twoSided || visible) {
    s = masked(b, true, true);
    return true;
  }
  // Both sides bounded: a warp whose rows' ranges one side cuts nowhere
  // (first <= 0, or last >= the thread's last column offset, in every row
  // slot of every lane) tests the other side only, one comparison and one
  // select per score instead of two and two. A window's masked tiles are
  // cut on one side each (its first tile by lo, the diagonal by hi): the
  // masked step's PTX was 845 instructions against the unmasked step's
  // 561 (window 1024, d = 128), 4 per score of 64 for the mask.
  int64_t lastOffset = 0;
  for (int64_t e = 0; e < scores.numElements(); ++e)
    lastOffset = std::max(lastOffset, scores.columnOffset(e));
  auto i32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
        .getResult();
  };
  auto cutsInWarp = [&](bool lo) {
    SmallVector<Value> cuts;
    for (auto [first, last] : ranges)
      cuts.push_back(
          lo ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, first,
                                     i32(0))
             : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, last,
                                     i32(lastOffset)));
    return anyInWarp(b, loc, cuts);
  };
  Value loCuts = cutsInWarp(true);
  Value hiCuts = cutsInWarp(false);
  TypeRange types = TypeRange(ValueRange(s));
  auto sides =
      scf::IfOp::create(b, loc, types, loCuts, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    for (bool lo : {true, false}) {
      b.setInsertionPointToStart(lo ? sides.thenBlock() : sides.elseBlock());
      auto hi = scf::IfOp::create(b, loc, types, hiCuts,
                                  /*withElseRegion=*/true);
      scf::YieldOp::create(b, loc, hi.getResults());
      b.setInsertionPointToStart(hi.thenBlock());
      scf::YieldOp::create(b, loc, masked(b, lo, true));
      b.setInsertionPointToStart(hi.elseBlock());
      scf::YieldOp::create(b, loc,
                           lo ? masked(b, true, false)
                              : SmallVector<Value>(s.begin(), s.end()));
    }
  }
  s.assign(sides.getResults().begin(), sides.getResults().end());
  return true;
}

SmallVector<SmallVector<Value>>
ScoreStage::dropoutDraws(OpBuilder &b, ArrayRef<Value> rowCounters,
                         AccumulatorLayout::DrawExchange &exchange) const {
  SmallVector<SmallVector<Value>> draws;
  for (auto [r, counter] : llvm::enumerate(rowCounters))
    draws.push_back(scores.rowDraws(
        b, loc, r,
        [&](OpBuilder &b, Value group) {
          Value c = arith::AddIOp::create(
              b, loc, counter,
              arith::IndexCastOp::create(b, loc, b.getI64Type(), group));
          auto [c0, c1] = splitI64(b, loc, c);
          return philox4x32(b, loc, c0, c1, dropKey0, dropKey1);
        },
        exchange));
  return draws;
}

Value ScoreStage::isKept(OpBuilder &b, ArrayRef<Value> words, int64_t k) const {
  // The draw in bits [16, 32) is at least T iff its word is at least
  // T * 2^16: no shift. The one in bits [0, 16) is masked first.
  int64_t shift = scores.drawShift(k);
  auto i32 = [&](uint32_t v) {
    return arith::ConstantOp::create(
               b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)))
        .getResult();
  };
  Value w = words[k];
  if (shift != 16)
    w = arith::AndIOp::create(b, loc, w, i32(0xFFFFu << shift));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, w,
                               i32(dropThreshold << shift));
}

/// `then`'s values in a warp where some thread's `preds` hold (a uniform
/// branch after `vote.sync.any`), else `otherwise`.
static SmallVector<Value>
ifAnyInWarp(OpBuilder &b, Location loc, ArrayRef<Value> preds,
            ValueRange otherwise,
            function_ref<SmallVector<Value>(OpBuilder &)> then) {
  auto branch =
      scf::IfOp::create(b, loc, TypeRange(otherwise), anyInWarp(b, loc, preds),
                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(branch.thenBlock());
  scf::YieldOp::create(b, loc, then(b));
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, loc, otherwise);
  return SmallVector<Value>(branch.getResults());
}

void ScoreStage::emitProbabilities(
    OpBuilder &b, ArrayRef<Value> s, ArrayRef<int64_t> elements, int64_t r,
    Value &sum, AttentionTileStrategy &strategy,
    ArrayRef<SmallVector<Value>> draws,
    function_ref<Value(Value)> probability) const {
  // Exponentials of one group first, then their sum, then the hand-over:
  // measured on the H200, this order keeps the rounding to the element
  // type next to the exponentials through LLVM and ptxas; interleaving
  // the sum let the f32 probabilities live until P V and spill (-3% at
  // d=64).
  int64_t group = strategy.probabilityGroup();
  for (size_t k = 0; k < elements.size(); k += group) {
    ArrayRef<int64_t> ids =
        elements.slice(k, std::min<size_t>(group, elements.size() - k));
    SmallVector<Value> p;
    for (int64_t e : ids)
      p.push_back(probability(s[e]));
    for (Value v : p)
      if (!scaling.strategySumsRows)
        sum = arith::AddFOp::create(b, loc, sum, v);
    // The sum is the undropped softmax's; P V sees the kept ones.
    for (size_t n = 0; n < p.size() && !draws.empty(); ++n)
      p[n] = arith::SelectOp::create(b, loc, isKept(b, draws[r], k + n), p[n],
                                     zero);
    strategy.takeProbabilities(b, ids, p);
  }
}

void ScoreStage::updateBounded(OpBuilder &b, ArrayRef<Value> s,
                               OnlineSoftmaxState &st,
                               AttentionTileStrategy &strategy,
                               SmallVectorImpl<Value> &factors,
                               ArrayRef<SmallVector<Value>> draws) const {
  // Each row's max is taken at its first step, raised to the floor, and
  // kept: every later score is at most the bound, so probabilities stay
  // below 2^64 (f16: 2^8), and the least of them is far from underflow.
  // A row's first step holds its first tile's max exactly (P = 1 there, as
  // with the running max: a row with one key is exact). Rows are all -inf
  // at a tile's first step only, so a warp branches past the max after it.
  auto takeMax = [&](OpBuilder &b) {
    SmallVector<Value> maxes;
    for (auto [r, elements] : llvm::enumerate(scoreSlots)) {
      Value mx = st.rowMax[r];
      for (int64_t e : elements)
        mx = arith::MaxNumFOp::create(b, loc, mx, s[e]);
      maxes.push_back(arith::MaxNumFOp::create(
          b, loc, scores.reduceRow(b, loc, mx, RowReduction::Max), maxFloor));
    }
    return maxes;
  };
  SmallVector<Value> maxes;
  FloatAttr first;
  // Every row holds its max (settleRowMax): nothing between the scores'
  // modifier and their exponentials, which then interleave (a test and a
  // branch here, skipped at run time, kept them apart: measured as slow as
  // taking the max).
  bool kept = false;
  if (llvm::all_of(st.rowMax, [&](Value m) {
        return matchPattern(m, m_Constant(&first)) &&
               first.getValue().isNegInfinity();
      })) {
    maxes = takeMax(b);
  } else if (rowMaxSettled) {
    maxes.assign(st.rowMax.begin(), st.rowMax.end());
    kept = true;
  } else {
    SmallVector<Value> unset;
    for (Value m : st.rowMax)
      unset.push_back(
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf));
    maxes = ifAnyInWarp(b, loc, unset, st.rowMax, takeMax);
  }
  for (auto [r, elements] : llvm::enumerate(scoreSlots)) {
    Value old = st.rowMax[r], mNew = maxes[r];
    Value negOffset = arith::NegFOp::create(
        b, loc, arith::MulFOp::create(b, loc, mNew, expScale));
    auto exp2Scaled = [&](Value x) {
      return exp2(b, math::FmaOp::create(b, loc, x, expScale, negOffset));
    };
    // 0 at the first step (acc and the sum are still 0), else exactly 1.
    Value alpha = one, sum = st.rowSum[r];
    if (!kept) {
      alpha = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, old, mNew),
          one, exp2Scaled(old));
      sum = arith::MulFOp::create(b, loc, sum, alpha);
    }
    emitProbabilities(b, s, elements, r, sum, strategy, draws, exp2Scaled);
    factors.push_back(alpha);
    st.rowMax[r] = mNew;
    st.rowSum[r] = sum;
  }
}

void ScoreStage::settleRowMax(OpBuilder &b, OnlineSoftmaxState &st) {
  if (!maxFloor)
    return;
  // A row with no visible key yet has acc = 0 and sum = 0: the floor needs
  // no rescale.
  for (Value &m : st.rowMax)
    m = arith::MaxNumFOp::create(b, loc, m, maxFloor);
  rowMaxSettled = true;
}

void ScoreStage::update(OpBuilder &b, ArrayRef<Value> s, OnlineSoftmaxState &st,
                        AttentionTileStrategy &strategy,
                        SmallVectorImpl<Value> *alphas,
                        ArrayRef<SmallVector<Value>> draws) const {
  SmallVector<Value> factors;
  if (maxFloor) {
    updateBounded(b, s, st, strategy, factors, draws);
    if (alphas)
      *alphas = std::move(factors);
    else
      rescale(b, st.acc, factors);
    return;
  }
  for (auto [r, elements] : llvm::enumerate(scoreSlots)) {
    Value old = st.rowMax[r];
    auto exp2Scaled = [&](Value x, Value negOffset) {
      return exp2(b, math::FmaOp::create(b, loc, x, expScale, negOffset));
    };
    Value mx = old;
    for (int64_t e : elements)
      mx = arith::MaxNumFOp::create(b, loc, mx, s[e]);
    Value mNew = scores.reduceRow(b, loc, mx, RowReduction::Max);
    // With a threshold the row keeps its max while the step's exceeds it by
    // at most the threshold in exp2's units (FlashAttention-4's lazy
    // rescale): its probabilities stay below 2^threshold and its factor is
    // 1, so most steps leave acc alone. The growth is +inf for a row's
    // first visible key and NaN while it has none (-inf - -inf): the
    // ordered comparison keeps -inf then.
    Value grows;
    if (threshold) {
      Value growth = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, mNew, old), expScale);
      grows = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, growth,
                                    threshold);
      mNew = arith::SelectOp::create(b, loc, grows, mNew, old);
    }
    // exp2(x * expScale - offset), offset = mNew * expScale, or 0 while the
    // row has seen no visible key (mNew = -inf), so that exp2(-inf) = 0.
    Value isEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    Value offset = arith::SelectOp::create(
        b, loc, isEmpty, zero, arith::MulFOp::create(b, loc, mNew, expScale));
    Value negOffset = arith::NegFOp::create(b, loc, offset);
    Value alpha = exp2Scaled(old, negOffset);
    if (grows)
      alpha = arith::SelectOp::create(b, loc, grows, alpha, one);
    Value sum = arith::MulFOp::create(b, loc, st.rowSum[r], alpha);
    emitProbabilities(b, s, elements, r, sum, strategy, draws,
                      [&](Value x) { return exp2Scaled(x, negOffset); });
    factors.push_back(alpha);
    st.rowMax[r] = mNew;
    st.rowSum[r] = sum;
  }
  if (alphas)
    *alphas = std::move(factors);
  else
    rescale(b, st.acc, factors);
}

void ScoreStage::rescale(OpBuilder &b, SmallVectorImpl<Value> &acc,
                         ArrayRef<Value> alphas) const {
  if (llvm::all_of(alphas,
                   [](Value a) { return matchPattern(a, m_OneFloat()); }))
    return;
  auto multiply = [&](OpBuilder &b) {
    SmallVector<Value> out(acc.begin(), acc.end());
    for (auto [r, elements] : llvm::enumerate(outputSlots))
      for (int64_t e : elements)
        out[e] = arith::MulFOp::create(b, loc, out[e], alphas[r]);
    return out;
  };
  if (!threshold) {
    acc = multiply(b);
    return;
  }
  // Rows that kept their max have factor 1 exactly; a warp whose rows all
  // did skips the multiplies (one per acc element: as many as the step's
  // exponentials).
  SmallVector<Value> rescaled;
  for (Value a : alphas)
    rescaled.push_back(
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, a, one));
  acc.assign(ifAnyInWarp(b, loc, rescaled, acc, multiply));
}

SmallVector<Value> ScoreStage::unitScales(OpBuilder &b) const {
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  return SmallVector<Value>(outputSlots.size(), one);
}

void ScoreStage::merge(OpBuilder &b, OnlineSoftmaxState &st,
                       const OnlineSoftmaxState &other) const {
  for (auto [r, elements] : llvm::enumerate(outputSlots)) {
    Value mNew =
        arith::MaxNumFOp::create(b, loc, st.rowMax[r], other.rowMax[r]);
    // As in update: offset 0 while neither part saw a key, so that
    // exp2(-inf) = 0 and no -inf - -inf appears.
    Value isEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    Value negOffset = arith::NegFOp::create(
        b, loc,
        arith::SelectOp::create(b, loc, isEmpty, zero,
                                arith::MulFOp::create(b, loc, mNew, expScale)));
    auto factor = [&](Value m) {
      return exp2(b, math::FmaOp::create(b, loc, m, expScale, negOffset));
    };
    Value mine = factor(st.rowMax[r]), theirs = factor(other.rowMax[r]);
    auto mix = [&](Value a, Value c) {
      return math::FmaOp::create(b, loc, a, mine,
                                 arith::MulFOp::create(b, loc, c, theirs))
          .getResult();
    };
    st.rowSum[r] = mix(st.rowSum[r], other.rowSum[r]);
    for (int64_t e : elements)
      st.acc[e] = mix(st.acc[e], other.acc[e]);
    st.rowMax[r] = mNew;
  }
}

SmallVector<Value> ScoreStage::finalize(OpBuilder &b,
                                        OnlineSoftmaxState &st) const {
  SmallVector<Value> lse;
  for (auto [r, elements] : llvm::enumerate(outputSlots)) {
    Value l = scaling.strategySumsRows
                  ? st.rowSum[r]
                  : scores.reduceRow(b, loc, st.rowSum[r], RowReduction::Add);
    Value isEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value inv = arith::SelectOp::create(
        b, loc, isEmpty, zero, arith::DivFOp::create(b, loc, keptScale, l));
    for (int64_t e : elements)
      st.acc[e] = arith::MulFOp::create(b, loc, st.acc[e], inv);
    Value lnL = math::LogOp::create(b, loc, l);
    lse.push_back(arith::SelectOp::create(
        b, loc, isEmpty, negInf,
        math::FmaOp::create(b, loc, st.rowMax[r], lseScale, lnL)));
  }
  return lse;
}
