//===- FlashFormBuilder.h - the builder of a flash form -----------*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The builder --attnc-online-softmax uses for the loop nest of one
// attnc.attention (OnlineSoftmax.cpp), and its parts for sequences read
// per block: per-sequence lengths, the reads of mask and score regions and
// ragged batches (FlashFormSequences.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHFORMBUILDER_H
#define ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHFORMBUILDER_H

#include "attnc/Dialect/Attnc/IR/AttentionMask.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace attnc::flash_form {

using namespace mlir;

/// The extents of one attention op, computed once before the parallel loop.
/// Each is a constant where any operand (or the result) has it static and a
/// `tensor.dim` otherwise, so that static shapes fold all the way down.
struct AttentionExtents {
  OpFoldResult batch, heads, seqQ, headsKV, seqKV;
  /// Value head dimension (static, by the verifier).
  int64_t headDimV;
};

/// A ragged batch's extents: B from the sequences' starts, H and T from the
/// packed Q, Hkv and Tk from the packed K.
AttentionExtents getRaggedExtents(OpBuilder &b, AttentionOp op, RaggedViewOp q,
                                  RaggedViewOp k, RaggedViewOp v);

/// True when the keys a query row may see start at the first key (or where
/// id matches say) and end at a bound that grows with the query (causal,
/// prefix-LM, documents under a causal mask): a later query tile may visit
/// more K/V tiles, an earlier one never more than its bound, so a grid
/// ordered by that bound, longest first, ends with short tiles.
bool boundGrowsWithQuery(const KeyInterval &interval, MLIRContext *ctx);

/// The recurrence state (acc, max, sum) carried across K/V tiles.
struct RecurrenceState {
  Value acc, max, sum;
};

/// Builds the flash form of one `attnc.attention` in front of it. The
/// extents and tile sizes are members so that the pieces of the loop nest
/// (one method each) read like the IR they emit.
class FlashFormBuilder {
public:
  FlashFormBuilder(RewriterBase &rewriter, AttentionOp op,
                   FlashConfigAttr config)
      : b(rewriter), op(op), loc(op.getLoc()),
        config(config), tiles{config.getBlockQ(), config.getBlockKV()},
        causal(op.getCausalMask()) {
    if (!causal)
      interval = analyzeKeyInterval(op.getMask());
  }

  /// Emits the loop nest; returns the forall whose results are O and the
  /// logsumexp.
  scf::ForallOp build();

private:
  /// `h floordiv (H / Hkv)`: the K/V head query head `h` reads (GQA/MQA).
  Value getKVHead(Value head);
  /// The K/V tile counts of a causal query tile; see the definition.
  std::pair<OpFoldResult, OpFoldResult> getCausalTileCounts();
  /// The K/V tile bounds of a query tile under an interval mask; see the
  /// definition.
  std::array<OpFoldResult, 4> getIntervalTileBounds();
  /// `bounds` ({first, full, fullEnd, end}, as getIntervalTileBounds
  /// returns them) intersected with the tiles the interval's id matches let
  /// the query tile see, one attnc.id_tile_bounds each.
  std::array<OpFoldResult, 4> boundByIds(std::array<OpFoldResult, 4> bounds);
  /// `bound` for query row `row` (the bound's d0).
  OpFoldResult evaluate(const KeyBound &bound, OpFoldResult row);
  /// `scf.for %j = lb to ub` over K/V tiles, each step one
  /// `attnc.online_attention` (with the op's mask iff `masked`), carrying
  /// `init`. With `tileOf`, %j counts visits and the step's tile is
  /// `tileOf(%j)`; with `wholeTiles`, every tile holds block_kv keys (a
  /// static extent).
  RecurrenceState
  buildKVLoop(OpFoldResult lb, OpFoldResult ub, bool masked,
              RecurrenceState init,
              function_ref<Value(OpBuilder &, Value)> tileOf = nullptr,
              bool wholeTiles = false);
  /// min(bound, Skv floordiv block_kv); see the definition.
  OpFoldResult getWholeTilesBefore(OpFoldResult bound);
  /// The K/V loops of interval tile bounds {first, full, fullEnd, end}
  /// with every masked tile in one loop; see the definition.
  RecurrenceState buildMaskedFirst(std::array<OpFoldResult, 4> bounds,
                                   RecurrenceState init);
  /// A causal mask's tiles [first, whole) unmasked and [whole, visited)
  /// masked, the masked ones visited first; see the definition.
  RecurrenceState buildDiagonalFirst(OpFoldResult first, OpFoldResult whole,
                                     OpFoldResult visited,
                                     RecurrenceState init);
  /// The masked loop [0, masked) and the unmasked one [masked, visits) of
  /// a masked-first visit order, `left` masked tiles from `first` visited
  /// before those from `wholeEnd`, the unmasked ones from `full`; see the
  /// definition.
  RecurrenceState buildVisitLoops(OpFoldResult first, OpFoldResult left,
                                  OpFoldResult full, OpFoldResult wholeEnd,
                                  OpFoldResult masked, OpFoldResult visits,
                                  RecurrenceState init);
  /// The body of the forall for one (batch, head, query tile) up to the
  /// finalize; returns the O tile and the logsumexp tile.
  std::pair<Value, Value> buildQueryTileBody();

