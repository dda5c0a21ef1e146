//===- BackwardKernel.cpp - backward flash form to an mma.sync kernel ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers attnc.attention_grad's flash form (BackwardForm.h) as it is given:
// the forall's dimensions are the grid, the head loop and the query loops
// are kernel loops with the IR's bounds, each step recomputes P from the
// logsumexp and runs the five products on tensor cores (mma.sync
// m16n8k16, FlashAttention-2's scheme):
//
//   Sᵀ = K Qᵀ, dPᵀ = V dOᵀ           each warp: 16 keys x block_q queries
//   P = exp2(Sᵀ c log2e - lse log2e)  0 where masked or past Skv
//   dS = c P (dPᵀ - delta)            c = scale x run-time scale
//   dV += Pᵀ dO, dK += dSᵀ Q          A operands straight from registers
//   dQ = dS K                         dS through shared memory, then atomics
//
// Keys are the M dimension of the first four products, so Pᵀ and dSᵀ are
// accumulators whose pairs are A fragments (no transpose in registers);
// dQ needs dS with queries as rows, which ldmatrix.trans reads back from
// the dSᵀ the warps store. dQ's tile is added to the zero-initialised f32
// workspace with atomics, the IR's attnc.accumulate; dK and dV are stored
// once per K/V tile. Q, dO, the logsumexp and delta stream through
// `stages` shared-memory buffers by cp.async (BackwardKernelLoads.cpp; Q
// and dO by TMA with wgmma), the next tile loading while this one
// computes; rows past the sequence are zero-filled, which makes
// their contributions exact zeros (keys past Skv are masked explicitly: a
// zero key still has P = exp(-lse) > 0).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/BackwardKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Target/TargetDescription.h"

#include "BackwardKernelBuilder.h"
#include "ScoreStage.h"
#include "WgmmaStrategy.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

using namespace attnc::backward_kernel;

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

SmallVector<mma::FragC> BackwardKernelBuilder::keyRowProducts(Value keysSmem,
                                                              Value rowsSmem,
                                                              Value stage,
                                                              int64_t depth) {
  Type T = form.elementType;
  int64_t nTiles = blockQ / mma::kN;
  Value zero = f32(0.0);
  SmallVector<mma::FragC> c(nTiles, mma::FragC{zero, zero, zero, zero});
  // A: the warp's 16 key rows (as Q in the forward); B: query rows as n
  // (as K in the forward).
  Value aRow = arith::AddIOp::create(
      b, loc, w.warpRow0, arith::RemUIOp::create(b, loc, w.lane, idx(16)));
  Value aCol = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(16)), idx(8));
  Value bRow = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, w.lane, idx(8)),
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(16)), idx(8)));
  Value bCol = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(8)), idx(2)),
      idx(8));
  for (int64_t ks = 0; ks < depth / mma::kK; ++ks) {
    auto a = mma::loadMatrixX4(
        b, loc, keysSmem,
        {aRow, arith::AddIOp::create(b, loc, aCol, idx(ks * mma::kK))}, false);
    Value col = arith::AddIOp::create(b, loc, bCol, idx(ks * mma::kK));
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      Value row = arith::AddIOp::create(b, loc, bRow, idx(np * 2 * mma::kN));
      auto r = mma::loadMatrixX4(b, loc, rowsSmem, {stage, row, col}, false);
      c[2 * np] = mma::mmaSync(b, loc, T, a, {r[0], r[1]}, c[2 * np]);
      c[2 * np + 1] = mma::mmaSync(b, loc, T, a, {r[2], r[3]}, c[2 * np + 1]);
    }
  }
  return c;
}

