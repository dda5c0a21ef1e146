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

#include "TileStrategy.h"

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;

namespace {

/// One row of a swizzle box: 64 bf16/f16 elements.
constexpr int64_t kBoxRowBytes = 128;
constexpr int64_t kBoxElems = 64;
/// A swizzle atom: eight box rows; tiles and descriptors start on one.
constexpr int64_t kAtomBytes = 1024;
constexpr int64_t kAtomRows = 8;
/// One cp.async copy, one swizzled chunk.
constexpr int64_t kChunkBytes = 16;
/// One mbarrier.
constexpr int64_t kBarrierBytes = 8;
/// The named barrier (besides 0, the CTA's) that the consumers of a
/// warp-specialised kernel use among themselves.
constexpr int64_t kConsumerBarrier = 1;
/// The suspend-time hint of mbarrier.try_wait (ns), as CUTLASS uses.
constexpr int64_t kSuspendHintNs = 0x989680;
/// Named barriers kFirstTurnBarrier + w: warpgroup w's turn to issue MMAs.
constexpr int64_t kFirstTurnBarrier = 2;
/// Named barriers kFirstStoreBarrier + w: warpgroup w's output rows are in
/// shared memory (after the turn barriers of up to four warpgroups).
constexpr int64_t kFirstStoreBarrier = 8;
constexpr int64_t kGroupThreads = 128;
/// 32-bit registers of an SM, and what the producer keeps of them per thread
/// (one thread's walk over the work tiles and TMA coordinates; setmaxnreg
/// takes multiples of 8, 24 at least). 24 leaves two consumer warpgroups
/// 240 each.
constexpr int64_t kRegisterFile = 65536;
constexpr int64_t kProducerRegisters = 24;
/// Rows of one warpgroup MMA and warps per warpgroup.
constexpr int64_t kGroupRows = 64;
constexpr int64_t kWarpsPerGroup = 4;
/// k of one bf16/f16 warpgroup MMA.
constexpr int64_t kStepK = 16;
/// Descriptor fields: start address bits [17:4]; leading and stride byte
/// offsets at bits 16 and 32 (in 16-byte units); 128-byte swizzle at 62.
constexpr int64_t kAddressMask = 0x3FFFF;
constexpr int64_t kLeadingShift = 16;
constexpr int64_t kStrideShift = 32;
constexpr int64_t kSwizzle128B = int64_t(1) << 62;

class WgmmaStrategy : public AttentionTileStrategy {
public:
  WgmmaStrategy(const TileShape &s, Location loc, bool producerWarp,
                bool persistentGrid)
      : s(s), loc(loc),
        elemBytes(s.elementType ? s.elementType.getIntOrFloatBitWidth() / 8
                                : 2),
        producer(producerWarp), persistentGrid(persistentGrid),
        scores(1, s.blockKV / mma::kN, w), output(1, s.headDim / mma::kN, w) {}

  LogicalResult verify(Location diagLoc) const override;
  int64_t threadsPerBlock() const override {
    return consumerThreads() + (producer ? producerThreads() : 0);
  }
  /// The tiles, the ring's barriers and one atom of slack: the dynamic
  /// shared array is only 16-byte aligned, and the kernel rounds its base
  /// up to 1024 bytes.
  int64_t sharedMemoryBytes() const override {
    return kAtomBytes + barriersOffset() +
           (producer ? (2 * s.stages + 1) * kBarrierBytes : 0);
  }
  int64_t rowAlignmentBytes() const override { return kChunkBytes; }
  /// With a producer, Q, K and V come by TMA, and O leaves by TMA, a
  /// warpgroup's 64 rows at a time, except in the persistent form, where the
  /// next tile's Q already occupies the shared memory O would pass through.
  int64_t tensorMapRows(StringRef tensor) const override {
    if (!producer)
      return 0;
    if (tensor == "o")
      return mma::kM * kWarpsPerGroup;
    return tensor == "q" ? s.blockQ : s.blockKV;
  }
  const AccumulatorLayout &scoreLayout() const override { return scores; }
  const AccumulatorLayout &outputLayout() const override { return output; }

