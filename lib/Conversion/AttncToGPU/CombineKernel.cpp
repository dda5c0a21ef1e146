//===- CombineKernel.cpp - split-KV combine form to a kernel -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The combine form is read as it is written: one K/V-split loop whose step
// merges the slices of the partials at the loop's index into (acc, max,
// sum) from 0 / -inf / 0, then the finalize and the inserts. The kernel
// runs that recurrence for each (row, column) of the block's row tile, one
// column per thread of each part, the parts taking every P-th split and
// merging their states by the same rule (the merge is associative): the
// partials are a few KiB per row, so the kernel is bound by each thread's
// chain of dependent loads and merges, which the parts shorten. On sm_90 it
// waits for the partial kernel in griddepcontrol.wait and is launched
// programmatically. The index values (the tile's first row, its rows, the
// split count) are rebuilt from the block indices and the size parameters
// by cloning the form's own computation.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/CombineKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "FlashForm.h"
#include "KernelValues.h"

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include "llvm/ADT/StringSet.h"

#include <limits>

using namespace mlir;
using namespace attnc;

namespace {

/// Lanes per part (one cell each per round) and parts splitting the splits:
/// kCombineLanes * kCombineParts threads per block. Four parts shorten each
/// thread's serial chain of loads and merges (the combine is latency-bound);
/// their 512-thread blocks would take two waves on grids past four blocks
/// per SM, which only one split makes (B >= 32 at short caches), and there
/// hosts run the function's unsplit twin instead of the combine.
constexpr int64_t kCombineLanes = 128;
constexpr int64_t kCombineParts = 4;
constexpr int64_t kCombineThreads = kCombineLanes * kCombineParts;
/// Shared memory: the states of parts 1..P-1, three words per lane.
constexpr int64_t kStateWords = (kCombineParts - 1) * 3 * kCombineLanes;
constexpr const char *kSplits = "splits";

/// The parts of a combine form.
struct CombineForm {
  scf::ForallOp forall;
  scf::ForOp loop;
  OnlineAttentionMergeOp merge;
  tensor::ExtractSliceOp outSlice, lseSlice;
  OnlineAttentionFinalizeOp finalize;
  tensor::ParallelInsertSliceOp outInsert, lseInsert;
  /// The whole partials and O (the forall's first output).
  Value outPartial, lsePartial, out;
  int64_t dv;
};

/// A slice [s, b, h, q0(, 0)] of sizes [1, 1, 1, rows(, d)] of a partial.
LogicalResult checkPartialSlice(tensor::ExtractSliceOp s, Value split,
                                int64_t rank, StringRef what) {
  SmallVector<OpFoldResult> sizes = s.getMixedSizes();
  bool ok = s.getSourceType().getRank() == rank && s.hasUnitStride() &&
            s.getMixedOffsets()[0] == OpFoldResult(split);
  for (int64_t i = 0; ok && i < 3; ++i)
    ok = isConstantIntValue(sizes[i], 1);
  if (ok && rank == 5)
    ok = isConstantIntValue(s.getMixedOffsets()[4], 0) &&
         isConstantIntValue(sizes[4], s.getSourceType().getDimSize(4));
  if (!ok)
    return s.emitOpError() << "reads the " << what
                           << " of a combine form; it must slice one split "
                              "(the loop's index), one batch and one head, "
                              "whole rows, unit strides";
  return success();
}

FailureOr<CombineForm> analyzeCombineForm(scf::ForallOp forall) {
  CombineForm f;
  f.forall = forall;
  if (!forall.getMapping() || forall.getRank() != 3)
    return forall.emitOpError("of a combine form must be 3-D (batch, head, "
                              "row tile) and mapped to GPU blocks");
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (f.loop)
        return loop.emitOpError("is a second loop of a combine form");
      f.loop = loop;
    } else if (auto fin = dyn_cast<OnlineAttentionFinalizeOp>(op)) {
      f.finalize = fin;
    } else if (!isa<tensor::SplatOp>(op) && !isIndexComputation(&op)) {
      return op.emitOpError("cannot be lowered in a combine form: the kernel "
                            "has no counterpart for it");
    }
  }
  if (!f.loop || !f.finalize || f.loop.getNumResults() != 3 ||
      f.finalize.getAcc() != f.loop.getResult(0) ||
      f.finalize.getMax() != f.loop.getResult(1) ||
      f.finalize.getSum() != f.loop.getResult(2))
    return forall.emitOpError("of a combine form must finalize the (acc, "
                              "max, sum) of one loop over the splits");
  auto inits = f.loop.getInitArgs();
  if (!isSplatOf(inits[0], 0.0) || !isSplatOf(inits[2], 0.0) ||
      !isSplatOf(inits[1], -std::numeric_limits<double>::infinity()))
    return f.loop.emitOpError("of a combine form must start from acc = 0, "
                              "max = -inf, sum = 0 (splats)");
  if (!isConstantIntValue(f.loop.getStep(), 1))
    return f.loop.emitOpError("of a combine form must visit every split "
                              "(step 1)");
  for (Operation &op : f.loop.getBody()->without_terminator()) {
    if (auto m = dyn_cast<OnlineAttentionMergeOp>(op)) {
      if (f.merge)
        return m.emitOpError("is a second merge of one combine loop");
      f.merge = m;
    } else if (!isa<tensor::ExtractSliceOp>(op) && !isIndexComputation(&op)) {
      return op.emitOpError("cannot be lowered in a combine loop: only one "
                            "attnc.online_attention_merge and its slices have "
                            "a kernel counterpart");
    }
  }
  auto args = f.loop.getRegionIterArgs();
  auto yield = cast<scf::YieldOp>(f.loop.getBody()->getTerminator());
  if (!f.merge || f.merge.getAcc() != args[0] || f.merge.getMax() != args[1] ||
      f.merge.getSum() != args[2] ||
      yield.getOperands() != ValueRange(f.merge.getResults()))
    return f.loop.emitOpError("of a combine form must carry (acc, max, sum) "
                              "through one attnc.online_attention_merge");
  f.outSlice = f.merge.getPartial().getDefiningOp<tensor::ExtractSliceOp>();
  f.lseSlice = f.merge.getPartialLse().getDefiningOp<tensor::ExtractSliceOp>();
  if (!f.outSlice || !f.lseSlice)
    return f.merge.emitOpError("of a combine form must merge slices of the "
                               "partials");
  Value s = f.loop.getInductionVar();
  if (failed(checkPartialSlice(f.outSlice, s, 5, "partial output")) ||
      failed(checkPartialSlice(f.lseSlice, s, 4, "partial logsumexp")))
    return failure();
  f.outPartial = f.outSlice.getSource();
  f.lsePartial = f.lseSlice.getSource();
  f.dv = f.outSlice.getSourceType().getDimSize(4);
  for (Operation &op : forall.getTerminator().getYieldingOps()) {
    auto ins = dyn_cast<tensor::ParallelInsertSliceOp>(op);
    if (ins && ins.getSource() == f.finalize.getResult() &&
        ins.getDest() == forall.getRegionIterArgs()[0])
      f.outInsert = ins;
    else if (ins && ins.getSource() == f.finalize.getLogsumexp() &&
             forall.getNumResults() == 2 &&
             ins.getDest() == forall.getRegionIterArgs()[1])
      f.lseInsert = ins;
    else
      return op.emitOpError("cannot be lowered in a combine form: it must "
                            "write the finalize's O and logsumexp into the "
                            "forall's outputs");
  }
  if (!f.outInsert || (forall.getNumResults() == 2 && !f.lseInsert))
    return forall.emitOpError("of a combine form must write O (and the "
                              "logsumexp, when it has that output)");
  // The rows the slices read are the rows the inserts write.
  auto rowsOf = [](OffsetSizeAndStrideOpInterface op, int64_t first) {
    return std::make_pair(op.getMixedOffsets()[first],
                          op.getMixedSizes()[first]);
  };
  auto rows = rowsOf(f.outInsert, 2);
  for (auto [op, first] :
       {std::make_pair(OffsetSizeAndStrideOpInterface(f.outSlice), 3),
        std::make_pair(OffsetSizeAndStrideOpInterface(f.lseSlice), 3),
        std::make_pair(OffsetSizeAndStrideOpInterface(
                           f.lseInsert ? f.lseInsert : f.outInsert),
                       2)})
    if (rowsOf(op, first) != rows ||
        op.getMixedOffsets()[first - 2] != f.outInsert.getMixedOffsets()[0] ||
        op.getMixedOffsets()[first - 1] != f.outInsert.getMixedOffsets()[1])
      return op->emitOpError("of a combine form must read and write the "
                             "same (batch, head, rows) as the O insert");
  f.out = forall.getOutputs()[0];
  auto outType = cast<RankedTensorType>(f.out.getType());
  if (outType.getRank() != 4 || outType.getDimSize(3) != f.dv ||
      !(outType.getElementType().isBF16() || outType.getElementType().isF16()))
    return forall.emitOpError("of a combine form must write a [B, H, Sq, dv] "
                              "O of bf16 or f16 with the partials' dv");
  return f;
}

