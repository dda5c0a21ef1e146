//===- BackwardKernelBuilder.h - the backward kernel builder ---*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The class that lowers a backward flash form to a kernel, shared by its
// files: BackwardKernelContract.cpp (configuration, launch contract, grid,
// the kernel's values of the form's leaves), BackwardKernel.cpp (data
// movement, the mma_sync products, the recomputation of P and dS, the
// loops), BackwardWgmma.cpp (the wgmma strategy's shared memory and
// products), BackwardQueryGrad.cpp (dQ's reductions) and
// BackwardPersistent.cpp (the persistent grid's tile walk).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H

#include "attnc/Conversion/KernelABI.h"

#include "BackwardForm.h"
#include "KernelValues.h"
#include "MmaFragments.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace attnc::backward_kernel {

using namespace mlir;

inline constexpr int64_t kCopyBytes = 16;
inline constexpr double kLog2e = 1.4426950408889634;
/// wgmma: dSᵀ is double-buffered, so that a step's dQ product (issued by
/// the next step) reads one buffer while that step writes the other.
inline constexpr int64_t kDsBuffers = 2;
/// wgmma: a QueryGradTarget carried from step to step, as i32: whether
/// it is one (0: none), then its tensor-map coordinates (column, row, head,
/// batch).
inline constexpr int64_t kTargetValues = 5;
/// wgmma: the loop-carried state of dQ's deferred work: the target of the
/// step whose dQ product is not yet issued, that of the step whose dQ is
/// staged but not yet added, and the count of steps so far (index; it
/// picks the buffers).
inline constexpr int64_t kPendingValues = 2 * kTargetValues + 1;
/// wgmma: dQ's staging boxes, [block_q rows][32 f32] (128 bytes a row,
/// 128-byte swizzled), as the workspace's tensor map moves them.
inline constexpr int64_t kQueryGradBoxCols = 32;
inline constexpr const char *kSizeSymbols[] = {"B", "H", "Hkv", "Sq", "Skv"};
/// Tensors with stride parameters (dims 0..2 each), in launch order.
inline constexpr const char *kStridedTensors[] = {"q",   "k",     "v",  "do",
                                                  "lse", "delta", "dk", "dv"};

class BackwardKernelBuilder {
public:
  BackwardKernelBuilder(OpBuilder &b, BackwardForm &form, StringRef name,
                        StringRef chip, KernelABI &abi)
      : b(b), form(form), loc(form.forall.getLoc()), name(name), chip(chip),
        abi(abi), values(b, loc, [this](Value v) { return leafValue(v); }) {}

