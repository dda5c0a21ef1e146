//===- Intensity.cpp - FLOPs, HBM bytes and regimes per kernel ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Counts what each kernel-to-be of a function computes and moves. Extents
// come from ShapeAnalysis, bound to numbers by SizeBindings; which buffers
// are score-sized comes from ScoreBufferRule, the same rule the no-S x S
// check uses, so the report's "score traffic" and the check's errors agree.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/Intensity.h"
#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Analysis/KernelVersions.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

/// 2 FLOP (a multiply and an add) per multiply-accumulate: 2S^2d per
/// S x S x d matmul.
static constexpr double kFlopsPerMac = 2.0;
/// A causal kernel skips the blocks above the diagonal: half the work, as
/// FlashAttention's benchmarks count it.
static constexpr double kCausalFraction = 0.5;

/// Elementwise FLOPs per element. Softmax as AttncOps.td spells it: row max,
/// subtract, exp, row sum, divide. LayerNorm: mean, subtract, square,
/// variance sum, scale by rsqrt, gamma, beta. RMSNorm: square, sum, scale,
/// gamma. Casts, selects and iotas move data and count nothing.
static constexpr double kSoftmaxFlopsPerElement = 5.0;
static constexpr double kLayerNormFlopsPerElement = 7.0;
static constexpr double kRmsNormFlopsPerElement = 4.0;

static constexpr double kMicrosecondsPerSecond = 1e6;
static constexpr double kTera = 1e12;

//===----------------------------------------------------------------------===//
// Estimates
//===----------------------------------------------------------------------===//

double KernelCost::avoidedScoreBytes() const {
  if (!attention)
    return 0;
  const AttentionInfo &a = *attention;
  return (double)a.batch * a.heads * a.seqLenQ * a.seqLenKV * a.elementBytes;
}

StringRef attnc::stringifyRegime(Regime regime) {
  switch (regime) {
  case Regime::Compute:
    return "compute-bound";
  case Regime::Bandwidth:
    return "bandwidth-bound";
  case Regime::Overhead:
    return "overhead-bound";
  }
  llvm_unreachable("unknown regime");
}

KernelEstimate attnc::estimateKernel(const KernelCost &kernel,
                                     const RooflineModel &device) {
  KernelEstimate e;
  e.intensity = kernel.bytes > 0 ? kernel.flops() / kernel.bytes : 0;
  e.computeUs =
      kernel.flops() / (device.peakTflops * kTera) * kMicrosecondsPerSecond;
  e.memoryUs =
      kernel.bytes / (device.bandwidthTBps * kTera) * kMicrosecondsPerSecond;
  double work = std::max(e.computeUs, e.memoryUs);
  e.timeUs = std::max(work, device.launchOverheadUs);
  if (work < device.launchOverheadUs)
    e.regime = Regime::Overhead;
  else
    e.regime =
        e.intensity > device.ridge() ? Regime::Compute : Regime::Bandwidth;
  return e;
}

double attnc::attentionCrossoverSeqLen(const KernelCost &kernel,
                                       const RooflineModel &device) {
  if (!kernel.attention || kernel.bytes <= 0 || kernel.flops() <= 0)
    return 0;
  // At S_q = S_kv = S the FLOPs grow as S^2 and the bytes as S, so the
  // intensity is (intensity at the bound S) * S' / S.
  double perToken = kernel.flops() / kernel.bytes / kernel.attention->seqLenQ;
  return device.ridge() / perToken;
}

//===----------------------------------------------------------------------===//
// Counting
//===----------------------------------------------------------------------===//

namespace {
class CostCounter {
public:
  CostCounter(FunctionOpInterface func, const SizeBindings &sizes)
      : func(func), sizes(sizes), shapes(func), rule(shapes) {
    findKeyValueArguments();
  }
  FailureOr<FunctionCost> run();

private:
  void findKeyValueArguments();
  std::optional<int64_t> bindSymbol(const SymbolInfo &symbol) const;
  double eval(const Monomial &m);
  double numElements(Value v);
  double bytes(Value v);
  double extent(Value v, int64_t dim);
  void addTraffic(KernelCost &kernel, ValueRange values);
  double vectorFlops(Operation *op);
  AttentionInfo attentionInfo(Value q, Value k, bool causal);
  double attentionFlops(Value q, Value k, Value v, bool causal);
  void countKernel(Operation *op, KernelCost &kernel);
  void countForall(scf::ForallOp forall, KernelCost &kernel);
  void describeSchedule(FlashConfigAttr config, Value q, Value k, Value v,
                        bool causal, KernelCost &kernel);