void BackwardKernelBuilder::accumulateKeyRows(
    ArrayRef<std::array<Value, 2>> packed, Value smem, Value stage,
    int64_t width, MutableArrayRef<Value> acc) {
  Type T = form.elementType;
  // B: rows of `smem` are the k dimension (queries): ldmatrix.trans, as V
  // in the forward's P V.
  Value rowOff = arith::RemUIOp::create(b, loc, w.lane, idx(16));
  Value colOff = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(16)), idx(8));
  for (int64_t ks = 0; ks < blockQ / mma::kK; ++ks) {
    const auto &lo = packed[2 * ks], &hi = packed[2 * ks + 1];
    mma::FragA a = {lo[0], lo[1], hi[0], hi[1]};
    Value row = arith::AddIOp::create(b, loc, rowOff, idx(ks * mma::kK));
    for (int64_t dp = 0; dp < width / (2 * mma::kN); ++dp) {
      Value col = arith::AddIOp::create(b, loc, colOff, idx(dp * 2 * mma::kN));
      auto r = mma::loadMatrixX4(b, loc, smem, {stage, row, col}, true);
      for (int64_t j = 0; j < 2; ++j) {
        int64_t base = (2 * dp + j) * 4;
        mma::FragC c = {acc[base], acc[base + 1], acc[base + 2], acc[base + 3]};
        c = mma::mmaSync(b, loc, T, a, {r[2 * j], r[2 * j + 1]}, c);
        for (int64_t i = 0; i < 4; ++i)
          acc[base + i] = c[i];
      }
    }
  }
}

/// dQ's tile = dS K, added to the workspace. The warps split the tile:
/// `block_q / 16` row slabs times column groups of d.
LogicalResult BackwardKernelBuilder::emitQueryGrad(BackwardQueryLoop &l,
                                                   IRMapping &scope) {
  Type T = form.elementType;
  int64_t slabs = blockQ / mma::kM;
  int64_t groups = warps / slabs;
  int64_t nTiles = d / mma::kN / groups;
  Value slab = arith::RemUIOp::create(b, loc, warp, idx(slabs));
  Value colGroup = arith::DivUIOp::create(b, loc, warp, idx(slabs));
  Value col0 = arith::MulIOp::create(b, loc, colGroup, idx(nTiles * mma::kN));
  Value zero = f32(0.0);
  SmallVector<mma::FragC> c(nTiles, mma::FragC{zero, zero, zero, zero});
  // A = dS from dSᵀ [key][query]: ldmatrix.trans, matrix i of lane 8i..8i+7
  // at keys (i / 2) * 8, queries (i % 2) * 8.
  Value aRow = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, w.lane, idx(8)),
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(16)), idx(8)));
  Value aCol = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, slab, idx(mma::kM)),
      arith::MulIOp::create(
          b, loc,
          arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(8)), idx(2)),
          idx(8)));
  Value bRow = arith::RemUIOp::create(b, loc, w.lane, idx(16));
  Value bCol = arith::AddIOp::create(
      b, loc, col0,
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, w.lane, idx(16)), idx(8)));
  for (int64_t ks = 0; ks < blockKV / mma::kK; ++ks) {
    auto a = mma::loadMatrixX4(
        b, loc, dsSmem,
        {arith::AddIOp::create(b, loc, aRow, idx(ks * mma::kK)), aCol}, true);
    Value row = arith::AddIOp::create(b, loc, bRow, idx(ks * mma::kK));
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      Value col = arith::AddIOp::create(b, loc, bCol, idx(np * 2 * mma::kN));
      auto r = mma::loadMatrixX4(b, loc, kSmem, {row, col}, true);
      c[2 * np] = mma::mmaSync(b, loc, T, a, {r[0], r[1]}, c[2 * np]);
      c[2 * np + 1] = mma::mmaSync(b, loc, T, a, {r[2], r[3]}, c[2 * np + 1]);
    }
  }
  FailureOr<QueryGradTarget> target = queryGradTarget(l, scope);
  if (failed(target))
    return failure();
  return addQueryGrad(*target, c, slab, col0);
}

//===----------------------------------------------------------------------===//
// Kernel body
//===----------------------------------------------------------------------===//

