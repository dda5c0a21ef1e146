//===- FlashKernelIdBounds.cpp - tile bounds from ids, in the kernel ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// attnc.id_tile_bounds in the kernel. Every thread of the block takes part,
// before the threads split into roles (a producer then walks the same
// tiles as the consumers): each warp reduces the query tile's ids to their
// least and greatest (the tile is at most a few hundred rows, so every warp
// reads them all rather than waiting on the others), then the block makes
// one pass over the keys, each thread a strided share of them, unrolled so
// that its loads are in flight together; the per-thread partials are
// reduced in the warp by redux.sync and across warps through a few words
// of shared memory past the strategy's, behind one CTA barrier.
//
// A persistent block's roles walk their tiles apart: the producer
// warpgroup's three warps beside the issuing one, idle otherwise, compute
// the bounds of the CTA's tiles in turn, a tile ahead, and hand
// them to the issuing thread and to every consumer thread through a
// two-slot exchange guarded by mbarriers. (The consumers computing the next
// tile's bounds between two tiles, as they did first, kept the producer
// waiting for them before it could load that tile's K/V, and their
// registers spilled: 258 against one tile per block's 310 TFLOP/s, H100,
// S = 4k.)
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"
#include "WgmmaStrategy.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

namespace {
/// A thread's partials of the key pass: the least and the greatest key
/// whose id is in the query tile's [min, max]; the least and the greatest
/// key whose id is the tile's least id, and their count; the same for its
/// greatest id (the same keys when the tile has one id).
enum Partial {
  kVisitMin,
  kVisitMax,
  kRunMin,
  kRunMax,
  kRunCount,
  kLastRunMin,
  kLastRunMax,
  kLastRunCount,
  kPartials
};
/// How each partial combines with another (and with a key position).
constexpr NVVM::ReduxKind kCombine[kPartials] = {
    NVVM::ReduxKind::MIN, NVVM::ReduxKind::MAX, NVVM::ReduxKind::MIN,
    NVVM::ReduxKind::MAX, NVVM::ReduxKind::ADD, NVVM::ReduxKind::MIN,
    NVVM::ReduxKind::MAX, NVVM::ReduxKind::ADD};
constexpr int64_t kWarpLanes = 32;
/// How many tiles past the readers' the helpers draw: tile i + 1 once the
/// readers have taken tile i + 1 - kIdDrawAhead.
constexpr int64_t kIdDrawAhead = 1;
/// Keys a thread loads per iteration of the pass, in flight together: the
/// whole block's threads, and the producer's helper warps (in the
/// producer's registers: 40 a thread).
constexpr int64_t kUnroll = 8;
constexpr int64_t kHelperUnroll = 2;
} // namespace

int64_t FlashKernelBuilder::idBoundsScratchOffset() const {
  return llvm::alignTo(strategy->sharedMemoryBytes(), 16);
}

int64_t FlashKernelBuilder::idExchangeOffset() const {
  return llvm::alignTo(raggedSearchOffset() + raggedSearchBytes(),
                       wgmma::kBarrierBytes);
}

int64_t FlashKernelBuilder::idExchangeBytes() const {
  if (form.idBounds.empty() || !strategy->persistent())
    return 0;
  // full[2], empty[2], two slots of words, then the helpers' draw word.
  return 4 * wgmma::kBarrierBytes + (2 * idSlotWords() + 1) * 4;
}

int64_t FlashKernelBuilder::drawExchangeOffset() const {
  int64_t end = !form.idBounds.empty() ? idExchangeOffset() + idExchangeBytes()
                : raggedSearchBytes() != 0
                    ? raggedSearchOffset() + raggedSearchBytes()
                    : strategy->sharedMemoryBytes();
  // (Without an exchange: the end of what the kernel uses.)
  return drawExchangeBytes() == 0 ? end : llvm::alignTo(end, 16);
}

int64_t FlashKernelBuilder::drawExchangeBytes() const {
  if (form.dropout == 0.0)
    return 0;
  int64_t warps = strategy->threadsPerBlock() / kWarpLanes;
  return warps * 2 * AccumulatorLayout::kDrawExchangeWords * 4;
}

