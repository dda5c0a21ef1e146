//===- MmaFragments.cpp - Warp-level mma.sync fragment helpers -----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// ldmatrix, mma.sync and quad reductions for the m16n8k16 tensor-core shape.
// mma.sync goes through `nvvm.mma.sync` rather than `nvgpu.mma.sync`: in
// MLIR 22 the nvgpu lowering cannot deduce PTX types for bf16 operands
// ("failed to deduce operand PTX types"), while the NVVM op takes bf16 pairs
// packed in i32 registers, as the PTX instruction does.
//
//===----------------------------------------------------------------------===//

#include "MmaFragments.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace attnc::mma {

std::array<Value, 4> loadMatrixX4(OpBuilder &b, Location loc, Value smem,
                                  ValueRange indices, bool transpose) {
  Type elemType = cast<MemRefType>(smem.getType()).getElementType();
  auto resType = VectorType::get({4, 2}, elemType);
  Value res = nvgpu::LdMatrixOp::create(b, loc, resType, smem, indices,
                                        transpose, /*numTiles=*/4);
  std::array<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs[i] = vector::ExtractOp::create(b, loc, res, ArrayRef<int64_t>{i});
  return regs;
}

/// mma.sync wants f16 pairs as vector<2xf16> and bf16 pairs as i32; a
/// pair comes as a vector<2xT> or already packed in an i32 (wgmma's
/// register operands).
static Value asMmaOperand(OpBuilder &b, Location loc, Type elemType,
                          Value pair) {
  Type operand = elemType.isF16() ? Type(VectorType::get({2}, b.getF16Type()))
                                  : Type(b.getI32Type());
  if (pair.getType() == operand)
    return pair;
  return LLVM::BitcastOp::create(b, loc, operand, pair);
}

FragC mmaSync(OpBuilder &b, Location loc, Type elemType, const FragA &a,
              const FragB &bFrag, const FragC &c) {
  SmallVector<Value, 4> aOps, bOps;
  for (Value v : a)
    aOps.push_back(asMmaOperand(b, loc, elemType, v));
  for (Value v : bFrag)
    bOps.push_back(asMmaOperand(b, loc, elemType, v));
  Type f32 = b.getF32Type();
  auto resType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes ptxType =
      elemType.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  auto op = NVVM::MmaOp::create(
      b, loc, resType, aOps, bOps, ValueRange(c), {kM, kN, kK},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  FragC d;
  for (int64_t i = 0; i < 4; ++i)
    d[i] = LLVM::ExtractValueOp::create(b, loc, op.getRes(), i);
  return d;
}

Value packPair(OpBuilder &b, Location loc, Type elemType, Value lo, Value hi) {
  Value wide = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{lo, hi});
  if (elemType.isF32())
    return wide;
  return arith::TruncFOp::create(b, loc, VectorType::get({2}, elemType), wide);
}

Value quadAllReduce(OpBuilder &b, Location loc, Value v, QuadReduction kind) {
  for (int32_t offset = 1; offset < kQuadSize; offset *= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, v, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    v = kind == QuadReduction::Max
            ? arith::MaxNumFOp::create(b, loc, v, other).getResult()
            : arith::AddFOp::create(b, loc, v, other).getResult();
  }
  return v;
}

Value AccumulatorTiles::rowBase(OpBuilder &b, Location loc) const {
  return arith::AddIOp::create(b, loc, w.warpRow0, w.quadRow);
}

Value AccumulatorTiles::columnBase(OpBuilder &b, Location loc) const {
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value c = arith::MulIOp::create(b, loc, w.quadCol, two);
  return w.warpCol0 ? arith::AddIOp::create(b, loc, c, w.warpCol0) : c;
}

Value AccumulatorTiles::slotRow(OpBuilder &b, Location loc,
                                int64_t slot) const {
  Value off = arith::ConstantIndexOp::create(b, loc, slotRowOffset(slot));
  return arith::AddIOp::create(b, loc, rowBase(b, loc), off);
}

Value AccumulatorTiles::column(OpBuilder &b, Location loc, int64_t e) const {
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value c = arith::MulIOp::create(b, loc, w.quadCol, two);
  Value off = arith::ConstantIndexOp::create(b, loc, columnOffset(e));
  Value col = arith::AddIOp::create(b, loc, c, off);
  return w.warpCol0 ? arith::AddIOp::create(b, loc, col, w.warpCol0) : col;
}

Value AccumulatorTiles::reduceRow(OpBuilder &b, Location loc, Value v,
                                  RowReduction kind) const {
  return quadAllReduce(b, loc, v,
                       kind == RowReduction::Max ? QuadReduction::Max
                                                 : QuadReduction::Add);
}

