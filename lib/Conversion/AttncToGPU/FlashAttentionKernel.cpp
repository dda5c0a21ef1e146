//===- FlashAttentionKernel.cpp - flash form to an attention kernel -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers the flash form it is given, piece by piece:
//  - each forall dimension becomes the grid dimension its mapping names
//    (the host computes the extent from the contract's sizes), its
//    induction variable that block index;
//  - index values of the form (tile starts, loop bounds, GQA head maps)
//    are rebuilt in the kernel from the block indices and the size
//    parameters by cloning their computation (KernelValues);
//  - each K/V scf.for becomes a kernel loop over the same tiles. A loop
//    whose tiles may be partial (a tail) is split where they become so, so
//    that only the tail pays for the bounds test; consecutive loops share
//    one pipeline: the last iteration of one prefetches the first tile of
//    the next;
//  - each attnc.online_attention step becomes the score stage between the
//    strategy's S = Q Kᵀ and P V, with the step's own score modifier and
//    mask regions evaluated per score element;
//  - the finalize and the two inserts become the epilogue's stores
//    (FlashKernelEpilogue.cpp).
// Data movement and MMA belong to the tile strategy of the forall's
// #attnc.flash_config (TileStrategy.h); which K/V tiles load when, and
// into which buffer, to FlashKernelLoads.cpp.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/FlashAttentionKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

//===----------------------------------------------------------------------===//
// Kernel body
//===----------------------------------------------------------------------===//

/// The score stage of one step: score modifier, then mask (the step's mask
/// region and, for a tail tile, keys past Skv), on tile-relative (row, col)
/// turned into the absolute (i, j) the regions see.
LogicalResult FlashKernelBuilder::emitScoreStage(FlashKVLoop &l,
                                                 IRMapping &scope, bool bounds,
                                                 SmallVectorImpl<Value> &s) {
  OnlineAttentionOp step = l.step;
  FailureOr<Value> batch = materialize(step.getBatch(), scope);
  FailureOr<Value> head = materialize(step.getHead(), scope);
  FailureOr<Value> q0 = materialize(step.getQStart(), scope);
  FailureOr<Value> k0 = materialize(step.getKvStart(), scope);
  if (failed(batch) || failed(head) || failed(q0) || failed(k0))
    return failure();
  bool failedRegion = false;
  // Positions, and what the regions read at them (elementReads), once per
  // row and per column of the step.
  DenseMap<Value, Value> rows, cols;
  llvm::scope_exit clearCache([&] { elementCache.clear(); });
  auto absolute = [&](OpBuilder &b, Value row, Value col) {
    Value &i = rows[row], &j = cols[col];
    if (!i)
      i = arith::AddIOp::create(b, loc, *q0, row);
    if (!j)
      j = arith::AddIOp::create(b, loc, *k0, col);
    return std::make_pair(i, j);
  };
  // The modifier stops before its last positive factor when the score
  // stage folds it.
  Value result;
  if (step.hasScoreModifier() && foldsModifierFactor)
    result = trailingPositiveFactor(step.getScore())->first;
  PositionFloats floats;
  if (step.hasScoreModifier()) {
    Block &body = step.getScore().front();
    Value iArg = body.getArgument(3), jArg = body.getArgument(4);
    scoreStage->modify(
        b, s,
        [&](OpBuilder &, Value score, Value row, Value col,
            const ScoreStage::Position &at) -> Value {
          auto [i, j] = absolute(b, row, col);
          FailureOr<Value> v = cloneRegion(
              step.getScore(), {score, *batch, *head, i, j}, scope, result,
              [&](arith::SIToFPOp cast, Value factor) -> Value {
                return positionToFloat(floats, at, iArg, jArg, step.getScore(),
                                       *q0, *k0, scope, cast, factor);
              });
          failedRegion |= failed(v);
          return succeeded(v) ? *v : score;
        });
  }
  if (step.getMask().empty() && !bounds)
    return failure(failedRegion);
  FailureOr<bool> byInterval =
      maskByKeyInterval(step, scope, bounds, *batch, *head, *q0, *k0, s);
  if (failed(byInterval))
    return failure();
  if (!*byInterval)
    scoreStage->mask(b, s, [&](OpBuilder &, Value row, Value col) -> Value {
      auto [i, j] = absolute(b, row, col);
      Value keep;
      if (!step.getMask().empty()) {
        FailureOr<Value> v =
            cloneRegion(step.getMask(), {*batch, *head, i, j}, scope);
        failedRegion |= failed(v);
        keep = succeeded(v) ? *v : Value();
      }
      if (bounds) {
        Value inside =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, seqKV);
        keep = keep ? arith::AndIOp::create(b, loc, keep, inside).getResult()
                    : inside;
      }
      return keep ? keep
                  : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
    });
  return failure(failedRegion);
}

