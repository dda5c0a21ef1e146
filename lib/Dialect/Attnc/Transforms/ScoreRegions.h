//===- ScoreRegions.h - graph masks and modifiers as regions ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// People write masks and score modifiers as tensor code on the S x S scores:
// iotas of the query and key positions, index arithmetic, comparisons and
// mask logic (a sliding window is `rows - cols < W and cols <= rows`), and
// elementwise float ops on the scores (a softcap is `c * tanh(s / c)`).
// attnc.attention holds the same computation per score element in its
// `mask` and `score` regions. This file checks that a tensor expression is
// one the regions can hold and rewrites it, op for op, into scalar arith and
// math on the region's (s, b, h, i, j) arguments.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_SCOREREGIONS_H
#define ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_SCOREREGIONS_H

#include "AttentionMatchers.h"

#include "mlir/IR/Builders.h"

namespace attnc {

/// True when `v` (an i1 mask or an i64 index tensor that broadcasts into the
/// rank-4 `scores`) is computed only from iotas of the scores' dimensions
/// (extents that do not stretch), splat i64 constants, run-time i64 scalars
/// (one-element `tensor.from_elements`), attnc integer arithmetic (add, sub,
/// mul, floor div, min, max, abs), `attnc.cmp` of such values and
/// `attnc.and`/`or`/`not`. The ops visited are added to `ops`.
bool isScoreIndexExpr(mlir::Value v, mlir::RankedTensorType scores,
                      MatchedOps &ops);

/// A mask step `select(keep, x, fill)` or `select(drop, fill, x)` with a
/// fill at or below kMaskFillThreshold and a condition isScoreIndexExpr
/// accepts.
struct GeneralMask {
  mlir::Value input;
  /// The i1 condition of the select; keys kept are `keep` or `not keep`.
  mlir::Value keep;
  bool negate = false;
  bool infiniteFill = false;
  mlir::RankedTensorType scores;
  MatchedOps ops;
};
std::optional<GeneralMask> matchGeneralMask(mlir::Value v);

/// Fills the empty `mask` region with the per-element form of `keep` (which
/// must pass isScoreIndexExpr); with `negate`, of `not keep`.
void buildMaskRegion(mlir::OpBuilder &b, mlir::Location loc, mlir::Region &mask,
                     mlir::Value keep, bool negate,
                     mlir::RankedTensorType scores);

/// True when `v` (an f32 tensor that broadcasts into the rank-4 `scores`)
/// is a term of a score modifier, computed without the scores from: splat
/// float constants; `attnc.cast` of an i64 isScoreIndexExpr value (a
/// distance `i - j`); arguments of the function that are constant along
/// the query and key dimensions (one value per batch and head: ALiBi
/// slopes [H, 1, 1]); and attnc add, sub, mul, div, min, max, neg and abs
/// of such terms. The ops visited are added to `ops`.
bool isScoreTermExpr(mlir::Value v, mlir::RankedTensorType scores,
                     MatchedOps &ops);

/// One elementwise step of a score modifier: a unary float op, or a binary
/// one with the other operand a splat float constant (`constant` set) or
/// another term isScoreTermExpr accepts (`term` set; its ops in
/// `termOps`): an ALiBi bias `-slope[h] * |i - j|`.
struct ScoreModStep {
  mlir::Operation *op;
  /// The operand index of the modified score (0 or 1) in a binary op.
  unsigned scoreOperand = 0;
  std::optional<double> constant;
  mlir::Value term;
  MatchedOps termOps;
};

/// `x` as a score-modifier step on `*input`: attnc.tanh, neg, exp, abs, or
/// add/sub/mul/div/max/min of the scores and a splat float constant or a
/// score term.
std::optional<ScoreModStep> matchScoreModStep(mlir::Value x,
                                              mlir::Value *input);

/// Fills the empty `score` region with `steps` applied in order (innermost
/// first) to the region's score argument; terms index like `scores`.
void buildScoreRegion(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Region &score, llvm::ArrayRef<ScoreModStep> steps,
                      mlir::RankedTensorType scores);

} // namespace attnc

#endif // ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_SCOREREGIONS_H
