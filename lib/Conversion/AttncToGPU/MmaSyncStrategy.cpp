//===- MmaSyncStrategy.cpp - cp.async + ldmatrix + mma.sync tiles ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The mma.sync tile strategy (sm_80 and later), FlashAttention-2's: each
// warp owns blockQ/warps query rows (one or two 16-row m16n8k16 slabs; with
// one, Q fragments stay in registers, with two they are re-read from shared
// memory, which halves the K/V ldmatrix traffic per mma). Tiles are staged
// in padded shared memory with cp.async (16 bytes per copy, rows past the
// tensor's end zero-filled), K/V through `stages` buffers of (K, V) pairs,
// or with interleave_kv through one ring of `stages` single-tile buffers
// that K and V tiles take in turn (the builder times their loads); QKᵀ and
// PV run on tensor cores through ldmatrix + mma.sync, P staying in
// registers.
//
// With key_warps > 1 the warps that share a slab split each K/V tile's
// keys: warp (r, c) computes rows of slab group r against keys
// [c * kvPart, (c + 1) * kvPart) of every tile, each its own online
// softmax; after the loops the parts meet in shared memory and part 0
// merges them. Decoding, whose packed query rows fit one slab, spreads a
// tile's MMAs, ldmatrix and exponentials over several warps this way.
//
// mma_sync_unaligned is the same kernel with element-wide global accesses
// (plain loads and stores of one element): Q, K, V and O then need only be
// aligned to their element, which is what a fallback for tensors that TMA
// and cp.async cannot address needs.
//
//===----------------------------------------------------------------------===//

#include "TileStrategy.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Target/TargetDescription.h"

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace attnc;

namespace {

/// Bytes per cp.async: the largest size, and the only one `.cg` (bypass L1)
/// accepts.
constexpr int64_t kCopyBytes = 16;
/// The widest K/V tile: 256 scores per row, as one wgmma n covers.
constexpr int64_t kMaxBlockKV = 256;
/// K/V tiles in flight: past four, shared memory runs out at useful tiles.
constexpr int64_t kMaxStages = 4;

/// Keeps address arithmetic inside the K/V loop: without it, LICM hoists
/// each loop-invariant Q ldmatrix address (one per slab and k step, 64-bit
/// each) and they all stay live across the loop: ~64 registers at d=128
/// with two slabs. Kept inside the loop, every address is one base register
/// plus an immediate offset.
Value pinInLoop(OpBuilder &b, Location loc, Value v) {
  return opaqueIndex(b, loc, v);
}

class MmaSyncStrategy : public AttentionTileStrategy {
public:
  MmaSyncStrategy(const TileShape &s, Location loc, bool elementAccess)
      : s(s), loc(loc), elementAccess(elementAccess),
        rowWarps(s.warps / s.keyWarps), kvPart(s.blockKV / s.keyWarps),
        slabs(s.blockQ / (rowWarps * mma::kM)), dTiles(s.headDim / mma::kN),
        swizzled(mmaSyncSwizzledRows(s.blockQ, s.headDim,
                                     s.elementType.getIntOrFloatBitWidth())),
        rowElems(mmaSyncRowBytes(s.blockQ, s.headDim,
                                 s.elementType.getIntOrFloatBitWidth()) *
                 8 / s.elementType.getIntOrFloatBitWidth()),
        scores(slabs, kvPart / mma::kN, w), output(slabs, dTiles, w) {}

  LogicalResult verify(Location diagLoc) const override;
  int64_t threadsPerBlock() const override { return s.warps * mma::kWarpSize; }
  int64_t sharedMemoryBytes() const override {
    return mmaSyncSharedMemoryBytes(s.blockQ, s.blockKV, s.headDim,
                                    s.elementType.getIntOrFloatBitWidth(),
                                    s.stages, s.interleaveKV);
  }
  int64_t rowAlignmentBytes() const override {
    return elementAccess ? elementBytes() : kCopyBytes;
  }
  const AccumulatorLayout &scoreLayout() const override { return scores; }
  const AccumulatorLayout &outputLayout() const override { return output; }

