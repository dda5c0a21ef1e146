//===- BackwardPersistent.cpp - the backward's persistent tile walk -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// wgmma_persistent: the backward's wgmma kernel on a grid of the CTAs the
// SMs hold at once (the launch contract's `num_sms`, times two for the
// 98 KiB kernel at d = 64). Each CTA walks the forall's iterations
// (K/V tiles of a batch and head) t = CTA, CTA + #CTAs, ..., which removes
// what a grid of one CTA per tile spends between tiles: with one 226 KiB
// CTA per SM, an SM holds no warp from the moment its CTA retires until
// the next one has started and loaded its K/V tile (about half of the
// fixed cost of 5-6 steps per tile measured on the H200). Here the next
// tile's K and V are in flight while this tile's dK and dV are stored.
// On a longest-first (causal) grid the CTAs draw their tiles from a counter
// instead: a static stride over tiles of unequal length left them
// unbalanced (H100, 2026-12-05, bench/results/backward.md: level with one
// CTA per tile unmasked, -3.5 to +3.3%; 16-52% slower causal up to 4k).
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;

/// The grid's dimensions are walked in the order a grid of one CTA per tile
/// starts them: x fastest, then y, then z. Under a causal mask the flash
/// form puts heads on x, K/V tiles on y (the first, longest, tile of every
/// head first) and batch on z, so a batch's tiles go longest first before
/// the next batch's, and the CTAs draw them from a counter, each taking the
/// next when it starts one (a list schedule). Walked x, z, y instead (every
/// batch's longest tiles first), the CTAs at work read the Q and dO and add
/// to the dQ workspace of every batch at once, more than L2 holds: 2x
/// slower at S = 1k (H100, 2026-12-05: d = 64 109 against 219 TFLOP/s).
void BackwardKernelBuilder::mapWorkTile(Value t, ArrayRef<Value> extents,
                                        IRMapping &scope) {
  static constexpr unsigned kLaunchOrder[] = {0, 1, 2};
  mapPersistentWorkTile(b, loc, t, kLaunchOrder, gridDims,
                        form.forall.getInductionVars(), extents, scope);
}

bool BackwardKernelBuilder::runsLongestFirst() const {
  // The K/V tiles (the forall's last dimension) on y.
  return gridDims.size() == form.forall.getInductionVars().size() &&
         gridDims.back() == 1;
}

/// Drawn as the CTA starts its i-th tile, read by every thread after the
/// flush's final barrier; the slot's next write (tile i + 2) comes after
/// tile i + 1's flush barrier, which every thread reaches only once it has
/// read it.
void BackwardKernelBuilder::drawTile(Value slot, Value ctas) {
  auto draws =
      scf::IfOp::create(b, loc, isFirstThread(), /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(draws.thenBlock());
  Value next = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      drawWorkTile(b, loc, param(kTileCounterName), ctas));
  memref::StoreOp::create(b, loc, next, tileSlots, ValueRange{slot});
}

LogicalResult BackwardKernelBuilder::emitPersistentBody() {
  SmallVector<Value> extents;
  Value total = idx(1);
  for (OpFoldResult ub : form.forall.getMixedUpperBound()) {
    FailureOr<Value> extent = materialize(ub, prologue);
    if (failed(extent))
      return failure();
    extents.push_back(*extent);
    total = arith::MulIOp::create(b, loc, total, *extent);
  }
  Value first = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value stride = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  const IRMapping base = prologue;
  auto scopeOf = [&](Value t) {
    IRMapping scope = base;
    mapWorkTile(t, extents, scope);
    return scope;
  };
  // Starts loading the K/V tile of work tile `t` when there is one.
  auto loadKeyValueOf = [&](Value t) -> LogicalResult {
    auto exists = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t, total),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(exists.thenBlock());
    IRMapping scope = scopeOf(t);
    return loadKeyValueTile(scope);
  };
  if (failed(loadKeyValueOf(first)))
    return failure();

  // The CTA's tiles: t (the CTA's first, then the stride's or the
  // counter's), its position i and the query tiles loaded before it (the
  // phase of the query barrier).
  Type index = b.getIndexType();
  SmallVector<Type> types(3, index);
  SmallVector<Location> locs(3, loc);
  auto loop =
      scf::WhileOp::create(b, loc, types, ValueRange{first, idx(0), idx(0)});
  {
    OpBuilder::InsertionGuard g(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
    scf::ConditionOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              before->getArgument(0), total),
        before->getArguments());
    Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
    Value t = after->getArgument(0), i = after->getArgument(1),
          loads = after->getArgument(2);
    // Slot i mod 2 holds the tile drawn after the i-th.
    Value slot;
    if (drawsTiles) {
      slot = arith::AndIOp::create(b, loc, i, idx(1));
      drawTile(slot, stride);
    }
    IRMapping scope = scopeOf(t);
    FailureOr<SmallVector<Value>> acc = emitTileLoops(scope, loads);
    if (failed(acc))
      return failure();
    // This tile's K/V copy is complete (waited for even when no query tile
    // sees it: the next tile's copy writes the same shared memory).
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    // The last dQ product reads K; the flush ends with a barrier after
    // every warp's wait for it, so K and V are free once it returns.
    flushQueryGrad(ArrayRef(*acc).take_back(kPendingValues));
    // The next tile restages dQ's buffers: its issuing thread waits for
    // the flush's reductions to have read them, before the barrier that
    // begins the next tile's first step.
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         UnitAttr::get(b.getContext()));
    Value next;
    if (drawsTiles) {
      Value drawn = memref::LoadOp::create(b, loc, tileSlots, ValueRange{slot});
      next = arith::IndexCastUIOp::create(b, loc, index, drawn);
    } else {
      next = arith::AddIOp::create(b, loc, t, stride);
    }
    if (failed(loadKeyValueOf(next)) || failed(storeKeyValueGrads(scope, *acc)))
      return failure();
    scf::YieldOp::create(b, loc,
                         ValueRange{next,
                                    arith::AddIOp::create(b, loc, i, idx(1)),
                                    acc->back()});
  }
  // No bulk reduction of dQ may still read shared memory when the kernel
  // ends.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                       UnitAttr());
  return success();
}