LogicalResult BackwardKernelBuilder::emitStep(
    BackwardQueryLoop &l, IRMapping &scope, Value stage,
    MutableArrayRef<Value> dk, MutableArrayRef<Value> dvAcc,
    MutableArrayRef<Value> pending, function_ref<LogicalResult()> prefetch) {
  if (wgmma)
    return emitWgmmaStep(l, scope, stage, dk, dvAcc, pending, prefetch);
  if (failed(prefetch()))
    return failure();
  SmallVector<mma::FragC> sT = keyRowProducts(kSmem, qSmem, stage, d);
  SmallVector<mma::FragC> dpT = keyRowProducts(vSmem, doSmem, stage, dv);
  int64_t nTiles = blockQ / mma::kN;
  SmallVector<std::array<Value, 2>> pPacked, dsPacked;
  SmallVector<Value> factors;
  if (failed(emitProbabilities(l, scope, stage, {}, sT, pPacked, factors)))
    return failure();
  emitScoreGrads(stage, {}, factors, dpT, dsPacked);
  accumulateKeyRows(pPacked, doSmem, stage, dv, dvAcc);
  accumulateKeyRows(dsPacked, qSmem, stage, d, dk);
  // dSᵀ to shared memory for dQ = dS K, which needs queries as rows.
  for (int64_t n = 0; n < nTiles; ++n)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = arith::AddIOp::create(
          b, loc, w.warpRow0,
          arith::AddIOp::create(b, loc, w.quadRow, idx(8 * h)));
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, w.quadCol, idx(2)),
          idx(n * mma::kN));
      vector::StoreOp::create(b, loc, dsPacked[n][h], dsSmem,
                              ValueRange{row, col});
    }
  gpu::BarrierOp::create(b, loc);
  return emitQueryGrad(l, scope);
}

SmallVector<Value> BackwardKernelBuilder::loadRowValues(Value smem, Value stage,
                                                        int64_t first,
                                                        int64_t count) {
  // The thread's columns come in pairs (2 quad col, + 1): one 8-byte load
  // each when all tiles are loaded at once.
  auto pair = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> out;
  for (int64_t n = first; n < first + count; ++n) {
    Value col = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, w.quadCol, idx(2)),
        idx(n * mma::kN));
    // One tile's two values where they are used are loaded one by one (an
    // 8-byte load measured 1-3% slower in the d = 128 causal kernel).
    Value v =
        count > 1
            ? vector::LoadOp::create(b, loc, pair, smem, ValueRange{stage, col},
                                     /*nontemporal=*/false, llvm::MaybeAlign(8))
            : Value();
    for (int64_t e = 0; e < 2; ++e)
      out.push_back(
          v ? vector::ExtractOp::create(b, loc, v, e).getResult()
            : memref::LoadOp::create(
                  b, loc, smem,
                  ValueRange{stage, arith::AddIOp::create(b, loc, col, idx(e))})
                  .getResult());
  }
  return out;
}

void BackwardKernelBuilder::emitLogsumexpExponents(Value stage) {
  // The thread that loaded row r's logsumexp (tid r < block_q) rewrites it
  // as -log2(e) lse, which P's exp2 adds: once per row, not once per use. A
  // row that saw no key (lse = -inf) keeps -inf: P = exp2(-inf) = 0, not
  // exp2(+inf).
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto mine =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              tid, idx(blockQ)),
                        false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(mine.thenBlock());
  Value lse = memref::LoadOp::create(b, loc, lseSmem, ValueRange{stage, tid});
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lse,
                                      f32(-INFINITY));
  Value exponent = arith::SelectOp::create(
      b, loc, empty, lse, arith::MulFOp::create(b, loc, lse, f32(-kLog2e)));
  memref::StoreOp::create(b, loc, exponent, lseSmem, ValueRange{stage, tid});
}

