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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

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

//===----------------------------------------------------------------------===//
// Key intervals
//===----------------------------------------------------------------------===//
//
// Index values of the region are affine expressions over d0 = i, d1 = j and
// one symbol per value from above; conditions are intervals of j. A
// comparison `e pred 0` with e = +-j + r (r free of j) bounds j by -+r; with
// e = +-(j floordiv C) + r it bounds j floordiv C, i.e. whole chunks of C
// keys. Anything else (a head- or batch-dependent mask, a comparison of i
// alone, min/max of indices, an unsigned or != comparison, a negation, a
// comparison of other values read from tensors) has no interval form here,
// and the flash form then masks every tile; in a conjunction, the other
// conjunct's interval still bounds the keys (not exactly). Ids compared for
// equality, one read at the query position and one at the key position
// (document masks), are kept as an id match, bounded at run time.

namespace {
struct IntervalAnalysis {
  explicit IntervalAnalysis(Region &region)
      : region(region), ctx(region.getContext()) {}
  Region &region;
  MLIRContext *ctx;
  SmallVector<Value> symbols;
  DenseMap<Value, AffineExpr> exprs;

  AffineExpr symbolFor(Value v) {
    for (auto [k, s] : llvm::enumerate(symbols))
      if (s == v)
        return getAffineSymbolExpr(k, ctx);
    symbols.push_back(v);
    return getAffineSymbolExpr(symbols.size() - 1, ctx);
  }

  /// `v`'s tensor.extract when it reads a tensor defined above the region.
  tensor::ExtractOp outerRead(Value v) {
    auto read = v.getDefiningOp<tensor::ExtractOp>();
    if (!read || region.isAncestor(read.getTensor().getParentRegion()))
      return {};
    return read;
  }

  /// True when index `i` is the same for every score of a block: the
  /// region's batch or head argument, or a constant.
  bool isBlockIndex(Value i) {
    Block &body = region.front();
    return i == body.getArgument(0) || i == body.getArgument(1) ||
           i.getDefiningOp<arith::ConstantIndexOp>();
  }

  /// True when `v` reads a tensor from above at block indices only: one
  /// value per block.
  bool isBlockRead(Value v) {
    tensor::ExtractOp read = outerRead(v);
    return read && llvm::all_of(read.getIndices(),
                                [&](Value i) { return isBlockIndex(i); });
  }

