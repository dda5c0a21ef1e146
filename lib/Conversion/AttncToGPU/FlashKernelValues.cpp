//===- FlashKernelValues.cpp - the flash form's values in the kernel ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Index values of the flash form (tile starts, loop bounds, GQA head maps)
// are rebuilt in the kernel from the block indices and the size parameters
// by cloning the computation that defines them; mask and score regions are
// cloned per score element; tile addresses come from the slices' offsets.
// What cannot be rebuilt is refused with a diagnostic naming the op.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Dialect/Attnc/IR/AttentionMask.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include <functional>
#include <optional>

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

//===----------------------------------------------------------------------===//
// Kernel values
//===----------------------------------------------------------------------===//

/// The kernel values of the flash form's leaves: the run-time scale is its
/// parameter and batch, head and sequence extents of Q, K and V their size
/// parameters (or constants). Anything else is not a leaf (null).
FailureOr<Value> FlashKernelBuilder::leafValue(Value v) {
  if (v == form.runtimeScale)
    return param(runtimeScaleParam(v).name);
  if (form.dropout > 0.0 && isa<BlockArgument>(v) &&
      (v == form.dropoutSeed || v == form.dropoutOffset))
    return param(dropoutParam(v).name);
  if (v.getDefiningOp<KVSplitCountOp>() && isPartial())
    return paramIndexValue(kSplitSymbol);
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return Value();
  std::optional<int64_t> index = dim.getConstantIndex();
  bool blockTensor = form.blockTensorOf(dim.getSource());
  if (!index ||
      (!blockTensor && !llvm::is_contained({form.query, form.key, form.value,
                                            form.packedSource},
                                           dim.getSource())) ||
      *index > (blockTensor   ? 0
                : form.ragged ? 1
                              : 2))
    return dim.emitOpError("reads an extent the kernel has no parameter "
                           "for; only batch, head and sequence extents of "
                           "Q, K and V (and a ragged batch's sequence "
                           "count) are");
  return extentOf(dim.getSource(), *index);
}

Value FlashKernelBuilder::pagedExtent(int64_t dim) {
  auto table = cast<RankedTensorType>(form.keyPages.getBlockTable().getType());
  auto pool = cast<RankedTensorType>(form.keyPages.getPool().getType());
  if (dim == 0)
    return extentOrParam(table, 0, kTableSymbols[0]);
  if (dim == 1)
    return extentOrParam(pool, 2, kPoolSymbols[2]);
  return arith::MulIOp::create(
      b, loc, extentOrParam(table, 1, kTableSymbols[1]),
      arith::ConstantIndexOp::create(b, loc, form.keyPages.getPageSize()));
}

void FlashKernelBuilder::pageRows(GlobalTile &tile, StringRef tensor,
                                  Value batch) {
  if (!form.keyPages || (tensor != "k" && tensor != "v"))
    return;
  std::string t = tensor.str();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto table = cast<RankedTensorType>(form.keyPages.getBlockTable().getType());
  auto pool = cast<RankedTensorType>(form.keyPages.getPool().getType());
  tile.pageSize = form.keyPages.getPageSize();
  tile.rowStride = paramIndexValue(t + ".stride1");
  tile.pageStride = paramIndexValue(t + ".stride0");
  tile.pageTable = globalMem.lookup("block_table");
  tile.tableRow = arith::MulIOp::create(b, loc, batch,
                                        paramIndexValue("block_table.stride0"));
  tile.tableStride = paramIndexValue("block_table.stride1");
  tile.lastEntry = arith::SubIOp::create(
      b, loc, extentOrParam(table, 1, kTableSymbols[1]), idx(1));
  tile.lastPage = arith::SubIOp::create(
      b, loc, extentOrParam(pool, 0, kPoolSymbols[0]), idx(1));
  // A tile starts at a multiple of block_kv: when pages hold whole tiles,
  // all its rows are in the page of its first.
  if (tile.pageSize % form.config.getBlockKV() == 0)
    tile.tilePage = pageOffset(b, loc, tile, tile.rowStart);
}

