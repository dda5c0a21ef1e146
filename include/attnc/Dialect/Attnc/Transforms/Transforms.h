//===- Transforms.h - attnc transformations as functions --------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The functions behind the attnc passes, exported so that other passes, the
// pipeline and tests reuse them without going through a pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_TRANSFORMS_TRANSFORMS_H
#define ATTNC_DIALECT_ATTNC_TRANSFORMS_TRANSFORMS_H

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/IR/PatternMatch.h"

#include <string>
#include <vector>

namespace attnc {

//===----------------------------------------------------------------------===//
// Target description
//===----------------------------------------------------------------------===//

/// What the tiling decisions need to know about a chip.
struct TargetDescription {
  std::string chip;
  /// Shared memory one CTA may use, bytes.
  int64_t sharedMemoryPerBlock;
  /// Default attention tiles: query rows per CTA and K/V rows per step,
  /// for head dimensions above 64 and for 64 and below.
  int64_t attentionBlockQ;
  int64_t attentionBlockKV;
  int64_t attentionBlockKVSmallHead;
  /// Query rows one warp owns in a large (>= 128-row) query tile and in a
  /// small one: mma.sync works on 16-row slabs, and two slabs per warp
  /// halve the shared-memory reads of K and V per mma.
  int64_t attentionRowsPerWarpLarge = 32;
  int64_t attentionRowsPerWarpSmall = 16;
  /// K/V tiles in flight in shared memory.
  int64_t attentionStages = 2;
  /// The tile strategy attention kernels use on this chip.
  TileStrategy attentionStrategy = TileStrategy::mma_sync;

  /// The default (blockQ, blockKV) for a head dimension.
  std::pair<int64_t, int64_t> attentionTiles(int64_t headDim) const {
    return {attentionBlockQ,
            headDim <= 64 ? attentionBlockKVSmallHead : attentionBlockKV};
  }

  /// The kernel configuration for `headDim`, with the tiles given (0: the
  /// default).
  FlashConfigAttr attentionConfig(mlir::MLIRContext *ctx, int64_t headDim,
                                  int64_t blockQ = 0,
                                  int64_t blockKV = 0) const;
};

/// The description of `chip` (sm_80, sm_90, sm_90a), or failure.
mlir::FailureOr<TargetDescription>
lookupTargetDescription(llvm::StringRef chip);

/// The chips lookupTargetDescription knows, for diagnostics.
llvm::ArrayRef<llvm::StringRef> getKnownTargetChips();

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

/// Adds the patterns that turn matmul -> scale -> mask -> softmax -> matmul
/// chains into attnc.attention.
void populateFuseAttentionPatterns(mlir::RewritePatternSet &patterns);

/// Groups maximal chains of fusible ops in every block under `root` into
/// attnc.fusion ops. Returns the number of fusions created.
int64_t fuseElementwiseChains(mlir::RewriterBase &rewriter,
                              mlir::Operation *root);

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

/// Replaces `op` by its flash form (see --attnc-online-softmax), tiled as
/// `config` says; the forall carries `config` as `attnc.flash_config`.
mlir::LogicalResult convertToOnlineAttention(mlir::RewriterBase &rewriter,
                                             AttentionOp op,
                                             FlashConfigAttr config);

} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_TRANSFORMS_TRANSFORMS_H
