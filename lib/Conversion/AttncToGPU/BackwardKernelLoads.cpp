//===- BackwardKernelLoads.cpp - the backward kernel's data movement -----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// How the backward kernel (BackwardKernel.cpp) fills shared memory: the
// mma_sync layout, the (batch, head) tiles of its tensors, the K/V tile
// once per CTA and, per step, Q, dO and the row statistics (by cp.async;
// with wgmma Q and dO by TMA, one thread issuing on the query barrier,
// where it fits: BackwardWgmma.cpp's planWgmmaLayout).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Target/TargetDescription.h"

#include "BackwardKernelBuilder.h"
#include "WgmmaStrategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;

/// Thread coordinates; shared memory: K [block_kv][d + pad] | V | Q
/// [stages][block_q][d + pad] | dO | dSᵀ [block_kv][block_q + pad] | lse
/// [stages][block_q] f32 | delta. Padded rows keep ldmatrix conflict-free.
void BackwardKernelBuilder::emitThreadCoords() {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  w.lane = arith::RemUIOp::create(b, loc, tid, idx(mma::kWarpSize));
  w.quadRow = arith::DivUIOp::create(b, loc, w.lane, idx(mma::kQuadSize));
  w.quadCol = arith::RemUIOp::create(b, loc, w.lane, idx(mma::kQuadSize));
  warp = arith::DivUIOp::create(b, loc, tid, idx(mma::kWarpSize));
  w.warpRow0 = arith::MulIOp::create(b, loc, warp, idx(mma::kM));
}

void BackwardKernelBuilder::emitPrologue() {
  emitThreadCoords();

  Type T = form.elementType;
  int64_t pad = kMmaSyncRowPadBytes / 2;
  rowElems = d + pad;
  rowElemsV = dv + pad;
  dsRowElems = blockQ + pad;
  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = dynamicSharedBytes(b, loc);
  int64_t offset = 0;
  auto view = [&](ArrayRef<int64_t> shape, Type elem) {
    auto type = MemRefType::get(shape, elem, MemRefLayoutAttrInterface{}, ws);
    Value v =
        memref::ViewOp::create(b, loc, type, raw, idx(offset), ValueRange{});
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    for (int64_t s : shape)
      bytes *= s;
    offset += bytes;
    return v;
  };
  kSmem = view({blockKV, rowElems}, T);
  vSmem = view({blockKV, rowElemsV}, T);
  qSmem = view({stages, blockQ, rowElems}, T);
  doSmem = view({stages, blockQ, rowElemsV}, T);
  dsSmem = view({blockKV, dsRowElems}, T);
  lseSmem = view({stages, blockQ}, b.getF32Type());
  deltaSmem = view({stages, blockQ}, b.getF32Type());
  abi.dynamicSharedMemoryBytes = offset;
}

/// The (batch, head) matrix and first row of `slice` of tensor parameter
/// `tensor`.
FailureOr<GlobalTile>
BackwardKernelBuilder::tileOf(OffsetSizeAndStrideOpInterface slice,
                              StringRef tensor, IRMapping &scope) {
  std::string t = tensor.str();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  FailureOr<Value> batch = materialize(offsets[0], scope);
  FailureOr<Value> head = materialize(offsets[1], scope);
  FailureOr<Value> row = materialize(offsets[2], scope);
  if (failed(batch) || failed(head) || failed(row))
    return failure();
  GlobalTile g;
  g.mem = globalMem.lookup(tensor);
  g.base = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, *batch, paramIndexValue(t + ".stride0")),
      arith::MulIOp::create(b, loc, *head, paramIndexValue(t + ".stride1")));
  g.rowStride = paramIndexValue(t + ".stride2");
  g.rowStart = *row;
  g.batch = *batch;
  g.head = *head;
  return g;
}

