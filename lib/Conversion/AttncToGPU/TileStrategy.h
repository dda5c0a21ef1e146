//===- TileStrategy.h - how an attention kernel moves and multiplies tiles ===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The flash kernel builder (FlashAttentionKernel.cpp) walks the flash form
// and decides *what* happens: which tiles, which loops, which mask. A tile
// strategy decides *how* tiles reach registers and multiply: cp.async +
// ldmatrix + mma.sync today (MmaSyncStrategy.cpp), TMA + wgmma on Hopper
// next. The score stage (ScoreStage.cpp) sits between the two and sees the
// strategy's register tiles only through AccumulatorLayout, so forward,
// backward and decode kernels share it whatever the strategy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_TILESTRATEGY_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_TILESTRATEGY_H

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/ErrorHandling.h"

#include <memory>
#include <string>

namespace attnc {

/// The box of a tensor map is `rows` x 64 elements of 16 bits: one
/// 128-byte swizzle span per row (CU_TENSOR_MAP_SWIZZLE_128B).
inline constexpr int64_t kTensorMapBoxElems = 64;
inline constexpr int64_t kTensorMapSwizzleBytes = 128;

/// The launch contract's tensor map `<tensor>.map` of a [batch, heads, seq,
/// dim] tensor read or written in tiles of `rows` rows: boxes of one
/// matrix's rows x 64 elements, a tile's d / 64 boxes side by side; rows
/// past the sequence are outside the map (zeros when read).
inline ABIParam rowTileTensorMap(const std::string &tensor, int64_t rows) {
  ABIParam p;
  p.kind = ABIParam::Kind::TensorMap;
  p.name = tensor + ".map";
  p.tensor = tensor;
  p.box = {1, 1, rows, kTensorMapBoxElems};
  p.swizzle = kTensorMapSwizzleBytes;
  p.oobFill = "zero";
  return p;
}

/// The rows of one (batch, head) matrix of a [batch, heads, seq, dim]
/// tensor in global memory that a CTA reads or writes.
struct GlobalTile {
  /// memref<?xT, 1> over the whole tensor.
  mlir::Value mem;
  /// Element offset of the (batch, head) matrix.
  mlir::Value base;
  /// Elements between consecutive rows.
  mlir::Value rowStride;
  /// First row of the tile.
  mlir::Value rowStart;
  /// Rows at or past this one do not exist: loads read zeros, stores skip.
  mlir::Value rowLimit;
  /// For strategies that read the tensor through a TMA tensor map (see
  /// tensorMapRows): the map (a generic pointer to the grid-constant
  /// CUtensorMap parameter) and the batch and head coordinates (index) of
  /// the matrix, which the map addresses instead of `base`.
  mlir::Value map, batch, head;
  /// The element type stores write, when it is not the strategy's (the f32
  /// partials of split-KV); loads ignore it.
  mlir::Type elementType;
  /// Packed GQA rows (--attnc-pack-gqa): row r of the tile is row
  /// r mod rowsPerHead of head r floordiv rowsPerHead, `headStride`
  /// elements apart. Null for plain rows.
  mlir::Value rowsPerHead, headStride;
  /// Paged K/V (attnc.paged_kv): row r lies in page `table[tableRow + (r /
  /// pageSize) * tableStride]` (clamped to `lastPage`), `pageStride`
  /// elements per page, at row r mod pageSize of it; `base` is then the
  /// head's offset within a page. Table positions are clamped to
  /// `lastEntry` (the table's last column): a tile past the sequence reads
  /// none of its rows but still names a page. `tilePage`, when set, is the
  /// page offset (page * pageStride) of every row of the tile, looked up
  /// once: a page holds whole tiles. Null for contiguous rows.
  mlir::Value pageTable, tableRow, tableStride, lastEntry, pageStride, lastPage,
      tilePage;
  int64_t pageSize = 0;
  /// When set (a tile of several pages), `pageEntries[i]` is the block
  /// table's entry (as loaded) for the tile's rows [i * pageSize, (i + 1) *
  /// pageSize), looked up ahead of the copies (pageEntryOffset).
  llvm::SmallVector<mlir::Value> pageEntries;
};

/// The element offset of row `row` (absolute in the matrix) of `tile`:
/// base + row * rowStride, for packed rows base + (row / rowsPerHead) *
/// headStride + (row mod rowsPerHead) * rowStride, for paged rows base +
/// page(row) * pageStride + (row mod pageSize) * rowStride.
mlir::Value globalRowOffset(mlir::OpBuilder &b, mlir::Location loc,
                            const GlobalTile &tile, mlir::Value row);
/// The block table's entry (as loaded) for the page holding row `row` of a
/// paged `tile`; pageEntryOffset turns it into the page's offset.
mlir::Value pageEntry(mlir::OpBuilder &b, mlir::Location loc,
                      const GlobalTile &tile, mlir::Value row);
/// The offset (page * pageStride) of the page a table entry names, clamped
/// to the pool.
mlir::Value pageEntryOffset(mlir::OpBuilder &b, mlir::Location loc,
                            const GlobalTile &tile, mlir::Value entry);
/// The offset of the page holding row `row` of a paged `tile` (page *
/// pageStride), from the block table.
mlir::Value pageOffset(mlir::OpBuilder &b, mlir::Location loc,
                       const GlobalTile &tile, mlir::Value row);

enum class RowReduction { Max, Add };

/// One thread's share of an f32 [rows x cols] tile held in registers, laid
/// out as the strategy's MMA accumulator. Values a thread holds of one row
/// form a row slot; the threads sharing a row combine their partials with
/// reduceRow.
class AccumulatorLayout {
public:
  virtual ~AccumulatorLayout() = default;
  virtual int64_t numElements() const = 0;
  virtual int64_t numRowSlots() const = 0;
  virtual int64_t rowSlot(int64_t element) const = 0;
  /// Tile-relative row of a slot and column of an element (index values).
  virtual mlir::Value slotRow(mlir::OpBuilder &b, mlir::Location loc,
                              int64_t slot) const = 0;
  virtual mlir::Value column(mlir::OpBuilder &b, mlir::Location loc,
                             int64_t element) const = 0;
  /// The same positions as a thread's base plus a constant: slotRow(slot)
  /// = rowBase + slotRowOffset(slot), column(e) = columnBase +
  /// columnOffset(e). A null base: the layout has no such form (its
  /// positions are then only what slotRow and column give).
  virtual mlir::Value rowBase(mlir::OpBuilder &, mlir::Location) const {
    return {};
  }
  virtual mlir::Value columnBase(mlir::OpBuilder &, mlir::Location) const {
    return {};
  }
  virtual int64_t slotRowOffset(int64_t) const { return 0; }
  virtual int64_t columnOffset(int64_t) const { return 0; }
  /// Elements with equal keys are in one column (their column values are
  /// built once per step, so that what a region reads per key position is
  /// loaded once per column).
  virtual int64_t columnKey(int64_t element) const { return element; }
  /// Combines a per-thread partial of a row slot over the threads that
  /// share the row; every one of them gets the result.
  virtual mlir::Value reduceRow(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value partial,
                                RowReduction kind) const = 0;
  /// True on exactly one of the threads sharing a row (it writes per-row
  /// results such as the logsumexp).
  virtual mlir::Value isRowLeader(mlir::OpBuilder &b,
                                  mlir::Location loc) const = 0;