/// Dropout's draws of the step (ScoreStage::dropoutDraws; none without
/// dropout), from the Philox counter (i64) of the step's first 8 keys in
/// the row of each score row slot: offset + (row + r) * row_words +
/// kv_start / 8 (attnc.online_attention's dropout; kv_start is a multiple
/// of block_kv, itself one of 8).
FailureOr<SmallVector<SmallVector<Value>>>
FlashKernelBuilder::drawDropout(FlashKVLoop &l, IRMapping &scope) {
  if (form.dropout == 0.0)
    return SmallVector<SmallVector<Value>>();
  FailureOr<Value> offset = materialize(form.dropoutOffset, scope);
  FailureOr<Value> row = materialize(form.dropoutRow, scope);
  FailureOr<Value> words = materialize(form.dropoutRowWords, scope);
  FailureOr<Value> k0 = materialize(l.step.getKvStart(), scope);
  if (failed(offset) || failed(row) || failed(words) || failed(k0))
    return failure();
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i64, v).getResult();
  };
  Value group = wide(arith::DivUIOp::create(
      b, loc, *k0, arith::ConstantIndexOp::create(b, loc, 8)));
  Value first = arith::AddIOp::create(b, loc, *offset, group);
  const AccumulatorLayout &layout = strategy->scoreLayout();
  SmallVector<Value> counters;
  for (int64_t r = 0; r < layout.numRowSlots(); ++r) {
    Value rowOf =
        arith::AddIOp::create(b, loc, *row, layout.slotRow(b, loc, r));
    counters.push_back(arith::AddIOp::create(
        b, loc, first,
        arith::MulIOp::create(b, loc, wide(rowOf), wide(*words))));
  }
  return scoreStage->dropoutDraws(b, counters, *drawExchange);
}