class CombineKernelBuilder {
public:
  CombineKernelBuilder(OpBuilder &b, CombineForm &form, StringRef name,
                       bool gridDependency, KernelABI &abi)
      : b(b), form(form), loc(form.forall.getLoc()), name(name),
        gridDependency(gridDependency), abi(abi),
        values(b, loc, [this](Value v) { return leafValue(v); }) {}

  FailureOr<gpu::GPUFuncOp> build(gpu::GPUModuleOp module);

private:
  /// The symbol `v` (an index value above the forall) stands for: the split
  /// count, or an extent of O or the partials.
  std::optional<std::string> symbolOf(Value v);
  FailureOr<Value> leafValue(Value v);
  Value param(StringRef n) { return func.getArgument(paramIndex.lookup(n)); }
  Value paramIndex_(StringRef n) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), param(n));
  }
  void planParameters();
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value offsetOf(ArrayRef<Value> coords, StringRef tensor) {
    Value off = idx(0);
    for (auto [d, c] : llvm::enumerate(coords))
      off = arith::AddIOp::create(
          b, loc, off,
          arith::MulIOp::create(
              b, loc, c, paramIndex_((tensor + ".stride" + Twine(d)).str())));
    return off;
  }

  OpBuilder &b;
  CombineForm &form;
  Location loc;
  StringRef name;
  bool gridDependency;
  KernelABI &abi;
  KernelValues values;
  gpu::GPUFuncOp func;
  llvm::StringMap<unsigned> paramIndex;
  llvm::StringSet<> dynamicSymbols;
};

