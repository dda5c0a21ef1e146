//===- WgmmaMemory.cpp - the wgmma strategy's tiles in shared memory ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// How the wgmma strategy moves tiles (WgmmaStrategy.h): TMA boxes into the
// swizzled layout and the ring's barriers (wgmma_ws), cp.async copies
// (wgmma), and the epilogue that stages O in shared memory for a TMA store.
//
//===----------------------------------------------------------------------===//

#include "WgmmaStrategy.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::wgmma;
Value WgmmaStrategy::barrier(OpBuilder &b, Value n, bool empty, bool value) {
  Value slot = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), ringDivRem(b, loc, n, s.stages).second);
  int64_t kind = (value ? 2 : 0) + (empty ? 1 : 0);
  int64_t first = barriersOffset() + kind * s.stages * kBarrierBytes;
  return sharedPointer(
      b, arith::AddIOp::create(
             b, loc, i64(b, first),
             arith::MulIOp::create(b, loc, slot, i64(b, kBarrierBytes))));
}

void WgmmaStrategy::emitTensorMapTile(OpBuilder &b, const GlobalTile &src,
                                      Value tileOffset, int64_t rows,
                                      Value bar) {
  copyTileByTensorMap(
      b, loc, src, smemAddress,
      arith::IndexCastOp::create(b, loc, b.getI64Type(), tileOffset), rows,
      s.headDim, bar);
}

/// Box i of the tile holds columns [64 i, 64 i + 64) of its rows; the map's
/// coordinates are innermost first: column, row, head, batch. Rows past
/// the sequence are outside the map: TMA writes zeros for them (and
/// counts their bytes).
void wgmma::copyTileByTensorMap(OpBuilder &b, Location loc,
                                const GlobalTile &src, Value base,
                                Value tileOffset, int64_t rows, int64_t cols,
                                Value bar) {
  auto coord = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  Value row = coord(src.rowStart), head = coord(src.head),
        batch = coord(src.batch);
  Type ptr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  for (int64_t box = 0; box < cols / kBoxElems; ++box) {
    Value at = arith::AddIOp::create(
        b, loc, tileOffset,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                     box * rows * kBoxRowBytes));
    Value dst = LLVM::IntToPtrOp::create(
        b, loc, ptr, arith::AddIOp::create(b, loc, base, at).getResult());
    Value column =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), box * kBoxElems);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, src.map, ValueRange{column, row, head, batch}, bar,
        /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/true,
        /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
  }
}

/// The epilogue as FlashAttention-3's: each warpgroup writes its rows of O,
/// rounded, into the query tile's shared memory (its own rows of Q, which
/// only its MMAs read and which they are done with), in the swizzled layout
/// TMA reads; fences them into the async proxy; and once its 128 threads
/// are past a named barrier, one of them stores the rows by TMA (rows past
/// Sq are outside the map and not written) and waits until they have been
/// read, so the CTA does not release its shared memory early. Four-byte
/// stores of the accumulator pairs: eight rows x four threads of a warp
/// cover the 32 banks once (chunk c ^ row % 8).
void WgmmaStrategy::storeOutputByTensorMap(OpBuilder &b, ArrayRef<Value> acc,
                                           const GlobalTile &o) {
  int64_t dTiles = s.headDim / mma::kN;
  for (int64_t slot = 0; slot < output.numRowSlots(); ++slot) {
    Value row = output.slotRow(b, loc, slot);
    for (int64_t n = 0; n < dTiles; ++n) {
      int64_t e = n * 4 + 2 * (slot % 2);
      Value pair = mma::packPair(b, loc, s.elementType, acc[e], acc[e + 1]);
      Value offset = swizzledPairOffset(b, loc, row, w.quadCol, n, s.blockQ,
                                        elemBytes, outputStagingOffset());
      LLVM::StoreOp::create(
          b, loc, pair,
          sharedPointer(
              b, arith::IndexCastOp::create(b, loc, b.getI64Type(), offset)),
          /*alignment=*/4);
    }
  }
  fenceProxyAsync(b);
  syncGroup(b);
  auto issuer = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, tid, idx(b, kGroupThreads)),
          idx(b, 0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(issuer.thenBlock());
  auto coord = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  int64_t groupRows = mma::kM * kWarpsPerGroup;
  Value firstRow = arith::MulIOp::create(b, loc, group, idx(b, groupRows));
  Value rowCoord = coord(arith::AddIOp::create(b, loc, o.rowStart, firstRow));
  Value head = coord(o.head), batch = coord(o.batch);
  Value firstRowBytes = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      arith::MulIOp::create(b, loc, firstRow, idx(b, kBoxRowBytes)));
  for (int64_t box = 0; box < s.headDim / kBoxElems; ++box) {
    Value src = sharedPointer(
        b, arith::AddIOp::create(
               b, loc, firstRowBytes,
               i64(b, outputStagingOffset() + box * s.blockQ * kBoxRowBytes)));
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        b, loc, o.map, src,
        ValueRange{i32(b, box * kBoxElems), rowCoord, head, batch},
        /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
        /*predicate=*/Value());
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                       b.getUnitAttr());
  if (!probabilitiesAliasStaging())
    return;
  // The next tile's P goes where O was staged: not before the store read it.
  b.setInsertionPointAfter(issuer);
  syncGroup(b);
}

void WgmmaStrategy::syncGroup(OpBuilder &b) {
  Value id = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::AddIOp::create(b, loc, group, idx(b, kFirstStoreBarrier)));
  NVVM::BarrierOp::create(b, loc, Type(), id, i32(b, kGroupThreads), nullptr,
                          Value());
}