Value FlashKernelBuilder::sharedWords(int64_t offset, int64_t bytes) {
  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return memref::ViewOp::create(
      b, loc,
      MemRefType::get({bytes / 4}, b.getI32Type(), MemRefLayoutAttrInterface{},
                      ws),
      dynamicSharedBytes(b, loc),
      arith::ConstantIndexOp::create(b, loc, offset), ValueRange{});
}

AccumulatorLayout::DrawExchange FlashKernelBuilder::makeDrawExchange() {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value warp = arith::DivUIOp::create(
      b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
      idx(kWarpLanes));
  return {sharedWords(drawExchangeOffset(), drawExchangeBytes()),
          arith::MulIOp::create(
              b, loc, warp, idx(2 * AccumulatorLayout::kDrawExchangeWords))};
}

int64_t FlashKernelBuilder::idBoundsScratchBytes() const {
  if (form.idBounds.empty())
    return 0;
  int64_t warps = strategy->threadsPerBlock() / kWarpLanes;
  return static_cast<int64_t>(form.idBounds.size()) * warps * kPartials * 4;
}

/// `v` reduced over the warp (all lanes get it) by signed min or max.
static Value warpReduce(OpBuilder &b, Location loc, Value v, bool max) {
  Type i32 = b.getI32Type();
  Value all = arith::ConstantIntOp::create(b, loc, i32, -1);
  if (v.getType().isInteger(32))
    return NVVM::ReduxOp::create(
        b, loc, i32, v, max ? NVVM::ReduxKind::MAX : NVVM::ReduxKind::MIN, all);
  // 64-bit ids: a butterfly of the two halves' shuffles.
  Type i64 = b.getI64Type();
  for (int32_t offset = kWarpLanes / 2; offset > 0; offset /= 2) {
    Value lo = arith::TruncIOp::create(b, loc, i32, v);
    Value hi = arith::TruncIOp::create(
        b, loc, i32,
        arith::ShRUIOp::create(b, loc, v,
                               arith::ConstantIntOp::create(b, loc, i64, 32)));
    auto shuffle = [&](Value x) {
      return arith::ExtUIOp::create(
          b, loc, i64,
          gpu::ShuffleOp::create(b, loc, x, offset, kWarpLanes,
                                 gpu::ShuffleMode::XOR)
              .getShuffleResult());
    };
    Value other = arith::OrIOp::create(
        b, loc, shuffle(lo),
        arith::ShLIOp::create(b, loc, shuffle(hi),
                              arith::ConstantIntOp::create(b, loc, i64, 32)));
    v = max ? arith::MaxSIOp::create(b, loc, v, other).getResult()
            : arith::MinSIOp::create(b, loc, v, other).getResult();
  }
  return v;
}

