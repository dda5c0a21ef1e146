//===- WgmmaStrategy.cpp - swizzled tiles multiplied by warpgroup MMAs ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The wgmma tile strategy (sm_90a only): Hopper's warpgroup MMAs read both
// operands of S = Q Kᵀ, and V of P V, straight from shared memory through
// 64-bit matrix descriptors, so no warp loads fragments with ldmatrix; P
// stays in registers as the A operand of P V. Each warpgroup (four warps)
// owns 64 query rows: one m64nN MMA per 16-wide k step covers them.
//
// Tiles are staged as the MMA's 128-byte swizzle expects them (the layout
// TMA writes with CU_TENSOR_MAP_SWIZZLE_128B): a tile of `rows` x d
// elements is d/64 boxes of [rows][64] (128-byte rows); the 16-byte chunk
// c of row r lands at chunk c ^ (r % 8), eight rows form a 1024-byte atom,
// and every tile starts on a 1024-byte boundary.
//
// Without a producer (`wgmma`) every thread loads with cp.async, which
// writes through the generic proxy while wgmma reads through the async
// proxy, so each writer fences (fence.proxy.async.shared::cta) before the
// CTA barrier that publishes a tile. With one (`wgmma_ws`, warp
// specialisation as in FlashAttention-3) tiles come by TMA: one thread of
// the producer warpgroup walks the K/V tiles and issues d / 64 boxes per
// tile into a ring of `stages` slots, each with a full mbarrier (the
// boxes' bytes, expect_tx) and an empty one (every consumer thread
// arrives when its MMAs have read the slot); one consumer thread loads Q
// the same way. TMA writes and wgmma reads are both async-proxy
// operations ordered by the mbarrier, so no proxy fence is needed. With two
// stages each step waits for its MMAs (wgmma.wait_group 0) before the softmax
// reads S and before the step ends, so the next step may overwrite the stage it
// read. With three, P V of step j is issued after S of step j + 1 and runs
// while step j + 1's softmax does (wait_group 1 waits for S only); its V stays
// resident through step j + 1, and the third stage is the one being loaded
// meanwhile.
//
//===----------------------------------------------------------------------===//

#include "WgmmaStrategy.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::wgmma;

LogicalResult WgmmaStrategy::verify(Location diagLoc) const {
  if (s.chip != "sm_90a")
    return emitError(diagLoc)
           << "wgmma strategy: needs warpgroup MMAs, which only sm_90a has; "
              "the kernel targets "
           << s.chip << " (use strategy mma_sync)";
  if (s.headDim != 64 && s.headDim != 128)
    return emitError(diagLoc)
           << "wgmma strategy: head dim must be 64 or 128, got " << s.headDim;
  if (!s.elementType || !(s.elementType.isBF16() || s.elementType.isF16()))
    return emitError(diagLoc)
           << "wgmma strategy: element type must be bf16 or f16";
  if (s.keyWarps != 1)
    return emitError(diagLoc)
           << "wgmma strategy: each warpgroup computes all keys of its rows; "
              "key_warps must be 1, got "
           << s.keyWarps << " (key-split warps are mma_sync's)";
  if (s.warps <= 0 || s.warps % kWarpsPerGroup != 0 ||
      s.blockQ != s.warps * mma::kM)
    return emitError(diagLoc)
           << "wgmma strategy: each warpgroup of 4 warps owns 64 query rows, "
              "so warps must be a multiple of 4 and block_q 16 x warps; got "
           << s.warps << " warps and block_q " << s.blockQ;
  if (s.blockKV % kStepK != 0 || s.blockKV < kStepK || s.blockKV > 256)
    return emitError(diagLoc) << "wgmma strategy: block_kv (" << s.blockKV
                              << ") must be a multiple of 16 in [16, 256] "
                                 "(the n of one warpgroup MMA)";
  // TMA boxes take any row count up to 256; cp.async passes cover a fixed
  // number of rows.
  if (producer && s.blockQ > 256)
    return emitError(diagLoc)
           << "wgmma_ws strategy: block_q (" << s.blockQ
           << ") must be at most 256, the rows of one TMA box";
  int64_t chunksPerRow = s.headDim * elemBytes / kChunkBytes;
  int64_t rowsPerPass = consumerThreads() / chunksPerRow;
  for (auto [what, rows] :
       {std::pair("block_kv", s.blockKV), std::pair("block_q", s.blockQ)}) {
    if (!producer && (rowsPerPass == 0 || rows % rowsPerPass != 0))
      return emitError(diagLoc)
             << "wgmma strategy: " << what << " (" << rows
             << ") must be a multiple of the " << rowsPerPass
             << " rows one cp.async pass of its " << consumerThreads()
             << " loading threads covers";
  }
  if (producer && (s.stages < 2 || s.stages > 4))
    return emitError(diagLoc)
           << "wgmma_ws strategy: stages (the producer's ring) must be in [2, "
              "4], got "
           << s.stages;
  if (!producer && s.stages != 2 && s.stages != 3)
    return emitError(diagLoc)
           << "wgmma strategy: stages must be 2 (one K/V tile computed while "
              "the next loads) or 3 (two loading; with overlap_pv, a step's V "
              "in use while the next step computes), got "
           << s.stages;
  return success();
}

