//===- ElementwiseOps.cpp - verifiers of elementwise and row ops ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Shape and type rules of the elementwise ops (NumPy broadcasting), the row
// reductions and the normalizations. Every diagnostic names the operand and
// the rule it breaks; test/Dialect/Attnc/invalid.mlir has one case for each.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

FailureOr<SmallVector<int64_t>> attnc::broadcastShapes(ArrayRef<int64_t> lhs,
                                                       ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t b = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t r;
    if (a == 1)
      r = b;
    else if (b == 1)
      r = a;
    else if (ShapedType::isDynamic(a))
      r = b;
    else if (ShapedType::isDynamic(b) || a == b)
      r = a;
    else
      return failure();
    result[rank - 1 - i] = r;
  }
  return result;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  os << "]";
  return s;
}

/// Checks that `operands` broadcast together to `result`'s shape.
static LogicalResult verifyBroadcast(Operation *op, ArrayRef<StringRef> names,
                                     ValueRange operands, Value result) {
  SmallVector<int64_t> shape;
  std::string soFar;
  for (auto [name, v] : llvm::zip(names, operands)) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(v.getType()).getShape();
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, s);
    if (failed(b))
      return op->emitOpError()
             << "operand '" << name << "' of shape " << shapeStr(s)
             << " does not broadcast with " << soFar << " " << shapeStr(shape)
             << ": static extents must be equal or 1";
    shape = *b;
    soFar += soFar.empty() ? ("'" + name + "'").str()
                           : (" and '" + name + "'").str();
  }
  ArrayRef<int64_t> got = cast<RankedTensorType>(result.getType()).getShape();
  if (got != ArrayRef<int64_t>(shape))
    return op->emitOpError()
           << "result shape " << shapeStr(got)
           << " is not the broadcast of the operands' shapes, "
           << shapeStr(shape);
  return success();
}

static LogicalResult verifyBinary(Operation *op) {
  Type lt = getElementTypeOrSelf(op->getOperand(0).getType());
  Type rt = getElementTypeOrSelf(op->getOperand(1).getType());
  Type res = getElementTypeOrSelf(op->getResult(0).getType());
  if (lt != rt)
    return op->emitOpError() << "operands 'lhs' (" << lt << ") and 'rhs' ("
                             << rt << ") must have the same element type";
  if (res != lt)
    return op->emitOpError() << "result element type " << res
                             << " must equal the operands' element type " << lt;
  return verifyBroadcast(op, {"lhs", "rhs"}, op->getOperands(),
                         op->getResult(0));
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() {
  if (failed(verifyBinary(*this)))
    return failure();
  // An integer division by a constant zero has no value; one computed at
  // run time is the program's to avoid, as in C.
  DenseIntElementsAttr divisor;
  if (matchPattern(getRhs(), m_Constant(&divisor)) &&
      llvm::any_of(divisor.getValues<APInt>(),
                   [](const APInt &v) { return v.isZero(); }))
    return emitOpError("operand 'rhs' is a constant with a zero element: "
                       "integer division by zero");
  return success();
}
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }
LogicalResult AndOp::verify() { return verifyBinary(*this); }
LogicalResult OrOp::verify() { return verifyBinary(*this); }

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("operand 'input' and the result must have the same "
                       "shape; cast changes only the element type");
  return success();
}

LogicalResult IotaOp::verify() {
  int64_t rank = getLike().getType().getRank();
  if (getDimension() >= rank)
    return emitOpError() << "attribute 'dimension' (" << getDimension()
                         << ") must be less than the rank of 'like' (" << rank
                         << ")";
  if (getLike().getType().getShape() != getResult().getType().getShape())
    return emitOpError("result must have the shape of operand 'like'");
  return success();
}

LogicalResult CmpOp::verify() {
  Type lt = getLhs().getType().getElementType();
  Type rt = getRhs().getType().getElementType();
  if (lt != rt)
    return emitOpError() << "operands 'lhs' (" << lt << ") and 'rhs' (" << rt
                         << ") must have the same element type";
  return verifyBroadcast(*this, {"lhs", "rhs"}, getOperands(), getResult());
}

