//===- AttentionMatchers.h - pieces of attention in the graph ---*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Matchers for the parts of an attention chain that people spell in more than
// one way: a scale factor (a splat constant or a run-time scalar), softmax
// (one op or spelled out) and the causal mask (a select on a comparison of
// row and column iotas, one of them possibly shifted by an offset). Each
// matcher looks at one value, walks up its use-def chain, and on success
// returns the value the part applies to plus the ops it consumed, so that
// --attnc-fuse-attention can check that nothing else uses them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_ATTENTIONMATCHERS_H
#define ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_ATTENTIONMATCHERS_H

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace attnc {

/// Ops a matcher consumed, in the order it found them.
using MatchedOps = llvm::SetVector<mlir::Operation *>;

/// Mask fill values at or below this are treated as -inf. Models written with
/// "safe" masks fill with -1e9 or the lowest finite float instead of -inf;
/// after the max subtraction exp() of such a value is exactly
/// 0 in f32 and bf16 unless the true scores are themselves below ~-1e9, and a
/// causal row always sees key 0, so no row is fully masked and the finite
/// fill never shows. Anything above (e.g. -1e4, -100) is not a mask: it is a
/// score bias, and the chain is left alone.
inline constexpr double kMaskFillThreshold = -1.0e9;

/// The value of `v` when it is an `arith.constant` splat (or scalar) float,
/// as a double; std::nullopt otherwise.
std::optional<double> getSplatFloatConstant(mlir::Value v);

/// The scalar `f` when `t` is `tensor.from_elements f` with one element of a
/// float type no wider than f32 (f32, f16, bf16: their widening to f32 is
/// exact); a null value otherwise. This is how a graph multiplies by a
/// run-time scalar argument without a device load: `f` travels as a kernel
/// parameter. A tensor argument holding the scalar is not one: reading it
/// would be a load from device memory the fused op has no operand for.
mlir::Value getRuntimeScalar(mlir::Value t);

/// A scale step `x * c`, `c * x` or `x / c` where `c` is a splat float
/// constant that broadcasts into `x` without changing its type (`factor`),
/// or `x * t` or `t * x` where `t` holds a run-time scalar
/// (getRuntimeScalar; `runtime` is the scalar, `factor` 1). Division by a
/// run-time scalar is not a scale step: multiplying by its reciprocal would
/// round differently from the graph.
struct ScaleMatch {
  mlir::Value input;
  double factor = 1.0;
  mlir::Value runtime;
  mlir::Operation *op;
};
std::optional<ScaleMatch> matchScale(mlir::Value v);

/// Softmax over the last dimension of `input`: `attnc.softmax`, or spelled
/// out as `div(e, reduce_sum(e))` with `e = exp(sub(x, reduce_max(x)))` (the
/// max subtraction may be left out: it does not change the value). Appends
/// the ops to `ops` on success.
std::optional<mlir::Value> matchSoftmax(mlir::Value v, MatchedOps &ops);

/// A shift of a mask's row or column index: `sign * offset`, the offset the
/// scalar of a one-element i64 tensor (`tensor.from_elements`) or a splat
/// i64 constant.
struct IndexOffset {
  /// The i64 scalar; null when the offset is `constant`.
  mlir::Value scalar;
  int64_t constant = 0;
  int64_t sign = 1;
};

/// Outcome of looking at a select as a mask.
enum class MaskKind {
  /// Not a select on an iota comparison with a -inf fill: not a mask.
  NotAMask,
  /// Keeps key j for query i iff j <= i + offset: top-left causal without
  /// an offset, bottom-right causal when the offset is Skv - Sq (which the
  /// caller, knowing Q and K, has to prove).
  Causal,
  /// An iota mask that is not causal (anti-causal, strictly causal,
  /// diagonal, both sides shifted...): not fused.
  Other,
};

/// A mask step `select(keep, x, fill)` (or `select(drop, fill, x)`) with
/// `keep`/`drop` an `attnc.cmp` of a row iota (dimension rank-2) and a column
/// iota (dimension rank-1), one of them possibly shifted by an offset
/// (`attnc.add` of the iota and the offset in either order, or
/// `attnc.sub` of the offset from the iota), and `fill` a splat <=
/// kMaskFillThreshold. On Causal and Other, `input` is `x` and the select,
/// cmp, iotas and shift are in `ops`.
struct MaskMatch {
  MaskKind kind = MaskKind::NotAMask;
  mlir::Value input;
  /// Causal only: the shift of the row index, `j <= i + offset`.
  std::optional<IndexOffset> offset;
  /// True when the fill is -inf rather than a finite stand-in for it: only
  /// then does it stay -inf under a scale whose value is known at run time
  /// only.
  bool infiniteFill = false;
  MatchedOps ops;
};
MaskMatch matchMask(mlir::Value v);

} // namespace attnc

#endif // ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_ATTENTIONMATCHERS_H
