//===- Pipelines.cpp - the attnc compilation pipeline ---------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// buildAttncPipeline is the one place the order of attnc's passes is
// written down; every tool runs it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void attnc::buildAttncPipeline(OpPassManager &pm,
                               const AttncPipelineOptions &options) {
  if (options.fuseAttention)
    pm.addPass(createAttncFuseAttention());
  pm.addPass(createAttncFuseElementwise());
  if (options.fuseAttention) {
    AttncOnlineSoftmaxOptions tiles;
    tiles.chip = options.chip;
    tiles.blockQ = options.blockQ;
    tiles.blockKV = options.blockKV;
    pm.addPass(createAttncOnlineSoftmax(tiles));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.verifyNoGlobalScores)
    pm.addPass(createAttncVerifyNoGlobalScores());
}

void attnc::registerAttncPipeline() {
  PassPipelineRegistration<AttncPipelineOptions>(
      "attnc-pipeline",
      "attnc graph to fused kernels (see docs/design.md, layers 2-5)",
      buildAttncPipeline);
}
