//===- FuseAttention.cpp - --attnc-fuse-attention -------------------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// TODO(owner): implement. Placeholder so the tree builds.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

#define DEBUG_TYPE "attnc-fuse-attention"

namespace attnc {
#define GEN_PASS_DEF_ATTNCFUSEATTENTION
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncFuseAttentionPass : attnc::impl::AttncFuseAttentionBase<AttncFuseAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("attnc-fuse-attention is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