  void emitPrologue(OpBuilder &b) override;
  void loadQuery(OpBuilder &b, const GlobalTile &q) override {
    emitTileCopy(b, q, qSmem, Value(), s.blockQ);
    commitGroup(b);
  }
  void loadKV(OpBuilder &b, const GlobalTile &k, const GlobalTile &v,
              Value stage) override {
    emitTileCopy(b, k, kSmem, stage, s.blockKV);
    emitTileCopy(b, v, vSmem, stage, s.blockKV);
    commitGroup(b);
  }
  int64_t kvBuffers() const override { return s.interleaveKV ? s.stages : 0; }
  void loadRingTile(OpBuilder &b, const GlobalTile &tile,
                    Value buffer) override {
    emitTileCopy(b, tile, kSmem, buffer, s.blockKV);
    commitGroup(b);
  }
  void waitLoads(OpBuilder &b) override { waitLoadsBut(b, 0); }
  void waitLoadsBut(OpBuilder &b, int64_t newest) override {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, newest);
    gpu::BarrierOp::create(b, loc);
  }
  void commitEmptyLoads(OpBuilder &b) override {
    // (Element accesses have no groups: their loads are done when issued.)
    if (!elementAccess)
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  void prepareQuery(OpBuilder &b) override;
  void beginStep(OpBuilder &b) override;
  SmallVector<Value> computeScores(OpBuilder &b, Value stage) override;
  int64_t probabilityGroup() const override { return 2; }
  void takeProbabilities(OpBuilder &b, ArrayRef<int64_t> elements,
                         ArrayRef<Value> p) override;
  void accumulatePV(OpBuilder &b, Value stage, SmallVectorImpl<Value> &acc,
                    MutableArrayRef<Value> rowSum) override;
  void storeOutput(OpBuilder &b, ArrayRef<Value> acc,
                   const GlobalTile &o) override;
  int64_t keyParts() const override { return s.keyWarps; }
  void mergeKeyParts(OpBuilder &b, ArrayRef<Value> state,
                     KeyPartMerge merge) override;

private:
  Value idx(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Type tokenType(OpBuilder &b) {
    return nvgpu::DeviceAsyncTokenType::get(b.getContext());
  }
  /// Closes the cp.async group of the copies since the last one (element
  /// accesses have none).
  void commitGroup(OpBuilder &b) {
    if (!pending.empty())
      nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType(b), pending);
    pending.clear();
  }
  /// Words of one thread's state: a max and a sum per row slot, and the
  /// output accumulator.
  int64_t stateWords() const { return 2 * 2 * slabs + slabs * dTiles * 4; }
  /// Shared memory the parts other than 0 write their states to.
  int64_t mergeBytes() const {
    return (s.keyWarps - 1) * rowWarps * mma::kWarpSize * stateWords() * 4;
  }
  int64_t elementBytes() const {
    return s.elementType.getIntOrFloatBitWidth() / 8;
  }
  /// Elements one thread moves per global access.
  int64_t elemsPerAccess() const {
    return elementAccess ? 1 : kCopyBytes / elementBytes();
  }
  /// Where column `col` of a Q/K/V row whose index mod 8 is `rowKey` sits
  /// in that row of shared memory: its 16-byte chunk moved to chunk ^
  /// rowKey when rows are swizzled (mmaSyncSwizzledRows).
  Value sharedCol(OpBuilder &b, Value rowKey, Value col) {
    if (!swizzled)
      return col;
    return mma::swizzledColumn(b, loc, col, rowKey,
                               kCopyBytes / elementBytes());
  }
  /// The shared column of an ldmatrix row address at column `lane + c` of
  /// its row, with `lane` (below 16) from the lane and `c` a multiple of 16:
  /// c's bits within a 128-byte line are swizzled with the lane's (at most
  /// four values per thread, which stay in registers) and whole lines added
  /// after, so every address is one of those plus an immediate.
  Value ldmatrixCol(OpBuilder &b, Value lane, int64_t c) {
    if (!swizzled)
      return arith::AddIOp::create(b, loc, lane, idx(b, c));
    int64_t lineElems = kMmaSyncSwizzleLineBytes / elementBytes();
    Value inLine = sharedCol(
        b, laneKey, arith::AddIOp::create(b, loc, lane, idx(b, c % lineElems)));
    return arith::AddIOp::create(b, loc, inLine, idx(b, c - c % lineElems));
  }
  void emitTileCopy(OpBuilder &b, const GlobalTile &src, Value smem,
                    Value stage, int64_t rows);
  void emitElementCopy(OpBuilder &b, const GlobalTile &src, Value smem,
                       Value stage, int64_t rows);
  mma::FragA loadQFragment(OpBuilder &b, int64_t slab, int64_t kStep);

  TileShape s;
  Location loc;
  /// mma_sync_unaligned: plain element loads and stores in global memory.
  const bool elementAccess;
  const int64_t rowWarps; // warps / key_warps: the warps that own rows
  const int64_t kvPart;   // keys of each K/V tile one warp computes
  const int64_t slabs;    // 16-row slabs per warp
  const int64_t dTiles;   // n8 tiles across the head dimension
  const bool swizzled;    // rows swizzled by 16-byte chunk, not padded
  const int64_t rowElems; // shared-memory row length incl. padding
  mma::WarpCoords w;
  mma::AccumulatorTiles scores, output;

  Value qSmem, kSmem, vSmem;
  Value laneKey; // swizzled: lane mod 8, every ldmatrix address's row mod 8
  Value rowWarp, keyPart;         // keyPart: null with one part
  SmallVector<Value> pending;     // cp.async tokens of the open group
  SmallVector<mma::FragA> qFrags; // [slab * kSteps + kStep], when in regs
  Value qLoadRow, qLoadCol;       // per-thread Q ldmatrix origin in the loop
  /// Packed probabilities of the current step: [slab][n8 tile][half].
  SmallVector<SmallVector<std::array<Value, 2>>> probs;
};

} // namespace