  void emitPrologue(OpBuilder &b) override;
  /// With a producer, one consumer thread loads the query tile by TMA.
  void loadQuery(OpBuilder &b, const GlobalTile &q) override {
    if (producer) {
      auto first = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                idx(b, 0)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(first.thenBlock());
      Value bar = queryBarrier(b);
      expectBytes(b, bar, tileBytes(s.blockQ));
      emitTensorMapTile(b, q, idx(b, 0), s.blockQ, bar);
      return;
    }
    emitTileCopy(b, q, idx(b, 0), s.blockQ, tid, consumerThreads());
    nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType(b), pending);
    pending.clear();
  }
  /// With a producer, its issuing thread loads K and V by TMA into ring
  /// slot `stage`, whose full barrier then expects their bytes.
  void loadKV(OpBuilder &b, const GlobalTile &k, const GlobalTile &v,
              Value stage) override {
    if (producer) {
      Value full = barrier(b, stage, /*empty=*/false);
      expectBytes(b, full, 2 * tileBytes(s.blockKV));
      emitTensorMapTile(b, k, stageOffset(b, stage, /*value=*/false), s.blockKV,
                        full);
      emitTensorMapTile(b, v, stageOffset(b, stage, /*value=*/true), s.blockKV,
                        full);
      return;
    }
    emitTileCopy(b, k, stageOffset(b, stage, /*value=*/false), s.blockKV, tid,
                 consumerThreads());
    emitTileCopy(b, v, stageOffset(b, stage, /*value=*/true), s.blockKV, tid,
                 consumerThreads());
    nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType(b), pending);
    pending.clear();
  }
  /// With a producer only the query tile is waited for here (the phase of
  /// its barrier that the CTA's current tile completes); K/V come through
  /// the ring.
  void waitLoads(OpBuilder &b) override {
    if (producer) {
      NVVM::MBarrierTryWaitParityOp::create(b, loc, queryBarrier(b),
                                            queryPhase ? queryPhase : i32(b, 0),
                                            i32(b, kSuspendHintNs));
      return;
    }
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    fenceProxyAsync(b);
    gpu::BarrierOp::create(b, loc);
  }
  void prepareQuery(OpBuilder &b) override {}
  void beginStep(OpBuilder &b) override {}
  SmallVector<Value> computeScores(OpBuilder &b, Value stage) override {
    return waitScores(b, issueScores(b, stage), 0);
  }
  int64_t probabilityGroup() const override { return 2; }
  void takeProbabilities(OpBuilder &b, ArrayRef<int64_t> elements,
                         ArrayRef<Value> p) override;
  void accumulatePV(OpBuilder &b, Value stage,
                    SmallVectorImpl<Value> &acc) override {
    SmallVector<Value> values =
        waitPV(b, issuePV(b, stage, takenProbabilities(), acc));
    acc.assign(values.begin(), values.end());
  }

  bool overlapsPV() const override { return s.stages >= 3; }

  bool hasProducer() const override { return producer; }
  Value isProducer(OpBuilder &b) override {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                 idx(b, consumerThreads()));
  }
  /// Registers are allocated per warpgroup: the producer's gives most of
  /// its share to the consumers (setmaxnreg), as FlashAttention-3 does.
  void enterRole(OpBuilder &b, bool isProducer) override {
    NVVM::SetMaxRegisterOp::create(
        b, loc,
        b.getI32IntegerAttr(isProducer ? kProducerRegisters
                                       : consumerRegisters()),
        NVVM::SetMaxRegisterActionAttr::get(
            b.getContext(), isProducer ? NVVM::SetMaxRegisterAction::decrease
                                       : NVVM::SetMaxRegisterAction::increase));
    if (isProducer || !pingPong())
      return;
    // The last warpgroup hands the first its first turn.
    auto last = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                              idx(b, groups() - 1)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(last.thenBlock());
    NVVM::BarrierArriveOp::create(b, loc, turnBarrier(b, idx(b, 0)),
                                  i32(b, 2 * kGroupThreads));
  }
  /// Ping-pong (FlashAttention-3): warpgroup w issues its MMAs on its turn
  /// (named barrier kFirstTurnBarrier + w), then hands the turn to w + 1.
  void beginMMAs(OpBuilder &b) override {
    if (pingPong())
      NVVM::BarrierOp::create(b, loc, Type(), turnBarrier(b, group),
                              i32(b, 2 * kGroupThreads), nullptr, Value());
  }
  void endMMAs(OpBuilder &b) override {
    if (!pingPong())
      return;
    Value next = arith::RemUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, group, idx(b, 1)),
        idx(b, groups()));
    NVVM::BarrierArriveOp::create(b, loc, turnBarrier(b, next),
                                  i32(b, 2 * kGroupThreads));
  }
  /// wgmma_ws_persistent: the producer runs into the next tile's K/V while
  /// the consumers store the current one's output. Not the default: with
  /// CTAs striding over the tiles, causal kernels lose 8% on the H200
  /// (their longest-first order needs a dynamic tile scheduler), and
  /// non-causal ones gain 2-4% with 128 K/V rows but not with 176.
  bool persistent() const override { return persistentGrid; }
  void beginTile(OpBuilder &b, Value iteration) override {
    queryPhase = arith::IndexCastOp::create(
        b, loc, b.getI32Type(),
        arith::AndIOp::create(b, loc, iteration, idx(b, 1)));
  }
  /// Every consumer is past its last MMA on the query tile.
  void releaseQuery(OpBuilder &b) override {
    NVVM::BarrierOp::create(b, loc, Type(), i32(b, kConsumerBarrier),
                            i32(b, consumerThreads()), nullptr, Value());
  }
  /// The producer's one issuing thread: the first of its warpgroup.
  Value producerIssues(OpBuilder &b) override {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                 idx(b, consumerThreads()));
  }
  void acquireSlot(OpBuilder &b, Value n) override {
    waitParity(b, barrier(b, n, /*empty=*/true), n, /*flip=*/true);
  }
  /// loadKV's expect_tx was the slot's one arrival: nothing left to do.
  void commitSlot(OpBuilder &b, Value n) override {}
  void waitSlot(OpBuilder &b, Value n) override {
    waitParity(b, barrier(b, n, /*empty=*/false), n, /*flip=*/false);
  }
  void releaseSlot(OpBuilder &b, Value n) override {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier(b, n, true),
                                   Value());
  }
  SmallVector<Value> takenProbabilities() override;
  SmallVector<Value> zeroProbabilities(OpBuilder &b) override {
    return SmallVector<Value>(s.blockKV / mma::kN * 2, i32(b, 0));
  }
  Value issueScores(OpBuilder &b, Value stage) override;
  SmallVector<Value> stageProbabilities(OpBuilder &b,
                                        ArrayRef<Value> packed) override;
  Value issuePV(OpBuilder &b, Value stage, ArrayRef<Value> packed,
                ArrayRef<Value> acc) override;
  SmallVector<Value> waitScores(OpBuilder &b, Value handle,
                                int64_t inFlight) override {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, inFlight);
    probs.assign(s.blockKV / mma::kN, {});
    return unpack(b, handle, s.blockKV);
  }
  SmallVector<Value> waitPV(OpBuilder &b, Value handle) override {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    keepAlive(b, inFlightA);
    inFlightA.clear();
    return unpack(b, handle, s.headDim);
  }
  void storeOutput(OpBuilder &b, ArrayRef<Value> acc,
                   const GlobalTile &o) override {
    if (o.map)
      return storeOutputByTensorMap(b, acc, o);
    mma::storeAccumulatorRows(b, loc, output, acc, o, s.elementType);
  }