void BackwardKernelBuilder::copyTile(const GlobalTile &src, Value smem,
                                     int64_t offset, Value stage, int64_t rows,
                                     int64_t cols) {
  SmallVector<Value> tokens;
  if (wgmma) {
    Value at = idx(offset);
    if (stage)
      at = arith::AddIOp::create(
          b, loc, at,
          arith::MulIOp::create(b, loc, stage, idx(rows * cols * elemBytes)));
    wgmma::copySwizzledRows(b, loc, src, tiles, at, rows, cols, elemBytes,
                            gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
                            warps * mma::kWarpSize, tokens);
  } else {
    mma::copyRowsAsync(b, loc, src, smem, stage, rows, cols,
                       kCopyBytes / elemBytes, warps * mma::kWarpSize, tokens);
  }
  nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

/// One f32 per query row of the tile (the logsumexp or delta) by a 4-byte
/// cp.async of thread `threadRow` (< block_q), zero past the sequence.
void BackwardKernelBuilder::copyRowValues(const GlobalTile &src, Value smem,
                                          Value stage, Value threadRow) {
  auto [srcIdx, srcElems] =
      mma::clampedRowChunk(b, loc, src, threadRow, idx(0), 1);
  Type token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value t = nvgpu::DeviceAsyncCopyOp::create(
      b, loc, token, smem, ValueRange{stage, threadRow}, src.mem,
      ValueRange{srcIdx}, b.getIndexAttr(1), srcElems, UnitAttr());
  nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, token, ValueRange{t});
}

/// Starts loading the tiles of iteration `i` of query loop `l` (Q, dO, the
/// logsumexp and delta rows) into stage `load mod stages`. With wgmma one
/// thread moves Q and dO by TMA (the query barrier expects their bytes):
/// 8 to 16 cp.async per thread and their addresses were issue slots and
/// registers of the threads that compute.
LogicalResult BackwardKernelBuilder::loadQueryTile(BackwardQueryLoop &l,
                                                   Value i, Value load,
                                                   IRMapping scope) {
  if (l.loop)
    scope.map(l.loop.getInductionVar(), i);
  FailureOr<GlobalTile> q = tileOf(l.query, "q", scope);
  FailureOr<GlobalTile> dO = tileOf(l.outGrad, "do", scope);
  FailureOr<GlobalTile> lse = tileOf(l.logsumexp, "lse", scope);
  FailureOr<GlobalTile> delta = tileOf(l.delta, "delta", scope);
  if (failed(q) || failed(dO) || failed(lse) || failed(delta))
    return failure();
  q->rowLimit = dO->rowLimit = lse->rowLimit = delta->rowLimit = seqQ;
  Value stage = arith::RemUIOp::create(b, loc, load, idx(stages));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (queriesByTensorMap) {
    q->map = param("q.map");
    dO->map = param("do.map");
    auto issuer = scf::IfOp::create(b, loc, isFirstThread(), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(issuer.thenBlock());
    Value bar = queryBarrier();
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), bar,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                     blockQ * (d + dv) * elemBytes),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
    wgmma::copyTileByTensorMap(
        b, loc, *q, smemAddress,
        tileOffset(qOffset, stage, blockQ * d * elemBytes), blockQ, d, bar);
    wgmma::copyTileByTensorMap(
        b, loc, *dO, smemAddress,
        tileOffset(doOffset, stage, blockQ * dv * elemBytes), blockQ, dv, bar);
  } else {
    copyTile(*q, qSmem, qOffset, stage, blockQ, d);
    copyTile(*dO, doSmem, doOffset, stage, blockQ, dv);
  }
  auto inRange = [&](int64_t lo) {
    return arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid, idx(lo)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                              idx(lo + blockQ)));
  };
  for (auto [k, tile, smem] :
       {std::tuple{0, *lse, lseSmem}, std::tuple{1, *delta, deltaSmem}}) {
    auto copy = scf::IfOp::create(b, loc, inRange(k * blockQ), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(copy.thenBlock());
    copyRowValues(tile, smem, stage,
                  arith::SubIOp::create(b, loc, tid, idx(k * blockQ)));
  }
  return success();
}

LogicalResult BackwardKernelBuilder::loadKeyValueTile(IRMapping &scope) {
  FailureOr<GlobalTile> k = tileOf(form.keySlice, "k", scope);
  FailureOr<GlobalTile> v = tileOf(form.valueSlice, "v", scope);
  if (failed(k) || failed(v))
    return failure();
  k->rowLimit = v->rowLimit = seqKV;
  copyTile(*k, kSmem, kOffset, Value(), blockKV, d);
  copyTile(*v, vSmem, vOffset, Value(), blockKV, dv);
  return success();
}
