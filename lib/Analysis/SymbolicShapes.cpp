//===- SymbolicShapes.cpp - sizes as products of argument dims ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements ShapeAnalysis: one forward walk over a function that gives every
// shaped value a vector of monomials over the function's dynamic argument
// dimensions. The rules follow the op semantics in AttncOps.td and
// AttncFusedOps.td; ops the walk does not know get fresh Opaque symbols, so
// the analysis never guesses a relation it has not derived.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/SymbolicShapes.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc;

//===----------------------------------------------------------------------===//
// Monomial
//===----------------------------------------------------------------------===//

Monomial Monomial::operator*(const Monomial &other) const {
  Monomial r = *this;
  r.coeff *= other.coeff;
  for (auto [id, p] : other.powers)
    r.powers[id] += p;
  return r;
}

bool Monomial::symbolsDivide(const Monomial &other) const {
  for (auto [id, p] : powers) {
    auto it = other.powers.find(id);
    if (it == other.powers.end() || it->second < p)
      return false;
  }
  return true;
}

Monomial attnc::getNumElements(ArrayRef<Monomial> shape) {
  Monomial n = Monomial::constant(1);
  for (const Monomial &d : shape)
    n = n * d;
  return n;
}

//===----------------------------------------------------------------------===//
// ShapeAnalysis: bookkeeping
//===----------------------------------------------------------------------===//

ShapeAnalysis::ShapeAnalysis(FunctionOpInterface func) : func(func) {
  if (func.isExternal())
    return;
  Block &entry = func.getFunctionBody().front();
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    std::string argName = "%arg" + std::to_string(i);
    if (auto shaped = dyn_cast<ShapedType>(arg.getType());
        shaped && shaped.hasRank()) {
      SymbolicShape shape;
      for (auto [d, extent] : llvm::enumerate(shaped.getShape())) {
        if (!ShapedType::isDynamic(extent)) {
          shape.push_back(Monomial::constant(extent));
          continue;
        }
        shape.push_back(Monomial::symbol(
            newSymbol({SymbolInfo::Kind::ArgumentDim, (unsigned)i, (unsigned)d,
                       (unsigned)shaped.getRank(),
                       "dim " + std::to_string(d) + " of " + argName})));
      }
      setShape(arg, std::move(shape));
    } else if (arg.getType().isIntOrIndex()) {
      indexValues[arg] = Monomial::symbol(newSymbol(
          {SymbolInfo::Kind::IndexArgument, (unsigned)i, 0, 0, argName}));
    }
  }
  for (Block &block : func.getFunctionBody())
    visitBlock(block);
  Operation *terminator = entry.getTerminator();
  if (terminator && terminator->hasTrait<OpTrait::ReturnLike>())
    for (Value v : terminator->getOperands())
      if (const SymbolicShape *s = getShape(v))
        resultShapes.push_back(*s);
}

unsigned ShapeAnalysis::newSymbol(SymbolInfo info) {
  symbols.push_back(std::move(info));
  return symbols.size() - 1;
}

void ShapeAnalysis::setShape(Value value, SymbolicShape shape) {
  shapes[value] = std::move(shape);
}

const SymbolicShape *ShapeAnalysis::getShape(Value value) const {
  auto it = shapes.find(value);
  return it == shapes.end() ? nullptr : &it->second;
}

std::optional<Monomial> ShapeAnalysis::getIndexValue(Value value) const {
  auto it = indexValues.find(value);
  if (it == indexValues.end())
    return std::nullopt;
  return it->second;
}

std::optional<Monomial> ShapeAnalysis::getNumElements(Value value) const {
  if (const SymbolicShape *s = getShape(value))
    return attnc::getNumElements(*s);
  return std::nullopt;
}

bool ShapeAnalysis::isOpaque(const Monomial &m) const {
  return llvm::any_of(m.getPowers(), [&](auto entry) {
    return symbols[entry.first].kind == SymbolInfo::Kind::Opaque;
  });
}

std::string ShapeAnalysis::render(const Monomial &m) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  bool first = true;
  if (m.getCoefficient() != 1 || m.isConstant()) {
    os << m.getCoefficient();
    first = false;
  }
  for (auto [id, p] : m.getPowers())
    for (unsigned k = 0; k < p; ++k) {
      os << (first ? "" : " x ") << symbols[id].name;
      first = false;
    }
  return s;
}

std::string ShapeAnalysis::render(ArrayRef<Monomial> shape) const {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + render(d);
  return s + "]";
}