private:
  int64_t tileBytes(int64_t rows) const { return rows * s.headDim * elemBytes; }
  int64_t consumerThreads() const { return s.warps * mma::kWarpSize; }
  int64_t groups() const { return s.warps / kWarpsPerGroup; }
  /// Turns between the consumer warpgroups: with a producer, overlapped
  /// P V and more than one of them.
  bool pingPong() const { return producer && overlapsPV() && groups() > 1; }
  Value turnBarrier(OpBuilder &b, Value g) {
    return arith::IndexCastOp::create(
        b, loc, b.getI32Type(),
        arith::AddIOp::create(b, loc, g, idx(b, kFirstTurnBarrier)));
  }
  Value i32(OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  int64_t producerThreads() const { return kWarpsPerGroup * mma::kWarpSize; }
  /// What the consumers' warpgroups get once the producer's has given up
  /// all but kProducerRegisters per thread: a multiple of 8, at most 256.
  /// The pool is what the CTA was launched with (the register file split
  /// evenly over its threads, rounded down to 8 per thread), not the whole
  /// file: setmaxnreg.inc waits until the registers it asks for are free,
  /// and more than the producer gave up never are (a deadlock, seen with
  /// 32 for the producer and 240 for the consumers of 384 threads).
  int64_t consumerRegisters() const {
    int64_t threads = threadsPerBlock();
    int64_t launched = kRegisterFile / threads / 8 * 8;
    int64_t left = launched * threads - producerThreads() * kProducerRegisters;
    return std::min<int64_t>(256, left / consumerThreads() / 8 * 8);
  }
  /// Byte offset of the barriers: the ring's full[stages], then its
  /// empty[stages], then the query tile's.
  int64_t barriersOffset() const {
    return tileBytes(s.blockQ) + 2 * s.stages * tileBytes(s.blockKV) +
           (persistentGrid ? tileBytes(s.blockQ) : 0);
  }
  /// Where the epilogue stages O for its TMA store: the query tile's own
  /// memory, except in the persistent form, whose next query tile is
  /// loaded there meanwhile: a buffer of its own after the ring.
  int64_t outputStagingOffset() const {
    return persistentGrid
               ? tileBytes(s.blockQ) + 2 * s.stages * tileBytes(s.blockKV)
               : 0;
  }
  /// The full or empty barrier of ring slot `n` (!llvm.ptr<3>).
  Value barrier(OpBuilder &b, Value n, bool empty);
  Value queryBarrier(OpBuilder &b) {
    return sharedPointer(
        b, i64(b, barriersOffset() + 2 * s.stages * kBarrierBytes));
  }
  /// The shared-memory pointer (!llvm.ptr<3>) `offset` (i64) bytes past
  /// the aligned base.
  Value sharedPointer(OpBuilder &b, Value offset) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        arith::AddIOp::create(b, loc, smemAddress, offset).getResult());
  }
  /// This thread's arrival on `bar`, which then also waits for `bytes`
  /// bytes of asynchronous copies.
  void expectBytes(OpBuilder &b, Value bar, int64_t bytes) {
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, i32(b, bytes),
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
  }
  void storeOutputByTensorMap(OpBuilder &b, ArrayRef<Value> acc,
                              const GlobalTile &o);
  /// TMA of the `rows` rows from `src.rowStart` of `src`'s matrix into the
  /// swizzled tile at byte `tileOffset` (index), completing on `bar`.
  void emitTensorMapTile(OpBuilder &b, const GlobalTile &src, Value tileOffset,
                         int64_t rows, Value bar);
  /// Waits for the phase of slot `n`'s barrier that its (n / stages)-th use
  /// completes; `flip` for the producer's wait on an empty barrier, whose
  /// first use must pass at once.
  void waitParity(OpBuilder &b, Value bar, Value n, bool flip);
  void fenceProxyAsync(OpBuilder &b) {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  Value idx(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i64(OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Type tokenType(OpBuilder &b) {
    return nvgpu::DeviceAsyncTokenType::get(b.getContext());
  }
  /// Byte offset (from the aligned base) of the K or V tile of `stage`.
  Value stageOffset(OpBuilder &b, Value stage, bool value);
  void emitTileCopy(OpBuilder &b, const GlobalTile &src, Value tileOffset,
                    int64_t rows, Value thread, int64_t threads);
  /// The shared-memory descriptor of a 128-byte-swizzled operand at byte
  /// `offset` (i64) from the aligned base.
  Value descriptor(OpBuilder &b, Value offset, int64_t leadingBytes);
  /// An f32 accumulator of `n` columns: the struct a warpgroup MMA
  /// returns (n / 2 values per thread).
  Type accumulatorType(OpBuilder &b, int64_t n) {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(n / 2, b.getF32Type()));
  }
  SmallVector<Value> unpack(OpBuilder &b, Value acc, int64_t n);
  /// `v` through an empty asm tied to it (`constraints` "=f,0" or "=r,0"):
  /// LLVM cannot move its uses above, nor its definition below, this point.
  Value tiedFence(OpBuilder &b, Value v, StringRef constraints) {
    return LLVM::InlineAsmOp::create(
               b, loc, v.getType(), ValueRange{v}, b.getStringAttr(""),
               b.getStringAttr(constraints), b.getUnitAttr(),
               /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
               /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
        .getRes();
  }
  /// An empty asm that reads `values`: to LLVM they are live until here.
  void keepAlive(OpBuilder &b, ArrayRef<Value> values);

  TileShape s;
  Location loc;
  const int64_t elemBytes;
  /// Warp-specialised: one more warpgroup loads K/V through the barrier ring.
  const bool producer;
  /// One CTA per SM walking the work tiles (needs the producer).
  const bool persistentGrid;
  mma::WarpCoords w;
  mma::AccumulatorTiles scores, output;

  Value tid;
  /// Parity (i32) of the query barrier's phase of the current tile.
  Value queryPhase;
  /// This thread's warpgroup (index).
  Value group;
  /// Element view of the aligned shared memory, and its base's shared
  /// address (i64), which descriptors are built from.
  Value smem, smemAddress;
  /// Byte offset of this warpgroup's 64 query rows in the Q tile (i64).
  Value groupRowsOffset;
  SmallVector<Value> pending;
  /// Packed probabilities of the current step (i32): [n8 tile][half].
  SmallVector<std::array<Value, 2>> probs;
  /// The register A operand of the P V in flight: the MMA reads it
  /// asynchronously, but LLVM sees its last use at the issue and would hand
  /// its registers to the next step's probabilities, written while the MMA
  /// still runs (ptxas then serializes every wgmma of the kernel, C7513).
  SmallVector<Value> inFlightA;
};

} // namespace

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
              "the next loads) or 3 (and P V of a step overlapping the next "
              "step's softmax), got "
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
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, ws));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
  // (1024 - base % 1024) % 1024, as (-base) & 1023.
  Value pad = arith::AndIOp::create(
      b, loc, arith::SubIOp::create(b, loc, idx(b, 0), base),
      idx(b, kAtomBytes - 1));
  auto viewType =
      MemRefType::get({(sharedMemoryBytes() - kAtomBytes) / elemBytes},
                      s.elementType, MemRefLayoutAttrInterface{}, ws);
  smem = memref::ViewOp::create(b, loc, viewType, raw, pad, ValueRange{});
  smemAddress = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, pad));
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
      for (bool empty : {false, true})
        NVVM::MBarrierInitOp::create(b, loc, barrier(b, idx(b, i), empty),
                                     i32(b, empty ? consumerThreads() : 1),
                                     Value());
    NVVM::MBarrierInitOp::create(b, loc, queryBarrier(b), i32(b, 1), Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
}