Value AccumulatorTiles::isRowLeader(OpBuilder &b, Location loc) const {
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w.quadCol,
                            arith::ConstantIndexOp::create(b, loc, 0));
  return w.writesRows ? arith::AndIOp::create(b, loc, first, w.writesRows)
                      : first;
}

SmallVector<Value> AccumulatorTiles::rowDraws(OpBuilder &b, Location loc,
                                              int64_t slot, GroupWords words,
                                              DrawExchange &exchange) const {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // mine[n]: word t of group n, the one holding this thread's two draws.
  SmallVector<Value> mine(nTiles);
  if (nTiles % kQuadSize != 0) {
    // Too few groups to share: each thread its own calls, word t of each.
    auto bit = [&](int64_t m) {
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, w.quadCol, idx(m)), idx(0));
    };
    Value t0 = bit(1), t1 = bit(2);
    for (int64_t n = 0; n < nTiles; ++n) {
      SmallVector<Value, 4> a = words(b, idx(n));
      Value lo = arith::SelectOp::create(b, loc, t0, a[1], a[0]);
      Value hi = arith::SelectOp::create(b, loc, t0, a[3], a[2]);
      mine[n] = arith::SelectOp::create(b, loc, t1, hi, lo);
    }
  } else {
    // Lane 4q + u stores word j of its group n0 + u into 16-byte chunk
    // 4q + (j ^ s), s = (q / 2) mod 4, at word u; lane 4q + t loads chunk
    // 4q + (t ^ s): word t of groups n0 .. n0 + 3. The swizzle spreads one
    // store instruction's lanes (fixed j) over all 8 chunk positions mod 8:
    // no bank conflicts. (Through shuffles the transpose took 3 shuffles
    // and 16 selects per 4 groups, and the kernel 10% longer.)
    Value q = arith::DivUIOp::create(b, loc, w.lane, idx(kQuadSize));
    Value s = arith::AndIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, q, idx(2)), idx(3));
    auto chunkWord = [&](Value j) {
      Value chunk = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, q, idx(kQuadSize)),
          arith::XOrIOp::create(b, loc, j, s));
      return arith::MulIOp::create(b, loc, chunk, idx(4));
    };
    Value full = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(-1));
    auto vec4 = VectorType::get({kQuadSize}, b.getI32Type());
    for (int64_t n0 = 0; n0 < nTiles; n0 += kQuadSize) {
      SmallVector<Value, 4> own =
          words(b, arith::AddIOp::create(b, loc, w.quadCol, idx(n0)));
      Value buffer = arith::AddIOp::create(
          b, loc, exchange.base,
          idx((exchange.round++ % 2) * kDrawExchangeWords));
      for (int64_t j = 0; j < kQuadSize; ++j)
        memref::StoreOp::create(
            b, loc, own[j], exchange.words,
            ValueRange{arith::AddIOp::create(
                b, loc, buffer,
                arith::AddIOp::create(b, loc, chunkWord(idx(j)), w.quadCol))});
      NVVM::SyncWarpOp::create(b, loc, full);
      Value got =
          vector::LoadOp::create(b, loc, vec4, exchange.words,
                                 ValueRange{arith::AddIOp::create(
                                     b, loc, buffer, chunkWord(w.quadCol))});
      for (int64_t u = 0; u < kQuadSize; ++u)
        mine[n0 + u] = vector::ExtractOp::create(b, loc, got, u);
    }
  }
  // The slot's elements, in order: per n8 tile, columns 2t (the low half)
  // and 2t + 1 (the high half).
  SmallVector<Value> draws;
  for (int64_t n = 0; n < nTiles; ++n)
    draws.append({mine[n], mine[n]});
  return draws;
}

std::pair<Value, Value> clampedRowChunk(OpBuilder &b, Location loc,
                                        const GlobalTile &src, Value row,
                                        Value col, int64_t elems) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value gRow = arith::AddIOp::create(b, loc, src.rowStart, row);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gRow,
                                        src.rowLimit);
  Value srcRow = arith::SelectOp::create(b, loc, inRange, gRow, idx(0));
  Value srcIdx =
      arith::AddIOp::create(b, loc, globalRowOffset(b, loc, src, srcRow), col);
  Value srcElems = arith::SelectOp::create(b, loc, inRange, idx(elems), idx(0));
  return {srcIdx, srcElems};
}

Value swizzledColumn(OpBuilder &b, Location loc, Value col, Value rowKey,
                     int64_t chunkElems) {
  return arith::XOrIOp::create(
      b, loc, col,
      arith::MulIOp::create(
          b, loc, rowKey, arith::ConstantIndexOp::create(b, loc, chunkElems)));
}