/// The (batch, head) matrix and first row a slice reads or an insert writes.
FailureOr<GlobalTile> FlashKernelBuilder::tileOf(tensor::ExtractSliceOp slice,
                                                 StringRef tensor,
                                                 IRMapping &scope) {
  std::string t = tensor.str();
  GlobalTile g;
  g.mem = globalMem.lookup(tensor);
  // A ragged batch's packed rows: row r of the tile is packed row
  // offsets[0] + r, rows a stride0 apart.
  g.rowStride = paramIndexValue(t + (form.ragged ? ".stride0" : ".stride2"));
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  FailureOr<Value> row = materialize(offsets[form.ragged ? 0 : 2], scope);
  if (failed(row))
    return failure();
  g.rowStart = *row;
  // The (batch, head) matrix of a K/V slice does not change from tile to
  // tile: it is computed once, in the prologue (see emitBody), and not in
  // the loop's conditional prefetch, where LLVM may not hoist the GQA head
  // division out.
  auto it = invariantMatrices.find(slice);
  FailureOr<Matrix> m = it != invariantMatrices.end()
                            ? FailureOr<Matrix>(it->second)
                            : matrixOf(slice, tensor, scope);
  if (failed(m))
    return failure();
  g.base = m->base;
  if (tensor == "q")
    packRows(g, "q.stride1");
  pageRows(g, tensor, m->batch);
  if (strategy->tensorMapRows(tensor) > 0) {
    g.map = param(t + ".map");
    g.batch = m->batch;
    g.head = m->head;
  }
  return g;
}

FailureOr<FlashKernelBuilder::Matrix>
FlashKernelBuilder::matrixOf(OffsetSizeAndStrideOpInterface slice,
                             StringRef tensor, IRMapping &scope) {
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  // A ragged batch's packed [T, H, d]: the head is the matrix, its rows the
  // sequence's packed rows.
  if (form.ragged) {
    FailureOr<Value> head = materialize(offsets[1], scope);
    if (failed(head))
      return failure();
    return Matrix{
        arith::MulIOp::create(b, loc, *head,
                              paramIndexValue(tensor.str() + ".stride1")),
        Value(), *head};
  }
  FailureOr<Value> batch = materialize(offsets[0], scope);
  FailureOr<Value> head = materialize(offsets[1], scope);
  if (failed(batch) || failed(head))
    return failure();
  // A packed form's K/V head hkv holds query heads hkv * G onwards.
  if (form.packedSource && (tensor == "q" || tensor == "o"))
    head = arith::MulIOp::create(b, loc, *head, groupSize()).getResult();
  std::string t = tensor.str();
  // A paged cache's pool is [page, row, head, d]: the head is an offset
  // within each page, the batch picks pages through the table.
  if (form.keyPages && (tensor == "k" || tensor == "v"))
    return Matrix{
        arith::MulIOp::create(b, loc, *head, paramIndexValue(t + ".stride2")),
        *batch, *head};
  Value base = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, *batch, paramIndexValue(t + ".stride0")),
      arith::MulIOp::create(b, loc, *head, paramIndexValue(t + ".stride1")));
  return Matrix{base, *batch, *head};
}

Value FlashKernelBuilder::loadElement(const BlockTensor &bt,
                                      ArrayRef<Value> indices) {
  return flash_reads::loadElement(
      b, loc, bt, globalMem[bt.name], indices,
      [&](const std::string &n) { return paramIndexValue(n); }, seqQ,
      extentOf(form.key, 2));
}

//===----------------------------------------------------------------------===//
// Positions turned into floats
//===----------------------------------------------------------------------===//

namespace {
/// An integer of a score region as ci * i + cj * j + c + sum(k * u) over
/// its query and key positions and values u from above it (an extent).
struct PositionForm {
  int64_t ci = 0, cj = 0, c = 0;
  SmallVector<std::pair<Value, int64_t>> terms;