Value WgmmaStrategy::barrier(OpBuilder &b, Value n, bool empty) {
  Value slot = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      arith::RemUIOp::create(b, loc, n, idx(b, s.stages)));
  int64_t first = barriersOffset() + (empty ? s.stages * kBarrierBytes : 0);
  return sharedPointer(
      b, arith::AddIOp::create(
             b, loc, i64(b, first),
             arith::MulIOp::create(b, loc, slot, i64(b, kBarrierBytes))));
}

/// Box i of the tile holds columns [64 i, 64 i + 64) of its rows; the map's
/// coordinates are innermost first: column, row, head, batch. Rows past
/// the sequence are outside the map: TMA writes zeros for them (and
/// counts their bytes).
void WgmmaStrategy::emitTensorMapTile(OpBuilder &b, const GlobalTile &src,
                                      Value tileOffset, int64_t rows,
                                      Value bar) {
  auto coord = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  Value row = coord(src.rowStart), head = coord(src.head),
        batch = coord(src.batch);
  Value tile = arith::IndexCastOp::create(b, loc, b.getI64Type(), tileOffset);
  for (int64_t box = 0; box < s.headDim / kBoxElems; ++box) {
    Value dst = sharedPointer(
        b,
        arith::AddIOp::create(b, loc, tile, i64(b, box * rows * kBoxRowBytes)));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, src.map,
        ValueRange{i32(b, box * kBoxElems), row, head, batch}, bar,
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
  int64_t chunksPerBox = kBoxElems / mma::kN;
  Value col = arith::MulIOp::create(b, loc, w.quadCol, idx(b, 4));
  for (int64_t slot = 0; slot < output.numRowSlots(); ++slot) {
    Value row = output.slotRow(b, loc, slot);
    Value rowBytes = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, idx(b, kBoxRowBytes)), col);
    Value phase = arith::RemUIOp::create(b, loc, row, idx(b, kAtomRows));
    for (int64_t n = 0; n < dTiles; ++n) {
      int64_t e = n * 4 + 2 * (slot % 2);
      Value pair = mma::packPair(b, loc, s.elementType, acc[e], acc[e + 1]);
      Value chunk =
          arith::XOrIOp::create(b, loc, phase, idx(b, n % chunksPerBox));
      Value offset = arith::AddIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, rowBytes,
              arith::MulIOp::create(b, loc, chunk, idx(b, kChunkBytes))),
          idx(b, outputStagingOffset() +
                     (n / chunksPerBox) * s.blockQ * kBoxRowBytes));
      LLVM::StoreOp::create(
          b, loc, pair,
          sharedPointer(
              b, arith::IndexCastOp::create(b, loc, b.getI64Type(), offset)),
          /*alignment=*/4);
    }
  }
  fenceProxyAsync(b);
  Value barrierId = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::AddIOp::create(b, loc, group, idx(b, kFirstStoreBarrier)));
  NVVM::BarrierOp::create(b, loc, Type(), barrierId, i32(b, kGroupThreads),
                          nullptr, Value());
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
}

