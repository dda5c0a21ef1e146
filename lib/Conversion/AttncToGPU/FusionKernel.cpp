//===- FusionKernel.cpp - row kernel builder for attnc.fusion -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Emits the kernel of one attnc.fusion. The fusion's iteration space is its
// result shape [R..., N]: one CTA per row, each active thread owning
// `chunks` groups of 8 consecutive columns (one 16-byte access for 16-bit
// types). Every body value is classified by how it broadcasts against a row:
// Full (one value per element), Col (per column, same for every row), Row
// (one per row, e.g. a reduction) or Scalar. Full and Col values live in
// registers as vector<8xf32> chunks, Row and Scalar values as scalars, so the
// whole chain runs in registers and only inputs and results touch global
// memory. Row reductions combine per-thread partials with warp shuffles and
// a small shared-memory array.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/FusionKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;

namespace {

/// Elements per access: 8 x 16-bit = 16 bytes, the widest global load.
constexpr int64_t kVec = 8;
/// The manifest promises 16-byte aligned tensors (docs/abi.md) and every
/// chunk starts at a multiple of 8 elements of a row whose stride the
/// runtime checks, so accesses are 16-byte aligned; without saying so, LLVM
/// splits them into 2-byte loads.
constexpr uint64_t kAccessAlign = 16;
constexpr int64_t kWarpSize = 32;
/// CUDA's limit on threads per block.
constexpr int64_t kMaxThreads = 1024;
/// Philox-4x32-10 constants (Salmon et al., "Parallel random numbers: as
/// easy as 1, 2, 3", SC'11), as in cuRAND and PyTorch.
constexpr uint32_t kPhiloxM0 = 0xD2511F53, kPhiloxM1 = 0xCD9E8D57;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9, kPhiloxW1 = 0xBB67AE85;
constexpr int kPhiloxRounds = 10;

enum class Kind { Full, Col, Row, Scalar };

struct Val {
  Kind kind;
  SmallVector<Value> chunks; // Full, Col: one vector<8xT> per chunk
  Value scalar;              // Row, Scalar
  bool perElement() const { return kind == Kind::Full || kind == Kind::Col; }
};

class FusionEmitter {
public:
  FusionEmitter(OpBuilder &b, FusionOp fusion, KernelABI &abi)
      : b(b), loc(fusion.getLoc()), fusion(fusion), abi(abi) {}

  FailureOr<gpu::GPUFuncOp> emit(gpu::GPUModuleOp module, StringRef name);

private:
  LogicalResult plan();
  void emitPrologue(gpu::GPUFuncOp func);
  LogicalResult loadInputs(gpu::GPUFuncOp func);
  LogicalResult emitOp(Operation *op);
  void storeResults(gpu::GPUFuncOp func);

  // Arithmetic helpers.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value i32(uint32_t v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Value splat(Value s) {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({kVec}, s.getType()), s);
  }
  Val map(Val a, function_ref<Value(Value)> fn);
  Val zip(Val a, Val c, function_ref<Value(Value, Value)> fn);
  SmallVector<Value> perElementChunks(const Val &v);
  Value rowReduce(const Val &v, bool isMax);
  Value blockReduce(Value partial, bool isMax);
  SmallVector<Value> philox(Value c0, Value c1, Value k0, Value k1);
  Value rowOffset(unsigned param);
  Value load(unsigned tensorParam, Kind kind, Type elem);
  Kind classify(RankedTensorType t, std::string &why);

  OpBuilder &b;
  Location loc;
  FusionOp fusion;
  KernelABI &abi;

  // Iteration space [R..., N].
  SmallVector<int64_t> iter;
  int64_t n = 0, chunks = 1, activeThreads = 0, threads = 0, slots = 0;
  // Per fusion input / result: the ABI parameter of its pointer or value,
  // its class and the parameters of its leading strides.
  SmallVector<int64_t> inputParam, resultParam;
  SmallVector<Kind> inputKind;
  DenseMap<int64_t, SmallVector<int64_t>> strideParams;
  SmallVector<std::pair<int64_t, Kind>> paramKind; // tensor params in order
  SmallVector<int64_t> sizeParam; // per leading dim, -1 when static