/// `x` and `y` (i32) combined as `kind` (min, max or add) says.
static Value combine(OpBuilder &b, Location loc, NVVM::ReduxKind kind, Value x,
                     Value y) {
  if (kind == NVVM::ReduxKind::MIN)
    return arith::MinSIOp::create(b, loc, x, y);
  if (kind == NVVM::ReduxKind::MAX)
    return arith::MaxSIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

LogicalResult FlashKernelBuilder::emitIdBounds(IdBoundsThreads who) {
  Type i32 = b.getI32Type();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto c32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  auto toI32 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i32, v).getResult();
  };
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  auto select = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y).getResult();
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y).getResult();
  };
  using P = arith::CmpIPredicate;
  // The producer's warpgroup is the block's last; its first warp issues.
  bool helpers = who == IdBoundsThreads::ProducerHelpers;
  int64_t firstThread = helpers ? idHelperFirstThread() : 0;
  int64_t threads = strategy->threadsPerBlock() - firstThread;
  int64_t warps = threads / kWarpLanes;
  int64_t unroll = helpers ? kHelperUnroll : kUnroll;
  auto sync = [&] {
    if (helpers)
      syncIdHelpers();
    else
      gpu::BarrierOp::create(b, loc);
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (helpers)
    tid = arith::SubIOp::create(b, loc, tid, idx(firstThread));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(kWarpLanes));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(kWarpLanes));
  Value scratch = sharedWords(idBoundsScratchOffset(), idBoundsScratchBytes());

  idRuns.clear();
  for (auto [n, bounds] : llvm::enumerate(form.idBounds)) {
    // (A named copy: lambdas below capture it.)
    IdTileBoundsOp op = bounds;
    auto get = [&](Value v) { return materialize(v, prologue); };
    FailureOr<Value> row = get(op.getRow()), rows = get(op.getRows()),
                     keys = get(op.getKeys()), first = get(op.getFirst()),
                     end = get(op.getEnd());
    if (failed(row) || failed(rows) || failed(keys) || failed(first) ||
        failed(end))
      return failure();
    // The kernel indices of an id read: the op's with `position` at `dim`
    // (materialized here, not in the predicated loads that use them).
    SmallVector<Value> queryIndices, keyIndices;
    for (auto [from, to] : {std::pair(op.getQueryIndices(), &queryIndices),
                            std::pair(op.getKeyIndices(), &keyIndices)})
      for (Value i : from) {
        FailureOr<Value> v = get(i);
        if (failed(v))
          return failure();
        to->push_back(*v);
      }
    auto indicesOf = [&](ArrayRef<Value> indices, int64_t dim, Value position) {
      SmallVector<Value> out(indices);
      out.insert(out.begin() + dim, position);
      return out;
    };
    const BlockTensor &qIds = *form.blockTensorOf(op.getQueryIds());
    const BlockTensor &kIds = *form.blockTensorOf(op.getKeyIds());
    auto idType = cast<IntegerType>(
        cast<RankedTensorType>(op.getQueryIds().getType()).getElementType());
    unsigned bits = idType.getWidth();
    auto idConst = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, idType, v).getResult();
    };

    // Keys [first * block_kv, min(end * block_kv, keys)): thread t looks at
    // keys k0 + t + n * threads. The first kUnroll of its loads do not wait
    // for the query's ids: they are issued with them.
    int64_t bkv = op.getBlockKv();
    Value k0 = arith::MulIOp::create(b, loc, *first, idx(bkv));
    Value k1 = arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, *end, idx(bkv)), *keys);
    Value start = arith::AddIOp::create(b, loc, k0, tid);
    // Key `base + u * threads` for u < kUnroll: its position, whether it
    // exists and its id, loaded predicated (no address past the keys is
    // formed), all loads in flight together.
    struct Key {
      Value j, valid, id;
    };
    auto loadKeys = [&](Value base) {
      SmallVector<Key> batch;
      for (int64_t u = 0; u < unroll; ++u) {
        Value j = arith::AddIOp::create(b, loc, base, idx(u * threads));
        Value valid = cmp(P::ult, j, k1);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{idType}, valid,
                                      /*withElseRegion=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(
            b, loc,
            loadElement(kIds, indicesOf(keyIndices, op.getKeyDim(), j)));
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, loc, idConst(0));
        batch.push_back({j, valid, ifOp.getResult(0)});
      }
      return batch;
    };
    SmallVector<Key> firstKeys = loadKeys(start);

    // The query tile's ids, every warp reading them all.
    Value qmin = idConst(bits == 32 ? std::numeric_limits<int32_t>::max()
                                    : std::numeric_limits<int64_t>::max());
    Value qmax = idConst(bits == 32 ? std::numeric_limits<int32_t>::min()
                                    : std::numeric_limits<int64_t>::min());
    Value lastRow = arith::SubIOp::create(b, loc, *rows, idx(1));
    SmallVector<std::tuple<Value, Value, Value>> rowIds;
    for (int64_t r0 = 0; r0 < form.config.getBlockQ(); r0 += kWarpLanes) {
      Value r = arith::AddIOp::create(b, loc, lane, idx(r0));
      Value valid = cmp(P::ult, r, *rows);
      Value at = arith::AddIOp::create(
          b, loc, *row, arith::MinUIOp::create(b, loc, r, lastRow));
      Value id =
          loadElement(qIds, indicesOf(queryIndices, op.getQueryDim(), at));
      qmin = select(valid, arith::MinSIOp::create(b, loc, qmin, id), qmin);
      qmax = select(valid, arith::MaxSIOp::create(b, loc, qmax, id), qmax);
      rowIds.push_back({r, valid, id});
    }
    qmin = warpReduce(b, loc, qmin, /*max=*/false);
    qmax = warpReduce(b, loc, qmax, /*max=*/true);
    Value single = cmp(P::eq, qmin, qmax);
    // Whether the rows with the least id come first and every other row
    // has the greatest (a tile across two packed documents): the rows
    // before `split` see the least id's keys, the others the greatest's.
    // Counted in each warp, which read every row.
    Value split = c32(0), lastLeast = c32(-1), others = c32(0);
    for (auto [r, valid, id] : rowIds) {
      Value least = arith::AndIOp::create(b, loc, valid, cmp(P::eq, id, qmin));
      Value other = arith::AndIOp::create(
          b, loc, valid,
          arith::AndIOp::create(b, loc, cmp(P::ne, id, qmin),
                                cmp(P::ne, id, qmax)));
      split = arith::AddIOp::create(b, loc, split,
                                    arith::ExtUIOp::create(b, loc, i32, least));
      lastLeast = select(least, toI32(r), lastLeast);
      others = arith::AddIOp::create(
          b, loc, others, arith::ExtUIOp::create(b, loc, i32, other));
    }
    auto redux = [&](Value v, NVVM::ReduxKind kind) {
      return NVVM::ReduxOp::create(b, loc, i32, v, kind, c32(-1)).getResult();
    };
    split = redux(split, NVVM::ReduxKind::ADD);
    lastLeast = redux(lastLeast, NVVM::ReduxKind::MAX);
    others = redux(others, NVVM::ReduxKind::ADD);
    Value twoBlocks = arith::AndIOp::create(
        b, loc, cmp(P::eq, others, c32(0)),
        cmp(P::eq, arith::AddIOp::create(b, loc, lastLeast, c32(1)), split));

    // Keys into the partials `p`: a key whose id is in [qmin, qmax] into
    // the visited ones, one whose id is qmin (qmax) into its run.
    auto account = [&](SmallVectorImpl<Value> &p, ArrayRef<Key> keys) {
      for (const Key &k : keys) {
        Value visit = arith::AndIOp::create(
            b, loc, k.valid,
            arith::AndIOp::create(b, loc, cmp(P::sge, k.id, qmin),
                                  cmp(P::sle, k.id, qmax)));
        Value run =
            arith::AndIOp::create(b, loc, k.valid, cmp(P::eq, k.id, qmin));
        Value lastRun =
            arith::AndIOp::create(b, loc, k.valid, cmp(P::eq, k.id, qmax));
        Value key = toI32(k.j);
        for (auto [c, in] :
             {std::pair(kVisitMin, visit), std::pair(kVisitMax, visit),
              std::pair(kRunMin, run), std::pair(kRunMax, run),
              std::pair(kLastRunMin, lastRun), std::pair(kLastRunMax, lastRun)})
          p[c] = select(in, combine(b, loc, kCombine[c], p[c], key), p[c]);
        for (auto [c, in] :
             {std::pair(kRunCount, run), std::pair(kLastRunCount, lastRun)})
          p[c] = arith::AddIOp::create(b, loc, p[c],
                                       arith::ExtUIOp::create(b, loc, i32, in));
      }
    };
    int64_t none = std::numeric_limits<int32_t>::max();
    SmallVector<Value> init = {c32(none), c32(-1),   c32(none), c32(-1),
                               c32(0),    c32(none), c32(-1),   c32(0)};
    SmallVector<Value> firstPartials = init;
    account(firstPartials, firstKeys);
    // The rest of the keys, kUnroll loads in flight per thread.
    int64_t stride = threads * unroll;
    auto pass = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, start, idx(stride)), k1,
        idx(stride), firstPartials);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(pass.getBody());
      SmallVector<Value> p(pass.getRegionIterArgs());
      account(p, loadKeys(pass.getInductionVar()));
      scf::YieldOp::create(b, loc, p);
    }
    // Reduced in each warp, then across warps through shared memory.
    SmallVector<Value> partial(pass.getResults());
    for (int c = 0; c < kPartials; ++c)
      partial[c] =
          NVVM::ReduxOp::create(b, loc, i32, partial[c], kCombine[c], c32(-1));
    int64_t base = static_cast<int64_t>(n) * warps * kPartials;
    auto slot = [&](Value w, int c) {
      return arith::AddIOp::create(
          b, loc, idx(base + c),
          arith::MulIOp::create(b, loc, w, idx(kPartials)));
    };
    {
      auto leader = scf::IfOp::create(b, loc, cmp(P::eq, lane, idx(0)),
                                      /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(leader.thenBlock());
      for (int c = 0; c < kPartials; ++c)
        memref::StoreOp::create(b, loc, partial[c], scratch,
                                ValueRange{slot(warp, c)});
    }
    sync();
    SmallVector<Value> total = init;
    for (int64_t w = 0; w < warps; ++w)
      for (int c = 0; c < kPartials; ++c) {
        Value v = memref::LoadOp::create(b, loc, scratch,
                                         ValueRange{slot(idx(w), c)});
        total[c] = combine(b, loc, kCombine[c], total[c], v);
      }
    // The helpers go on to the next tile's bounds at once: a warp there
    // must not write the scratch while another still reads it.
    if (helpers)
      sync();

    // The tiles: visited from the least to the greatest key of V; unmasked
    // inside E when E is one run of keys.
    Value block = c32(bkv);
    auto ceilDiv = [&](Value x) {
      return arith::DivSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, x, c32(bkv - 1)), block);
    };
    auto clamp = [&](Value x, Value lo, Value hi) {
      return arith::MinSIOp::create(b, loc,
                                    arith::MaxSIOp::create(b, loc, x, lo), hi);
    };
    Value first32 = toI32(*first);
    Value empty = cmp(P::slt, total[kVisitMax], c32(0));
    Value visitFirst =
        select(empty, first32,
               arith::DivSIOp::create(b, loc, total[kVisitMin], block));
    Value visitEnd = select(
        empty, first32,
        arith::AddIOp::create(
            b, loc, arith::DivSIOp::create(b, loc, total[kVisitMax], block),
            c32(1)));
    // Whether the keys with the least (greatest) id are one run.
    auto oneRun = [&](Partial lo, Partial hi, Partial count) {
      Value end = arith::AddIOp::create(b, loc, total[hi], c32(1));
      return arith::AndIOp::create(
                 b, loc, cmp(P::sgt, total[count], c32(0)),
                 cmp(P::eq, total[count],
                     arith::SubIOp::create(b, loc, end, total[lo])))
          .getResult();
    };
    Value runEnd = arith::AddIOp::create(b, loc, total[kRunMax], c32(1));
    Value leastRun = oneRun(kRunMin, kRunMax, kRunCount);
    Value isRun = arith::AndIOp::create(b, loc, single, leastRun);
    // A run to the last key looked at takes that key's tile, short or not.
    Value lastTile = select(cmp(P::eq, runEnd, toI32(k1)), ceilDiv(runEnd),
                            arith::DivSIOp::create(b, loc, runEnd, block));
    Value fullFirst =
        select(isRun, clamp(ceilDiv(total[kRunMin]), visitFirst, visitEnd),
               visitFirst);
    Value fullEnd =
        select(isRun, clamp(lastTile, fullFirst, visitEnd), fullFirst);
    Value results[] = {visitFirst, fullFirst, fullEnd, visitEnd};
    for (auto [r, v] : llvm::zip(op.getResults(), results))
      prologue.map(r, toIndex(v));
    // The rows see runs of keys, one for each id (one id, or two in two
    // blocks of rows).
    Value exact = arith::AndIOp::create(
        b, loc, twoBlocks,
        arith::AndIOp::create(b, loc, leastRun,
                              oneRun(kLastRunMin, kLastRunMax, kLastRunCount)));
    idRuns.push_back({exact, total[kRunMin], total[kRunMax], total[kLastRunMin],
                      total[kLastRunMax], split});
  }
  return success();
}

