//===- FlashFormBuilder.cpp - the loop nest of a flash form ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// FlashFormBuilder (FlashFormBuilder.h): the scf.forall over (batch, head,
// query tile) of one attnc.attention, its K/V loops of
// attnc.online_attention steps (one, or two for a causal mask: tiles wholly
// visible without the mask, tiles crossing the diagonal with it) and the
// attnc.online_attention_finalize that writes each tile of O and of the
// logsumexp. --attnc-online-softmax (OnlineSoftmax.cpp) picks the tiles and
// builds one per attention.
//
//===----------------------------------------------------------------------===//

#include "FlashFormBuilder.h"
#include "FlashTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::tiling;
using namespace attnc::flash_form;

//===----------------------------------------------------------------------===//
// Extents
//===----------------------------------------------------------------------===//

static AttentionExtents getAttentionExtents(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  Type k = op.getKey().getType(), v = op.getValue().getType(),
       o = op.getResult().getType();
  AttentionExtents e;
  e.batch = getExtent(b, loc, op.getQuery(), 0, {k, v, o});
  e.heads = getExtent(b, loc, op.getQuery(), 1, {o});
  e.seqQ = getExtent(b, loc, op.getQuery(), 2, {o});
  e.headsKV = getExtent(b, loc, op.getKey(), 1, {v});
  e.seqKV = getExtent(b, loc, op.getKey(), 2, {v});
  e.headDimV = cast<RankedTensorType>(v).getDimSize(3);
  return e;
}

//===----------------------------------------------------------------------===//
// Loop nest
//===----------------------------------------------------------------------===//

Value FlashFormBuilder::getKVHead(Value head) {
  std::optional<int64_t> group = getConstantIntValue(headGroup);
  if (group == 1)
    return head;
  if (group) {
    AffineExpr d0;
    bindDims(b.getContext(), d0);
    return affine::makeComposedAffineApply(b, loc, d0.floorDiv(*group), {head});
  }
  // H / Hkv of two dynamic extents is not affine.
  return arith::DivUIOp::create(b, loc, head, cast<Value>(headGroup));
}

/// With a causal mask, key j is visible to query i iff j <= i + delta, with
/// delta = 0 (top-left) or Skv - Sq (bottom-right, possibly negative).
/// Returns {unmasked, visited}: K/V tiles [0, unmasked) lie wholly on the
/// visible side and need no mask, tiles [unmasked, visited) cross the
/// diagonal, and tiles from `visited` on lie wholly past it and are skipped.
std::pair<OpFoldResult, OpFoldResult> FlashFormBuilder::getCausalTileCounts() {
  MLIRContext *ctx = b.getContext();
  AffineExpr q0, mq, nkv, delta;
  bindDims(ctx, q0, mq);
  bindSymbols(ctx, nkv, delta);
  OpFoldResult shift = b.getIndexAttr(0);
  if (causal->alignment == CausalMask::Alignment::BottomRight) {
    AffineExpr sq, skv;
    bindSymbols(ctx, sq, skv);
    shift = affine::makeComposedFoldedAffineApply(
        b, loc, skv - sq, {causal->seqQ, causal->seqKV});
  }
  // A tile index is never negative: a negative shift (bottom-right with
  // Skv < Sq) clamps the bounds at 0, and a query tile that sees no key at
  // all gets an empty K/V loop and yields 0. Top-left bounds are never
  // negative and need no clamp.
  bool shifted = causal->alignment == CausalMask::Alignment::BottomRight;
  auto clampAtZero = [&](AffineExpr e, ArrayRef<OpFoldResult> operands) {
    if (!shifted)
      return affine::makeComposedFoldedAffineApply(
          b, loc, AffineMap::get(2, 2, e, ctx), operands);
    auto map = AffineMap::get(2, 2, {b.getAffineConstantExpr(0), e}, ctx);
    return affine::makeComposedFoldedAffineMax(b, loc, map, operands);
  };
  auto minTiles = [&](OpFoldResult bound) {
    AffineExpr d0;
    bindDims(ctx, d0);
    auto map = AffineMap::get(1, 1, {nkv, d0}, ctx);
    return affine::makeComposedFoldedAffineMin(b, loc, map, {bound, kvTiles});
  };
  // Visited: tiles whose first key j * blockKV is visible to the tile's
  // last query row q0 + mq - 1: j < ceildiv(q0 + mq + delta, blockKV).
  OpFoldResult visited =
      minTiles(clampAtZero((q0 + mq + delta).ceilDiv(tiles.blockKV),
                           {qStart, qRows, kvTiles, shift}));
  // Unmasked: tiles whose last key j * blockKV + blockKV - 1 is visible to
  // the first query row q0: j < (q0 + 1 + delta) floordiv blockKV. Never
  // more than `visited` (mq >= 1). A short last K/V tile that ends before
  // the diagonal still gets the mask, which is then a no-op: it keeps the
  // bound affine.
  OpFoldResult unmasked =
      minTiles(clampAtZero((q0 + 1 + delta).floorDiv(tiles.blockKV),
                           {qStart, qRows, kvTiles, shift}));
  return {unmasked, visited};
}