  // Kernel values.
  Value tid, rowId, active, smem;
  SmallVector<Value> args, memrefs, leadIdx, colBase;
  int64_t nextSlot = 0;
  DenseMap<Value, Val> vals;
};

} // namespace

Kind FusionEmitter::classify(RankedTensorType t, std::string &why) {
  ArrayRef<int64_t> s = t.getShape();
  int64_t rank = iter.size();
  auto allOnes = [](ArrayRef<int64_t> d) {
    return llvm::all_of(d, [](int64_t x) { return x == 1; });
  };
  if (allOnes(s))
    return Kind::Scalar;
  if (s.back() == n && allOnes(s.drop_back()))
    return Kind::Col;
  if ((int64_t)s.size() == rank) {
    bool leadMatch = true;
    for (int64_t k = 0; k + 1 < rank; ++k)
      leadMatch &= s[k] == iter[k];
    if (leadMatch && s.back() == n)
      return Kind::Full;
    if (leadMatch && s.back() == 1)
      return Kind::Row;
  }
  why = "it broadcasts against the iteration space in a way the row kernel "
        "does not support (expected the full shape, [..., 1], [N] or a "
        "scalar)";
  return Kind::Full;
}

LogicalResult FusionEmitter::plan() {
  for (Type t : fusion.getResultTypes()) {
    auto rt = cast<RankedTensorType>(t);
    if (rt.getRank() > 0 && rt.getShape().back() != 1) {
      iter.assign(rt.getShape().begin(), rt.getShape().end());
      break;
    }
  }
  if (iter.empty())
    return fusion.emitOpError("cannot be lowered to a row kernel: no result "
                              "has a row dimension");
  n = iter.back();
  if (ShapedType::isDynamic(n) || n % kVec != 0)
    return fusion.emitOpError()
           << "cannot be lowered to a row kernel: the last dimension must be "
              "static and a multiple of "
           << kVec << " (16-byte accesses), got "
           << (ShapedType::isDynamic(n) ? std::string("?")
                                        : std::to_string(n));
  int64_t groups = n / kVec;
  while (groups % chunks != 0 || groups / chunks > kMaxThreads)
    ++chunks;
  activeThreads = groups / chunks;
  threads = llvm::alignTo(activeThreads, kWarpSize);

  auto dimOf = [&](int64_t k) -> ABIDim {
    if (ShapedType::isDynamic(iter[k]))
      return "D" + std::to_string(k);
    return iter[k];
  };
  auto addTensor = [&](std::string name, RankedTensorType t, Kind kind,
                       StringRef role) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = name;
    p.dtype = mlirTypeToDType(t.getElementType());
    p.role = role.str();
    if (kind == Kind::Full || kind == Kind::Row) {
      for (int64_t k = 0; k + 1 < (int64_t)iter.size(); ++k)
        p.shape.push_back(dimOf(k));
      p.shape.push_back(kind == Kind::Full ? n : 1);
    } else {
      for (int64_t d : t.getShape())
        p.shape.push_back(d);
      // Scalars are read at element 0: no vector alignment needed.
      if (kind == Kind::Scalar)
        p.align = t.getElementTypeBitWidth() / 8;
    }
    abi.params.push_back(p);
    int64_t index = abi.params.size() - 1;
    paramKind.push_back({index, kind});
    return index;
  };

  for (auto [i, v] : llvm::enumerate(fusion.getInputs())) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    std::string name = "in" + std::to_string(i);
    if (auto arg = dyn_cast<BlockArgument>(v))
      name = "arg" + std::to_string(arg.getArgNumber());
    if (!t) {
      if (!v.getType().isInteger(64) && !v.getType().isF32())
        return fusion.emitOpError()
               << "input #" << i << " has type " << v.getType()
               << "; the row kernel takes tensors, i64 and f32 scalars";
      // Scalar parameters go last; they are appended below.
      inputKind.push_back(Kind::Scalar);
      inputParam.push_back(-1);
      continue;
    }
    if (!isSupportedDType(t.getElementType()))
      return fusion.emitOpError() << "input #" << i << " has element type "
                                  << t.getElementType()
                                  << "; the row kernel reads bf16, f16, f32";
    std::string why;
    Kind k = classify(t, why);
    if (!why.empty())
      return fusion.emitOpError() << "input #" << i << " of type " << t
                                  << " cannot be lowered: " << why;
    inputKind.push_back(k);
    inputParam.push_back(addTensor(name, t, k, "input"));
  }
  for (auto [j, t] : llvm::enumerate(fusion.getResultTypes())) {
    auto rt = cast<RankedTensorType>(t);
    std::string why;
    Kind k = classify(rt, why);
    if (k != Kind::Full && k != Kind::Row)
      return fusion.emitOpError()
             << "result #" << j << " of type " << rt
             << " cannot be lowered: results must have the iteration shape "
                "or the iteration shape with the last dimension 1";
    if (!isSupportedDType(rt.getElementType()))
      return fusion.emitOpError() << "result #" << j << " has element type "
                                  << rt.getElementType()
                                  << "; the row kernel writes bf16, f16, f32";
    resultParam.push_back(
        addTensor("result" + std::to_string(j), rt, k, "output"));
  }
  for (int64_t k = 0; k + 1 < (int64_t)iter.size(); ++k) {
    if (!ShapedType::isDynamic(iter[k])) {
      sizeParam.push_back(-1);
      continue;
    }
    ABIParam p;
    p.kind = ABIParam::Kind::Size;
    p.name = "D" + std::to_string(k);
    p.dtype = "i64";
    abi.params.push_back(p);
    sizeParam.push_back(abi.params.size() - 1);
  }
  // Leading strides of every per-row tensor, so views need not be
  // contiguous beyond the last dimension.
  for (auto [t, kind] : paramKind) {
    if ((kind != Kind::Full && kind != Kind::Row) || iter.size() < 2)
      continue;
    for (int64_t d = 0; d + 1 < (int64_t)iter.size(); ++d) {
      ABIParam p;
      p.kind = ABIParam::Kind::Stride;
      p.name = abi.params[t].name + ".stride" + std::to_string(d);
      p.dtype = "i64";
      p.tensor = abi.params[t].name;
      p.dim = d;
      abi.params.push_back(p);
      strideParams[t].push_back(abi.params.size() - 1);
    }
  }
  for (auto [i, v] : llvm::enumerate(fusion.getInputs())) {
    if (isa<RankedTensorType>(v.getType()))
      continue;
    ABIParam p;
    p.kind = ABIParam::Kind::Scalar;
    p.name = (isa<BlockArgument>(v)
                  ? "arg" + std::to_string(cast<BlockArgument>(v).getArgNumber())
                  : "in" + std::to_string(i));
    p.dtype = mlirTypeToDType(v.getType());
    abi.params.push_back(p);
    inputParam[i] = abi.params.size() - 1;
  }

  // One shared-memory slot of 32 floats per block reduction.
  fusion.getBody().walk([&](Operation *op) {
    if (isa<ReduceMaxOp, ReduceSumOp, RmsNormOp>(op))
      slots += 1;
    else if (isa<SoftmaxOp, LayerNormOp>(op))
      slots += 2;
  });
  return success();
}

