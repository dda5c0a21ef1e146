//===- FlashKernelBuilder.h - the flash kernel builder's state ---*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The class that lowers one flash form to a kernel, shared by its
// implementation files: FlashAttentionKernel.cpp (contract, loops, score
// stage), FlashKernelEpilogue.cpp (O and the logsumexp), FlashKernelTiles.cpp
// (the work tiles and the threads' roles) and FlashKernelValues.cpp (index
// values of the form rebuilt in the kernel, region bodies, tile addresses) and
// FlashKernelIdBounds.cpp (tile bounds from ids per position).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHKERNELBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHKERNELBUILDER_H

#include "attnc/Conversion/KernelABI.h"

#include "FlashForm.h"
#include "KernelValues.h"
#include "ScoreStage.h"
#include "TileStrategy.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <vector>

namespace attnc::flash_kernel {

using namespace mlir;

/// Size parameters in launch order (those that some shape leaves dynamic).
inline constexpr const char *kSizeSymbols[] = {"B",  "H",  "Hkv", "Sq", "Skv",
                                               "NB", "MB", "T",   "Tk"};
/// A ragged batch's packed Q [T, H, d] and K/V [Tk, Hkv, d].
inline constexpr const char *kRaggedQuerySymbols[] = {"T", "H"};
inline constexpr const char *kRaggedKeySymbols[] = {"Tk", "Hkv"};
/// A paged cache's pool [NB, page_size, Hkv, d] and block table [B, MB].
inline constexpr const char *kPoolSymbols[] = {"NB", "", "Hkv"};
inline constexpr const char *kTableSymbols[] = {"B", "MB"};
/// Tensors with stride parameters (dims 0..2 each), in launch order.
inline constexpr const char *kStridedTensors[] = {"q", "k", "v", "o"};
inline constexpr int64_t kStridedDims = 3;
/// The size symbol of the split count of a split-KV partial form.
inline constexpr const char *kSplitSymbol = "splits";
/// attnc.kv_split_count's largest value.
inline constexpr int64_t kMaxSplits = 128;

class FlashKernelBuilder {
public:
  FlashKernelBuilder(OpBuilder &b, FlashForm &form, StringRef name,
                     StringRef chip, bool gridDependency, KernelABI &abi)
      : b(b), form(form), loc(form.forall.getLoc()), name(name), chip(chip),
        gridDependency(gridDependency), abi(abi),
        values(b, loc, [this](Value v) { return leafValue(v); }) {}

  FailureOr<gpu::GPUFuncOp> build(gpu::GPUModuleOp module);

private:
  // Contract.
  std::string symbolOf(Value tensor, int64_t dim) const;
  std::vector<ABIDim> shapeOf(Value tensor, ArrayRef<int64_t> dims) const;
  /// The kernel's launch contract (`abi`): its parameters, grid, the
  /// attrs users and the cost model read (`queryBuffers`: the query tiles
  /// a persistent CTA holds), the runtime's size constraints and a split
  /// form's size rule.
  LogicalResult planContract(int64_t queryBuffers);
  void planParameters();
  LogicalResult planGrid();
  /// The size rule of the split count of a partial form (the host's
  /// evaluation of its attnc.kv_split_count).
  LogicalResult planSplitRule();
  FailureOr<std::vector<GridFactor>> gridFactor(OpFoldResult extent);
  /// Split-KV partial forms write f32 partials with a split dimension in
  /// front, under their own names.
  bool isPartial() const { return static_cast<bool>(form.splitIndex); }
  std::string outName() const { return isPartial() ? "o_partial" : "o"; }
  std::string lseName() const { return isPartial() ? "lse_partial" : "lse"; }