OpFoldResult FlashFormBuilder::evaluate(const KeyBound &bound,
                                        OpFoldResult row) {
  MLIRContext *ctx = b.getContext();
  if (bound.kind == KeyBound::Kind::Affine) {
    SmallVector<OpFoldResult> operands = {row};
    for (Value s : interval->symbols) {
      // (A per-block read of the region: its one read per block.)
      if (KeyInterval::isRegionRead(s, op.getMask()))
        s = readRegionBlock(cast<tensor::ExtractOp>(s.getDefiningOp()));
      operands.push_back(
          s.getType().isIndex()
              ? s
              : arith::IndexCastOp::create(b, loc, b.getIndexType(), s)
                    .getResult());
    }
    auto map = AffineMap::get(1, interval->symbols.size(), bound.expr, ctx);
    return affine::makeComposedFoldedAffineApply(b, loc, map, operands);
  }
  OpFoldResult l = evaluate(*bound.lhs, row), r = evaluate(*bound.rhs, row);
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  auto map = AffineMap::get(2, 0, {d0, d1}, ctx);
  if (bound.kind == KeyBound::Kind::Min)
    return affine::makeComposedFoldedAffineMin(b, loc, map, {l, r});
  return affine::makeComposedFoldedAffineMax(b, loc, map, {l, r});
}

/// With a mask whose keys for query i are lo(i) <= j <= hi(i), lo and hi
/// non-decreasing, a query tile of rows [q0, q1] sees keys from lo(q0) to
/// hi(q1) and sees all of [lo(q1), hi(q0)]. Returns the K/V tile indices
/// {first, full, fullEnd, end}: tiles [first, end) are visited, those in
/// [full, fullEnd) need no mask (empty for an inexact interval), the rest
/// are masked; all clamped to [0, number of K/V tiles].
std::array<OpFoldResult, 4> FlashFormBuilder::getIntervalTileBounds() {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  int64_t bkv = tiles.blockKV;
  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult lastRow = affine::makeComposedFoldedAffineApply(
      b, loc, d0 + d1 - 1, {qStart, qRows});
  // Key positions; unbounded sides are the sequence's ends.
  OpFoldResult loFirst = interval->lo ? evaluate(*interval->lo, qStart) : zero;
  OpFoldResult loLast = interval->lo ? evaluate(*interval->lo, lastRow) : zero;
  OpFoldResult hiFirst = interval->hi ? evaluate(*interval->hi, qStart) : seqKV;
  OpFoldResult hiLast = interval->hi ? evaluate(*interval->hi, lastRow) : seqKV;
  // clamp(x) = min(max(x, lo), hi) over tile indices.
  auto clamp = [&](AffineExpr x, ArrayRef<OpFoldResult> operands,
                   OpFoldResult lo, OpFoldResult hi) {
    SmallVector<OpFoldResult> ops(operands);
    ops.resize(1, zero);
    OpFoldResult v = affine::makeComposedFoldedAffineApply(
        b, loc, AffineMap::get(1, 0, x, ctx), ops);
    v = affine::makeComposedFoldedAffineMax(
        b, loc, AffineMap::get(2, 0, {d0, d1}, ctx), {v, lo});
    return affine::makeComposedFoldedAffineMin(
        b, loc, AffineMap::get(2, 0, {d0, d1}, ctx), {v, hi});
  };
  // The tile holding key lo(q0); one past the tile holding key hi(q1).
  // Without lo, tile 0: a constant, so that an empty left side is seen to
  // be empty (no loop for it).
  OpFoldResult first =
      interval->lo ? clamp(d0.floorDiv(bkv), {loFirst}, zero, kvTiles) : zero;
  OpFoldResult end = clamp(d0.floorDiv(bkv) + 1, {hiLast}, first, kvTiles);
  if (!interval->exact)
    return {first, first, first, end};
  // Tiles whose first key is at least lo(q1) and whose last key is at most
  // hi(q0).
  OpFoldResult full =
      interval->lo ? clamp(d0.ceilDiv(bkv), {loLast}, first, end) : first;
  OpFoldResult fullEnd = clamp((d0 + 1).floorDiv(bkv), {hiFirst}, full, end);
  return {first, full, fullEnd, end};
}