LogicalResult MmaSyncStrategy::verify(Location diagLoc) const {
  if (s.headDim != 64 && s.headDim != 128)
    return emitError(diagLoc)
           << "mma_sync strategy: head dim must be 64 or 128, got "
           << s.headDim;
  if (!s.elementType || !(s.elementType.isBF16() || s.elementType.isF16()))
    return emitError(diagLoc)
           << "mma_sync strategy: element type must be bf16 or f16";
  if (rowWarps <= 0 || s.blockQ % (rowWarps * mma::kM) != 0 ||
      s.blockQ / (rowWarps * mma::kM) > 2)
    return emitError(diagLoc)
           << "mma_sync strategy: block_q (" << s.blockQ
           << ") must give each of the " << rowWarps << " warps"
           << (s.keyWarps > 1 ? " that own rows" : "")
           << " 16 or 32 query rows";
  if (kvPart % (2 * mma::kN) != 0)
    return emitError(diagLoc)
           << "mma_sync strategy: block_kv / key_warps (" << s.blockKV << " / "
           << s.keyWarps << ") must be a multiple of 16";
  // The parts' states meet in the tiles' shared memory after the loops.
  if (s.keyWarps > 1 && mergeBytes() > sharedMemoryBytes())
    return emitError(diagLoc)
           << "mma_sync strategy: the " << s.keyWarps << " key parts' states ("
           << mergeBytes() << " bytes) must fit in the tiles' shared memory ("
           << sharedMemoryBytes() << " bytes)";
  int64_t threads = s.warps * mma::kWarpSize;
  int64_t copiesPerRow = s.headDim / elemsPerAccess();
  // Element accesses guard their last pass over a tile; 16-byte copies
  // need whole passes.
  if (s.blockKV % (2 * mma::kN) != 0 || threads % copiesPerRow != 0 ||
      (!elementAccess && (s.blockKV % (threads / copiesPerRow) != 0 ||
                          s.blockQ % (threads / copiesPerRow) != 0)))
    return emitError(diagLoc)
           << "mma_sync strategy: block_kv (" << s.blockKV
           << ") must be a multiple of 16 and of the rows one pass of "
           << threads << " threads copies";
  // Each warp holds its rows' block_kv scores in registers (and the kernel
  // builder unrolls over them): found by the fuzzer as a hang at 2^31.
  if (s.blockKV > kMaxBlockKV)
    return emitError(diagLoc)
           << "mma_sync strategy: block_kv (" << s.blockKV
           << ") must be at most " << kMaxBlockKV
           << ": each warp holds its rows' scores in registers";
  if (s.stages < 2 || s.stages > (s.interleaveKV ? 2 : 1) * kMaxStages)
    return emitError(diagLoc)
           << "mma_sync strategy: stages must be 2 to "
           << (s.interleaveKV ? 2 : 1) * kMaxStages
           << (s.interleaveKV
                   ? " single-tile buffers with interleave_kv"
                   : " (one K/V tile computed while the others load)")
           << ", got " << s.stages;
  return success();
}

