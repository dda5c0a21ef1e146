//===- BackwardWgmma.cpp - the backward step on warpgroup MMAs ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The wgmma strategy of the backward kernel (sm_90a): the loops, the
// recomputation of P and dS are BackwardKernel.cpp's, dQ's staging and TMA
// reductions BackwardQueryGrad.cpp's;
// the five products are warpgroup MMAs reading shared memory through
// descriptors (WgmmaStrategy.h), in 128-byte-swizzled tiles that TMA (Q
// and dO, one thread issuing on the query barrier) and cp.async (K, V and
// the row statistics) fill. Each warpgroup owns 64 keys of the K/V tile, so its
// accumulators have mma.sync's per-warp layout (warp w: keys 16w .. 16w + 15)
// and the elementwise code and the dK/dV epilogue are shared:
//
//   Sᵀ = K Qᵀ, dPᵀ = V dOᵀ     m64 x block_q, K and Q (V and dO) K-major
//   dV += Pᵀ dO, dK += dSᵀ Q   A from registers (Pᵀ, dSᵀ accumulator
//                               pairs), dO and Q MN-major (trans-b)
//   dQ = dS K                   A = dSᵀ stored swizzled (M-major, trans-a),
//                               K MN-major; two warpgroups split d (d = 128)
//                               or each takes its own keys (and both add)
//
// The tiles are written by the generic proxy (cp.async, st.shared) and read
// by the async one (wgmma): writers fence (fence.proxy.async) before the
// barrier that publishes them; TMA writes through the async proxy, and its
// tiles are visible to the threads that waited on the query barrier. Each phase
// waits for its MMAs (wgmma.wait_group 0) before its results are read, and
// every MMA of a step is complete before the barrier that lets the next step
// overwrite dSᵀ and the query stage.
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"
#include "WgmmaStrategy.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;
using namespace attnc::wgmma;

/// Shared memory from a 1024-byte-aligned base: K | V | Q [stages] | dO
/// [stages] | dSᵀ [2] (tiles in boxes of [rows][64]) | lse [stages]
/// [block_q] f32 | delta | dQ's staging tiles (f32, 1024-aligned) | the
/// drawn tiles' slots | the query tiles' mbarrier, when Q and dO come by
/// TMA: wherever it fits (the d = 64 persistent kernel's 128 x 128 tiles
/// with drawn tiles leave no 8 bytes for it, and load them by cp.async).
void BackwardKernelBuilder::planWgmmaLayout() {
  int64_t eb = elemBytes;
  kOffset = 0;
  vOffset = kOffset + blockKV * d * eb;
  qOffset = vOffset + blockKV * dv * eb;
  doOffset = qOffset + stages * blockQ * d * eb;
  dsOffset = doOffset + stages * blockQ * dv * eb;
  lseOffset = dsOffset + kDsBuffers * blockKV * blockQ * eb;
  deltaOffset = lseOffset + stages * blockQ * 4;
  int64_t groups = warps / kWarpsPerGroup;
  dqSplit = groups != 2                ? QueryGradSplit::OwnKeys
            : d == 2 * kBoxElems       ? QueryGradSplit::Columns
            : blockQ == 2 * kGroupRows ? QueryGradSplit::Rows
                                       : QueryGradSplit::OwnKeys;
  dqCols = dqSplit == QueryGradSplit::Columns ? kBoxElems : d;
  dqPartials = dqSplit == QueryGradSplit::OwnKeys ? groups : 1;
  // The staging boxes start on a swizzle atom, as the tensor map's 128-byte
  // swizzle needs.
  dqOffset = llvm::alignTo(deltaOffset + stages * blockQ * 4, kAtomBytes);
  int64_t end = dqOffset + kDsBuffers * dqPartials * blockQ * d * 4;
  slotsOffset = end;
  if (drawsTiles)
    end += 2 * 4;
  // The base's padding is at most kAtomBytes - 16: at d = 64 with 128 x 128
  // tiles the kernel then asks for 232432 bytes, 16 under sm_90a's 227 KiB
  // (a whole atom would exceed it).
  int64_t reserve = kAtomBytes - kSharedBaseAlign;
  queryBarrierOffset = llvm::alignTo(end, kBarrierBytes);
  std::optional<int64_t> limit = dynamicSharedMemoryLimit(chip);
  queriesByTensorMap =
      limit && queryBarrierOffset + kBarrierBytes + reserve <= *limit;
  if (queriesByTensorMap)
    end = queryBarrierOffset + kBarrierBytes;
  abi.dynamicSharedMemoryBytes = end + reserve;
}

