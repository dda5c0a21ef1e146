//===- OnlineSoftmaxBackward.cpp - attnc.attention_grad's flash form ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The flash form of the attention backward (FlashAttention-2's, K/V
// stationary): a `scf.forall` over (batch, K/V head, K/V tile) keeps one K/V
// tile and its dK, dV accumulators while `scf.for` loops walk the query
// heads of its group and, for each, the query tiles that see the tile. Each
// step is an `attnc.online_attention_grad`, which recomputes P from the
// logsumexp; its dQ contribution is summed into the forall's dQ with
// `attnc.accumulate` and `attnc.parallel_accumulate` (atomics on the GPU),
// dK and dV are written once per tile. A causal mask splits the query loop
// like the forward's K/V loop: query tiles before the diagonal are skipped,
// tiles crossing it run the mask, tiles past it run without. An interval
// mask whose bounds are the query index shifted (sliding windows) is
// inverted the same way; any other mask runs on every tile.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

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

namespace {

/// The accumulators a K/V tile carries through its query loops: dK, dV
/// (f32 tiles) and its dQ contributions, `[G, Sq, d]` for the G query heads
/// of its group.
struct GradState {
  Value dk, dv, dq;
};

class BackwardFormBuilder {
public:
  BackwardFormBuilder(RewriterBase &b, AttentionGradOp op,
                      FlashConfigAttr config)
      : b(b), op(op), loc(op.getLoc()), config(config),
        blockQ(config.getBlockQ()), blockKV(config.getBlockKV()),
        causal(op.getCausalMask()) {
    if (!causal)
      interval = analyzeKeyInterval(op.getMask());
    // Id matches bound a query tile's keys (the forward's loop); here the
    // loop runs over query tiles, which they do not bound: the interval
    // alone bounds them, with every tile masked.
    if (interval && !interval->matches.empty()) {
      if (!interval->lo && !interval->hi)
        interval.reset();
      else
        interval->exact = false;
    }
    // Bounds that read a tensor per block (a run-time window) are the
    // forward's: here every query tile is visited, masked.
    if (interval && llvm::any_of(interval->symbols, [&](Value s) {
          return KeyInterval::isRegionRead(s, op.getMask());
        }))
      interval.reset();
  }

  scf::ForallOp build();

  /// Masked query tiles on both sides of a K/V tile's fully visible ones go
  /// in one loop (buildMaskedFirst).
  bool oneMaskedLoop = true;

private:
  /// With an interval mask whose bounds are the query index plus a value
  /// (windows, shifted causal), the query tiles {first, full, fullEnd,
  /// end}: [first, end) see some key of the K/V tile, [full, fullEnd) all
  /// of them. None for other intervals.
  std::optional<std::array<OpFoldResult, 4>> getIntervalQueryTiles();
  /// Query tiles [first, diagonalEnd) cross the diagonal of the K/V tile
  /// and need the mask; [diagonalEnd, numQ) see all of it.
  std::pair<OpFoldResult, OpFoldResult> getCausalQueryTiles();
  /// `scf.for %i = lb to ub` over query tiles, each step one
  /// `attnc.online_attention_grad` (with the op's mask iff `masked`); with
  /// `tileOf`, %i counts visits and the step's tile is `tileOf(%i)`.
  GradState
  buildQueryLoop(OpFoldResult lb, OpFoldResult ub, bool masked, Value group,
                 GradState init,
                 function_ref<Value(OpBuilder &, Value)> tileOf = nullptr);
  /// The query loops of interval tiles {first, full, fullEnd, end} with
  /// the masked tiles of both sides in one loop; see the definition.
  GradState buildMaskedFirst(std::array<OpFoldResult, 4> tiles, Value group,
                             GradState init);

  RewriterBase &b;
  AttentionGradOp op;
  Location loc;
  FlashConfigAttr config;
  int64_t blockQ, blockKV;
  std::optional<CausalMask> causal;
  std::optional<KeyInterval> interval;

  OpFoldResult batchExt, heads, seqQ, headsKV, seqKV, numQTiles, numKVTiles,
      headGroup;
  int64_t headDim, headDimV;
  /// The current (batch, K/V head, K/V tile) and its query head.
  Value batch, headKV, head;
  OpFoldResult kvStart, kvRows;
  Value keyTile, valueTile, one;
};
} // namespace