void copyRowsAsync(OpBuilder &b, Location loc, const GlobalTile &src,
                   Value smem, Value stage, int64_t rows, int64_t cols,
                   int64_t elemsPerCopy, int64_t threads,
                   SmallVectorImpl<Value> &tokens, bool swizzle) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t copiesPerRow = cols / elemsPerCopy;
  int64_t rowsPerPass = threads / copiesPerRow;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value row0 = arith::DivUIOp::create(b, loc, tid, idx(copiesPerRow));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tid, idx(copiesPerRow)),
      idx(elemsPerCopy));
  // A row's chunk moves to chunk ^ (row mod 8); when a pass is a multiple
  // of 8 rows, that is this thread's first row's for every pass.
  auto dstCol = [&](Value row) -> Value {
    if (!swizzle)
      return col;
    return swizzledColumn(
        b, loc, col, arith::RemUIOp::create(b, loc, row, idx(8)), elemsPerCopy);
  };
  Value passCol = rowsPerPass % 8 == 0 ? dstCol(row0) : Value();
  Type token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // Paged rows of a tile spanning several pages (it starts on a page
  // boundary then): when a pass's rows divide a page, each pass lies in one
  // page, looked up once per page for all threads instead of once per row
  // (measured on the H200, pages of 16 rows: 6-23% slower than contiguous
  // with a lookup per row).
  bool pagePerPass =
      src.pageTable && !src.tilePage && src.pageSize % rowsPerPass == 0;
  llvm::SmallDenseMap<int64_t, Value> pages;
  // Rows at a fixed stride from the tile's first: contiguous rows, and the
  // rows of a page holding the whole tile. `origin` is the offset of the
  // tile's row 0, `safe` that of a row that exists (the matrix's or the
  // page's first).
  bool linearRows = !src.rowsPerHead && (!src.pageTable || src.tilePage);
  Value origin, safe, first, previous, passStride;
  if (linearRows && !src.pageTable) {
    safe = src.base;
    origin = arith::AddIOp::create(
        b, loc, src.base,
        arith::MulIOp::create(b, loc, src.rowStart, src.rowStride));
  } else if (linearRows) {
    safe = arith::AddIOp::create(b, loc, src.base, src.tilePage);
    Value inPage =
        arith::RemUIOp::create(b, loc, src.rowStart, idx(src.pageSize));
    origin = arith::AddIOp::create(
        b, loc, safe, arith::MulIOp::create(b, loc, inPage, src.rowStride));
  }
  for (int64_t pass = 0; pass < rows / rowsPerPass; ++pass) {
    Value row = arith::AddIOp::create(b, loc, row0, idx(pass * rowsPerPass));
    Value srcIdx, srcElems, inRange;
    if (pagePerPass || linearRows) {
      // A row past the limit reads nothing (its size zeroed) from an address
      // that exists.
      inRange = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult,
          arith::AddIOp::create(b, loc, src.rowStart, row), src.rowLimit);
      srcElems =
          arith::SelectOp::create(b, loc, inRange, idx(elemsPerCopy), idx(0));
    }
    if (pagePerPass) {
      // This thread's chunk of page `page`'s row row0 (< rowsPerPass), then
      // a constant number of rows further for each pass in the page: every
      // such address is inside a page of the pool, so a row past the limit
      // only needs its size zeroed.
      int64_t page = pass * rowsPerPass / src.pageSize;
      Value &pageFirst = pages[page];
      if (!pageFirst) {
        Value offset =
            src.pageEntries.empty()
                ? pageOffset(b, loc, src,
                             arith::AddIOp::create(b, loc, src.rowStart,
                                                   idx(page * src.pageSize)))
                : pageEntryOffset(b, loc, src, src.pageEntries[page]);
        pageFirst = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, src.base, offset),
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, row0, src.rowStride),
                col));
      }
      int64_t inPage = pass * rowsPerPass % src.pageSize;
      srcIdx = arith::AddIOp::create(
          b, loc, pageFirst,
          arith::MulIOp::create(b, loc, idx(inPage), src.rowStride));
    } else if (linearRows) {
      // Row r of the pass is the previous pass's plus rowsPerPass *
      // rowStride: an add, a compare and two selects per pass instead of
      // recomputing the clamped row's offset. The step is opaque: LLVM
      // would otherwise hoist each pass's multiple of the stride out of the
      // K/V loop, a 64-bit register per pass and tensor live through it
      // (64 registers for a 128-row K/V tile of 128 threads).
      // A row past the limit reads nothing from `safe`, a row that exists.
      Value at;
      if (!first) {
        first = arith::AddIOp::create(
            b, loc, origin,
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, row0, src.rowStride),
                col));
        at = first;
      } else {
        if (!passStride)
          passStride = opaqueIndex(
              b, loc,
              arith::MulIOp::create(b, loc, idx(rowsPerPass), src.rowStride));
        at = arith::AddIOp::create(b, loc, previous, passStride);
      }
      previous = at;
      srcIdx = arith::SelectOp::create(
          b, loc, inRange, at, arith::AddIOp::create(b, loc, safe, col));
    } else {
      std::tie(srcIdx, srcElems) =
          clampedRowChunk(b, loc, src, row, col, elemsPerCopy);
    }
    SmallVector<Value, 3> dstIdx;
    if (stage)
      dstIdx.push_back(stage);
    dstIdx.append({row, passCol ? passCol : dstCol(row)});
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, token, smem, dstIdx, src.mem, ValueRange{srcIdx},
        b.getIndexAttr(elemsPerCopy), srcElems, b.getUnitAttr()));
  }
}