  PositionForm &add(const PositionForm &o, int64_t sign) {
    ci += sign * o.ci;
    cj += sign * o.cj;
    c += sign * o.c;
    for (auto [u, k] : o.terms)
      terms.push_back({u, sign * k});
    return *this;
  }
  bool isConstant() const { return ci == 0 && cj == 0 && terms.empty(); }
};
} // namespace

/// `v` as a PositionForm of the positions `i` and `j` of region `r`,
/// through 64-bit (or index) adds, subtracts, multiplies by constants and
/// casts between index and i64, every coefficient at most 2^24 in
/// magnitude: the form's value is then the region's (positions are far
/// below 2^31, no 64-bit operation wraps). None for anything else.
static std::optional<PositionForm> positionForm(Value v, Value i, Value j,
                                                Region &r) {
  constexpr int64_t kLimit = int64_t(1) << 24;
  auto bounded = [&](PositionForm f) -> std::optional<PositionForm> {
    auto small = [&](int64_t x) { return x >= -kLimit && x <= kLimit; };
    if (!small(f.ci) || !small(f.cj) || !small(f.c) ||
        llvm::any_of(f.terms, [&](auto t) { return !small(t.second); }))
      return std::nullopt;
    return f;
  };
  if (v == i)
    return PositionForm{1, 0, 0, {}};
  if (v == j)
    return PositionForm{0, 1, 0, {}};
  auto wide = [](Type t) { return t.isIndex() || t.isSignlessInteger(64); };
  if (!wide(v.getType()))
    return std::nullopt;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return bounded(PositionForm{0, 0, *c, {}});
  if (!r.isAncestor(v.getParentRegion()))
    return v.getType().isIndex()
               ? std::optional(PositionForm{0, 0, 0, {{v, 1}}})
               : std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return wide(def->getOperand(0).getType())
               ? positionForm(def->getOperand(0), i, j, r)
               : std::nullopt;
  if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return std::nullopt;
  std::optional<PositionForm> a = positionForm(def->getOperand(0), i, j, r);
  std::optional<PositionForm> b = positionForm(def->getOperand(1), i, j, r);
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return bounded(a->add(*b, 1));
  if (isa<arith::SubIOp>(def))
    return bounded(a->add(*b, -1));
  // A product stays a form when one side is a constant.
  if (!a->isConstant())
    std::swap(a, b);
  if (!a->isConstant())
    return std::nullopt;
  PositionForm scaled;
  return bounded(scaled.add(*b, a->c));
}

