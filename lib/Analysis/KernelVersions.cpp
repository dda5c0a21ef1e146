//===- KernelVersions.cpp - one kernel in several versions by size --------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/KernelVersions.h"
#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Dialect/Attnc/IR/AttentionMask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace attnc;

/// The kernel ops directly in `block`.
static SmallVector<Operation *> kernelsIn(Block &block) {
  SmallVector<Operation *> kernels;
  for (Operation &op : block)
    if (isKernelOp(&op))
      kernels.push_back(&op);
  return kernels;
}

bool attnc::isVersionedKernel(Operation *op) {
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp)
    return false;
  for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
    if (!r->empty() && !kernelsIn(r->front()).empty())
      return true;
  return false;
}

/// `v` as dim `dim` of a tensor: `tensor.dim %t, c`, through index casts.
static std::optional<std::pair<Value, int64_t>> readSize(Value v) {
  while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto dim = v.getDefiningOp<tensor::DimOp>();
  APInt index;
  if (!dim || !matchPattern(dim.getIndex(), m_ConstantInt(&index)))
    return std::nullopt;
  return std::make_pair(dim.getSource(), index.getSExtValue());
}

/// `v` as a constant times a size (`arith.muli`, either order).
static std::optional<std::pair<std::pair<Value, int64_t>, int64_t>>
readScaledSize(Value v) {
  auto mul = v.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  for (auto [size, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                              std::pair(mul.getRhs(), mul.getLhs())}) {
    APInt c;
    std::optional<std::pair<Value, int64_t>> dim = readSize(size);
    if (dim && matchPattern(factor, m_ConstantInt(&c)))
      return std::make_pair(*dim, c.getSExtValue());
  }
  return std::nullopt;
}

/// `size <= factor * per` (`sle`, or `sge` the other way round): a Max
/// condition per `per`.
static bool readPerCondition(arith::CmpIOp cmp,
                             SmallVector<SizeCondition> &out) {
  using P = arith::CmpIPredicate;
  Value size = cmp.getLhs(), bound = cmp.getRhs();
  if (cmp.getPredicate() == P::sge)
    std::swap(size, bound);
  else if (cmp.getPredicate() != P::sle)
    return false;
  std::optional<std::pair<Value, int64_t>> dim = readSize(size);
  auto scaled = readScaledSize(bound);
  if (!dim || !scaled || scaled->second < 1)
    return false;
  out.push_back({dim->first, dim->second, SizeCondition::Kind::Max,
                 scaled->second, scaled->first.first, scaled->first.second});
  return true;
}

/// Appends the comparisons of the conjunction `cond` to `out`; false when
/// `cond` is anything else.
static bool readConjunction(Value cond, SmallVector<SizeCondition> &out) {
  if (auto conj = cond.getDefiningOp<arith::AndIOp>())
    return readConjunction(conj.getLhs(), out) &&
           readConjunction(conj.getRhs(), out);
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  arith::CmpIPredicate pred = cmp.getPredicate();
  Value size = cmp.getLhs(), constant = cmp.getRhs();
  APInt c;
  if (!matchPattern(constant, m_ConstantInt(&c))) {
    // `c <= size` is `size >= c`.
    std::swap(size, constant);
    if (!matchPattern(constant, m_ConstantInt(&c)))
      return readPerCondition(cmp, out);
    pred = swapSignedOrder(pred);
  }
  std::optional<std::pair<Value, int64_t>> dim = readSize(size);
  if (!dim)
    return false;
  int64_t value = c.getSExtValue();
  auto add = [&](SizeCondition::Kind kind, int64_t v) {
    out.push_back({dim->first, dim->second, kind, v});
  };
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::sge:
    add(SizeCondition::Kind::Min, value);
    return true;
  case P::sgt:
    add(SizeCondition::Kind::Min, value + 1);
    return true;
  case P::sle:
    add(SizeCondition::Kind::Max, value);
    return true;
  case P::slt:
    add(SizeCondition::Kind::Max, value - 1);
    return true;
  case P::eq:
    add(SizeCondition::Kind::Min, value);
    add(SizeCondition::Kind::Max, value);
    return true;
  default:
    return false;
  }
}

/// The one kernel of `region` (an op or a nested versioned kernel), after
/// checking that the region yields only that kernel's results.
static FailureOr<Operation *> versionKernel(scf::IfOp op, Region &region,
                                            StringRef which) {
  SmallVector<Operation *> kernels =
      region.empty() ? SmallVector<Operation *>() : kernelsIn(region.front());
  if (kernels.size() != 1)
    return op.emitOpError()
           << "holds kernels in versions, but its " << which << " region has "
           << kernels.size()
           << " kernels; each version is exactly one kernel (the else "
              "region's may be another versioned kernel)";
  Operation *kernel = kernels.front();
  Operation *yield = region.front().getTerminator();
  if (llvm::any_of(yield->getOperands(),
                   [&](Value v) { return v.getDefiningOp() != kernel; }))
    return op.emitOpError()
           << "holds kernels in versions, but its " << which
           << " region yields a value that is not a result of its kernel; "
              "every version computes the op's results and nothing else";
  return kernel;
}

FailureOr<SmallVector<KernelVersion>> attnc::readKernelVersions(scf::IfOp op) {
  SmallVector<KernelVersion> versions;
  scf::IfOp at = op;
  while (true) {
    KernelVersion v;
    if (!readConjunction(at.getCondition(), v.when))
      return at.emitOpError()
             << "holds kernels in versions, but its condition is not a "
                "conjunction (arith.andi) of comparisons (arith.cmpi sge, "
                "sgt, sle, slt or eq) of a size (tensor.dim with a constant "
                "index) with a constant, or of a size at most (sle) a "
                "constant times a size: a host cannot evaluate it";
    FailureOr<Operation *> then = versionKernel(at, at.getThenRegion(), "then");
    if (failed(then))
      return failure();
    v.kernel = *then;
    versions.push_back(std::move(v));
    FailureOr<Operation *> other =
        versionKernel(at, at.getElseRegion(), "else");
    if (failed(other))
      return failure();
    auto nested = dyn_cast<scf::IfOp>(*other);
    if (!nested || !isVersionedKernel(nested)) {
      versions.push_back({*other, {}});
      return versions;
    }
    at = nested;
  }
}

const KernelVersion &attnc::selectKernelVersion(
    ArrayRef<KernelVersion> versions,
    function_ref<std::optional<int64_t>(Value, int64_t)> sizeOf) {
  for (const KernelVersion &v : versions.drop_back()) {
    bool holds = llvm::all_of(v.when, [&](const SizeCondition &c) {
      std::optional<int64_t> size = sizeOf(c.tensor, c.dim);
      std::optional<int64_t> per =
          c.perTensor ? sizeOf(c.perTensor, c.perDim) : 1;
      int64_t bound;
      if (!size || !per)
        return false;
      if (llvm::MulOverflow(c.value, *per, bound))
        return c.kind == SizeCondition::Kind::Max;
      return c.kind == SizeCondition::Kind::Min ? *size >= bound
                                                : *size <= bound;
    });
    if (holds)
      return v;
  }
  return versions.back();
}