std::optional<std::string> CombineKernelBuilder::symbolOf(Value v) {
  if (v.getDefiningOp<KVSplitCountOp>())
    return std::string(kSplits);
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim || !dim.getConstantIndex())
    return std::nullopt;
  using Variable = ValueBoundsConstraintSet::Variable;
  auto equal = [&](Value t, int64_t d) {
    FailureOr<bool> eq =
        ValueBoundsConstraintSet::areEqual(Variable(v), Variable(t, d));
    return succeeded(eq) && *eq;
  };
  for (int64_t d = 0; d < 3; ++d)
    if (cast<RankedTensorType>(form.out.getType()).isDynamicDim(d) &&
        equal(form.out, d))
      return std::string(kQuerySymbols[d]);
  if (equal(form.outPartial, 0))
    return std::string(kSplits);
  return std::nullopt;
}

FailureOr<Value> CombineKernelBuilder::leafValue(Value v) {
  if (!v.getDefiningOp<KVSplitCountOp>() && !v.getDefiningOp<tensor::DimOp>())
    return Value();
  std::optional<std::string> sym = symbolOf(v);
  if (!sym || !paramIndex.count(*sym))
    return emitError(v.getLoc())
           << "is an extent the combine kernel has no parameter for; only "
              "the split count and the batch, head and row extents of O are";
  return paramIndex_(*sym);
}