/// A position expression turned into a float by a score modifier (ALiBi's
/// slope * float(j - i)) would convert every score's integer, a
/// quarter-rate instruction like the exponential (cvt.rn.f32.s64: ALiBi at
/// 0.85x of plain causal on the H200 at d = 128). An element's position is
/// its thread's base plus a constant, so the expression is converted once
/// per thread and step (`floats` keeps it) and each score adds its constant
/// in f32: exactly sitofp's value while |expression| < 2^24, within one ulp
/// beyond. With a block-uniform `factor` (ALiBi's slope) the product
/// factor * (base + k) is fma(factor, k, factor * base), factor * base once
/// per thread and step: one instruction per score position instead of an
/// add and a multiply, within one ulp of factor times sitofp's value.
/// Null when `cast` is not such a conversion (it is then cloned).
Value FlashKernelBuilder::positionToFloat(PositionFloats &floats,
                                          const ScoreStage::Position &at,
                                          Value iArg, Value jArg, Region &score,
                                          Value q0, Value k0, IRMapping &scope,
                                          arith::SIToFPOp cast, Value factor) {
  if (!at.rowBase || !at.colBase || !cast.getType().isF32())
    return {};
  std::optional<PositionForm> f = positionForm(cast.getIn(), iArg, jArg, score);
  if (!f || (f->ci == 0 && f->cj == 0))
    return {};
  // The score's offset from the base, exact in f32.
  int64_t k = f->ci * at.rowOffset + f->cj * at.colOffset;
  if (k <= -(int64_t(1) << 24) || k >= (int64_t(1) << 24))
    return {};
  std::vector<intptr_t> key = {f->ci, f->cj, f->c};
  for (auto [u, k] : f->terms)
    key.insert(key.end(),
               {reinterpret_cast<intptr_t>(u.getAsOpaquePointer()), k});
  Value &base = floats[key];
  if (!base) {
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value v = idx(f->c);
    for (auto [u, k] : f->terms) {
      FailureOr<Value> outer = materialize(u, scope);
      if (failed(outer))
        return {};
      v = arith::AddIOp::create(b, loc, v,
                                arith::MulIOp::create(b, loc, *outer, idx(k)));
    }
    Value i0 = arith::AddIOp::create(b, loc, q0, at.rowBase);
    Value j0 = arith::AddIOp::create(b, loc, k0, at.colBase);
    // (One op per statement: the IR's order is not the compiler's.)
    Value rowTerm = arith::MulIOp::create(b, loc, i0, idx(f->ci));
    Value colTerm = arith::MulIOp::create(b, loc, j0, idx(f->cj));
    Value terms = arith::AddIOp::create(b, loc, rowTerm, colTerm);
    v = arith::AddIOp::create(b, loc, v, terms);
    base = arith::SIToFPOp::create(
        b, loc, b.getF32Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), v));
  }
  Value product = base;
  if (factor) {
    key.push_back(reinterpret_cast<intptr_t>(factor.getAsOpaquePointer()));
    Value &scaled = floats[key];
    if (!scaled)
      scaled = arith::MulFOp::create(b, loc, factor, base);
    product = scaled;
  }
  if (k == 0)
    return product;
  Value offset = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                APFloat(static_cast<float>(k)));
  if (!factor)
    return arith::AddFOp::create(b, loc, base, offset);
  return math::FmaOp::create(b, loc, factor, offset, product);
}

