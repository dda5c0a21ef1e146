//===- OnlineSoftmax.cpp - attnc.attention to its flash form --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The online-softmax rewrite (--attnc-online-softmax). It replaces each
// `attnc.attention` by a `scf.forall` over (batch, head, query tile) whose
// body walks the K/V tiles with `scf.for`, carrying the accumulator, the
// running max and the running sum through `attnc.online_attention`, and ends
// with one `attnc.online_attention_finalize` that writes a tile of O and of
// the logsumexp. Nothing of size Sq x Skv is ever materialized: the score
// tile exists only inside `attnc.online_attention`. For a causal op the K/V
// loop is split in two: tiles wholly below the diagonal run unmasked, tiles
// crossing it run with the mask, and tiles wholly above it are never
// visited. The back-end lowers exactly this loop nest to a GPU kernel, so
// the shape built here is kept regular: the same nest for every shape, with
// static extents folded to constants where the shapes allow.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attnc-online-softmax"

namespace attnc {
#define GEN_PASS_DEF_ATTNCONLINESOFTMAX
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

/// Discardable attributes put on the `scf.forall` for the back-end's
/// convenience. The IR stays the source of truth: the slice sizes and the
/// loop bounds carry the same numbers.
static constexpr llvm::StringLiteral kBlockQAttrName = "attnc.block_q";
static constexpr llvm::StringLiteral kBlockKVAttrName = "attnc.block_kv";

//===----------------------------------------------------------------------===//
// Extents
//===----------------------------------------------------------------------===//

namespace {
/// The extents of one attention op, computed once before the parallel loop.
/// Each is a constant where any operand (or the result) has it static and a
/// `tensor.dim` otherwise, so that static shapes fold all the way down.
struct AttentionExtents {
  OpFoldResult batch, heads, seqQ, headsKV, seqKV;
  /// Value head dimension (static, by the verifier).
  int64_t headDimV;
};
} // namespace

/// Extent `dim` of `source`, as a constant if `source` or any of `peers` (the
/// other operands or the result, which the verifier holds equal) has it
/// static, else as `tensor.dim` of `source`.
static OpFoldResult getExtent(OpBuilder &b, Location loc, Value source,
                              int64_t dim, ArrayRef<Type> peers = {}) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (!sourceType.isDynamicDim(dim))
    return b.getIndexAttr(sourceType.getDimSize(dim));
  for (Type peer : peers) {
    auto peerType = cast<RankedTensorType>(peer);
    if (!peerType.isDynamicDim(dim))
      return b.getIndexAttr(peerType.getDimSize(dim));
  }
  return tensor::DimOp::create(b, loc, source, dim).getResult();
}

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

/// `min(block, total - start)`: the rows of the tile that begins at `start`.
/// The minimum folds away when `total` is static and every tile is full
/// (`total` a positive multiple of `block`), or when there is at most one
/// tile (`total <= block`, so `start` is 0); the tile type is then static
/// too. (An empty `total` has no tiles: a `block`-row slice of it would be
/// out of bounds even though it is never executed.)
static OpFoldResult getTileExtent(OpBuilder &b, Location loc,
                                  OpFoldResult start, int64_t block,
                                  OpFoldResult total) {
  if (std::optional<int64_t> n = getConstantIntValue(total)) {
    if (*n > 0 && *n % block == 0)
      return b.getIndexAttr(block);
    if (*n <= block)
      return b.getIndexAttr(*n);
  }
  AffineExpr d0, s0;
  bindDims(b.getContext(), d0);
  bindSymbols(b.getContext(), s0);
  auto map = AffineMap::get(1, 1, {b.getAffineConstantExpr(block), s0 - d0},
                            b.getContext());
  return affine::makeComposedFoldedAffineMin(b, loc, map, {start, total});
}

/// `ceildiv(total, block)`: the number of tiles of `block` rows in `total`.
static OpFoldResult getNumTiles(OpBuilder &b, Location loc, OpFoldResult total,
                                int64_t block) {
  AffineExpr s0;
  bindSymbols(b.getContext(), s0);
  return affine::makeComposedFoldedAffineApply(b, loc, s0.ceilDiv(block),
                                               {total});
}

