//===- ScoreStage.h - scale, modify, mask and online softmax ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// What an attention kernel does between S = Q Kᵀ and P V, independent of
// how the tiles got into registers: scale, score modifier, mask, the
// online-softmax update (running max, rescale, exp2, running sum) and the
// final normalization with the logsumexp. It sees the score and output
// tiles only through the tile strategy's AccumulatorLayout, so the forward,
// backward and decode kernels of every strategy share it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_SCORESTAGE_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_SCORESTAGE_H

#include "TileStrategy.h"

namespace attnc {

/// Per-thread online-softmax state: per row slot the running max (in the
/// softmax domain of ScoreScaling) and this thread's partial sum; the
/// output accumulator in outputLayout order; and, when the strategy
/// overlaps P V with the next step, the step whose P V is still to be
/// issued: its packed probabilities, then its V stage.
struct OnlineSoftmaxState {
  llvm::SmallVector<mlir::Value> rowMax, rowSum, acc;
  /// With an overlapped P V: the factors (one per row slot) acc takes
  /// before the pending P V is issued, the step's rescale deferred to the
  /// next step (FlashAttention-3's order: after the wait for P V only the
  /// probabilities' rounding is left), and the pending P V (the strategy's
  /// probabilities, then the V tile).
  llvm::SmallVector<mlir::Value> pendingScale, pending;

  llvm::SmallVector<mlir::Value> flatten() const;
  /// The inverse of flatten for a state with the sizes of `like`.
  static OnlineSoftmaxState unflatten(mlir::ValueRange all,
                                      const OnlineSoftmaxState &like);
};

/// How raw Q Kᵀ scores become exponents.
/// exp2 on the MUFU unit: ex2.approx.ftz.f32 (its LLVM intrinsic).
mlir::Value approxExp2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

struct ScoreScaling {
  /// The compile-time scale and, when the program has one, the runtime
  /// scale (f32) that multiplies it: the score modifier sees their product
  /// times S.
  double constantScale = 1.0;
  mlir::Value runtimeScale;
  /// Whether a score modifier runs. Without one the max is taken on raw
  /// scores and the scale folds into the exponent's fma; with one the max
  /// is taken on modified scores.
  bool modified = false;
  /// A positive constant the modifier multiplies its result by last (a
  /// softcap's `cap * tanh(...)`): the max is taken before it, and it
  /// folds into the exponent's and the logsumexp's factors (max(c x) =
  /// c max(x) for c > 0), one multiply per score fewer.
  double modifierFactor = 1.0;
  /// Dropout of the probabilities before P V (0: none) and its seed (i64,
  /// the Philox key). The row sums keep the undropped probabilities; the
  /// 1 / (1 - p) joins the final normalization.
  double dropout = 0.0;
  mlir::Value dropoutSeed;
  /// How far (in exp2's units) a row's running max may fall behind the
  /// scores before the update moves it: a row keeps its max, and acc and the
  /// sum keep their scale, while the step's max exceeds it by at most this,
  /// so probabilities stay below 2^threshold. A warp whose rows all keep
  /// their max skips acc's rescale. Negative: the max follows every growth.
  double rescaleThreshold = 8.0;
  /// Where the modified scores are bounded (rowMaxFloor): the least max
  /// (in the softmax domain) a row takes. Each row's max is then taken at
  /// its first step only, raised to this, and kept: later steps take no max
  /// and never rescale acc or the sum.
  std::optional<double> maxFloor;
  /// The tile strategy adds each step's probabilities to the row sums
  /// (AttentionTileStrategy::addProbabilitySums): the score stage adds
  /// none, and the sums hold whole rows (no reduction at the end).
  bool strategySumsRows = false;
};

/// The interval [lo, hi] holding every value `v` of a score region can
/// take (its score and positions unbounded; tanh in [-1, 1]; constants,
/// and add, sub, mul, div by constants, neg, exp, abs, min, max and select
/// of bounded values), or nullopt where an end is infinite.
std::optional<std::pair<double, double>> scoreRange(mlir::Value v);

/// The least row max that keeps every probability of scores in `range`
/// (the softmax domain of a modified score: exp2((x - max) * log2(e) *
/// factor), `factor` the modifier's folded ScoreScaling::modifierFactor)
/// within what `probability` (the P V operand's type) and the f32 sums hold
/// without loss, whatever max at or above it a row keeps, or nullopt where
/// the range is too wide: for bf16 (f32's exponent range) probabilities
/// within [2^-100, 2^64], for f16 [2^-16, 2^8]. A softcap c * tanh(s / c)
/// spans 2c (144 exp2 units at c = 50).
std::optional<double> rowMaxFloor(std::pair<double, double> range,
                                  double modifierFactor,
                                  mlir::Type probability);

/// The operand and factor of a score region that yields `x * c` (either
/// order) for a finite constant c > 0 (ScoreScaling::modifierFactor), or
/// nullopt.
std::optional<std::pair<mlir::Value, double>>
trailingPositiveFactor(mlir::Region &r);

class ScoreStage {
public:
  /// `(row, col)` tile-relative -> an i1 (visible) or an f32 (new score).
  using Predicate = llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                                   mlir::Value, mlir::Value)>;
  /// An element's tile-relative position as the thread's base plus a
  /// constant (AccumulatorLayout::rowBase ...; null bases: none).
  struct Position {
    mlir::Value rowBase, colBase;
    int64_t rowOffset = 0, colOffset = 0;
  };
  /// `(score, row, col, position)` -> the new score.
  using Modifier = llvm::function_ref<mlir::Value(
      mlir::OpBuilder &, mlir::Value, mlir::Value, mlir::Value,
      const Position &)>;

