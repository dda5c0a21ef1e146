//===- OnlineSoftmax.cpp - attnc.attention to its flash form --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The online-softmax rewrite (--attnc-online-softmax). It replaces each
// `attnc.attention` by a `scf.forall` over (batch, head, query tile) whose
// body walks the K/V tiles with `scf.for`, carrying the accumulator, the
// running max and the running sum through `attnc.online_attention`, and ends
// with one `attnc.online_attention_finalize` that writes a tile of O and of
// the logsumexp. Nothing of size Sq x Skv is ever materialized: the score
// tile exists only inside `attnc.online_attention`. For a causal mask (top-
// left or bottom-right) the K/V loop is split in two: tiles wholly on the
// visible side of the diagonal run without the mask, tiles crossing it run
// with it, and tiles wholly past it are never visited. Any other mask runs
// on every tile. The back-end (--attnc-convert-to-gpu) lowers this loop
// nest as it is: the forall's dimensions become the grid, each K/V loop a
// loop of the kernel and each step its score stage, so the shape built here
// is what the kernel does; static extents fold to constants where the
// shapes allow. The loop nest is FlashFormBuilder's (FlashFormBuilder.cpp);
// this file picks each attention's tiles and strategy.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/DimIndices.h"
#include "attnc/Dialect/Attnc/IR/AttentionMask.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

#include "FlashFormBuilder.h"
#include "FlashTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attnc-online-softmax"

