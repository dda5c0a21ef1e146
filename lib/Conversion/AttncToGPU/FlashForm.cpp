//===- FlashForm.cpp - the flash form as the back-end reads it ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Walks the recurrence backwards from the finalize: each (acc, max, sum)
// triple is the result of a K/V loop, whose init is the previous loop's
// result, down to the splat 0 / -inf / 0 the recurrence starts from. Tile
// sizes are read off the slices with the value-bounds analysis and must be
// those of the forall's #attnc.flash_config.
//
//===----------------------------------------------------------------------===//

#include "FlashForm.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

using namespace mlir;
using namespace attnc;

/// The largest value `size` can take, if the value-bounds analysis finds
/// one.
static std::optional<int64_t> upperBound(OpFoldResult size) {
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return c;
  FailureOr<int64_t> ub = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(size),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (failed(ub))
    return std::nullopt;
  return *ub;
}

/// True when `v` provably takes a single value (a constant, or an index of a
/// one-iteration loop).
static bool isSingleValued(OpFoldResult v) {
  if (getConstantIntValue(v))
    return true;
  FailureOr<int64_t> lb = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::LB, ValueBoundsConstraintSet::Variable(v));
  std::optional<int64_t> ub = upperBound(v);
  return succeeded(lb) && ub && *lb == *ub;
}

/// True when `a` and `b` provably hold the same index.
static bool provablyEqual(const ValueBoundsConstraintSet::Variable &a,
                          const ValueBoundsConstraintSet::Variable &b) {
  FailureOr<bool> eq = ValueBoundsConstraintSet::areEqual(a, b);
  return succeeded(eq) && *eq;
}

/// The row dimension of a tile slice's source: 2 of [B, H, S, d], 0 of a
/// ragged batch's packed [T, H, d].
static unsigned rowDim(OffsetSizeAndStrideOpInterface slice) {
  return cast<RankedTensorType>(slice->getOperand(0).getType()).getRank() == 3
             ? 0
             : 2;
}

/// A tile of `source[b, h, start:start+rows, 0:d]`, rank-reduced to
/// [rows, d]: the slices the flash form takes of Q, K and V; or, of a
/// ragged batch's packed rows, `source[start:start+rows, h, 0:d]`.
static LogicalResult checkTileSlice(tensor::ExtractSliceOp slice,
                                    StringRef what) {
  auto src = cast<RankedTensorType>(slice.getSource().getType());
  if (src.getRank() == 3 && slice.getType().getRank() == 2) {
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    if (slice.hasUnitStride() && isConstantIntValue(sizes[1], 1) &&
        isConstantIntValue(slice.getMixedOffsets()[2], 0) &&
        isConstantIntValue(sizes[2], src.getDimSize(2)))
      return success();
    return slice.emitOpError()
           << "takes the " << what
           << " tile of a ragged flash form; it must take rows of one head, "
              "whole rows, unit strides";
  }
  if (src.getRank() != 4 || slice.getType().getRank() != 2)
    return slice.emitOpError() << "takes the " << what
                               << " tile of a flash form; it must slice a "
                                  "[batch, heads, seq, dim] tensor to "
                                  "[rows, dim]";
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  bool ok = slice.hasUnitStride() && isConstantIntValue(sizes[0], 1) &&
            isConstantIntValue(sizes[1], 1) &&
            isConstantIntValue(slice.getMixedOffsets()[3], 0) &&
            isConstantIntValue(sizes[3], src.getDimSize(3));
  if (!ok)
    return slice.emitOpError()
           << "takes the " << what
           << " tile of a flash form; it must take one batch and one head, "
              "whole rows, unit strides";
  return success();
}

