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
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

#include <limits>

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
  // A persistent block's batch and head change from tile to tile: what the
  // regions read per block is read per tile (the producer's copies, which
  // nothing uses, are dropped as dead loads).
  if (strategy->persistent() && failed(loadBlockReads()))
    return failure();
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
  // them (once per block, by all its threads; a persistent kernel's roles
  // have them mapped before: mapIdBoundsWords).
  bool queryLoaded = !form.idBounds.empty() && !strategy->persistent();
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
    if (l.tileIsIteration)
      continue;
    // The values from above that the tile of a visit is computed from:
    // once per work tile, not again for every load.
    for (Operation &op : l.loop.getBody()->without_terminator())
      if (isIndexComputation(&op))
        for (Value v : op.getOperands())
          if (v.getType().isIndex() &&
              !l.loop.getRegion().isAncestor(v.getParentRegion()) &&
              failed(materialize(v, prologue)))
            return failure();
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
    Value base = strategy->enterProducerBody(b);
    strategy->acquireSlot(b, n);
    if (failed(loadKVTiles(l, loop.getInductionVar(),
                           ringDivRem(b, loc, n, stages).second)))
      return failure();
    strategy->commitSlot(b, n);
    strategy->leaveProducerBody(base);
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::AddIOp::create(b, loc, n, one)});
    slot = loop.getResult(0);
  }
  return slot;
}

