//===- FlashAttentionKernel.h - FlashAttention-2 kernel builder -*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Builds the fused attention forward kernel as a `gpu.func` made of upstream
// dialects (gpu, nvgpu, nvvm, arith, math, scf, vector, memref). The kernel
// follows FlashAttention-2: each warp owns 16-row slabs of a query tile, K/V
// tiles are staged in shared memory with cp.async (two stages), QKᵀ and PV
// run on tensor cores through ldmatrix + mma.sync m16n8k16, and the
// online-softmax state (running max, denominator, accumulator) lives in f32
// registers. The builder also describes how to launch the kernel (KernelABI).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H
#define ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H

#include "attnc/Conversion/KernelABI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace attnc {

/// What is compiled into one attention kernel.
struct FlashAttentionKernelConfig {
  /// Head dimension d of Q, K, V and O: 64 or 128.
  int64_t headDim = 128;
  /// Element type of Q, K, V and O: bf16 or f16.
  mlir::Type elementType;
  /// Top-left causal mask: key j is visible to query i iff j <= i (torch
  /// SDPA's is_causal when Sq == Skv).
  bool causal = false;
  /// Softmax scale, typically 1/sqrt(d).
  double scale = 0.0;
  /// Query rows per CTA, KV rows per loop step, warps per CTA. Each warp
  /// owns blockQ / numWarps rows, which must be 16 or 32; blockKV must be a
  /// multiple of 16. Measured best on an H200 (2026-11-30, bf16, S >= 4096):
  /// d=128: 256/64/8; d=64: 256/128/8 (or 128/64/4).
  int64_t blockQ = 64;
  int64_t blockKV = 64;
  int64_t numWarps = 4;
};

/// Builds a kernel `name` into `module` that computes, per (batch, head),
///   O = softmax(scale * Q Kᵀ [+ causal mask]) V
///   LSE = logsumexp(scale * Q Kᵀ [+ mask]) per query row (natural log, f32)
/// with the online-softmax recurrence. Fully masked rows (Skv = 0) give O = 0
/// and LSE = -inf. Fills `abi` with the launch contract of docs/abi.md.
/// Fails with a diagnostic at `loc` when the configuration is unsupported.
mlir::FailureOr<mlir::gpu::GPUFuncOp>
buildFlashAttentionKernel(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::gpu::GPUModuleOp module, llvm::StringRef name,
                          const FlashAttentionKernelConfig &cfg,
                          KernelABI &abi);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_FLASHATTENTIONKERNEL_H