void WgmmaStrategy::waitParity(OpBuilder &b, Value bar, Value n, bool flip) {
  Value use = arith::DivUIOp::create(b, loc, n, idx(b, s.stages));
  Value parity = arith::AndIOp::create(b, loc, use, idx(b, 1));
  if (flip)
    parity = arith::XOrIOp::create(b, loc, parity, idx(b, 1));
  parity = arith::IndexCastOp::create(b, loc, b.getI32Type(), parity);
  NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, parity,
                                        i32(b, kSuspendHintNs));
}

Value WgmmaStrategy::stageOffset(OpBuilder &b, Value stage, bool value) {
  int64_t first =
      tileBytes(s.blockQ) + (value ? s.stages * tileBytes(s.blockKV) : 0);
  return arith::AddIOp::create(
      b, loc, idx(b, first),
      arith::MulIOp::create(b, loc, stage, idx(b, tileBytes(s.blockKV))));
}

/// cp.async of `rows` rows from `src.rowStart` into the swizzled tile at
/// byte `tileOffset` by `threads` threads: thread t (`thread`, counted from
/// the first of them) copies chunk t % (d/8) of rows t / (d/8) +
/// k * rowsPerPass. A pass covers a multiple of eight rows, so a thread's
/// swizzled chunk (chunk ^ row % 8) is the same in every pass. Rows at or
/// past `src.rowLimit` are zero-filled from a clamped, in-bounds address.
void WgmmaStrategy::emitTileCopy(OpBuilder &b, const GlobalTile &src,
                                 Value tileOffset, int64_t rows, Value thread,
                                 int64_t threads) {
  int64_t elemsPerChunk = kChunkBytes / elemBytes;
  int64_t chunksPerRow = s.headDim / elemsPerChunk;
  int64_t chunksPerBox = kBoxRowBytes / kChunkBytes;
  int64_t rowsPerPass = threads / chunksPerRow;
  Value row0 = arith::DivUIOp::create(b, loc, thread, idx(b, chunksPerRow));
  Value chunk = arith::RemUIOp::create(b, loc, thread, idx(b, chunksPerRow));
  Value box = arith::DivUIOp::create(b, loc, chunk, idx(b, chunksPerBox));
  Value swizzled = arith::XOrIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, chunk, idx(b, chunksPerBox)),
      arith::RemUIOp::create(b, loc, row0, idx(b, kAtomRows)));
  Value dst0 = arith::AddIOp::create(
      b, loc, tileOffset,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, box, idx(b, rows * kBoxRowBytes)),
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, row0, idx(b, kBoxRowBytes)),
              arith::MulIOp::create(b, loc, swizzled, idx(b, kChunkBytes)))));
  Value col = arith::MulIOp::create(b, loc, chunk, idx(b, elemsPerChunk));
  for (int64_t pass = 0; pass < rows / rowsPerPass; ++pass) {
    Value row = arith::AddIOp::create(b, loc, row0, idx(b, pass * rowsPerPass));
    auto [srcIdx, srcElems] =
        mma::clampedRowChunk(b, loc, src, row, col, elemsPerChunk);
    Value dst = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, dst0,
                              idx(b, pass * rowsPerPass * kBoxRowBytes)),
        idx(b, elemBytes));
    pending.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType(b), smem, ValueRange{dst}, src.mem,
        ValueRange{srcIdx}, b.getIndexAttr(elemsPerChunk), srcElems,
        b.getUnitAttr()));
  }
}

