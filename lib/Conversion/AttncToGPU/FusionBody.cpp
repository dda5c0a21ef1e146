//===- FusionBody.cpp - the ops of an attnc.fusion body, in registers -----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers each op of a fusion body onto the per-thread values of the row
// kernel (FusionEmitter.h): elementwise math on vector<8xf32> chunks, row
// reductions through warp shuffles and shared memory, and dropout's
// counter-based Philox-4x32-10 mask.
//
//===----------------------------------------------------------------------===//

#include "FusionEmitter.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace attnc;
using namespace attnc::fusion_kernel;

SmallVector<Value> FusionEmitter::perElementChunks(const Val &v) {
  if (v.perElement())
    return v.chunks;
  return SmallVector<Value>(chunks, splat(v.scalar));
}

Val FusionEmitter::map(Val a, function_ref<Value(Value)> fn) {
  Val r{a.kind, {}, {}};
  if (a.perElement())
    for (Value c : a.chunks)
      r.chunks.push_back(fn(c));
  else
    r.scalar = fn(a.scalar);
  return r;
}

Val FusionEmitter::zip(Val a, Val c, function_ref<Value(Value, Value)> fn) {
  if (!a.perElement() && !c.perElement()) {
    Kind k =
        (a.kind == Kind::Row || c.kind == Kind::Row) ? Kind::Row : Kind::Scalar;
    return Val{k, {}, fn(a.scalar, c.scalar)};
  }
  Kind k = (a.kind == Kind::Col || !a.perElement()) &&
                   (c.kind == Kind::Col || !c.perElement()) &&
                   a.kind != Kind::Row && c.kind != Kind::Row
               ? Kind::Col
               : Kind::Full;
  SmallVector<Value> x = perElementChunks(a), y = perElementChunks(c);
  Val r{k, {}, {}};
  for (int64_t i = 0; i < chunks; ++i)
    r.chunks.push_back(fn(x[i], y[i]));
  return r;
}

Value FusionEmitter::blockReduce(Value partial, bool isMax) {
  auto combine = [&](Value x, Value y) -> Value {
    if (isMax)
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, x, y);
  };
  Value identity = f32(isMax ? -INFINITY : 0.0);
  Value v = arith::SelectOp::create(b, loc, active, partial, identity);
  // The whole warp shuffles (width 32: a narrower width lowers to a member
  // mask of the low lanes only); offsets below a packed row's lane count
  // stay within its aligned lanes.
  Value width = i32(kWarpSize);
  for (int64_t off = std::min(rowLanes, kWarpSize) / 2; off >= 1; off /= 2) {
    auto sh = gpu::ShuffleOp::create(b, loc, v, i32(off), width,
                                     gpu::ShuffleMode::XOR);
    v = combine(v, sh.getShuffleResult());
  }
  if (packed())
    return v;
  int64_t slot = nextSlot++ * kWarpSize;
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(kWarpSize));
  Value warpLane = arith::RemUIOp::create(b, loc, tid, idx(kWarpSize));
  Value isLane0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpLane, idx(0));
  scf::IfOp::create(b, loc, isLane0, [&](OpBuilder &nb, Location l) {
    memref::StoreOp::create(
        nb, l, v, smem,
        ValueRange{arith::AddIOp::create(nb, l, warp, idx(slot))});
    scf::YieldOp::create(nb, l);
  });
  gpu::BarrierOp::create(b, loc);
  Value r = identity;
  for (int64_t w = 0; w < threads / kWarpSize; ++w)
    r = combine(
        r, memref::LoadOp::create(b, loc, smem, ValueRange{idx(slot + w)}));
  return r;
}

Value FusionEmitter::rowReduce(const Val &v, bool isMax) {
  Value partial;
  if (v.perElement()) {
    auto kind =
        isMax ? vector::CombiningKind::MAXIMUMF : vector::CombiningKind::ADD;
    for (Value c : v.chunks) {
      Value r = vector::ReductionOp::create(b, loc, kind, c);
      partial = !partial ? r
                : isMax
                    ? arith::MaximumFOp::create(b, loc, partial, r).getResult()
                    : arith::AddFOp::create(b, loc, partial, r).getResult();
    }
    return blockReduce(partial, isMax);
  }
  // A row value reduced over a broadcast last dimension of N copies.
  if (isMax)
    return v.scalar;
  return arith::MulFOp::create(b, loc, v.scalar, f32(double(n)));
}