/// o_partial, lse_partial (inputs), o, lse (outputs), the dynamic sizes and
/// every outer stride.
void CombineKernelBuilder::planParameters() {
  auto outType = cast<RankedTensorType>(form.out.getType());
  std::vector<ABIDim> rows;
  for (int64_t d = 0; d < 3; ++d) {
    if (outType.isDynamicDim(d)) {
      rows.push_back(std::string(kQuerySymbols[d]));
      dynamicSymbols.insert(kQuerySymbols[d]);
    } else {
      rows.push_back(outType.getDimSize(d));
    }
  }
  std::vector<ABIDim> partRows = {std::string(kSplits)};
  partRows.insert(partRows.end(), rows.begin(), rows.end());
  auto push = [&](ABIParam p) {
    paramIndex[p.name] = abi.params.size();
    abi.params.push_back(std::move(p));
  };
  auto tensor = [&](const char *n, std::string dtype, std::vector<ABIDim> shape,
                    const char *role) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = n;
    p.dtype = std::move(dtype);
    p.shape = std::move(shape);
    p.role = role;
    p.align = 4;
    push(std::move(p));
  };
  auto withDV = [&](std::vector<ABIDim> s) {
    s.push_back(form.dv);
    return s;
  };
  tensor("o_partial", "f32", withDV(partRows), "input");
  tensor("lse_partial", "f32", partRows, "input");
  tensor("o", mlirTypeToDType(outType.getElementType()), withDV(rows),
         "output");
  if (form.lseInsert)
    tensor("lse", "f32", rows, "output");
  for (const char *sym : kQuerySymbols)
    if (dynamicSymbols.contains(sym))
      push(ABIParam::size(sym));
  push(ABIParam::size(kSplits));
  for (int64_t d = 0; d < 4; ++d)
    push(ABIParam::stride("o_partial", d));
  for (int64_t d = 0; d < 3; ++d)
    push(ABIParam::stride("lse_partial", d));
  for (int64_t d = 0; d < 3; ++d)
    push(ABIParam::stride("o", d));
  if (form.lseInsert)
    for (int64_t d = 0; d < 2; ++d)
      push(ABIParam::stride("lse", d));
}