void FusionEmitter::emitPrologue(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  args.assign(entry.getArguments().begin(),
              entry.getArguments().begin() + abi.params.size());
  smem = slots ? Value(func.getWorkgroupAttributions().front()) : Value();
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  rowId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                 idx(activeThreads));
  // Inactive threads (padding up to a whole warp) read column 0 again and
  // are masked out of reductions and stores.
  Value t = arith::SelectOp::create(b, loc, active, tid, idx(0));
  for (int64_t c = 0; c < chunks; ++c)
    colBase.push_back(arith::MulIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, t, idx(c * activeThreads)), idx(kVec)));
  // Row id -> index of each leading dimension (the last one varies fastest).
  int64_t lead = iter.size() - 1;
  leadIdx.assign(lead, Value());
  Value r = rowId;
  for (int64_t k = lead - 1; k >= 0; --k) {
    Value size = sizeParam[k] < 0
                     ? idx(iter[k])
                     : arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                  args[sizeParam[k]])
                           .getResult();
    leadIdx[k] = arith::RemUIOp::create(b, loc, r, size);
    r = arith::DivUIOp::create(b, loc, r, size);
  }
  memrefs.assign(abi.params.size(), Value());
  for (auto [p, kind] : paramKind)
    memrefs[p] = wrapGlobalPointer(
        b, loc, args[p],
        p < (int64_t)abi.params.size() && abi.params[p].role == "output"
            ? cast<RankedTensorType>(
                  fusion.getResultTypes()[llvm::find(resultParam, p) -
                                          resultParam.begin()])
                  .getElementType()
            : cast<RankedTensorType>(
                  fusion.getInputs()[llvm::find(inputParam, p) -
                                     inputParam.begin()]
                      .getType())
                  .getElementType());
}