SmallVector<Value> FlashKernelBuilder::idBoundsWords() {
  Type index = b.getIndexType();
  SmallVector<Value> words;
  for (auto [op, run] : llvm::zip(form.idBounds, idRuns)) {
    for (Value r : op.getResults())
      words.push_back(prologue.lookup(r));
    words.push_back(arith::IndexCastUIOp::create(
        b, loc, index,
        arith::ExtUIOp::create(b, loc, b.getI32Type(), run.exact)));
    for (Value v :
         {run.first, run.last, run.lastFirst, run.lastLast, run.split})
      words.push_back(arith::IndexCastOp::create(b, loc, index, v));
  }
  return words;
}

void FlashKernelBuilder::mapIdBoundsWords(ValueRange words) {
  idRuns.clear();
  for (auto [n, op] : llvm::enumerate(form.idBounds)) {
    ValueRange w = words.slice(n * kIdBoundsWords, kIdBoundsWords);
    for (auto [r, v] : llvm::zip(op.getResults(), w.take_front(4)))
      prologue.map(r, v);
    Value exact =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, w[4],
                              arith::ConstantIndexOp::create(b, loc, 0));
    auto narrow = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
    };
    idRuns.push_back({exact, narrow(w[5]), narrow(w[6]), narrow(w[7]),
                      narrow(w[8]), narrow(w[9])});
  }
}

