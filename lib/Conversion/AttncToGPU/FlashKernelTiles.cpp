//===- FlashKernelTiles.cpp - how a flash kernel walks its work tiles -----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The top of a flash kernel's body: which threads do what, over which work
// tiles (iterations of the flash form's forall). Without a producer every
// thread computes the one tile its CTA is; with one, a producer and the
// consumers run as the two branches of an scf.if over the same tile
// sequence; a persistent kernel's CTAs walk many tiles each. The loops
// inside a tile, the score stage and the epilogue are in
// FlashAttentionKernel.cpp.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

/// True when `v` is computed without `iv`.
static bool isIndependentOf(Value v, Value iv) {
  if (v == iv)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def)
    return true;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isIndependentOf(o, iv); });
}

/// The query tile and the K/V loop bounds of the current work tile (the
/// forall's induction variables as `prologue` maps them), and the matrices
/// of the K/V slices whose (batch, head) does not depend on their loop.
FailureOr<FlashKernelBuilder::TileValues> FlashKernelBuilder::prepareTile() {
  FailureOr<GlobalTile> q = tileOf(form.querySlice, "q", prologue);
  if (failed(q))
    return failure();
  q->rowLimit = seqQ;
  // A ragged tile's rows are packed rows from its sequence's first: they
  // exist up to the tile's own extent.
  if (form.ragged) {
    FailureOr<Value> rows =
        materialize(form.querySlice.getMixedSizes()[0], prologue);
    if (failed(rows))
      return failure();
    q->rowLimit = arith::AddIOp::create(b, loc, q->rowStart, *rows);
  }
  // With id bounds, the query tile is on its way while the block computes
  // them (once per block, by all its threads: no persistent kernel gets
  // here with id bounds).
  bool queryLoaded = !form.idBounds.empty();
  if (queryLoaded) {
    strategy->loadQuery(b, *q);
    if (failed(emitIdBounds()))
      return failure();
  }
  invariantMatrices.clear();
  for (FlashKVLoop &l : form.loops) {
    for (auto [slice, t] : {std::pair(l.key, "k"), std::pair(l.value, "v")}) {
      SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
      Value iv = l.loop.getInductionVar();
      auto invariant = [&](OpFoldResult o) {
        auto v = dyn_cast<Value>(o);
        return !v || isIndependentOf(v, iv);
      };
      if (!invariant(offsets[0]) || !invariant(offsets[1]))
        continue;
      FailureOr<Matrix> m = matrixOf(slice, t, prologue);
      if (failed(m))
        return failure();
      invariantMatrices[slice] = *m;
    }
  }
  TileValues tile{*q, {}, queryLoaded};
  for (FlashKVLoop &l : form.loops) {
    FailureOr<Value> lb = materialize(l.loop.getLowerBound(), prologue);
    FailureOr<Value> ub = materialize(l.loop.getUpperBound(), prologue);
    if (failed(lb) || failed(ub))
      return failure();
    tile.bounds.lbs.push_back(*lb);
    tile.bounds.ubs.push_back(*ub);
  }
  return tile;
}

/// The producer's walk over the K/V tiles of one work tile: tile n of the
/// sequence (`slot` counts them) into ring slot n mod stages.
FailureOr<Value> FlashKernelBuilder::emitProducerLoops(const LoopBounds &bounds,
                                                       Value slot) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t stages = form.config.getStages();
  for (auto [l, lb, ub] : llvm::zip(form.loops, bounds.lbs, bounds.ubs)) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, one, ValueRange{slot});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = loop.getRegionIterArgs()[0];
    strategy->acquireSlot(b, n);
    if (failed(loadKVTiles(l, loop.getInductionVar(),
                           ringDivRem(b, loc, n, stages).second)))
      return failure();
    strategy->commitSlot(b, n);
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::AddIOp::create(b, loc, n, one)});
    slot = loop.getResult(0);
  }
  return slot;
}

/// Maps the forall's induction variables to work tile `t` of a persistent
/// kernel: the grid's x dimension varies fastest, then z, then y. The flash
/// form puts query tiles on x when they all cost the same (consecutive
/// tiles then share K/V in L2) and on y, longest first, under a causal
/// mask: the CTAs then take the longest tiles first, the short ones fill
/// the end.
void FlashKernelBuilder::mapWorkTile(Value t) {
  Value rest = t;
  for (unsigned dim : {0u, 2u, 1u}) {
    auto it = llvm::find(gridDims, dim);
    if (it == gridDims.end())
      continue;
    size_t i = it - gridDims.begin();
    Value extent = tileExtents[i];
    prologue.map(form.forall.getInductionVars()[i],
                 arith::RemUIOp::create(b, loc, rest, extent));
    rest = arith::DivUIOp::create(b, loc, rest, extent);
  }
}

