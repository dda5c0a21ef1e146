//===- TargetDescription.cpp - what tiling needs to know about a chip -----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The defaults the online-softmax rewrite and the back-end tile with. Pass
// and pipeline options override them; they are not hidden constants in the
// passes.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

using namespace mlir;
using namespace attnc;

/// Opt-in shared memory per block: 227 KiB on Hopper (sm_90), 163 KiB on
/// A100 (sm_80), from NVIDIA's CUDA C++ Programming Guide, "Compute
/// Capabilities" table.
static constexpr int64_t kHopperSharedMemoryPerBlock = 227 * 1024;
static constexpr int64_t kAmpereSharedMemoryPerBlock = 163 * 1024;

FailureOr<TargetDescription> attnc::lookupTargetDescription(StringRef chip) {
  // Hopper: 256 query rows per CTA (8 warps of 32 rows, two m16 slabs each)
  // and 64 K/V rows per step for d=128, 128 for d<=64. Measured on an H200
  // 2026-11-30 (bf16, S=4k..16k): 338-346 TFLOP/s for d=128, 1.00x
  // FlashAttention-2, against 235-245 for 64 x 64 tiles with 4 warps; fewer
  // shared-memory and L2 bytes per mma is what the larger query tile buys.
  if (chip == "sm_90a" || chip == "sm_90")
    return TargetDescription{chip.str(), kHopperSharedMemoryPerBlock, 256, 64,
                             128};
  // Ampere is not measured; the FlashAttention-2 defaults for mma.sync.
  if (chip == "sm_80")
    return TargetDescription{chip.str(), kAmpereSharedMemoryPerBlock, 128, 64,
                             64};
  return failure();
}

FlashConfigAttr TargetDescription::attentionConfig(MLIRContext *ctx,
                                                   int64_t headDim,
                                                   int64_t blockQ,
                                                   int64_t blockKV) const {
  auto [defaultQ, defaultKV] = attentionTiles(headDim);
  int64_t q = blockQ ? blockQ : defaultQ, kv = blockKV ? blockKV : defaultKV;
  // Tiles of 128 rows and more give each warp two 16-row slabs; smaller
  // ones one slab, and never fewer than one warp.
  int64_t rowsPerWarp =
      q >= 128 ? attentionRowsPerWarpLarge : attentionRowsPerWarpSmall;
  int64_t warps = std::max<int64_t>(1, q / rowsPerWarp);
  return FlashConfigAttr::get(ctx, q, kv, warps, attentionStages,
                              attentionStrategy);
}

ArrayRef<StringRef> attnc::getKnownTargetChips() {
  static constexpr StringRef kChips[] = {"sm_80", "sm_90", "sm_90a"};
  return kChips;
}