/// `[rows, cols]` with `rows` static where it folded to a constant.
static RankedTensorType getTileType(OpFoldResult rows, int64_t cols,
                                    Type elementType) {
  int64_t staticRows = getConstantIntValue(rows).value_or(ShapedType::kDynamic);
  return RankedTensorType::get({staticRows, cols}, elementType);
}

/// The [rows, cols] tile of `source[batch, head]` starting at row `start`,
/// rank-reduced to 2-D: the operand shape `attnc.online_attention` takes.
static Value extractTile(OpBuilder &b, Location loc, Value source, Value batch,
                         Value head, OpFoldResult start, OpFoldResult rows) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t cols = sourceType.getDimSize(3);
  SmallVector<OpFoldResult> offsets = {batch, head, start, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, getTileType(rows, cols, sourceType.getElementType()), source,
      offsets, sizes, strides);
}

/// `tensor.empty` of `type`, its dynamic extents taken from `sizes`.
static Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                         ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  return tensor::EmptyOp::create(b, loc, type, dynamicSizes);
}

//===----------------------------------------------------------------------===//
// Loop nest
//===----------------------------------------------------------------------===//

namespace {
/// The recurrence state (acc, max, sum) carried across K/V tiles.
struct RecurrenceState {
  Value acc, max, sum;
};

/// Builds the flash form of one `attnc.attention` in front of it. The
/// extents and tile sizes are members so that the pieces of the loop nest
/// (one method each) read like the IR they emit.
class FlashFormBuilder {
public:
  FlashFormBuilder(RewriterBase &rewriter, AttentionOp op,
                   const AttentionTileSizes &tiles)
      : b(rewriter), op(op), loc(op.getLoc()), tiles(tiles) {}

  /// Emits the loop nest; returns the forall whose results are O and the
  /// logsumexp.
  scf::ForallOp build();

private:
  /// `h floordiv (H / Hkv)`: the K/V head query head `h` reads (GQA/MQA).
  Value getKVHead(Value head);
  /// The K/V tile counts of a causal query tile; see the definition.
  std::pair<OpFoldResult, OpFoldResult> getCausalTileCounts();
  /// `scf.for %j = lb to ub` over K/V tiles, each step one
  /// `attnc.online_attention` (masked iff `causal`), carrying `init`.
  RecurrenceState buildKVLoop(OpFoldResult lb, OpFoldResult ub, bool causal,
                              RecurrenceState init);
  /// The body of the forall for one (batch, head, query tile) up to the
  /// finalize; returns the O tile and the logsumexp tile.
  std::pair<Value, Value> buildQueryTileBody();

  RewriterBase &b;
  AttentionOp op;
  Location loc;
  AttentionTileSizes tiles;
  AttentionExtents e;
  /// Loop-invariant values computed before the forall.
  OpFoldResult numQTiles, numKVTiles, headGroup;

  /// What holds for the current (batch, head, query tile) of the forall.
  Value batch, head, headKV;
  /// First query row of the tile: the absolute position the causal mask of
  /// `attnc.online_attention` compares key positions against.
  OpFoldResult qStart;
  /// Rows in the query tile: `blockQ`, or fewer for the last tile.
  OpFoldResult qRows;
  Value queryTile;
  /// The step of every K/V loop.
  Value one;
};
} // namespace

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

