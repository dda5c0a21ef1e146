//===- VerifyNoGlobalScores.cpp - --attnc-verify-no-global-scores -------------------------------------===//
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

#define DEBUG_TYPE "attnc-verify-no-global-scores"

namespace attnc {
#define GEN_PASS_DEF_ATTNCVERIFYNOGLOBALSCORES
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncVerifyNoGlobalScoresPass : attnc::impl::AttncVerifyNoGlobalScoresBase<AttncVerifyNoGlobalScoresPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("attnc-verify-no-global-scores is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