/// Maps the forall's induction variables to work tile `t` of a persistent
/// kernel, whose CTAs draw the tiles from a counter in this order. Without
/// a causal mask every tile costs the same: the grid's x dimension (query
/// tiles, so that consecutive tiles share K/V in L2) fastest, then z, then
/// y; drawn rather than strided over, they ran 0.5-1.6% faster (H100,
/// 2026-12-05, S = 1k-8k, d = 128 and 64), the CTAs' small differences in
/// speed no longer adding up over their tiles. A causal grid runs longest
/// first (query tiles counted down on y), in the order a grid of one block
/// per tile launches: heads fastest, then query tiles, then batch (a batch's
/// tiles longest first, then the next batch's); with l2_group_mib, when a
/// batch's K and V exceed that many MiB, its heads in groups whose K/V fit
/// it (batch-major: a group may take the last heads of one batch and the
/// first of the next), each group longest first, so that the CTAs at work
/// read the K/V of a few heads, which stay in L2. (One longest-first order
/// over every head streamed each head's K/V through L2 once per query
/// tile: at S = 1000, B = 16, H = 16, 128 MB of K/V for a 50 MB L2. Groups
/// of the heads of several batches, whose K/V fit together, ran 10-17%
/// slower than a batch at a time at S = 512 / 1000 on the H100: the CTAs
/// at work read more heads at once.)
void FlashKernelBuilder::mapWorkTile(Value t) {
  static constexpr unsigned kUnmaskedOrder[] = {0, 2, 1},
                            kLaunchOrder[] = {0, 1, 2};
  SmallVector<Value> ivs = form.forall.getInductionVars();
  int64_t mib = l2GroupMib();
  if (!mib || !runsLongestFirst()) {
    mapPersistentWorkTile(b, loc, t,
                          runsLongestFirst() ? kLaunchOrder : kUnmaskedOrder,
                          gridDims, ivs, tileExtents, prologue);
    return;
  }
  // ivs: batch (z), heads (x), query tiles (y, longest first).
  auto kvType = cast<RankedTensorType>(form.value.getType());
  int64_t rowBytes = (form.headDim + kvType.getDimSize(3)) *
                     form.elementType.getIntOrFloatBitWidth() / 8;
  // The groups' geometry is recomputed for every tile from opaque copies of
  // the sizes, in 32 bits: hoisted out of the roles' loops, its values
  // stayed live through the consumers' (ptxas, d = 128 causal: 32 bytes of
  // spills against 12). The sizes are narrowed before the copies: copied
  // in 64 bits, five 64-bit sizes stayed live through the producer's loops,
  // in its registers (24 then). (One op per statement: the IR's order is the
  // same with every compiler.)
  Type i32 = b.getI32Type();
  auto narrow = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, v);
  };
  auto size32 = [&](Value v) { return opaqueI32(b, loc, narrow(v)); };
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  Value keys = size32(extentOf(form.key, 2));
  Value kvHeads = size32(extentOf(form.key, 1));
  Value heads = size32(tileExtents[1]);
  Value batches = size32(tileExtents[0]);
  Value tiles = size32(tileExtents[2]);
  // The K/V heads that fit, (budget / row bytes) / Skv (= budget / (Skv *
  // row bytes)), at least one and at most a batch's (whose groups are then
  // the batches: the launch order).
  Value someKeys = arith::MaxUIOp::create(b, loc, keys, c32(1));
  int64_t budgetRows = (mib << 20) / rowBytes;
  Value fitKV;
  if (budgetRows <= std::numeric_limits<int32_t>::max()) {
    Value fitting = arith::DivUIOp::create(b, loc, c32(budgetRows), someKeys);
    Value atLeastOne = arith::MaxUIOp::create(b, loc, fitting, c32(1));
    fitKV = arith::MinUIOp::create(b, loc, atLeastOne, kvHeads);
  } else {
    // A budget of more rows than 31 bits count (terabytes): in 64 bits.
    Type i64 = b.getI64Type();
    auto wide = [&](Value v) -> Value {
      return arith::ExtUIOp::create(b, loc, i64, v);
    };
    Value rows = arith::ConstantIntOp::create(b, loc, i64, budgetRows);
    Value fitting = arith::DivUIOp::create(b, loc, rows, wide(someKeys));
    Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
    Value atLeastOne = arith::MaxUIOp::create(b, loc, fitting, one);
    Value capped = arith::MinUIOp::create(b, loc, atLeastOne, wide(kvHeads));
    fitKV = arith::TruncIOp::create(b, loc, i32, capped);
  }
  Value gqa = arith::DivUIOp::create(b, loc, heads, kvHeads);
  Value size = arith::MulIOp::create(b, loc, fitKV, gqa);
  Value units = arith::MulIOp::create(b, loc, batches, heads);
  Value at = narrow(t);
  Value perGroup = arith::MulIOp::create(b, loc, size, tiles);
  Value group = arith::DivUIOp::create(b, loc, at, perGroup);
  Value groupStart = arith::MulIOp::create(b, loc, group, perGroup);
  Value rest = arith::SubIOp::create(b, loc, at, groupStart);
  Value first = arith::MulIOp::create(b, loc, group, size);
  // The last group may be smaller.
  Value left = arith::SubIOp::create(b, loc, units, first);
  Value width = arith::MinUIOp::create(b, loc, size, left);
  Value tile = arith::DivUIOp::create(b, loc, rest, width);
  Value tileStart = arith::MulIOp::create(b, loc, tile, width);
  Value column = arith::SubIOp::create(b, loc, rest, tileStart);
  Value unit = arith::AddIOp::create(b, loc, first, column);
  Value batch = arith::DivUIOp::create(b, loc, unit, heads);
  Value batchStart = arith::MulIOp::create(b, loc, batch, heads);
  Value head = arith::SubIOp::create(b, loc, unit, batchStart);
  Type index = b.getIndexType();
  auto wide = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, index, v);
  };
  prologue.map(ivs[0], wide(batch));
  prologue.map(ivs[1], wide(head));
  prologue.map(ivs[2], wide(tile));
}