/// One kernel loop over K/V tiles [lb, ub) of IR loop `l`. Without a
/// producer each step waits for its tile, barriers (the tile is visible to
/// all warps, and all warps are done with the stage the prefetch
/// overwrites), prefetches the next tile of the chain, then computes. With
/// one, `slot` counts the tiles consumed so far: a step waits for its ring
/// slot, computes, and releases it.
FailureOr<OnlineSoftmaxState>
FlashKernelBuilder::emitKVLoop(FlashKVLoop &l, Value lb, Value ub,
                               Value chainEnd, bool bounds, bool afterPeel,
                               const OnlineSoftmaxState &init, Value &slot) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t stagesCount = form.config.getStages();
  bool ring = strategy->hasProducer();
  SmallVector<Value> inits = init.flatten();
  if (ring)
    inits.push_back(slot);
  auto loop = scf::ForOp::create(b, loc, lb, ub, one, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  ValueRange args = loop.getRegionIterArgs();
  OnlineSoftmaxState st =
      OnlineSoftmaxState::unflatten(ring ? args.drop_back() : args, init);
  IRMapping scope = prologue;
  scope.map(l.loop.getInductionVar(), j);
  Value stage, n;
  int64_t buffers = strategy->kvBuffers();
  SmallVector<Value> vPages; // interleaved: the page entries of V's load
  assert(!(buffers && (ring || strategy->overlapsPV())) &&
         "interleaved K/V loads are for a plain pipeline");
  if (ring)
    n = args.back();
  if (!buffers) {
    FailureOr<Value> resident = beginKVStep(l, j, n, chainEnd);
    if (failed(resident))
      return failure();
    stage = *resident;
  } else {
    // The page-table entries of the tiles of loads 2j + buffers - 1 and 2j
    // + buffers, read before the wait.
    SmallVector<Value> kPages = lookUpPages(l, j, (buffers - 1) / 2);
    vPages = buffers % 2 ? kPages : lookUpPages(l, j, buffers / 2);
    // K of tile j (load 2j) is resident, and every warp is done with the
    // buffer of load 2j - 1 (the previous step's V), which load 2j +
    // buffers - 1 refills while S is computed.
    strategy->waitLoadsBut(b, loadsAhead() - 1);
    strategy->beginStep(b);
    stage = ringBuffer(j, 0);
    if (failed(loadInterleaved(l, j, buffers - 1, chainEnd, kPages)))
      return failure();
  }
  if (!strategy->overlapsPV()) {
    // Dropout's draws first: they need no scores, and the scheduler can
    // interleave them with the MMAs.
    auto draws = drawDropout(l, scope);
    if (failed(draws))
      return failure();
    SmallVector<Value> s = strategy->computeScores(b, stage);
    if (failed(emitScoreStage(l, scope, bounds, s)))
      return failure();
    scoreStage->update(b, s, st, *strategy, /*alphas=*/nullptr, *draws);
    if (buffers) {
      // V of tile j (load 2j + 1) is resident and every warp is done with
      // K of tile j, whose buffer load 2j + buffers refills during P V.
      strategy->waitLoadsBut(b, loadsAhead() - 1);
      if (failed(loadInterleaved(l, j, buffers, chainEnd, vPages)))
        return failure();
      stage = ringBuffer(j, 1);
    }
    strategy->accumulatePV(b, stage, st.acc,
                           scoreStage->strategySumsRows()
                               ? MutableArrayRef<Value>(st.rowSum)
                               : MutableArrayRef<Value>());
  } else {
    // S of this step first, then the previous step's P V, so that waiting
    // for S leaves P V running through this step's score stage. acc takes
    // the previous step's rescale between the two (it is no MMA's operand
    // then), so that after the wait for P V only the probabilities'
    // rounding is left before the next issue.
    ArrayRef<Value> pending(st.pending);
    if (ring)
      strategy->waitValues(b, pending.back());
    SmallVector<Value> probs =
        strategy->stageProbabilities(b, pending.drop_back());
    strategy->beginMMAs(b);
    Value scores = strategy->issueScores(b, stage);
    scoreStage->rescale(b, st.acc, st.pendingScale);
    Value pv = strategy->issuePV(
        b, ringDivRem(b, loc, pending.back(), stagesCount).second, probs,
        st.acc);
    strategy->endMMAs(b);
    // S waited for while the previous P V runs on.
    SmallVector<Value> alphas;
    if (failed(finishScores(l, scope, bounds, scores, /*inFlight=*/1, n, st,
                            alphas)))
      return failure();
    Value tile = ring ? n : stage;
    // Probabilities that do not go where the P V in flight reads are taken
    // before its wait, so the wait can follow the whole score stage.
    bool early = strategy->takesProbabilitiesInFlight();
    SmallVector<Value> taken;
    if (early)
      taken = takeProbabilities(st, tile);
    st.acc = strategy->waitPV(b, pv);
    st.pendingScale = alphas;
    if (ring) {
      // The previous step's slot is done now. Past a peeled first step
      // every step has one; otherwise none before the first step (its empty
      // P V read this step's V).
      Value previous = pending.back();
      if (afterPeel) {
        strategy->releaseSlot(b, previous);
      } else {
        auto release = scf::IfOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, previous,
                                  n),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(release.thenBlock());
        strategy->releaseSlot(b, previous);
      }
    }
    st.pending = early ? taken : takeProbabilities(st, tile);
    st.pending.push_back(tile);
  }
  SmallVector<Value> yields = st.flatten();
  if (ring) {
    // Overlapped, this step's V stays in use until the next step's P V.
    if (!strategy->overlapsPV())
      strategy->releaseSlot(b, n);
    yields.push_back(arith::AddIOp::create(b, loc, n, one));
  }
  scf::YieldOp::create(b, loc, yields);
  b.setInsertionPointAfter(loop);
  ValueRange results = loop.getResults();
  if (ring)
    slot = results.back();
  return OnlineSoftmaxState::unflatten(ring ? results.drop_back() : results,
                                       init);
}