  FunctionOpInterface func;
  /// A kernel's versions could not be read (reported on the op).
  bool failedVersions = false;
  const SizeBindings &sizes;
  ShapeAnalysis shapes;
  ScoreBufferRule rule;
  llvm::SmallDenseSet<unsigned> keyValueArguments;
  /// The first symbol that could not be bound, for the error.
  std::optional<std::string> unbound;
  /// Values already counted in the current kernel's traffic.
  llvm::SmallPtrSet<Value, 8> counted;
};
} // namespace

/// The function argument `v` is a view or copy of, through slices, casts and
/// head broadcasts.
static std::optional<unsigned> traceToArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<RepeatInterleaveOp, CastOp, tensor::ExtractSliceOp,
             tensor::CastOp>(def))
      return std::nullopt;
    v = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(v);
  if (!isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  return arg.getArgNumber();
}

void CostCounter::findKeyValueArguments() {
  auto mark = [&](Value v) {
    if (std::optional<unsigned> arg = traceToArgument(v))
      keyValueArguments.insert(*arg);
  };
  func->walk([&](Operation *op) {
    if (auto att = dyn_cast<AttentionOp>(op)) {
      mark(att.getKey());
      mark(att.getValue());
    } else if (auto oa = dyn_cast<OnlineAttentionOp>(op)) {
      mark(oa.getKey());
      mark(oa.getValue());
    } else if (auto mm = dyn_cast<MatmulOp>(op)) {
      mark(mm.getRhs());
    }
  });
}

std::optional<int64_t> CostCounter::bindSymbol(const SymbolInfo &s) const {
  if (s.kind != SymbolInfo::Kind::ArgumentDim)
    return std::nullopt;
  int64_t fromEnd = (int64_t)s.rank - 1 - s.dim;
  if (fromEnd == 0 && s.rank >= 2)
    return sizes.seqLenKV;
  if (fromEnd <= 1)
    return keyValueArguments.contains(s.argument) ? sizes.seqLenKV
                                                  : sizes.seqLenQ;
  if (fromEnd == 2 && s.rank >= 4)
    return sizes.heads;
  return sizes.batch;
}

double CostCounter::eval(const Monomial &m) {
  double value = m.getCoefficient();
  for (auto [id, power] : m.getPowers()) {
    const SymbolInfo &symbol = shapes.getSymbol(id);
    std::optional<int64_t> bound = bindSymbol(symbol);
    if (!bound) {
      if (!unbound)
        unbound = symbol.name;
      return 0;
    }
    value *= std::pow((double)*bound, (double)power);
  }
  return value;
}

double CostCounter::numElements(Value v) {
  std::optional<Monomial> n = shapes.getNumElements(v);
  return n ? eval(*n) : 0;
}

double CostCounter::bytes(Value v) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped || !shaped.hasRank())
    return 0;
  // i1 masks take a byte per element in memory; index is 64 bits on every
  // target attnc has. Other element types (complex, ...) have no size the
  // report knows: they count as 0 bytes rather than guessing.
  Type element = shaped.getElementType();
  int64_t bits = 0;
  if (element.isIndex())
    bits = 64;
  else if (element.isIntOrFloat())
    bits = element.getIntOrFloatBitWidth();
  return numElements(v) * static_cast<double>((bits + 7) / 8);
}

double CostCounter::extent(Value v, int64_t dim) {
  const SymbolicShape *s = shapes.getShape(v);
  if (!s)
    return 0;
  if (dim < 0)
    dim += s->size();
  return eval((*s)[dim]);
}

void CostCounter::addTraffic(KernelCost &kernel, ValueRange values) {
  for (Value v : values) {
    if (!isa<ShapedType>(v.getType()) || !counted.insert(v).second)
      continue;
    double b = bytes(v);
    kernel.bytes += b;
    if (rule.check(v))
      kernel.scoreBytes += b;
  }
}