RecurrenceState FlashFormBuilder::buildKVLoop(
    OpFoldResult lb, OpFoldResult ub, bool masked, RecurrenceState init,
    function_ref<Value(OpBuilder &, Value)> tileOf, bool wholeTiles) {
  auto loop = scf::ForOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, lb),
      getValueOrCreateConstantIndexOp(b, loc, ub), one,
      ValueRange{init.acc, init.max, init.sum},
      [&](OpBuilder &nested, Location loc, Value n, ValueRange iterArgs) {
        Value j = tileOf ? tileOf(nested, n) : n;
        OpFoldResult kvStart = getTileStart(nested, loc, j, tiles.blockKV);
        OpFoldResult kvRows =
            wholeTiles
                ? OpFoldResult(nested.getIndexAttr(tiles.blockKV))
                : getTileExtent(nested, loc, kvStart, tiles.blockKV, seqKV);
        Value key, value;
        if (ragged) {
          key = extractPackedTile(nested, ragged->k.getPacked(), kvBase, headKV,
                                  kvStart, kvRows);
          value = extractPackedTile(nested, ragged->v.getPacked(), kvBase,
                                    headKV, kvStart, kvRows);
        } else {
          key = extractTile(nested, loc, op.getKey(), batch, headKV, kvStart,
                            kvRows);
          value = extractTile(nested, loc, op.getValue(), batch, headKV,
                              kvStart, kvRows);
        }
        auto step = OnlineAttentionOp::create(
            nested, loc, queryTile, key, value, iterArgs[0], iterArgs[1],
            iterArgs[2], batch, head,
            getValueOrCreateConstantIndexOp(nested, loc, qStart),
            getValueOrCreateConstantIndexOp(nested, loc, kvStart),
            op.getRuntimeScale(), op.getDropoutSeed(), op.getDropoutOffset(),
            dropoutRow, dropoutRowWords, op.getScaleAttr(),
            op.getDropoutProbabilityAttr());
        // The score modifier applies to every tile; the mask only to the
        // tiles the causal split could not prove fully visible.
        IRMapping none;
        op.getScore().cloneInto(&step.getScore(), none);
        if (masked)
          op.getMask().cloneInto(&step.getMask(), none);
        scf::YieldOp::create(nested, loc, step.getResults());
      });
  hoistBlockReads(*loop.getBody()->getOps<OnlineAttentionOp>().begin(), loop);
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// min(bound, Skv floordiv block_kv): the end of the K/V tiles before
/// `bound` that hold block_kv keys each.
OpFoldResult FlashFormBuilder::getWholeTilesBefore(OpFoldResult bound) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, s0;
  bindDims(ctx, d0);
  bindSymbols(ctx, s0);
  return affine::makeComposedFoldedAffineMin(
      b, loc, AffineMap::get(1, 1, {d0, s0.floorDiv(tiles.blockKV)}, ctx),
      {bound, seqKV});
}