/// Thread coordinates, and the dynamic shared memory rounded up to a
/// 1024-byte boundary: Q | K [stages] | V [stages], each tile in boxes.
void WgmmaStrategy::emitPrologue(OpBuilder &b) {
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  w.lane = arith::RemUIOp::create(b, loc, tid, idx(b, mma::kWarpSize));
  w.quadRow = arith::DivUIOp::create(b, loc, w.lane, idx(b, mma::kQuadSize));
  w.quadCol = arith::RemUIOp::create(b, loc, w.lane, idx(b, mma::kQuadSize));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(b, mma::kWarpSize));
  w.warpRow0 = arith::MulIOp::create(b, loc, warp, idx(b, mma::kM));
  group = arith::DivUIOp::create(b, loc, warp, idx(b, kWarpsPerGroup));
  groupRowsOffset = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      arith::MulIOp::create(b, loc, group, idx(b, kGroupRows * kBoxRowBytes)));

  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = dynamicSharedBytes(b, loc);
  AlignedShared aligned = alignSharedBase(b, loc, raw);
  auto viewType =
      MemRefType::get({(sharedMemoryBytes() - kAtomBytes) / elemBytes},
                      s.elementType, MemRefLayoutAttrInterface{}, ws);
  smem =
      memref::ViewOp::create(b, loc, viewType, raw, aligned.pad, ValueRange{});
  smemAddress = aligned.address;
  if (!producer)
    return;
  // One thread sets up the barriers: a full one (and the query tile's)
  // completes when its one arrival (the issuing thread's expect_tx) and the
  // bytes it expects have come, an empty one when every consumer thread has
  // released the slot. The CTA barrier publishes them.
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(b, 0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(first.thenBlock());
    for (int64_t i = 0; i < s.stages; ++i)
      for (int64_t kind = 0; kind < slotBarriers(); ++kind) {
        bool empty = kind % 2;
        NVVM::MBarrierInitOp::create(
            b, loc, barrier(b, idx(b, i), empty, /*value=*/kind >= 2),
            i32(b, empty ? consumerThreads() : 1), Value());
      }
    if (prefetchesQuery()) {
      // The two query buffers': a full one completes on the producer's
      // expect_tx and the bytes, an empty one once every consumer thread
      // is done with the tile.
      for (int64_t i = 0; i < 2; ++i)
        for (bool empty : {false, true})
          NVVM::MBarrierInitOp::create(
              b, loc, queryBarrier(b, idx(b, i), empty),
              i32(b, empty ? consumerThreads() : 1), Value());
    } else {
      NVVM::MBarrierInitOp::create(b, loc, queryBarrier(b), i32(b, 1), Value());
    }
    // The tile ring: a full barrier completes on the producer's arrival
    // after it wrote the slot, an empty one once every consumer read it.
    if (persistentGrid)
      for (int64_t i = 0; i < 2; ++i)
        for (bool empty : {false, true})
          NVVM::MBarrierInitOp::create(b, loc, tileBarrier(b, idx(b, i), empty),
                                       i32(b, empty ? consumerThreads() : 1),
                                       Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
}

AlignedShared wgmma::alignSharedBase(OpBuilder &b, Location loc, Value raw) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
  // (1024 - base % 1024) % 1024, as (-base) & 1023.
  Value pad = arith::AndIOp::create(
      b, loc, arith::SubIOp::create(b, loc, idx(0), base), idx(kAtomBytes - 1));
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, pad));
  return {pad, address};
}

