//===- BackwardForm.cpp - the backward flash form as the back-end reads it ===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Walks the terminator of the forall back to the loops: the dQ sum and the
// dK/dV casts name the accumulators, which are the results of the last query
// loop (or of the group loop holding the query loops), whose inits chain
// back to the zero splats the accumulation starts from.
//
//===----------------------------------------------------------------------===//

#include "BackwardForm.h"
#include "FlashForm.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace attnc;

bool attnc::isBackwardForm(scf::ForallOp forall) {
  return forall
      .walk([](OnlineAttentionGradOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

namespace {
class BackwardFormReader {
public:
  explicit BackwardFormReader(scf::ForallOp forall) : forall(forall) {
    form.forall = forall;
  }
  FailureOr<BackwardForm> read();

private:
  InFlightDiagnostic fail(Operation *op, const Twine &rule) {
    return op->emitOpError() << "in a backward flash form: " << rule;
  }
  /// The query loops whose last results are `dk`, `dv`, `dq`, in
  /// execution order, down to the values they start from.
  LogicalResult readQueryLoops(Value dk, Value dv, Value dq, Block *owner,
                               SmallVectorImpl<Value> &inits);
  LogicalResult readStep(BackwardQueryLoop &l);

  scf::ForallOp forall;
  BackwardForm form;
};
} // namespace

LogicalResult BackwardFormReader::readStep(BackwardQueryLoop &l) {
  // A query loop of one iteration that canonicalization folded away
  // leaves its step in the enclosing block.
  Block *body = l.loop ? l.loop.getBody() : l.step->getBlock();
  if (l.loop) {
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    if (l.loop.getNumRegionIterArgs() != 3 ||
        getConstantIntValue(l.loop.getStep()) != 1)
      return fail(l.loop, "a query loop steps by 1 and carries (dK, dV, dQ)");
    l.accumulate = yield.getOperand(2).getDefiningOp<AccumulateOp>();
    l.step = yield.getOperand(0).getDefiningOp<OnlineAttentionGradOp>();
    if (!l.step || !l.accumulate ||
        yield.getOperand(1) != l.step.getNewValueAcc() ||
        yield.getOperand(0) != l.step.getNewKeyAcc() ||
        l.accumulate.getTile() != l.step.getQueryGrad() ||
        l.accumulate.getDest() != l.loop.getRegionIterArg(2) ||
        l.step.getKeyAcc() != l.loop.getRegionIterArg(0) ||
        l.step.getValueAcc() != l.loop.getRegionIterArg(1))
      return fail(l.loop, "a query loop's body is one "
                          "attnc.online_attention_grad whose dQ tile one "
                          "attnc.accumulate adds to the carried "
                          "contributions");
    for (Operation &op : body->without_terminator())
      if (&op != l.step && &op != l.accumulate &&
          !isa<tensor::ExtractSliceOp, arith::ConstantOp>(op) &&
          !(isMemoryEffectFree(&op) && op.getNumRegions() == 0 &&
            llvm::all_of(op.getResultTypes(), [](Type t) {
              // (Comparisons of index values choose a visit's tile.)
              return t.isIndex() || t.isInteger(1);
            })))
        return fail(&op, "only slices and index arithmetic may sit next to "
                         "the step in a query loop");
  }
  auto slice = [&](Value v, Value &whole, StringRef name,
                   tensor::ExtractSliceOp &out) -> LogicalResult {
    out = v.getDefiningOp<tensor::ExtractSliceOp>();
    if (!out || !out.hasUnitStride() || out->getBlock() != body)
      return fail(l.step, "operand '" + name +
                              "' must be a unit-stride slice taken in its "
                              "query loop");
    if (whole && whole != out.getSource())
      return fail(l.step,
                  "every step's '" + name + "' must slice the same tensor");
    whole = out.getSource();
    return success();
  };
  if (failed(slice(l.step.getQuery(), form.query, "query", l.query)) ||
      failed(slice(l.step.getOutGrad(), form.outGrad, "out_grad", l.outGrad)) ||
      failed(slice(l.step.getLogsumexp(), form.logsumexp, "logsumexp",
                   l.logsumexp)) ||
      failed(slice(l.step.getDelta(), form.delta, "delta", l.delta)))
    return failure();
  if (l.step.getKey() != form.keySlice.getResult() ||
      l.step.getValue() != form.valueSlice.getResult())
    return fail(l.step, "every step reads the forall's K and V tiles");
  // (Once here: the kernel clones the regions per score.) Reads of tensors
  // stay in the regions: the backward kernel loads them per score.
  for (auto [r, lead] :
       {std::pair(&l.step.getMask(), 0u), std::pair(&l.step.getScore(), 1u),
        std::pair(&l.step.getScoreGrad(), 1u)})
    if (failed(flash_reads::readRegionElements(
            *r, lead, cast<RankedTensorType>(form.query.getType()),
            cast<RankedTensorType>(form.key.getType()), "", form.regionTensors,
            form.elementReads)))
      return failure();
  double scale = l.step.getScale().convertToDouble();
  if (&l == &form.loops.front()) {
    form.scale = scale;
    form.runtimeScale = l.step.getRuntimeScale();
  } else if (scale != form.scale ||
             l.step.getRuntimeScale() != form.runtimeScale) {
    return fail(l.step, "every step has the same scale and run-time scale");
  }
  return success();
}

LogicalResult
BackwardFormReader::readQueryLoops(Value dk, Value dv, Value dq, Block *owner,
                                   SmallVectorImpl<Value> &inits) {
  SmallVector<BackwardQueryLoop> reversed;
  while (true) {
    BackwardQueryLoop l;
    if (auto loop = dk.getDefiningOp<scf::ForOp>()) {
      if (loop->getBlock() != owner || dv != loop.getResult(1) ||
          dq != loop.getResult(2) || dk != loop.getResult(0))
        return fail(loop, "the query loops pass (dK, dV, dQ) from one to "
                          "the next");
      l.loop = loop;
      dk = loop.getInitArgs()[0];
      dv = loop.getInitArgs()[1];
      dq = loop.getInitArgs()[2];
    } else if (auto step = dk.getDefiningOp<OnlineAttentionGradOp>()) {
      l.step = step;
      l.accumulate = dq.getDefiningOp<AccumulateOp>();
      if (step->getBlock() != owner || dv != step.getNewValueAcc() ||
          !l.accumulate || l.accumulate.getTile() != step.getQueryGrad())
        return fail(step, "a step outside a query loop (one of a single "
                          "iteration, folded) passes (dK, dV, dQ) on as a "
                          "loop would");
      dk = step.getKeyAcc();
      dv = step.getValueAcc();
      dq = l.accumulate.getDest();
    } else {
      break;
    }
    reversed.push_back(l);
  }
  if (reversed.empty())
    return fail(forall, "has no query loop: dK and dV must be the results of "
                        "scf.for loops of attnc.online_attention_grad steps");
  form.loops.append(reversed.rbegin(), reversed.rend());
  for (BackwardQueryLoop &l : form.loops)
    if (failed(readStep(l)))
      return failure();
  inits.assign({dk, dv, dq});
  return success();
}

FailureOr<BackwardForm> BackwardFormReader::read() {
  form.config = forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
  if (!form.config)
    return fail(forall, "the forall needs an attnc.flash_config");
  if (!forall.getMapping() || forall.getRank() != 3 ||
      forall.getNumResults() != 3)
    return fail(forall, "the forall has three dimensions mapped to blocks "
                        "and three results (dQ, dK, dV)");
  if (!isSplatOf(forall.getOutputs()[0], 0.0))
    return fail(forall, "dQ (the first shared output) must start at 0: "
                        "every K/V tile adds to it");
  auto ops = forall.getTerminator().getYieldingOps();
  SmallVector<Operation *> terms;
  for (Operation &op : ops)
    terms.push_back(&op);
  ValueRange outs = forall.getRegionIterArgs();
  if (terms.size() != 3 || !isa<ParallelAccumulateOp>(terms[0]) ||
      !isa<tensor::ParallelInsertSliceOp>(terms[1]) ||
      !isa<tensor::ParallelInsertSliceOp>(terms[2]))
    return fail(forall, "the terminator accumulates dQ and inserts dK and dV");
  form.dqAccumulate = cast<ParallelAccumulateOp>(terms[0]);
  form.dkInsert = cast<tensor::ParallelInsertSliceOp>(terms[1]);
  form.dvInsert = cast<tensor::ParallelInsertSliceOp>(terms[2]);
  if (form.dqAccumulate.getDest() != outs[0] ||
      form.dkInsert.getDest() != outs[1] || form.dvInsert.getDest() != outs[2])
    return fail(forall, "dQ, dK and dV go to the first, second and third "
                        "shared outputs");
  auto dkCast = form.dkInsert.getSource().getDefiningOp<CastOp>();
  auto dvCast = form.dvInsert.getSource().getDefiningOp<CastOp>();
  if (!dkCast || !dvCast)
    return fail(forall, "dK and dV are written as attnc.cast of their f32 "
                        "accumulators");
  Value dk = dkCast.getInput(), dv = dvCast.getInput(),
        dq = form.dqAccumulate.getSource();

  // The K/V tiles, from the first step (readStep checks every step).
  Block *body = forall.getBody();
  SmallVector<Value> inits;
  // A loop holding loops is the head loop; otherwise dK comes straight
  // from the last query loop (or its folded step).
  scf::ForOp outer = dk.getDefiningOp<scf::ForOp>();
  bool grouped = false;
  if (outer)
    outer.getBody()->walk([&](scf::ForOp) { grouped = true; });
  if (grouped) {
    form.groupLoop = outer;
    if (outer->getBlock() != body || outer.getNumRegionIterArgs() != 3 ||
        dv != outer.getResult(1) || dq != outer.getResult(2) ||
        !matchPattern(outer.getLowerBound(), m_Zero()) ||
        !matchPattern(outer.getStep(), m_One()))
      return fail(outer, "the loop over a group's query heads counts from 0 "
                         "in steps of 1 and carries (dK, dV, dQ)");
  }
  OnlineAttentionGradOp first;
  forall.walk([&](OnlineAttentionGradOp op) {
    first = op;
    return WalkResult::interrupt();
  });
  form.keySlice = first.getKey().getDefiningOp<tensor::ExtractSliceOp>();
  form.valueSlice = first.getValue().getDefiningOp<tensor::ExtractSliceOp>();
  if (!form.keySlice || !form.valueSlice || form.keySlice->getBlock() != body ||
      form.valueSlice->getBlock() != body || !form.keySlice.hasUnitStride() ||
      !form.valueSlice.hasUnitStride())
    return fail(first, "K and V must be unit-stride slices taken once per "
                       "iteration of the forall");
  form.key = form.keySlice.getSource();
  form.value = form.valueSlice.getSource();

  if (form.groupLoop) {
    auto yield = cast<scf::YieldOp>(form.groupLoop.getBody()->getTerminator());
    SmallVector<Value> loopInits;
    if (failed(readQueryLoops(yield.getOperand(0), yield.getOperand(1),
                              yield.getOperand(2), form.groupLoop.getBody(),
                              loopInits)))
      return failure();
    for (auto [init, arg] :
         llvm::zip(loopInits, form.groupLoop.getRegionIterArgs()))
      if (init != arg)
        return fail(form.loops.front().loop,
                    "the first query loop of a head starts from the head "
                    "loop's accumulators");
    inits.assign(form.groupLoop.getInitArgs().begin(),
                 form.groupLoop.getInitArgs().end());
  } else if (failed(readQueryLoops(dk, dv, dq, body, inits))) {
    return failure();
  }
  for (Value init : inits)
    if (!isSplatOf(init, 0.0))
      return fail(forall, "dK, dV and the dQ contributions start at 0");

  auto kType = cast<RankedTensorType>(form.key.getType());
  form.headDim = kType.getDimSize(3);
  form.elementType = kType.getElementType();
  if (cast<RankedTensorType>(form.query.getType()).getDimSize(3) !=
      form.headDim)
    return fail(first, "Q and K have the same head dimension");
  return form;
}

FailureOr<BackwardForm> attnc::analyzeBackwardForm(scf::ForallOp forall) {
  return BackwardFormReader(forall).read();
}