SmallVector<Value> FlashKernelBuilder::noIdBoundsWords() {
  return SmallVector<Value>(form.idBounds.size() * kIdBoundsWords,
                            arith::ConstantIndexOp::create(b, loc, 0));
}

/// Barrier full[i mod 2] or empty[i mod 2] of the exchange at `offset`
/// bytes past `base` (i64), as a shared-memory pointer.
static Value exchangeBarrier(OpBuilder &b, Location loc, Value base,
                             int64_t offset, Value i, bool empty) {
  return wgmma::pairPointer(b, loc, base, i,
                            offset + (empty ? 2 * wgmma::kBarrierBytes : 0),
                            wgmma::kBarrierBytes);
}

Value FlashKernelBuilder::idExchangeBase() {
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, dynamicSharedBytes(b, loc));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), raw);
}

Value FlashKernelBuilder::idSlotBarrier(Value i, bool empty) {
  return exchangeBarrier(b, loc, idExchangeBase(), idExchangeOffset(), i,
                         empty);
}

/// The phase of the CTA's i-th tile is the (i / 2)-th use of its slot; an
/// empty barrier's wait passes once the use before it is released.
void FlashKernelBuilder::waitIdSlot(Value i, bool empty) {
  Value use = arith::ShRUIOp::create(b, loc, i,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  wgmma::waitBarrierUse(b, loc, idSlotBarrier(i, empty), use,
                        /*flip=*/empty);
}

/// An scf.if on the block's thread `thread`, the insertion point in its
/// body.
static scf::IfOp enterThread(OpBuilder &b, Location loc, int64_t thread) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                            arith::ConstantIndexOp::create(b, loc, thread)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(first.thenBlock());
  return first;
}