/// The computing threads' part: the K/V loops after the first loads were
/// started, then the epilogue.
LogicalResult
FlashKernelBuilder::emitConsumer(const LoopBounds &bounds, Value &slot,
                                 function_ref<LogicalResult()> beforeEpilogue) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  ArrayRef<Value> lbs = bounds.lbs, ubs = bounds.ubs;
  size_t n = form.loops.size();
  bool ring = strategy->hasProducer();
  // Loops whose bounds meet (and slice tiles alike) form one pipeline.
  SmallVector<bool> chained(n, false);
  for (size_t i = 1; i < n; ++i)
    chained[i] = form.loops[i].continuesPrevious;
  // The query tile and the first K/V tile (the two oldest groups).
  strategy->waitLoadsBut(b, ring ? 0 : loadsAhead() - 1);
  strategy->prepareQuery(b);

  OnlineSoftmaxState st = scoreStage->initialState(b);
  resetPending(st, ring ? slot : lbs[0]);
  // (A persistent kernel's slot counter runs on across its tiles: this
  // tile's steps are the slots it took.)
  Value firstSlot = slot;
  // Loops [0, peeledLoops) hold the tile's peeled first step, in loop
  // peeledLoop (see emitFirstStep).
  size_t peeledLoops = 0;
  Value peeledLoop;
  // Tiles before this one are full: [0, Skv floordiv block_kv).
  Value fullTiles =
      arith::DivUIOp::create(b, loc, seqKV, idx(form.config.getBlockKV()));
  for (size_t i = 0; i < n; ++i) {
    FlashKVLoop &l = form.loops[i];
    if (i > 0 && !chained[i] && !ring) {
      // A new pipeline: every warp must be done with the stages first.
      flushPending(st);
      gpu::BarrierOp::create(b, loc);
      size_t end = i;
      while (end + 1 < n && chained[end + 1])
        ++end;
      if (failed(startKVPipeline(l, lbs[i], ubs[end])))
        return failure();
      if (strategy->overlapsPV()) {
        // Even an empty loop flushes the V of its first tile: loaded.
        strategy->waitLoads(b);
        resetPending(st, lbs[i]);
      }
    }
    size_t last = i;
    while (last + 1 < n && chained[last + 1])
      ++last;
    Value chainEnd = ubs[last];
    bool masked = !l.step.getMask().empty();
    if (i == 0 && strategy->overlapsPV()) {
      // The first pipeline's loops: all of them with a producer (one ring).
      peeledLoops = ring ? n : last + 1;
      FailureOr<OnlineSoftmaxState> first =
          emitFirstStep(0, peeledLoops, bounds, chainEnd, st, slot, peeledLoop);
      if (failed(first))
        return failure();
      st = *first;
      // The peel took the rows' max: the loops' steps keep it.
      scoreStage->settleRowMax(b, st);
    }
    Value lb = lbs[i];
    bool peeled = i < peeledLoops;
    if (peeled)
      lb = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, peeledLoop,
                                idx(i)),
          arith::AddIOp::create(b, loc, lb, idx(1)), lb);
    // The element-wise fallback (a correctness path whose loads dominate)
    // tests the bounds on every tile of a loop: one loop body instead of
    // two, a third less code for LLVM and ptxas in a masked kernel.
    bool splitTail =
        form.config.getStrategy() != TileStrategy::mma_sync_unaligned;
    FailureOr<OnlineSoftmaxState> next = failure();
    // (The split is a bound on iterations: it needs tile j at iteration j.)
    if (l.mayBePartial && !masked && splitTail && l.tileIsIteration) {
      // Full tiles without the bounds test, the tail with it: the split is
      // min(ub, max(lb, Skv floordiv block_kv)), each clamp dropped where
      // the IR proves it redundant.
      using Variable = ValueBoundsConstraintSet::Variable;
      AffineExpr d0;
      bindDims(b.getContext(), d0);
      Variable full(AffineMap::get(1, 0, d0.floorDiv(form.config.getBlockKV())),
                    ArrayRef<Variable>{form.seqKV ? Variable(form.seqKV)
                                                  : Variable(form.key, 2)});
      Value split = fullTiles;
      // (Past a peeled first step the loop may start past the full tiles.)
      if (peeled || !ValueBoundsConstraintSet::compare(
                        Variable(l.loop.getLowerBound()),
                        ValueBoundsConstraintSet::LE, full))
        split = arith::MaxUIOp::create(b, loc, lb, split);
      if (!ValueBoundsConstraintSet::compare(full, ValueBoundsConstraintSet::LE,
                                             Variable(l.loop.getUpperBound())))
        split = arith::MinUIOp::create(b, loc, ubs[i], split);
      // Opaque, so that LLVM keeps this one value live through the main
      // loop for the tail instead of recomputing it there from the two it
      // was computed from (measured: two more 64-bit values live through
      // the main loop of a causal kernel).
      split = opaqueIndex(b, loc, split);
      next = emitKVLoop(l, lb, split, chainEnd, /*bounds=*/false, peeled, st,
                        slot);
      if (succeeded(next))
        next = emitKVLoop(l, split, ubs[i], chainEnd, /*bounds=*/true, peeled,
                          *next, slot);
    } else {
      next =
          emitKVLoop(l, lb, ubs[i], chainEnd, l.mayBePartial, peeled, st, slot);
    }
    if (failed(next))
      return failure();
    st = *next;
  }
  flushPending(st,
               ring ? arith::SubIOp::create(b, loc, slot, firstSlot).getResult()
                    : slot);
  // Key-split warps: part 0 merges the others' running states, each one
  // more partial of the same rows (the combine's rule).
  if (strategy->keyParts() > 1)
    strategy->mergeKeyParts(
        b, st.flatten(), [&](OpBuilder &b, ArrayRef<Value> part) {
          scoreStage->merge(b, st, OnlineSoftmaxState::unflatten(part, st));
        });
  if (beforeEpilogue && failed(beforeEpilogue()))
    return failure();
  return emitEpilogue(st);
}

