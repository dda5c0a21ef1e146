//===- KernelBuffers.h - the no-S x S rule on GPU kernels -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The GPU-level half of --attnc-verify-no-global-scores: looks at the
// kernels --attnc-convert-to-gpu built (gpu.func in gpu.module), their
// pointer parameters, their global allocations and their global stores.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_KERNELBUFFERS_H
#define ATTNC_ANALYSIS_KERNELBUFFERS_H

#include "mlir/IR/BuiltinOps.h"

namespace attnc {

/// For every kernel of every gpu.module in `module`:
///  - every store to global memory must go through a pointer parameter
///    that the launch contract (`attnc.abi` on the gpu.module) declares an
///    output: a kernel may not write anywhere else, so it has no hidden
///    global scratch (a score tile spilled to HBM would need one);
///  - the kernel allocates no global memory and no memory whose size
///    depends on run-time values (on-chip buffers are tile-sized);
///  - no output parameter grows faster than every input parameter (its
///    symbolic element count divides none of theirs), as a S_q x S_kv
///    score matrix [B, H, Sq, Skv] does next to Q [B, H, Sq, d].
/// Emits an error naming the kernel, the parameter or op, and the rule.
mlir::LogicalResult verifyKernelBuffers(mlir::ModuleOp module);

} // namespace attnc

#endif // ATTNC_ANALYSIS_KERNELBUFFERS_H