Value wgmma::pairPointer(OpBuilder &b, Location loc, Value base, Value i,
                         int64_t offset, int64_t scale) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  Value slot = arith::IndexCastOp::create(
      b, loc, i64,
      arith::AndIOp::create(b, loc, i,
                            arith::ConstantIndexOp::create(b, loc, 1)));
  Value at = arith::AddIOp::create(
      b, loc, c64(offset), arith::MulIOp::create(b, loc, slot, c64(scale)));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      arith::AddIOp::create(b, loc, base, at).getResult());
}

/// Buffer i mod 2's (i / 2)-th use: the producer's issuing thread waits
/// until every consumer is done with the tile before (i - 2; the first use
/// passes at once), then loads.
void WgmmaStrategy::loadQueryOfTile(OpBuilder &b, const GlobalTile &q,
                                    Value i) {
  waitTileRing(b, i, queryBarrier(b, i, /*empty=*/true), /*flip=*/true);
  Value bar = queryBarrier(b, i, /*empty=*/false);
  expectBytes(b, bar, tileBytes(s.blockQ));
  emitTensorMapTile(b, q, queryBufferOffset(b, i), s.blockQ, bar);
}

/// Slot i mod 2's (i / 2)-th use: the producer waits for the consumers to
/// have read its previous one (the first use passes at once: a fresh
/// barrier's phase of parity 1 counts as complete), writes, arrives.
void WgmmaStrategy::publishTile(OpBuilder &b, Value i, Value tile) {
  waitTileRing(b, i, tileBarrier(b, i, /*empty=*/true), /*flip=*/true);
  Value t32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), tile);
  LLVM::StoreOp::create(b, loc, t32, tileSlot(b, i));
  NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                 tileBarrier(b, i, /*empty=*/false), Value());
}

Value WgmmaStrategy::receiveTile(OpBuilder &b, Value i) {
  waitTileRing(b, i, tileBarrier(b, i, /*empty=*/false), /*flip=*/false);
  Value t32 = LLVM::LoadOp::create(b, loc, b.getI32Type(), tileSlot(b, i));
  NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                 tileBarrier(b, i, /*empty=*/true), Value());
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), t32);
}

void WgmmaStrategy::waitTileRing(OpBuilder &b, Value i, Value bar, bool flip) {
  waitUse(b, bar, arith::ShRUIOp::create(b, loc, i, idx(b, 1)), flip);
}

void WgmmaStrategy::waitParity(OpBuilder &b, Value bar, Value n, bool flip) {
  waitUse(b, bar, ringDivRem(b, loc, n, s.stages).first, flip);
}

void wgmma::waitBarrierUse(OpBuilder &b, Location loc, Value bar, Value use,
                           bool flip) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value parity = arith::AndIOp::create(b, loc, use, one);
  if (flip)
    parity = arith::XOrIOp::create(b, loc, parity, one);
  parity = arith::IndexCastOp::create(b, loc, b.getI32Type(), parity);
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, bar, parity,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), kSuspendHintNs));
}

Value WgmmaStrategy::stageOffset(OpBuilder &b, Value stage, bool value) {
  int64_t first =
      tileBytes(s.blockQ) + (value ? s.stages * tileBytes(s.blockKV) : 0);
  return arith::AddIOp::create(
      b, loc, idx(b, first),
      arith::MulIOp::create(b, loc, stage, idx(b, tileBytes(s.blockKV))));
}

/// Thread t (`thread`, counted from the first of `threads`) copies chunk
/// t % (cols/8) of rows t / (cols/8) + k * rowsPerPass. A pass covers a
/// multiple of eight rows, so a thread's swizzled chunk (chunk ^ row % 8) is
/// the same in every pass. Rows at or past `src.rowLimit` are zero-filled
/// from a clamped, in-bounds address.
void wgmma::copySwizzledRows(OpBuilder &b, Location loc, const GlobalTile &src,
                             Value smem, Value tileOffset, int64_t rows,
                             int64_t cols, int64_t elemBytes, Value thread,
                             int64_t threads, SmallVectorImpl<Value> &tokens) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t elemsPerChunk = kChunkBytes / elemBytes;
  int64_t chunksPerRow = cols / elemsPerChunk;
  int64_t chunksPerBox = kBoxRowBytes / kChunkBytes;
  int64_t rowsPerPass = threads / chunksPerRow;
  Value row0 = arith::DivUIOp::create(b, loc, thread, idx(chunksPerRow));
  Value chunk = arith::RemUIOp::create(b, loc, thread, idx(chunksPerRow));
  Value box = arith::DivUIOp::create(b, loc, chunk, idx(chunksPerBox));
  Value swizzled = arith::XOrIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, chunk, idx(chunksPerBox)),
      arith::RemUIOp::create(b, loc, row0, idx(kAtomRows)));
  Value dst0 = arith::AddIOp::create(
      b, loc, tileOffset,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, box, idx(rows * kBoxRowBytes)),
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, row0, idx(kBoxRowBytes)),
              arith::MulIOp::create(b, loc, swizzled, idx(kChunkBytes)))));
  Value col = arith::MulIOp::create(b, loc, chunk, idx(elemsPerChunk));
  Type token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t pass = 0; pass < rows / rowsPerPass; ++pass) {
    Value row = arith::AddIOp::create(b, loc, row0, idx(pass * rowsPerPass));
    auto [srcIdx, srcElems] =
        mma::clampedRowChunk(b, loc, src, row, col, elemsPerChunk);
    Value dst = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, dst0,
                              idx(pass * rowsPerPass * kBoxRowBytes)),
        idx(elemBytes));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, token, smem, ValueRange{dst}, src.mem, ValueRange{srcIdx},
        b.getIndexAttr(elemsPerChunk), srcElems, b.getUnitAttr()));
  }
}