FailureOr<gpu::GPUFuncOp> CombineKernelBuilder::build(gpu::GPUModuleOp module) {
  abi = KernelABI();
  abi.name = name.str();
  abi.kind = "attention_combine";
  planParameters();
  SmallVector<unsigned> gridDims;
  if (failed(planForallGrid(
          form.forall,
          [&](OpFoldResult e) -> FailureOr<std::vector<GridFactor>> {
            FailureOr<GridFactor> f =
                gridFactorOf(e, [&](Value x) -> std::optional<std::string> {
                  std::optional<std::string> s = symbolOf(x);
                  if (s && !paramIndex.count(*s))
                    return std::nullopt;
                  return s;
                });
            if (failed(f))
              return failure();
            return std::vector<GridFactor>{*f};
          },
          abi.grid, gridDims)))
    return failure();
  abi.block[0] = kCombineThreads;
  abi.dynamicSharedMemoryBytes = kStateWords * 4;
  abi.constraints.push_back(ABIConstraint::min(kSplits, 1));
  abi.constraints.push_back(ABIConstraint::max(kSplits, 128));
  abi.attrs = {{"head_dim_v", std::to_string(form.dv)}};
  abi.programmaticLaunch = gridDependency;

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  func = createKernelFunc(b, loc, name, abi, kCombineThreads);
  // Before any global access: launched programmatically, the kernel's
  // blocks run while the partial kernel still writes (it lets them start
  // at its own beginning); the wait returns once that grid has finished
  // and its writes are visible. Launched plainly it returns at once.
  if (gridDependency)
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Type f32 = b.getF32Type();
  Type outElem = cast<RankedTensorType>(form.out.getType()).getElementType();
  Value oPart = wrapGlobalPointer(b, loc, param("o_partial"), f32);
  Value lsePart = wrapGlobalPointer(b, loc, param("lse_partial"), f32);
  Value out = wrapGlobalPointer(b, loc, param("o"), outElem);
  Value lseOut =
      form.lseInsert ? wrapGlobalPointer(b, loc, param("lse"), f32) : Value();

  IRMapping scope;
  for (auto [iv, dim] : llvm::zip(form.forall.getInductionVars(), gridDims))
    scope.map(iv,
              gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(dim)));
  SmallVector<OpFoldResult> offsets = form.outInsert.getMixedOffsets();
  FailureOr<Value> batch = values.materialize(offsets[0], scope);
  FailureOr<Value> head = values.materialize(offsets[1], scope);
  FailureOr<Value> q0 = values.materialize(offsets[2], scope);
  FailureOr<Value> rows =
      values.materialize(form.outInsert.getMixedSizes()[2], scope);
  FailureOr<Value> lb = values.materialize(form.loop.getLowerBound(), scope);
  FailureOr<Value> ub = values.materialize(form.loop.getUpperBound(), scope);
  if (failed(batch) || failed(head) || failed(q0) || failed(rows) ||
      failed(lb) || failed(ub))
    return failure();

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  // exp(x - m), 0 where x is -inf (also when m is).
  auto weight = [&](OpBuilder &nb, Location l, Value x, Value m) -> Value {
    Value isNegInf =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, x, negInf);
    Value e = math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, x, m));
    return arith::SelectOp::create(nb, l, isNegInf, zeroF, e);
  };
  // Thread (part p, lane t): column cell t of each round of kCombineLanes
  // cells (the columns of a row on consecutive threads, so each split's
  // partial row is one coalesced read), splits lb + p, lb + p + P, ...: the
  // merge is associative, and P parts cut each thread's chain of dependent
  // loads and merges P times. Parts 1..P-1 leave their states in shared
  // memory ([part - 1][acc, max, sum][lane]) and part 0 merges them in.
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(kCombineLanes));
  Value part = arith::DivUIOp::create(b, loc, tid, idx(kCombineLanes));
  Value total = arith::MulIOp::create(b, loc, *rows, idx(form.dv));
  Value rounds = arith::CeilDivUIOp::create(b, loc, total, idx(kCombineLanes));
  auto wgSpace =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto stateType =
      MemRefType::get({kStateWords}, f32, MemRefLayoutAttrInterface{}, wgSpace);
  Value states = memref::ViewOp::create(
      b, loc, stateType, dynamicSharedBytes(b, loc), idx(0), ValueRange{});
  auto stateAt = [&](OpBuilder &nb, Location l, Value p, int64_t word) {
    // [(p - 1) * 3 + word] * lanes + lane
    Value slot = arith::AddIOp::create(
        nb, l, arith::MulIOp::create(nb, l, p, idx(3)), idx(word - 3));
    return arith::AddIOp::create(
        nb, l, arith::MulIOp::create(nb, l, slot, idx(kCombineLanes)), lane);
  };
  auto roundLoop = scf::ForOp::create(b, loc, idx(0), rounds, idx(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(roundLoop.getBody());
    Value cell = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, roundLoop.getInductionVar(),
                              idx(kCombineLanes)),
        lane);
    Value active =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, cell, total);
    Value r = arith::DivUIOp::create(b, loc, cell, idx(form.dv));
    Value c = arith::RemUIOp::create(b, loc, cell, idx(form.dv));
    Value row = arith::AddIOp::create(b, loc, *q0, r);
    // A lane past the last cell merges no split (but meets the barriers).
    Value first = arith::AddIOp::create(b, loc, *lb, part);
    Value end = arith::SelectOp::create(b, loc, active, *ub, first);
    // The merge recurrence over this part's splits, as the form's loop
    // runs it.
    auto merge = scf::ForOp::create(
        b, loc, first, end, idx(kCombineParts),
        ValueRange{zeroF, negInf, zeroF},
        [&](OpBuilder &nb, Location l, Value s, ValueRange st) {
          Value lseS = memref::LoadOp::create(
              nb, l, lsePart,
              ValueRange{arith::AddIOp::create(
                  nb, l, offsetOf({s, *batch, *head}, "lse_partial"), row)});
          Value oS = memref::LoadOp::create(
              nb, l, oPart,
              ValueRange{arith::AddIOp::create(
                  nb, l, offsetOf({s, *batch, *head, row}, "o_partial"), c)});
          Value acc = st[0], m = st[1], sum = st[2];
          Value m2 = arith::MaximumFOp::create(nb, l, m, lseS);
          Value alpha = weight(nb, l, m, m2), w = weight(nb, l, lseS, m2);
          Value acc2 = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, acc, alpha),
              arith::MulFOp::create(nb, l, oS, w));
          Value sum2 = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, sum, alpha), w);
          scf::YieldOp::create(nb, l, ValueRange{acc2, m2, sum2});
        });
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, part, idx(0));
    Value isOther =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, part, idx(0));
    scf::IfOp::create(b, loc, isOther, [&](OpBuilder &nb, Location l) {
      for (int64_t word = 0; word < 3; ++word)
        memref::StoreOp::create(nb, l, merge.getResult(word), states,
                                ValueRange{stateAt(nb, l, part, word)});
      scf::YieldOp::create(nb, l);
    });
    gpu::BarrierOp::create(b, loc);
    Value writes = arith::AndIOp::create(b, loc, isFirst, active);
    scf::IfOp::create(b, loc, writes, [&](OpBuilder &nb, Location l) {
      Value acc = merge.getResult(0), m = merge.getResult(1),
            sum = merge.getResult(2);
      // The other parts' states, by the same rule.
      for (int64_t p = 1; p < kCombineParts; ++p) {
        auto load = [&](int64_t word) {
          return memref::LoadOp::create(
              nb, l, states, ValueRange{stateAt(nb, l, idx(p), word)});
        };
        Value accP = load(0), mP = load(1), sumP = load(2);
        Value m2 = arith::MaximumFOp::create(nb, l, m, mP);
        Value alpha = weight(nb, l, m, m2), beta = weight(nb, l, mP, m2);
        acc = arith::AddFOp::create(nb, l,
                                    arith::MulFOp::create(nb, l, acc, alpha),
                                    arith::MulFOp::create(nb, l, accP, beta));
        sum = arith::AddFOp::create(nb, l,
                                    arith::MulFOp::create(nb, l, sum, alpha),
                                    arith::MulFOp::create(nb, l, sumP, beta));
        m = m2;
      }
      // The finalize: acc / sum and max + ln(sum); 0 and -inf for a row no
      // split saw a key of.
      Value any =
          arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, sum, zeroF);
      Value o = arith::SelectOp::create(
          nb, l, any, arith::DivFOp::create(nb, l, acc, sum), zeroF);
      memref::StoreOp::create(
          nb, l, arith::TruncFOp::create(nb, l, outElem, o), out,
          ValueRange{arith::AddIOp::create(
              nb, l, offsetOf({*batch, *head, row}, "o"), c)});
      if (lseOut) {
        Value col0 =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, c, idx(0));
        scf::IfOp::create(nb, l, col0, [&](OpBuilder &ib, Location il) {
          Value lse = arith::SelectOp::create(
              ib, il, any,
              arith::AddFOp::create(ib, il, m,
                                    math::LogOp::create(ib, il, sum)),
              negInf);
          memref::StoreOp::create(
              ib, il, lse, lseOut,
              ValueRange{arith::AddIOp::create(
                  ib, il, offsetOf({*batch, *head}, "lse"), row)});
          scf::YieldOp::create(ib, il);
        });
      }
      scf::YieldOp::create(nb, l);
    });
    // The next round's states go where these were read.
    gpu::BarrierOp::create(b, loc);
  }
  gpu::ReturnOp::create(b, loc);
  return func;
}

} // namespace

bool attnc::isCombineForm(scf::ForallOp forall) {
  return forall
      .walk([](OnlineAttentionMergeOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

FailureOr<gpu::GPUFuncOp>
attnc::buildCombineKernel(OpBuilder &b, gpu::GPUModuleOp module, StringRef name,
                          scf::ForallOp forall, bool gridDependency,
                          KernelABI &abi) {
  FailureOr<CombineForm> form = analyzeCombineForm(forall);
  if (failed(form))
    return failure();
  CombineKernelBuilder builder(b, *form, name, gridDependency, abi);
  return builder.build(module);
}
