//===- GlobalBuffers.h - global buffers and the S x S rule ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Which values of a function live in global memory (HBM), and which of them
// grow faster than every input and output: the (B, H, S_q, S_kv) score
// matrix of unfused attention is the one such buffer flash attention
// exists to remove. Used by --attnc-verify-no-global-scores (which rejects
// them) and by
// --attnc-report-intensity (which counts their traffic separately).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_GLOBALBUFFERS_H
#define ATTNC_ANALYSIS_GLOBALBUFFERS_H

#include "attnc/Analysis/SymbolicShapes.h"

#include "mlir/IR/BuiltinOps.h"

namespace attnc {

/// A value whose contents live in global memory.
struct GlobalBuffer {
  enum class Kind {
    /// A function argument or a value the function returns.
    Boundary,
    /// A result of a top-level op that becomes its own kernel: it crosses
    /// a kernel boundary through HBM.
    KernelResult,
    /// memref.alloc / gpu.alloc / top-level tensor.empty (destinations).
    Allocation,
    /// A memref operand of gpu.launch_func.
    LaunchOperand,
  };
  mlir::Value value;
  Kind kind;
};

/// True when `op`, directly in a function body, is launched as a kernel of
/// its own: every attnc op except constants and yields, scf.forall (the
/// flash form's grid) and an scf.if holding the versions of one kernel
/// (KernelVersions.h).
bool isKernelOp(mlir::Operation *op);

/// True for memrefs in shared or private (local) memory; everything else,
/// including the default memory space, is global.
bool isOnChipMemRef(mlir::Type type);

/// The global buffers of one function, each value once. Values defined
/// inside a kernel (tiles in an scf.forall body, an attnc.fusion's
/// intermediates) are on chip and are not listed; workgroup and private
/// allocations are not either.
llvm::SmallVector<GlobalBuffer>
collectGlobalBuffers(mlir::FunctionOpInterface func,
                     const ShapeAnalysis &shapes);

/// Decides whether a buffer grows as S_q x S_kv.
///
/// Symbolic rule: a buffer is a score-sized buffer when its element count
/// involves only argument symbols and does not divide (symbols and their
/// powers, constants ignored) the element count of any function argument or
/// result. Static rule (no symbols): its element count exceeds that of
/// every argument and result, or it is rank 4 with trailing extents equal
/// to the sequence extents (dim 2) of two rank-4 arguments and its shape is
/// not the shape of any argument or result ([B, H, S_q, S_kv] against
/// [B, H, S, d] inputs, the convention of attnc.attention).
class ScoreBufferRule {
public:
  explicit ScoreBufferRule(const ShapeAnalysis &shapes);

  /// Why `value` is score-sized ("grows as dim 2 of %arg0 x dim 2 of
  /// %arg1"), or nullopt when it is bounded by an input or output or its
  /// size is unknown.
  std::optional<std::string> check(mlir::Value value) const;

private:
  const ShapeAnalysis &shapes;
  llvm::SmallVector<Monomial> bounds;
  llvm::SmallVector<llvm::SmallVector<int64_t>> staticBoundaryShapes;
  llvm::SmallVector<int64_t> sequenceExtents;
  int64_t largestStaticBound = 0;
};

/// Runs the rule over every host function of `module` (functions inside a
/// gpu.module are kernels whose buffers are their host's launch operands)
/// and emits one error per score-sized global buffer, on its defining op.
/// Fails when any was found.
mlir::LogicalResult verifyNoGlobalScores(mlir::ModuleOp module);

} // namespace attnc

#endif // ATTNC_ANALYSIS_GLOBALBUFFERS_H