  FailureOr<gpu::GPUFuncOp> build(gpu::GPUModuleOp module);

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }
  Value param(StringRef n) { return func.getArgument(paramIndex.lookup(n)); }
  /// Whether this is thread 0, which issues the CTA's TMA copies and
  /// reductions and draws its tiles (i1).
  Value isFirstThread() {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  }
  Value paramIndexValue(StringRef n) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), param(n));
  }
  LogicalResult verifyConfig();
  std::string symbolOf(Value tensor, int64_t dim) const;
  std::vector<ABIDim> shapeOf(Value tensor, int64_t rank) const;
  void planParameters();
  LogicalResult planGrid();
  /// wgmma_persistent: the grid's CTAs per SM, from the shared memory the
  /// prologue laid out and the registers the threads may take.
  void planPersistentGrid();
  FailureOr<GridFactor> gridFactor(OpFoldResult extent);
  Value extentOf(Value tensor, int64_t dim);
  FailureOr<Value> leafValue(Value v);
  FailureOr<Value> materialize(OpFoldResult v, IRMapping &scope) {
    return values.materialize(v, scope);
  }

  /// The thread's lane, quad and warp, and its warp's first key row (16
  /// per warp, with either strategy).
  void emitThreadCoords();
  void emitPrologue();
  FailureOr<GlobalTile> tileOf(OffsetSizeAndStrideOpInterface slice,
                               StringRef tensor, IRMapping &scope);
  /// cp.async of `rows` x `cols` of `src` (rows past its limit zero-filled)
  /// into `smem` ([stage] when given; mma_sync's padded rows) or, with
  /// wgmma, into the swizzled tile at byte `offset` (+ stage x its size).
  void copyTile(const GlobalTile &src, Value smem, int64_t offset, Value stage,
                int64_t rows, int64_t cols);
  void copyRowValues(const GlobalTile &src, Value smem, Value stage,
                     Value threadRow);
  /// Starts loading iteration `i` of loop `l`, the CTA's load `load` (its
  /// stage is `load mod stages`; with mma_sync `load` is `i`).
  LogicalResult loadQueryTile(BackwardQueryLoop &l, Value i, Value load,
                              IRMapping scope);
  /// wgmma: the mbarrier on which the Q and dO tiles' TMA completes; and
  /// the wait for load `load`'s.
  Value queryBarrier();
  /// wgmma: the shared-memory layout (offsets, queriesByTensorMap, the
  /// contract's dynamic bytes), before the kernel function exists; and the
  /// contract's tensor maps of q and do.
  void planWgmmaLayout();
  void planQueryTensorMaps();
  void waitQueryTiles(Value load);
  /// Starts loading the K/V tile of the forall iteration `scope` maps.
  LogicalResult loadKeyValueTile(IRMapping &scope);
  /// The query loops of one K/V tile (in the group loop, with GQA) from
  /// zeroed accumulators: dK | dV (| dQ's pending state, wgmma).
  /// `load` is the CTA's count of query tiles loaded so far (wgmma), which
  /// the result's last value continues.
  FailureOr<SmallVector<Value>> emitTileLoops(IRMapping &scope,
                                              Value load = Value());
  /// dK and dV of `acc` where the forall's inserts put them.
  LogicalResult storeKeyValueGrads(IRMapping &scope, ArrayRef<Value> acc);
  LogicalResult emitBody();
  /// wgmma_persistent (BackwardPersistent.cpp): the CTA walks the forall's
  /// iterations t = CTA, CTA + #CTAs, ... (or those it draws, drawsTiles);
  /// each tile's last step is followed by the next tile's K/V loads, then
  /// this tile's dK and dV.
  LogicalResult emitPersistentBody();
  /// `scope` with the forall's induction variables at work tile `t` (the
  /// grid's dimensions, of `extents`, linearised; see the definition).
  void mapWorkTile(Value t, ArrayRef<Value> extents, IRMapping &scope);
  /// The forall's induction variables at the CTA's block indices (one CTA
  /// per tile), in l2_group_mib's groups of heads where the config has it.
  void mapBlockIndices();
  /// Whether the grid runs longest first: a causal form's, heads on x and
  /// K/V tiles on y (the first tile of every head the longest).
  bool runsLongestFirst() const;
  /// Thread 0 draws the tile after the CTA's current one from the tile
  /// counter (the grid has `ctas` CTAs) and leaves it in `tileSlots[slot]`.
  void drawTile(Value slot, Value ctas);
  FailureOr<SmallVector<Value>>
  emitQueryLoop(BackwardQueryLoop &l, IRMapping &scope, ArrayRef<Value> acc);
  /// One step of loop `l`; with wgmma `pending` (kPendingValues values) is
  /// the state of the step before, updated to this step's. `prefetch`
  /// emits the next tile's loads, where the step places them.
  LogicalResult emitStep(BackwardQueryLoop &l, IRMapping &scope, Value stage,
                         MutableArrayRef<Value> dk, MutableArrayRef<Value> dv,
                         MutableArrayRef<Value> pending,
                         function_ref<LogicalResult()> prefetch);
  /// Rows x (k 16-wide steps) products of the warp's 16 keys with
  /// `blockQ` rows of `rowsSmem` (both operands non-transposed): Sᵀ or dPᵀ.
  SmallVector<mma::FragC> keyRowProducts(Value keysSmem, Value rowsSmem,
                                         Value stage, int64_t depth);
  /// acc[16 keys x width] += A (packed Pᵀ or dSᵀ pairs) x rows of `smem`.
  void accumulateKeyRows(ArrayRef<std::array<Value, 2>> packed, Value smem,
                         Value stage, int64_t width,
                         MutableArrayRef<Value> acc);
  LogicalResult emitQueryGrad(BackwardQueryLoop &l, IRMapping &scope);
  /// P of one step from Sᵀ (accumulator tiles of the warp's 16 keys x
  /// block_q queries), packed in pairs (the A fragments of dV's product),
  /// and per element the factor of dS = factor x (dPᵀ - delta): c P, times
  /// the score modifier's derivative.
  /// The thread's values of a row statistic (the logsumexp's exponents or
  /// delta) of `stage` in n8 tiles [first, first + count): its query
  /// columns, in accumulator order.
  SmallVector<Value> loadRowValues(Value smem, Value stage, int64_t first,
                                   int64_t count);
  /// Rewrites the loaded logsumexp of `stage` in place as exp2's exponent
  /// -log2(e) lse (-inf stays), each row by the thread that loaded it,
  /// before the barrier that publishes the tile.
  void emitLogsumexpExponents(Value stage);
  /// `nlse2s`: those exponents (loadRowValues of every tile), or none to
  /// load them tile by tile where they are used.
  LogicalResult
  emitProbabilities(BackwardQueryLoop &l, IRMapping &scope, Value stage,
                    ArrayRef<Value> nlse2s, ArrayRef<mma::FragC> sT,
                    SmallVectorImpl<std::array<Value, 2>> &pPacked,
                    SmallVectorImpl<Value> &factors);
  /// dS from the factors and dPᵀ, packed in pairs (dK's A fragments);
  /// `deltas` as emitProbabilities' `nlse2s`.
  void emitScoreGrads(Value stage, ArrayRef<Value> deltas,
                      ArrayRef<Value> factors, ArrayRef<mma::FragC> dpT,
                      SmallVectorImpl<std::array<Value, 2>> &dsPacked);
  /// Where the IR adds a query tile's dQ in the contiguous [B, H, Sq, d]
  /// f32 workspace: the element offset of the tile's first row and column,
  /// the tile's rows inside the sequence (index), the first column when it
  /// is a constant; and (wgmma) the same as kTargetValues i32 values.
  struct QueryGradTarget {
    Value start, rows;
    std::optional<int64_t> constantCol;
    SmallVector<Value> carried;
  };
  FailureOr<QueryGradTarget> queryGradTarget(BackwardQueryLoop &l,
                                             IRMapping &scope);
  /// Adds `c`, the n8 tiles of dQ's rows 16 slab .. 16 slab + 15 and columns
  /// col0 .., to `target` by the threads' reductions.
  LogicalResult addQueryGrad(const QueryGradTarget &target,
                             ArrayRef<mma::FragC> c, Value slab, Value col0);
  /// wgmma: stores `c` (as addQueryGrad's; columns col0.. of the tile)
  /// into the staging boxes of (`buffer`, `partial`) at dqOffset,
  /// [kDsBuffers][dqPartials][d / 32 boxes][block_q][32] f32, swizzled as
  /// the workspace's tensor map reads them (unfenced: the caller fences
  /// into the async proxy before the barrier that publishes them).
  void stageQueryGrad(ArrayRef<mma::FragC> c, Value slab, Value col0,
                      Value buffer, Value partial);
  /// Thread 0 adds the staged boxes of `buffer` (published by a barrier
  /// since) to the target of `carried` (kTargetValues) by one TMA
  /// reduction each.
  void issueQueryGradReduce(ValueRange carried, Value buffer);

  // The wgmma strategy (BackwardWgmma.cpp).
  void emitWgmmaPrologue();
  LogicalResult emitWgmmaStep(BackwardQueryLoop &l, IRMapping &scope,
                              Value stage, MutableArrayRef<Value> dk,
                              MutableArrayRef<Value> dvAcc,
                              MutableArrayRef<Value> pending,
                              function_ref<LogicalResult()> prefetch);
  Value issueQueryGradProduct(Value base, Value dsTile);
  void finishQueryGrad(Value dq, Value counter);
  /// The byte offset (i64) of the dSᵀ buffer of step `counter`.
  Value dsTileOf(Value counter);
  /// After the last step: its dQ product and addition.
  void flushQueryGrad(ArrayRef<Value> pending);
  /// The byte offset (i64) of tile `first` + stage x `bytes`.
  Value tileOffset(int64_t first, Value stage, int64_t bytes);
  Value issueKeyRowProducts(Value base, int64_t keysOffset, Value rowsTile,
                            int64_t depth);

  OpBuilder &b;
  BackwardForm &form;
  Location loc;
  StringRef name;
  StringRef chip;
  KernelABI &abi;
  KernelValues values;

  gpu::GPUFuncOp func;
  llvm::StringMap<unsigned> paramIndex;
  llvm::StringMap<Value> globalMem;
  SmallVector<unsigned> gridDims;
  IRMapping prologue;
  int64_t blockQ = 0, blockKV = 0, warps = 0, stages = 0, d = 0, dv = 0;
  int64_t elemBytes = 0; // of the element type
  int64_t rowElems = 0, rowElemsV = 0, dsRowElems = 0;
  mma::WarpCoords w;
  Value warp;
  Value kSmem, vSmem, qSmem, doSmem, dsSmem, lseSmem, deltaSmem;
  Value seqQ, seqKV;
  /// wgmma: tiles in 128-byte-swizzled boxes from a 1024-byte-aligned base
  /// (`tiles`, a 1-D element view; `smemAddress`, its shared address), at
  /// these byte offsets; the thread's warpgroup.
  bool wgmma = false;
  /// wgmma_persistent: one CTA per SM walks the forall's iterations.
  bool persistent = false;
  /// wgmma_persistent on a longest-first grid: the CTAs draw their tiles
  /// from a counter (the kTileCounterName workspace), thread 0 leaving each
  /// in `tileSlots` (two i32 in shared memory) for the others.
  bool drawsTiles = false;
  Value tileSlots;
  Value tiles, smemAddress, group;
  int64_t kOffset = 0, vOffset = 0, qOffset = 0, doOffset = 0, dsOffset = 0;
  /// wgmma: dQ's tiles are staged at byte dqOffset (1024-aligned),
  /// `dqPartials` per buffer (one per warpgroup when each adds its own
  /// keys' share, one when they split its columns or rows), and added to the
  /// workspace by TMA reductions after the next barrier.
  int64_t dqOffset = 0, dqPartials = 1;
  /// wgmma: the query tiles' mbarrier (8 bytes) at this byte offset, when
  /// Q and dO come by TMA (queriesByTensorMap; else by cp.async).
  int64_t queryBarrierOffset = 0, lseOffset = 0, deltaOffset = 0,
          slotsOffset = 0;
  bool queriesByTensorMap = false;
  /// wgmma: how the warpgroups share dQ = dS K: each its own keys' share of
  /// the whole tile (one warpgroup, or two at d = 64 with 64-row query
  /// tiles), or two over all keys, each a box of d's columns (d = 128) or
  /// 64 of block_q = 128's rows (d = 64).
  enum class QueryGradSplit { OwnKeys, Columns, Rows };
  QueryGradSplit dqSplit = QueryGradSplit::OwnKeys;
  /// wgmma: dQ's columns per warpgroup.
  int64_t dqCols = 0;
  Value scale; // c = scale x run-time scale, f32
  std::string runtimeScaleParamName;
};

} // namespace attnc::backward_kernel

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H