SymbolicShape ShapeAnalysis::opaqueShape(Value value) {
  SymbolicShape shape;
  auto shaped = cast<ShapedType>(value.getType());
  for (auto [d, extent] : llvm::enumerate(shaped.getShape())) {
    if (!ShapedType::isDynamic(extent)) {
      shape.push_back(Monomial::constant(extent));
      continue;
    }
    std::string name = "dim " + std::to_string(d) + " of an unknown value";
    if (Operation *def = value.getDefiningOp())
      name = "dim " + std::to_string(d) + " of '" +
             def->getName().getStringRef().str() + "'";
    shape.push_back(Monomial::symbol(
        newSymbol({SymbolInfo::Kind::Opaque, 0, 0, 0, std::move(name)})));
  }
  return shape;
}

Monomial ShapeAnalysis::indexOrOpaque(Value value) {
  if (std::optional<Monomial> m = getIndexValue(value))
    return *m;
  APInt c;
  if (matchPattern(value, m_ConstantInt(&c)))
    return Monomial::constant(c.getSExtValue());
  Monomial m = Monomial::symbol(
      newSymbol({SymbolInfo::Kind::Opaque, 0, 0, 0, "an unknown size"}));
  indexValues[value] = m;
  return m;
}

SymbolicShape ShapeAnalysis::shapeFromSizes(Value value, ValueRange sizes) {
  SymbolicShape shape;
  auto shaped = cast<ShapedType>(value.getType());
  unsigned next = 0;
  for (int64_t extent : shaped.getShape()) {
    if (!ShapedType::isDynamic(extent))
      shape.push_back(Monomial::constant(extent));
    else if (next < sizes.size())
      shape.push_back(indexOrOpaque(sizes[next++]));
    else
      return opaqueShape(value);
  }
  return shape;
}

//===----------------------------------------------------------------------===//
// ShapeAnalysis: the walk
//===----------------------------------------------------------------------===//

void ShapeAnalysis::visitBlock(Block &block) {
  for (Operation &op : block)
    visitOp(&op);
}

void ShapeAnalysis::visitOp(Operation *op) {
  bool handled = visitAttncOp(op) || visitUpstreamOp(op);
  // Whatever a rule did not cover gets its static extents and Opaque
  // symbols, so every shaped value has a shape.
  for (Value result : op->getResults())
    if (auto shaped = dyn_cast<ShapedType>(result.getType());
        shaped && shaped.hasRank() && !getShape(result))
      setShape(result, opaqueShape(result));
  // Regions not handled by a rule (scf.if, gpu.launch, ...) are still
  // walked so that values inside them have shapes.
  if (!handled)
    for (Region &region : op->getRegions())
      for (Block &block : region)
        visitBlock(block);
}

/// NumPy broadcasting of symbolic shapes: trailing dimensions aligned, an
/// extent of static 1 stretches to the other operand's.
static SymbolicShape broadcast(ArrayRef<const SymbolicShape *> operands,
                               int64_t rank) {
  SymbolicShape result(rank, Monomial::constant(1));
  for (const SymbolicShape *s : operands) {
    if (!s)
      continue;
    int64_t offset = rank - (int64_t)s->size();
    for (auto [i, extent] : llvm::enumerate(*s))
      if (offset + (int64_t)i >= 0 && !extent.isConstant(1) &&
          result[offset + i].isConstant(1))
        result[offset + i] = extent;
  }
  return result;
}