/// With `causal`, key j is visible to query i iff j <= i. Returns
/// {unmasked, visited}: K/V tiles [0, unmasked) lie wholly on or below the
/// diagonal and need no mask, tiles [unmasked, visited) cross it, and tiles
/// from `visited` on lie wholly above it and are skipped.
std::pair<OpFoldResult, OpFoldResult> FlashFormBuilder::getCausalTileCounts() {
  MLIRContext *ctx = b.getContext();
  AffineExpr q0, mq, nkv;
  bindDims(ctx, q0, mq);
  bindSymbols(ctx, nkv);
  // Visited: tiles whose first key j * blockKV is at or before the tile's
  // last query row q0 + mq - 1, i.e. j < ceildiv(q0 + mq, blockKV).
  auto visitedMap =
      AffineMap::get(2, 1, {nkv, (q0 + mq).ceilDiv(tiles.blockKV)}, ctx);
  OpFoldResult visited = affine::makeComposedFoldedAffineMin(
      b, loc, visitedMap, {qStart, qRows, numKVTiles});
  // Unmasked: tiles whose last key j * blockKV + blockKV - 1 is at or before
  // the first query row q0, i.e. j < (q0 + 1) floordiv blockKV. That is never
  // more than `visited` (mq >= 1), so [unmasked, visited) is a well-formed
  // range without a third min term. A short last K/V tile that ends before
  // q0 still gets the mask, which is then a no-op: it keeps the bound affine.
  auto unmaskedMap =
      AffineMap::get(1, 1, {nkv, (q0 + 1).floorDiv(tiles.blockKV)}, ctx);
  OpFoldResult unmasked = affine::makeComposedFoldedAffineMin(
      b, loc, unmaskedMap, {qStart, numKVTiles});
  return {unmasked, visited};
}

RecurrenceState FlashFormBuilder::buildKVLoop(OpFoldResult lb, OpFoldResult ub,
                                              bool causal,
                                              RecurrenceState init) {
  auto loop = scf::ForOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, lb),
      getValueOrCreateConstantIndexOp(b, loc, ub), one,
      ValueRange{init.acc, init.max, init.sum},
      [&](OpBuilder &nested, Location loc, Value j, ValueRange iterArgs) {
        AffineExpr d0;
        bindDims(nested.getContext(), d0);
        OpFoldResult kvStart = affine::makeComposedFoldedAffineApply(
            nested, loc, d0 * tiles.blockKV, {j});
        OpFoldResult kvRows =
            getTileExtent(nested, loc, kvStart, tiles.blockKV, e.seqKV);
        Value key = extractTile(nested, loc, op.getKey(), batch, headKV,
                                kvStart, kvRows);
        Value value = extractTile(nested, loc, op.getValue(), batch, headKV,
                                  kvStart, kvRows);
        auto step = OnlineAttentionOp::create(
            nested, loc, queryTile, key, value, iterArgs[0], iterArgs[1],
            iterArgs[2], getValueOrCreateConstantIndexOp(nested, loc, qStart),
            getValueOrCreateConstantIndexOp(nested, loc, kvStart),
            op.getScaleAttr(), causal ? nested.getUnitAttr() : UnitAttr());
        scf::YieldOp::create(nested, loc, step.getResults());
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

std::pair<Value, Value> FlashFormBuilder::buildQueryTileBody() {
  queryTile = extractTile(b, loc, op.getQuery(), batch, head, qStart, qRows);

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
  if (!op.getCausal()) {
    state = buildKVLoop(first, numKVTiles, /*causal=*/false, state);
  } else {
    auto [unmasked, visited] = getCausalTileCounts();
    state = buildKVLoop(first, unmasked, /*causal=*/false, state);
    state = buildKVLoop(unmasked, visited, /*causal=*/true, state);
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
  e = getAttentionExtents(b, op);
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
  Value resultInit =
      createEmpty(b, loc, resultType, {e.batch, e.heads, e.seqQ, headDimV});
  Value lseInit = createEmpty(b, loc, lseType, {e.batch, e.heads, e.seqQ});

  // Query tiles go on grid x, the fastest-varying block index: consecutive
  // CTAs then share (batch, head) and so read the same K/V, which stays in
  // L2 (FlashAttention-2's grid order). Heads and batch, each at most 65535
  // in practice, fit grid y and z.
  ArrayAttr mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX)});
  auto forall = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{e.batch, e.heads, numQTiles},
      ValueRange{resultInit, lseInit}, mapping);
  forall->setAttr(kBlockQAttrName, b.getI64IntegerAttr(tiles.blockQ));
  forall->setAttr(kBlockKVAttrName, b.getI64IntegerAttr(tiles.blockKV));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  ValueRange ivs = forall.getInductionVars();
  batch = ivs[0];
  head = ivs[1];
  headKV = getKVHead(head);
  AffineExpr d0;
  bindDims(ctx, d0);
  qStart = affine::makeComposedFoldedAffineApply(b, loc, d0 * tiles.blockQ,
                                                 {ivs[2]});
  qRows = getTileExtent(b, loc, qStart, tiles.blockQ, e.seqQ);
  auto [outTile, lseTile] = buildQueryTileBody();

  // Each (batch, head, query tile) owns a disjoint slice of O and of the
  // logsumexp, which is what makes the loop parallel.
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult unit = b.getIndexAttr(1), origin = b.getIndexAttr(0);
  ValueRange outs = forall.getRegionIterArgs();
  tensor::ParallelInsertSliceOp::create(
      b, loc, outTile, outs[0],
      SmallVector<OpFoldResult>{batch, head, qStart, origin},
      SmallVector<OpFoldResult>{unit, unit, qRows, headDimV},
      SmallVector<OpFoldResult>(4, unit));
  tensor::ParallelInsertSliceOp::create(
      b, loc, lseTile, outs[1], SmallVector<OpFoldResult>{batch, head, qStart},
      SmallVector<OpFoldResult>{unit, unit, qRows},
      SmallVector<OpFoldResult>(3, unit));
  return forall;
}

