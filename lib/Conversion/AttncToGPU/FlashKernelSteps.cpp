//===- FlashKernelSteps.cpp - the steps around a tile's K/V loops ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// What a tile's K/V loops need around their steps: waiting for a step's
// K/V tile, and, where P V overlaps the next step (overlap_pv), the
// tile's first step peeled off the loops and the P V left pending after
// the last one.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

/// Tile j's K/V resident: with a producer, ring slot `n` is full; without,
/// tile j is in the oldest of the stages - 1 groups in flight, and the
/// prefetch of tile j + loadsAhead() refills the stage tile j - 1 was
/// computed in (its page-table entries read before the wait). Returns the
/// stage tile j is in.
FailureOr<Value> FlashKernelBuilder::beginKVStep(FlashKVLoop &l, Value j,
                                                 Value n, Value chainEnd) {
  int64_t stagesCount = form.config.getStages();
  if (n) {
    strategy->waitSlot(b, n);
    strategy->beginStep(b);
    return ringDivRem(b, loc, n, stagesCount).second;
  }
  SmallVector<Value> pages = lookUpPages(l, j, loadsAhead());
  strategy->waitLoadsBut(b, loadsAhead() - 1);
  strategy->beginStep(b);
  Value stage = ringDivRem(b, loc, j, stagesCount).second;
  Value next = arith::AddIOp::create(
      b, loc, j, arith::ConstantIndexOp::create(b, loc, loadsAhead()));
  if (failed(prefetchKVTiles(l, next, chainEnd, pages)))
    return failure();
  return stage;
}

/// After a step's S was issued (`inFlight` MMA groups issued after it may
/// still run): dropout's draws, which need positions only and run while the
/// tensor cores work; S waited for; with a producer, K of ring slot `n`
/// released; the score stage; the online-softmax update, acc's rescale
/// factors left in `alphas`.
LogicalResult FlashKernelBuilder::finishScores(FlashKVLoop &l, IRMapping &scope,
                                               bool bounds, Value scores,
                                               int64_t inFlight, Value n,
                                               OnlineSoftmaxState &st,
                                               SmallVectorImpl<Value> &alphas) {
  auto draws = drawDropout(l, scope);
  if (failed(draws))
    return failure();
  SmallVector<Value> s = strategy->waitScores(b, scores, inFlight);
  if (n)
    strategy->releaseKeys(b, n);
  if (failed(emitScoreStage(l, scope, bounds, s)))
    return failure();
  scoreStage->update(b, s, st, *strategy, &alphas, *draws);
  return success();
}