/// `e` of `operands` (its dims), folded where they are constants.
static OpFoldResult applyExpr(OpBuilder &b, Location loc, AffineExpr e,
                              ArrayRef<OpFoldResult> operands) {
  return affine::makeComposedFoldedAffineApply(
      b, loc, AffineMap::get(operands.size(), 0, e, b.getContext()), operands);
}

/// The masked tiles of an interval lie on both sides of the fully visible
/// ones: [first, full) left of them and [fullEnd, end) right. Two loops, one
/// per side, would give every kernel two copies of the masked step; here
/// one loop visits both sides and a second one the unmasked tiles. Their
/// induction variable n counts visits, and the tile of visit n is
///
///   t(n) = first + n           for n < L = full - first
///          fullEnd' + n - L    for L <= n < M = L + end - fullEnd'
///          full + n - M        for M <= n < T = M + fullEnd' - full
///
/// The masked loop runs n over [0, M), the unmasked one over [M, T). Both
/// evaluate the same t, so a kernel's pipeline runs through them as through
/// consecutive tile ranges (the load of visit n + 1 is sliced by the loop
/// of visit n). fullEnd' = max(full, min(fullEnd, Skv floordiv block_kv))
/// ends the unmasked tiles at the last one that holds block_kv keys: a
/// short tail tile joins the masked ones, whose steps test the keys'
/// bounds, and the unmasked loop's tiles are whole. Without tiles masked on
/// the left (prefix-LM) the tiles keep their order, as a causal mask's do:
/// the unmasked ones [full, fullEnd') then the masked ones [fullEnd', end),
/// t(n) = n.
RecurrenceState
FlashFormBuilder::buildMaskedFirst(std::array<OpFoldResult, 4> bounds,
                                   RecurrenceState init) {
  auto [first, full, fullEnd, end] = bounds;
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  auto apply = [&](AffineExpr e, ArrayRef<OpFoldResult> operands) {
    return applyExpr(b, loc, e, operands);
  };
  auto pair = AffineMap::get(2, 0, {d0, d1}, ctx);
  OpFoldResult wholeEnd = affine::makeComposedFoldedAffineMax(
      b, loc, pair, {full, getWholeTilesBefore(fullEnd)});
  OpFoldResult left = apply(d0 - d1, {full, first});
  if (isConstantIntValue(left, 0)) {
    RecurrenceState state =
        buildKVLoop(full, wholeEnd, /*masked=*/false, init,
                    /*tileOf=*/nullptr, /*wholeTiles=*/true);
    return buildKVLoop(wholeEnd, end, /*masked=*/true, state);
  }
  OpFoldResult masked = apply(d0 + d1 - d2, {left, end, wholeEnd});
  OpFoldResult visits = apply(d0 + d1 - d2, {masked, wholeEnd, full});
  return buildVisitLoops(first, left, full, wholeEnd, masked, visits, init);
}

/// Visit n of the masked loop [0, masked) and of the unmasked loop
/// [masked, visits) is tile
///
///   t(n) = first + n              for n < left
///          wholeEnd + n - left    for left <= n < masked
///          full + n - masked      for masked <= n < visits
///
/// (without tiles masked on the left, the first line's select is left
/// out); both loops evaluate the same t.
RecurrenceState
FlashFormBuilder::buildVisitLoops(OpFoldResult first, OpFoldResult left,
                                  OpFoldResult full, OpFoldResult wholeEnd,
                                  OpFoldResult masked, OpFoldResult visits,
                                  RecurrenceState init) {
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  bool hasLeft = !isConstantIntValue(left, 0);
  Value firstV = hasLeft ? value(first) : Value();
  Value fullV = value(full), wholeEndV = value(wholeEnd);
  Value leftV = hasLeft ? value(left) : Value();
  Value maskedV = value(masked);
  // One op per statement: the order of the IR does not depend on the
  // compiler's order of evaluating arguments.
  auto tileOf = [&](OpBuilder &nb, Value n) -> Value {
    Value onRight =
        arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, n, maskedV);
    Value pastLeft = hasLeft ? arith::SubIOp::create(nb, loc, n, leftV) : n;
    Value rightTile = arith::AddIOp::create(nb, loc, wholeEndV, pastLeft);
    Value fullTile = arith::SubIOp::create(nb, loc, n, maskedV);
    if (!isConstantIntValue(full, 0))
      fullTile = arith::AddIOp::create(nb, loc, fullV, fullTile);
    Value notLeft =
        arith::SelectOp::create(nb, loc, onRight, rightTile, fullTile);
    if (!hasLeft)
      return notLeft;
    Value onLeft =
        arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, n, leftV);
    Value leftTile = arith::AddIOp::create(nb, loc, firstV, n);
    return arith::SelectOp::create(nb, loc, onLeft, leftTile, notLeft);
  };
  RecurrenceState state =
      buildKVLoop(b.getIndexAttr(0), maskedV, /*masked=*/true, init, tileOf);
  return buildKVLoop(maskedV, visits, /*masked=*/false, state, tileOf,
                     /*wholeTiles=*/true);
}