LogicalResult FlashKernelBuilder::emitBody() {
  if (!strategy->hasProducer()) {
    // A ragged batch's grid covers as many query tiles as its longest
    // possible sequence (all its packed rows): a block past its sequence's
    // rows has nothing to load, compute or write, and leaves at once.
    OpBuilder::InsertionGuard guard(b);
    if (form.ragged) {
      FailureOr<Value> rows =
          materialize(form.querySlice.getMixedSizes()[0], prologue);
      if (failed(rows))
        return failure();
      auto work = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, *rows,
                                arith::ConstantIndexOp::create(b, loc, 0)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(work.thenBlock());
    }
    // Query tile and the first K/V tiles in flight together.
    FailureOr<TileValues> tile = prepareTile();
    if (failed(tile))
      return failure();
    if (!tile->queryLoaded)
      strategy->loadQuery(b, tile->q);
    size_t end = 0;
    while (end + 1 < form.loops.size() &&
           form.loops[end + 1].loop.getLowerBound() ==
               form.loops[end].loop.getUpperBound())
      ++end;
    if (failed(startKVPipeline(form.loops[0], tile->bounds.lbs[0],
                               tile->bounds.ubs[end])))
      return failure();
    Value noSlot;
    return emitConsumer(tile->bounds, noSlot);
  }
  if (strategy->persistent())
    return emitPersistentBody();

  // Warp-specialised: the producer walks the same tiles as the consumers,
  // one ring slot each, in the same order.
  FailureOr<TileValues> tile = prepareTile();
  if (failed(tile))
    return failure();
  OpBuilder::InsertionGuard guard(b);
  scf::IfOp roles = enterProducer();
  if (failed(emitProducerLoops(tile->bounds,
                               arith::ConstantIndexOp::create(b, loc, 0))))
    return failure();
  enterConsumers(roles);
  if (!tile->queryLoaded)
    strategy->loadQuery(b, tile->q);
  Value slot = arith::ConstantIndexOp::create(b, loc, 0);
  return emitConsumer(tile->bounds, slot);
}

/// A persistent warp-specialised kernel: both roles walk the work tiles
/// t = CTA, CTA + #CTAs, ... (the forall's iterations, linearised by
/// mapWorkTile), the ring's slot counter running on across them. The
/// consumers load the next tile's query while they store this one's
/// output.
LogicalResult FlashKernelBuilder::emitPersistentBody() {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value total = idx(1);
  for (OpFoldResult ub : form.forall.getMixedUpperBound()) {
    FailureOr<Value> extent = materialize(ub, prologue);
    if (failed(extent))
      return failure();
    tileExtents.push_back(*extent);
    total = arith::MulIOp::create(b, loc, total, *extent);
  }
  Value first = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value step = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  IRMapping base = prologue;

  OpBuilder::InsertionGuard guard(b);
  scf::IfOp roles = enterProducer();
  {
    auto loop =
        scf::ForOp::create(b, loc, first, total, step, ValueRange{idx(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    prologue = base;
    mapWorkTile(loop.getInductionVar());
    FailureOr<TileValues> tile = prepareTile();
    if (failed(tile))
      return failure();
    FailureOr<Value> slot =
        emitProducerLoops(tile->bounds, loop.getRegionIterArgs()[0]);
    if (failed(slot))
      return failure();
    scf::YieldOp::create(b, loc, ValueRange{*slot});
  }

  enterConsumers(roles);
  // Starts loading the query tile of work tile `t` when there is one.
  auto loadQueryOf = [&](Value t) -> LogicalResult {
    auto exists = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t, total),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(exists.thenBlock());
    IRMapping current = prologue;
    prologue = base;
    mapWorkTile(t);
    FailureOr<GlobalTile> q = tileOf(form.querySlice, "q", prologue);
    prologue = current;
    if (failed(q))
      return failure();
    q->rowLimit = seqQ;
    strategy->loadQuery(b, *q);
    return success();
  };
  if (failed(loadQueryOf(first)))
    return failure();
  auto loop = scf::ForOp::create(b, loc, first, total, step,
                                 ValueRange{idx(0), idx(0)});
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  Value slot = loop.getRegionIterArgs()[0];
  Value iteration = loop.getRegionIterArgs()[1];
  prologue = base;
  mapWorkTile(t);
  FailureOr<TileValues> tile = prepareTile();
  if (failed(tile))
    return failure();
  strategy->beginTile(b, iteration);
  if (failed(emitConsumer(tile->bounds, slot, [&]() -> LogicalResult {
        strategy->releaseQuery(b);
        return loadQueryOf(arith::AddIOp::create(b, loc, t, step));
      })))
    return failure();
  scf::YieldOp::create(
      b, loc,
      ValueRange{slot, arith::AddIOp::create(b, loc, iteration, idx(1))});
  prologue = base;
  return success();
}

/// The two roles of a warp-specialised kernel as the branches of one
/// scf.if on the producer's threads. Leaves the insertion point in the
/// producer's branch, after its enterRole and inside the guard of the
/// threads that issue its loads; enterConsumers moves it to the other.
scf::IfOp FlashKernelBuilder::enterProducer() {
  auto roles = scf::IfOp::create(b, loc, strategy->isProducer(b),
                                 /*withElseRegion=*/true);
  b.setInsertionPointToStart(roles.thenBlock());
  strategy->enterRole(b, /*producer=*/true);
  if (Value issues = strategy->producerIssues(b)) {
    auto issuing = scf::IfOp::create(b, loc, issues, /*withElseRegion=*/false);
    b.setInsertionPointToStart(issuing.thenBlock());
  }
  return roles;
}

void FlashKernelBuilder::enterConsumers(scf::IfOp roles) {
  b.setInsertionPointToStart(roles.elseBlock());
  strategy->enterRole(b, /*producer=*/false);
}