/// A grid that runs longest first (batch on z, heads on x, query tiles
/// counted down on y) starts its blocks x fastest: a batch's heads
/// together, the longest query tiles of all of them first. With
/// l2_group_mib, when a batch's K and V take more than that, block (x, y)
/// of a batch takes instead the tile of its position in groups of heads
/// whose K and V fit it (whole GQA groups: their query heads read one K/V
/// head), each group longest first: the blocks that run at
/// once then read the K/V of a few heads, which stay in L2 (H200, d = 128
/// causal, S = 16k: 16 heads read together streamed their K/V through L2
/// 9% slower). Shorter sequences, whose tiles are short, keep the plain
/// block indices: the group's divisions sit before the first load.
LogicalResult FlashKernelBuilder::mapBlockIndices() {
  // (planGrid refused groups on a grid that does not run longest first,
  // and on a ragged batch.)
  mapGroupedBlockIndices(
      b, loc, l2GroupMib(), form.forall.getInductionVars(), gridDims, prologue,
      [&] {
        auto kvType = cast<RankedTensorType>(form.value.getType());
        int64_t rowBytes = (form.headDim + kvType.getDimSize(3)) *
                           form.elementType.getIntOrFloatBitWidth() / 8;
        // K/V heads: the query heads of a GQA group read one K/V head.
        HeadGroupOperands g;
        g.heads = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
        g.kvHeads = extentOf(form.key, 1);
        // (One op per statement here: the order of a call's arguments is
        // the compiler's, and the IR's order should not be.)
        Value keys = extentOf(form.key, 2);
        g.headBytes = arith::MulIOp::create(
            b, loc, keys, arith::ConstantIndexOp::create(b, loc, rowBytes));
        return g;
      });
  return success();
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
    while (end + 1 < form.loops.size() && form.loops[end + 1].continuesPrevious)
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

/// A persistent warp-specialised kernel: both roles walk the same work
/// tiles (the forall's iterations, linearised by mapWorkTile), the ring's
/// slot counter running on across them: t = CTA and then the tiles the
/// producer draws from the counter. The producer loads each tile's query
/// ahead into one of two buffers where they fit (prefetchesQuery); with one
/// the consumers load the next tile's while they store this one's output.
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
  workCTAs = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  IRMapping base = prologue;
  Type index = b.getIndexType();
  // A loop over the CTA's tiles: t, its position i and `carried` values.
  // The body yields the next tile (and the carried values).
  auto walk = [&](ValueRange carried,
                  function_ref<FailureOr<SmallVector<Value>>(
                      Value t, Value i, ValueRange carried)>
                      body) -> LogicalResult {
    SmallVector<Value> init{first, idx(0)};
    init.append(carried.begin(), carried.end());
    SmallVector<Type> types(init.size(), index);
    SmallVector<Location> locs(init.size(), loc);
    auto loop = scf::WhileOp::create(b, loc, types, init);
    {
      OpBuilder::InsertionGuard g(b);
      Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
      Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         before->getArgument(0), total);
      scf::ConditionOp::create(b, loc, more, before->getArguments());
      Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
      prologue = base;
      FailureOr<SmallVector<Value>> next =
          body(after->getArgument(0), after->getArgument(1),
               after->getArguments().drop_front(2));
      if (failed(next))
        return failure();
      SmallVector<Value> yielded{
          next->front(),
          arith::AddIOp::create(b, loc, after->getArgument(1), idx(1))};
      yielded.append(next->begin() + 1, next->end());
      scf::YieldOp::create(b, loc, yielded);
    }
    prologue = base;
    return success();
  };

  bool ahead = strategy->prefetchesQuery();
  bool bounded = !form.idBounds.empty();
  // Starts loading the query tile of work tile `t`, the CTA's i-th, when
  // there is one.
  auto loadQueryOf = [&](Value t, Value i) -> LogicalResult {
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
    if (ahead)
      strategy->loadQueryOfTile(b, *q, i);
    else
      strategy->loadQuery(b, *q);
    return success();
  };
  OpBuilder::InsertionGuard guard(b);
  scf::IfOp issuing;
  scf::IfOp roles = enterProducer(bounded ? &issuing : nullptr);
  // With two query buffers the producer loads each tile's query as soon as
  // it has drawn the tile (after issuing the previous tile's K/V loads):
  // the consumers find it there when they start the tile, instead of
  // waiting for its load between two tiles.
  if (ahead && failed(loadQueryOf(first, idx(0))))
    return failure();
  if (failed(walk(ValueRange{idx(0)},
                  [&](Value t, Value i,
                      ValueRange carried) -> FailureOr<SmallVector<Value>> {
                    Value base = strategy->enterProducerBody(b);
                    llvm::scope_exit restore(
                        [&] { strategy->leaveProducerBody(base); });
                    mapWorkTile(t);
                    if (bounded)
                      mapIdBoundsWords(receiveIdBounds(i));
                    FailureOr<TileValues> tile = prepareTile();
                    if (failed(tile))
                      return failure();
                    FailureOr<Value> slot =
                        emitProducerLoops(tile->bounds, carried[0]);
                    if (failed(slot))
                      return failure();
                    Value next = bounded ? takeIdTile(i) : drawTile(i);
                    if (ahead &&
                        failed(loadQueryOf(
                            next, arith::AddIOp::create(b, loc, i, idx(1)))))
                      return failure();
                    return SmallVector<Value>{next, *slot};
                  })))
    return failure();

  // Tiles bounded by ids: the producer's other warps draw the CTA's tiles
  // and compute their bounds a tile ahead of the readers (the exchange has
  // two slots: one read, one being written), and after the last tile hand
  // on one past the grid's end, which ends the readers' walks.
  if (bounded) {
    b.setInsertionPointToStart(issuing.elseBlock());
    auto helps = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::uge,
            gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
            idx(idHelperFirstThread())),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(helps.thenBlock());
    if (failed(walk(
            ValueRange{},
            [&](Value t, Value i, ValueRange) -> FailureOr<SmallVector<Value>> {
              mapWorkTile(t);
              if (failed(emitIdBounds(IdBoundsThreads::ProducerHelpers)))
                return failure();
              publishIdBounds(i, t, idBoundsWords());
              Value next = drawIdTile(i);
              auto last = scf::IfOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, next,
                                        total),
                  /*withElseRegion=*/false);
              OpBuilder::InsertionGuard g(b);
              b.setInsertionPointToStart(last.thenBlock());
              publishIdBounds(arith::AddIOp::create(b, loc, i, idx(1)), next,
                              noIdBoundsWords());
              return SmallVector<Value>{next};
            })))
      return failure();
  }

  enterConsumers(roles);
  if (!ahead && failed(loadQueryOf(first, idx(0))))
    return failure();
  return walk(
      ValueRange{idx(0)},
      [&](Value t, Value i,
          ValueRange carried) -> FailureOr<SmallVector<Value>> {
        Value slot = carried[0];
        mapWorkTile(t);
        if (bounded)
          mapIdBoundsWords(receiveIdBounds(i));
        FailureOr<TileValues> tile = prepareTile();
        if (failed(tile))
          return failure();
        strategy->beginTile(b, i);
        Value next;
        if (failed(emitConsumer(tile->bounds, slot, [&]() -> LogicalResult {
              strategy->releaseQuery(b, i);
              next = strategy->receiveTile(b, i);
              return ahead ? success() : loadQueryOf(next, Value());
            })))
          return failure();
        return SmallVector<Value>{next, slot};
      });
}