  RewriterBase &b;
  AttentionOp op;
  Location loc;
  FlashConfigAttr config;
  struct {
    int64_t blockQ, blockKV;
  } tiles;
  /// The op's mask when it is causal: the K/V loop is then split.
  std::optional<CausalMask> causal;
  /// Otherwise, the mask's keys per query as an interval, when it has one:
  /// the K/V loop is split in three.
  std::optional<KeyInterval> interval;
  AttentionExtents e;
  /// Loop-invariant values computed before the forall.
  OpFoldResult numQTiles, numKVTiles, headGroup;
  /// The keys the current batch attends to, `min(kv_lengths[b], Skv)` (Skv
  /// without kv_lengths), and their K/V tiles: every K/V loop and tail
  /// tile is bounded by these.
  OpFoldResult seqKV, kvTiles;

  /// What holds for the current (batch, head, query tile) of the forall.
  Value batch, head, headKV;
  /// First query row of the tile: the absolute position the causal mask of
  /// `attnc.online_attention` compares key positions against.
  OpFoldResult qStart;
  /// Rows in the query tile: `blockQ`, or fewer for the last tile.
  OpFoldResult qRows;
  Value queryTile;
  /// With dropout: the probability row of the tile's first query,
  /// (b * H + h) * Sq + q_start, and the Philox counters per row,
  /// ceil(Skv / 8) (attnc.online_attention's `rows`).
  Value dropoutRow, dropoutRowWords;
  /// The step of every K/V loop.
  Value one;
  /// Elements of tensors from above read once per forall iteration, by
  /// tensor and coordinates (hoistBlockReads, readBlock): the coordinates
  /// are kBatchCoord, kHeadCoord or constant indices.
  static constexpr int64_t kBatchCoord = -1, kHeadCoord = -2,
                           kPositionCoord = -3;
  /// The coordinates of a region read's `indices`: kBatchCoord, kHeadCoord
  /// for the region's `batchIn`, `headIn`, constants, kPositionCoord for
  /// anything else (a position, which the caller skips).
  static SmallVector<int64_t> blockCoords(ValueRange indices, Value batchIn,
                                          Value headIn);
  /// A coordinate's index value in the forall: the current batch or head,
  /// or the constant.
  Value coordValue(int64_t coord);
  SmallVector<std::tuple<Value, SmallVector<int64_t>, Value>> blockReads;
  /// The same reads of per-sequence i32 tensors as indices (readBatchIndex).
  DenseMap<Value, Value> batchIndices;
  /// Moves the reads the regions of `step` make of a tensor defined above
  /// the op, at the region's batch and head arguments and constants, to
  /// one read per forall iteration before `loop`: the value is the same
  /// for every score of the tile (an ALiBi slope per head, a length per
  /// sequence).
  void hoistBlockReads(OnlineAttentionOp step, scf::ForOp loop);
  /// `tensor[coords]` for the current batch and head, read once, where
  /// first asked for.
  Value readBlock(Value tensor, ArrayRef<int64_t> coords);
  /// readBlock of what `read` (in the mask region, at its batch and head
  /// arguments and constants) reads.
  Value readRegionBlock(tensor::ExtractOp read);
  /// `tensor[b]` of the current batch, and as an index.
  Value readBatch(Value tensor);
  Value readBatchIndex(Value tensor);

public:
  /// Masked tiles on both sides of an interval's fully visible ones go in
  /// one K/V loop (buildMaskedFirst).
  bool oneMaskedLoop = true;
  /// A ragged batch (attnc.ragged_view Q, K and V, the result packed by
  /// attnc.ragged_pack): the loop nest reads and writes the packed rows
  /// [T, H, d] directly, each sequence from its first row.
  struct Ragged {
    RaggedViewOp q, k, v;
    RaggedPackOp pack;
  };
  std::optional<Ragged> ragged;

private:
  /// The current batch's first packed rows of Q and of K/V (ragged only).
  Value qBase, kvBase;
  /// The rows of the current batch's sequence in `view`, at most `bound`.
  Value raggedRows(RaggedViewOp view, OpFoldResult bound);
  /// The [rows, d] tile of packed `source` at row `base + start`, head
  /// `head` (ragged only).
  Value extractPackedTile(OpBuilder &b, Value source, Value base, Value head,
                          OpFoldResult start, OpFoldResult rows);
};

} // namespace attnc::flash_form

#endif // ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHFORMBUILDER_H