Value WgmmaStrategy::descriptor(OpBuilder &b, Value offset,
                                int64_t leadingBytes) {
  Value addr = arith::AddIOp::create(b, loc, smemAddress, offset);
  Value field = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, addr, i64(b, kAddressMask)),
      i64(b, 4));
  int64_t fixed = ((leadingBytes >> 4) << kLeadingShift) |
                  ((kAtomBytes >> 4) << kStrideShift) | kSwizzle128B;
  return arith::OrIOp::create(b, loc, field, i64(b, fixed));
}

/// The values of a warpgroup MMA's accumulator, each passed through an
/// empty asm tied to it: LLVM sees no dependence between an MMA's results
/// and wgmma.wait_group, and must not move their uses above it.
SmallVector<Value> WgmmaStrategy::unpack(OpBuilder &b, Value acc, int64_t n) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < n / 2; ++i) {
    Value v = LLVM::ExtractValueOp::create(b, loc, acc, i);
    values.push_back(tiedFence(b, v, "=f,0"));
  }
  return values;
}

void WgmmaStrategy::keepAlive(OpBuilder &b, ArrayRef<Value> values) {
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
  SmallVector<Value> staged;
  for (Value v : packed)
    staged.push_back(tiedFence(b, v, "=r,0"));
  return staged;
}