/// Thread coordinates and the shared-memory views, carved from the dynamic
/// allocation: Q [blockQ][rowElems] | K [stages][blockKV][rowElems] | V.
void MmaSyncStrategy::emitPrologue(OpBuilder &b) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  w.lane = arith::RemUIOp::create(b, loc, tid, idx(b, mma::kWarpSize));
  w.quadRow = arith::DivUIOp::create(b, loc, w.lane, idx(b, mma::kQuadSize));
  w.quadCol = arith::RemUIOp::create(b, loc, w.lane, idx(b, mma::kQuadSize));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(b, mma::kWarpSize));
  // Warp (r, c) = (warp / key_warps, warp mod key_warps).
  rowWarp = warp;
  if (s.keyWarps > 1) {
    rowWarp = arith::DivUIOp::create(b, loc, warp, idx(b, s.keyWarps));
    keyPart = arith::RemUIOp::create(b, loc, warp, idx(b, s.keyWarps));
    w.warpCol0 = arith::MulIOp::create(b, loc, keyPart, idx(b, kvPart));
    w.writesRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         keyPart, idx(b, 0));
  }
  w.warpRow0 = arith::MulIOp::create(b, loc, rowWarp, idx(b, slabs * mma::kM));

  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Type T = s.elementType;
  int64_t eb = T.getIntOrFloatBitWidth() / 8;
  Value raw = dynamicSharedBytes(b, loc);
  // Swizzled rows start on a line: (-base) mod 128 bytes of slack first.
  Value origin = idx(b, 0);
  if (swizzled) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
    origin = arith::AndIOp::create(
        b, loc, arith::SubIOp::create(b, loc, idx(b, 0), base),
        idx(b, kMmaSyncSwizzleLineBytes - 1));
    laneKey = arith::RemUIOp::create(b, loc, w.lane, idx(b, 8));
  }
  auto qType =
      MemRefType::get({s.blockQ, rowElems}, T, MemRefLayoutAttrInterface{}, ws);
  auto kvType = MemRefType::get({s.stages, s.blockKV, rowElems}, T,
                                MemRefLayoutAttrInterface{}, ws);
  int64_t qBytes = s.blockQ * rowElems * eb;
  int64_t kvBytes = s.stages * s.blockKV * rowElems * eb;
  auto at = [&](int64_t bytes) {
    return arith::AddIOp::create(b, loc, origin, idx(b, bytes)).getResult();
  };
  qSmem = memref::ViewOp::create(b, loc, qType, raw, origin, ValueRange{});
  kSmem = memref::ViewOp::create(b, loc, kvType, raw, at(qBytes), ValueRange{});
  // Interleaved, K and V tiles share one ring of `stages` buffers.
  vSmem = s.interleaveKV
              ? kSmem
              : memref::ViewOp::create(b, loc, kvType, raw,
                                       at(qBytes + kvBytes), ValueRange{});
}

/// cp.async of `rows` rows from `src.rowStart` into `smem` (at [stage] when
/// given). Rows at or past `src.rowLimit` are zero-filled (src-size 0) from
/// a clamped, in-bounds address.
void MmaSyncStrategy::emitTileCopy(OpBuilder &b, const GlobalTile &src,
                                   Value smem, Value stage, int64_t rows) {
  if (elementAccess)
    return emitElementCopy(b, src, smem, stage, rows);
  mma::copyRowsAsync(b, loc, src, smem, stage, rows, s.headDim,
                     elemsPerAccess(), threadsPerBlock(), pending, swizzled);
}