Value FusionEmitter::rowOffset(unsigned param) {
  Value off = idx(0);
  auto it = strideParams.find(param);
  if (it == strideParams.end())
    return off;
  for (auto [k, sp] : llvm::enumerate(it->second)) {
    Value stride =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), args[sp]);
    off = arith::AddIOp::create(
        b, loc, off, arith::MulIOp::create(b, loc, leadIdx[k], stride));
  }
  return off;
}

/// Extends to f32 (the compute type) unless already f32.
static Value toF32(OpBuilder &b, Location loc, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (elem.isF32())
    return v;
  Type target = b.getF32Type();
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = VectorType::get(vt.getShape(), target);
  return arith::ExtFOp::create(b, loc, target, v);
}

LogicalResult FusionEmitter::loadInputs(gpu::GPUFuncOp) {
  Block &body = fusion.getBody().front();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    Val v;
    v.kind = inputKind[i];
    int64_t p = inputParam[i];
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t) {
      v.scalar = args[p];
      vals[arg] = v;
      continue;
    }
    Type elem = t.getElementType();
    Value base = rowOffset(p);
    if (v.perElement()) {
      for (int64_t c = 0; c < chunks; ++c) {
        Value at = v.kind == Kind::Full
                       ? arith::AddIOp::create(b, loc, base, colBase[c])
                             .getResult()
                       : colBase[c];
        Value x = vector::LoadOp::create(b, loc, VectorType::get({kVec}, elem),
                                         memrefs[p], ValueRange{at},
                                         /*nontemporal=*/false,
                                         llvm::Align(kAccessAlign));
        v.chunks.push_back(toF32(b, loc, x));
      }
    } else {
      Value x = memref::LoadOp::create(b, loc, memrefs[p], ValueRange{base});
      v.scalar = toF32(b, loc, x);
    }
    vals[arg] = v;
  }
  return success();
}

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
    Kind k = (a.kind == Kind::Row || c.kind == Kind::Row) ? Kind::Row
                                                          : Kind::Scalar;
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
  Value width = i32(kWarpSize);
  for (int64_t off = kWarpSize / 2; off >= 1; off /= 2) {
    auto sh = gpu::ShuffleOp::create(b, loc, v, i32(off), width,
                                     gpu::ShuffleMode::XOR);
    v = combine(v, sh.getShuffleResult());
  }
  int64_t slot = nextSlot++ * kWarpSize;
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(kWarpSize));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(kWarpSize));
  Value isLane0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0));
  scf::IfOp::create(b, loc, isLane0, [&](OpBuilder &nb, Location l) {
    memref::StoreOp::create(nb, l, v, smem,
                            ValueRange{arith::AddIOp::create(
                                nb, l, warp, idx(slot))});
    scf::YieldOp::create(nb, l);
  });
  gpu::BarrierOp::create(b, loc);
  Value r = identity;
  for (int64_t w = 0; w < threads / kWarpSize; ++w)
    r = combine(r, memref::LoadOp::create(b, loc, smem,
                                          ValueRange{idx(slot + w)}));
  return r;
}

Value FusionEmitter::rowReduce(const Val &v, bool isMax) {
  Value partial;
  if (v.perElement()) {
    auto kind = isMax ? vector::CombiningKind::MAXIMUMF
                      : vector::CombiningKind::ADD;
    for (Value c : v.chunks) {
      Value r = vector::ReductionOp::create(b, loc, kind, c);
      partial = !partial ? r
                : isMax  ? arith::MaximumFOp::create(b, loc, partial, r)
                               .getResult()
                         : arith::AddFOp::create(b, loc, partial, r).getResult();
    }
    return blockReduce(partial, isMax);
  }
  // A row value reduced over a broadcast last dimension of N copies.
  if (isMax)
    return v.scalar;
  return arith::MulFOp::create(b, loc, v.scalar, f32(double(n)));
}