LogicalResult BackwardKernelBuilder::emitProbabilities(
    BackwardQueryLoop &l, IRMapping &scope, Value stage, ArrayRef<Value> nlse2s,
    ArrayRef<mma::FragC> sT, SmallVectorImpl<std::array<Value, 2>> &pPacked,
    SmallVectorImpl<Value> &factors) {
  OnlineAttentionGradOp step = l.step;
  FailureOr<Value> batch = materialize(step.getBatch(), scope);
  FailureOr<Value> head = materialize(step.getHead(), scope);
  FailureOr<Value> q0 = materialize(step.getQStart(), scope);
  FailureOr<Value> k0 = materialize(step.getKvStart(), scope);
  if (failed(batch) || failed(head) || failed(q0) || failed(k0))
    return failure();
  // Per element: key row (slot) and query column.
  Value log2e = f32(kLog2e);
  Value scaleLog2 = arith::MulFOp::create(b, loc, scale, log2e);
  Value zero = f32(0.0);
  int64_t nTiles = blockQ / mma::kN;
  pPacked.resize(nTiles);
  factors.assign(nTiles * 4, Value());
  Value keyRow[2];
  Value keyInside[2];
  for (int64_t h = 0; h < 2; ++h) {
    keyRow[h] = arith::AddIOp::create(
        b, loc, *k0,
        arith::AddIOp::create(
            b, loc, w.warpRow0,
            arith::AddIOp::create(b, loc, w.quadRow, idx(8 * h))));
    keyInside[h] = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         keyRow[h], seqKV);
  }
  bool failedRegion = false;
  for (int64_t n = 0; n < nTiles; ++n) {
    Value p[4];
    SmallVector<Value> tileLse =
        nlse2s.empty() ? loadRowValues(lseSmem, stage, n, 1)
                       : SmallVector<Value>(nlse2s.slice(2 * n, 2));
    for (int64_t e = 0; e < 2; ++e) {
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, w.quadCol, idx(2)),
          idx(n * mma::kN + e));
      Value nlse2 = tileLse[e];
      Value query = arith::AddIOp::create(b, loc, *q0, col);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t i = 2 * h + e;
        Value keep = keyInside[h];
        if (!step.getMask().empty()) {
          FailureOr<Value> m = values.cloneRegion(
              step.getMask(), {*batch, *head, query, keyRow[h]}, scope);
          failedRegion |= failed(m);
          if (succeeded(m))
            keep = arith::AndIOp::create(b, loc, keep, *m);
        }
        // exp(S - lse) as exp2, the scale folded into one fma; with a
        // score modifier, exp2 of the modified score and dS times the
        // modifier's derivative, both regions at the scaled score.
        Value x, slope;
        if (step.hasScoreModifier()) {
          Value scaled = arith::MulFOp::create(b, loc, sT[n][i], scale);
          SmallVector<Value> args = {scaled, *batch, *head, query, keyRow[h]};
          FailureOr<Value> mod =
              values.cloneRegion(step.getScore(), args, scope);
          FailureOr<Value> der =
              values.cloneRegion(step.getScoreGrad(), args, scope);
          failedRegion |= failed(mod) || failed(der);
          if (failed(mod) || failed(der)) {
            // Reported below, once every element ran.
            p[i] = factors[4 * n + i] = zero;
            continue;
          }
          x = math::FmaOp::create(b, loc, *mod, log2e, nlse2);
          slope = *der;
        } else {
          x = math::FmaOp::create(b, loc, sT[n][i], scaleLog2, nlse2);
        }
        Value prob =
            arith::SelectOp::create(b, loc, keep, approxExp2(b, loc, x), zero);
        p[i] = prob;
        Value pc = arith::MulFOp::create(b, loc, prob, scale);
        if (slope)
          pc = arith::MulFOp::create(b, loc, pc, slope);
        factors[4 * n + i] = pc;
      }
    }
    for (int64_t h = 0; h < 2; ++h)
      pPacked[n][h] =
          mma::packPair(b, loc, form.elementType, p[2 * h], p[2 * h + 1]);
  }
  return failure(failedRegion);
}

void BackwardKernelBuilder::emitScoreGrads(
    Value stage, ArrayRef<Value> deltas, ArrayRef<Value> factors,
    ArrayRef<mma::FragC> dpT, SmallVectorImpl<std::array<Value, 2>> &dsPacked) {
  int64_t nTiles = blockQ / mma::kN;
  dsPacked.resize(nTiles);
  for (int64_t n = 0; n < nTiles; ++n) {
    Value ds[4];
    SmallVector<Value> tileDelta =
        deltas.empty() ? loadRowValues(deltaSmem, stage, n, 1)
                       : SmallVector<Value>(deltas.slice(2 * n, 2));
    for (int64_t e = 0; e < 2; ++e) {
      Value delta = tileDelta[e];
      for (int64_t h = 0; h < 2; ++h) {
        int64_t i = 2 * h + e;
        ds[i] = arith::MulFOp::create(
            b, loc, factors[4 * n + i],
            arith::SubFOp::create(b, loc, dpT[n][i], delta));
      }
    }
    for (int64_t h = 0; h < 2; ++h)
      dsPacked[n][h] =
          mma::packPair(b, loc, form.elementType, ds[2 * h], ds[2 * h + 1]);
  }
}