  /// Shared memory through which a warp's threads exchange dropout's
  /// Philox words: `words` (memref<?xi32, workgroup>) from word `base` (an
  /// index: this warp's), two buffers of kDrawExchangeWords words that
  /// successive exchanges use in turn (`round` counts them), so that one
  /// warp barrier per exchange orders both its own reads after its writes
  /// and the next-but-one exchange's writes after its reads.
  struct DrawExchange {
    mlir::Value words, base;
    int64_t round = 0;
  };
  static constexpr int64_t kDrawExchangeWords = 128;
  /// Returns the four Philox words of the 8-column group starting at tile
  /// column 8 * `group` (an index value) of one row.
  using GroupWords = llvm::function_ref<llvm::SmallVector<mlir::Value, 4>(
      mlir::OpBuilder &, mlir::Value group)>;
  /// Dropout's draws of the elements of row slot `slot`, in ascending
  /// element order: per element the 32-bit word (i32) whose bits
  /// [drawShift(k), drawShift(k) + 16) are the draw of the slot's k-th
  /// element. Column 8c + i takes half i mod 2 (low first) of word i / 2
  /// of `words(c)` for the slot's row. The layout decides which thread
  /// computes which group's words and how they are shared; elements of one
  /// word share its value, so that the words, not their halves, stay live
  /// between the draw and its use.
  virtual llvm::SmallVector<mlir::Value>
  rowDraws(mlir::OpBuilder &b, mlir::Location loc, int64_t slot,
           GroupWords words, DrawExchange &exchange) const = 0;
  virtual int64_t drawShift(int64_t k) const = 0;
};

/// What a tile strategy is built for.
struct TileShape {
  int64_t blockQ, blockKV, headDim, warps, stages;
  mlir::Type elementType;
  /// The chip the kernel is compiled for.
  std::string chip;
  /// Warps that split each K/V tile's keys (FlashConfigAttr's key_warps).
  int64_t keyWarps = 1;
  /// K and V tiles take turns in one ring of `stages` single-tile buffers
  /// (FlashConfigAttr's interleave_kv; AttentionTileStrategy::kvBuffers).
  bool interleaveKV = false;
  /// P V of a step overlaps the next step's softmax (FlashConfigAttr's
  /// overlap_pv; AttentionTileStrategy::overlapsPV).
  bool overlapPV = false;
  /// An overlapped P V reads P from two shared-memory buffers
  /// (FlashConfigAttr's shared_p; warp-specialised wgmma only).
  bool sharedP = false;
  /// The row sums are taken from a P V's register P on the tensor cores
  /// (FlashConfigAttr's mma_row_sums; wgmma only).
  bool mmaRowSums = false;
  /// Query tiles a persistent kernel holds (AttentionTileStrategy::
  /// persistent): 2 lets the producer load the next tile's ahead.
  int64_t queryBuffers = 1;
};

/// Data movement and matrix products of one flash-attention kernel. Calls
/// come in kernel order: prologue, loadQuery/loadKV, wait, prepareQuery,
/// then per K/V step beginStep, computeScores, accumulatePV, and
/// storeOutput at the end.
class AttentionTileStrategy {
public:
  virtual ~AttentionTileStrategy() = default;

