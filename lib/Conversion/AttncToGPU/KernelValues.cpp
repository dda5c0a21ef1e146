//===- KernelValues.cpp - a form's index values rebuilt in a kernel -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Index values of a loop nest (tile starts, loop bounds, head maps) are
// rebuilt in the kernel that lowers it by cloning the computation that
// defines them, from the kernel's own values of the nest's leaves (block
// indices, size parameters); mask and score regions are cloned per element.
// The forward and the backward attention kernels share this.
//
//===----------------------------------------------------------------------===//

#include "KernelValues.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <functional>

using namespace mlir;
using namespace attnc;

/// `v` in the kernel: looked up in `scope`, the leaf function's value, or
/// rebuilt by cloning the index computation that defines it (operands
/// first).
FailureOr<Value> KernelValues::materialize(Value v, IRMapping &scope) {
  if (Value known = scope.lookupOrNull(v))
    return known;
  FailureOr<Value> leafValue = leaf(v);
  if (failed(leafValue))
    return failure();
  if (*leafValue) {
    scope.map(v, *leafValue);
    return *leafValue;
  }
  Operation *def = v.getDefiningOp();
  Value result;
  if (isa_and_nonnull<affine::AffineApplyOp, affine::AffineMinOp,
                      affine::AffineMaxOp>(def)) {
    FailureOr<Value> v = expandAffine(def, scope);
    if (failed(v))
      return failure();
    result = *v;
  } else if (def && def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
             isa<arith::ArithDialect, math::MathDialect>(def->getDialect())) {
    IRMapping local;
    for (Value operand : def->getOperands()) {
      FailureOr<Value> m = materialize(operand, scope);
      if (failed(m))
        return failure();
      local.map(operand, *m);
    }
    Operation *copy = b.clone(*def, local);
    for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
      scope.map(from, to);
    return scope.lookup(v);
  } else {
    InFlightDiagnostic diag = emitError(v.getLoc())
                              << "value used by a flash form cannot be "
                                 "computed in its kernel";
    if (def)
      diag << ": '" << def->getName()
           << "' is not an index computation the back-end can rebuild";
    else
      diag << ": it is a block argument the kernel has no counterpart for";
    return diag;
  }
  scope.map(v, result);
  return result;
}

/// True when index value `v` is never negative: the value-bounds analysis
/// proves it, or the program uses it as an offset or size of a tensor slice
/// (which a valid program never makes negative).
static bool isKnownNonNegative(Value v) {
  for (OpOperand &use : v.getUses())
    if (auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(use.getOwner()))
      if (llvm::is_contained(slice.getOffsets(), v) ||
          llvm::is_contained(slice.getSizes(), v))
        return true;
  FailureOr<int64_t> lb = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::LB, ValueBoundsConstraintSet::Variable(v));
  return succeeded(lb) && *lb >= 0;
}

/// True when `e` (over `operands`, the first `numDims` of them dims) is
/// never negative: the value-bounds analysis proves it, or it is built from
/// non-negative operands and constants with +, * and division by positive
/// constants.
static bool provablyNonNegative(AffineExpr e, ValueRange operands,
                                unsigned numDims) {
  std::function<bool(AffineExpr)> syntactic = [&](AffineExpr x) -> bool {
    if (auto c = dyn_cast<AffineConstantExpr>(x))
      return c.getValue() >= 0;
    if (auto d = dyn_cast<AffineDimExpr>(x))
      return isKnownNonNegative(operands[d.getPosition()]);
    if (auto sym = dyn_cast<AffineSymbolExpr>(x))
      return isKnownNonNegative(operands[numDims + sym.getPosition()]);
    auto bin = cast<AffineBinaryOpExpr>(x);
    return syntactic(bin.getLHS()) && syntactic(bin.getRHS());
  };
  if (syntactic(e))
    return true;
  AffineMap map =
      AffineMap::get(numDims, operands.size() - numDims, e, e.getContext());
  FailureOr<int64_t> lb = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::LB,
      ValueBoundsConstraintSet::Variable(map, operands));
  return succeeded(lb) && *lb >= 0;
}