/// A score modifier that reads the key position (ALiBi's slope * (j - i))
/// under a causal mask grows toward the diagonal: visited in key order, a
/// steep head's row max moves at every step and every step rescales the
/// output. Its masked tiles (the diagonal, where such a row's max sits) are
/// visited first, then the unmasked ones in key order; the visit n of the
/// two loops is tile
///
///   t(n) = whole + n           for n < M = visited - whole
///          first + n - M       for M <= n < M + whole - first
///
/// one function in both loops, so a kernel's load pipeline runs on from
/// the masked loop into the unmasked one, as buildMaskedFirst's do.
RecurrenceState FlashFormBuilder::buildDiagonalFirst(OpFoldResult first,
                                                     OpFoldResult whole,
                                                     OpFoldResult visited,
                                                     RecurrenceState init) {
  AffineExpr d0, d1, d2;
  bindDims(b.getContext(), d0, d1, d2);
  OpFoldResult masked = applyExpr(b, loc, d0 - d1, {visited, whole});
  OpFoldResult visits = applyExpr(b, loc, d0 + d1 - d2, {masked, whole, first});
  return buildVisitLoops(first, b.getIndexAttr(0), first, whole, masked, visits,
                         init);
}

std::pair<Value, Value> FlashFormBuilder::buildQueryTileBody() {
  queryTile =
      ragged ? extractPackedTile(b, ragged->q.getPacked(), qBase, head, qStart,
                                 qRows)
             : extractTile(b, loc, op.getQuery(), batch, head, qStart, qRows);

  if (op.hasDropout()) {
    AffineExpr b0, h0, q0, heads, seqQ, seqKV;
    bindDims(b.getContext(), b0, h0, q0);
    bindSymbols(b.getContext(), heads, seqQ, seqKV);
    auto map = [&](AffineExpr e) { return AffineMap::get(3, 3, e); };
    SmallVector<OpFoldResult> operands = {batch,   head,   qStart,
                                          e.heads, e.seqQ, e.seqKV};
    dropoutRow = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(
            b, loc, map((b0 * heads + h0) * seqQ + q0), operands));
    dropoutRowWords = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, map(seqKV.ceilDiv(8)),
                                              operands));
  }

  // The recurrence starts from acc = 0, max = -inf, sum = 0, as
  // attnc.online_attention's contract asks.
  auto zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  auto negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  SmallVector<OpFoldResult> accSizes = {qRows, b.getIndexAttr(e.headDimV)};
  SmallVector<OpFoldResult> rowSizes = {qRows};
  RecurrenceState state = {tensor::SplatOp::create(b, loc, zero, accSizes),
                           tensor::SplatOp::create(b, loc, negInf, rowSizes),
                           tensor::SplatOp::create(b, loc, zero, rowSizes)};

  one = arith::ConstantIndexOp::create(b, loc, 1);
  OpFoldResult first = b.getIndexAttr(0);
  if (interval) {
    std::array<OpFoldResult, 4> bounds = getIntervalTileBounds();
    // (A ragged batch's positions are its sequence's: ids read per position
    // do not bound its tiles, and no tile is proven visible.)
    bool exact = interval->exact && (interval->matches.empty() || !ragged);
    if (!interval->matches.empty() && !ragged)
      bounds = boundByIds(bounds);
    auto [begin, full, fullEnd, end] = bounds;
    if (exact && oneMaskedLoop) {
      state = buildMaskedFirst(bounds, state);
    } else if (exact) {
      // (No tile is masked left of the unmasked ones without a lower bound
      // on the keys or ids: prefix-LM.)
      if (begin != full)
        state = buildKVLoop(begin, full, /*masked=*/true, state);
      state = buildKVLoop(full, fullEnd, /*masked=*/false, state);
      state = buildKVLoop(fullEnd, end, /*masked=*/true, state);
    } else {
      state = buildKVLoop(begin, end, /*masked=*/true, state);
    }
  } else if (!causal) {
    // No mask, or one without an interval form: every tile, each with the
    // mask.
    state =
        buildKVLoop(first, kvTiles, /*masked=*/!op.getMask().empty(), state);
  } else {
    auto [unmasked, visited] = getCausalTileCounts();
    if (oneMaskedLoop) {
      // The unmasked tiles stop at the last whole one: a short tail tile
      // joins the masked ones, whose steps test the keys' bounds, and the
      // kernel has one loop body with tests per score instead of two.
      OpFoldResult whole = getWholeTilesBefore(unmasked);
      if (op.scoreReadsKeyPositions()) {
        state = buildDiagonalFirst(first, whole, visited, state);
      } else {
        state = buildKVLoop(first, whole, /*masked=*/false, state,
                            /*tileOf=*/nullptr, /*wholeTiles=*/true);
        state = buildKVLoop(whole, visited, /*masked=*/true, state);
      }
    } else {
      state = buildKVLoop(first, unmasked, /*masked=*/false, state);
      state = buildKVLoop(unmasked, visited, /*masked=*/true, state);
    }
  }

  Type elementType = op.getResult().getType().getElementType();
  auto finalize = OnlineAttentionFinalizeOp::create(
      b, loc, getTileType(qRows, e.headDimV, elementType), state.max.getType(),
      state.acc, state.max, state.sum);
  return {finalize.getResult(), finalize.getLogsumexp()};
}