double CostCounter::vectorFlops(Operation *op) {
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, AbsOp, ExpOp, LogOp,
            NegOp, TanhOp, RsqrtOp, CmpOp, DropoutOp>(
          [&](Operation *) { return numElements(op->getResult(0)); })
      .Case<ReduceMaxOp, ReduceSumOp>(
          [&](Operation *) { return numElements(op->getOperand(0)); })
      .Case<SoftmaxOp>([&](Operation *) {
        return kSoftmaxFlopsPerElement * numElements(op->getResult(0));
      })
      .Case<LayerNormOp>([&](Operation *) {
        return kLayerNormFlopsPerElement * numElements(op->getResult(0));
      })
      .Case<RmsNormOp>([&](Operation *) {
        return kRmsNormFlopsPerElement * numElements(op->getResult(0));
      })
      .Default([](Operation *) { return 0.0; });
}

AttentionInfo CostCounter::attentionInfo(Value q, Value k, bool causal) {
  auto qType = cast<ShapedType>(q.getType());
  return {(int64_t)extent(q, 0),
          (int64_t)extent(q, 1),
          (int64_t)extent(q, -2),
          (int64_t)extent(k, -2),
          (qType.getElementTypeBitWidth() + 7) / 8,
          causal};
}

double CostCounter::attentionFlops(Value q, Value k, Value v, bool causal) {
  // QK^T is Sq x Skv x d_qk MACs, PV is Sq x Skv x d_v, per batch and query
  // head: numElements(Q) / d_qk rows of queries.
  double rows = numElements(q) / extent(q, -1);
  double macs = rows * extent(k, -2) * (extent(q, -1) + extent(v, -1));
  return kFlopsPerMac * macs * (causal ? kCausalFraction : 1.0);
}

void CostCounter::countForall(scf::ForallOp forall, KernelCost &kernel) {
  // Reads: every tensor defined outside and used inside (each once).
  // Writes: the shared outputs, which are the forall's results.
  SmallVector<Value> captured;
  forall.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!forall->isAncestor(operand.getParentRegion()->getParentOp()))
        captured.push_back(operand);
  });
  addTraffic(kernel, captured);
  addTraffic(kernel, forall.getResults());

  // The flash form: its FLOPs are those of the whole attention it tiles,
  // found by following the tiles back to the full Q, K and V.
  SmallVector<OnlineAttentionOp> steps;
  forall.getBody()->walk([&](OnlineAttentionOp op) { steps.push_back(op); });
  if (steps.empty())
    return;
  auto full = [&](Value v) {
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>())
      v = slice.getSource();
    return v;
  };
  bool causal = llvm::any_of(steps, [](OnlineAttentionOp op) {
    return op.getCausalMask().has_value();
  });
  Value q = full(steps.front().getQuery()), k = full(steps.front().getKey()),
        v = full(steps.front().getValue());
  kernel.matmulFlops = attentionFlops(q, k, v, causal);
  if (cast<ShapedType>(q.getType()).getRank() == 4)
    kernel.attention = attentionInfo(q, k, causal);
  if (auto config =
          forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName))
    describeSchedule(config, q, k, v, causal, kernel);
}

/// The cost model's view of a flash-form kernel: its configuration's tiles,
/// warps and strategy at the report's sizes.
void CostCounter::describeSchedule(FlashConfigAttr config, Value q, Value k,
                                   Value v, bool causal, KernelCost &kernel) {
  cost::KernelSchedule &s = kernel.schedule;
  s.kind = cost::KernelKind::Attention;
  TileStrategy strategy = config.getStrategy();
  s.wgmma = usesWarpgroups(strategy);
  s.persistent = isPersistent(strategy);
  s.blockQ = config.getBlockQ();
  s.blockKV = config.getBlockKV();
  s.headDim = int64_t(extent(q, -1));
  s.headDimV = int64_t(extent(v, -1));
  s.elementBytes = int64_t(bytes(q) / std::max(1.0, numElements(q)));
  s.mmaWarps = config.getWarps() / config.getKeyWarps();
  s.sharedP = config.getSharedP();
  s.mmaRowSums = config.getMmaRowSums();
  // Warp-specialised kernels add a producer warpgroup.
  s.threads = config.getWarps() * 32 + (isWarpSpecialised(strategy) ? 128 : 0);
  s.mask.any = causal;
  s.mask.right = causal ? 0 : -1;
  cost::Sizes &z = kernel.sizes;
  auto dims = cast<ShapedType>(q.getType()).getRank();
  z.batch = dims == 4 ? int64_t(extent(q, 0)) : 1;
  z.heads = dims >= 3 ? int64_t(extent(q, -3)) : 1;
  z.kvHeads = dims >= 3 ? int64_t(extent(k, -3)) : 1;
  z.seqQ = int64_t(extent(q, -2));
  z.seqKV = int64_t(extent(k, -2));
  z.bytesRead = kernel.bytes;
}