LogicalResult attnc::convertToOnlineAttention(RewriterBase &rewriter,
                                              AttentionOp op,
                                              const AttentionTileSizes &tiles) {
  if (tiles.blockQ <= 0 || tiles.blockKV <= 0)
    return op.emitOpError()
           << "tile sizes must be positive, got block-q = " << tiles.blockQ
           << " and block-kv = " << tiles.blockKV;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  scf::ForallOp forall = FlashFormBuilder(rewriter, op, tiles).build();
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << tiles.blockQ << "x"
                          << tiles.blockKV << " tiles for " << op << "\n");
  // The logsumexp (result 1) stays on the forall for a later pass (a
  // backward pass) to pick up; the forward graph only uses O.
  rewriter.replaceOp(op, forall.getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct AttncOnlineSoftmaxPass
    : attnc::impl::AttncOnlineSoftmaxBase<AttncOnlineSoftmaxPass> {
  using Base::Base;

  /// The target's default tiles for `headDim`, overridden by the options
  /// that are set.
  FailureOr<AttentionTileSizes> getTileSizes(int64_t headDim) {
    // Reported at the root's location without the "see current operation"
    // note: the culprit is the option, not the IR.
    Location loc = getOperation()->getLoc();
    FailureOr<TargetDescription> target = lookupTargetDescription(chip);
    if (failed(target))
      return emitError(loc)
             << "unknown chip '" << chip << "' for --" DEBUG_TYPE
             << "; known chips: " << llvm::join(getKnownTargetChips(), ", ");
    int64_t q = blockQ, kv = blockKV;
    if (q < 0 || kv < 0)
      return emitError(loc) << "--" DEBUG_TYPE " options block-q and block-kv "
                               "must be positive (or 0 for the target's "
                               "default), got block-q="
                            << q << " and block-kv=" << kv;
    auto [defaultQ, defaultKV] = target->attentionTiles(headDim);
    return AttentionTileSizes{q ? q : defaultQ, kv ? kv : defaultKV};
  }

  void runOnOperation() override {
    // Options are checked even when there is no attention to tile.
    if (failed(getTileSizes(/*headDim=*/128)))
      return signalPassFailure();
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      FailureOr<AttentionTileSizes> tiles =
          getTileSizes(op.getQuery().getType().getDimSize(3));
      if (failed(tiles) ||
          failed(convertToOnlineAttention(rewriter, op, *tiles)))
        return signalPassFailure();
    }
  }
};
} // namespace