  /// Checks that the strategy can build this shape; diagnostic at `loc`.
  virtual mlir::LogicalResult verify(mlir::Location loc) const = 0;
  virtual int64_t threadsPerBlock() const = 0;
  virtual int64_t sharedMemoryBytes() const = 0;
  /// Alignment the rows of Q, K, V and O must have in global memory, bytes.
  virtual int64_t rowAlignmentBytes() const = 0;
  /// Rows of the TMA box through which the strategy reads `tensor` ("q",
  /// "k" or "v"), or 0 when it reads it by address. For each nonzero one
  /// the kernel takes a tensormap parameter `<tensor>.map` over the
  /// [batch, heads, seq, dim] tensor with box [1, 1, rows, 64], 128-byte
  /// swizzle and zero fill, and its GlobalTiles carry the map.
  virtual int64_t tensorMapRows(llvm::StringRef tensor) const { return 0; }

  /// Layouts of the [blockQ x blockKV] score tile and of the [blockQ x d]
  /// output accumulator. Their row slots name the same rows.
  virtual const AccumulatorLayout &scoreLayout() const = 0;
  virtual const AccumulatorLayout &outputLayout() const = 0;

  /// Thread coordinates and shared-memory views, at the kernel's start.
  virtual void emitPrologue(mlir::OpBuilder &b) = 0;
  /// Starts loading the query tile.
  virtual void loadQuery(mlir::OpBuilder &b, const GlobalTile &q) = 0;
  /// Starts loading the K and V tiles (`rowStart` of both set) into
  /// pipeline stage `stage`.
  virtual void loadKV(mlir::OpBuilder &b, const GlobalTile &k,
                      const GlobalTile &v, mlir::Value stage) = 0;
  /// Interleaved K/V loads: instead of `stages` (K, V) pairs, a ring of
  /// this many single-tile buffers that K and V tiles take in turn (load
  /// 2j is K of tile j, load 2j + 1 its V, load n in buffer n mod the
  /// ring), all but one loading while a step computes S from its K or P V
  /// from its V. Each step then waits twice, once per tile, and keeps a
  /// tile more in flight than pairs of the same shared memory; an odd ring
  /// (three buffers) fits where two pairs do not. 0: pairs.
  virtual int64_t kvBuffers() const { return 0; }
  /// With kvBuffers: starts loading one K or V tile into ring buffer
  /// `buffer`, one group (K and V tiles share the ring).
  virtual void loadRingTile(mlir::OpBuilder &b, const GlobalTile &tile,
                            mlir::Value buffer) {
    llvm_unreachable("only for strategies that interleave K and V loads");
  }
  /// Waits for every load started so far and makes it visible to the CTA;
  /// also orders the previous step's reads of a stage before its reuse.
  virtual void waitLoads(mlir::OpBuilder &b) = 0;
  /// Without a producer, with more than two stages: waits until at most the
  /// `newest` most recently started groups of loads (each loadQuery or
  /// loadKV, or commitEmptyLoads) may still be in flight, then as
  /// waitLoads. The default waits for everything.
  virtual void waitLoadsBut(mlir::OpBuilder &b, int64_t newest) {
    waitLoads(b);
  }
  /// Closes a group of no loads, so that every step starts one group and
  /// waitLoadsBut counts steps.
  virtual void commitEmptyLoads(mlir::OpBuilder &b) {}
  /// Once the query tile is resident.
  virtual void prepareQuery(mlir::OpBuilder &b) = 0;
  /// At the start of each K/V step, inside its loop.
  virtual void beginStep(mlir::OpBuilder &b) = 0;
  /// S = Q Kᵀ for the key tile in `stage`, in scoreLayout order.
  virtual llvm::SmallVector<mlir::Value> computeScores(mlir::OpBuilder &b,
                                                       mlir::Value stage) = 0;
  /// Probabilities are handed over in groups of this many consecutive
  /// score elements of one row slot (the values one packed register of
  /// the element type holds).
  virtual int64_t probabilityGroup() const = 0;
  /// Hands over the probabilities of score elements `elements` (f32) as
  /// soon as they exist, so that a strategy can round them to the element
  /// type before f32 values pile up in registers.
  virtual void takeProbabilities(mlir::OpBuilder &b,
                                 llvm::ArrayRef<int64_t> elements,
                                 llvm::ArrayRef<mlir::Value> p) = 0;
  /// acc += P V with the probabilities taken since the last call and the
  /// value tile in `stage`; `acc` in outputLayout order. Where the strategy
  /// sums the probabilities (sumsProbabilities), `rowSum` gets their sums
  /// as from addProbabilitySums; otherwise it is empty.
  virtual void accumulatePV(mlir::OpBuilder &b, mlir::Value stage,
                            llvm::SmallVectorImpl<mlir::Value> &acc,
                            llvm::MutableArrayRef<mlir::Value> rowSum) = 0;
  /// Stores the normalized output (f32, outputLayout order) to `o`.
  virtual void storeOutput(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> acc,
                           const GlobalTile &o) = 0;