Value wgmma::mmaKMajor(OpBuilder &b, Location loc, Value base, Type elementType,
                       Value aTile, int64_t aRows, Value bTile, int64_t bRows,
                       int64_t depth) {
  MLIRContext *ctx = b.getContext();
  Type accType = accumulatorType(ctx, bRows);
  Value acc = LLVM::ZeroOp::create(b, loc, accType);
  auto elem =
      elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  int64_t elemBytes = elementType.getIntOrFloatBitWidth() / 8;
  Value descA = opaqueDescriptor(b, loc, base, aTile, kChunkBytes);
  Value descB = opaqueDescriptor(b, loc, base, bTile, kChunkBytes);
  for (int64_t ks = 0; ks < depth / kStepK; ++ks) {
    // Named: one op order whatever order arguments are evaluated in.
    Value a =
        advanceDescriptor(b, loc, descA, kMajorStepBytes(ks, aRows, elemBytes));
    Value bDesc =
        advanceDescriptor(b, loc, descB, kMajorStepBytes(ks, bRows, elemBytes));
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc, a, bDesc,
        NVVM::MMAShapeAttr::get(ctx, kGroupRows, bRows, kStepK), elem, elem,
        NVVM::WGMMATypes::f32,
        ks == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }
  return acc;
}

Value wgmma::swizzledPairOffset(OpBuilder &b, Location loc, Value row,
                                Value quadCol, int64_t n, int64_t boxRows,
                                int64_t elemBytes, int64_t tileOffset) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t chunksPerBox = kBoxElems / mma::kN;
  Value rowBytes = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, idx(kBoxRowBytes)),
      arith::MulIOp::create(b, loc, quadCol, idx(2 * elemBytes)));
  Value chunk = arith::XOrIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, row, idx(kAtomRows)),
      idx(n % chunksPerBox));
  return arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, rowBytes,
          arith::MulIOp::create(b, loc, chunk, idx(kChunkBytes))),
      idx(tileOffset + (n / chunksPerBox) * boxRows * kBoxRowBytes));
}

Value wgmma::sharedDescriptor(OpBuilder &b, Location loc, Value base,
                              Value offset, int64_t leadingBytes) {
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value addr = arith::AddIOp::create(b, loc, base, offset);
  Value field = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, addr, i64(kAddressMask)), i64(4));
  int64_t fixed = ((leadingBytes >> 4) << kLeadingShift) |
                  ((kAtomBytes >> 4) << kStrideShift) | kSwizzle128B;
  return arith::OrIOp::create(b, loc, field, i64(fixed));
}

Value wgmma::opaqueDescriptor(OpBuilder &b, Location loc, Value base,
                              Value offset, int64_t leadingBytes) {
  // Opaque, so that LLVM does not fold the advances back into per-step
  // address arithmetic.
  return tiedFence(b, loc, sharedDescriptor(b, loc, base, offset, leadingBytes),
                   "=l,0");
}

Value wgmma::advanceDescriptor(OpBuilder &b, Location loc, Value desc,
                               int64_t bytes) {
  assert(bytes % 16 == 0 && "descriptor addresses are in 16-byte units");
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(
      b, loc, desc,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4));
}

Type wgmma::accumulatorType(MLIRContext *ctx, int64_t n) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, Float32Type::get(ctx)));
}

Value wgmma::tiedFence(OpBuilder &b, Location loc, Value v,
                       StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, v.getType(), ValueRange{v}, b.getStringAttr(""),
             b.getStringAttr(constraints), b.getUnitAttr(),
             /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
             /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
      .getRes();
}

SmallVector<Value> wgmma::unpackAccumulator(OpBuilder &b, Location loc,
                                            Value acc, int64_t n) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < n / 2; ++i) {
    Value v = LLVM::ExtractValueOp::create(b, loc, acc, i);
    values.push_back(tiedFence(b, loc, v, "=f,0"));
  }
  return values;
}

