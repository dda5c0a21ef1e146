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
// The tiling passes read their defaults from the target description.
#include "attnc/Target/TargetDescription.h"
#include "mlir/IR/PatternMatch.h"

#include <string>
#include <vector>

namespace attnc {

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
/// `config` says; the forall carries `config` as `attnc.flash_config`. With
/// `oneMaskedLoop`, a mask whose visible keys form an interval with tiles to
/// mask on both sides of the fully visible ones (a sliding window, document
/// ids) visits all its masked tiles in one K/V loop (the option of the same
/// name).
mlir::LogicalResult convertToOnlineAttention(mlir::RewriterBase &rewriter,
                                             AttentionOp op,
                                             FlashConfigAttr config,
                                             bool oneMaskedLoop = true);

/// Replaces `op` by its flash form (K/V-stationary loops of
/// attnc.online_attention_grad steps, dQ summed with attnc.accumulate and
/// attnc.parallel_accumulate), tiled as `config` says; `oneMaskedLoop` as
/// for convertToOnlineAttention (masked query tiles of both sides in one
/// loop).
mlir::LogicalResult convertToOnlineAttentionGrad(mlir::RewriterBase &rewriter,
                                                 AttentionGradOp op,
                                                 FlashConfigAttr config,
                                                 bool oneMaskedLoop = true);

} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_TRANSFORMS_TRANSFORMS_H