/// Q and dO through tensor maps of block_q-row boxes. TMA asks of them what
/// the 16-byte cp.async asked already (a 16-byte aligned base and strides).
void BackwardKernelBuilder::planQueryTensorMaps() {
  for (const char *t : {"q", "do"}) {
    ABIParam m = rowTileTensorMap(t, blockQ);
    paramIndex[m.name] = abi.params.size();
    abi.params.push_back(std::move(m));
  }
}

/// Thread coordinates, the views of planWgmmaLayout's shared memory and the
/// query barrier's setup.
void BackwardKernelBuilder::emitWgmmaPrologue() {
  emitThreadCoords();
  group = arith::DivUIOp::create(b, loc, warp, idx(kWarpsPerGroup));
  Type T = form.elementType;
  int64_t eb = elemBytes;

  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = dynamicSharedBytes(b, loc);
  AlignedShared aligned = alignSharedBase(b, loc, raw);
  auto view = [&](int64_t offset, ArrayRef<int64_t> shape, Type elem) {
    auto type = MemRefType::get(shape, elem, MemRefLayoutAttrInterface{}, ws);
    return memref::ViewOp::create(
        b, loc, type, raw,
        arith::AddIOp::create(b, loc, aligned.pad, idx(offset)), ValueRange{});
  };
  tiles = view(0, {lseOffset / eb}, T);
  lseSmem = view(lseOffset, {stages, blockQ}, b.getF32Type());
  deltaSmem = view(deltaOffset, {stages, blockQ}, b.getF32Type());
  smemAddress = aligned.address;
  if (drawsTiles)
    tileSlots = view(slotsOffset, {2}, b.getI32Type());
  if (!queriesByTensorMap)
    return;
  // The query tiles' barrier completes when its one arrival (the issuing
  // thread's expect_tx) and the Q and dO bytes have come.
  auto first =
      scf::IfOp::create(b, loc, isFirstThread(), /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(first.thenBlock());
    NVVM::MBarrierInitOp::create(
        b, loc, queryBarrier(),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1), Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
}

Value BackwardKernelBuilder::queryBarrier() {
  Value address = arith::AddIOp::create(
      b, loc, smemAddress,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), queryBarrierOffset));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

/// One barrier serves every stage: load n + 1 starts (in step n, or before
/// a loop's first step) only after every thread waited for load n, so one
/// load at most is in flight, and load n completes the barrier's n-th
/// phase.
void BackwardKernelBuilder::waitQueryTiles(Value load) {
  waitBarrierUse(b, loc, queryBarrier(), load, /*flip=*/false);
}

Value BackwardKernelBuilder::tileOffset(int64_t first, Value stage,
                                        int64_t bytes) {
  Value at = idx(first);
  if (stage)
    at = arith::AddIOp::create(
        b, loc, at, arith::MulIOp::create(b, loc, stage, idx(bytes)));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), at);
}

/// Sᵀ (or dPᵀ) of the warpgroup's 64 keys: A = its rows of the K (V) tile
/// at `keysOffset`, B = the block_q rows of the tile at `rowsTile`.
Value BackwardKernelBuilder::issueKeyRowProducts(Value base, int64_t keysOffset,
                                                 Value rowsTile,
                                                 int64_t depth) {
  Value keys = arith::AddIOp::create(
      b, loc, i64(keysOffset),
      arith::IndexCastOp::create(
          b, loc, b.getI64Type(),
          arith::MulIOp::create(b, loc, group,
                                idx(kGroupRows * kBoxRowBytes))));
  return mmaKMajor(b, loc, base, form.elementType, keys, blockKV, rowsTile,
                   blockQ, depth);
}

/// The unpacked accumulator of `n` columns as n8 fragments.
static SmallVector<mma::FragC> fragmentsOf(ArrayRef<Value> values) {
  SmallVector<mma::FragC> c;
  for (size_t i = 0; i + 3 < values.size(); i += 4)
    c.push_back({values[i], values[i + 1], values[i + 2], values[i + 3]});
  return c;
}