/// The rows of a tile slice: `block` rows, or (for the one tile of a
/// statically shorter sequence) all of them; with `tail`, also fewer rows
/// than `block` in a tile of computed size or at a single offset (the
/// tail tile of a K/V loop that canonicalization narrowed to the last tiles
/// of a static sequence; checkKVRows then proves the rows are
/// min(block, Skv - kv_start)). A constant count below `block` in every
/// iteration is a tile that disagrees with the config.
static LogicalResult checkTileRows(tensor::ExtractSliceOp slice, int64_t block,
                                   StringRef what, StringRef param,
                                   bool tail = false) {
  OpFoldResult rows = slice.getMixedSizes()[rowDim(slice)];
  std::optional<int64_t> ub = upperBound(rows);
  int64_t seq = cast<RankedTensorType>(slice.getSource().getType())
                    .getDimSize(rowDim(slice));
  std::optional<int64_t> c = getConstantIntValue(rows);
  if (ub == block || (c && ub == seq && *ub < block) ||
      (tail && ub && *ub > 0 && *ub < block &&
       (!c || isSingleValued(slice.getMixedOffsets()[2]))))
    return success();
  InFlightDiagnostic diag = slice.emitOpError()
                            << "takes " << what << " tiles of ";
  if (ub)
    diag << "up to " << *ub;
  else
    diag << "an unbounded number of";
  diag << " rows but the flash form's #attnc.flash_config has " << param
       << " = " << block << "; the kernel's tile is the IR's: make them agree";
  return diag;
}

/// `x = min(block, Skv - j * block)` (or `block`): the extent of a K/V tile
/// of the kernel's K/V loops, with the batch's keys (`seqKV`, when the form
/// reads K/V lengths, or of a ragged batch: then set from the first tile)
/// for Skv. Returns whether it may be partial.
static FailureOr<bool> checkKVRows(FlashKVLoop &l, int64_t block,
                                   Value &seqKV) {
  OpFoldResult rows = l.key.getMixedSizes()[rowDim(l.key)];
  if (rows != l.value.getMixedSizes()[rowDim(l.value)])
    return l.value.emitOpError("takes V tiles of other rows than the K tiles "
                               "of the same step");
  if (isConstantIntValue(rows, block))
    return false;
  using Variable = ValueBoundsConstraintSet::Variable;
  MLIRContext *ctx = l.loop->getContext();
  Value kvStart = l.step.getKvStart();
  // A ragged batch's keys are its sequence's rows, a value of the forall's
  // body the tail tile's extent names: min(block_kv, keys - kv_start).
  if (rowDim(l.key) == 0 && !seqKV) {
    auto min = definingOpOf<affine::AffineMinOp>(rows);
    if (min && min.getSymbolOperands().size() == 1)
      seqKV = min.getSymbolOperands()[0];
  }
  // Skv - kvStart, from the key tensor's extent.
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  Variable keys = seqKV ? Variable(seqKV) : Variable(l.key.getSource(), 2);
  Variable remaining(AffineMap::get(2, 0, d0 - d1, ctx),
                     ArrayRef<Variable>{keys, Variable(kvStart)});
  if (auto c = getConstantIntValue(rows)) {
    // A static extent shorter than the block: the whole remaining sequence.
    if (*c < block && provablyEqual(Variable(rows), remaining))
      return true;
  } else if (auto min = cast<Value>(rows).getDefiningOp<affine::AffineMinOp>();
             min && min.getAffineMap().getNumResults() == 2) {
    AffineMap map = min.getAffineMap();
    bool full = false, tail = false;
    for (unsigned r = 0; r < 2; ++r) {
      Variable term(map.getSubMap({r}), min.getOperands());
      full |= provablyEqual(
          term, Variable(OpFoldResult(Builder(ctx).getIndexAttr(block))));
      tail |= provablyEqual(term, remaining);
    }
    if (full && tail)
      return true;
  }
  return l.key.emitOpError()
         << "takes K tiles of a size the kernel cannot lower: the rows of a "
            "K/V tile must be block_kv ("
         << block << ") or min(block_kv, "
         << (seqKV ? "min(kv_lengths[b], Skv)" : "Skv") << " - kv_start)";
}

/// The K/V loop whose results are `acc`, `max`, `sum`, or null when they
/// are not the three results of one scf.for.
static scf::ForOp producingLoop(Value acc, Value max, Value sum) {
  auto loop = acc.getDefiningOp<scf::ForOp>();
  if (!loop || loop.getNumResults() != 3 || loop.getResult(0) != acc ||
      loop.getResult(1) != max || loop.getResult(2) != sum)
    return {};
  return loop;
}