SmallVector<Value> FusionEmitter::philox(Value c0, Value c1, Value k0,
                                        Value k1) {
  Value c2 = i32(0), c3 = i32(0);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      k0 = arith::AddIOp::create(b, loc, k0, i32(kPhiloxW0));
      k1 = arith::AddIOp::create(b, loc, k1, i32(kPhiloxW1));
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, i32(kPhiloxM0), c0);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, i32(kPhiloxM1), c2);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c1), k0);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c3), k1);
    c0 = n0;
    c1 = p1.getLow();
    c2 = n2;
    c3 = p0.getLow();
  }
  return {c0, c1, c2, c3};
}

/// Splits a 64-bit value into its low and high 32-bit words.
static std::pair<Value, Value> split64(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  Value lo = arith::TruncIOp::create(b, loc, i32, v);
  Value hi = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(
          b, loc, v,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
  return {lo, hi};
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

static arith::CmpIPredicate toCmpI(CmpPredicate p) {
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

LogicalResult FusionEmitter::emitOp(Operation *op) {
  auto get = [&](Value v) { return vals.lookup(v); };
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

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AddOp) { return binary(lb(arith::AddFOp())); })
      .Case([&](SubOp) { return binary(lb(arith::SubFOp())); })
      .Case([&](MulOp) { return binary(lb(arith::MulFOp())); })
      .Case([&](DivOp) { return binary(lb(arith::DivFOp())); })
      .Case([&](MaxOp) { return binary(lb(arith::MaximumFOp())); })
      .Case([&](ExpOp) { return unary(lu(math::ExpOp())); })
      .Case([&](LogOp) { return unary(lu(math::LogOp())); })
      .Case([&](NegOp) { return unary(lu(arith::NegFOp())); })
      .Case([&](TanhOp) { return unary(lu(math::TanhOp())); })
      .Case([&](RsqrtOp) { return unary(lu(math::RsqrtOp())); })
      .Case([&](CastOp c) {
        Type to = c.getResult().getType().getElementType();
        if (to.isF32())
          return unary([](Value x) { return x; });
        // Round to the narrow type and back: later ops see the value the
        // unfused graph would have stored.
        return unary([&](Value x) -> Value {
          Type narrow = to, wide = b.getF32Type();
          if (auto vt = dyn_cast<VectorType>(x.getType())) {
            narrow = VectorType::get(vt.getShape(), to);
            wide = VectorType::get(vt.getShape(), wide);
          }
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
            return arith::CmpIOp::create(b, loc, toCmpI(c.getPredicate()), x,
                                         y);
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
        Value threshold = f32(p);
        auto [k0, k1] = split64(b, loc, get(d.getSeed()).scalar);
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
          // Each Philox call gives 4 words: elements 4q..4q+3 share counter
          // offset + q.
          Value q = arith::ShRUIOp::create(
              b, loc, lin,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(2)));
          SmallVector<Value> lanes;
          for (int64_t call = 0; call < kVec / 4; ++call) {
            Value ctr = arith::AddIOp::create(
                b, loc, arith::AddIOp::create(b, loc, offset, q),
                arith::ConstantOp::create(b, loc,
                                          b.getI64IntegerAttr(call)));
            auto [c0, c1] = split64(b, loc, ctr);
            for (Value w : philox(c0, c1, k0, k1)) {
              // u = (w >> 8) * 2^-24: 24 random bits, exact in f32.
              Value bits = arith::ShRUIOp::create(b, loc, w, i32(8));
              Value u = arith::MulFOp::create(
                  b, loc,
                  arith::UIToFPOp::create(b, loc, b.getF32Type(), bits),
                  f32(1.0 / 16777216.0));
              lanes.push_back(u);
            }
          }
          Value xs = x.chunks[c];
          Value out = vector::BroadcastOp::create(
              b, loc, VectorType::get({kVec}, b.getF32Type()), zero);
          for (int64_t e = 0; e < kVec; ++e) {
            Value xe = vector::ExtractOp::create(b, loc, xs, e);
            Value keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                               lanes[e], threshold);
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
        Val mean = rowVal(
            arith::MulFOp::create(b, loc, rowReduce(x, false), invN));
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
              b, loc,
              b.getIntegerAttr(elem, dense.getSplatValue<APInt>()));
        vals[c.getResult()] = Val{Kind::Scalar, {}, s};
        return success();
      })
      .Default([&](Operation *o) {
        return o->emitOpError("has no row-kernel lowering");
      });
}

void FusionEmitter::storeResults(gpu::GPUFuncOp) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [j, v] : llvm::enumerate(yield.getValues())) {
    int64_t p = resultParam[j];
    Type elem = cast<RankedTensorType>(v.getType()).getElementType();
    Val val = vals.lookup(v);
    Value base = rowOffset(p);
    if (abi.params[p].shape.back() == ABIDim(int64_t(1))) {
      Value s = val.perElement()
                    ? vector::ExtractOp::create(b, loc, val.chunks[0], 0)
                          .getResult()
                    : val.scalar;
      if (!elem.isF32())
        s = arith::TruncFOp::create(b, loc, elem, s);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          tid, idx(0));
      scf::IfOp::create(b, loc, first, [&](OpBuilder &nb, Location l) {
        memref::StoreOp::create(nb, l, s, memrefs[p], ValueRange{base});
        scf::YieldOp::create(nb, l);
      });
      continue;
    }
    SmallVector<Value> cs = perElementChunks(val);
    scf::IfOp::create(b, loc, active, [&](OpBuilder &nb, Location l) {
      for (int64_t c = 0; c < chunks; ++c) {
        Value x = cs[c];
        if (!elem.isF32())
          x = arith::TruncFOp::create(nb, l, VectorType::get({kVec}, elem), x);
        Value at = arith::AddIOp::create(nb, l, base, colBase[c]);
        vector::StoreOp::create(nb, l, x, memrefs[p], ValueRange{at},
                                /*nontemporal=*/false,
                                llvm::Align(kAccessAlign));
      }
      scf::YieldOp::create(nb, l);
    });
  }
}