/// Element accesses: each thread loads one element per pass over the tile
/// and stores it (zero past the limit); the next waitLoads' barrier
/// publishes the stores like a cp.async. The passes are a loop of
/// kElementPassesInFlight passes per iteration: unrolled whole, a tile's
/// 64 loads per thread in flight at once spill registers (404 bytes at
/// d = 128) and take ptxas seconds.
void MmaSyncStrategy::emitElementCopy(OpBuilder &b, const GlobalTile &src,
                                      Value smem, Value stage, int64_t rows) {
  constexpr int64_t kElementPassesInFlight = 8;
  int64_t rowsPerPass = threadsPerBlock() / s.headDim;
  int64_t passes = llvm::divideCeil(rows, rowsPerPass);
  int64_t iterations = llvm::divideCeil(passes, kElementPassesInFlight);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value row0 = arith::DivUIOp::create(b, loc, tid, idx(b, s.headDim));
  Value col = arith::RemUIOp::create(b, loc, tid, idx(b, s.headDim));
  Value zero = arith::ConstantOp::create(b, loc, s.elementType,
                                         b.getFloatAttr(s.elementType, 0.0));
  auto loop =
      scf::ForOp::create(b, loc, idx(b, 0), idx(b, iterations), idx(b, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value first = arith::AddIOp::create(
      b, loc, row0,
      arith::MulIOp::create(b, loc, loop.getInductionVar(),
                            idx(b, kElementPassesInFlight * rowsPerPass)));
  // Loads first, then stores, so the iteration's loads are in flight
  // together.
  SmallVector<std::pair<Value, Value>> loaded;
  for (int64_t p = 0; p < kElementPassesInFlight; ++p) {
    Value row = arith::AddIOp::create(b, loc, first, idx(b, p * rowsPerPass));
    auto [srcIdx, srcElems] = mma::clampedRowChunk(b, loc, src, row, col, 1);
    Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        srcElems, idx(b, 0));
    // Unlike a zero-byte cp.async, a load reads: the clamped address (row 0)
    // does not exist when the sequence is empty (Skv = 0).
    auto load = scf::IfOp::create(b, loc, TypeRange{s.elementType}, valid,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(load.thenBlock());
      scf::YieldOp::create(b, loc,
                           ValueRange{memref::LoadOp::create(
                               b, loc, src.mem, ValueRange{srcIdx})});
      b.setInsertionPointToStart(load.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{zero});
    }
    loaded.push_back({row, load.getResult(0)});
  }
  for (auto [row, x] : loaded) {
    OpBuilder::InsertionGuard g(b);
    auto inTile = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                              idx(b, rows)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(inTile.thenBlock());
    SmallVector<Value, 3> dstIdx;
    if (stage)
      dstIdx.push_back(stage);
    dstIdx.append(
        {row,
         sharedCol(b, arith::RemUIOp::create(b, loc, row, idx(b, 8)), col)});
    memref::StoreOp::create(b, loc, x, smem, dstIdx);
  }
}

/// A fragment of Q for one 16-row slab and one 16-wide k step: ldmatrix.x4,
/// matrices (rows 0-7, k lo), (rows 8-15, k lo), (0-7, k hi), (8-15, k hi).
mma::FragA MmaSyncStrategy::loadQFragment(OpBuilder &b, int64_t slab,
                                          int64_t kStep) {
  Value rowBase = qLoadRow;
  Value colBase = qLoadCol;
  if (!rowBase) {
    rowBase = arith::AddIOp::create(
        b, loc, w.warpRow0, arith::RemUIOp::create(b, loc, w.lane, idx(b, 16)));
    colBase = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(b, 16)), idx(b, 8));
  }
  Value row = arith::AddIOp::create(b, loc, rowBase, idx(b, slab * mma::kM));
  return mma::loadMatrixX4(b, loc, qSmem,
                           {row, ldmatrixCol(b, colBase, kStep * mma::kK)},
                           /*transpose=*/false);
}

/// With one slab per warp Q fragments stay in registers for the whole loop
/// (32 registers at d=128); with two, they would not fit next to the
/// accumulators and are reloaded from shared memory at each k step.
void MmaSyncStrategy::prepareQuery(OpBuilder &b) {
  if (slabs != 1)
    return;
  for (int64_t ks = 0; ks < s.headDim / mma::kK; ++ks)
    qFrags.push_back(loadQFragment(b, 0, ks));
}

void MmaSyncStrategy::beginStep(OpBuilder &b) {
  if (!qFrags.empty())
    return;
  qLoadRow = pinInLoop(b, loc,
                       arith::AddIOp::create(
                           b, loc, w.warpRow0,
                           arith::RemUIOp::create(b, loc, w.lane, idx(b, 16))));
  qLoadCol =
      pinInLoop(b, loc,
                arith::MulIOp::create(
                    b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(b, 16)),
                    idx(b, 8)));
}