/// Key j is visible to query i iff j <= i + delta (delta = 0 top-left,
/// Skv - Sq bottom-right). The query tile t reaches the K/V tile's first
/// key kv0 from its last row on: t >= floordiv(kv0 - delta, block_q); it
/// sees every key of the tile from its first row on: t >= ceildiv(kv0 +
/// block_kv - 1 - delta, block_q). Both are clamped to [0, numQ].
std::pair<OpFoldResult, OpFoldResult>
BackwardFormBuilder::getCausalQueryTiles() {
  MLIRContext *ctx = b.getContext();
  OpFoldResult shift = b.getIndexAttr(0);
  if (causal->alignment == CausalMask::Alignment::BottomRight) {
    AffineExpr sq, skv;
    bindSymbols(ctx, sq, skv);
    shift = affine::makeComposedFoldedAffineApply(
        b, loc, skv - sq, {causal->seqQ, causal->seqKV});
  }
  AffineExpr kv0, delta;
  bindDims(ctx, kv0);
  bindSymbols(ctx, delta);
  // Top-left bounds are never negative; bottom-right ones (Skv > Sq) are
  // clamped at 0.
  bool shifted = causal->alignment == CausalMask::Alignment::BottomRight;
  // first <= full without clamping (block_kv >= 1), and clamping keeps
  // the order.
  auto clamp = [&](AffineExpr e) {
    OpFoldResult v =
        shifted
            ? affine::makeComposedFoldedAffineMax(
                  b, loc,
                  AffineMap::get(1, 1, {b.getAffineConstantExpr(0), e}, ctx),
                  {kvStart, shift})
            : affine::makeComposedFoldedAffineApply(
                  b, loc, AffineMap::get(1, 1, e, ctx), {kvStart, shift});
    AffineExpr d0, d1;
    bindDims(ctx, d0, d1);
    return affine::makeComposedFoldedAffineMin(
        b, loc, AffineMap::get(2, 0, {d0, d1}, ctx), {v, numQTiles});
  };
  OpFoldResult first = clamp((kv0 - delta).floorDiv(blockQ));
  OpFoldResult full = clamp((kv0 + blockKV - 1 - delta).ceilDiv(blockQ));
  return {first, full};
}

/// Key j is visible to query i iff lo(i) <= j <= hi(i). When each bound is
/// i + c (c a function of the sizes), inverting it is exact: the K/V tile
/// [kv0, kv0 + block_kv) is seen by queries i >= kv0 - cHi (hi reaches its
/// first key) and i <= kv0 + block_kv - 1 - cLo (lo reaches its last key),
/// and wholly by i >= kv0 + block_kv - 1 - cHi and i <= kv0 - cLo. A
/// missing side bounds nothing.
std::optional<std::array<OpFoldResult, 4>>
BackwardFormBuilder::getIntervalQueryTiles() {
  if (!interval)
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  unsigned numSyms = interval->symbols.size();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  // The bound minus the query index, when that no longer depends on it.
  auto offsetOf =
      [&](const std::shared_ptr<KeyBound> &bound) -> std::optional<AffineExpr> {
    if (!bound || bound->kind != KeyBound::Kind::Affine)
      return std::nullopt;
    AffineExpr c = simplifyAffineExpr(bound->expr - d0, 1, numSyms);
    if (c.isFunctionOfDim(0))
      return std::nullopt;
    return c;
  };
  std::optional<AffineExpr> cLo = offsetOf(interval->lo);
  std::optional<AffineExpr> cHi = offsetOf(interval->hi);
  if ((interval->lo && !cLo) || (interval->hi && !cHi))
    return std::nullopt;
  SmallVector<OpFoldResult> operands = {kvStart};
  for (Value sym : interval->symbols)
    operands.push_back(
        sym.getType().isIndex()
            ? sym
            : arith::IndexCastOp::create(b, loc, b.getIndexType(), sym)
                  .getResult());
  OpFoldResult zero = b.getIndexAttr(0);
  AffineExpr x0, x1;
  bindDims(ctx, x0, x1);
  auto clamp = [&](OpFoldResult v, OpFoldResult lo, OpFoldResult hi) {
    auto pair = AffineMap::get(2, 0, {x0, x1}, ctx);
    v = affine::makeComposedFoldedAffineMax(b, loc, pair, {v, lo});
    return affine::makeComposedFoldedAffineMin(b, loc, pair, {v, hi});
  };
  auto tile = [&](AffineExpr e) {
    return affine::makeComposedFoldedAffineApply(
        b, loc, AffineMap::get(1, numSyms, e, ctx), operands);
  };
  int64_t last = blockKV - 1;
  OpFoldResult first =
      cHi ? clamp(tile((d0 - *cHi).floorDiv(blockQ)), zero, numQTiles) : zero;
  OpFoldResult end = cLo ? clamp(tile((d0 + last - *cLo).floorDiv(blockQ) + 1),
                                 first, numQTiles)
                         : numQTiles;
  if (!interval->exact)
    return std::array<OpFoldResult, 4>{first, first, first, end};
  OpFoldResult full =
      cHi ? clamp(tile((d0 + last - *cHi).ceilDiv(blockQ)), first, end) : first;
  OpFoldResult fullEnd =
      cLo ? clamp(tile((d0 - *cLo + 1).floorDiv(blockQ)), full, end) : end;
  return std::array<OpFoldResult, 4>{first, full, fullEnd, end};
}