  /// Key-split warps. When several warps share each query row and split
  /// every K/V tile's keys (key_warps > 1), each part's running state
  /// (values in OnlineSoftmaxState::flatten order) differs at the end of
  /// the loops; the builder merges them before the epilogue. The default
  /// has one part.
  virtual int64_t keyParts() const { return 1; }
  /// After the last step: calls `merge` with every other part's state in
  /// turn, in the layout of the calling thread's own (thread t of part 0
  /// gets the values thread t of each other part holds), each read just
  /// before its call so that one part's state at a time is live. Only part
  /// 0's result is used; the layouts' stores and row leaders are part 0's.
  using KeyPartMerge =
      llvm::function_ref<void(mlir::OpBuilder &, llvm::ArrayRef<mlir::Value>)>;
  virtual void mergeKeyParts(mlir::OpBuilder &b,
                             llvm::ArrayRef<mlir::Value> state,
                             KeyPartMerge merge) {
    llvm_unreachable("only for strategies with key-split warps");
  }

  /// Warp specialisation. A strategy with a producer has threads beyond
  /// the computing warps that only load K/V tiles, into a ring of
  /// `stages` slots guarded by barriers: tile n of the kernel's tile
  /// sequence goes to slot n mod stages. The builder emits two branches:
  /// the producer's loop over every tile (acquireSlot, loadKV, commitSlot)
  /// and the consumers' (loadQuery and waitLoads first, then per step
  /// waitSlot, the step, releaseSlot).
  virtual bool hasProducer() const { return false; }
  /// True (i1) on the producer's threads.
  virtual mlir::Value isProducer(mlir::OpBuilder &b) {
    llvm_unreachable("only for strategies with a producer");
  }
  /// At the start of a body of the producer's loops, and past its end: a
  /// strategy may re-derive its shared-memory addresses in the body, so
  /// that they are not hoisted out of the loops and kept live in the few
  /// registers the producer has. Returns what leaveProducerBody restores.
  virtual mlir::Value enterProducerBody(mlir::OpBuilder &b) { return {}; }
  virtual void leaveProducerBody(mlir::Value saved) {}
  /// At the start of each role's branch (e.g. to move registers from the
  /// producer to the consumers).
  virtual void enterRole(mlir::OpBuilder &b, bool producer) {
    llvm_unreachable("only for strategies with a producer");
  }
  /// True (i1) on the producer threads that walk the tiles, or null when
  /// all of them do (a TMA producer issues from one thread).
  virtual mlir::Value producerIssues(mlir::OpBuilder &b) { return {}; }