/// One kernel loop over the query tiles [lb, ub) of IR loop `l`: each
/// iteration waits for its tiles, turns its logsumexp rows into exp2's
/// exponents, barriers (they are visible, and every warp is done with the
/// stage the prefetch overwrites and with dSᵀ), then runs the step, which
/// prefetches the next tile of the loop.
FailureOr<SmallVector<Value>>
BackwardKernelBuilder::emitQueryLoop(BackwardQueryLoop &l, IRMapping &scope,
                                     ArrayRef<Value> acc) {
  // A folded loop of one iteration: its step's offsets are constants.
  FailureOr<Value> lb = l.loop ? materialize(l.loop.getLowerBound(), scope)
                               : FailureOr<Value>(idx(0));
  FailureOr<Value> ub = l.loop ? materialize(l.loop.getUpperBound(), scope)
                               : FailureOr<Value>(idx(1));
  if (failed(lb) || failed(ub))
    return failure();
  // The previous loop's last step may still read the stage and dSᵀ.
  gpu::BarrierOp::create(b, loc);
  {
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, *lb, *ub),
        false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(first.thenBlock());
    if (failed(loadQueryTile(l, *lb, wgmma ? acc.back() : *lb, scope)))
      return failure();
  }
  auto loop = scf::ForOp::create(b, loc, *lb, *ub, idx(1), acc);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  IRMapping inner = scope;
  if (l.loop)
    inner.map(l.loop.getInductionVar(), i);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  // With wgmma the tiles are the CTA's load `counter` (steps count loads).
  Value load = wgmma ? loop.getRegionIterArgs().back() : i;
  Value stage = arith::RemUIOp::create(b, loc, load, idx(stages));
  if (queriesByTensorMap)
    waitQueryTiles(load);
  emitLogsumexpExponents(stage);
  // cp.async writes through the generic proxy, wgmma reads through the
  // async one: each writer fences before the barrier that publishes.
  if (wgmma)
    wgmma::fenceProxyAsync(b, loc);
  gpu::BarrierOp::create(b, loc);
  // The next tile's loads, where the step places them (the barrier above
  // has freed their stage).
  auto prefetch = [&]() -> LogicalResult {
    if (stages == 1)
      return success();
    Value next = arith::AddIOp::create(b, loc, i, idx(1));
    Value nextLoad = arith::AddIOp::create(b, loc, load, idx(1));
    auto loads = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, *ub),
        false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(loads.thenBlock());
    return loadQueryTile(l, next, nextLoad, scope);
  };
  SmallVector<Value> args(loop.getRegionIterArgs());
  MutableArrayRef<Value> all(args);
  if (failed(emitStep(l, inner, stage, all.slice(0, d / 2),
                      all.slice(d / 2, dv / 2), all.drop_front((d + dv) / 2),
                      prefetch)))
    return failure();
  if (stages == 1) {
    // One buffer: the next tile loads only once every warp is done.
    gpu::BarrierOp::create(b, loc);
    Value next = arith::AddIOp::create(b, loc, i, idx(1));
    Value nextLoad = arith::AddIOp::create(b, loc, load, idx(1));
    auto loads = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, *ub),
        false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(loads.thenBlock());
    if (failed(loadQueryTile(l, next, nextLoad, scope)))
      return failure();
  }
  scf::YieldOp::create(b, loc, args);
  b.setInsertionPointAfter(loop);
  return SmallVector<Value>(loop.getResults());
}