/// Rebuilds an affine.apply/min/max in the kernel with arith ops. Where the
/// IR proves a dividend or both sides of a min/max non-negative (tile
/// indices and extents always are), the unsigned forms are used: the
/// signed floordiv/ceildiv expansion of lower-affine (compare, negate,
/// select) keeps ptxas from holding loop bounds in uniform registers.
FailureOr<Value> KernelValues::expandAffine(Operation *def, IRMapping &scope) {
  AffineMap map;
  ValueRange operands;
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    map = apply.getAffineMap();
    operands = apply.getMapOperands();
  } else if (auto min = dyn_cast<affine::AffineMinOp>(def)) {
    map = min.getAffineMap();
    operands = min.getMapOperands();
  } else {
    auto max = cast<affine::AffineMaxOp>(def);
    map = max.getAffineMap();
    operands = max.getMapOperands();
  }
  SmallVector<Value> kernelOperands;
  for (Value o : operands) {
    FailureOr<Value> m = materialize(o, scope);
    if (failed(m))
      return failure();
    kernelOperands.push_back(*m);
  }
  unsigned numDims = map.getNumDims();
  std::function<Value(AffineExpr)> expand = [&](AffineExpr e) -> Value {
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    auto rhs = bin ? dyn_cast<AffineConstantExpr>(bin.getRHS()) : nullptr;
    bool division = bin && (bin.getKind() == AffineExprKind::FloorDiv ||
                            bin.getKind() == AffineExprKind::CeilDiv ||
                            bin.getKind() == AffineExprKind::Mod);
    if (division && rhs && rhs.getValue() > 0 &&
        provablyNonNegative(bin.getLHS(), operands, numDims)) {
      Value lhs = expand(bin.getLHS());
      Value k = arith::ConstantIndexOp::create(b, loc, rhs.getValue());
      if (bin.getKind() == AffineExprKind::Mod)
        return arith::RemUIOp::create(b, loc, lhs, k);
      if (bin.getKind() == AffineExprKind::CeilDiv)
        lhs = arith::AddIOp::create(
            b, loc, lhs,
            arith::ConstantIndexOp::create(b, loc, rhs.getValue() - 1));
      return arith::DivUIOp::create(b, loc, lhs, k);
    }
    if (bin && (bin.getKind() == AffineExprKind::Add ||
                bin.getKind() == AffineExprKind::Mul)) {
      Value l = expand(bin.getLHS()), r = expand(bin.getRHS());
      if (bin.getKind() == AffineExprKind::Add)
        return arith::AddIOp::create(b, loc, l, r);
      return arith::MulIOp::create(b, loc, l, r);
    }
    return affine::expandAffineExpr(
        b, loc, e, ValueRange(kernelOperands).take_front(numDims),
        ValueRange(kernelOperands).drop_front(numDims));
  };
  SmallVector<Value> results;
  bool allNonNegative = true;
  for (AffineExpr e : map.getResults()) {
    results.push_back(expand(e));
    allNonNegative &= provablyNonNegative(e, operands, numDims);
  }
  Value r = results.front();
  bool isMin = isa<affine::AffineMinOp>(def);
  for (Value next : ArrayRef(results).drop_front()) {
    if (allNonNegative)
      r = isMin ? arith::MinUIOp::create(b, loc, r, next).getResult()
                : arith::MaxUIOp::create(b, loc, r, next).getResult();
    else
      r = isMin ? arith::MinSIOp::create(b, loc, r, next).getResult()
                : arith::MaxSIOp::create(b, loc, r, next).getResult();
  }
  return r;
}

FailureOr<Value> KernelValues::materialize(OpFoldResult v, IRMapping &scope) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return arith::ConstantIndexOp::create(b, loc, *c).getResult();
  return materialize(cast<Value>(v), scope);
}

FailureOr<Value> KernelValues::readRegionElement(tensor::ExtractOp read,
                                                 const IRMapping &m,
                                                 IRMapping &scope) {
  SmallVector<Value> indices;
  for (Value i : read.getIndices()) {
    FailureOr<Value> v;
    if (Value known = m.lookupOrNull(i))
      v = known;
    else if (std::optional<int64_t> c = getConstantIntValue(i))
      v = arith::ConstantIndexOp::create(b, loc, *c).getResult();
    else
      v = materialize(i, scope);
    if (failed(v))
      return failure();
    indices.push_back(*v);
  }
  return readElement(read, indices);
}