void storeAccumulatorRows(OpBuilder &b, Location loc,
                          const AccumulatorTiles &layout, ArrayRef<Value> acc,
                          const GlobalTile &o, Type elemType,
                          bool elementWise) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t nTiles = layout.getNumTiles();
  Value col0 = arith::MulIOp::create(b, loc, layout.coords().quadCol, idx(2));
  for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
    int64_t sl = slot / 2, half = slot % 2;
    Value row =
        arith::AddIOp::create(b, loc, o.rowStart, layout.slotRow(b, loc, slot));
    auto inRange = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                              o.rowLimit),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(inRange.thenBlock());
    Value rowOff = globalRowOffset(b, loc, o, row);
    for (int64_t n = 0; n < nTiles; ++n) {
      int64_t base = (sl * nTiles + n) * 4 + 2 * half;
      Value off = arith::AddIOp::create(
          b, loc, rowOff, arith::AddIOp::create(b, loc, col0, idx(n * kN)));
      Value pair = packPair(b, loc, elemType, acc[base], acc[base + 1]);
      if (!elementWise) {
        // A pair at an even column of a row that starts aligned.
        vector::StoreOp::create(
            b, loc, pair, o.mem, ValueRange{off},
            /*nontemporal=*/false,
            llvm::MaybeAlign(2 * elemType.getIntOrFloatBitWidth() / 8));
        continue;
      }
      for (int64_t i = 0; i < 2; ++i)
        memref::StoreOp::create(
            b, loc, vector::ExtractOp::create(b, loc, pair, i), o.mem,
            ValueRange{arith::AddIOp::create(b, loc, off, idx(i))});
    }
  }
}

} // namespace attnc::mma

/// The page offset (page * pageStride) of row `row` of a paged tile: its
/// entry of the block table, clamped into the pool.
Value attnc::pageEntry(OpBuilder &b, Location loc, const GlobalTile &tile,
                       Value row) {
  Value page = arith::MinUIOp::create(
      b, loc,
      arith::DivUIOp::create(
          b, loc, row, arith::ConstantIndexOp::create(b, loc, tile.pageSize)),
      tile.lastEntry);
  Value at = arith::AddIOp::create(
      b, loc, tile.tableRow,
      arith::MulIOp::create(b, loc, page, tile.tableStride));
  return memref::LoadOp::create(b, loc, tile.pageTable, at);
}

Value attnc::pageEntryOffset(OpBuilder &b, Location loc, const GlobalTile &tile,
                             Value entry) {
  // Unsigned: a negative entry is huge and clamps to the last page too.
  Value slot = arith::MinUIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getIndexType(), entry),
      tile.lastPage);
  return arith::MulIOp::create(b, loc, slot, tile.pageStride);
}

Value attnc::pageOffset(OpBuilder &b, Location loc, const GlobalTile &tile,
                        Value row) {
  return pageEntryOffset(b, loc, tile, pageEntry(b, loc, tile, row));
}

Value attnc::globalRowOffset(OpBuilder &b, Location loc, const GlobalTile &tile,
                             Value row) {
  if (tile.pageTable) {
    Value page = tile.tilePage ? tile.tilePage : pageOffset(b, loc, tile, row);
    Value inPage = arith::RemUIOp::create(
        b, loc, row, arith::ConstantIndexOp::create(b, loc, tile.pageSize));
    return arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, tile.base, page),
        arith::MulIOp::create(b, loc, inPage, tile.rowStride));
  }
  if (!tile.rowsPerHead)
    return arith::AddIOp::create(
        b, loc, tile.base, arith::MulIOp::create(b, loc, row, tile.rowStride));
  Value head = arith::DivUIOp::create(b, loc, row, tile.rowsPerHead);
  Value pos = arith::RemUIOp::create(b, loc, row, tile.rowsPerHead);
  return arith::AddIOp::create(
      b, loc, tile.base,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, head, tile.headStride),
          arith::MulIOp::create(b, loc, pos, tile.rowStride)));
}
