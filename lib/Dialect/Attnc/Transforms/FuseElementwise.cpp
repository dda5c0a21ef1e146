//===- FuseElementwise.cpp - --attnc-fuse-elementwise -------------------------------------===//
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

#define DEBUG_TYPE "attnc-fuse-elementwise"

namespace attnc {
#define GEN_PASS_DEF_ATTNCFUSEELEMENTWISE
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncFuseElementwisePass : attnc::impl::AttncFuseElementwiseBase<AttncFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("attnc-fuse-elementwise is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