  /// The affine form of index value `v`, or null.
  AffineExpr index(Value v) {
    if (AffineExpr known = exprs.lookup(v))
      return known;
    Block &body = region.front();
    AffineExpr e;
    if (v == body.getArgument(2)) {
      e = getAffineDimExpr(0, ctx);
    } else if (v == body.getArgument(3)) {
      e = getAffineDimExpr(1, ctx);
    } else if (!region.isAncestor(v.getParentRegion())) {
      e = v.getType().isIndex() ? symbolFor(v) : AffineExpr();
    } else if (auto c = v.getDefiningOp<arith::ConstantIndexOp>()) {
      e = getAffineConstantExpr(c.value(), ctx);
    } else if (auto cast = v.getDefiningOp<arith::IndexCastOp>()) {
      // An outer integer scalar cast in the region: the symbol is the outer
      // value (whoever evaluates the bound casts it outside). So is an
      // element read per block (a run-time window size in device memory):
      // whoever evaluates the bound reads it once per block.
      if (!region.isAncestor(cast.getIn().getParentRegion()) ||
          isBlockRead(cast.getIn()))
        e = symbolFor(cast.getIn());
    } else if (auto add = v.getDefiningOp<arith::AddIOp>()) {
      AffineExpr l = index(add.getLhs()), r = index(add.getRhs());
      if (l && r)
        e = l + r;
    } else if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
      AffineExpr l = index(sub.getLhs()), r = index(sub.getRhs());
      if (l && r)
        e = l - r;
    } else if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
      AffineExpr l = index(mul.getLhs()), r = index(mul.getRhs());
      if (l && r && (isa<AffineConstantExpr>(l) || isa<AffineConstantExpr>(r)))
        e = l * r;
    } else if (auto div = v.getDefiningOp<arith::FloorDivSIOp>()) {
      AffineExpr l = index(div.getLhs()), r = index(div.getRhs());
      auto c = dyn_cast_or_null<AffineConstantExpr>(r);
      if (l && c && c.getValue() > 0)
        e = l.floorDiv(c.getValue());
    }
    if (e)
      exprs[v] = e;
    return e;
  }

  static std::shared_ptr<KeyBound> leaf(AffineExpr e) {
    auto b = std::make_shared<KeyBound>();
    b->expr = e;
    return b;
  }
  static std::shared_ptr<KeyBound> combine(KeyBound::Kind kind,
                                           std::shared_ptr<KeyBound> l,
                                           std::shared_ptr<KeyBound> r) {
    auto b = std::make_shared<KeyBound>();
    b->kind = kind;
    b->lhs = std::move(l);
    b->rhs = std::move(r);
    return b;
  }

  /// `e` as `coeff * x + rest` where x is j (chunk = 1) or j floordiv
  /// chunk, and rest is free of j; false when j appears otherwise.
  bool splitKey(AffineExpr e, int64_t &coeff, int64_t &chunk,
                AffineExpr &rest) {
    AffineExpr j = getAffineDimExpr(1, ctx);
    SmallVector<AffineExpr> terms;
    std::function<void(AffineExpr)> flatten = [&](AffineExpr x) {
      if (x.getKind() == AffineExprKind::Add) {
        auto bin = cast<AffineBinaryOpExpr>(x);
        flatten(bin.getLHS());
        flatten(bin.getRHS());
      } else {
        terms.push_back(x);
      }
    };
    flatten(e);
    coeff = 0;
    chunk = 1;
    rest = getAffineConstantExpr(0, ctx);
    for (AffineExpr t : terms) {
      if (!t.isFunctionOfDim(1)) {
        rest = rest + t;
        continue;
      }
      int64_t k = 1;
      AffineExpr x = t;
      if (t.getKind() == AffineExprKind::Mul) {
        auto bin = cast<AffineBinaryOpExpr>(t);
        auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
        if (!c)
          return false;
        k = c.getValue();
        x = bin.getLHS();
      }
      int64_t ch = 1;
      if (x.getKind() == AffineExprKind::FloorDiv) {
        auto bin = cast<AffineBinaryOpExpr>(x);
        auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
        if (!c || bin.getLHS() != j)
          return false;
        ch = c.getValue();
      } else if (x != j) {
        return false;
      }
      if (coeff != 0)
        return false;
      coeff = k;
      chunk = ch;
    }
    return coeff == 1 || coeff == -1;
  }

  /// The read `v` is (through sign-preserving casts, which keep ids equal
  /// or not: the graph's spelling compares them as indices) and its
  /// position dimension, when it reads a tensor from above at the region
  /// argument `position` in one dimension and at block indices in the
  /// others.
  std::optional<std::pair<tensor::ExtractOp, unsigned>>
  idRead(Value v, unsigned position) {
    while (
        isa_and_nonnull<arith::IndexCastOp, arith::ExtSIOp>(v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    tensor::ExtractOp read = outerRead(v);
    if (!read)
      return std::nullopt;
    std::optional<unsigned> dim;
    for (auto [d, index] : llvm::enumerate(read.getIndices())) {
      if (index == region.front().getArgument(position)) {
        if (dim)
          return std::nullopt;
        dim = d;
      } else if (!isBlockIndex(index)) {
        return std::nullopt;
      }
    }
    if (!dim)
      return std::nullopt;
    return std::make_pair(read, *dim);
  }

  /// `q[.., i, ..] == k[.., j, ..]` (either order) as an id match.
  std::optional<KeyInterval> idMatch(arith::CmpIOp cmp) {
    if (cmp.getPredicate() != arith::CmpIPredicate::eq)
      return std::nullopt;
    for (auto [q, k] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                        std::pair(cmp.getRhs(), cmp.getLhs())}) {
      auto qRead = idRead(q, 2), kRead = idRead(k, 3);
      if (!qRead || !kRead || qRead->first.getType() != kRead->first.getType())
        continue;
      KeyInterval m;
      m.matches.push_back(
          {qRead->first, kRead->first, qRead->second, kRead->second});
      return m;
    }
    return std::nullopt;
  }

  std::optional<KeyInterval> condition(Value v) {
    if (auto andOp = v.getDefiningOp<arith::AndIOp>()) {
      auto l = condition(andOp.getLhs()), r = condition(andOp.getRhs());
      if (!l && !r)
        return std::nullopt;
      // A conjunct without an interval form (document ids compared) keeps
      // the other's interval as a bound: nothing outside it is visible, and
      // nothing inside is proven visible.
      if (!l || !r) {
        KeyInterval k = l ? *l : *r;
        k.exact = false;
        return k;
      }
      KeyInterval k;
      k.exact = l->exact && r->exact;
      k.matches = l->matches;
      k.matches.append(r->matches);
      k.lo = !l->lo   ? r->lo
             : !r->lo ? l->lo
                      : combine(KeyBound::Kind::Max, l->lo, r->lo);
      k.hi = !l->hi   ? r->hi
             : !r->hi ? l->hi
                      : combine(KeyBound::Kind::Min, l->hi, r->hi);
      return k;
    }
    if (auto orOp = v.getDefiningOp<arith::OrIOp>()) {
      auto l = condition(orOp.getLhs()), r = condition(orOp.getRhs());
      // (Keys whose ids match are not an interval: a union with them has
      // no bound here.)
      if (!l || !r || !l->matches.empty() || !r->matches.empty())
        return std::nullopt;
      KeyInterval k;
      // Two intervals open on the same side (both from key 0, or both to
      // the last key) unite into one; otherwise their hull, with a
      // possible gap.
      bool sameSide = (!l->lo && !r->lo) || (!l->hi && !r->hi);
      k.exact = l->exact && r->exact && sameSide;
      if (l->lo && r->lo)
        k.lo = combine(KeyBound::Kind::Min, l->lo, r->lo);
      if (l->hi && r->hi)
        k.hi = combine(KeyBound::Kind::Max, l->hi, r->hi);
      return k;
    }
    auto cmp = v.getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return std::nullopt;
    AffineExpr l = index(cmp.getLhs()), r = index(cmp.getRhs());
    if (!l || !r)
      return idMatch(cmp);
    int64_t coeff, chunk;
    AffineExpr rest;
    if (!splitKey(l - r, coeff, chunk, rest))
      return std::nullopt;
    // coeff * x + rest  pred  0, x the key (chunk) index.
    using P = arith::CmpIPredicate;
    P p = cmp.getPredicate();
    if (coeff < 0) {
      // -x + rest pred 0  <=>  x swapped-pred rest.
      p = swapSignedOrder(p);
    } else {
      rest = -rest;
    }
    // Now: x pred rest.
    AffineExpr lo, hi;
    switch (p) {
    case P::slt:
      hi = rest - 1;
      break;
    case P::sle:
      hi = rest;
      break;
    case P::sgt:
      lo = rest + 1;
      break;
    case P::sge:
      lo = rest;
      break;
    case P::eq:
      lo = hi = rest;
      break;
    default:
      return std::nullopt;
    }
    KeyInterval k;
    if (lo)
      k.lo = leaf(lo * chunk);
    if (hi)
      k.hi = leaf(hi * chunk + (chunk - 1));
    return k;
  }
};

