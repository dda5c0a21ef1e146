//===- Intensity.h - FLOPs, HBM bytes and regimes per kernel ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Roofline arithmetic as a compiler analysis: for every kernel a
// function will become, count FLOPs and the minimal HBM bytes, then place it
// on a device's roofline (compute-, bandwidth- or overhead-bound) and
// predict its time. --attnc-report-intensity prints this; attnc-compile's
// --report is meant to reuse it.
//
// Model. A kernel reads each of its inputs from HBM once and writes each
// output once (the minimum any implementation needs). Its predicted time is
//   t = max(FLOPs / peak, bytes / bandwidth, launch overhead),
// its intensity FLOPs / bytes, and its regime overhead-bound when
// max(FLOPs / peak, bytes / bandwidth) < launch overhead, else
// compute-bound when intensity > ridge = peak / bandwidth, else
// bandwidth-bound. A function's kernels run one after the other: the total
// time is the sum of the kernels' times.
//
// FLOPs: a matmul is 2 FLOP per multiply-accumulate;
// attention (attnc.attention, the flash form) is its two matmuls,
// 2 B H S_q S_kv (d_qk + d_v), halved when causal because the masked half
// is skipped (FlashAttention's convention), its softmax not counted (O(S^2)
// next to the matmuls' O(S^2 d): negligible in FLOPs). Elementwise ops count
// one FLOP per element; see Intensity.cpp for the per-op table.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_INTENSITY_H
#define ATTNC_ANALYSIS_INTENSITY_H

#include "attnc/CostModel/CostModel.h"
#include "attnc/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/raw_ostream.h"

namespace attnc {

/// Values for dynamic extents. Which `?` is which goes by position from the
/// end of the argument's shape ([..., S, d] and [B, H, S, d] as attention
/// writes them): the last dim is S_kv (a mask or score-shaped argument;
/// head dims are static), the one before it the sequence, then heads (rank
/// 4 and up), then batch. The sequence of an argument that feeds a key or
/// value (operands 1 and 2 of attention, the rhs of a matmul) is S_kv;
/// otherwise S_q.
struct SizeBindings {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t seqLenQ = 4096;
  int64_t seqLenKV = 4096;
};

/// Attention-specific numbers of an attention kernel.
struct AttentionInfo {
  int64_t batch, heads, seqLenQ, seqLenKV;
  /// Bytes per element of Q (the S x S matrix is priced in it, as the roofline
  /// model of docs/design.md do: S^2 * b).
  int64_t elementBytes;
  bool causal;
};

/// What one kernel does.
struct KernelCost {
  mlir::Operation *op;
  /// Tensor-core (matmul) FLOPs and elementwise FLOPs.
  double matmulFlops = 0;
  double vectorFlops = 0;
  /// Minimal HBM traffic: inputs read once, outputs written once.
  double bytes = 0;
  /// The part of `bytes` moving buffers that grow as S_q x S_kv.
  double scoreBytes = 0;
  std::optional<AttentionInfo> attention;
  /// What the cost model prices (docs/cost-model.md): the schedule the
  /// flash form's #attnc.flash_config chose, or a memory-bound kernel.
  attnc::cost::KernelSchedule schedule;
  attnc::cost::Sizes sizes;

  double flops() const { return matmulFlops + vectorFlops; }
  /// Bytes of the B H S_q S_kv score matrix an attention kernel keeps on
  /// chip.
  double avoidedScoreBytes() const;
};

/// The kernels of one function, in program order.
struct FunctionCost {
  std::string name;
  llvm::SmallVector<KernelCost, 2> kernels;
  /// Bytes of the largest argument or result: totals are also printed as a
  /// multiple of it ("6x the tensor's bytes" for the bias-dropout-LayerNorm
  /// chain).
  double largestBoundaryBytes = 0;
};

enum class Regime { Compute, Bandwidth, Overhead };
llvm::StringRef stringifyRegime(Regime regime);

/// A kernel placed on a device's roofline.
struct KernelEstimate {
  double intensity;
  double computeUs, memoryUs, timeUs;
  Regime regime;
};
KernelEstimate estimateKernel(const KernelCost &kernel,
                              const RooflineModel &device);

/// The sequence length S (= S_q = S_kv) past which an attention kernel of
/// this shape and dtype is compute-bound on `device`: intensity(S) is
/// linear in S, so S* = ridge / (intensity at S / S). Notes: 590 on H100.
double attentionCrossoverSeqLen(const KernelCost &kernel,
                                const RooflineModel &device);

/// Counts the kernels of `func` with dynamic extents bound by `sizes`.
/// Emits an error on `func` and fails when an extent cannot be bound.
mlir::FailureOr<FunctionCost> countFunctionCost(mlir::FunctionOpInterface func,
                                                const SizeBindings &sizes);

/// Prints the human table (`json` false) or the JSON document: the roofline
/// columns on `device`, and each kernel's time as the cost model predicts it
/// on `model`.
void printIntensityReport(llvm::raw_ostream &os,
                          llvm::ArrayRef<FunctionCost> functions,
                          const RooflineModel &device,
                          const attnc::cost::DeviceModel &model,
                          const SizeBindings &sizes, bool json);

} // namespace attnc

#endif // ATTNC_ANALYSIS_INTENSITY_H