int64_t FlashKernelBuilder::idHelperFirstThread() const {
  return strategy->threadsPerBlock() - wgmma::kGroupThreads + kWarpLanes;
}

void FlashKernelBuilder::syncIdHelpers() {
  Type i32 = b.getI32Type();
  NVVM::BarrierOp::create(
      b, loc, Type(),
      arith::ConstantIntOp::create(b, loc, i32, wgmma::kIdBoundsBarrier),
      arith::ConstantIntOp::create(
          b, loc, i32, strategy->threadsPerBlock() - idHelperFirstThread()),
      nullptr, Value());
}

Value FlashKernelBuilder::idExchangeSlots() {
  return sharedWords(idExchangeOffset() + 4 * wgmma::kBarrierBytes,
                     idExchangeBytes() - 4 * wgmma::kBarrierBytes);
}

void FlashKernelBuilder::initIdExchange() {
  Value base = idExchangeBase();
  int64_t offset = idExchangeOffset();
  {
    OpBuilder::InsertionGuard g(b);
    enterThread(b, loc, 0);
    // A slot is full with the arrival of the helper that writes it, empty
    // again with one from each thread that reads it: the producer's issuing
    // thread and every consumer thread.
    int64_t readers = 1 + strategy->threadsPerBlock() - wgmma::kGroupThreads;
    for (int64_t i = 0; i < 2; ++i)
      for (bool empty : {false, true})
        NVVM::MBarrierInitOp::create(
            b, loc,
            exchangeBarrier(b, loc, base, offset,
                            arith::ConstantIndexOp::create(b, loc, i), empty),
            arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                         empty ? readers : 1),
            Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
}

/// The first of the CTA's i-th tile's words in the exchange's slots.
static Value exchangeSlotStart(OpBuilder &b, Location loc, Value i,
                               int64_t words) {
  return arith::MulIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, i,
                            arith::ConstantIndexOp::create(b, loc, 1)),
      arith::ConstantIndexOp::create(b, loc, words));
}

