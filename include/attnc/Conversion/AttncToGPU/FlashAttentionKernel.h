//===- FlashAttentionKernel.h - flash form to an attention kernel -*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers one flash form (the scf.forall --attnc-online-softmax builds) to a
// kernel: the forall's dimensions become the grid, each K/V loop a loop of
// the kernel, each attnc.online_attention step the score stage between
// S = Q Kᵀ and P V, the finalize the epilogue. The forall's
// #attnc.flash_config picks the tile strategy that moves and multiplies the
// tiles. The builder also describes how to launch the kernel (KernelABI).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H
#define ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace attnc {

/// Builds kernel `name` into `module` from `flashForm`, a scf.forall holding
/// attnc.online_attention steps. It computes, per (batch, head, query tile),
/// O and the logsumexp of each query row (natural log, f32; -inf and O = 0
/// for a row that sees no key). Fills `abi` with the launch contract of
/// docs/abi.md. `chip` is the kernel's target (strategies refuse chips
/// that lack their instructions); with `gridDependency` (the chip has
/// griddepcontrol) a split-KV partial kernel lets the combine kernel that
/// follows it be scheduled from its start. `config`, when given, replaces
/// the forall's #attnc.flash_config (its fallback's, which lowers the same
/// loops). Fails with a diagnostic on the op it cannot lower.
mlir::FailureOr<mlir::gpu::GPUFuncOp>
buildFlashAttentionKernel(mlir::OpBuilder &b, mlir::gpu::GPUModuleOp module,
                          llvm::StringRef name, mlir::scf::ForallOp flashForm,
                          llvm::StringRef chip, bool gridDependency,
                          KernelABI &abi, FlashConfigAttr config = {});

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H
