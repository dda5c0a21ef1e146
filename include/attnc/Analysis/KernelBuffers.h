//===- KernelBuffers.h - the no-S x S rule on GPU kernels -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The GPU-level half of --attnc-verify-no-global-scores: looks at the
// kernels of every gpu.module (gpu.func with `kernel`, llvm.func with
// `nvvm.kernel`), their launch contract, their allocations and every write
// they make to global memory (GlobalWrites.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_KERNELBUFFERS_H
#define ATTNC_ANALYSIS_KERNELBUFFERS_H

#include "mlir/IR/BuiltinOps.h"

namespace attnc {

/// For every kernel of every gpu.module in `module`:
///  - a kernel with bare pointer or tensor map parameters needs a launch
///    contract (`attnc.launch_contract` on its gpu.module naming it);
///  - every write to global memory (stores, atomics, TMA stores and
///    reductions, bulk copies, global-writing inline PTX; GlobalWrites.h)
///    must be traced to an output tensor of the contract, a tensor map of
///    an output tensor (TMA), or a workspace: a kernel has no hidden global
///    scratch, so a score tile spilled to HBM would have to show up in the
///    contract. A write that cannot be traced is an error naming the op and
///    where the trace stopped; so is a global write in a device function;
///  - the kernel allocates no global memory and no memory whose size
///    depends on run-time values (on-chip buffers are tile-sized);
///  - no output tensor (elements) and no workspace (bytes) grows faster
///    than every input tensor (its size symbols are a sub-multiset of none
///    of theirs), as a S_q x S_kv score matrix [B, H, Sq, Skv] does next to
///    Q [B, H, Sq, d].
/// Emits an error naming the kernel, the parameter or op, and the rule.
mlir::LogicalResult verifyKernelBuffers(mlir::ModuleOp module);

} // namespace attnc

#endif // ATTNC_ANALYSIS_KERNELBUFFERS_H