  /// Emits the loop-invariant constants at the builder's position.
  ScoreStage(mlir::OpBuilder &b, mlir::Location loc,
             const AccumulatorLayout &scores, const AccumulatorLayout &output,
             const ScoreScaling &scaling);

  /// acc = 0, max = -inf, sum = 0.
  OnlineSoftmaxState initialState(mlir::OpBuilder &b) const;
  /// s = modifier(scale * s, row, col) for every element.
  void modify(mlir::OpBuilder &b, llvm::SmallVectorImpl<mlir::Value> &s,
              Modifier modifier) const;
  /// s = -inf where `visible` is false.
  void mask(mlir::OpBuilder &b, llvm::SmallVectorImpl<mlir::Value> &s,
            Predicate visible) const;
  /// `(row, colBase)` -> the columns a row keeps, [first, last] as offsets
  /// from the layout's column base (i32; a null side is unbounded).
  using ColumnRange = llvm::function_ref<std::pair<mlir::Value, mlir::Value>(
      mlir::OpBuilder &, mlir::Value, mlir::Value)>;
  /// s = -inf outside each row's column range and, when `visible` is given,
  /// where it is false. An element's column offset is a constant, so each
  /// test is one 32-bit comparison with an immediate. False when the
  /// layout has no column base (nothing is emitted).
  bool maskColumns(mlir::OpBuilder &b, llvm::SmallVectorImpl<mlir::Value> &s,
                   ColumnRange range, Predicate visible) const;
  /// One online-softmax step: new max per row, rescale of sum and acc by
  /// exp(old max - new max), P = exp(s - new max) handed to `strategy` row
  /// slot by row slot. A row that has seen no visible key keeps max = -inf
  /// and gets P = 0, never NaN. With a rescale threshold the new max is the
  /// old one unless the step's exceeds it by more than the threshold (the
  /// factor is then exactly 1).
  /// With `alphas`, acc is left alone and the rescale factor of each row
  /// slot returned there instead, for `rescale` once acc is ready.
  /// With dropout's `draws` (dropoutDraws), the strategy gets 0 for the
  /// dropped probabilities.
  void update(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> s,
              OnlineSoftmaxState &st, AttentionTileStrategy &strategy,
              llvm::SmallVectorImpl<mlir::Value> *alphas = nullptr,
              llvm::ArrayRef<llvm::SmallVector<mlir::Value>> draws = {}) const;
  /// Dropout's draws of one step, per row slot (AccumulatorLayout::rowDraws
  /// order), from the Philox counter (i64) of the step's first 8 keys in
  /// each slot's row. They depend on positions only: a kernel draws them
  /// while its tensor cores compute the scores.
  /// `exchange` is shared memory the layout transposes words through.
  llvm::SmallVector<llvm::SmallVector<mlir::Value>>
  dropoutDraws(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> rowCounters,
               AccumulatorLayout::DrawExchange &exchange) const;
  /// acc *= alphas[row slot], skipped by a warp whose factors are all 1
  /// (with a rescale threshold: the factors of rows that kept their max are
  /// exactly 1).
  void rescale(mlir::OpBuilder &b, llvm::SmallVectorImpl<mlir::Value> &acc,
               llvm::ArrayRef<mlir::Value> alphas) const;
  /// Factors 1 for every row slot: the scale of a P V issued onto an acc
  /// that needs none (zero probabilities, or acc still zero).
  llvm::SmallVector<mlir::Value> unitScales(mlir::OpBuilder &b) const;
  /// Merges `other`, the running state of the same rows over other keys
  /// (in the same layout), into `st`: m = max of both, each sum and
  /// accumulator scaled by exp(its m - m) (0 for a part that saw no key),
  /// then added, as split-KV's combine merges partials.
  void merge(mlir::OpBuilder &b, OnlineSoftmaxState &st,
             const OnlineSoftmaxState &other) const;
  /// With a bounded modifier, once a tile's first step took each row's max
  /// (a peeled step): rows still without one take the floor, and every
  /// later update of a row keeps its max without a test. The caller
  /// guarantees no update of a row runs before its tile's first step.
  void settleRowMax(mlir::OpBuilder &b, OnlineSoftmaxState &st);
  /// Whether the tile strategy adds the probabilities to the row sums.
  bool strategySumsRows() const { return scaling.strategySumsRows; }
  /// acc /= sum (0 for rows without a visible key); returns the logsumexp
  /// of each row slot (natural log, -inf for those rows).
  llvm::SmallVector<mlir::Value> finalize(mlir::OpBuilder &b,
                                          OnlineSoftmaxState &st) const;

private:
  mlir::Value exp2(mlir::OpBuilder &b, mlir::Value x) const;
  /// update for bounded scores: each row's max is taken at its first step
  /// only (raised to maxFloor) and kept; the factors go to `factors`.
  void
  updateBounded(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> s,
                OnlineSoftmaxState &st, AttentionTileStrategy &strategy,
                llvm::SmallVectorImpl<mlir::Value> &factors,
                llvm::ArrayRef<llvm::SmallVector<mlir::Value>> draws) const;
  /// P = probability(s) for the elements of row slot `r`, added to `sum`
  /// and handed to `strategy` (dropped ones as 0).
  void emitProbabilities(
      mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> s,
      llvm::ArrayRef<int64_t> elements, int64_t r, mlir::Value &sum,
      AttentionTileStrategy &strategy,
      llvm::ArrayRef<llvm::SmallVector<mlir::Value>> draws,
      llvm::function_ref<mlir::Value(mlir::Value)> probability) const;
  /// Whether the k-th element of a row slot is kept, from the slot's draws.
  mlir::Value isKept(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> words,
                     int64_t k) const;

  mlir::Location loc;
  const AccumulatorLayout &scores, &output;
  ScoreScaling scaling;
  /// Elements of each row slot, in element order.
  llvm::SmallVector<llvm::SmallVector<int64_t>> scoreSlots, outputSlots;
  /// exp2 argument per unit of the softmax domain, and the factor of the
  /// max in the logsumexp.
  mlir::Value scale, expScale, lseScale;
  mlir::Value zero, one, negInf, threshold;
  /// With a bounded modifier (ScoreScaling::maxFloor): the least max a
  /// row takes.
  mlir::Value maxFloor;
  /// settleRowMax ran: updates of non-constant maxes keep them.
  bool rowMaxSettled = false;
  /// Dropout: the Philox key words (i32), the smallest kept 16-bit draw
  /// (i32) and the numerator of the final normalization (1 / (1 - p), or
  /// 1).
  mlir::Value dropKey0, dropKey1, keptScale;
  uint32_t dropThreshold = 0;
};

} // namespace attnc

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_SCORESTAGE_H
