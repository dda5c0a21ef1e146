//===- BackwardKernel.h - backward flash form to a kernel ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers attnc.attention_grad's flash form (the scf.forall
// --attnc-online-softmax builds for it) to one kernel: the forall's
// dimensions become the grid, its head and query loops the kernel's loops,
// each attnc.online_attention_grad step the recomputation of P and the five
// products, the dQ accumulation atomics into a zeroed f32 workspace.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_BACKWARDKERNEL_H
#define ATTNC_CONVERSION_ATTNCTOGPU_BACKWARDKERNEL_H

#include "attnc/Conversion/KernelABI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace attnc {

/// Builds kernel `name` into `module` from the backward flash form
/// `forall`: per (batch, K/V head, K/V tile), dK and dV of the tile and its
/// contributions to dQ (added to the `dq_accum` workspace, which the host
/// zeroes). Fills `abi` with its launch contract. Fails with a diagnostic
/// on what it cannot lower (the wgmma strategy needs `chip` sm_90a).
mlir::FailureOr<mlir::gpu::GPUFuncOp>
buildAttentionBackwardKernel(mlir::OpBuilder &b, mlir::gpu::GPUModuleOp module,
                             llvm::StringRef name, mlir::scf::ForallOp forall,
                             llvm::StringRef chip, KernelABI &abi);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_BACKWARDKERNEL_H
