//===- VerifyNoGlobalScores.cpp - --attnc-verify-no-global-scores ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pass that fails when an S_q x S_kv buffer reaches global memory. It is
// a driver over attnc::verifyNoGlobalScores (attnc/Analysis/GlobalBuffers.h),
// which finds the global buffers and emits one error per offender.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Analysis/KernelBuffers.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"

#define DEBUG_TYPE "attnc-verify-no-global-scores"

namespace attnc {
#define GEN_PASS_DEF_ATTNCVERIFYNOGLOBALSCORES
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncVerifyNoGlobalScoresPass
    : attnc::impl::AttncVerifyNoGlobalScoresBase<
          AttncVerifyNoGlobalScoresPass> {
  using Base::Base;
  void runOnOperation() override {
    // Both levels: the host functions' buffers and, once
    // --attnc-convert-to-gpu has run, the kernels' parameters and stores.
    bool graphOk = succeeded(verifyNoGlobalScores(getOperation()));
    bool kernelsOk = succeeded(verifyKernelBuffers(getOperation()));
    if (!graphOk || !kernelsOk)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