  /// Persistent kernels. A strategy with a producer may ask for one CTA per
  /// SM that walks the flash form's work tiles (t = CTA, then tiles drawn
  /// from a counter); the ring's slot counters then run on across tiles,
  /// so the producer loads the next tile's K/V while the consumers finish
  /// the current one. The consumers call beginTile with the tile's index i
  /// among the CTA's before waitLoads, and releaseQuery(i) once every one
  /// of them is past its last MMA on the tile.
  /// With two query buffers (prefetchesQuery) the producer's issuing
  /// thread loads the i-th tile's query (loadQueryOfTile, into buffer i
  /// mod 2) as soon as it has drawn the tile and the consumers released
  /// tile i - 2; with one, the consumers load it (loadQuery) at the end of
  /// tile i - 1, after releaseQuery.
  virtual bool persistent() const { return false; }
  virtual bool prefetchesQuery() const { return false; }
  virtual void beginTile(mlir::OpBuilder &b, mlir::Value iteration) {}
  virtual void loadQueryOfTile(mlir::OpBuilder &b, const GlobalTile &q,
                               mlir::Value i) {
    llvm_unreachable("only for strategies that prefetch the query");
  }
  virtual void releaseQuery(mlir::OpBuilder &b, mlir::Value i) {}
  /// A persistent kernel takes its tiles from a counter in global memory:
  /// the producer's issuing thread draws the tile after its i-th (index
  /// `i`) and hands it on with publishTile (before it loads the i-th's
  /// K/V); every consumer thread takes it with receiveTile at the end of
  /// its i-th. Two slots in shared memory, each with a full and an empty
  /// barrier.
  virtual void publishTile(mlir::OpBuilder &b, mlir::Value i,
                           mlir::Value tile) {
    llvm_unreachable("only for persistent strategies");
  }
  virtual mlir::Value receiveTile(mlir::OpBuilder &b, mlir::Value i) {
    llvm_unreachable("only for persistent strategies");
  }
  /// Producer: waits until slot `n` (index) is free (every consumer released
  /// the tile it held before), and after loadKV into `slotStage(n)` makes
  /// the slot's readiness wait for those loads.
  virtual void acquireSlot(mlir::OpBuilder &b, mlir::Value n) {
    llvm_unreachable("only for strategies with a producer");
  }
  virtual void commitSlot(mlir::OpBuilder &b, mlir::Value n) {
    llvm_unreachable("only for strategies with a producer");
  }
  /// Consumers, around the MMAs a step issues (S, and the pending P V): a
  /// strategy may take turns between its warpgroups here (ping-pong), so
  /// that one's softmax runs while another's MMAs do.
  virtual void beginMMAs(mlir::OpBuilder &b) {}
  virtual void endMMAs(mlir::OpBuilder &b) {}
  /// Consumers: wait until slot `n`'s tiles are resident and visible to the
  /// MMAs; release it once the step's MMAs have read them.
  virtual void waitSlot(mlir::OpBuilder &b, mlir::Value n) {
    llvm_unreachable("only for strategies with a producer");
  }
  virtual void releaseSlot(mlir::OpBuilder &b, mlir::Value n) {
    llvm_unreachable("only for strategies with a producer");
  }
  /// Overlapped with a producer, a slot's K and V may have barriers of their
  /// own: waitSlot then waits for K only, waitValues for V before the P V
  /// that reads it, releaseKeys gives K back once S has been read and
  /// releaseSlot gives back V. K of later tiles then loads while a step's
  /// V is still in use, so two stages suffice.
  virtual void waitValues(mlir::OpBuilder &b, mlir::Value n) {}
  virtual void releaseKeys(mlir::OpBuilder &b, mlir::Value n) {}