/// dQ = dS K of the step whose dSᵀ is the tile at byte `dsTile` (i64):
/// with two warpgroups and two boxes of d, warpgroup g computes box g of
/// dQ's columns over all keys; with two warpgroups and two boxes of
/// block_q, rows 64 g .. 64 g + 63 (dSᵀ's box g) over all keys; otherwise
/// its own keys' share of all columns (both add theirs to the workspace).
/// Issued and committed.
Value BackwardKernelBuilder::issueQueryGradProduct(Value base, Value dsTile) {
  MLIRContext *ctx = b.getContext();
  Type T = form.elementType;
  int64_t dqKeys = dqSplit == QueryGradSplit::OwnKeys ? kGroupRows : blockKV;
  Value groupI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), group);
  // The warpgroup's byte offsets into dSᵀ and K: each its 64 keys of
  // both (own keys), the whole dSᵀ and K's box g of d (columns split), or
  // dSᵀ's box g of queries and all of K (rows split).
  int64_t dsStride = 0, kStride = 0;
  switch (dqSplit) {
  case QueryGradSplit::OwnKeys:
    dsStride = kStride = kGroupRows * kBoxRowBytes;
    break;
  case QueryGradSplit::Columns:
    kStride = blockKV * kBoxRowBytes;
    break;
  case QueryGradSplit::Rows:
    dsStride = blockKV * kBoxRowBytes;
    break;
  }
  // One op per statement: the IR's order must not depend on the order a
  // C++ compiler evaluates arguments in.
  Value dsStrideValue = i64(dsStride);
  Value dsShift = arith::MulIOp::create(b, loc, groupI64, dsStrideValue);
  Value dsStart = arith::AddIOp::create(b, loc, dsTile, dsShift);
  Value kStrideValue = i64(kStride);
  Value kShift = arith::MulIOp::create(b, loc, groupI64, kStrideValue);
  Value kFirst = i64(kOffset);
  Value kStart = arith::AddIOp::create(b, loc, kFirst, kShift);
  auto elem = T.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  Type dqType = accumulatorType(ctx, dqCols);
  Value dq = LLVM::ZeroOp::create(b, loc, dqType);
  Value dsDesc =
      opaqueDescriptor(b, loc, base, dsStart, blockKV * kBoxRowBytes);
  Value kDesc = opaqueDescriptor(b, loc, base, kStart, blockKV * kBoxRowBytes);
  for (int64_t ks = 0; ks < dqKeys / kStepK; ++ks) {
    // Named, so that the ops come in one order whatever order a C++
    // compiler evaluates arguments in.
    int64_t step = ks * kStepK * kBoxRowBytes;
    Value a = advanceDescriptor(b, loc, dsDesc, step);
    Value bDesc = advanceDescriptor(b, loc, kDesc, step);
    dq = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, dqType, dq, a, bDesc,
        NVVM::MMAShapeAttr::get(ctx, kGroupRows, dqCols, kStepK), elem, elem,
        NVVM::WGMMATypes::f32,
        ks == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        // Both MN-major: A is dSᵀ (queries contiguous), B rows of K.
        NVVM::MMALayout::col, NVVM::MMALayout::row, /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return dq;
}

/// The completed product `dq` of step `counter`, staged for the TMA
/// reduction that the next step issues.
void BackwardKernelBuilder::finishQueryGrad(Value dq, Value counter) {
  SmallVector<mma::FragC> frags =
      fragmentsOf(unpackAccumulator(b, loc, dq, dqCols));
  // Rows split: the warp's 16 rows of the whole tile.
  Value slab = dqSplit == QueryGradSplit::Rows
                   ? warp
                   : arith::RemUIOp::create(b, loc, warp, idx(kWarpsPerGroup));
  Value col0 = dqSplit == QueryGradSplit::Columns
                   ? arith::MulIOp::create(b, loc, group, idx(kBoxElems))
                   : idx(0);
  Value buffer = arith::RemUIOp::create(b, loc, counter, idx(kDsBuffers));
  Value partial = dqPartials == 1 ? idx(0) : group;
  stageQueryGrad(frags, slab, col0, buffer, partial);
}

Value BackwardKernelBuilder::dsTileOf(Value counter) {
  return tileOffset(dsOffset,
                    arith::RemUIOp::create(b, loc, counter, idx(kDsBuffers)),
                    blockKV * blockQ * elemBytes);
}

