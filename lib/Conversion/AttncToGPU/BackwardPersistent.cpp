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
// Measured (H100, 2026-12-05, bench/results/backward.md): level with one
// CTA per tile unmasked (-3.5 to +3.3%), 16-52% slower causal up to 4k
// (the static stride leaves CTAs unbalanced), so it is opt-in.
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;

/// The grid's dimensions are walked in the order a grid of one CTA per tile
/// would start them: x fastest. Under a causal mask the flash form puts
/// heads on x and K/V tiles on y, the longest (first) tile of every head
/// first; the walk then goes x, z, y, so that the long tiles of every batch
/// come before the short ones, with serpentine rounds (the forward's
/// persistent grid, when it strode over causal tiles, measured 6% more
/// steps on its busiest CTA without them; it now draws them from a counter,
/// which the backward could too).
void BackwardKernelBuilder::mapWorkTile(Value t, Value total, Value stride,
                                        ArrayRef<Value> extents,
                                        IRMapping &scope) {
  SmallVector<Value> ivs = form.forall.getInductionVars();
  // The K/V tiles (the forall's last dimension) on y: longest first.
  bool longestFirst = gridDims.size() == ivs.size() && gridDims.back() == 1;
  static constexpr unsigned kGridOrder[] = {0, 1, 2};
  static constexpr unsigned kLongestFirstOrder[] = {0, 2, 1};
  mapPersistentWorkTile(b, loc, t, stride, total, /*serpentine=*/longestFirst,
                        longestFirst ? ArrayRef<unsigned>(kLongestFirstOrder)
                                     : ArrayRef<unsigned>(kGridOrder),
                        gridDims, ivs, extents, scope);
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
    mapWorkTile(t, total, stride, extents, scope);
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

  auto loop = scf::ForOp::create(b, loc, first, total, stride);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    IRMapping scope = scopeOf(t);
    FailureOr<SmallVector<Value>> acc = emitTileLoops(scope);
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
    if (failed(loadKeyValueOf(arith::AddIOp::create(b, loc, t, stride))) ||
        failed(storeKeyValueGrads(scope, *acc)))
      return failure();
  }
  // No bulk reduction of dQ may still read shared memory when the kernel
  // ends.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                       UnitAttr());
  return success();
}