  /// Overlapped P V. A strategy whose MMAs run asynchronously may run the P V
  /// of step j on the tensor cores while step j + 1's score stage runs on
  /// the other units (FlashAttention-3's intra-warpgroup overlap). The
  /// builder then calls, per step: issueScores(stage j + 1), the rescale of
  /// acc by step j's factors, issuePV(the pending probabilities of step j,
  /// its V stage), waitScores, the score stage (which hands over step j +
  /// 1's probabilities and factors), and waitPV. A step's V tile stays in
  /// use one step longer, so the pipeline needs a third stage.
  virtual bool overlapsPV() const { return false; }
  /// The probabilities taken since the last call, made what a P V reads
  /// (as loop-carried values): rounded and packed into its A registers, or
  /// where P goes through shared memory, stored there and the buffer's
  /// handle; zeroProbabilities gives zeros the same way. Called after the
  /// previous P V was waited for (the rounding writes the registers the
  /// in-flight MMA reads) unless takesProbabilitiesInFlight. `step` is the
  /// step's tile index (with a producer, its ring slot count);
  /// zeroProbabilities' stands for the step before it.
  virtual llvm::SmallVector<mlir::Value> takenProbabilities(mlir::OpBuilder &b,
                                                            mlir::Value step) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  virtual llvm::SmallVector<mlir::Value> zeroProbabilities(mlir::OpBuilder &b,
                                                           mlir::Value step) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  /// Whether the strategy sums the probabilities, in accumulatePV or, with
  /// an overlapped P V, by addProbabilitySums on what takenProbabilities
  /// returns (and the score stage adds none to the row sums).
  virtual bool sumsProbabilities() const { return false; }
  /// rowSum[r] += the sum of row slot r's probabilities in `taken` (from
  /// takenProbabilities), whole rows: every thread of a row gets its sum.
  virtual void addProbabilitySums(mlir::OpBuilder &b,
                                  llvm::ArrayRef<mlir::Value> taken,
                                  llvm::MutableArrayRef<mlir::Value> rowSum) {
    llvm_unreachable("only where sumsProbabilities");
  }
  /// Whether takenProbabilities may run before the previous P V's wait
  /// (the probabilities do not go where that MMA reads).
  virtual bool takesProbabilitiesInFlight() const { return false; }
  /// The probabilities of a pending P V (from takenProbabilities), made
  /// ready in the registers the MMA will read, before issueScores starts
  /// the step's first product.
  virtual llvm::SmallVector<mlir::Value>
  stageProbabilities(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> probs) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  /// Starts S = Q Kᵀ for the key tile in `stage`; returns its handle.
  virtual mlir::Value issueScores(mlir::OpBuilder &b, mlir::Value stage) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  /// Starts acc + P V with `probs` (from takenProbabilities) and the value
  /// tile in `stage`; returns its handle.
  virtual mlir::Value issuePV(mlir::OpBuilder &b, mlir::Value stage,
                              llvm::ArrayRef<mlir::Value> probs,
                              llvm::ArrayRef<mlir::Value> acc) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  /// Waits until at most `inFlight` of the products started are still
  /// running (they finish in the order they started), then returns the
  /// scores (scoreLayout order) or the accumulator (outputLayout order)
  /// that `handle` names.
  virtual llvm::SmallVector<mlir::Value>
  waitScores(mlir::OpBuilder &b, mlir::Value handle, int64_t inFlight) {
    llvm_unreachable("only for strategies that overlap P V");
  }
  virtual llvm::SmallVector<mlir::Value> waitPV(mlir::OpBuilder &b,
                                                mlir::Value handle) {
    llvm_unreachable("only for strategies that overlap P V");
  }
};

/// The wgmma strategy (WgmmaStrategy.cpp).
std::unique_ptr<AttentionTileStrategy>
createWgmmaTileStrategy(const TileShape &shape, mlir::Location loc,
                        bool producerWarp, bool persistentGrid);

/// The strategy `kind` for `shape`, built with `loc` for its ops.
std::unique_ptr<AttentionTileStrategy>
createTileStrategy(TileStrategy kind, const TileShape &shape,
                   mlir::Location loc);

} // namespace attnc

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_TILESTRATEGY_H