bool attnc::isIndexComputation(Operation *op) {
  return isa<affine::AffineApplyOp, affine::AffineMinOp, affine::AffineMaxOp,
             tensor::DimOp>(op) ||
         (isa<arith::ArithDialect>(op->getDialect()) &&
          op->getNumRegions() == 0 && isMemoryEffectFree(op));
}

/// True when `x` of loop `lx` and `y` of loop `ly` are the same function of
/// their loops' iterations: both induction variables, one value defined
/// above both, or results of equivalent ops of such operands.
static bool sameOfIteration(Value x, scf::ForOp lx, Value y, scf::ForOp ly) {
  bool xIter = x == lx.getInductionVar(), yIter = y == ly.getInductionVar();
  if (xIter || yIter)
    return xIter && yIter;
  if (x == y)
    return !lx->isAncestor(x.getParentRegion()->getParentOp());
  auto rx = dyn_cast<OpResult>(x), ry = dyn_cast<OpResult>(y);
  if (!rx || !ry || rx.getResultNumber() != ry.getResultNumber() ||
      !isIndexComputation(rx.getOwner()))
    return false;
  return OperationEquivalence::isEquivalentTo(
      rx.getOwner(), ry.getOwner(),
      [&](Value a, Value b) { return success(sameOfIteration(a, lx, b, ly)); },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// True when loops `a` and `b` slice iteration j's K/V tile alike: a load
/// for an iteration of one may then be sliced by the other, and one
/// pipeline runs through both where their bounds meet. (Loops whose
/// iterations count visits in one order, or tiles, are alike; a loop that
/// canonicalization folded to one tile and the reroll made count tiles
/// again is not like one that counts visits.)
static bool slicesAlike(FlashKVLoop a, FlashKVLoop b) {
  return sameOfIteration(a.step.getKvStart(), a.loop, b.step.getKvStart(),
                         b.loop);
}

static LogicalResult readLoop(FlashForm &form, FlashKVLoop &l) {
  scf::ForOp loop = l.loop;
  if (!isConstantIntValue(loop.getStep(), 1))
    return loop.emitOpError("is a K/V loop of a flash form; its step must be "
                            "1 (one K/V tile per iteration)");
  Block *body = loop.getBody();
  for (Operation &op : body->without_terminator()) {
    if (auto step = dyn_cast<OnlineAttentionOp>(op)) {
      if (l.step)
        return step.emitOpError("is the second tile step of one K/V loop; "
                                "the kernel runs one step per iteration");
      l.step = step;
      continue;
    }
    if (isa<tensor::ExtractSliceOp>(op) || isIndexComputation(&op))
      continue;
    return op.emitOpError("cannot be lowered in a K/V loop of a flash form: "
                          "only one attnc.online_attention, its K/V slices "
                          "and index computations have a kernel counterpart");
  }
  if (!l.step)
    return loop.emitOpError("is a K/V loop of a flash form without an "
                            "attnc.online_attention step");
  OnlineAttentionOp step = l.step;
  auto iterArgs = loop.getRegionIterArgs();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  if (step.getAcc() != iterArgs[0] || step.getMax() != iterArgs[1] ||
      step.getSum() != iterArgs[2] ||
      yield.getOperands() != ValueRange(step.getResults()))
    return step.emitOpError("must carry the loop's (acc, max, sum) from "
                            "iteration to iteration: it takes the iter_args "
                            "and its results are yielded, in that order");
  if (step.getQuery() != form.querySlice.getResult())
    return step.emitOpError("must read the query tile of its flash form (the "
                            "forall's slice of Q)");
  l.key = step.getKey().getDefiningOp<tensor::ExtractSliceOp>();
  l.value = step.getValue().getDefiningOp<tensor::ExtractSliceOp>();
  if (!l.key || !l.value)
    return step.emitOpError("must read K and V tiles sliced from whole "
                            "tensors");
  if (failed(checkTileSlice(l.key, "K")) ||
      failed(checkTileSlice(l.value, "V")) ||
      failed(checkTileRows(l.key, form.config.getBlockKV(), "K/V", "block_kv",
                           /*tail=*/true)))
    return failure();
  if (form.loops.empty()) {
    form.key = l.key.getSource();
    form.value = l.value.getSource();
  }
  if (l.key.getSource() != form.key || l.value.getSource() != form.value)
    return step.emitOpError("reads other K/V tensors than the other steps of "
                            "its flash form");
  // The tile starts where the step says it does: row t * block_kv, with t
  // the iteration j or an index computation of it in the loop's body.
  using Variable = ValueBoundsConstraintSet::Variable;
  int64_t blockKV = form.config.getBlockKV();
  AffineExpr d0;
  bindDims(loop->getContext(), d0);
  Value tile = loop.getInductionVar();
  if (auto start = step.getKvStart().getDefiningOp<affine::AffineApplyOp>();
      start && start.getMapOperands().size() == 1 &&
      start.getAffineMap() == AffineMap::get(1, 0, d0 * blockKV) &&
      start.getMapOperands()[0] != tile) {
    Value t = start.getMapOperands()[0];
    Operation *def = t.getDefiningOp();
    if (def && def->getBlock() == body && isIndexComputation(def)) {
      tile = t;
      l.tileIsIteration = false;
    }
  }
  Variable expected(AffineMap::get(1, 0, d0 * blockKV), ValueRange{tile});
  for (tensor::ExtractSliceOp s : {l.key, l.value}) {
    OpFoldResult row = s.getMixedOffsets()[rowDim(s)];
    // A ragged batch's tile starts at its sequence's first row plus
    // kv_start: arith.addi(base, kv_start), the base the same in every loop.
    if (rowDim(s) == 0) {
      auto add = definingOpOf<arith::AddIOp>(row);
      Value base =
          add && add.getRhs() == step.getKvStart() ? add.getLhs() : Value();
      if (!base || loop.getRegion().isAncestor(base.getParentRegion()) ||
          (form.kvRowBase && form.kvRowBase != base))
        return s.emitOpError()
               << "must start the K/V tile of iteration j of a ragged batch "
                  "at its sequence's first row plus j * block_kv ("
               << blockKV << "): arith.addi(first row, kv_start)";
      form.kvRowBase = base;
      row = step.getKvStart();
    }
    if (!provablyEqual(Variable(row), expected) ||
        !provablyEqual(Variable(step.getKvStart()), expected))
      return s.emitOpError()
             << "must start the K/V tile of iteration j at row t * block_kv "
                "("
             << blockKV
             << "), as the step's kv_start says, with t = j or an index "
                "computation of j in the loop";
  }
  FailureOr<bool> partial = checkKVRows(l, blockKV, form.seqKV);
  if (failed(partial))
    return failure();
  l.mayBePartial = *partial;
  // One scale and one softmax domain for the whole row.
  if (step.getScale().convertToDouble() != form.scale ||
      step.getRuntimeScale() != form.runtimeScale ||
      step.hasScoreModifier() != form.modified)
    return step.emitOpError("differs from the other steps of its flash form "
                            "in scale, runtime scale or the presence of a "
                            "score modifier; one row's softmax needs one");
  // One dropout mask for the whole probability tensor.
  double p = step.getDropoutProbability()
                 ? step.getDropoutProbability()->convertToDouble()
                 : 0.0;
  if (p != form.dropout || step.getDropoutSeed() != form.dropoutSeed ||
      step.getDropoutOffset() != form.dropoutOffset ||
      step.getDropoutRow() != form.dropoutRow ||
      step.getDropoutRowWords() != form.dropoutRowWords)
    return step.emitOpError("differs from the other steps of its flash form "
                            "in its dropout (probability, seed, offset or "
                            "rows); the kernel draws one mask");
  return success();
}

/// An insert of one (batch, head) tile of rows: [b, h, q0(, 0)] with sizes
/// [1, 1, rows(, d)] and unit strides; in a split-KV partial form
/// (`split`), [s, b, h, q0(, 0)] with sizes [1, 1, 1, rows(, d)].
static LogicalResult checkInsert(tensor::ParallelInsertSliceOp ins,
                                 StringRef what, bool split) {
  SmallVector<OpFoldResult> sizes = ins.getMixedSizes();
  auto dest = cast<RankedTensorType>(ins.getDest().getType());
  // A ragged batch's packed O [T, H, dv] and logsumexp [T, H]: rows of one
  // head.
  bool packedO = what == "O" && dest.getRank() == 3;
  bool packedLse = what != "O" && dest.getRank() == 2;
  if (!split && (packedO || packedLse)) {
    bool ok = ins.hasUnitStride() && isConstantIntValue(sizes[1], 1) &&
              (packedLse || (isConstantIntValue(ins.getMixedOffsets()[2], 0) &&
                             isConstantIntValue(sizes[2], dest.getDimSize(2))));
    if (!ok)
      return ins.emitOpError()
             << "writes the " << what
             << " tile of a ragged flash form; it must write rows of one "
                "head, whole rows, unit strides";
    return success();
  }
  int64_t lead = split ? 1 : 0;
  bool ok = ins.hasUnitStride() && dest.getRank() >= 3 + lead &&
            dest.getRank() <= 4 + lead;
  for (int64_t i = 0; ok && i < 2 + lead; ++i)
    ok = isConstantIntValue(sizes[i], 1);
  if (ok && dest.getRank() == 4 + lead)
    ok = isConstantIntValue(ins.getMixedOffsets()[3 + lead], 0) &&
         isConstantIntValue(sizes[3 + lead], dest.getDimSize(3 + lead));
  if (!ok)
    return ins.emitOpError() << "writes the " << what
                             << " tile of a flash form; it must write one "
                             << (split ? "split, " : "")
                             << "batch and one head, whole rows, unit strides";
  return success();
}

/// The splat `value` of a tensor (the recurrence's initial state): a
/// tensor.splat of a constant, or, once canonicalization folded that for a
/// static tile, a splat dense constant.
bool attnc::isSplatOf(Value v, double value) {
  if (auto splat = v.getDefiningOp<tensor::SplatOp>()) {
    auto c = splat.getInput().getDefiningOp<arith::ConstantFloatOp>();
    return c && c.value().convertToDouble() == value;
  }
  DenseFPElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return false;
  return dense.getSplatValue<APFloat>().convertToDouble() == value;
}

/// A step of the recurrence that sits in the forall's body instead of in a
/// K/V loop (canonicalization inlines loops of one iteration, which static
/// shapes produce) goes back into a loop of one iteration over its tile.
static LogicalResult rerollStep(OnlineAttentionOp step, int64_t blockKV) {
  std::optional<int64_t> kv0 = getConstantIntValue(step.getKvStart());
  // Canonicalization also makes a full tile's slice static and casts it back
  // to the step's dynamic tile type.
  auto sliceOf = [](Value v) {
    if (auto cast = v.getDefiningOp<tensor::CastOp>())
      v = cast.getSource();
    return v.getDefiningOp<tensor::ExtractSliceOp>();
  };
  tensor::ExtractSliceOp key = sliceOf(step.getKey());
  tensor::ExtractSliceOp value = sliceOf(step.getValue());
  if (!kv0 || *kv0 % blockKV != 0 || !key || !value ||
      !isConstantIntValue(key.getMixedOffsets()[2], *kv0) ||
      !isConstantIntValue(value.getMixedOffsets()[2], *kv0))
    return step.emitOpError()
           << "is a step of a flash form outside a K/V loop; the back-end "
              "takes that only for one constant K/V tile (kv_start a "
              "multiple of block_kv, "
           << blockKV << ", that K and V are sliced at)";
  IRRewriter b(step);
  Location loc = step.getLoc();
  int64_t tile = *kv0 / blockKV;
  Value lb = arith::ConstantIndexOp::create(b, loc, tile);
  Value ub = arith::ConstantIndexOp::create(b, loc, tile + 1);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, one,
      ValueRange{step.getAcc(), step.getMax(), step.getSum()},
      [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
        AffineExpr d0;
        bindDims(nb.getContext(), d0);
        Value start = affine::AffineApplyOp::create(
            nb, l, AffineMap::get(1, 0, d0 * blockKV), ValueRange{j});
        // The slice yields the step's tile type: a dynamic row count stays
        // an SSA size (one value for K and V), as in a loop over several
        // tiles.
        llvm::SmallDenseMap<int64_t, Value> rowValues;
        auto slice = [&](tensor::ExtractSliceOp s, Type tileType) {
          SmallVector<OpFoldResult> offsets = s.getMixedOffsets();
          offsets[2] = start;
          SmallVector<OpFoldResult> sizes = s.getMixedSizes();
          if (cast<RankedTensorType>(tileType).isDynamicDim(0))
            if (std::optional<int64_t> rows = getConstantIntValue(sizes[2])) {
              Value &v = rowValues[*rows];
              if (!v)
                v = arith::ConstantIndexOp::create(nb, l, *rows);
              sizes[2] = v;
            }
          return tensor::ExtractSliceOp::create(
              nb, l, cast<RankedTensorType>(tileType), s.getSource(), offsets,
              sizes, s.getMixedStrides());
        };
        IRMapping map;
        map.map(step.getKey(), slice(key, step.getKey().getType()).getResult());
        map.map(step.getValue(),
                slice(value, step.getValue().getType()).getResult());
        map.map(step.getAcc(), carried[0]);
        map.map(step.getMax(), carried[1]);
        map.map(step.getSum(), carried[2]);
        map.map(step.getKvStart(), start);
        Operation *inLoop = nb.clone(*step.getOperation(), map);
        scf::YieldOp::create(nb, l, inLoop->getResults());
      });
  // What fed only the step goes, each op once: K and V may be one slice
  // (attention of a tensor with itself, after CSE), casts come first.
  llvm::SetVector<Operation *> feeders;
  for (Value v : {step.getKey(), step.getValue()})
    feeders.insert(v.getDefiningOp());
  feeders.insert(key);
  feeders.insert(value);
  b.replaceOp(step, loop.getResults());
  for (Operation *op : feeders)
    if (op->use_empty())
      b.eraseOp(op);
  return success();
}

LogicalResult attnc::rerollFlashForm(scf::ForallOp forall) {
  auto config = forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
  if (!config)
    return success(); // analyzeFlashForm names what is missing
  SmallVector<OnlineAttentionOp> bare;
  for (auto step : forall.getBody()->getOps<OnlineAttentionOp>())
    bare.push_back(step);
  for (OnlineAttentionOp step : bare)
    if (failed(rerollStep(step, config.getBlockKV())))
      return failure();
  return success();
}

FailureOr<FlashForm> attnc::analyzeFlashForm(scf::ForallOp forall) {
  FlashForm form;
  form.forall = forall;
  form.config = forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
  if (!form.config)
    return forall.emitOpError("holds attnc.online_attention but has no "
                              "'attnc.flash_config' (run "
                              "--attnc-online-softmax, which chooses it)");
  if (!forall.getMapping())
    return forall.emitOpError("of a flash form needs a mapping of its "
                              "dimensions to GPU blocks");
  auto inParallel = forall.getTerminator();
  SmallVector<tensor::ParallelInsertSliceOp> inserts;
  for (Operation &op : inParallel.getYieldingOps())
    if (auto ins = dyn_cast<tensor::ParallelInsertSliceOp>(op))
      inserts.push_back(ins);
  // The logsumexp output is dropped by canonicalization when nothing reads
  // it; the kernel then writes it for the rows of O (see FlashForm).
  if (forall.getNumResults() != inserts.size() || inserts.empty() ||
      inserts.size() > 2)
    return forall.emitOpError("of a flash form must produce O and optionally "
                              "the logsumexp, each written by one "
                              "tensor.parallel_insert_slice");
  form.outInsert = inserts[0];
  form.finalize =
      form.outInsert.getSource().getDefiningOp<OnlineAttentionFinalizeOp>();
  if (inserts.size() == 2)
    form.lseInsert = inserts[1];
  if (!form.finalize ||
      form.outInsert.getSource() != form.finalize.getResult() ||
      form.outInsert.getDest() != forall.getRegionIterArgs()[0] ||
      (form.lseInsert &&
       (form.lseInsert.getSource() != form.finalize.getLogsumexp() ||
        form.lseInsert.getDest() != forall.getRegionIterArgs()[1])))
    return forall.emitOpError("of a flash form must insert the results of "
                              "one attnc.online_attention_finalize: O into "
                              "its first output, the logsumexp (if kept) "
                              "into its second");
  // A split-KV partial form writes f32 partials with a split index first.
  bool split =
      cast<RankedTensorType>(form.outInsert.getDest().getType()).getRank() == 5;
  if (failed(checkInsert(form.outInsert, "O", split)) ||
      (form.lseInsert &&
       failed(checkInsert(form.lseInsert, "logsumexp", split))))
    return failure();
  if (split) {
    form.splitIndex = form.outInsert.getMixedOffsets()[0];
    if (!form.lseInsert ||
        form.lseInsert.getMixedOffsets()[0] != form.splitIndex)
      return form.outInsert.emitOpError(
          "writes a split-KV partial output; the form must write the "
          "partial logsumexp too, at the same split index");
  }

  // The recurrence, from the finalize back to its initial state.
  Value acc = form.finalize.getAcc(), max = form.finalize.getMax(),
        sum = form.finalize.getSum();
  SmallVector<scf::ForOp> loops;
  while (scf::ForOp loop = producingLoop(acc, max, sum)) {
    loops.push_back(loop);
    acc = loop.getInitArgs()[0];
    max = loop.getInitArgs()[1];
    sum = loop.getInitArgs()[2];
  }
  if (!isSplatOf(acc, 0.0) || !isSplatOf(sum, 0.0) ||
      !isSplatOf(max, -std::numeric_limits<double>::infinity()))
    return form.finalize.emitOpError(
        "must end a recurrence of K/V loops that starts from acc = 0, max = "
        "-inf, sum = 0 (splats)");
  if (loops.empty())
    return form.finalize.emitOpError("ends a flash form without a K/V loop");
  std::reverse(loops.begin(), loops.end());

  OnlineAttentionOp first =
      *loops.front().getBody()->getOps<OnlineAttentionOp>().begin();
  form.querySlice = first.getQuery().getDefiningOp<tensor::ExtractSliceOp>();
  if (!form.querySlice || form.querySlice->getParentOp() != forall)
    return first.emitOpError("must read a query tile sliced from Q in the "
                             "body of its flash form");
  if (failed(checkTileSlice(form.querySlice, "Q")) ||
      failed(checkTileRows(form.querySlice, form.config.getBlockQ(), "Q",
                           "block_q")))
    return failure();
  form.query = form.querySlice.getSource();
  if (auto collapse = form.query.getDefiningOp<tensor::CollapseShapeOp>()) {
    auto expand = collapse.getSrc().getDefiningOp<tensor::ExpandShapeOp>();
    using Groups = SmallVector<ReassociationIndices>;
    if (!expand || expand.getSrcType().getRank() != 4 ||
        expand.getReassociationIndices() != Groups{{0}, {1, 2}, {3}, {4}} ||
        collapse.getReassociationIndices() != Groups{{0}, {1}, {2, 3}, {4}})
      return collapse.emitOpError(
          "reshapes the Q of a flash form in a way the kernel cannot "
          "address; it takes the packed GQA view of --attnc-pack-gqa "
          "([B, H, Sq, d] expanded to [B, Hkv, G, Sq, d], collapsed to "
          "[B, Hkv, G * Sq, d])");
    // The kernel addresses a group's heads with G in its code.
    int64_t group = expand.getResultType().getDimSize(2);
    if (ShapedType::isDynamic(group) || group < 1)
      return expand.emitOpError(
          "packs the Q of a flash form in GQA groups of a size known only at "
          "run time; the kernel needs the group size G when compiled "
          "(--attnc-pack-gqa group-size)");
    form.packedSource = expand.getSrc();
    form.packedGroup = group;
    // The kernel writes O and the logsumexp with the packing: whatever
    // reads them must unpack them.
    for (Value r : forall.getResults())
      for (Operation *user : r.getUsers()) {
        auto unpack = dyn_cast<tensor::ExpandShapeOp>(user);
        if (!unpack || !llvm::all_of(unpack->getUsers(), [](Operation *u) {
              return isa<tensor::CollapseShapeOp>(u);
            }))
          return user->emitOpError(
              "reads a packed GQA flash form's output without unpacking it "
              "(tensor.expand_shape then tensor.collapse_shape back to "
              "[B, H, Sq, ...]); the kernel writes it unpacked");
      }
  }
  // (K is the source of the first step's K tile; readLoop checks that.)
  auto firstKey = first.getKey().getDefiningOp<tensor::ExtractSliceOp>();
  if (firstKey &&
      failed(flash_reads::readKVLengths(form, firstKey.getSource())))
    return failure();
  auto q = cast<RankedTensorType>(form.query.getType());
  form.headDim = q.getDimSize(q.getRank() - 1);
  form.elementType = q.getElementType();
  form.scale = first.getScale().convertToDouble();
  form.runtimeScale = first.getRuntimeScale();
  form.modified = first.hasScoreModifier();
  if (first.hasDropout()) {
    form.dropout = first.getDropoutProbability()->convertToDouble();
    form.dropoutSeed = first.getDropoutSeed();
    form.dropoutOffset = first.getDropoutOffset();
    form.dropoutRow = first.getDropoutRow();
    form.dropoutRowWords = first.getDropoutRowWords();
  }
  for (scf::ForOp loop : loops) {
    FlashKVLoop l;
    l.loop = loop;
    if (failed(readLoop(form, l)))
      return failure();
    l.continuesPrevious =
        !form.loops.empty() && slicesAlike(form.loops.back(), l) &&
        loop.getLowerBound() == form.loops.back().loop.getUpperBound();
    form.loops.push_back(l);
  }

  form.keyPages = form.key.getDefiningOp<PagedKVOp>();
  form.valuePages = form.value.getDefiningOp<PagedKVOp>();
  if (form.keyPages || form.valuePages) {
    PagedKVOp k = form.keyPages, v = form.valuePages;
    if (!k || !v || k.getBlockTable() != v.getBlockTable() ||
        k.getPageSize() != v.getPageSize())
      return (k ? k : v).emitOpError(
          "is one of the K/V tensors of a flash form; the kernel reads a "
          "paged cache when K and V are both paged, through one block table "
          "with one page size");
  }

  if (form.key.getType() &&
      cast<RankedTensorType>(form.key.getType()).getRank() == 3) {
    if (failed(flash_reads::readRaggedRows(form, first)))
      return failure();
  }

  if (failed(flash_reads::readRegionTensors(form)))
    return failure();
  // Dropout's rows are consecutive query rows of one head: a packed tile's
  // or a ragged batch's are not.
  if (form.dropout > 0.0 && (form.packedSource || form.ragged))
    return first.emitOpError()
           << "drops probabilities in a "
           << (form.ragged ? "ragged batch" : "packed GQA flash form")
           << "; the kernel numbers dropout's rows by one head's "
              "consecutive query rows";

  // Everything else in the forall body must be something the kernel
  // rebuilds: nothing is silently dropped.
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && llvm::is_contained(loops, loop))
      continue;
    if (isa<tensor::ExtractSliceOp, tensor::SplatOp, OnlineAttentionFinalizeOp>(
            op) ||
        isIndexComputation(&op) ||
        llvm::is_contained(form.blockReads, dyn_cast<tensor::ExtractOp>(op)) ||
        llvm::is_contained(form.idBounds, dyn_cast<IdTileBoundsOp>(op)))
      continue;
    return op.emitOpError("cannot be lowered in a flash form: the kernel "
                          "has no counterpart for it");
  }
  return form;
}
