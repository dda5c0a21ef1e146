//===- DeriveBackward.cpp - --attnc-derive-backward -----------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Adds `f_backward` next to each function `f` that computes one fused
// attention of its arguments. The backward is written at the graph level
// (delta as a row reduction, the gradient op, dQ's conversion) so that the
// passes after this one tile and fuse it exactly as they do the forward:
// nothing here knows about kernels.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "attnc-derive-backward"

namespace attnc {
#define GEN_PASS_DEF_ATTNCDERIVEBACKWARD
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {

/// What the backward recomputes from the forward's arguments: index and
/// scalar arithmetic (sequence lengths, a run-time scale). Anything else
/// would be a second kernel, or a value the backward does not have.
bool isRecomputable(Operation *op) {
  if (!isMemoryEffectFree(op) || op->getNumRegions() != 0)
    return false;
  return isa<arith::ArithDialect, index::IndexDialect, affine::AffineDialect>(
             op->getDialect()) ||
         isa<tensor::DimOp>(op);
}

/// Builds in `out` the derivative of score region `score` with respect to
/// its first argument (the scaled score), by forward-mode differentiation:
/// each op of the region is cloned and followed by the ops of its tangent.
/// Values without a tangent (constants, index arithmetic, values from
/// above) have derivative 0. `above` maps values defined above.
LogicalResult differentiateScore(OpBuilder &b, Region &score, Region &out,
                                 const IRMapping &above) {
  Block &src = score.front();
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Location> locs(src.getNumArguments(), score.getLoc());
  Block *dst = b.createBlock(&out, {}, src.getArgumentTypes(), locs);
  IRMapping primal = above;
  primal.map(src.getArguments(), dst->getArguments());
  Location loc = score.getLoc();
  Type f32 = b.getF32Type();
  auto cst = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  DenseMap<Value, Value> tangent;
  tangent[src.getArgument(0)] = cst(1.0);
  Value zero = cst(0.0);
  for (Operation &op : src.without_terminator()) {
    Operation *copy = b.clone(op, primal);
    bool active = llvm::any_of(op.getOperands(),
                               [&](Value v) { return tangent.count(v); });
    if (!active)
      continue;
    if (copy->getNumResults() != 1 || copy->getResult(0).getType() != f32)
      return op.emitOpError()
             << "takes the score but does not yield one f32; "
                "--attnc-derive-backward cannot differentiate it";
    auto p = [&](unsigned i) { return primal.lookup(op.getOperand(i)); };
    // The tangent of operand i, or null when it has none (a constant or a
    // value from above): terms with it are left out, not multiplied by 0.
    auto t = [&](unsigned i) { return tangent.lookup(op.getOperand(i)); };
    auto orZero = [&](Value v) { return v ? v : zero; };
    auto sum = [&](Value a, Value c) -> Value {
      if (!a || !c)
        return a ? a : c;
      return arith::AddFOp::create(b, loc, a, c);
    };
    auto times = [&](Value a, Value c) -> Value {
      return a && c ? arith::MulFOp::create(b, loc, a, c).getResult() : Value();
    };
    Value r = copy->getResult(0);
    using namespace arith;
    Value dr =
        llvm::TypeSwitch<Operation *, Value>(&op)
            .Case([&](AddFOp) { return sum(t(0), t(1)); })
            .Case([&](SubFOp) {
              Value neg =
                  t(1) ? NegFOp::create(b, loc, t(1)).getResult() : Value();
              return sum(t(0), neg);
            })
            .Case([&](NegFOp) { return NegFOp::create(b, loc, t(0)); })
            .Case([&](MulFOp) {
              return sum(times(t(0), p(1)), times(p(0), t(1)));
            })
            .Case([&](DivFOp) -> Value {
              // (a / c)' = a' / c - a c' / c^2
              Value first = t(0) ? DivFOp::create(b, loc, t(0), p(1)) : Value();
              if (!t(1))
                return first;
              Value second =
                  DivFOp::create(b, loc, MulFOp::create(b, loc, r, t(1)), p(1));
              return sum(first, NegFOp::create(b, loc, second));
            })
            .Case([&](math::TanhOp) {
              // tanh' = 1 - tanh^2, from the cloned tanh.
              return MulFOp::create(
                  b, loc,
                  SubFOp::create(b, loc, cst(1.0),
                                 MulFOp::create(b, loc, r, r)),
                  t(0));
            })
            .Case([&](math::ExpOp) { return MulFOp::create(b, loc, r, t(0)); })
            .Case(
                [&](math::LogOp) { return DivFOp::create(b, loc, t(0), p(0)); })
            .Case([&](math::AbsFOp) {
              Value pos =
                  CmpFOp::create(b, loc, CmpFPredicate::OGE, p(0), cst(0.0));
              return arith::SelectOp::create(b, loc, pos, t(0),
                                             NegFOp::create(b, loc, t(0)));
            })
            .Case<MaximumFOp, MaxNumFOp, MinimumFOp, MinNumFOp>(
                [&](Operation *m) {
                  bool isMax = isa<MaximumFOp, MaxNumFOp>(m);
                  Value first = CmpFOp::create(
                      b, loc, isMax ? CmpFPredicate::OGE : CmpFPredicate::OLE,
                      p(0), p(1));
                  return arith::SelectOp::create(b, loc, first, orZero(t(0)),
                                                 orZero(t(1)))
                      .getResult();
                })
            .Case([&](arith::SelectOp) {
              return arith::SelectOp::create(b, loc, p(0), orZero(t(1)),
                                             orZero(t(2)));
            })
            .Default([](Operation *) { return Value(); });
    if (!dr)
      return op.emitOpError() << "in a score region has no derivative rule "
                                 "in --attnc-derive-backward (add, sub, mul, "
                                 "div, neg, tanh, exp, log, abs, min, max, "
                                 "select have one)";
    tangent[op.getResult(0)] = dr;
  }
  auto yield = cast<YieldOp>(src.getTerminator());
  Value result = tangent.lookup(yield.getValues()[0]);
  YieldOp::create(b, loc, ValueRange{result ? result : zero});
  return success();
}

struct BackwardBuilder {
  func::FuncOp fn;
  AttentionOp attn;
  /// The forward's values as the backward sees them.
  IRMapping map;
  /// Arguments of `fn` other than Q, K and V that the attention uses, in
  /// the order of `fn`'s arguments.
  SmallVector<BlockArgument> extraArgs;

  /// Arguments of `fn` and ops the attention's operands and regions need.
  LogicalResult collect(Value v, llvm::SetVector<Operation *> &ops,
                        llvm::SmallSetVector<BlockArgument, 4> &args) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &fn.getBody().front())
        return attn->emitOpError()
               << "uses a block argument that is not one of the function's; "
                  "--attnc-derive-backward cannot recompute it";
      args.insert(arg);
      return success();
    }
    Operation *def = v.getDefiningOp();
    if (ops.contains(def))
      return success();
    if (!isRecomputable(def))
      return attn->emitOpError()
             << "uses a value computed by '" << def->getName()
             << "' in the function; the backward recomputes only index and "
                "scalar arithmetic of the function's arguments "
                "(--attnc-derive-backward)";
    for (Value operand : def->getOperands())
      if (failed(collect(operand, ops, args)))
        return failure();
    ops.insert(def);
    return success();
  }

  LogicalResult build(OpBuilder &b, StringRef name) {
    Location loc = attn.getLoc();
    Block &entry = fn.getBody().front();
    Value qkv[] = {attn.getQuery(), attn.getKey(), attn.getValue()};
    StringRef qkvNames[] = {"query", "key", "value"};
    for (auto [v, n] : llvm::zip(qkv, qkvNames)) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &entry)
        return attn->emitOpError()
               << "operand '" << n
               << "' is computed inside the function; "
                  "--attnc-derive-backward differentiates attention of the "
                  "function's arguments (its gradient is the function's)";
    }
    // Everything else the op reads: the run-time scale and the values its
    // mask region uses from above.
    llvm::SetVector<Value> needed;
    if (Value rs = attn.getRuntimeScale())
      needed.insert(rs);
    getUsedValuesDefinedAbove(attn.getMask(), needed);
    getUsedValuesDefinedAbove(attn.getScore(), needed);
    llvm::SetVector<Operation *> ops;
    llvm::SmallSetVector<BlockArgument, 4> args;
    for (Value v : needed)
      if (failed(collect(v, ops, args)))
        return failure();
    for (BlockArgument a : entry.getArguments())
      if (args.contains(a) && !llvm::is_contained(qkv, Value(a)))
        extraArgs.push_back(a);

    auto qType = cast<RankedTensorType>(attn.getQuery().getType());
    auto oType = cast<RankedTensorType>(attn.getResult().getType());
    Type f32 = b.getF32Type();
    auto lseType = RankedTensorType::get(qType.getShape().take_front(3), f32);
    SmallVector<Type> argTypes = {qType,
                                  attn.getKey().getType(),
                                  attn.getValue().getType(),
                                  oType,
                                  lseType,
                                  oType};
    for (BlockArgument a : extraArgs)
      argTypes.push_back(a.getType());
    SmallVector<Type> resultTypes = {qType, attn.getKey().getType(),
                                     attn.getValue().getType()};
    b.setInsertionPointAfter(fn);
    auto bwd = func::FuncOp::create(b, loc, name,
                                    b.getFunctionType(argTypes, resultTypes));
    bwd.setVisibility(fn.getVisibility());
    // Names for the host: the manifest's parameters, Python keywords.
    StringRef argNames[] = {"q", "k", "v", "o", "lse", "do"};
    for (auto [i, n] : llvm::enumerate(argNames))
      bwd.setArgAttr(i, "attnc.name", b.getStringAttr(n));
    // (A tensor the regions read keeps the forward's parameter name, its
    // position there when it has no attnc.name.)
    for (auto [i, a] : llvm::enumerate(extraArgs)) {
      auto n = fn.getArgAttrOfType<StringAttr>(a.getArgNumber(), "attnc.name");
      if (!n && isa<RankedTensorType>(a.getType()))
        n = b.getStringAttr("arg" + std::to_string(a.getArgNumber()));
      if (n)
        bwd.setArgAttr(6 + i, "attnc.name", n);
    }
    StringRef resultNames[] = {"dq", "dk", "dv"};
    for (auto [i, n] : llvm::enumerate(resultNames))
      bwd.setResultAttr(i, "attnc.name", b.getStringAttr(n));
    Block *body = bwd.addEntryBlock();
    b.setInsertionPointToStart(body);
    for (auto [i, v] : llvm::enumerate(qkv))
      map.map(v, body->getArgument(i));
    for (auto [i, a] : llvm::enumerate(extraArgs))
      map.map(a, body->getArgument(6 + i));
    for (Operation *op : ops)
      b.clone(*op, map);
    Value o = body->getArgument(3), lse = body->getArgument(4),
          dO = body->getArgument(5);

    // delta = rowsum(dO * O), in f32: the products of two bf16 values are
    // exact in f32 and the sum is what every recomputed P is corrected by.
    auto f32Out = RankedTensorType::get(oType.getShape(), f32);
    Value dO32 = CastOp::create(b, loc, f32Out, dO);
    Value o32 = CastOp::create(b, loc, f32Out, o);
    Value prod = MulOp::create(b, loc, f32Out, dO32, o32);
    SmallVector<int64_t> rowShape(oType.getShape());
    rowShape.back() = 1;
    Value delta =
        ReduceSumOp::create(b, loc, RankedTensorType::get(rowShape, f32), prod);

    auto dq32Type = RankedTensorType::get(qType.getShape(), f32);
    Value runtimeScale =
        attn.getRuntimeScale() ? map.lookup(attn.getRuntimeScale()) : Value();
    auto grad = AttentionGradOp::create(
        b, loc,
        TypeRange{dq32Type, attn.getKey().getType(), attn.getValue().getType()},
        map.lookup(qkv[0]), map.lookup(qkv[1]), map.lookup(qkv[2]), dO, lse,
        delta, runtimeScale, attn.getScaleAttr(), /*config=*/nullptr);
    attn.getMask().cloneInto(&grad.getMask(), map);
    if (attn.hasScoreModifier()) {
      attn.getScore().cloneInto(&grad.getScore(), map);
      if (failed(
              differentiateScore(b, attn.getScore(), grad.getScoreGrad(), map)))
        return failure();
      b.setInsertionPointAfter(grad);
    }
    Value dq = CastOp::create(b, loc, qType, grad.getQueryGrad());
    func::ReturnOp::create(
        b, loc, ValueRange{dq, grad.getKeyGrad(), grad.getValueGrad()});
    return success();
  }
};