FailureOr<SmallVector<Value>>
BackwardKernelBuilder::emitTileLoops(IRMapping &scope, Value load) {
  Value zero = f32(0.0);
  SmallVector<Value> acc((d + dv) / 2, zero);
  if (wgmma) {
    // No step's dQ is pending yet: no targets (see kPendingValues).
    acc.append(2 * kTargetValues,
               arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
    // The step counter, which also counts the CTA's query tile loads.
    acc.push_back(load ? load : idx(0));
  }
  auto runLoops = [&](IRMapping &inner,
                      SmallVector<Value> acc) -> FailureOr<SmallVector<Value>> {
    for (BackwardQueryLoop &l : form.loops) {
      FailureOr<SmallVector<Value>> next = emitQueryLoop(l, inner, acc);
      if (failed(next))
        return failure();
      acc = *next;
    }
    return acc;
  };
  if (!form.groupLoop)
    return runLoops(scope, acc);
  FailureOr<Value> ub = materialize(form.groupLoop.getUpperBound(), scope);
  if (failed(ub))
    return failure();
  auto loop = scf::ForOp::create(b, loc, idx(0), *ub, idx(1), acc);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  IRMapping inner = scope;
  inner.map(form.groupLoop.getInductionVar(), loop.getInductionVar());
  FailureOr<SmallVector<Value>> out =
      runLoops(inner, SmallVector<Value>(loop.getRegionIterArgs()));
  if (failed(out))
    return failure();
  scf::YieldOp::create(b, loc, *out);
  return SmallVector<Value>(loop.getResults());
}

LogicalResult BackwardKernelBuilder::storeKeyValueGrads(IRMapping &scope,
                                                        ArrayRef<Value> acc) {
  mma::AccumulatorTiles layout(1, d / mma::kN, w);
  for (auto [insert, t, values] :
       {std::tuple{form.dkInsert, "dk", acc.slice(0, d / 2)},
        std::tuple{form.dvInsert, "dv", acc.slice(d / 2, dv / 2)}}) {
    FailureOr<GlobalTile> out = tileOf(insert, t, scope);
    if (failed(out))
      return failure();
    out->rowLimit = seqKV;
    mma::storeAccumulatorRows(b, loc, layout, values, *out, form.elementType);
  }
  return success();
}

LogicalResult BackwardKernelBuilder::emitBody() {
  if (persistent)
    return emitPersistentBody();
  if (failed(loadKeyValueTile(prologue)))
    return failure();
  FailureOr<SmallVector<Value>> acc = emitTileLoops(prologue);
  if (failed(acc))
    return failure();
  // No copy may be in flight when the kernel ends (a K/V tile no query
  // tile sees was never waited for).
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (wgmma) {
    flushQueryGrad(ArrayRef(*acc).take_back(kPendingValues));
    // No bulk reduction of dQ may still read shared memory.
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         UnitAttr());
  }
  // dK and dV where the inserts put them.
  return storeKeyValueGrads(prologue, *acc);
}

/// A causal grid (batch on z, K/V heads on x, K/V tiles on y: every head's
/// longest tile first) starts its blocks x fastest, so the blocks that run
/// together hold the same K/V tile index of every head: each head's query
/// rows (Q, dO, the dQ workspace, logsumexp and delta) are read by a few
/// blocks, and every batch's rows streamed through L2 once per few blocks.
/// With l2_group_mib the heads go in groups whose query rows fit that many
/// MiB, each group longest first, so that each head's rows serve many
/// blocks at once (H100, 2026-12-06: DRAM throughput 28% -> 7% of peak,
/// L2 hit rate 73 -> 93% at d = 64, S = 8k; bench/results/backward.md).
void BackwardKernelBuilder::mapBlockIndices() {
  // (planGrid refused groups on a grid that does not run longest first.)
  mapGroupedBlockIndices(
      b, loc, form.config.getL2GroupMib(), form.forall.getInductionVars(),
      gridDims, prologue, [&] {
        // Per query row of a K/V head's group: Q and dO, and dQ's f32
        // workspace (the logsumexp's and delta's 8 bytes left out: with
        // them no budget of a power of two MiB holds a power of two of
        // heads, and a group's last head alone made a tail of 64 CTAs at
        // d = 128, S = 8k).
        int64_t rowBytes = (d + dv) * elemBytes + d * 4;
        // (One op per statement: the order of a call's arguments is the
        // compiler's, and the IR's order should not be.)
        HeadGroupOperands g;
        g.heads = g.kvHeads = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
        Value rows = extentOf(form.query, 2);
        Value heads = extentOf(form.query, 1);
        Value gqa = arith::DivUIOp::create(b, loc, heads, g.kvHeads);
        Value groupRows = arith::MulIOp::create(b, loc, rows, gqa);
        Value bytes = arith::ConstantIndexOp::create(b, loc, rowBytes);
        g.headBytes = arith::MulIOp::create(b, loc, groupRows, bytes);
        return g;
      });
}

