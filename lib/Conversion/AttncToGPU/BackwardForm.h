//===- BackwardForm.h - the backward flash form as the back-end reads it -===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The parts of attnc.attention_grad's flash form that the backward kernel
// lowers: the forall over (batch, K/V head, K/V tile) and its K/V slices,
// the optional loop over the query heads of a group, the chain of query
// loops (one attnc.online_attention_grad and one attnc.accumulate each),
// and the terminator (dQ accumulated, dK and dV inserted). Like
// analyzeFlashForm, analyzeBackwardForm accepts exactly what the kernel
// lowers and names the op and the rule otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDFORM_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDFORM_H

#include "FlashForm.h"

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace attnc {

/// One query loop: `scf.for %i = lb to ub step 1` carrying (dK, dV, dQ
/// contributions) through one step and one accumulate. `loop` is null for
/// a loop of one iteration that canonicalization folded away: its step
/// and accumulate then sit in the enclosing block.
struct BackwardQueryLoop {
  mlir::scf::ForOp loop;
  OnlineAttentionGradOp step;
  mlir::tensor::ExtractSliceOp query, outGrad, logsumexp, delta;
  AccumulateOp accumulate;
};

struct BackwardForm {
  mlir::scf::ForallOp forall;
  FlashConfigAttr config;
  /// The whole tensors, defined above the forall.
  mlir::Value query, key, value, outGrad, logsumexp, delta;
  mlir::tensor::ExtractSliceOp keySlice, valueSlice;
  /// The loop over the query heads of the K/V head's group; null when it
  /// has one head and canonicalization folded the loop away.
  mlir::scf::ForOp groupLoop;
  /// In execution order; the accumulators flow from one to the next.
  llvm::SmallVector<BackwardQueryLoop> loops;
  ParallelAccumulateOp dqAccumulate;
  mlir::tensor::ParallelInsertSliceOp dkInsert, dvInsert;
  int64_t headDim;
  mlir::Type elementType;
  double scale;
  mlir::Value runtimeScale;
  /// Tensors the steps' regions read per score (an ALiBi slope at the
  /// head, a document id at a position), kernel parameters, and the reads.
  llvm::SmallVector<BlockTensor> regionTensors;
  llvm::SmallVector<mlir::tensor::ExtractOp> elementReads;
};

/// True when `forall` is a backward flash form (it holds an
/// attnc.online_attention_grad), which analyzeBackwardForm reads.
bool isBackwardForm(mlir::scf::ForallOp forall);

/// Reads `forall` as a backward flash form, or emits a diagnostic and
/// fails.
mlir::FailureOr<BackwardForm> analyzeBackwardForm(mlir::scf::ForallOp forall);

} // namespace attnc

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDFORM_H
