//===- OnlineSoftmax.cpp - --attnc-online-softmax -------------------------------------===//
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

#define DEBUG_TYPE "attnc-online-softmax"

namespace attnc {
#define GEN_PASS_DEF_ATTNCONLINESOFTMAX
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncOnlineSoftmaxPass : attnc::impl::AttncOnlineSoftmaxBase<AttncOnlineSoftmaxPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("attnc-online-softmax is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