/// How `e` moves as d0 grows: +1 never decreases, -1 never increases, 0 does
/// not depend on d0, nullopt unknown (a mod, a product of two variables).
static std::optional<int> monotonicity(AffineExpr e) {
  if (!e.isFunctionOfDim(0))
    return 0;
  if (isa<AffineDimExpr>(e))
    return 1;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<int> l = monotonicity(bin.getLHS());
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add: {
    std::optional<int> r = monotonicity(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    if (*l == 0 || *r == 0 || *l == *r)
      return *l + *r == 0 ? 0 : (*l + *r > 0 ? 1 : -1);
    return std::nullopt;
  }
  case AffineExprKind::Mul:
    if (!l || !c)
      return std::nullopt;
    return c.getValue() == 0 ? 0 : (c.getValue() > 0 ? *l : -*l);
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    if (!l || !c || c.getValue() <= 0)
      return std::nullopt;
    return l;
  default:
    return std::nullopt;
  }
}

static bool nonDecreasingInQuery(AffineExpr e) {
  std::optional<int> m = monotonicity(e);
  return m && *m >= 0;
}

static bool nonDecreasing(const std::shared_ptr<KeyBound> &b) {
  if (!b)
    return true;
  if (b->kind == KeyBound::Kind::Affine)
    return nonDecreasingInQuery(b->expr);
  return nonDecreasing(b->lhs) && nonDecreasing(b->rhs);
}
} // namespace

std::optional<KeyInterval> attnc::analyzeKeyInterval(Region &mask) {
  if (mask.empty() || mask.front().getNumArguments() != kMaskRegionArgs)
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(mask.front().getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  IntervalAnalysis analysis(mask);
  std::optional<KeyInterval> k = analysis.condition(yield.getValues()[0]);
  if (!k || (!k->lo && !k->hi && k->matches.empty()) || !nonDecreasing(k->lo) ||
      !nonDecreasing(k->hi))
    return std::nullopt;
  k->symbols = analysis.symbols;
  return k;
}

arith::CmpIPredicate attnc::swapSignedOrder(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  default:
    return p;
  }
}