int64_t FlashKernelBuilder::idSlotWords() const {
  return 1 + static_cast<int64_t>(form.idBounds.size()) * kIdBoundsWords;
}

void FlashKernelBuilder::publishIdBounds(Value i, Value tile,
                                         ValueRange words) {
  OpBuilder::InsertionGuard g(b);
  enterThread(b, loc, idHelperFirstThread());
  waitIdSlot(i, /*empty=*/true);
  Value slots = idExchangeSlots();
  Value first = exchangeSlotStart(b, loc, i, idSlotWords());
  SmallVector<Value> all{tile};
  llvm::append_range(all, words);
  for (auto [k, w] : llvm::enumerate(all))
    memref::StoreOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), w), slots,
        ValueRange{arith::AddIOp::create(
            b, loc, first, arith::ConstantIndexOp::create(b, loc, k))});
  NVVM::MBarrierArriveOp::create(b, loc, Type(), idSlotBarrier(i, false),
                                 Value());
}

Value FlashKernelBuilder::receiveIdTile(Value i) {
  waitIdSlot(i, /*empty=*/false);
  Value w = memref::LoadOp::create(
      b, loc, idExchangeSlots(),
      ValueRange{exchangeSlotStart(b, loc, i, idSlotWords())});
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), w);
}

Value FlashKernelBuilder::drawIdTile(Value i) {
  Value word = arith::ConstantIndexOp::create(b, loc, 2 * idSlotWords());
  {
    OpBuilder::InsertionGuard g(b);
    enterThread(b, loc, idHelperFirstThread());
    // Not before the readers have taken tile i + 1 - kIdDrawAhead: a tile
    // drawn further ahead would wait longer, and at the grid's end CTAs
    // that drew ahead run on while others have nothing left.
    waitIdSlot(arith::AddIOp::create(
                   b, loc, i,
                   arith::ConstantIndexOp::create(b, loc, 3 - kIdDrawAhead)),
               /*empty=*/true);
    Value next = drawWorkTile(b, loc, param(kTileCounterName), workCTAs);
    memref::StoreOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), next),
        idExchangeSlots(), ValueRange{word});
  }
  syncIdHelpers();
  Value w = memref::LoadOp::create(b, loc, idExchangeSlots(), ValueRange{word});
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), w);
}

SmallVector<Value> FlashKernelBuilder::receiveIdBounds(Value i) {
  waitIdSlot(i, /*empty=*/false);
  Value slots = idExchangeSlots();
  int64_t n = static_cast<int64_t>(form.idBounds.size()) * kIdBoundsWords;
  Value first =
      arith::AddIOp::create(b, loc, exchangeSlotStart(b, loc, i, idSlotWords()),
                            arith::ConstantIndexOp::create(b, loc, 1));
  SmallVector<Value> words;
  for (int64_t k = 0; k < n; ++k) {
    Value w = memref::LoadOp::create(
        b, loc, slots,
        ValueRange{arith::AddIOp::create(
            b, loc, first, arith::ConstantIndexOp::create(b, loc, k))});
    // (Signed: a run's last key is -1 where there is none.)
    words.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), w).getResult());
  }
  NVVM::MBarrierArriveOp::create(b, loc, Type(), idSlotBarrier(i, true),
                                 Value());
  return words;
}