void wgmma::keepAlive(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  if (values.empty())
    return;
  std::string constraints;
  for (size_t i = 0; i < values.size(); ++i)
    constraints += i ? ",r" : "r";
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, values, b.getStringAttr(""),
                            b.getStringAttr(constraints), b.getUnitAttr(),
                            /*is_align_stack=*/nullptr,
                            /*tail_call_kind=*/nullptr,
                            /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
}

/// Each value through an empty asm tied to it: LLVM copies a loop-carried
/// value into the registers an asm reads right before the asm, and a copy
/// into the A registers of P V after S's MMAs started makes ptxas
/// serialize every wgmma (C7513); copied here, before them, instead.
SmallVector<Value> WgmmaStrategy::stageProbabilities(OpBuilder &b,
                                                     ArrayRef<Value> packed) {
  if (probabilitiesInShared)
    return SmallVector<Value>(packed);
  SmallVector<Value> staged;
  for (Value v : packed)
    staged.push_back(tiedFence(b, v, "=r,0"));
  return staged;
}

/// S = Q Kᵀ: this warpgroup's 64 rows of Q against the K tile.
Value WgmmaStrategy::issueScores(OpBuilder &b, Value stage) {
  Value kTile = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           stageOffset(b, stage, false));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value acc = mmaKMajor(b, loc, smemAddress, s.elementType,
                        queryRowsOffset ? queryRowsOffset : groupRowsOffset,
                        s.blockQ, kTile, s.blockKV, s.headDim);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void WgmmaStrategy::takeProbabilities(OpBuilder &b, ArrayRef<int64_t> elems,
                                      ArrayRef<Value> p) {
  assert(elems.size() == 2 && elems[0] % 2 == 0 && "a (2t, 2t+1) pair");
  int64_t e = elems[0];
  probs[e / 4][e % 4] = p[0];
  probs[e / 4][e % 4 + 1] = p[1];
}

/// Each f32 value through an empty asm first: tied to a side-effecting asm
/// after the wait, the rounding cannot be scheduled above it.
SmallVector<Value> WgmmaStrategy::takenProbabilities(OpBuilder &b, Value step) {
  SmallVector<Value> flat;
  for (const auto &tile : probs)
    for (int64_t h = 0; h < 2; ++h) {
      Value lo = tiedFence(b, tile[2 * h], "=f,0");
      Value hi = tiedFence(b, tile[2 * h + 1], "=f,0");
      Value pair = mma::packPair(b, loc, s.elementType, lo, hi);
      flat.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair));
    }
  if (probabilitiesInShared)
    return storeProbabilities(b, flat,
                              arith::AndIOp::create(b, loc, step, idx(b, 1)));
  return flat;
}

/// Each k16 slice of the packed P is an mma.sync m16n8k16 A fragment
/// (the register A of wgmma has that layout per warp): against a B of
/// ones, every column of D is its rows' sum over the slice, exact in f32
/// of the rounded P that P V reads. D's (d0, d2) are the thread's rows g
/// and g + 8 (d1, d3 the same sums again); D chains whole through the
/// slices, so that ptxas needs no moves into the MMA's C registers.
void WgmmaStrategy::addProbabilitySums(OpBuilder &b, ArrayRef<Value> taken,
                                       MutableArrayRef<Value> rowSum) {
  assert(rowSum.size() == 2 && taken.size() % 4 == 0 && "m64 register P");
  Value ones = i32(b, s.elementType.isF16() ? 0x3C003C00 : 0x3F803F80);
  mma::FragC c{rowSum[0], rowSum[0], rowSum[1], rowSum[1]};
  for (size_t k = 0; k < taken.size(); k += 4)
    c = mma::mmaSync(b, loc, s.elementType,
                     {taken[k], taken[k + 1], taken[k + 2], taken[k + 3]},
                     {ones, ones}, c);
  rowSum[0] = c[0];
  rowSum[1] = c[2];
}

SmallVector<Value> WgmmaStrategy::zeroProbabilities(OpBuilder &b, Value step) {
  SmallVector<Value> zeros(s.blockKV / mma::kN * 2, i32(b, 0));
  if (!probabilitiesInShared)
    return zeros;
  // The step before `step`'s: the other buffer.
  Value parity = arith::XOrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, step, idx(b, 1)), idx(b, 1));
  return storeProbabilities(b, zeros, parity);
}