/// S = Q Kᵀ, both K-major: per 16-wide k step the descriptors advance 32
/// bytes inside a 128-byte box row, and jump to the next box every four.
Value WgmmaStrategy::issueScores(OpBuilder &b, Value stage) {
  MLIRContext *ctx = b.getContext();
  Value kTile = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           stageOffset(b, stage, false));
  Type accType = accumulatorType(b, s.blockKV);
  Value acc = LLVM::ZeroOp::create(b, loc, accType);
  auto elem =
      s.elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  int64_t stepsPerBox = kBoxElems / kStepK;
  for (int64_t ks = 0; ks < s.headDim / kStepK; ++ks) {
    int64_t inBox = (ks % stepsPerBox) * kStepK * elemBytes;
    int64_t box = ks / stepsPerBox;
    Value qOff = arith::AddIOp::create(
        b, loc, groupRowsOffset, i64(b, box * s.blockQ * kBoxRowBytes + inBox));
    Value kOff = arith::AddIOp::create(
        b, loc, kTile, i64(b, box * s.blockKV * kBoxRowBytes + inBox));
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc, descriptor(b, qOff, kChunkBytes),
        descriptor(b, kOff, kChunkBytes),
        NVVM::MMAShapeAttr::get(ctx, kGroupRows, s.blockKV, kStepK), elem, elem,
        NVVM::WGMMATypes::f32,
        ks == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void WgmmaStrategy::takeProbabilities(OpBuilder &b, ArrayRef<int64_t> elems,
                                      ArrayRef<Value> p) {
  assert(elems.size() == 2 && elems[0] % 2 == 0 && "a (2t, 2t+1) pair");
  int64_t e = elems[0];
  Value pair = mma::packPair(b, loc, s.elementType, p[0], p[1]);
  probs[e / 4][(e % 4) / 2] =
      LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}

/// acc += P V. The A operand comes from registers, which the NVVM op cannot
/// express (it takes descriptors only), so this MMA is inline PTX: the
/// score accumulators of n8 tiles 2k and 2k+1 are exactly the A fragment
/// of k step k, as with mma.sync. V is N-major (trans-b 1): a k step is 16
/// box rows (2048 bytes), the boxes of d are `block_kv` rows apart.
SmallVector<Value> WgmmaStrategy::takenProbabilities() {
  SmallVector<Value> flat;
  for (const auto &pair : probs)
    flat.append(pair.begin(), pair.end());
  return flat;
}

Value WgmmaStrategy::issuePV(OpBuilder &b, Value stage, ArrayRef<Value> packed,
                             ArrayRef<Value> acc) {
  int64_t n = s.headDim, regs = n / 2;
  Value vTile = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           stageOffset(b, stage, true));
  std::string ptxType = s.elementType.isBF16() ? "bf16" : "f16";
  std::string asmText =
      "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * regs + 5) +
      ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
      "k16.f32." + ptxType + "." + ptxType + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    asmText += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);
  asmText += "}, {";
  for (int64_t i = 0; i < 4; ++i)
    asmText += (i ? ", $" : "$") + std::to_string(2 * regs + i);
  asmText += "}, $" + std::to_string(2 * regs + 4) + ", p, 1, 1, 1;\n}";
  constraints += ",r,r,r,r,l,n";

  Type accType = accumulatorType(b, n);
  Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value result;
  for (int64_t ks = 0; ks < s.blockKV / kStepK; ++ks) {
    SmallVector<Value> operands;
    if (!result)
      operands.append(acc.begin(), acc.end());
    else
      for (int64_t i = 0; i < regs; ++i)
        operands.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
    // The n8 tiles 2ks and 2ks + 1, two packed halves each.
    operands.append(packed.begin() + 4 * ks, packed.begin() + 4 * ks + 4);
    Value vOff = arith::AddIOp::create(b, loc, vTile,
                                       i64(b, ks * kStepK * kBoxRowBytes));
    operands.push_back(descriptor(b, vOff, s.blockKV * kBoxRowBytes));
    operands.push_back(one);
    result = LLVM::InlineAsmOp::create(
                 b, loc, accType, operands, b.getStringAttr(asmText),
                 b.getStringAttr(constraints), b.getUnitAttr(),
                 /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
                 /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
                 .getRes();
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  inFlightA.assign(packed.begin(), packed.end());
  return result;
}

std::unique_ptr<AttentionTileStrategy>
attnc::createWgmmaTileStrategy(const TileShape &shape, Location loc,
                               bool producerWarp, bool persistentGrid) {
  return std::make_unique<WgmmaStrategy>(shape, loc, producerWarp,
                                         persistentGrid);
}
