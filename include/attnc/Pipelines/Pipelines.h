//===- Pipelines.h - the attnc compilation pipeline -------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The graph-to-GPU pipeline as one builder function. attnc-opt
// (--attnc-pipeline), attnc-compile and the Python package (through
// attnc-compile) all run this same function.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_PIPELINES_PIPELINES_H
#define ATTNC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace attnc {

struct AttncPipelineOptions
    : public mlir::PassPipelineOptions<AttncPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("target chip"), llvm::cl::init("sm_90a")};
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("query rows per attention tile (0: target default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("key/value rows per attention tile (0: target default)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("run the attention fusion and online-softmax rewrite "
                     "(off: the naive graph, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> verifyNoGlobalScores{
      *this, "verify-no-global-scores",
      llvm::cl::desc("fail when a S_q x S_kv buffer reaches global memory"),
      llvm::cl::init(true)};
};

/// Appends the graph-to-GPU pipeline to `pm` (which runs on a module).
void buildAttncPipeline(mlir::OpPassManager &pm,
                        const AttncPipelineOptions &options);

/// Registers --attnc-pipeline.
void registerAttncPipeline();

} // namespace attnc

#endif // ATTNC_PIPELINES_PIPELINES_H