scf::ForallOp FlashFormBuilder::build() {
  MLIRContext *ctx = b.getContext();
  // Everything that does not depend on the query tile is computed once,
  // outside the parallel loop.
  e = ragged ? getRaggedExtents(b, op, ragged->q, ragged->k, ragged->v)
             : getAttentionExtents(b, op);
  numQTiles = getNumTiles(b, loc, e.seqQ, tiles.blockQ);
  numKVTiles = getNumTiles(b, loc, e.seqKV, tiles.blockKV);
  std::optional<int64_t> h = getConstantIntValue(e.heads),
                         hkv = getConstantIntValue(e.headsKV);
  if (h && hkv)
    headGroup = b.getIndexAttr(*h / *hkv);
  else
    headGroup = arith::DivUIOp::create(
                    b, loc, getValueOrCreateConstantIndexOp(b, loc, e.heads),
                    getValueOrCreateConstantIndexOp(b, loc, e.headsKV))
                    .getResult();

  RankedTensorType resultType = op.getResult().getType();
  auto lseType =
      RankedTensorType::get(resultType.getShape().drop_back(), b.getF32Type());
  OpFoldResult headDimV = b.getIndexAttr(e.headDimV);
  Value resultInit, lseInit;
  if (ragged) {
    // The packed O [T, H, dv] and logsumexp [T, H].
    resultType = ragged->pack.getResult().getType();
    lseType = RankedTensorType::get(resultType.getShape().drop_back(),
                                    b.getF32Type());
    resultInit = createEmpty(b, loc, resultType, {e.seqQ, e.heads, headDimV});
    lseInit = createEmpty(b, loc, lseType, {e.seqQ, e.heads});
  } else {
    resultInit =
        createEmpty(b, loc, resultType, {e.batch, e.heads, e.seqQ, headDimV});
    lseInit = createEmpty(b, loc, lseType, {e.batch, e.heads, e.seqQ});
  }

  // Without a causal mask every query tile does the same work. Query tiles
  // then go on grid x, the fastest-varying block index: consecutive CTAs
  // share (batch, head) and so read the same K/V, which stays in L2
  // (FlashAttention-2's grid order). Heads and batch, each at most 65535 in
  // practice, fit grid y and z.
  //
  // With a causal mask the last query tile sees ceil(Skv / block_kv) K/V
  // tiles and the first only one. The grid is then ordered longest first
  // within each batch: heads go on grid x, query tiles on y, counted down
  // from the last one, batch on z. The short tiles fill the tail of the grid
  // instead of a few long ones running alone at its end (measured on the
  // H200, bf16: +5-9% at d=128 and +10-18% at d=64 for S >= 2048 over
  // FlashAttention-2's order, which is longest first only within one head).
  // The same holds for any mask whose keys end at a bound that grows with
  // the query, from the first key or from where id matches say
  // (boundGrowsWithQuery): prefix-LM, and documents under a causal mask,
  // whose tiles the bound only caps (H100, four documents causal, d = 128:
  // 310 -> 330 TFLOP/s at S = 4k, 433 -> 445 at 8k).
  // Grid y allows 65535 query tiles; the runtime refuses larger grids at
  // plan time.
  auto block = [&](gpu::MappingId id) -> Attribute {
    return gpu::GPUBlockMappingAttr::get(ctx, id);
  };
  bool longestFirst =
      causal.has_value() || (interval && boundGrowsWithQuery(*interval, ctx));
  using gpu::MappingId;
  ArrayAttr mapping =
      b.getArrayAttr({block(MappingId::DimZ),
                      block(longestFirst ? MappingId::DimX : MappingId::DimY),
                      block(longestFirst ? MappingId::DimY : MappingId::DimX)});
  // The last query tile, from the loop's bound.
  Value lastQTile;
  if (longestFirst) {
    if (std::optional<int64_t> n = getConstantIntValue(numQTiles))
      lastQTile = arith::ConstantIndexOp::create(b, loc, *n - 1);
    else
      lastQTile = arith::SubIOp::create(
          b, loc, cast<Value>(numQTiles),
          arith::ConstantIndexOp::create(b, loc, 1),
          arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw);
  }
  auto forall = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{e.batch, e.heads, numQTiles},
      ValueRange{resultInit, lseInit}, mapping);
  forall->setAttr(kFlashConfigAttrName, config);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> ivs = forall.getInductionVars();
  batch = ivs[0];
  head = ivs[1];
  headKV = getKVHead(head);
  seqKV = e.seqKV;
  kvTiles = numKVTiles;
  if (ragged) {
    // (Before the K/V tiles' bounds: the batch's first rows and keys.)
    qBase = readBatchIndex(ragged->q.getStarts());
    kvBase = readBatchIndex(ragged->k.getStarts());
    seqKV = raggedRows(ragged->k, e.seqKV);
    kvTiles = getNumTiles(b, loc, seqKV, tiles.blockKV);
  }
  if (Value lengths = op.getKvLengths()) {
    // Read once per (batch, head, query tile). Unsigned: a length past the
    // cache (or a negative one, read as huge) means the whole cache.
    seqKV =
        arith::MinUIOp::create(b, loc, readBatchIndex(lengths),
                               getValueOrCreateConstantIndexOp(b, loc, e.seqKV))
            .getResult();
    kvTiles = getNumTiles(b, loc, seqKV, tiles.blockKV);
  }
  // The reversed tile index is an arith op, not an affine one: composed
  // into every map that uses the tile's start, the reversal turns them all
  // into signed expressions of ceildiv(Sq, block_q), which the kernel then
  // evaluates and keeps live (measured at d=64: 3x the spills, -3% at
  // S=512).
  Value qTile = ivs[2];
  if (longestFirst)
    qTile = arith::SubIOp::create(b, loc, lastQTile, qTile,
                                  arith::IntegerOverflowFlags::nsw |
                                      arith::IntegerOverflowFlags::nuw);
  qStart = getTileStart(b, loc, qTile, tiles.blockQ);
  qRows = getTileExtent(b, loc, qStart, tiles.blockQ, e.seqQ);
  // A ragged Q: the tile's rows stop at its sequence's end; a tile past it
  // has none and visits no K/V tile (the grid covers the longest sequence
  // the packed rows allow).
  if (ragged) {
    Value rows = raggedRows(ragged->q, e.seqQ);
    Value start = getValueOrCreateConstantIndexOp(b, loc, qStart);
    qRows =
        getTileExtent(b, loc, qStart, tiles.blockQ,
                      arith::MaxUIOp::create(b, loc, rows, start).getResult());
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, start, rows);
    kvTiles =
        arith::SelectOp::create(
            b, loc, inside, getValueOrCreateConstantIndexOp(b, loc, kvTiles),
            arith::ConstantIndexOp::create(b, loc, 0))
            .getResult();
  }
  auto [outTile, lseTile] = buildQueryTileBody();
  // A ragged batch writes rows qBase + qStart.. of the packed O and
  // logsumexp.
  Value row;
  if (ragged)
    row = arith::AddIOp::create(
        b, loc, qBase, getValueOrCreateConstantIndexOp(b, loc, qStart));

  // Each (batch, head, query tile) owns a disjoint slice of O and of the
  // logsumexp, which is what makes the loop parallel.
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult unit = b.getIndexAttr(1);
  ValueRange outs = forall.getRegionIterArgs();
  if (ragged) {
    tensor::ParallelInsertSliceOp::create(
        b, loc, outTile, outs[0],
        SmallVector<OpFoldResult>{row, head, b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{qRows, unit, b.getIndexAttr(e.headDimV)},
        SmallVector<OpFoldResult>(3, unit));
    tensor::ParallelInsertSliceOp::create(
        b, loc, lseTile, outs[1], SmallVector<OpFoldResult>{row, head},
        SmallVector<OpFoldResult>{qRows, unit},
        SmallVector<OpFoldResult>(2, unit));
    return forall;
  }
  insertTile(b, loc, outTile, outs[0], batch, head, qStart, qRows);
  tensor::ParallelInsertSliceOp::create(
      b, loc, lseTile, outs[1], SmallVector<OpFoldResult>{batch, head, qStart},
      SmallVector<OpFoldResult>{unit, unit, qRows},
      SmallVector<OpFoldResult>(3, unit));
  return forall;
}