/// A mask that keeps keys lo(i) <= j <= hi(i) of query i (a region
/// analyzeKeyInterval reads as an exact interval: causal of either
/// alignment, prefix-LM, a window, chunks, a band, documents), and a tail
/// tile's j < Skv, test each score against its row's bounds instead of
/// evaluating the region: the bounds are computed once per row slot and step,
/// relative to the thread's first column j0 and clamped to [-1, 2^20] (an
/// element's column offset from j0 is in [0, block_kv), so the clamp keeps
/// every comparison's outcome), and a score's test is a 32-bit comparison
/// of its constant column offset with them. The region's own form compares
/// 64-bit positions per score: a window's costs a sub and two compares of
/// 64 bits (each two instructions), about three times the rest of a masked
/// step's per-score work. The interval is the one the flash form's tile
/// bounds came from, so the masked steps test what the unmasked ones were
/// proven to pass. Id matches (document masks) keep their per-row and
/// per-column reads and an equality per score.
FailureOr<bool> FlashKernelBuilder::maskByKeyInterval(
    OnlineAttentionOp step, IRMapping &scope, bool bounds, Value batch,
    Value head, Value q0, Value k0, SmallVectorImpl<Value> &s) {
  Region &mask = step.getMask();
  // One-sided masks too: causal as written is one 64-bit comparison per
  // score (two instructions) against a 32-bit one here; interleaved on the
  // H200 (2026-12-05 09:52, bf16, B*S = 16k) per-row bounds ran causal
  // d = 64 +9/+7/+5/+1% at S = 512/1024/2048/4096 and d = 128
  // +3/+3/+0.3/+0.5/+1% at S = 512/1000/1024/2048/4096. An earlier
  // comparison across two runs had d = 128 1-2% slower, within the runs'
  // spread.
  if (mask.empty())
    return false;
  std::optional<KeyInterval> interval = analyzeKeyInterval(mask);
  // The causal mask attnc writes compares unsigned (exact: both sides are
  // non-negative), which the interval analysis does not read; its bound is
  // hi(i) = i, or i + Skv - Sq bottom-right.
  std::optional<CausalMask> causal;
  Value causalShift;
  if (!interval && (causal = matchCausalMask(mask))) {
    interval = KeyInterval();
    if (causal->alignment == CausalMask::Alignment::BottomRight) {
      FailureOr<Value> sq = materialize(causal->seqQ, scope);
      FailureOr<Value> skv = materialize(causal->seqKV, scope);
      if (failed(sq) || failed(skv))
        return failure();
      causalShift = arith::SubIOp::create(b, loc, *skv, *sq);
    }
  }
  if (!interval || !interval->exact ||
      (!causal && !interval->lo && !interval->hi && interval->matches.empty()))
    return false;
  SmallVector<Value> symbols;
  for (Value sym : interval->symbols) {
    // (The flash form reads a region's per-block reads above its loops;
    // one left in a step's region is evaluated with it.)
    if (KeyInterval::isRegionRead(sym, mask))
      return false;
    FailureOr<Value> v = materialize(sym, scope);
    if (failed(v))
      return failure();
    Value x = *v;
    if (!x.getType().isIndex())
      x = arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
    symbols.push_back(x);
  }
  std::function<Value(const KeyBound &, Value)> eval = [&](const KeyBound &k,
                                                           Value i) -> Value {
    if (k.kind == KeyBound::Kind::Affine)
      return affine::expandAffineExpr(b, loc, k.expr, ValueRange{i}, symbols);
    Value l = eval(*k.lhs, i);
    Value r = eval(*k.rhs, i);
    if (k.kind == KeyBound::Kind::Min)
      return arith::MinSIOp::create(b, loc, l, r);
    return arith::MaxSIOp::create(b, loc, l, r);
  };

  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Absolute positions, once per row and per column of the step.
  DenseMap<Value, Value> rows, cols;
  auto queryAt = [&](Value row) {
    Value &i = rows[row];
    if (!i)
      i = arith::AddIOp::create(b, loc, q0, row);
    return i;
  };
  // The id matches' runs of keys, where the tile's id bounds found them
  // (emitIdBounds): null where some match has none.
  SmallVector<const IdRun *> runs;
  for (const IdMatch &m : interval->matches) {
    auto qRead = cast<tensor::ExtractOp>(m.queryRead);
    auto kRead = cast<tensor::ExtractOp>(m.keyRead);
    const IdRun *run = nullptr;
    for (auto [op, r] : llvm::zip(form.idBounds, idRuns))
      if (op.getQueryIds() == qRead.getTensor() &&
          op.getKeyIds() == kRead.getTensor() &&
          op.getQueryDim() == m.queryDim && op.getKeyDim() == m.keyDim)
        run = &r;
    if (!run) {
      runs.clear();
      break;
    }
    runs.push_back(run);
  }
  Value j0, below, above, lastKey;
  // With `withRuns`, each row's range is cut to the matches' runs.
  bool withRuns = false;
  auto range = [&](OpBuilder &, Value row,
                   Value colBase) -> std::pair<Value, Value> {
    if (!j0) {
      j0 = arith::AddIOp::create(b, loc, k0, colBase);
      below = arith::SubIOp::create(b, loc, j0, idx(1));
      above = arith::AddIOp::create(b, loc, j0, idx(int64_t(1) << 20));
      if (bounds)
        lastKey = arith::SubIOp::create(b, loc, seqKV, idx(1));
    }
    // (Opaque: LLVM proves the clamped offset fits 32 bits and moves every
    // score's comparison back to 64 bits, two instructions each; PTX of a
    // causal kernel's masked step had one setp.s64 per score.)
    auto relative = [&](Value key) -> Value {
      Value atLeast = arith::MaxSIOp::create(b, loc, key, below);
      Value clamped = arith::MinSIOp::create(b, loc, atLeast, above);
      Value offset = arith::SubIOp::create(b, loc, clamped, j0);
      return opaqueI32(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), offset));
    };
    Value i = queryAt(row);
    Value lo = interval->lo ? eval(*interval->lo, i) : Value();
    Value first = lo && !withRuns ? relative(lo) : Value();
    Value last = interval->hi ? eval(*interval->hi, i) : Value();
    if (causal)
      last = causalShift
                 ? arith::AddIOp::create(b, loc, i, causalShift).getResult()
                 : i;
    if (lastKey)
      last = last ? arith::MinSIOp::create(b, loc, last, lastKey).getResult()
                  : lastKey;
    if (withRuns) {
      for (const IdRun *run : runs) {
        Value before = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult,
            arith::IndexCastOp::create(b, loc, b.getI32Type(), row),
            run->split);
        auto pick = [&](Value x, Value y) -> Value {
          return arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              arith::SelectOp::create(b, loc, before, x, y));
        };
        Value runFirst = pick(run->first, run->lastFirst);
        Value runLast = pick(run->last, run->lastLast);
        lo = lo ? arith::MaxSIOp::create(b, loc, lo, runFirst).getResult()
                : runFirst;
        last = last ? arith::MinSIOp::create(b, loc, last, runLast).getResult()
                    : runLast;
      }
      first = relative(lo);
    }
    return {first, last ? relative(last) : Value()};
  };

  // Id matches: qIds[.., i, ..] == kIds[.., j, ..], each read once per row
  // and per column of the step.
  bool failedRead = false;
  auto sameIds = [&](OpBuilder &, Value row, Value col) -> Value {
    Value &j = cols[col];
    if (!j)
      j = arith::AddIOp::create(b, loc, k0, col);
    IRMapping args;
    args.map(mask.getArguments(), ValueRange{batch, head, queryAt(row), j});
    Value keep;
    for (const IdMatch &m : interval->matches) {
      FailureOr<Value> x = values.readRegionElement(
          cast<tensor::ExtractOp>(m.queryRead), args, scope);
      FailureOr<Value> y = values.readRegionElement(
          cast<tensor::ExtractOp>(m.keyRead), args, scope);
      if (failed(x) || failed(y)) {
        failedRead = true;
        return arith::ConstantIntOp::create(b, loc, 1, 1);
      }
      Value same =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, *x, *y);
      keep =
          keep ? arith::AndIOp::create(b, loc, keep, same).getResult() : same;
    }
    return keep;
  };
  // Masks `t` by the rows' ranges, cut to the runs with `inRuns`, and by
  // the ids compared per score where some match is left. The positions and
  // reads above are cached per call: each branch of the scf.if below
  // computes its own.
  auto maskScores = [&](SmallVectorImpl<Value> &t, bool inRuns) {
    rows.clear();
    cols.clear();
    j0 = below = above = lastKey = Value();
    withRuns = inRuns;
    bool compareIds = !inRuns && !interval->matches.empty();
    return scoreStage->maskColumns(b, t, range,
                                   compareIds ? ScoreStage::Predicate(sameIds)
                                              : ScoreStage::Predicate());
  };
  if (runs.empty()) {
    if (!maskScores(s, /*inRuns=*/false))
      return false;
    if (failedRead)
      return failure();
    return true;
  }
  // Documents: a query tile inside one document, whose keys are one run
  // (sorted ids), sees the run's keys: its masked steps (the document's
  // first tile, the diagonal) test each row's range cut to the run, as a
  // causal mask's, instead of two id reads and a 64-bit comparison per
  // score; so does a tile across two documents, each row cut to its own
  // document's run (every step of such a tile is masked). Other tiles
  // compare ids.
  Value exact;
  for (const IdRun *run : runs)
    exact = exact ? arith::AndIOp::create(b, loc, exact, run->exact).getResult()
                  : run->exact;
  auto branches =
      scf::IfOp::create(b, loc, TypeRange(ValueRange(s)), exact, true);
  OpBuilder::InsertionGuard guard(b);
  for (bool inRuns : {true, false}) {
    b.setInsertionPointToStart(inRuns ? branches.thenBlock()
                                      : branches.elseBlock());
    SmallVector<Value> t(s.begin(), s.end());
    if (!maskScores(t, inRuns)) {
      branches.erase();
      return false;
    }
    scf::YieldOp::create(b, loc, t);
  }
  if (failedRead)
    return failure();
  s.assign(branches.getResults().begin(), branches.getResults().end());
  return true;
}