void CostCounter::countKernel(Operation *op, KernelCost &kernel) {
  // A kernel in versions costs what the version a host runs at the
  // report's sizes costs (they compute the same; the tiles differ).
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    FailureOr<SmallVector<KernelVersion>> versions = readKernelVersions(ifOp);
    if (failed(versions)) {
      failedVersions = true;
      return;
    }
    const KernelVersion &runs = selectKernelVersion(
        *versions, [&](Value t, int64_t d) -> std::optional<int64_t> {
          const SymbolicShape *s = shapes.getShape(t);
          if (!s || d >= (int64_t)s->size())
            return std::nullopt;
          return int64_t(extent(t, d));
        });
    return countKernel(runs.kernel, kernel);
  }
  counted.clear();
  if (auto forall = dyn_cast<scf::ForallOp>(op))
    return countForall(forall, kernel);
  // (An iota reads only its operand's shape.)
  if (!isa<IotaOp>(op))
    addTraffic(kernel, op->getOperands());
  addTraffic(kernel, op->getResults());
  llvm::TypeSwitch<Operation *>(op)
      .Case<MatmulOp>([&](MatmulOp mm) {
        int64_t kDim = mm.getTransposeA() ? -2 : -1;
        kernel.matmulFlops = kFlopsPerMac * numElements(mm.getResult()) *
                             extent(mm.getLhs(), kDim);
      })
      .Case<AttentionOp>([&](AttentionOp att) {
        kernel.matmulFlops =
            attentionFlops(att.getQuery(), att.getKey(), att.getValue(),
                           att.getCausalMask().has_value());
        kernel.attention = attentionInfo(att.getQuery(), att.getKey(),
                                         att.getCausalMask().has_value());
      })
      .Case<OnlineAttentionOp>([&](OnlineAttentionOp oa) {
        kernel.matmulFlops =
            attentionFlops(oa.getQuery(), oa.getKey(), oa.getValue(),
                           oa.getCausalMask().has_value());
      })
      .Case<FusionOp>([&](FusionOp fusion) {
        fusion.getBody().walk([&](Operation *inner) {
          kernel.vectorFlops += vectorFlops(inner);
        });
      })
      .Default([&](Operation *) { kernel.vectorFlops = vectorFlops(op); });
}

FailureOr<FunctionCost> CostCounter::run() {
  FunctionCost cost;
  cost.name = func.getName().str();
  if (func.isExternal())
    return cost;
  Block &entry = func.getFunctionBody().front();
  SmallVector<Value> boundary(entry.getArguments());
  if (Operation *term = entry.getTerminator())
    llvm::append_range(boundary, term->getOperands());
  for (Value v : boundary)
    cost.largestBoundaryBytes = std::max(cost.largestBoundaryBytes, bytes(v));
  for (Operation &op : entry) {
    if (!isKernelOp(&op))
      continue;
    KernelCost kernel;
    kernel.op = &op;
    countKernel(&op, kernel);
    cost.kernels.push_back(std::move(kernel));
  }
  if (failedVersions)
    return failure();
  if (unbound) {
    mlir::emitError(func.getLoc())
        << "cannot bind " << *unbound
        << " to a number: only dynamic dimensions of shaped "
           "arguments are bound by the batch, heads and "
           "seq-len options";
    return failure();
  }
  return cost;
}

FailureOr<FunctionCost> attnc::countFunctionCost(FunctionOpInterface func,
                                                 const SizeBindings &sizes) {
  return CostCounter(func, sizes).run();
}
