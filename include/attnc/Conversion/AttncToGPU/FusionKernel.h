//===- FusionKernel.h - row kernel builder for attnc.fusion -----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Builds one gpu.func for one attnc.fusion: an elementwise chain with row
// reductions over the last dimension becomes a row kernel: 16-byte vector
// loads and stores, the row held in registers; short rows (at most a warp's
// accesses) packed several to a block and reduced within their lanes, long
// ones a block each, reduced through warp shuffles and shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_FUSIONKERNEL_H
#define ATTNC_CONVERSION_ATTNCTOGPU_FUSIONKERNEL_H

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace attnc {

/// Builds the kernel `name` for `fusion` into `module` and fills `abi`.
/// Each thread makes `accessesPerThread` 16-byte accesses per full-shape
/// input where the row allows it (more bytes in flight per thread; fewer
/// when the row is short). Fails with a diagnostic on `fusion` naming the op
/// or operand the row kernel cannot handle (e.g. a dynamic or
/// non-multiple-of-8 last dimension).
mlir::FailureOr<mlir::gpu::GPUFuncOp>
buildFusionKernel(mlir::OpBuilder &b, mlir::gpu::GPUModuleOp module,
                  llvm::StringRef name, FusionOp fusion, KernelABI &abi,
                  int64_t accessesPerThread = 4);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_FUSIONKERNEL_H