/// With an overlapped P V, a step issues its S with the previous step's
/// P V; a tile's first step has no previous one. It is peeled here: S and
/// its score stage only, its P left pending for the next step (or the
/// flush). Run as a loop iteration instead, it issued a P V of zero
/// probabilities: half a step's tensor-core time per tile, which the other
/// consumer warpgroup waits for (a tile at S = 4096 has 32 steps).
/// The step peeled is the first of the first nonempty loop among loops
/// [k, end) (one pipeline); `which` is that loop's number, or `end` where
/// all are empty (the state left as it was, zero probabilities pending).
/// Every later step of those loops then has a previous one.
FailureOr<OnlineSoftmaxState> FlashKernelBuilder::emitFirstStep(
    size_t k, size_t end, const LoopBounds &bounds, Value chainEnd,
    const OnlineSoftmaxState &init, Value &slot, Value &which) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  if (k == end) {
    which = idx(end);
    return init;
  }
  FlashKVLoop &l = form.loops[k];
  Value lb = bounds.lbs[k];
  bool ring = strategy->hasProducer();
  SmallVector<Value> inits = init.flatten();
  if (ring)
    inits.push_back(slot);
  inits.push_back(idx(end));
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lb,
                                    bounds.ubs[k]);
  auto peel = scf::IfOp::create(b, loc, TypeRange(ValueRange(inits)), any,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(peel.elseBlock());
    Value laterSlot = slot, laterWhich;
    FailureOr<OnlineSoftmaxState> later = emitFirstStep(
        k + 1, end, bounds, chainEnd, init, laterSlot, laterWhich);
    if (failed(later))
      return failure();
    SmallVector<Value> yields = later->flatten();
    if (ring)
      yields.push_back(laterSlot);
    yields.push_back(laterWhich);
    scf::YieldOp::create(b, loc, yields);

    b.setInsertionPointToStart(peel.thenBlock());
    IRMapping scope = prologue;
    scope.map(l.loop.getInductionVar(), lb);
    Value n = ring ? slot : Value();
    FailureOr<Value> stage = beginKVStep(l, lb, n, chainEnd);
    if (failed(stage))
      return failure();
    strategy->beginMMAs(b);
    Value scores = strategy->issueScores(b, *stage);
    strategy->endMMAs(b);
    OnlineSoftmaxState st = init;
    // acc is still zero: its rescale factors are not needed.
    SmallVector<Value> alphas;
    if (failed(finishScores(l, scope, l.mayBePartial, scores, /*inFlight=*/0, n,
                            st, alphas)))
      return failure();
    st.pendingScale = scoreStage->unitScales(b);
    Value tile = ring ? n : *stage;
    st.pending = takeProbabilities(st, tile);
    st.pending.push_back(tile);
    yields = st.flatten();
    if (ring)
      yields.push_back(arith::AddIOp::create(b, loc, n, idx(1)));
    yields.push_back(idx(k));
    scf::YieldOp::create(b, loc, yields);
  }
  ValueRange results = peel.getResults();
  which = results.back();
  results = results.drop_back();
  if (ring) {
    slot = results.back();
    results = results.drop_back();
  }
  return OnlineSoftmaxState::unflatten(results, init);
}

/// Nothing pending: zero probabilities against the V tile of `tile` (a
/// tile index, or with a producer a ring slot count; its stage is it mod
/// stages), which is resident (or being loaded, zero-filled past Skv) by
/// the time a step issues them, so their product adds exact zeros to
/// finite V.
void FlashKernelBuilder::resetPending(OnlineSoftmaxState &st, Value tile) {
  if (!strategy->overlapsPV())
    return;
  st.pendingScale = scoreStage->unitScales(b);
  st.pending = strategy->zeroProbabilities(b, tile);
  st.pending.push_back(tile);
}

SmallVector<Value> FlashKernelBuilder::takeProbabilities(OnlineSoftmaxState &st,
                                                         Value tile) {
  SmallVector<Value> taken = strategy->takenProbabilities(b, tile);
  if (scoreStage->strategySumsRows())
    strategy->addProbabilitySums(b, taken, st.rowSum);
  return taken;
}

void FlashKernelBuilder::flushPending(OnlineSoftmaxState &st, Value steps) {
  if (!strategy->overlapsPV())
    return;
  ArrayRef<Value> pending(st.pending);
  bool ring = strategy->hasProducer();
  auto flush = [&](OpBuilder &b) {
    Value stage =
        ringDivRem(b, loc, pending.back(), form.config.getStages()).second;
    if (ring)
      strategy->waitValues(b, pending.back());
    SmallVector<Value> acc(st.acc);
    scoreStage->rescale(b, acc, st.pendingScale);
    acc = strategy->waitPV(
        b, strategy->issuePV(b, stage, pending.drop_back(), acc));
    // The last step's slot: a persistent producer refills it.
    if (ring)
      strategy->releaseSlot(b, pending.back());
    return acc;
  };
  if (!steps) {
    st.acc = flush(b);
  } else {
    // With a producer, a query tile whose loops ran no step has nothing
    // pending, and its ring slot was never filled: its V may be anything
    // (0 x NaN is NaN), so the empty P V is skipped.
    auto any = scf::IfOp::create(
        b, loc, TypeRange(ValueRange(st.acc)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, steps,
                              arith::ConstantIndexOp::create(b, loc, 0)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(any.thenBlock());
      scf::YieldOp::create(b, loc, flush(b));
      b.setInsertionPointToStart(any.elseBlock());
      scf::YieldOp::create(b, loc, st.acc);
    }
    st.acc.assign(any.getResults().begin(), any.getResults().end());
  }
  st.pendingScale.clear();
  st.pending.clear();
}