  // Kernel values.
  Value param(StringRef n) { return func.getArgument(paramIndex.lookup(n)); }
  Value paramIndexValue(StringRef n) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), param(n));
  }
  /// Extent `dim` (0-2) of Q, K or V in the kernel: a constant when static,
  /// else its size parameter.
  Value extentOf(Value tensor, int64_t dim) {
    // A paged cache's view: [B, Hkv, MB * page_size] of its table and pool.
    if (form.keyPages && (tensor == form.key || tensor == form.value))
      return pagedExtent(dim);
    // A packed form's Q view: [B, Hkv, G * Sq].
    if (tensor == form.query && form.packedSource && dim > 0)
      return dim == 1 ? extentOf(form.key, 1)
                      : arith::MulIOp::create(b, loc, groupSize(),
                                              extentOf(form.packedSource, 2))
                            .getResult();
    if (tensor == form.query && form.packedSource)
      tensor = form.packedSource;
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(dim))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
    return paramIndexValue(symbolOf(tensor, dim));
  }
  /// Extent `dim` (0-2) of the view of a paged cache.
  Value pagedExtent(int64_t dim);
  /// The element of block tensor `bt` at kernel `indices` (its parameter's
  /// strides), positions clamped into their extents.
  Value loadElement(const BlockTensor &bt, ArrayRef<Value> indices);
  /// Extent `dim` of `type`: a constant, or size parameter `symbol`.
  Value extentOrParam(RankedTensorType type, int64_t dim, StringRef symbol) {
    if (!type.isDynamicDim(dim))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
    return paramIndexValue(symbol);
  }
  /// Paged caches: the page lookup of `tile`, a K or V tile of `batch`
  /// (see GlobalTile).
  void pageRows(GlobalTile &tile, StringRef tensor, Value batch);
  FailureOr<Value> leafValue(Value v);
  FailureOr<Value> materialize(Value v, IRMapping &scope) {
    return values.materialize(v, scope);
  }
  FailureOr<Value> materialize(OpFoldResult v, IRMapping &scope) {
    return values.materialize(v, scope);
  }
  /// Per step: a score modifier's position expressions converted to f32
  /// once per thread (positionToFloat), by form, and their products with
  /// block-uniform factors.
  using PositionFloats = std::map<std::vector<intptr_t>, Value>;
  Value positionToFloat(PositionFloats &floats, const ScoreStage::Position &at,
                        Value iArg, Value jArg, Region &score, Value q0,
                        Value k0, IRMapping &scope, arith::SIToFPOp cast,
                        Value factor);
  FailureOr<Value> cloneRegion(Region &r, ArrayRef<Value> args,
                               IRMapping &scope, Value result = {},
                               KernelValues::ConvertFn convert = {}) {
    return values.cloneRegion(r, args, scope, result, convert);
  }
  /// The K (`key`) or V tile of iteration `tile` of loop `l`, rows past
  /// the sequence (or a ragged batch's) limited; paged, with `pageEntries`
  /// (lookUpPages) when given.
  FailureOr<GlobalTile> kvTile(FlashKVLoop &l, bool key, Value tile,
                               ArrayRef<Value> pageEntries = {});
  /// The block table's entries for the pages of iteration `tile` +
  /// `ahead`'s K/V rows when they span several pages that the copies look
  /// up per page (GlobalTile::pageEntries); none otherwise. A step reads
  /// them for the tiles it will load before it waits, so their latency
  /// hides behind the wait instead of delaying the copies.
  SmallVector<Value> lookUpPages(FlashKVLoop &l, Value tile, int64_t ahead = 0);
  LogicalResult loadKVTiles(FlashKVLoop &l, Value tile, Value stage = {},
                            ArrayRef<Value> pageEntries = {});
  /// The ring buffer of load 2 * `tile` + `ahead` (interleaved K/V loads).
  Value ringBuffer(Value tile, int64_t ahead);
  LogicalResult prefetchKVTiles(FlashKVLoop &l, Value tile, Value end,
                                ArrayRef<Value> pageEntries = {});
  /// Interleaved K/V loads (AttentionTileStrategy::kvBuffers): starts load
  /// 2 * `tile` + `ahead` of the ring (K of a tile, then its V), or closes
  /// an empty group when its tile is not before `end`.
  LogicalResult loadInterleaved(FlashKVLoop &l, Value tile, int64_t ahead,
                                Value end, ArrayRef<Value> pageEntries = {});
  /// K/V tiles (or with interleaved loads, single tiles) a step of a kernel
  /// without a producer loads ahead: all stages (buffers) but the one it
  /// computes, or one when P V overlaps the next step (its V stage stays
  /// in use a step longer).
  int64_t loadsAhead() const {
    if (int64_t ring = strategy->kvBuffers())
      return ring - 1;
    return strategy->overlapsPV() ? 1 : form.config.getStages() - 1;
  }
  LogicalResult startKVPipeline(FlashKVLoop &l, Value first, Value end);
  FailureOr<GlobalTile> tileOf(tensor::ExtractSliceOp slice, StringRef tensor,
                               IRMapping &scope);
  /// The (batch, head) matrix a slice or insert names: its element offset
  /// and its batch and head indices (what a tensor map addresses).
  struct Matrix {
    Value base, batch, head;
  };
  FailureOr<Matrix> matrixOf(OffsetSizeAndStrideOpInterface slice,
                             StringRef tensor, IRMapping &scope);

  // Kernel body.
  /// The bounds of the K/V loops, in the kernel.
  struct LoopBounds {
    SmallVector<Value> lbs, ubs;
  };
  /// What a work tile (one iteration of the forall) needs before its
  /// loops: its query tile and the bounds of its K/V loops.
  struct TileValues {
    GlobalTile q;
    LoopBounds bounds;
    /// Whether prepareTile started loading the query tile (before the id
    /// bounds, when the form has some).
    bool queryLoaded = false;
  };
  FailureOr<TileValues> prepareTile();
  /// The elements the regions read once per block (form.blockReads), at
  /// the block indices `prologue` maps, into `prologue`.
  LogicalResult loadBlockReads();
  /// Which threads compute a tile's id bounds: every thread of the block
  /// (before its threads split into roles), or in a persistent block the
  /// producer warpgroup's warps beside its issuing one, which run a tile
  /// ahead of the others and hand the bounds on through the exchange.
  enum class IdBoundsThreads { Block, ProducerHelpers };
  /// The form's attnc.id_tile_bounds, computed by `who`
  /// (FlashKernelIdBounds.cpp); their results go into `prologue`.
  LogicalResult emitIdBounds(IdBoundsThreads who = IdBoundsThreads::Block);
  /// A persistent kernel's id bounds as index words, kIdBoundsWords per
  /// op: its four results (as emitIdBounds mapped them), then its runs'
  /// exact (0 or 1), first and last keys and split (IdRun); the inverse
  /// maps them into
  /// `prologue` and idRuns; zeros where a CTA has no next tile.
  static constexpr int64_t kIdBoundsWords = 10;
  SmallVector<Value> idBoundsWords();
  void mapIdBoundsWords(ValueRange words);
  SmallVector<Value> noIdBoundsWords();
  /// The exchange that hands the id bounds of the CTA's i-th tile from the
  /// producer's helper warps to its issuing thread and to every consumer
  /// thread: two slots of words past the id bounds' scratch, each with a
  /// full mbarrier (one arrival: the helper that writes the slot) and an
  /// empty one (an arrival from each reader), set up by initIdExchange
  /// behind a CTA barrier. publishIdBounds is called by every helper (the
  /// first writes), receiveIdBounds by every reader.
  int64_t idExchangeOffset() const;
  int64_t idExchangeBytes() const;
  Value idExchangeBase();
  /// The exchange's two slots of words (i32), past its barriers.
  Value idExchangeSlots();
  void initIdExchange();
  /// The first of the producer's helper warps' threads, and their named
  /// barrier.
  int64_t idHelperFirstThread() const;
  void syncIdHelpers();
  /// Slot i mod 2's full or empty mbarrier, and a wait for the CTA's i-th
  /// tile's phase on it.
  Value idSlotBarrier(Value i, bool empty);
  void waitIdSlot(Value i, bool empty);
  /// A slot: the CTA's i-th tile (past the grid's end after its last), then
  /// the tile's words.
  int64_t idSlotWords() const;
  void publishIdBounds(Value i, Value tile, ValueRange words);
  /// The tile of slot i (waits for it; no arrival: receiveIdBounds follows).
  Value receiveIdTile(Value i);
  SmallVector<Value> receiveIdBounds(Value i);
  /// The helpers' tile after the CTA's i-th, drawn by the first of them
  /// from the counter and shared among them behind their named barrier.
  Value drawIdTile(Value i);
  /// What emitIdBounds learns of each attnc.id_tile_bounds beside its
  /// results, for the current tile: whether the query tile's rows are one
  /// block of rows with its least id then (where it has two) one block with
  /// its greatest, and the keys looked at with each of the two ids are one
  /// run (`exact`, i1); the first and last key of the least id's run and of
  /// the greatest's, and the first row of the greatest id's block, `split`
  /// (i32; the rows where the tile has one id). Where `exact` holds, the
  /// id match is a key interval per row, [first, last] for the rows before
  /// `split` and [lastFirst, lastLast] after, which the masked steps test
  /// instead of comparing ids per score (maskByKeyInterval): a query tile
  /// inside one packed document or across two.
  struct IdRun {
    Value exact, first, last, lastFirst, lastLast, split;
  };
  SmallVector<IdRun> idRuns;
  /// The shared memory the block reduces them through, past the strategy's.
  int64_t idBoundsScratchOffset() const;
  int64_t idBoundsScratchBytes() const;
  /// Dropout's word exchange (AccumulatorLayout::DrawExchange): two buffers
  /// per warp past the id bounds' scratch.
  int64_t drawExchangeOffset() const;
  int64_t drawExchangeBytes() const;
  /// This warp's view of the exchange, at the builder's position.
  AccumulatorLayout::DrawExchange makeDrawExchange();
  /// `bytes` of dynamic shared memory from `offset` as i32 words.
  Value sharedWords(int64_t offset, int64_t bytes);
  /// The scalar parameter of a dropout seed or offset argument.
  ABIParam dropoutParam(Value v) const;
  LogicalResult emitBody();
  LogicalResult emitPersistentBody();
  /// With `issuing`, the guard of the producer's issuing thread has an
  /// else branch (its other threads), returned there.
  scf::IfOp enterProducer(scf::IfOp *issuing = nullptr);
  void enterConsumers(scf::IfOp roles);
  void mapWorkTile(Value t);
  /// Maps the forall's induction variables to block indices (one block
  /// per tile): the grid dimensions, or the groups of l2_group_mib.
  LogicalResult mapBlockIndices();
  /// A ragged batch's grid: its sequences' query tiles one after another
  /// (ceil(T / block_q) + B blocks) where the factors can say so; sets
  /// compactRaggedGrid.
  void planRaggedGrid();
  /// On that grid, maps the forall's induction variables to the block's
  /// (sequence, head, query tile); returns whether the block has a tile
  /// (null on failure).
  Value mapRaggedBlockIndices();
  /// Where the compact grid's search has more than one round of
  /// `perRound` sequences: the block's warps count a group of rounds at
  /// once (`roundTiles` of a round's first sequence: its tiles, in every
  /// lane), meeting at a CTA barrier, until the group holding tile `c`.
  /// Returns the round to search from and the tiles before it (0, 0 for
  /// one round).
  std::pair<Value, Value> skipRounds(Value sequences, Value c, int64_t perRound,
                                     function_ref<Value(Value)> roundTiles);
  /// The search's shared words (two a warp) past the id bounds' scratch;
  /// none without a compact ragged grid.
  int64_t raggedSearchBytes() const;
  int64_t raggedSearchOffset() const {
    return idBoundsScratchOffset() + idBoundsScratchBytes();
  }
  /// True when the forall's grid runs longest first (a causal mask): batch
  /// on z, heads on x, query tiles (counted down) on y.
  bool runsLongestFirst() const {
    return ArrayRef<unsigned>(gridDims) == ArrayRef<unsigned>{2, 0, 1};
  }
  /// The l2_group_mib of the forall's own config: a fallback lowers the
  /// same grid in the same order.
  int64_t l2GroupMib() const {
    auto top =
        form.forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
    return top ? top.getL2GroupMib() : 0;
  }
  /// The next work tile of the producer's i-th, drawn from the counter and
  /// handed to the consumers.
  Value drawTile(Value i);
  /// The tile after the producer's i-th as the id bounds' helpers drew
  /// it, handed to the consumers.
  Value takeIdTile(Value i);
  /// The producer's K/V loops; returns the slot counter after them.
  FailureOr<Value> emitProducerLoops(const LoopBounds &bounds, Value slot);
  /// The computing threads' part of one work tile. With a producer, `slot`
  /// counts the ring's tiles consumed before (in) and after (out) it.
  /// `beforeEpilogue` runs once the tile's last MMA is done.
  LogicalResult
  emitConsumer(const LoopBounds &bounds, Value &slot,
               function_ref<LogicalResult()> beforeEpilogue = nullptr);
  FailureOr<Value> beginKVStep(FlashKVLoop &l, Value j, Value n,
                               Value chainEnd);
  FailureOr<OnlineSoftmaxState>
  emitFirstStep(size_t k, size_t end, const LoopBounds &bounds, Value chainEnd,
                const OnlineSoftmaxState &init, Value &slot, Value &which);
  /// `afterPeel`: the loop follows its tile's peeled first step
  /// (emitFirstStep), so each of its steps has a previous one.
  FailureOr<OnlineSoftmaxState>
  emitKVLoop(FlashKVLoop &l, Value lb, Value ub, Value chainEnd, bool bounds,
             bool afterPeel, const OnlineSoftmaxState &init, Value &slot);
  LogicalResult finishScores(FlashKVLoop &l, IRMapping &scope, bool bounds,
                             Value scores, int64_t inFlight, Value n,
                             OnlineSoftmaxState &st,
                             SmallVectorImpl<Value> &alphas);
  FailureOr<SmallVector<SmallVector<Value>>> drawDropout(FlashKVLoop &l,
                                                         IRMapping &scope);
  LogicalResult emitScoreStage(FlashKVLoop &l, IRMapping &scope, bool bounds,
                               SmallVectorImpl<Value> &s);
  /// Masks `s` by key interval when the step's mask is one (see the
  /// definition); false when it is not (nothing emitted).
  FailureOr<bool> maskByKeyInterval(OnlineAttentionOp step, IRMapping &scope,
                                    bool bounds, Value batch, Value head,
                                    Value q0, Value k0,
                                    SmallVectorImpl<Value> &s);
  LogicalResult emitEpilogue(OnlineSoftmaxState &st);
  LogicalResult emitPartialEpilogue(ArrayRef<Value> acc, ArrayRef<Value> lse);
  void storeRowValues(ArrayRef<Value> values, const GlobalTile &to, Value q0,
                      Value end);
  /// Packed GQA forms: `tile`'s rows are Sq rows per query head, heads
  /// `headStride` (a stride parameter) apart. Nothing otherwise.
  void packRows(GlobalTile &tile, StringRef headStride) {
    if (!form.packedSource)
      return;
    tile.rowsPerHead = extentOf(form.packedSource, 2);
    tile.headStride = paramIndexValue(headStride);
  }
  /// Packed GQA forms: the query heads of a K/V group, G (static).
  Value groupSize() {
    return arith::ConstantIndexOp::create(b, loc, form.packedGroup);
  }
  /// For a strategy that overlaps P V with the next step: an empty pending
  /// P V against the V stage of `tile`, and the pending P V done.
  void resetPending(OnlineSoftmaxState &st, Value tile);
  /// `steps` (with a producer): the steps run, the P V skipped when none.
  void flushPending(OnlineSoftmaxState &st, Value steps = {});
  /// The step's probabilities made what its P V reads
  /// (takenProbabilities), and added to the row sums where the strategy
  /// sums them.
  SmallVector<Value> takeProbabilities(OnlineSoftmaxState &st, Value tile);

  OpBuilder &b;
  FlashForm &form;
  Location loc;
  StringRef name;
  StringRef chip;
  bool gridDependency; // the chip has griddepcontrol
  KernelABI &abi;
  KernelValues values;

  gpu::GPUFuncOp func;
  llvm::StringMap<unsigned> paramIndex;
  /// Where each forall dimension goes on the grid (0 = x).
  SmallVector<unsigned> gridDims;
  /// Whether a ragged batch runs on its compact grid (planRaggedGrid).
  bool compactRaggedGrid = false;
  std::unique_ptr<AttentionTileStrategy> strategy;
  std::unique_ptr<ScoreStage> scoreStage;
  /// Whether the score stage folds the modifier's last positive factor
  /// (ScoreScaling::modifierFactor): the modifier then stops before it.
  bool foldsModifierFactor = false;
  /// Values of the forall body, rebuilt in the kernel's prologue.
  IRMapping prologue;
  /// The matrices of the K/V slices whose (batch, head) does not depend on
  /// their loop, computed in the prologue.
  DenseMap<Operation *, Matrix> invariantMatrices;
  /// memref views of the tensor parameters, built once.
  llvm::StringMap<Value> globalMem;
  /// Sequence extents (rows that exist) of Q and of K/V.
  Value seqQ, seqKV;
  /// The loads of one step's per-score reads, by tensor and kernel
  /// indices: a row's or a column's value is loaded once per step.
  std::map<SmallVector<const void *>, Value> elementCache;
  std::optional<AccumulatorLayout::DrawExchange> drawExchange;
  /// Persistent kernels: the forall's extents, in the kernel, and the
  /// number of CTAs (the grid's size).
  SmallVector<Value> tileExtents;
  Value workCTAs;
};

} // namespace attnc::flash_kernel

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHKERNELBUILDER_H