/// Whether `v`, a value of a region's `body`, can differ between the
/// scores of one block: it depends on the score (a non-index argument) or
/// on a position (the last two arguments, i and j).
static bool variesPerScore(Value v, Block &body) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &body &&
           (!arg.getType().isIndex() ||
            arg.getArgNumber() + 2 >= body.getNumArguments());
  Operation *def = v.getDefiningOp();
  if (!def || !body.getParent()->isAncestor(def->getParentRegion()))
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return variesPerScore(o, body); });
}

/// The value a mask or score region yields for block arguments `args`,
/// its body cloned in place.
FailureOr<Value> KernelValues::cloneRegion(Region &r, ArrayRef<Value> args,
                                           IRMapping &scope, Value result,
                                           ConvertFn convert) {
  Block &body = r.front();
  IRMapping m;
  m.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator()) {
    if (auto read = dyn_cast<tensor::ExtractOp>(op);
        read && readElement &&
        !r.isAncestor(read.getTensor().getParentRegion())) {
      FailureOr<Value> loaded = readRegionElement(read, m, scope);
      if (failed(loaded))
        return failure();
      m.map(read.getResult(), *loaded);
      continue;
    }
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return op.emitOpError("cannot be lowered in a mask or score region: "
                            "the kernel evaluates only arith and math ops "
                            "per score");
    for (Value operand : op.getOperands()) {
      if (m.contains(operand) || r.isAncestor(operand.getParentRegion()))
        continue;
      FailureOr<Value> outer = materialize(operand, scope);
      if (failed(outer))
        return failure();
      m.map(operand, *outer);
    }
    if (auto cast = dyn_cast<arith::SIToFPOp>(op); cast && convert)
      if (Value v = convert(cast, Value())) {
        m.map(cast.getResult(), v);
        continue;
      }
    // A block-uniform factor times a converted position (ALiBi's slope *
    // float(j - i)): the product's own form (the conversion's plain form
    // above is then dead).
    if (auto mul = dyn_cast<arith::MulFOp>(op); mul && convert) {
      Value v;
      for (unsigned side = 0; side < 2 && !v; ++side) {
        auto cast = mul->getOperand(side).getDefiningOp<arith::SIToFPOp>();
        Value factor = mul->getOperand(1 - side);
        if (cast && r.isAncestor(cast->getParentRegion()) &&
            !variesPerScore(factor, body))
          v = convert(cast, m.lookup(factor));
      }
      if (v) {
        m.map(mul.getResult(), v);
        continue;
      }
    }
    // tanh (a softcap) runs once per score: its approximate hardware form,
    // tanh.approx.f32 (relative error about 2^-11, below bf16's rounding),
    // as FlashAttention-3 does, instead of libdevice's tanhf (about 20
    // instructions and a branch). LLVM's NVPTX back-end selects it for
    // llvm.tanh with the afn flag.
    if (auto tanh = dyn_cast<math::TanhOp>(op);
        tanh && tanh.getType().isF32()) {
      auto approx =
          LLVM::TanhOp::create(b, loc, m.lookup(tanh.getOperand()),
                               LLVM::FastmathFlagsAttr::get(
                                   b.getContext(), LLVM::FastmathFlags::afn));
      m.map(tanh.getResult(), approx.getResult());
      continue;
    }
    Operation *copy = b.clone(op, m);
    // A multiply and an add of the modifier (and the scale's multiply
    // before it) may contract into one FMA, as in FlashAttention's
    // kernels: one rounding fewer, one instruction fewer per score.
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(copy))
      copy->setAttr(fm.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        b.getContext(), fm.getFastMathFlagsAttr().getValue() |
                                            arith::FastMathFlags::contract));
  }
  Value yielded =
      result ? result : cast<YieldOp>(body.getTerminator()).getValues()[0];
  if (Value v = m.lookupOrNull(yielded))
    return v;
  // A value from above: canonicalization hoists a region's constants (a
  // mask folded to true or false) out of it.
  return materialize(yielded, scope);
}