FailureOr<gpu::GPUFuncOp> FusionEmitter::emit(gpu::GPUModuleOp module,
                                              StringRef name) {
  if (failed(plan()))
    return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  for (const ABIParam &p : abi.params)
    argTypes.push_back(p.kind == ABIParam::Kind::Tensor ? Type(ptr)
                       : p.dtype == "f32"              ? Type(b.getF32Type())
                                                       : Type(b.getI64Type()));
  SmallVector<Type> workgroup;
  if (slots)
    workgroup.push_back(MemRefType::get(
        {slots * kWarpSize}, b.getF32Type(), MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  auto func = gpu::GPUFuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, {}),
                                     workgroup, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  emitPrologue(func);
  if (failed(loadInputs(func)))
    return failure();
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  storeResults(func);
  gpu::ReturnOp::create(b, loc);

  abi.name = name.str();
  abi.kind = "fusion";
  abi.block[0] = threads;
  for (int64_t k = 0; k + 1 < (int64_t)iter.size(); ++k)
    abi.grid[0].push_back(ShapedType::isDynamic(iter[k])
                              ? GridFactor{1, "D" + std::to_string(k), 1}
                              : GridFactor{iter[k], "", 1});
  if (abi.grid[0].empty())
    abi.grid[0].push_back(GridFactor{1, "", 1});
  abi.grid[1] = {GridFactor{1, "", 1}};
  abi.grid[2] = {GridFactor{1, "", 1}};
  abi.attrs = {{"row_length", std::to_string(n)},
               {"chunks_per_thread", std::to_string(chunks)}};
  return func;
}

FailureOr<gpu::GPUFuncOp> attnc::buildFusionKernel(OpBuilder &b,
                                                   gpu::GPUModuleOp module,
                                                   StringRef name,
                                                   FusionOp fusion,
                                                   KernelABI &abi) {
  return FusionEmitter(b, fusion, abi).emit(module, name);
}
