//===- ReportIntensity.cpp - --attnc-report-intensity -------------------------------------===//
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

#define DEBUG_TYPE "attnc-report-intensity"

namespace attnc {
#define GEN_PASS_DEF_ATTNCREPORTINTENSITY
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncReportIntensityPass : attnc::impl::AttncReportIntensityBase<AttncReportIntensityPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("attnc-report-intensity is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