/// The pairs stored in the swizzled layout the MMA's descriptor reads (a
/// Q tile's), a proxy fence, and the warpgroup's named barrier: the P V
/// that reads them is issued by all of its threads, after every thread
/// stored its part. One stmatrix .x4 stores two n8 tiles of the warp's 16
/// rows: its matrices are (rows 0-7, tile n), (rows 8-15, n), (0-7, n + 1),
/// (8-15, n + 1), whose fragments are pairs 2n, 2n + 1, 2n + 2, 2n + 3, and
/// lane l gives row l % 8 of matrix l / 8: a 16-byte chunk of a swizzled
/// row (8 stores a step at block_kv = 128 instead of 32 four-byte ones).
SmallVector<Value> WgmmaStrategy::storeProbabilities(OpBuilder &b,
                                                     ArrayRef<Value> pairs,
                                                     Value parity) {
  Value buffer = arith::AddIOp::create(
      b, loc, idx(b, probabilitiesOffset()),
      arith::MulIOp::create(b, loc, parity, idx(b, probabilityBufferBytes())));
  // Lane l: row warpRow0 + 8 ((l / 8) mod 2) + l mod 8 = warpRow0 + l mod
  // 16, tile n + l / 16.
  Value row = arith::AddIOp::create(
      b, loc, w.warpRow0, arith::RemUIOp::create(b, loc, w.lane, idx(b, 16)));
  Value secondTile = arith::DivUIOp::create(b, loc, w.lane, idx(b, 16));
  Value rowStart = arith::AddIOp::create(
      b, loc, buffer, arith::MulIOp::create(b, loc, row, idx(b, kBoxRowBytes)));
  Value rowSwizzle = arith::RemUIOp::create(b, loc, row, idx(b, kAtomRows));
  int64_t chunksPerBox = kBoxElems / mma::kN;
  auto matrix = NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8);
  for (int64_t n = 0; n < s.blockKV / mma::kN; n += 2) {
    // (n is even: tile n + 1 is in the same box, chunk n mod 8 + 1.)
    Value chunk = arith::XOrIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, secondTile, idx(b, n % chunksPerBox)),
        rowSwizzle);
    Value offset = arith::AddIOp::create(
        b, loc, rowStart,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, chunk, idx(b, kChunkBytes)),
            idx(b, (n / chunksPerBox) * s.blockQ * kBoxRowBytes)));
    NVVM::StMatrixOp::create(
        b, loc,
        sharedPointer(
            b, arith::IndexCastOp::create(b, loc, b.getI64Type(), offset)),
        pairs.slice(2 * n, 4), NVVM::MMALayout::row, matrix,
        NVVM::LdStMatrixEltType::B16);
  }
  fenceProxyAsync(b);
  syncGroup(b);
  Value handle = arith::AddIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), buffer),
      groupRowsOffset);
  return {handle};
}

/// `steps` m64n`n`k16 MMAs into acc as inline PTX, B MN-major at
/// `descB(ks)`; A is `aOperands(ks)`: four packed registers, or one
/// K-major descriptor (`sharedA`).
static Value mmaMNMajorB(
    OpBuilder &b, Location loc, Type elementType, int64_t n,
    ArrayRef<Value> acc, int64_t steps, bool sharedA,
    llvm::function_ref<void(int64_t, SmallVectorImpl<Value> &)> aOperands,
    llvm::function_ref<Value(int64_t)> descB) {
  int64_t regs = n / 2;
  int64_t aCount = sharedA ? 1 : 4;
  std::string ptxType = elementType.isBF16() ? "bf16" : "f16";
  auto operand = [](int64_t i) { return "$" + std::to_string(i); };
  std::string asmText =
      "{\n.reg .pred p;\nsetp.ne.b32 p, " + operand(2 * regs + aCount + 1) +
      ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
      "k16.f32." + ptxType + "." + ptxType + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    asmText += (i ? ", " : "") + operand(i);
    constraints += (i ? ",=f" : "=f");
  }
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);
  asmText += "}, ";
  if (sharedA) {
    asmText += operand(2 * regs);
    constraints += ",l";
  } else {
    asmText += "{";
    for (int64_t i = 0; i < 4; ++i)
      asmText += (i ? ", " : "") + operand(2 * regs + i);
    asmText += "}";
    constraints += ",r,r,r,r";
  }
  // scale-d p, scale-a 1, scale-b 1, [trans-a 0 with A in shared memory,]
  // trans-b 1.
  asmText += ", " + operand(2 * regs + aCount) + ", p, 1, 1, " +
             (sharedA ? "0, 1" : "1") + ";\n}";
  constraints += ",l,n";

  Type accType = accumulatorType(b.getContext(), n);
  Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value result;
  for (int64_t ks = 0; ks < steps; ++ks) {
    SmallVector<Value> operands;
    if (!result)
      operands.append(acc.begin(), acc.end());
    else
      for (int64_t i = 0; i < regs; ++i)
        operands.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
    aOperands(ks, operands);
    operands.push_back(descB(ks));
    operands.push_back(one);
    result = LLVM::InlineAsmOp::create(
                 b, loc, accType, operands, b.getStringAttr(asmText),
                 b.getStringAttr(constraints), b.getUnitAttr(),
                 /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
                 /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
                 .getRes();
  }
  return result;
}