bool ShapeAnalysis::visitAttncOp(Operation *op) {
  auto shapeOf = [&](Value v) { return getShape(v); };
  auto copyShape = [&](Value from, Value to) {
    if (const SymbolicShape *s = getShape(from))
      setShape(to, *s);
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, AndOp, OrOp, CmpOp,
            SelectOp>([&](auto) {
        SmallVector<const SymbolicShape *> operands;
        for (Value v : op->getOperands())
          operands.push_back(shapeOf(v));
        auto rank = cast<ShapedType>(op->getResult(0).getType()).getRank();
        setShape(op->getResult(0), broadcast(operands, rank));
        return true;
      })
      .Case<ExpOp, LogOp, NegOp, AbsOp, NotOp, TanhOp, RsqrtOp, CastOp,
            SoftmaxOp, DropoutOp, LayerNormOp, RmsNormOp, IotaOp>([&](auto) {
        copyShape(op->getOperand(0), op->getResult(0));
        return true;
      })
      .Case<ReduceMaxOp, ReduceSumOp>([&](auto) {
        if (const SymbolicShape *s = shapeOf(op->getOperand(0))) {
          SymbolicShape r = *s;
          if (!r.empty())
            r.back() = Monomial::constant(1);
          setShape(op->getResult(0), r);
        }
        return true;
      })
      .Case<MatmulOp>([&](MatmulOp mm) {
        const SymbolicShape *a = shapeOf(mm.getLhs());
        const SymbolicShape *b = shapeOf(mm.getRhs());
        if (!a || !b || a->size() < 2)
          return true;
        unsigned r = a->size();
        SymbolicShape s(a->begin(), a->end() - 2);
        s.push_back((*a)[mm.getTransposeA() ? r - 1 : r - 2]);
        s.push_back((*b)[mm.getTransposeB() ? r - 2 : r - 1]);
        setShape(mm.getResult(), s);
        return true;
      })
      .Case<RepeatInterleaveOp>([&](RepeatInterleaveOp ri) {
        if (const SymbolicShape *s = shapeOf(ri.getInput())) {
          SymbolicShape r = *s;
          if (ri.getDimension() < r.size())
            r[ri.getDimension()] =
                r[ri.getDimension()] * Monomial::constant(ri.getRepeats());
          setShape(ri.getResult(), r);
        }
        return true;
      })
      .Case<PagedKVOp>([&](PagedKVOp paged) {
        // [B, Hkv, max_blocks * page_size, d]: the cache grows with the
        // pages a sequence may hold.
        const SymbolicShape *pool = shapeOf(paged.getPool());
        const SymbolicShape *table = shapeOf(paged.getBlockTable());
        if (pool && table && pool->size() == 4 && table->size() == 2)
          setShape(paged.getResult(),
                   {(*table)[0], (*pool)[2],
                    (*table)[1] * Monomial::constant(paged.getPageSize()),
                    (*pool)[3]});
        return true;
      })
      .Case<RaggedViewOp>([&](RaggedViewOp view) {
        // [B, H, T, d]: the rows of the batch are the packed rows.
        const SymbolicShape *packed = shapeOf(view.getPacked());
        const SymbolicShape *starts = shapeOf(view.getStarts());
        if (packed && starts && packed->size() == 3 && starts->size() == 1)
          setShape(view.getResult(),
                   {(*starts)[0], (*packed)[1], (*packed)[0], (*packed)[2]});
        return true;
      })
      .Case<RaggedPackOp>([&](RaggedPackOp pack) {
        if (const SymbolicShape *b = shapeOf(pack.getBatch());
            b && b->size() == 4)
          setShape(pack.getResult(), {(*b)[2], (*b)[1], (*b)[3]});
        return true;
      })
      .Case<AttentionOp>([&](AttentionOp att) {
        const SymbolicShape *q = shapeOf(att.getQuery());
        const SymbolicShape *v = shapeOf(att.getValue());
        if (q && v && q->size() == 4 && v->size() == 4)
          setShape(att.getResult(), {(*q)[0], (*q)[1], (*q)[2], (*v)[3]});
        return true;
      })
      .Case<OnlineAttentionOp>([&](OnlineAttentionOp oa) {
        copyShape(oa.getAcc(), oa.getNewAcc());
        copyShape(oa.getMax(), oa.getNewMax());
        copyShape(oa.getSum(), oa.getNewSum());
        return true;
      })
      .Case<OnlineAttentionFinalizeOp>([&](OnlineAttentionFinalizeOp fin) {
        copyShape(fin.getAcc(), fin.getResult());
        copyShape(fin.getMax(), fin.getLogsumexp());
        return true;
      })
      .Case<FusionOp>([&](FusionOp fusion) {
        Block &body = fusion.getBody().front();
        for (auto [input, arg] :
             llvm::zip(fusion.getInputs(), body.getArguments())) {
          copyShape(input, arg);
          if (std::optional<Monomial> m = getIndexValue(input))
            indexValues[arg] = *m;
        }
        visitBlock(body);
        for (auto [yielded, result] : llvm::zip(
                 body.getTerminator()->getOperands(), fusion.getResults()))
          copyShape(yielded, result);
        return true;
      })
      .Default([](Operation *) { return false; });
}

/// Divisor of `op` when it divides its lhs by a positive constant.
static bool isDivisionByConstant(Operation *op) {
  if (!isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp,
           arith::CeilDivSIOp, arith::FloorDivSIOp, arith::ShRUIOp>(op))
    return false;
  APInt c;
  return matchPattern(op->getOperand(1), m_ConstantInt(&c)) &&
         c.isStrictlyPositive();
}

bool ShapeAnalysis::visitUpstreamOp(Operation *op) {
  auto copyShape = [&](Value from, Value to) {
    if (const SymbolicShape *s = getShape(from))
      setShape(to, *s);
  };
  auto dimOf = [&](Value source, Value index, Value result) {
    APInt c;
    const SymbolicShape *s = getShape(source);
    if (s && matchPattern(index, m_ConstantInt(&c)) &&
        c.getZExtValue() < s->size())
      indexValues[result] = (*s)[c.getZExtValue()];
  };
  // Forwards the shapes of loop inits to the region arguments and results.
  auto loopCarried = [&](ValueRange inits, ValueRange regionArgs,
                         ValueRange results) {
    for (auto [init, arg] : llvm::zip(inits, regionArgs))
      copyShape(init, arg);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        visitBlock(block);
    for (auto [init, result] : llvm::zip(inits, results))
      copyShape(init, result);
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          indexValues[c] = Monomial::constant(i.getInt());
        return true;
      })
      .Case<KVSplitCountOp>([&](KVSplitCountOp split) {
        // At most max_splits (<= 128): a constant factor, so split-KV
        // partials grow as the rows they hold.
        indexValues[split] = Monomial::constant(split.getMaxSplits());
        return true;
      })
      .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
            arith::ExtSIOp>([&](Operation *) {
        if (std::optional<Monomial> m = getIndexValue(op->getOperand(0)))
          indexValues[op->getResult(0)] = *m;
        return true;
      })
      .Case<arith::MulIOp>([&](arith::MulIOp mul) {
        indexValues[mul] =
            indexOrOpaque(mul.getLhs()) * indexOrOpaque(mul.getRhs());
        return true;
      })
      .Case<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp,
            arith::CeilDivSIOp, arith::FloorDivSIOp, arith::ShRUIOp>(
          [&](Operation *) {
            // ceildiv(S, 64) grows as S: keeping the dividend is an upper
            // bound with the same growth, which is all the rule looks at.
            if (isDivisionByConstant(op))
              indexValues[op->getResult(0)] = indexOrOpaque(op->getOperand(0));
            return true;
          })
      .Case<tensor::DimOp>([&](tensor::DimOp d) {
        dimOf(d.getSource(), d.getIndex(), d);
        return true;
      })
      .Case<memref::DimOp>([&](memref::DimOp d) {
        dimOf(d.getSource(), d.getIndex(), d);
        return true;
      })
      .Case<tensor::EmptyOp>([&](tensor::EmptyOp e) {
        setShape(e, shapeFromSizes(e, e.getDynamicSizes()));
        return true;
      })
      .Case<tensor::SplatOp>([&](tensor::SplatOp splat) {
        setShape(splat, shapeFromSizes(splat, splat.getDynamicSizes()));
        return true;
      })
      .Case<memref::AllocOp, memref::AllocaOp>([&](auto alloc) {
        setShape(alloc, shapeFromSizes(alloc, alloc.getDynamicSizes()));
        return true;
      })
      .Case<gpu::AllocOp>([&](gpu::AllocOp alloc) {
        setShape(alloc.getMemref(),
                 shapeFromSizes(alloc.getMemref(), alloc.getDynamicSizes()));
        return true;
      })
      .Case<tensor::CastOp, memref::CastOp>([&](Operation *) {
        copyShape(op->getOperand(0), op->getResult(0));
        return true;
      })
      .Case<tensor::ExtractSliceOp>([&](tensor::ExtractSliceOp slice) {
        // The sizes are the slice's; rank-reduced unit dims are dropped.
        llvm::SmallBitVector dropped = slice.getDroppedDims();
        SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
        SymbolicShape shape;
        for (auto [i, size] : llvm::enumerate(sizes)) {
          if (dropped.test(i))
            continue;
          if (auto attr = dyn_cast<Attribute>(size))
            shape.push_back(
                Monomial::constant(cast<IntegerAttr>(attr).getInt()));
          else
            shape.push_back(indexOrOpaque(cast<Value>(size)));
        }
        setShape(slice, shape);
        return true;
      })
      .Case<tensor::InsertSliceOp>([&](tensor::InsertSliceOp ins) {
        copyShape(ins.getDest(), ins.getResult());
        return true;
      })
      .Case<scf::ForOp>([&](scf::ForOp loop) {
        loopCarried(loop.getInitArgs(), loop.getRegionIterArgs(),
                    loop.getResults());
        return true;
      })
      .Case<scf::ForallOp>([&](scf::ForallOp forall) {
        loopCarried(forall.getOutputs(), forall.getRegionIterArgs(),
                    forall.getResults());
        return true;
      })
      .Case<scf::IfOp>([&](scf::IfOp ifOp) {
        // A result has the shape both regions yield (the versions of a
        // kernel compute the same results), else none.
        for (Region &region : ifOp->getRegions())
          for (Block &block : region)
            visitBlock(block);
        if (ifOp.getElseRegion().empty())
          return true;
        for (auto [then, other, result] :
             llvm::zip(ifOp.thenYield().getOperands(),
                       ifOp.elseYield().getOperands(), ifOp.getResults())) {
          const SymbolicShape *a = getShape(then), *b = getShape(other);
          if (a && b && *a == *b)
            setShape(result, *a);
        }
        return true;
      })
      .Default([](Operation *) { return false; });
}