/// How bound `k` changes as the query grows: 1 it grows, 0 it is constant,
/// -1 anything else (it may shrink, or is not affine in the query).
static int growth(const KeyBound &k, unsigned symbols, MLIRContext *ctx) {
  if (k.kind != KeyBound::Kind::Affine) {
    int l = growth(*k.lhs, symbols, ctx), r = growth(*k.rhs, symbols, ctx);
    return l < 0 || r < 0 ? -1 : std::max(l, r);
  }
  if (!k.expr.isPureAffine())
    return -1;
  if (!k.expr.isFunctionOfDim(0))
    return 0;
  // Linear in the query: its coefficient is the value at 1 less at 0.
  SmallVector<AffineExpr> zeros(symbols, getAffineConstantExpr(0, ctx));
  auto at = [&](int64_t i) -> std::optional<int64_t> {
    AffineExpr v = simplifyAffineExpr(
        k.expr.replaceDimsAndSymbols({getAffineConstantExpr(i, ctx)}, zeros), 0,
        0);
    if (auto c = dyn_cast<AffineConstantExpr>(v))
      return c.getValue();
    return std::nullopt;
  };
  std::optional<int64_t> v0 = at(0), v1 = at(1);
  return v0 && v1 && *v1 > *v0 ? 1 : -1;
}

bool attnc::flash_form::boundGrowsWithQuery(const KeyInterval &interval,
                                            MLIRContext *ctx) {
  return !interval.lo && interval.hi &&
         growth(*interval.hi, interval.symbols.size(), ctx) > 0;
}