static arith::CmpFPredicate toCmpF(CmpPredicate p) {
  switch (p) {
  case CmpPredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case CmpPredicate::ne:
    return arith::CmpFPredicate::UNE;
  case CmpPredicate::lt:
    return arith::CmpFPredicate::OLT;
  case CmpPredicate::le:
    return arith::CmpFPredicate::OLE;
  case CmpPredicate::gt:
    return arith::CmpFPredicate::OGT;
  case CmpPredicate::ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown predicate");
}

LogicalResult FusionEmitter::emitOp(Operation *op) {
  auto get = [&](Value v) { return value(v); };
  auto binary = [&](auto fn) {
    vals[op->getResult(0)] =
        zip(get(op->getOperand(0)), get(op->getOperand(1)), fn);
    return success();
  };
  auto unary = [&](auto fn) {
    vals[op->getResult(0)] = map(get(op->getOperand(0)), fn);
    return success();
  };
  auto lb = [&](auto opTag) {
    using OpT = decltype(opTag);
    return [&](Value x, Value y) -> Value { return OpT::create(b, loc, x, y); };
  };
  auto lu = [&](auto opTag) {
    using OpT = decltype(opTag);
    return [&](Value x) -> Value { return OpT::create(b, loc, x); };
  };
  auto rowVal = [](Value s) { return Val{Kind::Row, {}, s}; };
  bool isInt = op->getNumResults() == 1 &&
               isa<IntegerType>(getElementTypeOrSelf(op->getResult(0)));

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Index arithmetic (i64) next to the float forms.
      .Case([&](AddOp) {
        return isInt ? binary(lb(arith::AddIOp()))
                     : binary(lb(arith::AddFOp()));
      })
      .Case([&](SubOp) {
        return isInt ? binary(lb(arith::SubIOp()))
                     : binary(lb(arith::SubFOp()));
      })
      .Case([&](MulOp) {
        return isInt ? binary(lb(arith::MulIOp()))
                     : binary(lb(arith::MulFOp()));
      })
      .Case([&](DivOp) {
        return isInt ? binary(lb(arith::FloorDivSIOp()))
                     : binary(lb(arith::DivFOp()));
      })
      .Case([&](MaxOp) {
        return isInt ? binary(lb(arith::MaxSIOp()))
                     : binary(lb(arith::MaximumFOp()));
      })
      .Case([&](MinOp) {
        return isInt ? binary(lb(arith::MinSIOp()))
                     : binary(lb(arith::MinimumFOp()));
      })
      .Case([&](AndOp) { return binary(lb(arith::AndIOp())); })
      .Case([&](OrOp) { return binary(lb(arith::OrIOp())); })
      .Case([&](AbsOp) {
        if (!isInt)
          return unary(lu(math::AbsFOp()));
        // max(x, 0 - x): the GPU lowering has no pattern for math.absi.
        return unary([&](Value x) -> Value {
          Value zero =
              arith::ConstantOp::create(b, loc, b.getZeroAttr(x.getType()));
          return arith::MaxSIOp::create(b, loc, x,
                                        arith::SubIOp::create(b, loc, zero, x));
        });
      })
      .Case([&](NotOp) {
        return unary([&](Value x) -> Value {
          Value t = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
          if (auto vt = dyn_cast<VectorType>(x.getType()))
            t = vector::BroadcastOp::create(b, loc, vt, t);
          return arith::XOrIOp::create(b, loc, x, t);
        });
      })
      .Case([&](ExpOp) { return unary(lu(math::ExpOp())); })
      .Case([&](LogOp) { return unary(lu(math::LogOp())); })
      .Case([&](NegOp) { return unary(lu(arith::NegFOp())); })
      .Case([&](TanhOp) { return unary(lu(math::TanhOp())); })
      .Case([&](RsqrtOp) { return unary(lu(math::RsqrtOp())); })
      .Case([&](CastOp c) {
        Type to = c.getResult().getType().getElementType();
        bool fromIndex = c.getInput().getType().getElementType().isInteger(64);
        // An i64 index converts to f32 (the value then rounds like a wide
        // float); a narrow type is rounded to and back: later ops see the
        // value the unfused graph would have stored.
        return unary([&, to, fromIndex](Value x) -> Value {
          Type narrow = to, wide = b.getF32Type();
          if (auto vt = dyn_cast<VectorType>(x.getType())) {
            narrow = VectorType::get(vt.getShape(), to);
            wide = VectorType::get(vt.getShape(), wide);
          }
          if (fromIndex)
            x = arith::SIToFPOp::create(b, loc, wide, x);
          if (to.isF32())
            return x;
          Value rounded = arith::TruncFOp::create(b, loc, narrow, x);
          return arith::ExtFOp::create(b, loc, wide, rounded);
        });
      })
      .Case([&](IotaOp io) {
        int64_t dim = io.getDimension();
        Type i64 = b.getI64Type();
        if (dim + 1 == (int64_t)iter.size()) {
          SmallVector<int64_t> lanes;
          for (int64_t e = 0; e < kVec; ++e)
            lanes.push_back(e);
          Value ramp = arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(VectorType::get({kVec}, i64),
                                     ArrayRef<int64_t>(lanes)));
          Val v{Kind::Col, {}, {}};
          for (Value col : colBase)
            v.chunks.push_back(arith::AddIOp::create(
                b, loc, splat(arith::IndexCastOp::create(b, loc, i64, col)),
                ramp));
          vals[io.getResult()] = v;
        } else {
          vals[io.getResult()] =
              rowVal(arith::IndexCastOp::create(b, loc, i64, leadIdx[dim]));
        }
        return success();
      })
      .Case([&](CmpOp c) {
        bool isInt = c.getLhs().getType().getElementType().isInteger(64);
        return binary([&](Value x, Value y) -> Value {
          if (isInt)
            return arith::CmpIOp::create(
                b, loc, toSignedCmpIPredicate(c.getPredicate()), x, y);
          return arith::CmpFOp::create(b, loc, toCmpF(c.getPredicate()), x, y);
        });
      })
      .Case([&](SelectOp s) {
        Val cnd = get(s.getCondition()), t = get(s.getTrueValue()),
            f = get(s.getFalseValue());
        Val tf = zip(t, f, [](Value x, Value) { return x; });
        Val r = zip(cnd, tf, [](Value x, Value) { return x; });
        SmallVector<Value> cc = perElementChunks(cnd), tc = perElementChunks(t),
                           fc = perElementChunks(f);
        if (r.perElement())
          for (int64_t i = 0; i < chunks; ++i)
            r.chunks[i] = arith::SelectOp::create(b, loc, cc[i], tc[i], fc[i]);
        else
          r.scalar =
              arith::SelectOp::create(b, loc, cnd.scalar, t.scalar, f.scalar);
        vals[s.getResult()] = r;
        return success();
      })
      .Case([&](DropoutOp d) -> LogicalResult {
        Val x = get(d.getInput());
        if (x.kind != Kind::Full)
          return d.emitOpError("inside a fusion must apply to a full-shape "
                               "value: its counter is the element's index");
        double p = d.getProbability().convertToDouble();
        Value keepScale = f32(1.0 / (1.0 - p)), zero = f32(0.0);
        Value threshold = i32(static_cast<uint32_t>(std::ceil(p * 65536.0)));
        auto [k0, k1] = splitI64(b, loc, get(d.getSeed()).scalar);
        Value offset = get(d.getOffset()).scalar;
        Type i64 = b.getI64Type();
        Value rowLinear = arith::MulIOp::create(
            b, loc, arith::IndexCastOp::create(b, loc, i64, rowId),
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(n)));
        Val r{Kind::Full, {}, {}};
        for (int64_t c = 0; c < chunks; ++c) {
          Value lin = arith::AddIOp::create(
              b, loc, rowLinear,
              arith::IndexCastOp::create(b, loc, i64, colBase[c]));
          // One Philox call gives 4 words = 8 16-bit draws: elements
          // 8q..8q+7 share counter offset + q (a chunk starts at a multiple
          // of 8). Halving the calls against one draw per word matters: the
          // chain is otherwise bound by Philox's multiplies, not by HBM.
          Value q = arith::ShRUIOp::create(
              b, loc, lin,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(3)));
          auto [c0, c1] =
              splitI64(b, loc, arith::AddIOp::create(b, loc, offset, q));
          SmallVector<Value> lanes;
          for (Value w : philox4x32(b, loc, c0, c1, k0, k1)) {
            lanes.push_back(arith::AndIOp::create(b, loc, w, i32(0xFFFF)));
            lanes.push_back(arith::ShRUIOp::create(b, loc, w, i32(16)));
          }
          Value xs = x.chunks[c];
          Value out = vector::BroadcastOp::create(
              b, loc, VectorType::get({kVec}, b.getF32Type()), zero);
          for (int64_t e = 0; e < kVec; ++e) {
            Value xe = vector::ExtractOp::create(b, loc, xs, e);
            // u = bits / 2^16 >= p  <=>  bits >= ceil(p * 2^16).
            Value keep = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::uge, lanes[e], threshold);
            Value ye = arith::SelectOp::create(
                b, loc, keep, arith::MulFOp::create(b, loc, xe, keepScale),
                zero);
            out = vector::InsertOp::create(b, loc, ye, out, e);
          }
          r.chunks.push_back(out);
        }
        vals[d.getResult()] = r;
        return success();
      })
      .Case([&](ReduceMaxOp r) {
        vals[r.getResult()] = rowVal(rowReduce(get(r.getInput()), true));
        return success();
      })
      .Case([&](ReduceSumOp r) {
        vals[r.getResult()] = rowVal(rowReduce(get(r.getInput()), false));
        return success();
      })
      .Case([&](SoftmaxOp s) {
        Val x = get(s.getInput());
        Val m = rowVal(rowReduce(x, true));
        Val e = map(zip(x, m, lb(arith::SubFOp())), lu(math::ExpOp()));
        Val sum = rowVal(rowReduce(e, false));
        vals[s.getResult()] = zip(e, sum, lb(arith::DivFOp()));
        return success();
      })
      .Case([&](LayerNormOp l) {
        Val x = get(l.getInput());
        Value invN = f32(1.0 / double(n));
        Val mean =
            rowVal(arith::MulFOp::create(b, loc, rowReduce(x, false), invN));
        Val d = zip(x, mean, lb(arith::SubFOp()));
        Val var = rowVal(arith::MulFOp::create(
            b, loc, rowReduce(zip(d, d, lb(arith::MulFOp())), false), invN));
        Val inv = rowVal(math::RsqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, var.scalar,
                                  f32(l.getEpsilon().convertToDouble()))));
        Val y = zip(zip(d, inv, lb(arith::MulFOp())), get(l.getGamma()),
                    lb(arith::MulFOp()));
        vals[l.getResult()] = zip(y, get(l.getBeta()), lb(arith::AddFOp()));
        return success();
      })
      .Case([&](RmsNormOp r) {
        Val x = get(r.getInput());
        Value ms = arith::MulFOp::create(
            b, loc, rowReduce(zip(x, x, lb(arith::MulFOp())), false),
            f32(1.0 / double(n)));
        Val inv = rowVal(math::RsqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, ms,
                                  f32(r.getEpsilon().convertToDouble()))));
        vals[r.getResult()] = zip(zip(x, inv, lb(arith::MulFOp())),
                                  get(r.getGamma()), lb(arith::MulFOp()));
        return success();
      })
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        auto dense = dyn_cast<SplatElementsAttr>(c.getValue());
        if (!dense)
          return c.emitOpError("inside a fusion must be a splat constant to "
                               "be lowered to a row kernel");
        Type elem = dense.getElementType();
        Value s;
        if (isa<FloatType>(elem))
          s = f32(dense.getSplatValue<APFloat>().convertToDouble());
        else
          s = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(elem, dense.getSplatValue<APInt>()));
        vals[c.getResult()] = Val{Kind::Scalar, {}, s};
        return success();
      })
      .Default([&](Operation *o) {
        return o->emitOpError("has no row-kernel lowering");
      });
}