/// The CTA's tile after its i-th where tiles are bounded by ids: the
/// helpers drew it (they compute its bounds ahead); the issuing thread
/// takes it from the exchange's next slot and hands it to the consumers as
/// a drawn one.
Value FlashKernelBuilder::takeIdTile(Value i) {
  Value next = receiveIdTile(arith::AddIOp::create(
      b, loc, i, arith::ConstantIndexOp::create(b, loc, 1)));
  strategy->publishTile(b, i, next);
  return next;
}

/// The producer's issuing thread draws the CTA's tile after its i-th: the
/// grid's first #CTAs tiles are the CTAs' first, so a draw d is tile
/// #CTAs + d. It draws once it has issued the i-th's loads, so that the
/// draws go out in about the order the CTAs free up (a list schedule of
/// the longest-first order), and the consumers, who take the tile at the
/// i-th's end, rarely wait for it.
Value FlashKernelBuilder::drawTile(Value i) {
  Value next = drawWorkTile(b, loc, param(kTileCounterName), workCTAs);
  strategy->publishTile(b, i, next);
  return next;
}

/// The two roles of a warp-specialised kernel as the branches of one
/// scf.if on the producer's threads. Leaves the insertion point in the
/// producer's branch, after its enterRole and inside the guard of the
/// threads that issue its loads; enterConsumers moves it to the other.
scf::IfOp FlashKernelBuilder::enterProducer(scf::IfOp *issuing) {
  auto roles = scf::IfOp::create(b, loc, strategy->isProducer(b),
                                 /*withElseRegion=*/true);
  b.setInsertionPointToStart(roles.thenBlock());
  strategy->enterRole(b, /*producer=*/true);
  if (Value issues = strategy->producerIssues(b)) {
    auto guard = scf::IfOp::create(b, loc, issues,
                                   /*withElseRegion=*/issuing != nullptr);
    b.setInsertionPointToStart(guard.thenBlock());
    if (issuing)
      *issuing = guard;
  }
  return roles;
}

void FlashKernelBuilder::enterConsumers(scf::IfOp roles) {
  b.setInsertionPointToStart(roles.elseBlock());
  strategy->enterRole(b, /*producer=*/false);
}