LogicalResult SelectOp::verify() {
  Type tt = getTrueValue().getType().getElementType();
  Type ft = getFalseValue().getType().getElementType();
  if (tt != ft || getResult().getType().getElementType() != tt)
    return emitOpError() << "operands 'true_value' (" << tt
                         << ") and 'false_value' (" << ft
                         << ") and the result must have the same element type";
  return verifyBroadcast(*this, {"condition", "true_value", "false_value"},
                         getOperands(), getResult());
}

LogicalResult DropoutOp::verify() {
  double p = getProbability().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "attribute 'probability' must be in [0, 1), got "
                         << p;
  return success();
}

/// Row reductions keep the last dimension with extent 1.
static LogicalResult verifyRowReduction(Operation *op) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  if (in.getRank() == 0)
    return op->emitOpError("operand 'input' must have rank >= 1: the last "
                           "dimension is reduced");
  SmallVector<int64_t> expected(in.getShape());
  expected.back() = 1;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError()
           << "result shape " << shapeStr(out.getShape())
           << " must be the input's with the last dimension kept as 1, "
           << shapeStr(expected);
  if (out.getElementType() != in.getElementType())
    return op->emitOpError("result element type must equal the input's");
  return success();
}

LogicalResult ReduceMaxOp::verify() { return verifyRowReduction(*this); }
LogicalResult ReduceSumOp::verify() { return verifyRowReduction(*this); }

/// `param` (gamma or beta) is rank 1 with the extent of the last dimension.
static LogicalResult verifyNormParam(Operation *op, StringRef name,
                                     RankedTensorType input, Value param) {
  auto t = cast<RankedTensorType>(param.getType());
  if (t.getRank() != 1)
    return op->emitOpError() << "operand '" << name
                             << "' must have rank 1, got rank " << t.getRank();
  int64_t want = input.getShape().back();
  int64_t got = t.getDimSize(0);
  if (!ShapedType::isDynamic(want) && !ShapedType::isDynamic(got) &&
      want != got)
    return op->emitOpError()
           << "operand '" << name << "' has extent " << got
           << " but the normalized (last) dimension of 'input' has " << want;
  if (t.getElementType() != input.getElementType())
    return op->emitOpError()
           << "operand '" << name << "' must have the element type of 'input'";
  return success();
}

static LogicalResult verifyNorm(Operation *op, ArrayRef<StringRef> names,
                                double epsilon) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  if (in.getRank() == 0)
    return op->emitOpError("operand 'input' must have rank >= 1");
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return op->emitOpError()
           << "attribute 'epsilon' must be positive and finite, got "
           << epsilon;
  for (auto [i, name] : llvm::enumerate(names))
    if (failed(verifyNormParam(op, name, in, op->getOperand(i + 1))))
      return failure();
  if (op->getResult(0).getType() != in)
    return op->emitOpError("result must have the type of operand 'input'");
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, {"gamma", "beta"}, getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, {"gamma"}, getEpsilon().convertToDouble());
}

bool attnc::isFusibleElementwiseOp(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, AndOp, OrOp, AbsOp,
             NotOp, ExpOp, LogOp, NegOp, TanhOp, RsqrtOp, CastOp, IotaOp, CmpOp,
             SelectOp, DropoutOp, ReduceMaxOp, ReduceSumOp, SoftmaxOp,
             LayerNormOp, RmsNormOp>(op);
}

arith::CmpIPredicate attnc::toSignedCmpIPredicate(CmpPredicate p) {
  switch (p) {
  case CmpPredicate::eq:
    return arith::CmpIPredicate::eq;
  case CmpPredicate::ne:
    return arith::CmpIPredicate::ne;
  case CmpPredicate::lt:
    return arith::CmpIPredicate::slt;
  case CmpPredicate::le:
    return arith::CmpIPredicate::sle;
  case CmpPredicate::gt:
    return arith::CmpIPredicate::sgt;
  case CmpPredicate::ge:
    return arith::CmpIPredicate::sge;
  }
  llvm_unreachable("unknown predicate");
}