FailureOr<gpu::GPUFuncOp>
BackwardKernelBuilder::build(gpu::GPUModuleOp module) {
  if (failed(verifyConfig()))
    return failure();
  abi = KernelABI();
  abi.name = name.str();
  abi.kind = "attention_backward";
  planParameters();
  if (failed(planGrid()))
    return failure();
  // A causal persistent grid draws its tiles from a counter.
  drawsTiles = persistent && runsLongestFirst();
  if (drawsTiles) {
    paramIndex[kTileCounterName] = abi.params.size();
    abi.params.push_back(tileCounterParam());
  }
  if (wgmma) {
    planWgmmaLayout();
    if (queriesByTensorMap)
      planQueryTensorMaps();
  }
  abi.block[0] = warps * mma::kWarpSize;
  char scaleText[32];
  snprintf(scaleText, sizeof(scaleText), "%.9g", form.scale);
  std::string mask = "none";
  for (BackwardQueryLoop &l : form.loops)
    mask = joinMaskKinds(mask, maskKindOf(l.step.getMask()));
  bool causal = mask == "causal" || mask == "causal_bottom_right";
  bool modified = llvm::any_of(form.loops, [](BackwardQueryLoop &l) {
    return l.step.hasScoreModifier();
  });
  abi.attrs = {
      {"causal", causal ? "true" : "false"},
      {"mask", mask},
      {"score_modifier", modified ? "true" : "false"},
      {"scale", scaleText},
      {"head_dim", std::to_string(d)},
      {"block_q", std::to_string(blockQ)},
      {"block_kv", std::to_string(blockKV)},
      {"strategy", stringifyTileStrategy(form.config.getStrategy()).str()}};
  if (int64_t mib = form.config.getL2GroupMib())
    abi.attrs["l2_group_mib"] = std::to_string(mib);
  auto qType = cast<RankedTensorType>(form.query.getType());
  auto kType = cast<RankedTensorType>(form.key.getType());
  if (form.query != form.key && qType.isDynamicDim(1) && kType.isDynamicDim(1))
    abi.constraints.push_back(ABIConstraint::divisible("H", "Hkv"));
  for (ABIConstraint &c : flash_reads::positionConstraints(
           form.regionTensors, shapeOf(form.query, 3)[2],
           shapeOf(form.key, 3)[2]))
    abi.constraints.push_back(std::move(c));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  func = createKernelFunc(b, loc, name, abi, warps * mma::kWarpSize);

  if (wgmma)
    emitWgmmaPrologue();
  else
    emitPrologue();
  if (persistent)
    planPersistentGrid();
  for (const char *t : {"q", "k", "v", "do", "dk", "dv"})
    globalMem[t] = wrapGlobalPointer(b, loc, param(t), form.elementType);
  for (const char *t : {"lse", "delta", "dq_accum"})
    globalMem[t] = wrapGlobalPointer(b, loc, param(t), b.getF32Type());
  // What the regions read per score loads in place (flash_reads).
  for (const BlockTensor &bt : form.regionTensors)
    globalMem[bt.name] = wrapGlobalPointer(
        b, loc, param(bt.name),
        cast<RankedTensorType>(bt.tensor.getType()).getElementType());
  values.readElement = [this](tensor::ExtractOp read,
                              ArrayRef<Value> indices) -> FailureOr<Value> {
    const BlockTensor *bt =
        findBlockTensor(form.regionTensors, read.getTensor());
    return flash_reads::loadElement(
        b, loc, *bt, globalMem[bt->name], indices,
        [&](const std::string &n) { return paramIndexValue(n); }, seqQ, seqKV);
  };
  // (A persistent kernel maps them per work tile.)
  if (!persistent)
    mapBlockIndices();
  seqQ = extentOf(form.query, 2);
  seqKV = extentOf(form.key, 2);
  scale = arith::ConstantFloatOp::create(
      b, loc, b.getF32Type(), APFloat(static_cast<float>(form.scale)));
  if (form.runtimeScale) {
    FailureOr<Value> rs = materialize(form.runtimeScale, prologue);
    if (failed(rs))
      return failure();
    scale = arith::MulFOp::create(b, loc, scale, *rs);
  }
  if (failed(emitBody()))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return func;
}

FailureOr<gpu::GPUFuncOp>
attnc::buildAttentionBackwardKernel(OpBuilder &b, gpu::GPUModuleOp module,
                                    StringRef name, scf::ForallOp forall,
                                    StringRef chip, KernelABI &abi) {
  FailureOr<BackwardForm> form = analyzeBackwardForm(forall);
  if (failed(form))
    return failure();
  return BackwardKernelBuilder(b, *form, name, chip, abi).build(module);
}
