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
  // 64 x 64 tiles with 4 warps (16 query rows per warp for mma.sync m16n8k16)
  // keep Q, K and V tiles of a d=128 head in 48 KiB of shared memory, so
  // several CTAs share an SM and hide each other's latency (FlashAttention-2
  // uses the same shape for its mma.sync kernels).
  if (chip == "sm_90a" || chip == "sm_90")
    return TargetDescription{chip.str(), kHopperSharedMemoryPerBlock, 64, 64,
                             4};
  if (chip == "sm_80")
    return TargetDescription{chip.str(), kAmpereSharedMemoryPerBlock, 64, 64,
                             4};
  return failure();
}

ArrayRef<StringRef> attnc::getKnownTargetChips() {
  static constexpr StringRef kChips[] = {"sm_80", "sm_90", "sm_90a"};
  return kChips;
}