GradState BackwardFormBuilder::buildQueryLoop(
    OpFoldResult lb, OpFoldResult ub, bool masked, Value group, GradState init,
    function_ref<Value(OpBuilder &, Value)> tileOf) {
  auto loop = scf::ForOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, lb),
      getValueOrCreateConstantIndexOp(b, loc, ub), one,
      ValueRange{init.dk, init.dv, init.dq},
      [&](OpBuilder &nb, Location loc, Value n, ValueRange acc) {
        Value i = tileOf ? tileOf(nb, n) : n;
        OpFoldResult qStart = getTileStart(nb, loc, i, blockQ);
        OpFoldResult qRows = getTileExtent(nb, loc, qStart, blockQ, seqQ);
        Value q =
            extractTile(nb, loc, op.getQuery(), batch, head, qStart, qRows);
        Value dO =
            extractTile(nb, loc, op.getOutGrad(), batch, head, qStart, qRows);
        OpFoldResult unit = nb.getIndexAttr(1), origin = nb.getIndexAttr(0);
        auto rowType = RankedTensorType::get(
            {getConstantIntValue(qRows).value_or(ShapedType::kDynamic)},
            nb.getF32Type());
        Value lse = tensor::ExtractSliceOp::create(
            nb, loc, rowType, op.getLogsumexp(),
            SmallVector<OpFoldResult>{batch, head, qStart},
            SmallVector<OpFoldResult>{unit, unit, qRows},
            SmallVector<OpFoldResult>(3, unit));
        Value delta = tensor::ExtractSliceOp::create(
            nb, loc, rowType, op.getDelta(),
            SmallVector<OpFoldResult>{batch, head, qStart, origin},
            SmallVector<OpFoldResult>{unit, unit, qRows, unit},
            SmallVector<OpFoldResult>(4, unit));
        Value q0 = getValueOrCreateConstantIndexOp(nb, loc, qStart);
        auto step = OnlineAttentionGradOp::create(
            nb, loc, acc[0].getType(), acc[1].getType(),
            getTileType(qRows, headDim, nb.getF32Type()), q, keyTile, valueTile,
            dO, lse, delta, acc[0], acc[1], batch, head, q0,
            getValueOrCreateConstantIndexOp(nb, loc, kvStart),
            op.getRuntimeScale(), op.getScaleAttr());
        // The score modifier and its derivative apply to every tile, the
        // mask only to those the causal split could not prove visible.
        IRMapping none;
        op.getScore().cloneInto(&step.getScore(), none);
        op.getScoreGrad().cloneInto(&step.getScoreGrad(), none);
        if (masked)
          op.getMask().cloneInto(&step.getMask(), none);
        Value c0 = arith::ConstantIndexOp::create(nb, loc, 0);
        Value dq = AccumulateOp::create(nb, loc, step.getQueryGrad(), acc[2],
                                        ValueRange{group, q0, c0});
        scf::YieldOp::create(
            nb, loc,
            ValueRange{step.getNewKeyAcc(), step.getNewValueAcc(), dq});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// The query tiles a K/V tile masks lie on both sides of those that see
/// all of it: [first, full) and [fullEnd, end). As in the forward
/// (FlashFormBuilder::buildMaskedFirst), one loop visits both sides, the
/// tile of visit n being first + n for n < L = full - first and
/// fullEnd + n - L after, and a second loop the unmasked tiles. (Each query
/// loop of the backward kernel starts its own load pipeline: the loops need
/// not share a tile function.)
GradState
BackwardFormBuilder::buildMaskedFirst(std::array<OpFoldResult, 4> tiles,
                                      Value group, GradState init) {
  auto [first, full, fullEnd, end] = tiles;
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  OpFoldResult left = affine::makeComposedFoldedAffineApply(
      b, loc, AffineMap::get(2, 0, d0 - d1, ctx), {full, first});
  OpFoldResult masked = affine::makeComposedFoldedAffineApply(
      b, loc, AffineMap::get(3, 0, d0 + d1 - d2, ctx), {left, end, fullEnd});
  Value firstV = getValueOrCreateConstantIndexOp(b, loc, first);
  Value fullEndV = getValueOrCreateConstantIndexOp(b, loc, fullEnd);
  Value leftV = getValueOrCreateConstantIndexOp(b, loc, left);
  // One op per statement: the order of the IR does not depend on the
  // compiler's order of evaluating arguments.
  auto tileOf = [&](OpBuilder &nb, Value n) -> Value {
    Value onLeft =
        arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, n, leftV);
    Value leftTile = arith::AddIOp::create(nb, loc, firstV, n);
    Value pastLeft = arith::SubIOp::create(nb, loc, n, leftV);
    Value rightTile = arith::AddIOp::create(nb, loc, fullEndV, pastLeft);
    return arith::SelectOp::create(nb, loc, onLeft, leftTile, rightTile);
  };
  GradState st = buildQueryLoop(b.getIndexAttr(0), masked, /*masked=*/true,
                                group, init, tileOf);
  return buildQueryLoop(full, fullEnd, /*masked=*/false, group, st);
}

