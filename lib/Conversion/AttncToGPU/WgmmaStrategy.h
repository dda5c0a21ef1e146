//===- WgmmaStrategy.h - the wgmma tile strategy's class --------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The wgmma tile strategy, shared by WgmmaStrategy.cpp (configuration,
// prologue, the MMAs) and WgmmaMemory.cpp (tiles in and out of shared
// memory: TMA, cp.async, the epilogue, the ring's barriers). The design is
// described at the top of WgmmaStrategy.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_WGMMASTRATEGY_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_WGMMASTRATEGY_H

#include "TileStrategy.h"

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace attnc::wgmma {

// The class is written against MLIR's types unqualified, as the strategy
// files are; the directive stays inside this internal namespace.
using namespace mlir;

/// One row of a swizzle box: 64 bf16/f16 elements.
constexpr int64_t kBoxRowBytes = 128;
constexpr int64_t kBoxElems = 64;
/// A swizzle atom: eight box rows; tiles and descriptors start on one.
constexpr int64_t kAtomBytes = 1024;
constexpr int64_t kAtomRows = 8;
/// The alignment of the dynamic shared array's base (gpu.dynamic_shared_
/// memory's `.shared .align 16` symbol): alignSharedBase pads it by at most
/// kAtomBytes - kSharedBaseAlign bytes.
constexpr int64_t kSharedBaseAlign = 16;
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
/// Named barriers kFirstStoreBarrier + w: warpgroup w's threads meet (its
/// output rows, or with shared_p its probabilities, are in shared memory;
/// after the turn barriers of up to four warpgroups).
constexpr int64_t kFirstStoreBarrier = 8;
/// The named barrier a persistent kernel's producer helper warps (all of
/// its warpgroup's warps but the issuing one) compute id bounds behind.
constexpr int64_t kIdBoundsBarrier = 12;
constexpr int64_t kGroupThreads = 128;
/// 32-bit registers of an SM, and the fewest the producer keeps of them per
/// thread (one thread's walk over the work tiles and TMA coordinates;
/// setmaxnreg takes multiples of 8, 24 at least).
constexpr int64_t kRegisterFile = 65536;
constexpr int64_t kProducerRegisters = 24;
/// The most a consumer thread takes. A d = 128 consumer fits in 232 with no
/// spills (every forward variant of the GPU suite, ptxas 13.0), and the 8
/// it leaves give the producer 40 instead of 24: the persistent walk of a
/// masked or GQA grid (tile bounds, slot and tile counters, the tile's
/// coordinates) spilled 12 to 32 bytes in 24 and nothing in 40.
constexpr int64_t kConsumerRegisters = 232;
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

/// The shared-memory descriptor of a 128-byte-swizzled operand at byte
/// `offset` (i64) past `base`, the 1024-byte-aligned shared address (i64)
/// the tiles start from. `leadingBytes`: a K-major operand's is unused (16);
/// an MN-major one's is the distance between its 64-element boxes.
Value sharedDescriptor(OpBuilder &b, Location loc, Value base, Value offset,
                       int64_t leadingBytes);

/// sharedDescriptor's value through an opaque copy: the first descriptor
/// of an operand's k-steps, which the others advance.
Value opaqueDescriptor(OpBuilder &b, Location loc, Value base, Value offset,
                       int64_t leadingBytes);

/// The bytes from a K-major operand's first k step to k step `ks`, the
/// operand's `rows` rows in boxes of 64 elements: k steps of 16 elements
/// along a box row, then the next box.
inline int64_t kMajorStepBytes(int64_t ks, int64_t rows, int64_t elemBytes) {
  int64_t stepsPerBox = kBoxElems / kStepK;
  return (ks / stepsPerBox) * rows * kBoxRowBytes +
         (ks % stepsPerBox) * kStepK * elemBytes;
}

/// The descriptor of the operand `bytes` (a multiple of 16) past the one
/// `desc` describes: one 64-bit add to its address field. Shared addresses
/// are below 2^18, so the field (bits [17:4] of the address) never carries
/// into the others. Built from the address per k-step instead, each
/// descriptor took six uniform-datapath instructions: 24-30% of the
/// backward kernel's issued instructions.
Value advanceDescriptor(OpBuilder &b, Location loc, Value desc, int64_t bytes);

/// cp.async of `rows` rows of `cols` elements from `src.rowStart` into the
/// swizzled tile at byte `tileOffset` (index) of `smem` (a 1-D view of the
/// aligned shared memory in elements of `elemBytes`), by `threads` threads
/// (`thread` counted from the first of them); the copies' tokens are
/// appended to `tokens`. Rows at or past `src.rowLimit` are zero-filled.
void copySwizzledRows(OpBuilder &b, Location loc, const GlobalTile &src,
                      Value smem, Value tileOffset, int64_t rows, int64_t cols,
                      int64_t elemBytes, Value thread, int64_t threads,
                      SmallVectorImpl<Value> &tokens);

/// TMA of the `rows` x `cols` tile of `src` (its map, batch, head and
/// first row) into boxes of [rows][64] elements at byte `tileOffset` (i64)
/// past the shared address `base` (i64); the copies complete on mbarrier
/// `bar`, whose expected bytes the caller sets.
void copyTileByTensorMap(OpBuilder &b, Location loc, const GlobalTile &src,
                         Value base, Value tileOffset, int64_t rows,
                         int64_t cols, Value bar);

/// Orders this thread's generic-proxy writes to shared memory (st.shared,
/// cp.async) before later async-proxy reads (wgmma, TMA stores).
inline void fenceProxyAsync(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// The dynamic shared memory `raw` (only 16-byte aligned) rounded up to a
/// 1024-byte boundary, where tiles and descriptors start: the padding
/// (index) and the aligned base's shared address (i64).
struct AlignedShared {
  Value pad, address;
};
AlignedShared alignSharedBase(OpBuilder &b, Location loc, Value raw);

/// Byte `offset + scale * (i mod 2)` past the shared address `base` (i64),
/// as a shared-memory pointer: one of a pair of barriers or slots that the
/// CTA's tiles use in turn.
Value pairPointer(OpBuilder &b, Location loc, Value base, Value i,
                  int64_t offset, int64_t scale);
/// Waits for the phase of mbarrier `bar` that its use `use` (index)
/// completes; `flip` for a wait on an empty barrier, whose fresh phase
/// counts as complete (its first use passes at once).
void waitBarrierUse(OpBuilder &b, Location loc, Value bar, Value use,
                    bool flip);

/// acc = A Bᵀ, both K-major swizzled tiles at byte offsets (i64) `aTile`,
/// `bTile` from `base`, their boxes of d `aRows` and `bRows` rows apart: a
/// warpgroup's 64 rows of A against the `bRows` rows of B, one
/// m64n`bRows`k16 per 16-wide k step of `depth` (the descriptors advance 32
/// bytes inside a box row and jump to the next box every four). Issued
/// without fence or commit; returns the accumulator struct.
Value mmaKMajor(OpBuilder &b, Location loc, Value base, Type elementType,
                Value aTile, int64_t aRows, Value bTile, int64_t bRows,
                int64_t depth);

/// The byte offset, in a tile at byte `tileOffset` of 64-element swizzled
/// boxes of `boxRows` rows, of the element pair an accumulator's thread
/// holds in n8 tile `n` of `row`: column 8n + 2 quadCol, its 16-byte chunk
/// at chunk ^ (row mod 8). Eight rows x four threads of a warp cover the 32
/// banks once.
Value swizzledPairOffset(OpBuilder &b, Location loc, Value row, Value quadCol,
                         int64_t n, int64_t boxRows, int64_t elemBytes,
                         int64_t tileOffset);

/// The struct of f32 a warpgroup MMA of `n` columns accumulates in.
Type accumulatorType(MLIRContext *ctx, int64_t n);

/// `v` through an empty asm tied to it (`constraints` "=f,0" or "=r,0"):
/// LLVM cannot move its uses above, nor its definition below, this point.
Value tiedFence(OpBuilder &b, Location loc, Value v, StringRef constraints);

/// An empty asm that reads `values`: to LLVM they are live until here.
void keepAlive(OpBuilder &b, Location loc, ArrayRef<Value> values);

/// The `n / 2` values of accumulator struct `acc`, each through tiedFence:
/// LLVM sees no dependence between an MMA's results and
/// wgmma.wait_group, and must not move their uses above it.
SmallVector<Value> unpackAccumulator(OpBuilder &b, Location loc, Value acc,
                                     int64_t n);

/// acc (`n / 2` f32 values) + A B as `steps` m64n`n`k16 warpgroup MMAs, B
/// of k step ks at descriptor `descB(ks)`: A from registers (four packed i32
/// per k step, the accumulator pairs of two n8 tiles, as mma.sync's A
/// fragment), B MN-major (trans-b 1). Inline PTX: the NVVM op takes descriptors
/// only. Returns the accumulator struct; the caller commits and waits.
Value mmaRegisterA(OpBuilder &b, Location loc, Type elementType, int64_t n,
                   ArrayRef<Value> acc, ArrayRef<Value> a, int64_t steps,
                   llvm::function_ref<Value(int64_t)> descB);

/// The same with A K-major in shared memory, k step ks at `descA(ks)`.
Value mmaSharedA(OpBuilder &b, Location loc, Type elementType, int64_t n,
                 ArrayRef<Value> acc, int64_t steps,
                 llvm::function_ref<Value(int64_t)> descA,
                 llvm::function_ref<Value(int64_t)> descB);

class WgmmaStrategy : public AttentionTileStrategy {
public:
  WgmmaStrategy(const TileShape &s, Location loc, bool producerWarp,
                bool persistentGrid)
      : s(s), loc(loc),
        elemBytes(s.elementType ? s.elementType.getIntOrFloatBitWidth() / 8
                                : 2),
        producer(producerWarp), persistentGrid(persistentGrid),
        scores(1, s.blockKV / mma::kN, w), output(1, s.headDim / mma::kN, w),
        probabilitiesInShared(s.sharedP) {}

  LogicalResult verify(Location diagLoc) const override;
  int64_t threadsPerBlock() const override {
    return consumerThreads() + (producer ? producerThreads() : 0);
  }
  /// The tiles, the ring's barriers and one atom of slack: the dynamic
  /// shared array is only 16-byte aligned, and the kernel rounds its base
  /// up to 1024 bytes.
  int64_t sharedMemoryBytes() const override {
    return kAtomBytes + barriersOffset() +
           (producer
                ? (slotBarriers() * s.stages + queryBarriers()) * kBarrierBytes
                : 0) +
           (persistentGrid ? kTileRingBytes : 0);
  }
  int64_t rowAlignmentBytes() const override { return kChunkBytes; }
  /// With a producer, Q, K and V come by TMA, and O leaves by TMA, a
  /// warpgroup's 64 rows at a time (in the persistent form through a buffer
  /// of its own: the next tile's Q may be loading meanwhile).
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
  /// slot `stage`, whose full barrier then expects their bytes; with K and
  /// V apart, K on K's barrier (acquireSlot waited for K's empty one), then,
  /// once the slot's V has been released too, V on V's.
  void loadKV(OpBuilder &b, const GlobalTile &k, const GlobalTile &v,
              Value stage) override {
    if (producer && splitKV()) {
      assert(acquiring && "loadKV runs between acquireSlot and commitSlot");
      Value fullK = barrier(b, stage, /*empty=*/false);
      expectBytes(b, fullK, tileBytes(s.blockKV));
      emitTensorMapTile(b, k, stageOffset(b, stage, /*value=*/false), s.blockKV,
                        fullK);
      waitParity(b, barrier(b, acquiring, /*empty=*/true, /*value=*/true),
                 acquiring, /*flip=*/true);
      Value fullV = barrier(b, stage, /*empty=*/false, /*value=*/true);
      expectBytes(b, fullV, tileBytes(s.blockKV));
      emitTensorMapTile(b, v, stageOffset(b, stage, /*value=*/true), s.blockKV,
                        fullV);
      return;
    }
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
      if (prefetchesQuery()) {
        waitTileRing(b, tileIteration,
                     queryBarrier(b, tileIteration, /*empty=*/false),
                     /*flip=*/false);
        return;
      }
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
  void accumulatePV(OpBuilder &b, Value stage, SmallVectorImpl<Value> &acc,
                    MutableArrayRef<Value> rowSum) override {
    assert(!probabilitiesInShared && "shared_p is for overlapped P V only");
    SmallVector<Value> taken = takenProbabilities(b, Value());
    if (!rowSum.empty())
      addProbabilitySums(b, taken, rowSum);
    SmallVector<Value> values = waitPV(b, issuePV(b, stage, taken, acc));
    acc.assign(values.begin(), values.end());
  }

  bool overlapsPV() const override { return s.overlapPV; }
  /// Overlapped, the producer's ring has barriers for K and V apart.
  bool splitKV() const { return producer && overlapsPV(); }
  /// Barriers per ring slot: full and empty, for K and V apart or together.
  int64_t slotBarriers() const { return splitKV() ? 4 : 2; }

  bool hasProducer() const override { return producer; }
  /// The shared base through an empty asm: every address of the body is
  /// then computed from it where used (an immediate offset of the PTX
  /// operand). Derived from the base outside, LLVM hoisted a dozen 64-bit
  /// addresses out of the producer's loops, which its registers (24 then)
  /// could not hold (ptxas, d = 128 causal: 40 / 84 bytes of spill stores /
  /// loads, 12 / 12 with the base re-derived).
  Value enterProducerBody(OpBuilder &b) override {
    Value saved = smemAddress;
    smemAddress = tiedFence(b, smemAddress, "=l,0");
    return saved;
  }
  void leaveProducerBody(Value saved) override { smemAddress = saved; }
  Value isProducer(OpBuilder &b) override {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                 idx(b, consumerThreads()));
  }
  /// Registers are allocated per warpgroup: the producer's gives most of
  /// its share to the consumers (setmaxnreg), as FlashAttention-3 does.
  void enterRole(OpBuilder &b, bool isProducer) override {
    if (reallocatesRegisters())
      NVVM::SetMaxRegisterOp::create(
          b, loc,
          b.getI32IntegerAttr(isProducer ? producerRegisters()
                                         : consumerRegisters()),
          NVVM::SetMaxRegisterActionAttr::get(
              b.getContext(), isProducer
                                  ? NVVM::SetMaxRegisterAction::decrease
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
  /// the consumers store the current one's output, the tiles drawn from a
  /// counter (publishTile, receiveTile). The default without a mask and
  /// under a causal one.
  bool persistent() const override { return persistentGrid; }
  bool prefetchesQuery() const override {
    return persistentGrid && s.queryBuffers > 1;
  }
  /// The CTA's i-th tile: with two query buffers, it reads buffer i mod 2;
  /// with one, its load completes the barrier's phase i.
  void beginTile(OpBuilder &b, Value iteration) override {
    if (!prefetchesQuery()) {
      queryPhase = arith::IndexCastOp::create(
          b, loc, b.getI32Type(),
          arith::AndIOp::create(b, loc, iteration, idx(b, 1)));
      return;
    }
    tileIteration = iteration;
    queryRowsOffset = arith::AddIOp::create(
        b, loc, groupRowsOffset,
        arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                   queryBufferOffset(b, iteration)));
  }
  void loadQueryOfTile(OpBuilder &b, const GlobalTile &q, Value i) override;
  void publishTile(OpBuilder &b, Value i, Value tile) override;
  Value receiveTile(OpBuilder &b, Value i) override;
  /// Every consumer thread is past its last MMA on the i-th tile's query
  /// buffer: the producer may load the (i + 2)-th's into it; with one
  /// buffer, the consumers then load the next tile's.
  void releaseQuery(OpBuilder &b, Value i) override {
    if (!prefetchesQuery()) {
      NVVM::BarrierOp::create(b, loc, Type(), i32(b, kConsumerBarrier),
                              i32(b, consumerThreads()), nullptr, Value());
      return;
    }
    NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                   queryBarrier(b, i, /*empty=*/true), Value());
  }
  /// The producer's one issuing thread: the first of its warpgroup.
  Value producerIssues(OpBuilder &b) override {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                 idx(b, consumerThreads()));
  }
  void acquireSlot(OpBuilder &b, Value n) override {
    acquiring = n;
    waitParity(b, barrier(b, n, /*empty=*/true), n, /*flip=*/true);
  }
  /// loadKV's expect_tx was the slot's one arrival: nothing left to do.
  void commitSlot(OpBuilder &b, Value n) override { acquiring = {}; }
  void waitSlot(OpBuilder &b, Value n) override {
    waitParity(b, barrier(b, n, /*empty=*/false), n, /*flip=*/false);
  }
  void releaseSlot(OpBuilder &b, Value n) override {
    NVVM::MBarrierArriveOp::create(
        b, loc, Type(), barrier(b, n, /*empty=*/true, /*value=*/splitKV()),
        Value());
  }
  void waitValues(OpBuilder &b, Value n) override {
    if (splitKV())
      waitParity(b, barrier(b, n, /*empty=*/false, /*value=*/true), n,
                 /*flip=*/false);
  }
  void releaseKeys(OpBuilder &b, Value n) override {
    if (splitKV())
      NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                     barrier(b, n, /*empty=*/true), Value());
  }
  SmallVector<Value> takenProbabilities(OpBuilder &b, Value step) override;
  SmallVector<Value> zeroProbabilities(OpBuilder &b, Value step) override;
  bool sumsProbabilities() const override { return s.mmaRowSums; }
  void addProbabilitySums(OpBuilder &b, ArrayRef<Value> taken,
                          MutableArrayRef<Value> rowSum) override;
  bool takesProbabilitiesInFlight() const override {
    return probabilitiesInShared;
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
  /// all but kProducerRegisters per thread: a multiple of 8, at most
  /// kConsumerRegisters.
  /// The pool is what the CTA was launched with (the register file split
  /// evenly over its threads, rounded down to 8 per thread), not the whole
  /// file: setmaxnreg.inc waits until the registers it asks for are free,
  /// and more than the producer gave up never are (a deadlock, seen with
  /// 32 for the producer and 240 for the consumers of 384 threads).
  int64_t consumerRegisters() const {
    int64_t left = registerPool() - producerThreads() * kProducerRegisters;
    return std::min<int64_t>(kConsumerRegisters,
                             left / consumerThreads() / 8 * 8);
  }
  /// The producer keeps what the consumers leave over: 40 beside two
  /// consumer warpgroups, 32 beside three (d = 64, 160 each).
  int64_t producerRegisters() const {
    int64_t left = registerPool() - consumerThreads() * consumerRegisters();
    return std::min<int64_t>(256, left / producerThreads() / 8 * 8);
  }
  /// Whether the producer hands registers over at all: one consumer
  /// warpgroup beside it already has the most a thread can hold (255 of
  /// 256 threads' even share), and setmaxnreg may not ask for less than a
  /// warp was launched with when it increases, nor more when it decreases.
  bool reallocatesRegisters() const {
    return registerPool() / threadsPerBlock() < kConsumerRegisters;
  }
  int64_t registerPool() const {
    int64_t threads = threadsPerBlock();
    return kRegisterFile / threads / 8 * 8 * threads;
  }
  /// Byte offset of the barriers: the ring's full[stages], then its
  /// empty[stages] (with K and V apart: K's, then V's), then the query
  /// tile's.
  int64_t barriersOffset() const {
    if (probabilitiesAliasStaging())
      return std::max(outputStagingOffset() + tileBytes(s.blockQ),
                      probabilitiesOffset() + 2 * probabilityBufferBytes());
    return probabilitiesOffset() +
           (probabilitiesInShared ? 2 * probabilityBufferBytes() : 0);
  }
  /// Two P buffers in a persistent kernel with one query buffer: the first
  /// is the output's staging buffer (free between a tile's last P V and
  /// its epilogue, and again once the epilogue's TMA store read it).
  bool probabilitiesAliasStaging() const {
    return probabilitiesInShared && persistentGrid && !prefetchesQuery();
  }
  /// With P in shared memory: two buffers of the block's rows of P (in
  /// boxes as a Q tile), a step's and the one before it, after the tiles.
  int64_t probabilitiesOffset() const {
    if (probabilitiesAliasStaging())
      return outputStagingOffset();
    return tileBytes(s.blockQ) + 2 * s.stages * tileBytes(s.blockKV) +
           (persistentGrid ? tileBytes(s.blockQ) : 0) +
           (prefetchesQuery() ? tileBytes(s.blockQ) : 0);
  }
  int64_t probabilityBufferBytes() const {
    return s.blockQ * s.blockKV * elemBytes;
  }
  /// The warpgroup's own named barrier (kFirstStoreBarrier + its index):
  /// its threads meet, the other warpgroups run on.
  void syncGroup(OpBuilder &b);
  /// Stores this thread's packed pairs of P into buffer `parity` and
  /// publishes them to the warpgroup's MMAs; returns the handle issuePV
  /// reads (the byte offset of the warpgroup's rows, i64).
  SmallVector<Value> storeProbabilities(OpBuilder &b, ArrayRef<Value> pairs,
                                        Value parity);
  /// Query buffer `buffer`: the first at the base; the second (the next
  /// tile's query, loaded while this one computes) after the output's
  /// staging buffer.
  int64_t queryBufferOffset(int64_t buffer) const {
    return buffer ? outputStagingOffset() + tileBytes(s.blockQ) : 0;
  }
  /// The byte offset (index) of the CTA's i-th tile's query buffer.
  Value queryBufferOffset(OpBuilder &b, Value i) {
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, i, idx(b, 1)), idx(b, 0));
    return arith::SelectOp::create(b, loc, odd, idx(b, queryBufferOffset(1)),
                                   idx(b, queryBufferOffset(0)));
  }
  /// The query tile's full barrier; with two buffers, each one's full and
  /// empty ones.
  int64_t queryBarriers() const { return prefetchesQuery() ? 4 : 1; }
  /// Where the epilogue stages O for its TMA store: the query tile's own
  /// memory, except in the persistent form, whose next query tile may be
  /// there: a buffer of its own after the ring.
  int64_t outputStagingOffset() const {
    return persistentGrid
               ? tileBytes(s.blockQ) + 2 * s.stages * tileBytes(s.blockKV)
               : 0;
  }
  /// The full or empty barrier of ring slot `n` (!llvm.ptr<3>); with K and
  /// V apart, V's with `value`.
  Value barrier(OpBuilder &b, Value n, bool empty, bool value = false);
  Value queryBarrier(OpBuilder &b) {
    return sharedPointer(
        b,
        i64(b, barriersOffset() + slotBarriers() * s.stages * kBarrierBytes));
  }
  /// With two query buffers: the full or empty barrier of the CTA's i-th
  /// tile's buffer (i mod 2): full[2], then empty[2].
  Value queryBarrier(OpBuilder &b, Value i, bool empty) {
    return pairPointer(b, i,
                       barriersOffset() +
                           slotBarriers() * s.stages * kBarrierBytes +
                           (empty ? 2 * kBarrierBytes : 0),
                       kBarrierBytes);
  }
  /// The tile counter's ring, after the query barriers: full[2], empty[2],
  /// then the two i32 tile indices.
  static constexpr int64_t kTileRingBytes = 4 * kBarrierBytes + 2 * 4;
  int64_t tileRingOffset() const {
    return barriersOffset() +
           (slotBarriers() * s.stages + queryBarriers()) * kBarrierBytes;
  }
  /// The full or empty barrier of the tile ring's slot i mod 2, and the
  /// slot's i32 tile index.
  Value tileBarrier(OpBuilder &b, Value i, bool empty) {
    return pairPointer(b, i, tileRingOffset() + (empty ? 2 * kBarrierBytes : 0),
                       kBarrierBytes);
  }
  Value tileSlot(OpBuilder &b, Value i) {
    return pairPointer(b, i, tileRingOffset() + 4 * kBarrierBytes, 4);
  }
  /// wgmma::pairPointer past the aligned base.
  Value pairPointer(OpBuilder &b, Value i, int64_t offset, int64_t scale) {
    return wgmma::pairPointer(b, loc, smemAddress, i, offset, scale);
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
  /// The same for use i / 2 of a tile ring slot's barrier `bar`.
  void waitTileRing(OpBuilder &b, Value i, Value bar, bool flip);
  void waitUse(OpBuilder &b, Value bar, Value use, bool flip) {
    waitBarrierUse(b, loc, bar, use, flip);
  }
  void fenceProxyAsync(OpBuilder &b) { wgmma::fenceProxyAsync(b, loc); }
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
                    int64_t rows, Value thread, int64_t threads) {
    copySwizzledRows(b, loc, src, smem, tileOffset, rows, s.headDim, elemBytes,
                     thread, threads, pending);
  }
  /// An f32 accumulator of `n` columns: the struct a warpgroup MMA
  /// returns (n / 2 values per thread).
  Type accumulatorType(OpBuilder &b, int64_t n) {
    return wgmma::accumulatorType(b.getContext(), n);
  }
  SmallVector<Value> unpack(OpBuilder &b, Value acc, int64_t n) {
    return unpackAccumulator(b, loc, acc, n);
  }
  Value tiedFence(OpBuilder &b, Value v, StringRef constraints) {
    return wgmma::tiedFence(b, loc, v, constraints);
  }
  void keepAlive(OpBuilder &b, ArrayRef<Value> values) {
    wgmma::keepAlive(b, loc, values);
  }

  TileShape s;
  Location loc;
  const int64_t elemBytes;
  /// Warp-specialised: one more warpgroup loads K/V through the barrier ring.
  const bool producer;
  /// One CTA per SM walking the work tiles (needs the producer), drawn
  /// from a counter through the tile ring.
  const bool persistentGrid;
  mma::WarpCoords w;
  mma::AccumulatorTiles scores, output;

  Value tid;
  /// Persistent consumers: with one query buffer the parity of its
  /// barrier's phase for the current tile; with two, the CTA's tile index
  /// (beginTile) and the byte offset of this warpgroup's rows in that
  /// tile's query buffer.
  Value queryPhase, tileIteration, queryRowsOffset;
  /// The ring slot counter the producer is filling (between acquireSlot
  /// and commitSlot): with K and V apart, loadKV waits for V's empty
  /// barrier of its use.
  Value acquiring;
  /// This thread's warpgroup (index).
  Value group;
  /// Element view of the aligned shared memory, and its base's shared
  /// address (i64), which descriptors are built from.
  Value smem, smemAddress;
  /// Byte offset of this warpgroup's 64 query rows in the Q tile (i64).
  Value groupRowsOffset;
  SmallVector<Value> pending;
  /// Probabilities of the current step (f32): [n8 tile][element], kept
  /// unrounded until takenProbabilities, after the previous P V's wait.
  /// Rounded as they came, the packed pairs went through the loop as
  /// copies (34 more SASS instructions a step, ptxas spills). (ptxas still
  /// interleaves the roundings with the exponentials and so waits for the
  /// in-flight P V, whose A registers they write, before the first one.)
  SmallVector<std::array<Value, 4>> probs;
  /// The register A operand of the P V in flight: the MMA reads it
  /// asynchronously, but LLVM sees its last use at the issue and would hand
  /// its registers to the next step's probabilities, written while the MMA
  /// still runs (ptxas then serializes every wgmma of the kernel, C7513).
  SmallVector<Value> inFlightA;
  /// P goes through two shared-memory buffers (wgmma with A from a
  /// descriptor; flash_config's shared_p) rather than registers: a step
  /// writes the buffer the P V in flight does not read, and no register
  /// that MMA reads, so its wait can follow the step's softmax.
  bool probabilitiesInShared = false;
};

} // namespace attnc::wgmma

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_WGMMASTRATEGY_H