struct AttncDeriveBackwardPass
    : attnc::impl::AttncDeriveBackwardBase<AttncDeriveBackwardPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    bool failedAny = false;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      if (fn.isExternal())
        continue;
      SmallVector<AttentionOp> attns;
      fn.walk([&](AttentionOp op) { attns.push_back(op); });
      if (attns.empty())
        continue;
      std::string name = (fn.getSymName() + "_backward").str();
      if (attns.size() > 1) {
        fn.emitOpError() << "has " << attns.size()
                         << " attention ops; --attnc-derive-backward derives "
                            "the backward of a function with one";
        failedAny = true;
        continue;
      }
      AttentionOp attn = attns.front();
      auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
      if (attn->getBlock() != &fn.getBody().front() ||
          ret.getNumOperands() != 1 || ret.getOperand(0) != attn.getResult()) {
        fn.emitOpError() << "does not return its attention's result as its "
                            "one result; --attnc-derive-backward derives the "
                            "backward of such functions only";
        failedAny = true;
        continue;
      }
      // Training batches are padded or packed, not cut by a cache's used
      // lengths: no backward kernel reads them.
      if (attn.getKvLengths()) {
        attn.emitOpError() << "has kv_lengths; --attnc-derive-backward "
                              "derives the backward of attention over whole "
                              "K/V sequences only";
        failedAny = true;
        continue;
      }
      // dP through dropout is keep * dO V^T / (1 - p) with the forward's
      // mask regenerated; the backward kernel has no dropout stage yet.
      if (attn.hasDropout()) {
        attn.emitOpError() << "drops probabilities; --attnc-derive-backward "
                              "does not derive the gradient through dropout "
                              "yet";
        failedAny = true;
        continue;
      }
      if (SymbolTable::lookupSymbolIn(module, name)) {
        fn.emitOpError() << "has a backward named '" << name
                         << "', which another symbol of the module has";
        failedAny = true;
        continue;
      }
      BackwardBuilder builder{fn, attn, {}, {}};
      if (failed(builder.build(b, name)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