scf::ForallOp BackwardFormBuilder::build() {
  MLIRContext *ctx = b.getContext();
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType(), vType = op.getValue().getType();
  Type dqType = op.getQueryGrad().getType();
  headDim = qType.getDimSize(3);
  headDimV = vType.getDimSize(3);
  batchExt = getExtent(b, loc, op.getQuery(), 0, {kType, vType, dqType});
  heads = getExtent(b, loc, op.getQuery(), 1, {dqType});
  seqQ = getExtent(b, loc, op.getQuery(), 2, {dqType});
  headsKV = getExtent(b, loc, op.getKey(), 1, {vType});
  seqKV = getExtent(b, loc, op.getKey(), 2, {vType});
  numQTiles = getNumTiles(b, loc, seqQ, blockQ);
  numKVTiles = getNumTiles(b, loc, seqKV, blockKV);
  std::optional<int64_t> h = getConstantIntValue(heads),
                         hkv = getConstantIntValue(headsKV);
  if (h && hkv)
    headGroup = b.getIndexAttr(*h / *hkv);
  else
    headGroup = arith::DivUIOp::create(
                    b, loc, getValueOrCreateConstantIndexOp(b, loc, heads),
                    getValueOrCreateConstantIndexOp(b, loc, headsKV))
                    .getResult();

  // dQ starts at 0: every K/V tile adds its contributions to it.
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  OpFoldResult d = b.getIndexAttr(headDim), dv = b.getIndexAttr(headDimV);
  Value dqInit = tensor::SplatOp::create(
      b, loc, zero, SmallVector<OpFoldResult>{batchExt, heads, seqQ, d});
  Value dkInit = createEmpty(b, loc, kType, {batchExt, headsKV, seqKV, d});
  Value dvInit = createEmpty(b, loc, vType, {batchExt, headsKV, seqKV, dv});

  // Without a causal mask every K/V tile does the same work: K/V tiles go on
  // grid x (fastest), so consecutive CTAs read the same query heads' Q, dO
  // and dQ rows, which stay in L2; heads on y, batch on z.
  //
  // Under a causal mask (either alignment) K/V tile n is seen by the query
  // tiles from about n * block_kv / block_q on: the first tile of a head is
  // the longest. Heads then go on x and K/V tiles on y, so the grid runs
  // longest first across all heads of a batch and the short tiles fill the
  // tail, as the forward's causal grid does (FlashAttention-2's order is
  // longest first only within one head, whose long first tiles then start
  // late in the grid and run alone at its end).
  auto block = [&](gpu::MappingId id) -> Attribute {
    return gpu::GPUBlockMappingAttr::get(ctx, id);
  };
  using gpu::MappingId;
  bool longestFirst = causal.has_value();
  ArrayAttr mapping =
      b.getArrayAttr({block(MappingId::DimZ),
                      block(longestFirst ? MappingId::DimX : MappingId::DimY),
                      block(longestFirst ? MappingId::DimY : MappingId::DimX)});
  auto forall = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{batchExt, headsKV, numKVTiles},
      ValueRange{dqInit, dkInit, dvInit}, mapping);
  forall->setAttr(kFlashConfigAttrName, config);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> ivs = forall.getInductionVars();
  batch = ivs[0];
  headKV = ivs[1];
  kvStart = getTileStart(b, loc, ivs[2], blockKV);
  kvRows = getTileExtent(b, loc, kvStart, blockKV, seqKV);
  keyTile = extractTile(b, loc, op.getKey(), batch, headKV, kvStart, kvRows);
  valueTile =
      extractTile(b, loc, op.getValue(), batch, headKV, kvStart, kvRows);
  one = arith::ConstantIndexOp::create(b, loc, 1);

  GradState init = {
      tensor::SplatOp::create(b, loc, zero,
                              SmallVector<OpFoldResult>{kvRows, d}),
      tensor::SplatOp::create(b, loc, zero,
                              SmallVector<OpFoldResult>{kvRows, dv}),
      tensor::SplatOp::create(b, loc, zero,
                              SmallVector<OpFoldResult>{headGroup, seqQ, d})};
  // The query heads of the K/V head's group, one after the other: dK and
  // dV sum over them in registers (no workspace, no second pass).
  auto groupLoop =
      scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                         getValueOrCreateConstantIndexOp(b, loc, headGroup),
                         one, ValueRange{init.dk, init.dv, init.dq});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(groupLoop.getBody());
    Value group = groupLoop.getInductionVar();
    AffineExpr hk, gi;
    bindDims(ctx, hk, gi);
    std::optional<int64_t> groupSize = getConstantIntValue(headGroup);
    if (groupSize == 1)
      head = headKV;
    else if (groupSize)
      head = affine::makeComposedAffineApply(b, loc, hk * *groupSize + gi,
                                             {headKV, group});
    else
      head = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, headKV, cast<Value>(headGroup)),
          group);
    ValueRange it = groupLoop.getRegionIterArgs();
    GradState st = {it[0], it[1], it[2]};
    OpFoldResult first = b.getIndexAttr(0);
    if (causal) {
      auto [begin, full] = getCausalQueryTiles();
      st = buildQueryLoop(begin, full, /*masked=*/true, group, st);
      st = buildQueryLoop(full, numQTiles, /*masked=*/false, group, st);
    } else if (auto tiles = getIntervalQueryTiles()) {
      auto [begin, full, fullEnd, end] = *tiles;
      if (oneMaskedLoop && begin != full && fullEnd != end) {
        st = buildMaskedFirst(*tiles, group, st);
      } else {
        if (begin != full)
          st = buildQueryLoop(begin, full, /*masked=*/true, group, st);
        st = buildQueryLoop(full, fullEnd, /*masked=*/false, group, st);
        if (fullEnd != end)
          st = buildQueryLoop(fullEnd, end, /*masked=*/true, group, st);
      }
    } else {
      st = buildQueryLoop(first, numQTiles, !op.getMask().empty(), group, st);
    }
    scf::YieldOp::create(b, loc, ValueRange{st.dk, st.dv, st.dq});
  }

  Value dk = CastOp::create(
      b, loc, getTileType(kvRows, headDim, kType.getElementType()),
      groupLoop.getResult(0));
  Value dvTile = CastOp::create(
      b, loc, getTileType(kvRows, headDimV, vType.getElementType()),
      groupLoop.getResult(1));

  ValueRange outs = forall.getRegionIterArgs();
  // The first query head of the group: the dQ contributions are [G, Sq, d].
  Value firstHead = headKV;
  AffineExpr d0;
  bindDims(ctx, d0);
  if (getConstantIntValue(headGroup) != 1)
    firstHead = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(
            b, loc, AffineMap::get(1, 1, d0 * b.getAffineSymbolExpr(0), ctx),
            {OpFoldResult(headKV), headGroup}));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  ParallelAccumulateOp::create(b, loc, groupLoop.getResult(2), outs[0],
                               ValueRange{batch, firstHead, c0, c0});
  insertTile(b, loc, dk, outs[1], batch, headKV, kvStart, kvRows);
  insertTile(b, loc, dvTile, outs[2], batch, headKV, kvStart, kvRows);
  return forall;
}

LogicalResult attnc::convertToOnlineAttentionGrad(RewriterBase &rewriter,
                                                  AttentionGradOp op,
                                                  FlashConfigAttr config,
                                                  bool oneMaskedLoop) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  BackwardFormBuilder builder(rewriter, op, config);
  builder.oneMaskedLoop = oneMaskedLoop;
  scf::ForallOp forall = builder.build();
  rewriter.replaceOp(op, forall.getResults());
  return success();
}