void BackwardKernelBuilder::flushQueryGrad(ArrayRef<Value> pending) {
  // The last step's dSᵀ and the staged tile of the step before are
  // visible to every warp.
  gpu::BarrierOp::create(b, loc);
  ValueRange product = pending.take_front(kTargetValues);
  ValueRange staged = pending.slice(kTargetValues, kTargetValues);
  Value counter = pending.back();
  Value before = arith::AddIOp::create(b, loc, counter, idx(kDsBuffers - 2));
  Value last = arith::AddIOp::create(b, loc, counter, idx(kDsBuffers - 1));
  issueQueryGradReduce(staged,
                       arith::RemUIOp::create(b, loc, before, idx(kDsBuffers)));
  Value base = tiedFence(b, loc, smemAddress, "=l,0");
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value dq = issueQueryGradProduct(base, dsTileOf(last));
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  finishQueryGrad(dq, last);
  wgmma::fenceProxyAsync(b, loc);
  gpu::BarrierOp::create(b, loc);
  issueQueryGradReduce(product,
                       arith::RemUIOp::create(b, loc, last, idx(kDsBuffers)));
}

LogicalResult BackwardKernelBuilder::emitWgmmaStep(
    BackwardQueryLoop &l, IRMapping &scope, Value stage,
    MutableArrayRef<Value> dk, MutableArrayRef<Value> dvAcc,
    MutableArrayRef<Value> pending, function_ref<LogicalResult()> prefetch) {
  Type T = form.elementType;
  int64_t eb = elemBytes;
  // The shared base through an opaque copy per step: the descriptors built
  // from it are computed where they are used, not hoisted out of the loop
  // (40 loop-invariant 64-bit descriptors of K, V and dSᵀ would each hold
  // two registers through it).
  Value base = tiedFence(b, loc, smemAddress, "=l,0");
  Value qTile = tileOffset(qOffset, stage, blockQ * d * eb);
  Value doTile = tileOffset(doOffset, stage, blockQ * dv * eb);
  Value counter = pending.back();

  auto registerA = [&](ArrayRef<std::array<Value, 2>> packed) {
    SmallVector<Value> a;
    for (const auto &pair : packed)
      for (Value v : pair)
        a.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), v));
    return a;
  };
  auto rowsDesc = [&](Value tile) {
    Value first = opaqueDescriptor(b, loc, base, tile, blockQ * kBoxRowBytes);
    return [&, first](int64_t ks) {
      return advanceDescriptor(b, loc, first, ks * kStepK * kBoxRowBytes);
    };
  };
  auto commit = [&] { NVVM::WgmmaGroupSyncAlignedOp::create(b, loc); };
  auto waitAllBut = [&](int64_t n) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, n);
  };

  // Each product is its own group, issued as soon as its operands exist, so
  // that the tensor cores run while the warps compute the next operands:
  // the previous step's dQ = dS K (its dSᵀ published by the barrier that
  // began this step), added to the workspace; Sᵀ | dPᵀ; P while dPᵀ runs; dV +=
  // Pᵀ dO while dS is computed; dK += dSᵀ Q while dSᵀ is stored (in the other
  // buffer: dQ read this one).
  Value previous = arith::AddIOp::create(b, loc, counter, idx(kDsBuffers - 1));
  // The next tile's loads first: later in the step they were measured
  // 1-12% slower (their latency shows at the next step's wait).
  if (failed(prefetch()))
    return failure();
  // The tile staged by the previous step (step counter - 2) goes to the
  // workspace: the barrier that began this step published it.
  issueQueryGradReduce(
      ValueRange(pending).slice(kTargetValues, kTargetValues),
      arith::RemUIOp::create(b, loc, counter, idx(kDsBuffers)));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value dq = issueQueryGradProduct(base, dsTileOf(previous));
  // Staged before Sᵀ is issued: with Sᵀ in flight beside dQ, dK and dV
  // the accumulators spill (measured slower at d = 128, equal at d = 64).
  waitAllBut(0);
  finishQueryGrad(dq, previous);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value sAcc = issueKeyRowProducts(base, kOffset, qTile, d);
  commit();
  Value dpAcc = issueKeyRowProducts(base, vOffset, doTile, dv);
  commit();
  // Where registers allow (dK and dV's accumulators in 64 per thread, d
  // = 64: 2-4% faster on the H200; at d = 128 with no mask or score
  // modifier since Q and dO come by TMA: 24 bytes of spills, 1-4% faster
  // on the H100 from S = 1k to 8k), the row statistics are read while Sᵀ
  // and dPᵀ run; otherwise tile by tile where they are used (hoisted at d
  // = 128 with a mask they spill more and measured level; with 128-row
  // query tiles Sᵀ and dPᵀ alone hold 128 registers, and 32 more for the
  // statistics spill).
  int64_t rowTiles = blockQ / mma::kN;
  bool plain = llvm::all_of(form.loops, [](BackwardQueryLoop &q) {
    return q.step.getMask().empty() && !q.step.hasScoreModifier();
  });
  bool hoist = blockQ <= kGroupRows &&
               ((d + dv) / 2 <= 64 || (queriesByTensorMap && plain));
  SmallVector<Value> nlse2s;
  if (hoist)
    nlse2s = loadRowValues(lseSmem, stage, 0, rowTiles);
  waitAllBut(1);
  SmallVector<mma::FragC> sT =
      fragmentsOf(unpackAccumulator(b, loc, sAcc, blockQ));
  SmallVector<std::array<Value, 2>> pPacked, dsPacked;
  SmallVector<Value> factors;
  if (failed(emitProbabilities(l, scope, stage, nlse2s, sT, pPacked, factors)))
    return failure();
  SmallVector<Value> pA = registerA(pPacked);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value dvNew =
      mmaRegisterA(b, loc, T, dv, dvAcc, pA, blockQ / kStepK, rowsDesc(doTile));
  commit();
  SmallVector<Value> deltas;
  if (hoist)
    deltas = loadRowValues(deltaSmem, stage, 0, rowTiles);
  waitAllBut(1);
  SmallVector<mma::FragC> dpT =
      fragmentsOf(unpackAccumulator(b, loc, dpAcc, blockQ));
  emitScoreGrads(stage, deltas, factors, dpT, dsPacked);
  SmallVector<Value> dsA = registerA(dsPacked);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value dkNew =
      mmaRegisterA(b, loc, T, d, dk, dsA, blockQ / kStepK, rowsDesc(qTile));
  commit();

  // dSᵀ into its swizzled box, a key row per box row; the next step's
  // barrier publishes it.
  Value buffer =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), dsTileOf(counter));
  Value shift = arith::SubIOp::create(b, loc, buffer, idx(dsOffset));
  for (auto [n, pair] : llvm::enumerate(dsPacked))
    for (int64_t h = 0; h < 2; ++h) {
      Value row = arith::AddIOp::create(
          b, loc, w.warpRow0,
          arith::AddIOp::create(b, loc, w.quadRow, idx(8 * h)));
      Value bytes = arith::AddIOp::create(
          b, loc,
          swizzledPairOffset(b, loc, row, w.quadCol, n, blockKV, eb, dsOffset),
          shift);
      // A pair is aligned; said so, as the buffer's offset is dynamic.
      vector::StoreOp::create(
          b, loc, pair[h], tiles,
          ValueRange{arith::DivUIOp::create(b, loc, bytes, idx(eb))},
          /*nontemporal=*/false, llvm::MaybeAlign(2 * eb));
    }
  // One fence for this step's generic-proxy writes read by the async proxy
  // after the next barrier: dSᵀ (the next step's dQ product) and the staged
  // dQ tile (its TMA reductions).
  wgmma::fenceProxyAsync(b, loc);
  waitAllBut(0);
  // The MMAs read the A registers asynchronously: live until the wait.
  keepAlive(b, loc, pA);
  keepAlive(b, loc, dsA);
  SmallVector<Value> dvValues = unpackAccumulator(b, loc, dvNew, dv);
  SmallVector<Value> dkValues = unpackAccumulator(b, loc, dkNew, d);
  llvm::copy(dvValues, dvAcc.begin());
  llvm::copy(dkValues, dk.begin());

  // The reductions issued at the top of the step have read their tiles
  // before the next step's barrier (after which those are restaged).
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                       UnitAttr::get(b.getContext()));
  // This step's dQ product is pending until the next step (or the flush),
  // the previous step's is staged.
  FailureOr<QueryGradTarget> target = queryGradTarget(l, scope);
  if (failed(target))
    return failure();
  for (int64_t i = 0; i < kTargetValues; ++i) {
    pending[kTargetValues + i] = pending[i];
    pending[i] = target->carried[i];
  }
  pending.back() = arith::AddIOp::create(b, loc, counter, idx(1));
  return success();
}
