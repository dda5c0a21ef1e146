//===- FlashKernelLoads.cpp - the attention kernel's K/V load pipeline ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Which K/V tiles a kernel without a producer loads, when, and into which
// shared-memory buffer: pairs of K and V tiles into `stages` stages (tile j
// into stage j mod stages), or with interleaved loads single tiles into one
// ring (load 2j = K of tile j, 2j + 1 its V, load n into buffer n mod
// stages). Loads past a chain's last tile close empty groups where the
// steps count groups. The strategy moves the bytes; the loop that waits
// for them is emitKVLoop's (FlashAttentionKernel.cpp).
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

FailureOr<GlobalTile> FlashKernelBuilder::kvTile(FlashKVLoop &l, bool key,
                                                 Value tile,
                                                 ArrayRef<Value> pageEntries) {
  IRMapping scope = prologue;
  scope.map(l.loop.getInductionVar(), tile);
  FailureOr<GlobalTile> t =
      tileOf(key ? l.key : l.value, key ? "k" : "v", scope);
  if (failed(t))
    return failure();
  t->rowLimit = seqKV;
  // A ragged batch's rows are packed rows from the sequence's first.
  if (form.ragged) {
    FailureOr<Value> base = materialize(form.kvRowBase, scope);
    if (failed(base))
      return failure();
    t->rowLimit = arith::AddIOp::create(b, loc, *base, seqKV);
  }
  if (t->pageTable && !t->tilePage)
    t->pageEntries.assign(pageEntries.begin(), pageEntries.end());
  return t;
}

SmallVector<Value> FlashKernelBuilder::lookUpPages(FlashKVLoop &l, Value tile,
                                                   int64_t ahead) {
  int64_t blockKV = form.config.getBlockKV();
  if (!form.keyPages || form.keyPages.getPageSize() >= blockKV)
    return {};
  if (ahead)
    tile = arith::AddIOp::create(b, loc, tile,
                                 arith::ConstantIndexOp::create(b, loc, ahead));
  FailureOr<GlobalTile> t = kvTile(l, /*key=*/true, tile);
  if (failed(t))
    return {};
  // The tile starts at a multiple of block_kv, so on a page boundary.
  SmallVector<Value> entries;
  for (int64_t row = 0; row < blockKV; row += t->pageSize)
    entries.push_back(pageEntry(
        b, loc, *t,
        arith::AddIOp::create(b, loc, t->rowStart,
                              arith::ConstantIndexOp::create(b, loc, row))));
  return entries;
}

/// Starts loading the K and V tiles of iteration `tile` of loop `l` (its
/// slices with `tile` for the induction variable) into pipeline stage
/// `stage`, by default `tile mod stages`.
LogicalResult FlashKernelBuilder::loadKVTiles(FlashKVLoop &l, Value tile,
                                              Value stage,
                                              ArrayRef<Value> pageEntries) {
  FailureOr<GlobalTile> k = kvTile(l, /*key=*/true, tile, pageEntries);
  FailureOr<GlobalTile> v = kvTile(l, /*key=*/false, tile, pageEntries);
  if (failed(k) || failed(v))
    return failure();
  if (!stage)
    stage = ringDivRem(b, loc, tile, form.config.getStages()).second;
  strategy->loadKV(b, *k, *v, stage);
  return success();
}

Value FlashKernelBuilder::ringBuffer(Value tile, int64_t ahead) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  return ringDivRem(b, loc,
                    arith::AddIOp::create(
                        b, loc, arith::MulIOp::create(b, loc, tile, idx(2)),
                        idx(ahead)),
                    strategy->kvBuffers())
      .second;
}

LogicalResult FlashKernelBuilder::loadInterleaved(FlashKVLoop &l, Value tile,
                                                  int64_t ahead, Value end,
                                                  ArrayRef<Value> pageEntries) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // Load 2 * tile + ahead is K (even) or V (odd) of tile + ahead / 2.
  Value of =
      ahead / 2 ? arith::AddIOp::create(b, loc, tile, idx(ahead / 2)) : tile;
  Value buffer = ringBuffer(tile, ahead);
  auto emitLoad = [&]() -> LogicalResult {
    FailureOr<GlobalTile> t =
        kvTile(l, /*key=*/ahead % 2 == 0, of, pageEntries);
    if (failed(t))
      return failure();
    strategy->loadRingTile(b, *t, buffer);
    return success();
  };
  // The tile itself (its K at a pipeline's start, its V in its step) is
  // loaded whatever the bounds, as the paired pipeline's first tile is.
  if (ahead < 2)
    return emitLoad();
  auto prefetch = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, of, end),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(prefetch.thenBlock());
  if (failed(emitLoad()))
    return failure();
  b.setInsertionPointToStart(prefetch.elseBlock());
  strategy->commitEmptyLoads(b);
  return success();
}

/// Starts loading tile `tile` of loop `l` if it is before `end`; with more
/// than two stages an empty group otherwise, so that each step starts one
/// group.
LogicalResult FlashKernelBuilder::prefetchKVTiles(FlashKVLoop &l, Value tile,
                                                  Value end,
                                                  ArrayRef<Value> pageEntries) {
  bool counted = loadsAhead() > 1;
  auto prefetch = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tile, end),
      /*withElseRegion=*/counted);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(prefetch.thenBlock());
  if (failed(loadKVTiles(l, tile, Value(), pageEntries)))
    return failure();
  if (counted) {
    b.setInsertionPointToStart(prefetch.elseBlock());
    strategy->commitEmptyLoads(b);
  }
  return success();
}

/// The loads that start a pipeline of loop `l` at tile `first`: the tile
/// itself and, with more than two stages, the next stages - 2 before `end`;
/// interleaved, the first ring - 1 single tiles (K of `first`, its V, ...).
LogicalResult FlashKernelBuilder::startKVPipeline(FlashKVLoop &l, Value first,
                                                  Value end) {
  if (strategy->kvBuffers()) {
    for (int64_t a = 0; a < loadsAhead(); ++a)
      if (failed(loadInterleaved(l, first, a, end)))
        return failure();
    return success();
  }
  if (failed(loadKVTiles(l, first)))
    return failure();
  for (int64_t t = 1; t < loadsAhead(); ++t)
    if (failed(prefetchKVTiles(
            l,
            arith::AddIOp::create(b, loc, first,
                                  arith::ConstantIndexOp::create(b, loc, t)),
            end)))
      return failure();
  return success();
}