namespace attnc {
#define GEN_PASS_DEF_ATTNCONLINESOFTMAX
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;
using namespace attnc::tiling;
using namespace attnc::flash_form;

LogicalResult attnc::convertToOnlineAttention(RewriterBase &rewriter,
                                              AttentionOp op,
                                              FlashConfigAttr config,
                                              bool oneMaskedLoop) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FlashFormBuilder builder(rewriter, op, config);
  builder.oneMaskedLoop = oneMaskedLoop;
  auto qView = op.getQuery().getDefiningOp<RaggedViewOp>();
  auto kView = op.getKey().getDefiningOp<RaggedViewOp>();
  if ((qView || kView) && op.hasDropout())
    return op.emitOpError(
        "drops probabilities in a ragged batch; --attnc-online-softmax "
        "numbers dropout's counters by the rows of a padded batch only");
  if (qView || kView) {
    // The loop nest addresses the packed rows; what it writes is the packed
    // O, so the result must be read through one ragged_pack with Q's
    // sequences.
    auto pack = op->hasOneUse() ? dyn_cast<RaggedPackOp>(*op->user_begin())
                                : RaggedPackOp();
    if (!qView || !kView || !pack || pack.getStarts() != qView.getStarts() ||
        pack.getEnds() != qView.getEnds())
      return op.emitOpError(
          "attends over a ragged batch; --attnc-online-softmax tiles one "
          "whose Q, K and V are attnc.ragged_view and whose result is read "
          "only by an attnc.ragged_pack of Q's sequences");
    builder.ragged = FlashFormBuilder::Ragged{
        qView, kView, op.getValue().getDefiningOp<RaggedViewOp>(), pack};
    scf::ForallOp forall = builder.build();
    rewriter.replaceOp(pack, forall.getResult(0));
    rewriter.eraseOp(op);
    // The views were only names for the packed rows the loop nest reads.
    // (Q, K and V may be one view: each is erased once.)
    llvm::SetVector<Operation *> views;
    for (RaggedViewOp view :
         {builder.ragged->q, builder.ragged->k, builder.ragged->v})
      views.insert(view);
    for (Operation *view : views)
      if (view->use_empty())
        rewriter.eraseOp(view);
    return success();
  }
  scf::ForallOp forall = builder.build();
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << config << " for " << op
                          << "\n");
  // The logsumexp (result 1) stays on the forall for a later pass (a
  // backward pass) to pick up; the forward graph only uses O.
  rewriter.replaceOp(op, forall.getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
/// More K/V tiles in flight than any strategy keeps; the strategies check
/// the exact counts they support.
constexpr int64_t kMaxStages = 8;

/// The loads an attention's K/V and Q need beyond a tensor map's rectangle:
/// none; mma_sync's (per-sequence K/V lengths and paged caches: each row's
/// length or page looked up, rows past a sequence's length zero-filled); or
/// any cp.async row loads, mma_sync's or wgmma's (a ragged batch: each
/// sequence's packed rows from its start, zero-filled past its end).
enum class RowLoads { None, MmaSync, CpAsync };

struct AttncOnlineSoftmaxPass
    : attnc::impl::AttncOnlineSoftmaxBase<AttncOnlineSoftmaxPass> {
  using Base::Base;

  /// The target's configuration for `headDim` (of an attention with a mask
  /// when `masked`, whose tensors need `rowLoads`), with the tiles the
  /// options set.
  FailureOr<FlashConfigAttr> getConfig(int64_t headDim, bool masked = true,
                                       RowLoads rowLoads = RowLoads::None,
                                       bool boundsByIds = false) {
    // Reported at the root's location without the "see current operation"
    // note: the culprit is the option, not the IR.
    Location loc = getOperation()->getLoc();
    FailureOr<TargetDescription> target = lookupTargetDescription(chip);
    if (failed(target))
      return emitError(loc)
             << "unknown chip '" << chip << "' for --" DEBUG_TYPE
             << "; known chips: " << llvm::join(getKnownTargetChips(), ", ");
    int64_t q = blockQ, kv = blockKV;
    if (q < 0 || kv < 0)
      return emitError(loc) << "--" DEBUG_TYPE " options block-q and block-kv "
                               "must be positive (or 0 for the target's "
                               "default), got block-q="
                            << q << " and block-kv=" << kv;
    if (stages < 0 || stages > kMaxStages)
      return emitError(loc)
             << "--" DEBUG_TYPE " option stages must be in [1, " << kMaxStages
             << "] (or 0 for the target's default), got "
             << static_cast<int64_t>(stages);
    if (keyWarps < 0)
      return emitError(loc)
             << "--" DEBUG_TYPE " option key-warps must be positive (or 0 for "
                "1), got "
             << static_cast<int64_t>(keyWarps);
    int64_t parts = std::max<int64_t>(1, keyWarps);
    std::optional<TileStrategy> kind;
    if (!strategy.empty()) {
      kind = symbolizeTileStrategy(strategy);
      if (!kind)
        return emitError(loc)
               << "unknown tile strategy '" << strategy << "' for --" DEBUG_TYPE
               << "; known: mma_sync, wgmma, wgmma_ws, wgmma_ws_persistent, "
                  "mma_sync_unaligned";
      if (*kind == TileStrategy::wgmma_persistent)
        return emitError(loc)
               << "tile strategy wgmma_persistent is the backward's "
                  "(backward-strategy); the forward's persistent strategy "
                  "is wgmma_ws_persistent";
      if (*kind != TileStrategy::mma_sync &&
          *kind != TileStrategy::mma_sync_unaligned &&
          !target->hasFeature(TargetFeature::Wgmma))
        return emitError(loc) << "tile strategy " << strategy
                              << " needs warpgroup MMAs, which " << chip
                              << " lacks (sm_90a only)";
    }
    // Without a strategy option, tensors a tensor map cannot address take
    // the strategy whose loads do (TMA stops only at Skv): mma_sync, or
    // wgmma where any cp.async loads do and the chip has warpgroup MMAs.
    if (rowLoads == RowLoads::MmaSync && !kind)
      kind = TileStrategy::mma_sync;
    if (rowLoads == RowLoads::CpAsync && !kind)
      kind = target->hasFeature(TargetFeature::Wgmma) ? TileStrategy::wgmma
                                                      : TileStrategy::mma_sync;
    // (FlashConfigAttr's rules for interleave_kv, said as the options.)
    if (interleaveKV && (!kind || (*kind != TileStrategy::mma_sync &&
                                   *kind != TileStrategy::mma_sync_unaligned)))
      return emitError(loc)
             << "--" DEBUG_TYPE " option interleave-kv needs strategy=mma_sync "
                "or mma_sync_unaligned (their cp.async pipeline), got "
             << (kind ? stringifyTileStrategy(*kind)
                      : StringRef("the target's"));
    if (interleaveKV && stages == 1)
      return emitError(loc)
             << "--" DEBUG_TYPE " option interleave-kv needs stages >= 2 (a "
                "ring of single K/V tile buffers), got 1";
    if (l2GroupMib < -1 || l2GroupMib > kMaxL2GroupMib)
      return emitError(loc)
             << "--" DEBUG_TYPE " option l2-group-mib must be in [0, "
             << kMaxL2GroupMib
             << "] (MiB; 0: no groups) or -1 (the target's "
                "choice), got "
             << static_cast<int64_t>(l2GroupMib);
    std::optional<bool> overlap;
    if (overlapPV == "on" || overlapPV == "off")
      overlap = overlapPV == "on";
    else if (!overlapPV.empty())
      return emitError(loc) << "--" DEBUG_TYPE " option overlap-pv must be "
                               "'on' or 'off' (or empty for the target's "
                               "choice), got '"
                            << overlapPV << "'";
    if (overlap.value_or(false)) {
      // FlashConfigAttr's own rules for overlap_pv, checked on the config
      // the options give before it is built with the keyword.
      FlashConfigAttr plain = target->attentionConfig(
          &getContext(), headDim, q, kv, kind, stages, masked, parts,
          interleaveKV, /*overlapPV=*/false);
      if (failed(FlashConfigAttr::verify(
              [&] {
                return emitError(loc)
                       << "--" DEBUG_TYPE " option overlap-pv=on: ";
              },
              plain.getBlockQ(), plain.getBlockKV(), plain.getWarps(),
              plain.getStages(), plain.getStrategy(), plain.getKeyWarps(),
              plain.getInterleaveKV(), /*overlapPV=*/true,
              /*sharedP=*/false, /*mmaRowSums=*/false, plain.getL2GroupMib(),
              plain.getFallback())))
        return failure();
    }
    FlashConfigAttr config =
        target->attentionConfig(&getContext(), headDim, q, kv, kind, stages,
                                masked, parts, interleaveKV, overlap);
    // Tile bounds from ids: without a strategy option such ops take the
    // one-tile-per-block form (boundsTilesByIds says why).
    if (boundsByIds && !kind &&
        config.getStrategy() == TileStrategy::wgmma_ws_persistent)
      config = target->attentionConfig(&getContext(), headDim, q, kv,
                                       TileStrategy::wgmma_ws, stages, masked,
                                       parts, interleaveKV, overlap);
    return config;
  }

  /// The strategy of backward kernels: the option's, else the target's.
  FailureOr<TileStrategy> getBackwardStrategy() {
    Location loc = getOperation()->getLoc();
    FailureOr<TargetDescription> target = lookupTargetDescription(chip);
    if (failed(target))
      return failure(); // getConfig reports it
    if (backwardStrategy.empty())
      return target->backwardStrategy;
    std::optional<TileStrategy> kind = symbolizeTileStrategy(backwardStrategy);
    if (!kind ||
        (*kind != TileStrategy::mma_sync && *kind != TileStrategy::wgmma &&
         *kind != TileStrategy::wgmma_persistent))
      return emitError(loc) << "unknown backward tile strategy '"
                            << backwardStrategy << "' for --" DEBUG_TYPE
                            << "; known: mma_sync, wgmma, wgmma_persistent";
    if (*kind != TileStrategy::mma_sync &&
        !target->hasFeature(TargetFeature::Wgmma))
      return emitError(loc)
             << "backward tile strategy " << stringifyTileStrategy(*kind)
             << " needs warpgroup MMAs, which " << chip
             << " lacks (sm_90a only)";
    return *kind;
  }

  /// True when `op`'s mask compares ids read at the query and the key
  /// positions (document masks): its flash form bounds the tiles by ids.
  /// The target's persistent choice (constant-span windows) does not apply
  /// to them; persistentForCausal gives them the persistent grid where a
  /// causal conjunct bounds their keys (its producer's spare warps compute
  /// the bounds of the tiles they draw, a tile ahead).
  static bool boundsTilesByIds(AttentionOp op) {
    std::optional<KeyInterval> interval = analyzeKeyInterval(op.getMask());
    return interval && !interval->matches.empty();
  }

  /// True when a region of `op` reads a tensor (hoisted to one read per
  /// block by the flash form).
  template <typename OpTy> static bool readsTensors(OpTy op) {
    bool reads = false;
    for (Region *r : {&op.getMask(), &op.getScore()})
      r->walk([&](tensor::ExtractOp) { reads = true; });
    return reads;
  }

  /// Packed sequences: ragged views of Q or K/V.
  static bool isRagged(AttentionOp op) {
    return op.getQuery().getDefiningOp<RaggedViewOp>() ||
           op.getKey().getDefiningOp<RaggedViewOp>();
  }

  /// The row loads `op`'s tensors need. wgmma's loads take a ragged batch
  /// where wgmma takes the op at all: bf16 or f16 at d = 64 or 128.
  static RowLoads rowLoadsOf(AttentionOp op) {
    if (op.getKvLengths() || op.getKey().getDefiningOp<PagedKVOp>() ||
        op.getValue().getDefiningOp<PagedKVOp>())
      return RowLoads::MmaSync;
    if (!isRagged(op))
      return RowLoads::None;
    RankedTensorType q = op.getQuery().getType();
    int64_t headDim = q.getDimSize(3);
    Type elementType = q.getElementType();
    bool wgmmaShape = (headDim == 64 || headDim == 128) &&
                      (elementType.isBF16() || elementType.isF16());
    return wgmmaShape ? RowLoads::CpAsync : RowLoads::MmaSync;
  }

  static bool needsRowLoads(AttentionOp op) {
    return rowLoadsOf(op) != RowLoads::None;
  }

  /// A constant-span window takes the persistent grid (wgmma_ws). A query
  /// tile of a sliding window (each query sees at most W + 1 keys,
  /// W a constant) visits W + block_q + block_kv keys for W visible ones,
  /// the fringe masked: for windows shorter than 8 default tiles, half the
  /// default tile (measured on the H200, window 1024 at hd128, S = 4096:
  /// mma_sync 211 -> 244 TFLOP/s with half the query tile). wgmma halves
  /// the K/V tile instead: its query tile is the two warpgroups that keep
  /// an SM busy (a 64-row one measured 204 TFLOP/s).
  FailureOr<FlashConfigAttr>
  narrowForWindow(AttentionOp op, FlashConfigAttr config, int64_t headDim) {
    std::optional<KeyInterval> interval = analyzeKeyInterval(op.getMask());
    if (!interval || !interval->exact || !interval->lo || !interval->hi ||
        interval->lo->kind != KeyBound::Kind::Affine ||
        interval->hi->kind != KeyBound::Kind::Affine)
      return config;
    auto span = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
        interval->hi->expr - interval->lo->expr, 1, interval->symbols.size()));
    if (!span)
      return config;
    FailureOr<TargetDescription> target = lookupTargetDescription(chip);
    if (failed(target))
      return failure();
    // Every query tile of a constant-span window visits about as many K/V
    // tiles, the case the persistent grid wins (the next tile's loads and
    // the last one's store overlap the current one; causal tiles vary, and
    // its static order loses there). H200 2026-12-04, TFLOP/s of all pairs
    // at S = 2k / 4k / 8k / 16k: window 256 at d = 64 1033 / 2068 / 4098 /
    // 8156 against wgmma_ws's 953 / 1867 / 3683 / 7280; window 1024 at
    // d = 128 982 / 1755 / 3300 / 6236 against 980 / 1717 / 3220 / 6251.
    if (config.getStrategy() == TileStrategy::wgmma_ws && strategy.empty() &&
        !boundsTilesByIds(op))
      return target->attentionConfig(&getContext(), headDim, blockQ, blockKV,
                                     TileStrategy::wgmma_ws_persistent, stages,
                                     /*masked=*/true, config.getKeyWarps(),
                                     config.getInterleaveKV(),
                                     config.getOverlapPV());
    int64_t q = config.getBlockQ(), kv = config.getBlockKV();
    if (span.getValue() >= 8 * q || q < 128)
      return config;
    // wgmma_ws keeps its tiles: its warpgroups are not held together by a
    // CTA barrier, and the fringe costs less than the halved MMAs (window
    // 1024, d = 128, S = 4096 / 8192 on the H200: 4% faster with 128 K/V
    // rows than with 64).
    if (isWarpSpecialised(config.getStrategy()))
      return config;
    if (config.getStrategy() == TileStrategy::wgmma)
      return kv < 128 || blockKV
                 ? config
                 : target->attentionConfig(
                       &getContext(), headDim, q, kv / 2, config.getStrategy(),
                       config.getStages(), true, config.getKeyWarps(),
                       config.getInterleaveKV(), config.getOverlapPV());
    return target->attentionConfig(
        &getContext(), headDim, q / 2, blockKV, config.getStrategy(),
        config.getStages(), true, config.getKeyWarps(),
        config.getInterleaveKV(), config.getOverlapPV());
  }

  /// A causal mask takes the persistent grid (wgmma_ws_persistent) when
  /// no strategy was asked for: its CTAs draw the longest-first tiles from
  /// a counter as they free up, and the next tile's loads overlap the
  /// current one's end. H200 2026-12-05, TFLOP/s at S = 512 / 1000 / 2k /
  /// 4k / 8k / 16k (B·S = 16k, H = 16): d = 128 275 / 361 / 451 / 514 /
  /// 553 / 571 against wgmma_ws's 260 / 350 / 446 / 496 / 540 / 572; d = 64
  /// 195 / 266 / 351 / 386 / - / 434 against 175 / 247 / 335 / 383 / - /
  /// 416. What a region reads per block (a per-head slope) is read again
  /// for every tile the block walks. Not with tile bounds from ids
  /// (boundsTilesByIds) nor with dropout, whose GPU tests run one tile per
  /// block. A mask whose keys run from the first to a bound that grows with
  /// the query (prefix-LM) runs longest first too, and takes the same grid.
  /// (H100 2026-12-06, prefix 1000, d = 128, B = 4, H = 16: 542 / 567 ->
  /// 579 / 578 TFLOP/s at S = 4k / 8k.) So do documents under a causal
  /// mask, whose tiles the ids bound from below and the diagonal from
  /// above: H100 2026-12-06, four documents causal, d = 128, B = 4, H = 16,
  /// 329-330 / 439-445 TFLOP/s at S = 4k / 8k on one tile per block ->
  /// 351-353 / 453-454 persistent.
  FlashConfigAttr persistentForCausal(AttentionOp op, FlashConfigAttr c,
                                      int64_t headDim) {
    std::optional<KeyInterval> interval = analyzeKeyInterval(op.getMask());
    bool growing =
        op.getCausalMask() ||
        (interval && flash_form::boundGrowsWithQuery(*interval, &getContext()));
    if (!strategy.empty() || !growing || op.getDropoutProbability() ||
        c.getStrategy() != TileStrategy::wgmma_ws)
      return c;
    return lookupTargetDescription(chip)->attentionConfig(
        &getContext(), headDim, c.getBlockQ(), c.getBlockKV(),
        TileStrategy::wgmma_ws_persistent, c.getStages(), /*masked=*/true,
        c.getKeyWarps(), c.getInterleaveKV(), c.getOverlapPV());
  }

  /// `c` with the keyword of `option` (shared-p: shared_p; mma-row-sums:
  /// mma_row_sums), or an error naming the rule the configuration the
  /// options and the target gave this attention breaks (the keyword's own
  /// rules).
  FailureOr<FlashConfigAttr>
  withKeywordOption(AttentionOp op, FlashConfigAttr c, StringRef option) {
    bool p = c.getSharedP() || option == "shared-p";
    bool sums = c.getMmaRowSums() || option == "mma-row-sums";
    if (failed(FlashConfigAttr::verify(
            [&] {
              return op.emitOpError()
                     << "gets " << c << " from the options and the target; "
                     << "--" DEBUG_TYPE " option " << option << ": ";
            },
            c.getBlockQ(), c.getBlockKV(), c.getWarps(), c.getStages(),
            c.getStrategy(), c.getKeyWarps(), c.getInterleaveKV(),
            c.getOverlapPV(), p, sums, c.getL2GroupMib(), c.getFallback())))
      return failure();
    return c.withSharedP(p).withMmaRowSums(sums);
  }

  /// `config` with the l2_group_mib of the option or the target when the
  /// flash form's grid runs longest first (a causal mask), one block per
  /// tile or persistent. Not for a ragged batch: its sequences' lengths,
  /// which a group's bytes would count, are known on the device only.
  FlashConfigAttr withL2Group(AttentionOp op, FlashConfigAttr c,
                              int64_t headDim) {
    if (!op.getCausalMask() || isRagged(op))
      return c;
    return c.withL2GroupMib(
        l2GroupMibOr(lookupTargetDescription(chip)->attentionL2GroupMib(
            headDim, c.getStrategy())));
  }

  /// The backward's `config` with the l2_group_mib of the option or the
  /// target when its grid runs longest first (a causal mask) with one CTA
  /// per K/V tile.
  FlashConfigAttr withL2Group(AttentionGradOp op, FlashConfigAttr c) {
    if (!op.getCausalMask() || c.getStrategy() != TileStrategy::wgmma)
      return c;
    return c.withL2GroupMib(
        l2GroupMibOr(lookupTargetDescription(chip)->attentionBackwardL2GroupMib(
            c.getStrategy())));
  }

  /// The l2-group-mib option where it is set, else the target's `mib`.
  int64_t l2GroupMibOr(int64_t mib) const {
    return l2GroupMib >= 0 ? static_cast<int64_t>(l2GroupMib) : mib;
  }

  void runOnOperation() override {
    // Mask bounds are reasoned about with ValueBounds, which reads past a
    // shape on a dim query beyond it.
    if (failed(checkDimIndices(getOperation())))
      return signalPassFailure();
    // Options are checked even when there is no attention to tile.
    FailureOr<TileStrategy> gradStrategy = getBackwardStrategy();
    if (failed(getConfig(/*headDim=*/128)) || failed(gradStrategy))
      return signalPassFailure();
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      // A config on the op (the user's choice) wins over the target's.
      int64_t headDim = op.getQuery().getType().getDimSize(3);
      FailureOr<FlashConfigAttr> config =
          op.getConfigAttr() ? FailureOr<FlashConfigAttr>(op.getConfigAttr())
                             : getConfig(headDim, !op.getMask().empty(),
                                         rowLoadsOf(op), boundsTilesByIds(op));
      if (succeeded(config) && !op.getConfigAttr() && blockQ == 0)
        config = narrowForWindow(op, *config, headDim);
      if (succeeded(config) && !op.getConfigAttr())
        config = persistentForCausal(op, *config, headDim);
      if (succeeded(config) && !op.getConfigAttr())
        config = withL2Group(op, *config, headDim);
      if (succeeded(config) && !op.getConfigAttr() && fallback &&
          !needsRowLoads(op))
        config = lookupTargetDescription(chip)->withFallback(
            *config, headDim,
            op.getQuery().getType().getElementType().getIntOrFloatBitWidth());
      if (succeeded(config) && !op.getConfigAttr() && sharedP)
        config = withKeywordOption(op, *config, "shared-p");
      if (succeeded(config) && !op.getConfigAttr() && mmaRowSums)
        config = withKeywordOption(op, *config, "mma-row-sums");
      if (failed(config))
        return signalPassFailure();
      std::optional<TargetDescription::SizeVariant> variant;
      // Measured for unmasked and plain causal attention only, with the
      // target's tiles: on a padded batch (tensor maps), and on a ragged
      // batch of short sequences (its rows per sequence).
      bool plain = (op.getMask().empty() || op.getCausalMask()) &&
                   !op.hasScoreModifier() && !op.getDropoutProbability() &&
                   !readsTensors(op) && !op.getConfigAttr() && sizeVariants &&
                   blockQ == 0 && blockKV == 0 && overlapPV.empty() &&
                   !sharedP && !mmaRowSums;
      bool causal = op.getCausalMask().has_value();
      if (plain && !needsRowLoads(op))
        variant = lookupTargetDescription(chip)->attentionVariant(
            *config, headDim, causal);
      else if (plain && op.getQuery().getDefiningOp<RaggedViewOp>() &&
               rowLoadsOf(op) == RowLoads::CpAsync)
        variant = lookupTargetDescription(chip)->raggedAttentionVariant(
            *config, headDim, causal);
      if (!variant || pickStatically(op, *variant, *config)) {
        if (failed(
                convertToOnlineAttention(rewriter, op, *config, oneMaskedLoop)))
          return signalPassFailure();
        continue;
      }
      // The default kernel's fallback serves the variant too: a call the
      // variant refuses goes to the kernel (docs/abi.md, "Variants").
      FlashConfigAttr v = variant->config.withFallback({});
      auto [variantForm, defaultForm] = versionBySize(rewriter, op, *variant);
      if (failed(convertToOnlineAttention(rewriter, variantForm, v,
                                          oneMaskedLoop)) ||
          failed(convertToOnlineAttention(rewriter, defaultForm, *config,
                                          oneMaskedLoop)))
        return signalPassFailure();
    }
    SmallVector<AttentionGradOp> grads;
    getOperation()->walk([&](AttentionGradOp op) { grads.push_back(op); });
    for (AttentionGradOp op : grads) {
      FlashConfigAttr config = op.getConfigAttr();
      std::optional<TargetDescription::SizeVariant> variant;
      if (!config) {
        int64_t headDim = op.getQuery().getType().getDimSize(3);
        FailureOr<TargetDescription> target = lookupTargetDescription(chip);
        config = target->attentionBackwardConfig(&getContext(), headDim, blockQ,
                                                 blockKV, *gradStrategy);
        // Measured for unmasked and plain causal attention only: under a
        // window, say, the query loops are short, where 128-row tiles lose.
        bool plain = (op.getMask().empty() || op.getCausalMask()) &&
                     !op.hasScoreModifier() && !readsTensors(op);
        if (plain && sizeVariants && blockQ == 0 && blockKV == 0)
          variant = target->attentionBackwardVariant(
              config, headDim, op.getCausalMask().has_value());
        config = withL2Group(op, config);
        if (variant)
          variant->config = withL2Group(op, variant->config);
      }
      if (!variant || pickStatically(op, *variant, config)) {
        if (failed(convertToOnlineAttentionGrad(rewriter, op, config,
                                                oneMaskedLoop)))
          return signalPassFailure();
        continue;
      }
      auto [longForm, defaultForm] = versionBySize(rewriter, op, *variant);
      if (failed(convertToOnlineAttentionGrad(
              rewriter, longForm, variant->config, oneMaskedLoop)) ||
          failed(convertToOnlineAttentionGrad(rewriter, defaultForm, config,
                                              oneMaskedLoop)))
        return signalPassFailure();
    }
  }

  /// The sizes `variant` runs by: Q's rows or K's keys (dim 2) and, per
  /// sequence, the batch (dim 0). A ragged batch's view names the packed
  /// tensor's rows and its starts' length, which the kernel's contract
  /// binds as T and B.
  template <typename OpTy>
  static std::pair<Value, int64_t>
  sizeOperand(OpTy op, const TargetDescription::SizeVariant &variant,
              bool batch) {
    Value t = variant.keys ? op.getKey() : op.getQuery();
    if (auto view = t.template getDefiningOp<RaggedViewOp>())
      return {batch ? view.getStarts() : view.getPacked(), 0};
    return {t, batch ? 0 : 2};
  }

  /// With static sizes, `config` becomes the variant's when it holds; true
  /// then (one kernel, no versions).
  template <typename OpTy>
  static bool pickStatically(OpTy op,
                             const TargetDescription::SizeVariant &variant,
                             FlashConfigAttr &config) {
    auto extentOf = [&](bool batch) {
      auto [tensor, dim] = sizeOperand(op, variant, batch);
      return cast<ShapedType>(tensor.getType()).getDimSize(dim);
    };
    int64_t extent = extentOf(false);
    int64_t batch = variant.perBatch ? extentOf(true) : 1;
    if (ShapedType::isDynamic(extent) || ShapedType::isDynamic(batch))
      return false;
    if (variant.holds(extent, batch))
      config = variant.config;
    return true;
  }

  /// Replaces `op` by `scf.if` on the sizes `variant` runs for with a copy
  /// of `op` in each region, each yielding its copy's results: the versions
  /// of one kernel (attnc/Analysis/KernelVersions.h). A ragged batch's
  /// attnc.ragged_pack goes into each region with its copy (the flash form
  /// writes the packed rows). Returns the copies (the variant's, the
  /// default's).
  template <typename OpTy>
  static std::pair<OpTy, OpTy>
  versionBySize(IRRewriter &rewriter, OpTy op,
                const TargetDescription::SizeVariant &variant) {
    Location loc = op.getLoc();
    Operation *last = op;
    if (op->hasOneUse() && isa<RaggedPackOp>(*op->user_begin()))
      last = *op->user_begin();
    rewriter.setInsertionPoint(last);
    auto sizeOf = [&](bool batch) -> Value {
      auto [tensor, dim] = sizeOperand(op, variant, batch);
      return tensor::DimOp::create(rewriter, loc, tensor, dim);
    };
    Value extent = sizeOf(false);
    // Per sequence: bounds times the batch.
    Value batch = variant.perBatch ? sizeOf(true) : Value();
    Value cond;
    auto conjoin = [&](arith::CmpIPredicate pred, int64_t bound) {
      Value limit = arith::ConstantIndexOp::create(rewriter, loc, bound);
      if (batch)
        limit = arith::MulIOp::create(rewriter, loc, batch, limit);
      Value c = arith::CmpIOp::create(rewriter, loc, pred, extent, limit);
      cond =
          cond ? arith::AndIOp::create(rewriter, loc, cond, c).getResult() : c;
    };
    // (A host reads a per-sequence bound only as at most: attnc.at_most.)
    assert((!variant.perBatch || variant.min <= 0) &&
           "a per-sequence variant bounds its rows from above only");
    if (variant.min > 0)
      conjoin(arith::CmpIPredicate::sge, variant.min);
    if (variant.max > 0)
      conjoin(arith::CmpIPredicate::sle, variant.max);
    auto ifOp = scf::IfOp::create(rewriter, loc, last->getResultTypes(), cond,
                                  /*withElseRegion=*/true);
    auto copyInto = [&](Block *block) {
      rewriter.setInsertionPointToEnd(block);
      IRMapping map;
      auto copy = cast<OpTy>(rewriter.clone(*op, map));
      Operation *result = last == op ? copy : rewriter.clone(*last, map);
      scf::YieldOp::create(rewriter, loc, result->getResults());
      return copy;
    };
    OpTy variantForm = copyInto(ifOp.thenBlock());
    OpTy defaultForm = copyInto(ifOp.elseBlock());
    rewriter.replaceOp(last, ifOp.getResults());
    if (last != op)
      rewriter.eraseOp(op);
    return {variantForm, defaultForm};
  }
};
} // namespace