FailureOr<gpu::GPUFuncOp> FlashKernelBuilder::build(gpu::GPUModuleOp module) {
  FlashConfigAttr config = form.config;
  TileShape shape{config.getBlockQ(), config.getBlockKV(), form.headDim,
                  config.getWarps(),  config.getStages(),  form.elementType,
                  chip.str(),         config.getKeyWarps()};
  shape.interleaveKV = config.getInterleaveKV();
  shape.overlapPV = config.getOverlapPV();
  shape.sharedP = config.getSharedP();
  shape.mmaRowSums = config.getMmaRowSums();
  auto vType = cast<RankedTensorType>(form.value.getType());
  int64_t dv = vType.getDimSize(vType.getRank() - 1);
  if (dv != form.headDim)
    return form.loops.front().step.emitOpError()
           << "has value head dim " << dv << " but query/key head dim "
           << form.headDim
           << "; the flash kernel needs them equal (pad V or split the heads)";
  auto o = cast<RankedTensorType>(form.forall.getResult(0).getType());
  Type outType = isPartial() ? b.getF32Type() : form.elementType;
  if (o.getElementType() != outType)
    return form.forall.emitOpError("writes O in ")
           << o.getElementType() << " but its tiles are " << form.elementType
           << "; the kernel writes O in the input type (f32 for the partials "
              "of a split-KV form)";
  if (config.getStrategy() == TileStrategy::wgmma_persistent)
    return form.forall.emitOpError(
        "has tile strategy wgmma_persistent, the backward's; the forward's "
        "persistent strategy is wgmma_ws_persistent");
  // A persistent kernel holds two query tiles where they fit beside the
  // rest of its shared memory (dropout's exchange, the id bounds' scratch):
  // its producer then loads the next tile's query while this one computes.
  if (config.getStrategy() == TileStrategy::wgmma_ws_persistent)
    shape.queryBuffers = 2;
  strategy = createTileStrategy(config.getStrategy(), shape, loc);
  std::optional<int64_t> sharedLimit = dynamicSharedMemoryLimit(chip);
  if (shape.queryBuffers > 1 && sharedLimit &&
      drawExchangeOffset() + drawExchangeBytes() > *sharedLimit) {
    shape.queryBuffers = 1;
    strategy = createTileStrategy(config.getStrategy(), shape, loc);
  }
  if (failed(strategy->verify(form.forall.getLoc())))
    return failure();
  // Dropout's draws are per warp and tile column group; the key parts'
  // groups are not offset (nor tested).
  if (config.getKeyWarps() > 1 && form.dropout > 0.0)
    return form.forall.emitOpError()
           << "drops probabilities out; its kernel splits the keys of each "
              "tile over key_warps = "
           << config.getKeyWarps()
           << " warps, which dropout does not support (compile with "
              "--key-warps=1; split-KV decoding splits keys by default)";
  // Summed on the tensor cores, the row sums are those of the
  // probabilities P V reads: dropout's are of the undropped ones.
  if (config.getMmaRowSums() && form.dropout > 0.0)
    return form.forall.emitOpError()
           << "drops probabilities out; its config's mma_row_sums would sum "
              "the kept probabilities that P V reads, where the softmax's "
              "row sums are of all of them (compile without "
              "--mma-row-sums)";
  // Packed rows (per-head addresses) and f32 partials are what the
  // mma_sync strategies' loads and stores know how to address and write.
  bool mmaSync = config.getStrategy() == TileStrategy::mma_sync ||
                 config.getStrategy() == TileStrategy::mma_sync_unaligned;
  if (form.packedSource && !mmaSync)
    return form.forall.emitOpError()
           << "is a packed GQA flash form; its rows are addressed per query "
              "head, which the mma_sync strategies do and "
           << stringifyTileStrategy(config.getStrategy()) << " does not";
  // Keys past a batch's length are zero-filled by the mma_sync loads, so
  // that whatever the cache holds there never reaches P V; TMA fills only
  // past Skv.
  if (form.kvLengths && !mmaSync)
    return form.forall.emitOpError()
           << "reads per-sequence K/V lengths; the loads of the mma_sync "
              "strategies stop at each sequence's length and those of "
           << stringifyTileStrategy(config.getStrategy()) << " do not";
  // A ragged batch's packed rows are loaded row by row from each
  // sequence's start, zero-filled past its end, and its O stored row by
  // row up to the end (a TMA store would overwrite the next sequence's).
  if (form.ragged && !mmaSync && config.getStrategy() != TileStrategy::wgmma)
    return form.forall.emitOpError()
           << "reads a ragged batch; the cp.async loads of mma_sync and "
              "wgmma address each sequence's packed rows and the tensor maps "
              "of "
           << stringifyTileStrategy(config.getStrategy()) << " do not";
  if (form.keyPages && !mmaSync)
    return form.forall.emitOpError()
           << "reads a paged K/V cache; the mma_sync strategies' loads look "
              "up each row's page and those of "
           << stringifyTileStrategy(config.getStrategy()) << " do not";
  // Block sizes are powers of two: a page holds whole tiles or a tile
  // whole pages, which the host's split rule counts.
  if (form.keyPages && form.keyPages.getPageSize() % config.getBlockKV() != 0 &&
      config.getBlockKV() % form.keyPages.getPageSize() != 0)
    return form.forall.emitOpError()
           << "reads a paged K/V cache of page_size "
           << form.keyPages.getPageSize()
           << "; block_kv = " << config.getBlockKV()
           << " must divide it or be a multiple of it";
  if (isPartial() && !mmaSync)
    return form.forall.emitOpError()
           << "is a split-KV partial form; its f32 partials are written by "
              "the mma_sync strategies, not by "
           << stringifyTileStrategy(config.getStrategy());

  if (failed(planContract(shape.queryBuffers)))
    return failure();

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  func = createKernelFunc(b, loc, name, abi, strategy->threadsPerBlock());
  // The combine kernel after a partial one is launched programmatically and
  // waits for this grid's end before it reads (griddepcontrol.wait): letting
  // it be scheduled from the start hides its launch behind the partials.
  if (isPartial() && gridDependency) {
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
    abi.attrs["launches_dependents"] = "true";
  }

  strategy->emitPrologue(b);
  if (idExchangeBytes() != 0)
    initIdExchange();
  for (const char *t : {"q", "k", "v"})
    globalMem[t] = wrapGlobalPointer(b, loc, param(t), form.elementType);
  globalMem[outName()] = wrapGlobalPointer(b, loc, param(outName()), outType);
  globalMem[lseName()] =
      wrapGlobalPointer(b, loc, param(lseName()), b.getF32Type());
  // The forall's induction variables are block indices (the order in which
  // CTAs run, longest first for causal masks, is the flash form's choice).
  // (A ragged batch's compact grid reads its sequences' starts and ends
  // for them: below, with the other tensors read per block.)
  if (!strategy->persistent() && !compactRaggedGrid &&
      failed(mapBlockIndices()))
    return failure();
  // (A ragged batch's rows are per sequence: its Q tiles end at their own
  // extent, its keys are form.seqKV.)
  if (!form.ragged) {
    seqQ = extentOf(form.query, 2);
    seqKV = extentOf(form.key, 2);
  }
  if (form.keyPages)
    globalMem["block_table"] =
        wrapGlobalPointer(b, loc, param("block_table"), b.getI32Type());
  // One element per block of the tensors read per block (K/V lengths, a
  // ragged batch's starts and ends, a region's per-head values), loaded
  // once; a persistent block's, once per work tile (prepareTile).
  for (const BlockTensor &bt : form.blockTensors)
    globalMem[bt.name] = wrapGlobalPointer(
        b, loc, param(bt.name),
        cast<RankedTensorType>(bt.tensor.getType()).getElementType());
  // A block of the compact ragged grid past the sequences' last tile has
  // no work and leaves before it reads anything (the batch may be empty).
  std::optional<OpBuilder::InsertionGuard> tileScope;
  if (compactRaggedGrid) {
    Value hasTile = mapRaggedBlockIndices();
    if (!hasTile)
      return failure();
    tileScope.emplace(b);
    auto work = scf::IfOp::create(b, loc, hasTile, /*withElseRegion=*/false);
    b.setInsertionPointToStart(work.thenBlock());
  }
  if (!strategy->persistent() && failed(loadBlockReads()))
    return failure();
  // Reads per score (a value per query or key position) load in place.
  values.readElement = [this](tensor::ExtractOp read,
                              ArrayRef<Value> indices) -> FailureOr<Value> {
    SmallVector<const void *> key = {read.getTensor().getAsOpaquePointer()};
    for (Value i : indices)
      key.push_back(i.getAsOpaquePointer());
    Value &v = elementCache[key];
    if (!v)
      v = loadElement(*form.blockTensorOf(read.getTensor()), indices);
    return v;
  };
  if (form.seqKV) {
    // The batch's keys (min(kv_lengths[b], Skv), a ragged sequence's rows):
    // every bound, tail mask and zero fill below uses them in place of Skv.
    FailureOr<Value> keys = materialize(form.seqKV, prologue);
    if (failed(keys))
      return failure();
    seqKV = *keys;
  }

  ScoreScaling scaling;
  scaling.constantScale = form.scale;
  scaling.modified = form.modified;
  // The same positive last factor in every step's modifier (the masked and
  // the unmasked loops hold copies of one region) folds into the exponent.
  std::optional<std::pair<Value, double>> factor;
  if (form.modified)
    factor = trailingPositiveFactor(form.loops.front().step.getScore());
  foldsModifierFactor = factor && llvm::all_of(form.loops, [&](FlashKVLoop &l) {
                          auto f = trailingPositiveFactor(l.step.getScore());
                          return f && f->second == factor->second;
                        });
  if (foldsModifierFactor)
    scaling.modifierFactor = factor->second;
  // Bounded modified scores (a softcap's tanh) take each row's max once:
  // every loop's modifier, up to the folded factor, stays in one known
  // interval.
  if (form.modified) {
    std::optional<std::pair<double, double>> hull;
    for (FlashKVLoop &l : form.loops) {
      Region &r = l.step.getScore();
      Value top = foldsModifierFactor
                      ? trailingPositiveFactor(r)->first
                      : cast<YieldOp>(r.front().getTerminator()).getValues()[0];
      std::optional<std::pair<double, double>> range = scoreRange(top);
      if (!range) {
        hull.reset();
        break;
      }
      hull = hull ? std::make_pair(std::min(hull->first, range->first),
                                   std::max(hull->second, range->second))
                  : *range;
    }
    if (hull)
      scaling.maxFloor =
          rowMaxFloor(*hull, scaling.modifierFactor, form.elementType);
    // A modifier reading key positions (ALiBi's slope * (j - i)) visited
    // in key order from an unmasked first tile moves the max of steep
    // heads' rows at every step toward the diagonal: the lazy rescale saves
    // no multiply there and its test measured 2-3% slower (H100, ALiBi
    // causal d = 128: 513 / 540 -> 500 / 526 TFLOP/s at S = 4k / 8k).
    // Visited from the masked tiles (the diagonal first, or a window's
    // edges), a row's max is about settled after them.
    if (!scaling.maxFloor && !form.loops.empty() &&
        form.loops.front().step.getMask().empty() &&
        llvm::any_of(form.loops, [](FlashKVLoop &l) {
          return l.step.scoreReadsKeyPositions();
        }))
      scaling.rescaleThreshold = -1.0;
  }
  if (form.runtimeScale) {
    FailureOr<Value> rs = materialize(form.runtimeScale, prologue);
    if (failed(rs))
      return failure();
    scaling.runtimeScale = *rs;
  }
  if (form.dropout > 0.0) {
    FailureOr<Value> seed = materialize(form.dropoutSeed, prologue);
    if (failed(seed))
      return failure();
    scaling.dropout = form.dropout;
    scaling.dropoutSeed = *seed;
  }
  scaling.strategySumsRows = strategy->sumsProbabilities();
  scoreStage = std::make_unique<ScoreStage>(b, loc, strategy->scoreLayout(),
                                            strategy->outputLayout(), scaling);
  if (drawExchangeBytes() != 0)
    drawExchange = makeDrawExchange();
  if (failed(emitBody()))
    return failure();
  tileScope.reset();
  gpu::ReturnOp::create(b, loc);
  return func;
}

LogicalResult FlashKernelBuilder::loadBlockReads() {
  for (tensor::ExtractOp read : form.blockReads) {
    SmallVector<Value> indices;
    for (Value index : read.getIndices()) {
      FailureOr<Value> i = materialize(index, prologue);
      if (failed(i))
        return failure();
      indices.push_back(*i);
    }
    prologue.map(read.getResult(),
                 loadElement(*form.blockTensorOf(read.getTensor()), indices));
  }
  return success();
}

FailureOr<gpu::GPUFuncOp>
attnc::buildFlashAttentionKernel(OpBuilder &b, gpu::GPUModuleOp module,
                                 StringRef name, scf::ForallOp flashForm,
                                 StringRef chip, bool gridDependency,
                                 KernelABI &abi, FlashConfigAttr config) {
  if (failed(rerollFlashForm(flashForm)))
    return failure();
  FailureOr<FlashForm> form = analyzeFlashForm(flashForm);
  if (failed(form))
    return failure();
  if (config)
    form->config = config;
  FlashKernelBuilder builder(b, *form, name, chip, gridDependency, abi);
  // On failure the caller drops the whole gpu.module, half-built kernel
  // included.
  return builder.build(module);
}