/// S = Q Kᵀ for the K tile in `stage`. K rows are the n dimension, so a
/// non-transposed ldmatrix of K gives B fragments directly: matrices
/// (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi). The k step
/// is the outer loop so that Q fragments reloaded from shared memory (two
/// slabs per warp) are loaded once per step and shared by all K fragments.
SmallVector<Value> MmaSyncStrategy::computeScores(OpBuilder &b, Value stage) {
  int64_t nTiles = kvPart / mma::kN, kSteps = s.headDim / mma::kK;
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  mma::FragC zeroFrag = {zero, zero, zero, zero};
  SmallVector<SmallVector<mma::FragC>> c(
      slabs, SmallVector<mma::FragC>(nTiles, zeroFrag));
  Value rowOff = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, w.lane, idx(b, 8)),
      arith::MulIOp::create(b, loc,
                            arith::DivUIOp::create(b, loc, w.lane, idx(b, 16)),
                            idx(b, 8)));
  if (w.warpCol0)
    rowOff = arith::AddIOp::create(b, loc, rowOff, w.warpCol0);
  Value colOff = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(b, 8)), idx(b, 2)),
      idx(b, 8));
  for (int64_t ks = 0; ks < kSteps; ++ks) {
    SmallVector<mma::FragA> a;
    for (int64_t sl = 0; sl < slabs; ++sl)
      a.push_back(qFrags.empty() ? loadQFragment(b, sl, ks)
                                 : qFrags[sl * kSteps + ks]);
    Value col = ldmatrixCol(b, colOff, ks * mma::kK);
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      Value row =
          arith::AddIOp::create(b, loc, idx(b, np * 2 * mma::kN), rowOff);
      auto r = mma::loadMatrixX4(b, loc, kSmem, {stage, row, col}, false);
      for (int64_t sl = 0; sl < slabs; ++sl) {
        mma::FragC &c0 = c[sl][2 * np], &c1 = c[sl][2 * np + 1];
        c0 = mma::mmaSync(b, loc, s.elementType, a[sl], {r[0], r[1]}, c0);
        c1 = mma::mmaSync(b, loc, s.elementType, a[sl], {r[2], r[3]}, c1);
      }
    }
  }
  SmallVector<Value> flat;
  for (const auto &slab : c)
    for (const mma::FragC &frag : slab)
      llvm::append_range(flat, frag);
  probs.assign(slabs, SmallVector<std::array<Value, 2>>(nTiles));
  return flat;
}

/// Rounds each (cols 2t, 2t+1) pair to the element type at once: the pair
/// is half of an A fragment of P V.
void MmaSyncStrategy::takeProbabilities(OpBuilder &b, ArrayRef<int64_t> elems,
                                        ArrayRef<Value> p) {
  assert(elems.size() == 2 && elems[0] % 2 == 0 && "a (2t, 2t+1) pair");
  int64_t nTiles = kvPart / mma::kN;
  int64_t e = elems[0];
  int64_t sl = e / (nTiles * 4), n = (e / 4) % nTiles, half = (e % 4) / 2;
  probs[sl][n][half] = mma::packPair(b, loc, s.elementType, p[0], p[1]);
}

/// acc += P V. The accumulators of two adjacent n8 score tiles are exactly
/// the A fragment of a 16-wide k step (rows g/g+8, cols 2t and 2t+8), so P
/// stays in registers. V rows are the k dimension: ldmatrix.trans gives B
/// fragments, matrices (k lo, d 0-7), (k hi, d 0-7), (k lo, d 8-15), (k hi,
/// d 8-15).
void MmaSyncStrategy::accumulatePV(OpBuilder &b, Value stage,
                                   SmallVectorImpl<Value> &acc,
                                   MutableArrayRef<Value> rowSum) {
  assert(rowSum.empty() && "the score stage sums mma_sync's probabilities");
  Value rowOff = arith::RemUIOp::create(b, loc, w.lane, idx(b, 16));
  if (w.warpCol0)
    rowOff = arith::AddIOp::create(b, loc, rowOff, w.warpCol0);
  Value colOff = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(b, 16)), idx(b, 8));
  for (int64_t ks = 0; ks < kvPart / mma::kK; ++ks) {
    SmallVector<mma::FragA> pFrags;
    for (int64_t sl = 0; sl < slabs; ++sl) {
      const auto &lo = probs[sl][2 * ks], &hi = probs[sl][2 * ks + 1];
      pFrags.push_back({lo[0], lo[1], hi[0], hi[1]});
    }
    Value row = arith::AddIOp::create(b, loc, idx(b, ks * mma::kK), rowOff);
    for (int64_t dp = 0; dp < dTiles / 2; ++dp) {
      Value col = ldmatrixCol(b, colOff, dp * 2 * mma::kN);
      auto r = mma::loadMatrixX4(b, loc, vSmem, {stage, row, col}, true);
      for (int64_t sl = 0; sl < slabs; ++sl) {
        for (int64_t j = 0; j < 2; ++j) {
          int64_t base = (sl * dTiles + 2 * dp + j) * 4;
          mma::FragC c = {acc[base], acc[base + 1], acc[base + 2],
                          acc[base + 3]};
          c = mma::mmaSync(b, loc, s.elementType, pFrags[sl],
                           {r[2 * j], r[2 * j + 1]}, c);
          for (int64_t i = 0; i < 4; ++i)
            acc[base + i] = c[i];
        }
      }
    }
  }
}