Value wgmma::mmaRegisterA(OpBuilder &b, Location loc, Type elementType,
                          int64_t n, ArrayRef<Value> acc, ArrayRef<Value> a,
                          int64_t steps,
                          llvm::function_ref<Value(int64_t)> descB) {
  return mmaMNMajorB(
      b, loc, elementType, n, acc, steps, /*sharedA=*/false,
      [&](int64_t ks, SmallVectorImpl<Value> &operands) {
        operands.append(a.begin() + 4 * ks, a.begin() + 4 * ks + 4);
      },
      descB);
}

Value wgmma::mmaSharedA(OpBuilder &b, Location loc, Type elementType, int64_t n,
                        ArrayRef<Value> acc, int64_t steps,
                        llvm::function_ref<Value(int64_t)> descA,
                        llvm::function_ref<Value(int64_t)> descB) {
  return mmaMNMajorB(
      b, loc, elementType, n, acc, steps, /*sharedA=*/true,
      [&](int64_t ks, SmallVectorImpl<Value> &operands) {
        operands.push_back(descA(ks));
      },
      descB);
}

/// acc += P V: P from registers (the score accumulators of n8 tiles 2k and
/// 2k+1 are exactly the A fragment of k step k, as with mma.sync). V is
/// N-major: a k step is 16 box rows (2048 bytes), the boxes of d are
/// `block_kv` rows apart.
Value WgmmaStrategy::issuePV(OpBuilder &b, Value stage, ArrayRef<Value> packed,
                             ArrayRef<Value> acc) {
  Value vTile = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           stageOffset(b, stage, true));
  // One descriptor per step, the other k steps' by one add each (as
  // mmaKMajor's operands): built per k step, the address arithmetic was
  // repeated for every MMA.
  Value first =
      opaqueDescriptor(b, loc, smemAddress, vTile, s.blockKV * kBoxRowBytes);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  auto descV = [&](int64_t ks) {
    return advanceDescriptor(b, loc, first, ks * kStepK * kBoxRowBytes);
  };
  Value result;
  if (probabilitiesInShared) {
    // P's buffer holds the block's rows K-major in boxes, as a Q tile.
    Value firstP =
        opaqueDescriptor(b, loc, smemAddress, packed[0], kChunkBytes);
    result = mmaSharedA(
        b, loc, s.elementType, s.headDim, acc, s.blockKV / kStepK,
        [&](int64_t ks) {
          return advanceDescriptor(b, loc, firstP,
                                   kMajorStepBytes(ks, s.blockQ, elemBytes));
        },
        descV);
  } else {
    result = mmaRegisterA(b, loc, s.elementType, s.headDim, acc, packed,
                          s.blockKV / kStepK, descV);
    inFlightA.assign(packed.begin(), packed.end());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return result;
}

std::unique_ptr<AttentionTileStrategy>
attnc::createWgmmaTileStrategy(const TileShape &shape, Location loc,
                               bool producerWarp, bool persistentGrid) {
  return std::make_unique<WgmmaStrategy>(shape, loc, producerWarp,
                                         persistentGrid);
}
