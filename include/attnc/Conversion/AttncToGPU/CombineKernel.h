//===- CombineKernel.h - split-KV combine form to a kernel ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers the combine form of split-KV attention (the scf.forall
// --attnc-split-kv builds: per (batch, head, row tile) a loop of
// attnc.online_attention_merge over the splits' partials, a finalize and
// the inserts of O and the logsumexp) to one kernel that runs that merge
// recurrence per row and column.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_COMBINEKERNEL_H
#define ATTNC_CONVERSION_ATTNCTOGPU_COMBINEKERNEL_H

#include "attnc/Conversion/KernelABI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace attnc {

/// True when `forall` holds an attnc.online_attention_merge: a combine
/// form.
bool isCombineForm(mlir::scf::ForallOp forall);

/// Builds kernel `name` into `module` from the combine form `forall` and
/// fills `abi` with its launch contract. With `gridDependency` (the chip
/// has griddepcontrol) the kernel first waits for the grids before it on
/// its stream, the partials' writer among them, and its contract says
/// `programmatic_launch`: the host may start it while the partial kernel
/// finishes. Fails with a diagnostic on what it cannot lower.
mlir::FailureOr<mlir::gpu::GPUFuncOp>
buildCombineKernel(mlir::OpBuilder &b, mlir::gpu::GPUModuleOp module,
                   llvm::StringRef name, mlir::scf::ForallOp forall,
                   bool gridDependency, KernelABI &abi);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_COMBINEKERNEL_H