void MmaSyncStrategy::storeOutput(OpBuilder &b, ArrayRef<Value> acc,
                                  const GlobalTile &o) {
  OpBuilder::InsertionGuard g(b);
  // Key parts: part 0 holds the merged rows.
  if (w.writesRows) {
    auto own = scf::IfOp::create(b, loc, w.writesRows, false);
    b.setInsertionPointToStart(own.thenBlock());
  }
  mma::storeAccumulatorRows(b, loc, output, acc, o,
                            o.elementType ? o.elementType : s.elementType,
                            elementAccess);
}

/// Parts 1.. write their states to shared memory at [part - 1][row warp]
/// [word][lane] (a word's 32 lanes in consecutive banks), over the tiles'
/// buffers once every warp is done with them; every thread then reads the
/// states of its lane in each other part, one part at a time.
void MmaSyncStrategy::mergeKeyParts(OpBuilder &b, ArrayRef<Value> state,
                                    KeyPartMerge merge) {
  assert(static_cast<int64_t>(state.size()) == stateWords() && "one state");
  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  int64_t words = mergeBytes() / 4;
  Value buffer = memref::ViewOp::create(
      b, loc,
      MemRefType::get({words}, b.getF32Type(), MemRefLayoutAttrInterface{}, ws),
      dynamicSharedBytes(b, loc), idx(b, 0), ValueRange{});
  // (No copy is in flight after the last step; waiting costs nothing and
  // keeps the reuse safe whatever the pipeline left.)
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
  int64_t lanes = mma::kWarpSize;
  // Word `word` of other part `part` (0 for key part 1) of this row warp:
  // ((part * rowWarps + rowWarp) * stateWords + word) * lanes + lane.
  auto slotOf = [&](Value part, Value word) {
    Value p = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, part, idx(b, rowWarps)), rowWarp);
    Value base = arith::MulIOp::create(b, loc, p, idx(b, stateWords() * lanes));
    return arith::AddIOp::create(
        b, loc, base,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, word, idx(b, lanes)),
            w.lane));
  };
  {
    OpBuilder::InsertionGuard g(b);
    auto other = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, keyPart,
                              idx(b, 0)),
        false);
    b.setInsertionPointToStart(other.thenBlock());
    Value part = arith::SubIOp::create(b, loc, keyPart, idx(b, 1));
    for (auto [i, v] : llvm::enumerate(state))
      memref::StoreOp::create(b, loc, v, buffer,
                              ValueRange{slotOf(part, idx(b, i))});
  }
  gpu::BarrierOp::create(b, loc);
  for (int64_t p = 0; p + 1 < s.keyWarps; ++p) {
    SmallVector<Value> got;
    for (int64_t i = 0; i < stateWords(); ++i)
      got.push_back(memref::LoadOp::create(
          b, loc, buffer, ValueRange{slotOf(idx(b, p), idx(b, i))}));
    merge(b, got);
  }
}

std::unique_ptr<AttentionTileStrategy>
attnc::createTileStrategy(TileStrategy kind, const TileShape &shape,
                          Location loc) {
  switch (kind) {
  case TileStrategy::mma_sync:
  case TileStrategy::mma_sync_unaligned:
    return std::make_unique<MmaSyncStrategy>(
        shape, loc, kind == TileStrategy::mma_sync_unaligned);
  case TileStrategy::wgmma:
    return createWgmmaTileStrategy(shape, loc, /*producerWarp=*/false,
                                   /*persistentGrid=*/false);
  case TileStrategy::wgmma_ws:
  case TileStrategy::wgmma_ws_persistent:
    return createWgmmaTileStrategy(shape, loc, /*producerWarp=*/true,
                                   /*persistentGrid=*/kind ==
                                       TileStrategy::wgmma_ws_persistent);
  case TileStrategy::wgmma_persistent:
    // The backward's (BackwardKernel.cpp); the forward refuses it first.
    return nullptr;
  }
  return nullptr;
}
