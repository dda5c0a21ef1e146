//===- FlashAttentionKernel.cpp - FlashAttention-2 kernel builder ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Emits the attention forward kernel as a gpu.func. One CTA computes a
// blockQ x d tile of O for one (batch, head); each warp owns blockQ/numWarps
// query rows (one or two 16-row m16n8k16 slabs; with one, Q fragments stay
// in registers, with two they are re-read from shared memory, which halves
// the K/V ldmatrix traffic per MMA). The KV sequence is walked in blockKV
// tiles, staged through two shared-memory buffers with cp.async so the next
// tile loads while the current one is computed. Causal kernels stop at the
// diagonal and launch their longest query tiles first; only tiles that cross
// the diagonal, or run past Skv, go through the masked copy of the loop body.
// Two small escapes below upstream ops: ex2.approx.ftz through an LLVM
// intrinsic call, and a one-instruction inline-asm move that keeps address
// arithmetic inside the loop (see pinInLoop).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/FlashAttentionKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace attnc;

namespace {

/// Padding after each shared-memory row: one 16-byte access. With rows of
/// 128 or 256 bytes the eight row addresses of an ldmatrix phase then fall
/// in eight different 16-byte bank groups (no bank conflicts).
constexpr int64_t kSmemRowPadBytes = 16;
/// Bytes per cp.async: the largest size, and the only one `.cg` (bypass L1)
/// accepts.
constexpr int64_t kCopyBytes = 16;
/// K/V shared-memory stages: tile t+1 loads while tile t is computed.
constexpr int64_t kKVStages = 2;
/// log2(e): softmax runs on exp2 with the scale folded in.
constexpr double kLog2e = 1.4426950408889634;
/// Kernel parameters in launch order (docs/abi.md).
enum KernelArg {
  kArgQ,
  kArgK,
  kArgV,
  kArgO,
  kArgLse,
  kArgB,
  kArgH,
  kArgHkv,
  kArgSq,
  kArgSkv,
  kArgStrides, // q.stride0..2, k.stride0..2, v.stride0..2, o.stride0..2
  kNumArgs = kArgStrides + 12
};

/// Everything one thread needs about one operand tensor in global memory.
struct GlobalTensor {
  Value mem;       // memref<?xT, 1> over the whole tensor
  Value base;      // element offset of this CTA's (batch, head) matrix
  Value rowStride; // stride of the sequence dimension, in elements
};

/// Per-thread online-softmax state. A thread holds two rows of each 16-row
/// slab (g and g+8, g = lane/4): index [slab * 2 + half].
struct SoftmaxState {
  SmallVector<Value> rowMax; // running max of the raw (unscaled) scores
  SmallVector<Value> rowSum; // this thread's partial denominator
  SmallVector<Value> acc;    // [(slab * dTiles + n) * 4 + i], f32

  SmallVector<Value> flatten() const {
    SmallVector<Value> all(rowMax);
    llvm::append_range(all, rowSum);
    llvm::append_range(all, acc);
    return all;
  }
  static SoftmaxState unflatten(ValueRange all, size_t rows) {
    SoftmaxState s;
    s.rowMax.assign(all.begin(), all.begin() + rows);
    s.rowSum.assign(all.begin() + rows, all.begin() + 2 * rows);
    s.acc.assign(all.begin() + 2 * rows, all.end());
    return s;
  }
};

/// Score tile of one warp: [slab][n8 tile] accumulator fragments.
using ScoreTile = SmallVector<SmallVector<mma::FragC>>;
/// Probabilities of one warp in the element type: [slab][n8 tile] pairs
/// {(row g, cols 2t..2t+1), (row g+8, cols 2t..2t+1)}.
using ProbTile = SmallVector<SmallVector<std::array<Value, 2>>>;

class FlashAttentionEmitter {
public:
  FlashAttentionEmitter(OpBuilder &b, Location loc,
                        const FlashAttentionKernelConfig &cfg,
                        gpu::GPUFuncOp func)
      : b(b), loc(loc), cfg(cfg), func(func),
        slabs(cfg.blockQ / (cfg.numWarps * mma::kM)),
        dTiles(cfg.headDim / mma::kN),
        rowElems(cfg.headDim + kSmemRowPadBytes * 8 /
                                   cfg.elementType.getIntOrFloatBitWidth()) {}

  void emit();
  static int64_t sharedMemoryBytes(const FlashAttentionKernelConfig &cfg);

private:
  // Small builders.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divU(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remU(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minU(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value arg(int64_t i) { return func.getArgument(i); }
  Value argIndex(int64_t i) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), arg(i));
  }

  void emitPrologue();
  Value wrapGlobal(Value ptr, Type elemType);
  void emitSharedViews();
  void emitTileCopy(const GlobalTensor &src, Value rowStart, Value seqLen,
                    Value smem, Value stage, int64_t rows);
  void emitKVTileCopy(Value tile, Value stage);
  mma::FragA loadQFragment(int64_t slab, int64_t kStep);
  ScoreTile computeScores(Value stage);
  void applyMask(ScoreTile &s, Value kvStart);
  SoftmaxState updateSoftmax(const ScoreTile &s, const SoftmaxState &st,
                             ProbTile &p);
  void accumulatePV(const ProbTile &p, Value stage, SoftmaxState &st);
  SoftmaxState emitKVLoop(Value lb, Value ub, bool masked,
                          const SoftmaxState &init);
  void emitEpilogue(const SoftmaxState &st);

  OpBuilder &b;
  Location loc;
  const FlashAttentionKernelConfig &cfg;
  gpu::GPUFuncOp func;
  const int64_t slabs;    // 16-row slabs per warp
  const int64_t dTiles;   // n8 tiles across the head dimension
  const int64_t rowElems; // shared-memory row length incl. padding

  // Values set up by the prologue.
  Value lane, quadRow, quadCol; // lane, g = lane/4, t = lane%4
  Value warpRow0;               // first query row of this warp in the tile
  Value qStart, sq, skv, bh, nKVTiles;
  GlobalTensor q, k, v, o;
  Value lseMem;
  Value qSmem, kSmem, vSmem;
  SmallVector<mma::FragA> qFrags; // [slab * kSteps + kStep], when in regs
  Value qLoadRow, qLoadCol;       // per-thread Q ldmatrix origin in the loop
};

/// 2^x with ex2.approx.ftz.f32. math.exp2 lowers to the non-ftz form, which
/// ptxas wraps in a range check and two conditional multiplies around
/// MUFU.EX2; softmax loses nothing by flushing subnormal probabilities to 0.
static Value exp2Approx(OpBuilder &b, Location loc, Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{x})
      .getResult(0);
}

/// Returns `v` through an opaque, side-effecting register move so that LLVM
/// cannot hoist address arithmetic built on it out of the enclosing loop.
/// Without it, LICM hoists each loop-invariant Q ldmatrix address (one per
/// slab and k step, 64-bit each) and they all stay live across the loop:
/// ~64 registers at d=128 with two slabs. Kept inside the loop, every
/// address is one base register plus an immediate offset.
static Value pinInLoop(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  Value asI64 = arith::IndexCastOp::create(b, loc, i64, v);
  auto mov = LLVM::InlineAsmOp::create(
      b, loc, i64, ValueRange{asI64}, b.getStringAttr("mov.b64 $0, $1;"),
      b.getStringAttr("=l,l"), b.getUnitAttr(), /*is_align_stack=*/nullptr,
      /*tail_call_kind=*/nullptr, /*asm_dialect=*/nullptr,
      /*operand_attrs=*/nullptr);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), mov.getRes());
}

} // namespace

int64_t
FlashAttentionEmitter::sharedMemoryBytes(const FlashAttentionKernelConfig &c) {
  int64_t rowBytes =
      c.headDim * c.elementType.getIntOrFloatBitWidth() / 8 + kSmemRowPadBytes;
  return rowBytes * (c.blockQ + 2 * kKVStages * c.blockKV);
}

Value FlashAttentionEmitter::wrapGlobal(Value ptr, Type elemType) {
  return wrapGlobalPointer(b, loc, ptr, elemType);
}

/// Shared memory, carved from the dynamic allocation:
///   Q [blockQ][rowElems] | K [stages][blockKV][rowElems] | V (same as K).
void FlashAttentionEmitter::emitSharedViews() {
  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Type T = cfg.elementType;
  int64_t eb = T.getIntOrFloatBitWidth() / 8;
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, ws));
  auto qType = MemRefType::get({cfg.blockQ, rowElems}, T,
                               MemRefLayoutAttrInterface{}, ws);
  auto kvType = MemRefType::get({kKVStages, cfg.blockKV, rowElems}, T,
                                MemRefLayoutAttrInterface{}, ws);
  int64_t qBytes = cfg.blockQ * rowElems * eb;
  int64_t kvBytes = kKVStages * cfg.blockKV * rowElems * eb;
  qSmem = memref::ViewOp::create(b, loc, qType, raw, idx(0), ValueRange{});
  kSmem =
      memref::ViewOp::create(b, loc, kvType, raw, idx(qBytes), ValueRange{});
  vSmem = memref::ViewOp::create(b, loc, kvType, raw, idx(qBytes + kvBytes),
                                 ValueRange{});
}

/// Thread coordinates, sizes, per-(batch, head) bases and the KV trip count.
void FlashAttentionEmitter::emitPrologue() {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = remU(tid, idx(mma::kWarpSize));
  quadRow = divU(lane, idx(mma::kQuadSize));
  quadCol = remU(lane, idx(mma::kQuadSize));
  warpRow0 = mul(divU(tid, idx(mma::kWarpSize)), idx(slabs * mma::kM));

  Value h = argIndex(kArgH), hkv = argIndex(kArgHkv);
  sq = argIndex(kArgSq);
  skv = argIndex(kArgSkv);
  bh = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = divU(bh, h), head = remU(bh, h);
  // GQA: H / Hkv query heads share one K/V head.
  Value kvHead = divU(head, divU(h, hkv));
  // Causal: query tiles near the end see the most KV tiles; launch them
  // first so the short ones fill the tail of the grid.
  Value qTile = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (cfg.causal)
    qTile = arith::SubIOp::create(
        b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
        add(qTile, idx(1)));
  qStart = mul(qTile, idx(cfg.blockQ));

  auto tensor = [&](int64_t ptrArg, int64_t strideArg, Value headIdx) {
    Value s0 = argIndex(kArgStrides + strideArg);
    Value s1 = argIndex(kArgStrides + strideArg + 1);
    GlobalTensor t;
    t.mem = wrapGlobal(arg(ptrArg), cfg.elementType);
    t.base = add(mul(batch, s0), mul(headIdx, s1));
    t.rowStride = argIndex(kArgStrides + strideArg + 2);
    return t;
  };
  q = tensor(kArgQ, 0, head);
  k = tensor(kArgK, 3, kvHead);
  v = tensor(kArgV, 6, kvHead);
  o = tensor(kArgO, 9, head);
  lseMem = wrapGlobal(arg(kArgLse), b.getF32Type());

  // KV tiles to visit: all of Skv, or up to the diagonal when causal.
  Value kvEnd = skv;
  if (cfg.causal)
    kvEnd = minU(skv, add(qStart, idx(cfg.blockQ)));
  nKVTiles = divU(add(kvEnd, idx(cfg.blockKV - 1)), idx(cfg.blockKV));
  emitSharedViews();
}

/// cp.async of `rows` rows starting at `rowStart` of a [seqLen, d] matrix
/// into `smem` (at [stage] when given). Rows at or past seqLen are zero-filled
/// (src-size 0) from a clamped, in-bounds address.
void FlashAttentionEmitter::emitTileCopy(const GlobalTensor &src,
                                         Value rowStart, Value seqLen,
                                         Value smem, Value stage,
                                         int64_t rows) {
  int64_t elemsPerCopy =
      kCopyBytes * 8 / cfg.elementType.getIntOrFloatBitWidth();
  int64_t copiesPerRow = cfg.headDim / elemsPerCopy;
  int64_t threads = cfg.numWarps * mma::kWarpSize;
  int64_t rowsPerPass = threads / copiesPerRow;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value row0 = divU(tid, idx(copiesPerRow));
  Value col = mul(remU(tid, idx(copiesPerRow)), idx(elemsPerCopy));
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> tokens;
  for (int64_t pass = 0; pass < rows / rowsPerPass; ++pass) {
    Value row = add(row0, idx(pass * rowsPerPass));
    Value gRow = add(rowStart, row);
    Value inRange = ult(gRow, seqLen);
    Value srcRow = arith::SelectOp::create(b, loc, inRange, gRow, idx(0));
    Value srcIdx = add(add(src.base, mul(srcRow, src.rowStride)), col);
    Value srcElems =
        arith::SelectOp::create(b, loc, inRange, idx(elemsPerCopy), idx(0));
    SmallVector<Value, 3> dstIdx;
    if (stage)
      dstIdx.push_back(stage);
    dstIdx.append({row, col});
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, smem, dstIdx, src.mem, ValueRange{srcIdx},
        b.getIndexAttr(elemsPerCopy), srcElems, b.getUnitAttr()));
  }
  nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
}

void FlashAttentionEmitter::emitKVTileCopy(Value tile, Value stage) {
  Value rowStart = mul(tile, idx(cfg.blockKV));
  emitTileCopy(k, rowStart, skv, kSmem, stage, cfg.blockKV);
  emitTileCopy(v, rowStart, skv, vSmem, stage, cfg.blockKV);
}

/// A fragment of Q for one 16-row slab and one 16-wide k step: ldmatrix.x4,
/// matrices (rows 0-7, k lo), (rows 8-15, k lo), (0-7, k hi), (8-15, k hi).
mma::FragA FlashAttentionEmitter::loadQFragment(int64_t slab, int64_t kStep) {
  Value rowBase = qLoadRow ? qLoadRow : add(warpRow0, remU(lane, idx(16)));
  Value colBase = qLoadCol ? qLoadCol : mul(divU(lane, idx(16)), idx(8));
  Value row = add(rowBase, idx(slab * mma::kM));
  Value col = add(colBase, idx(kStep * mma::kK));
  return mma::loadMatrixX4(b, loc, qSmem, {row, col}, /*transpose=*/false);
}

/// S = Q Kᵀ for the K tile in `stage`. K rows are the n dimension, so a
/// non-transposed ldmatrix of K gives B fragments directly: matrices
/// (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi). The k step
/// is the outer loop so that Q fragments reloaded from shared memory (two
/// slabs per warp) are loaded once per step and shared by all K fragments.
ScoreTile FlashAttentionEmitter::computeScores(Value stage) {
  int64_t nTiles = cfg.blockKV / mma::kN, kSteps = cfg.headDim / mma::kK;
  Value zero = f32(0.0);
  mma::FragC zeroFrag = {zero, zero, zero, zero};
  ScoreTile s(slabs, SmallVector<mma::FragC>(nTiles, zeroFrag));
  Value rowOff = add(remU(lane, idx(8)), mul(divU(lane, idx(16)), idx(8)));
  Value colOff = mul(remU(divU(lane, idx(8)), idx(2)), idx(8));
  for (int64_t ks = 0; ks < kSteps; ++ks) {
    SmallVector<mma::FragA> a;
    for (int64_t sl = 0; sl < slabs; ++sl)
      a.push_back(qFrags.empty() ? loadQFragment(sl, ks)
                                 : qFrags[sl * kSteps + ks]);
    Value col = add(idx(ks * mma::kK), colOff);
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      Value row = add(idx(np * 2 * mma::kN), rowOff);
      auto r = mma::loadMatrixX4(b, loc, kSmem, {stage, row, col}, false);
      for (int64_t sl = 0; sl < slabs; ++sl) {
        mma::FragC &c0 = s[sl][2 * np], &c1 = s[sl][2 * np + 1];
        c0 = mma::mmaSync(b, loc, cfg.elementType, a[sl], {r[0], r[1]}, c0);
        c1 = mma::mmaSync(b, loc, cfg.elementType, a[sl], {r[2], r[3]}, c1);
      }
    }
  }
  return s;
}

/// Sets scores of keys past Skv, and above the diagonal when causal, to
/// -inf. Element i of an accumulator is at row g + 8*(i/2), col 2t + i%2.
void FlashAttentionEmitter::applyMask(ScoreTile &s, Value kvStart) {
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value colBase = add(kvStart, mul(quadCol, idx(2)));
  Value rowBase = add(add(qStart, warpRow0), quadRow);
  for (int64_t sl = 0; sl < slabs; ++sl) {
    for (size_t n = 0; n < s[sl].size(); ++n) {
      for (int64_t i = 0; i < 4; ++i) {
        Value col = add(colBase, idx(n * mma::kN + i % 2));
        Value masked =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, col, skv);
        if (cfg.causal) {
          Value row = add(rowBase, idx(sl * mma::kM + 8 * (i / 2)));
          Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                              col, row);
          masked = arith::OrIOp::create(b, loc, masked, above);
        }
        s[sl][n][i] =
            arith::SelectOp::create(b, loc, masked, negInf, s[sl][n][i]);
      }
    }
  }
}

/// Online softmax for one tile: new row max (quad all-reduce), rescale of
/// the running sum and accumulator by exp2((m_old - m_new) * scale * log2e),
/// and P = exp2(S * scale * log2e - m_new * scale * log2e), packed to the
/// element type at once so the f32 scores die before P V. A row with no
/// visible key yet keeps m = -inf; its offset is taken as 0 so that
/// exp2(-inf - offset) gives 0, never NaN.
SoftmaxState FlashAttentionEmitter::updateSoftmax(const ScoreTile &s,
                                                  const SoftmaxState &st,
                                                  ProbTile &p) {
  SoftmaxState out = st;
  Value scaleLog2 = f32(cfg.scale * kLog2e);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zero = f32(0.0);
  p.assign(slabs, SmallVector<std::array<Value, 2>>(s[0].size()));
  for (int64_t sl = 0; sl < slabs; ++sl) {
    for (int64_t half = 0; half < 2; ++half) {
      int64_t r = sl * 2 + half;
      Value mx = st.rowMax[r];
      for (const auto &frag : s[sl])
        for (int64_t i = 2 * half; i < 2 * half + 2; ++i)
          mx = arith::MaxNumFOp::create(b, loc, mx, frag[i]);
      Value mNew = mma::quadAllReduce(b, loc, mx, mma::QuadReduction::Max);
      Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            mNew, negInf);
      Value offset = arith::SelectOp::create(
          b, loc, isEmpty, zero,
          arith::MulFOp::create(b, loc, mNew, scaleLog2));
      Value negOffset = arith::NegFOp::create(b, loc, offset);
      auto exp2Scaled = [&](Value x) {
        Value e = math::FmaOp::create(b, loc, x, scaleLog2, negOffset);
        return exp2Approx(b, loc, e);
      };
      Value alpha = exp2Scaled(st.rowMax[r]);
      Value sum = arith::MulFOp::create(b, loc, st.rowSum[r], alpha);
      for (size_t n = 0; n < s[sl].size(); ++n) {
        Value lo = exp2Scaled(s[sl][n][2 * half]);
        Value hi = exp2Scaled(s[sl][n][2 * half + 1]);
        sum = arith::AddFOp::create(b, loc, sum, lo);
        sum = arith::AddFOp::create(b, loc, sum, hi);
        p[sl][n][half] = mma::packPair(b, loc, cfg.elementType, lo, hi);
      }
      for (int64_t n = 0; n < dTiles; ++n)
        for (int64_t i = 2 * half; i < 2 * half + 2; ++i) {
          Value &a = out.acc[(sl * dTiles + n) * 4 + i];
          a = arith::MulFOp::create(b, loc, a, alpha);
        }
      out.rowMax[r] = mNew;
      out.rowSum[r] = sum;
    }
  }
  return out;
}

/// acc += P V. The accumulators of two adjacent n8 score tiles are exactly
/// the A fragment of a 16-wide k step (rows g/g+8, cols 2t and 2t+8), so P
/// stays in registers. V rows are the k dimension: ldmatrix.trans gives B
/// fragments, matrices (k lo, d 0-7), (k hi, d 0-7), (k lo, d 8-15), (k hi,
/// d 8-15).
void FlashAttentionEmitter::accumulatePV(const ProbTile &p, Value stage,
                                         SoftmaxState &st) {
  Type T = cfg.elementType;
  Value rowOff = remU(lane, idx(16));
  Value colOff = mul(divU(lane, idx(16)), idx(8));
  for (int64_t ks = 0; ks < cfg.blockKV / mma::kK; ++ks) {
    SmallVector<mma::FragA> pFrags;
    for (int64_t sl = 0; sl < slabs; ++sl) {
      const auto &lo = p[sl][2 * ks], &hi = p[sl][2 * ks + 1];
      pFrags.push_back({lo[0], lo[1], hi[0], hi[1]});
    }
    Value row = add(idx(ks * mma::kK), rowOff);
    for (int64_t dp = 0; dp < dTiles / 2; ++dp) {
      Value col = add(idx(dp * 2 * mma::kN), colOff);
      auto r = mma::loadMatrixX4(b, loc, vSmem, {stage, row, col}, true);
      for (int64_t sl = 0; sl < slabs; ++sl) {
        for (int64_t j = 0; j < 2; ++j) {
          int64_t base = (sl * dTiles + 2 * dp + j) * 4;
          mma::FragC c = {st.acc[base], st.acc[base + 1], st.acc[base + 2],
                          st.acc[base + 3]};
          c = mma::mmaSync(b, loc, T, pFrags[sl], {r[2 * j], r[2 * j + 1]}, c);
          for (int64_t i = 0; i < 4; ++i)
            st.acc[base + i] = c[i];
        }
      }
    }
  }
}

/// One scf.for over KV tiles [lb, ub). Each step: wait for its tile, barrier
/// (the tile is visible to all warps, and all warps are done with the other
/// stage), prefetch the next tile into the other stage, then compute.
SoftmaxState FlashAttentionEmitter::emitKVLoop(Value lb, Value ub, bool masked,
                                               const SoftmaxState &init) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, idx(1), init.flatten());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value tile = loop.getInductionVar();
  SoftmaxState st =
      SoftmaxState::unflatten(loop.getRegionIterArgs(), init.rowMax.size());
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
  if (qFrags.empty()) {
    qLoadRow = pinInLoop(b, loc, add(warpRow0, remU(lane, idx(16))));
    qLoadCol = pinInLoop(b, loc, mul(divU(lane, idx(16)), idx(8)));
  }
  Value stage = remU(tile, idx(kKVStages));
  Value next = add(tile, idx(1));
  auto prefetch = scf::IfOp::create(b, loc, ult(next, nKVTiles),
                                    /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(prefetch.thenBlock());
    emitKVTileCopy(next, remU(next, idx(kKVStages)));
  }
  ScoreTile s = computeScores(stage);
  if (masked)
    applyMask(s, mul(tile, idx(cfg.blockKV)));
  ProbTile p;
  st = updateSoftmax(s, st, p);
  accumulatePV(p, stage, st);
  scf::YieldOp::create(b, loc, st.flatten());
  b.setInsertionPointAfter(loop);
  return SoftmaxState::unflatten(loop.getResults(), init.rowMax.size());
}

/// O = acc / l (0 for rows with no visible key) and LSE = m * scale + ln l
/// (-inf for those rows); rows past Sq are not stored.
void FlashAttentionEmitter::emitEpilogue(const SoftmaxState &st) {
  Type T = cfg.elementType;
  Value zero = f32(0.0), one = f32(1.0);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value rowBase = add(add(qStart, warpRow0), quadRow);
  Value col0 = mul(quadCol, idx(2));
  for (int64_t sl = 0; sl < slabs; ++sl) {
    for (int64_t half = 0; half < 2; ++half) {
      int64_t r = sl * 2 + half;
      Value l =
          mma::quadAllReduce(b, loc, st.rowSum[r], mma::QuadReduction::Add);
      Value isEmpty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
      Value inv = arith::SelectOp::create(
          b, loc, isEmpty, zero, arith::DivFOp::create(b, loc, one, l));
      Value row = add(rowBase, idx(sl * mma::kM + 8 * half));
      auto inRange = scf::IfOp::create(b, loc, ult(row, sq), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      Value rowOff = add(o.base, mul(row, o.rowStride));
      for (int64_t n = 0; n < dTiles; ++n) {
        int64_t base = (sl * dTiles + n) * 4 + 2 * half;
        Value lo = arith::MulFOp::create(b, loc, st.acc[base], inv);
        Value hi = arith::MulFOp::create(b, loc, st.acc[base + 1], inv);
        Value off = add(rowOff, add(col0, idx(n * mma::kN)));
        vector::StoreOp::create(b, loc, mma::packPair(b, loc, T, lo, hi), o.mem,
                                ValueRange{off}, /*nontemporal=*/false,
                                llvm::MaybeAlign(4));
      }
      Value lnL = math::LogOp::create(b, loc, l);
      Value lse = arith::SelectOp::create(
          b, loc, isEmpty, negInf,
          math::FmaOp::create(b, loc, st.rowMax[r], f32(cfg.scale), lnL));
      Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             quadCol, idx(0));
      auto leader = scf::IfOp::create(b, loc, isLeader, false);
      b.setInsertionPointToStart(leader.thenBlock());
      memref::StoreOp::create(b, loc, lse, lseMem,
                              ValueRange{add(mul(bh, sq), row)});
    }
  }
}

void FlashAttentionEmitter::emit() {
  emitPrologue();
  // Q tile and the first K/V tile in one cp.async group.
  emitTileCopy(q, qStart, sq, qSmem, Value(), cfg.blockQ);
  emitKVTileCopy(idx(0), idx(0));
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
  // With one slab per warp Q fragments stay in registers for the whole
  // loop (32 registers at d=128); with two, they would not fit next to the
  // accumulators and are reloaded from shared memory at each k step.
  int64_t kSteps = cfg.headDim / mma::kK;
  if (slabs == 1)
    for (int64_t ks = 0; ks < kSteps; ++ks)
      qFrags.push_back(loadQFragment(0, ks));

  SoftmaxState st;
  size_t rows = slabs * 2;
  st.rowMax.assign(rows, f32(-std::numeric_limits<double>::infinity()));
  st.rowSum.assign(rows, f32(0.0));
  st.acc.assign(slabs * dTiles * 4, f32(0.0));
  // Tiles wholly inside Skv and (when causal) wholly at or below the
  // diagonal need no mask: those are [0, nFull).
  Value nFull = divU(skv, idx(cfg.blockKV));
  if (cfg.causal)
    nFull = minU(nFull, divU(add(qStart, idx(1)), idx(cfg.blockKV)));
  st = emitKVLoop(idx(0), nFull, /*masked=*/false, st);
  st = emitKVLoop(nFull, nKVTiles, /*masked=*/true, st);
  emitEpilogue(st);
  gpu::ReturnOp::create(b, loc);
}

static LogicalResult verifyConfig(Location loc,
                                  const FlashAttentionKernelConfig &cfg) {
  if (cfg.headDim != 64 && cfg.headDim != 128)
    return emitError(loc) << "flash attention: head dim must be 64 or 128, got "
                          << cfg.headDim;
  if (!cfg.elementType ||
      !(cfg.elementType.isBF16() || cfg.elementType.isF16()))
    return emitError(loc)
           << "flash attention: element type must be bf16 or f16";
  if (cfg.numWarps <= 0 || cfg.blockQ % (cfg.numWarps * mma::kM) != 0 ||
      cfg.blockQ / (cfg.numWarps * mma::kM) > 2)
    return emitError(loc) << "flash attention: blockQ (" << cfg.blockQ
                          << ") must be 16 or 32 rows per warp ("
                          << cfg.numWarps << " warps)";
  int64_t threads = cfg.numWarps * mma::kWarpSize;
  int64_t copiesPerRow = cfg.headDim * 2 / kCopyBytes;
  if (cfg.blockKV % (2 * mma::kN) != 0 || threads % copiesPerRow != 0 ||
      cfg.blockKV % (threads / copiesPerRow) != 0 ||
      cfg.blockQ % (threads / copiesPerRow) != 0)
    return emitError(loc) << "flash attention: blockKV (" << cfg.blockKV
                          << ") must be a multiple of 16 and of the rows one "
                             "cp.async pass covers";
  if (!(cfg.scale > 0.0) || !std::isfinite(cfg.scale))
    return emitError(loc) << "flash attention: scale must be positive";
  return success();
}

/// The launch contract of docs/abi.md.
static void fillABI(const FlashAttentionKernelConfig &cfg, StringRef name,
                    int64_t smemBytes, KernelABI &abi) {
  std::string dtype = cfg.elementType.isBF16() ? "bf16" : "f16";
  abi = KernelABI();
  abi.name = name.str();
  abi.kind = "attention";
  auto tensor = [&](const char *n, std::string dt, std::vector<ABIDim> shape,
                    const char *role) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = n;
    p.dtype = std::move(dt);
    p.shape = std::move(shape);
    p.role = role;
    p.align = kCopyBytes;
    // Q, K, V and O rows move with 16-byte cp.async / stores; LSE is
    // written one f32 at a time and may have any stride.
    if (StringRef(n) != "lse")
      p.rowAlign = kCopyBytes;
    abi.params.push_back(p);
  };
  int64_t d = cfg.headDim;
  tensor("q", dtype, {"B", "H", "Sq", d}, "input");
  tensor("k", dtype, {"B", "Hkv", "Skv", d}, "input");
  tensor("v", dtype, {"B", "Hkv", "Skv", d}, "input");
  tensor("o", dtype, {"B", "H", "Sq", d}, "output");
  tensor("lse", "f32", {"B", "H", "Sq"}, "output");
  for (const char *s : {"B", "H", "Hkv", "Sq", "Skv"}) {
    ABIParam p;
    p.kind = ABIParam::Kind::Size;
    p.name = s;
    p.dtype = "i64";
    abi.params.push_back(p);
  }
  for (const char *t : {"q", "k", "v", "o"})
    for (int64_t dim = 0; dim < 3; ++dim) {
      ABIParam p;
      p.kind = ABIParam::Kind::Stride;
      p.name = std::string(t) + ".stride" + std::to_string(dim);
      p.dtype = "i64";
      p.tensor = t;
      p.dim = dim;
      abi.params.push_back(p);
    }
  abi.grid[0] = {GridFactor{1, "Sq", cfg.blockQ}};
  abi.grid[1] = {GridFactor{1, "B", 1}, GridFactor{1, "H", 1}};
  abi.grid[2] = {GridFactor{1, "", 1}};
  abi.block[0] = cfg.numWarps * mma::kWarpSize;
  abi.dynamicSharedMemoryBytes = smemBytes;
  char scale[32];
  snprintf(scale, sizeof(scale), "%.9g", cfg.scale);
  abi.attrs = {{"causal", cfg.causal ? "true" : "false"},
               {"scale", scale},
               {"head_dim", std::to_string(d)},
               {"block_q", std::to_string(cfg.blockQ)},
               {"block_kv", std::to_string(cfg.blockKV)},
               {"gqa", "true"}};
}

FailureOr<gpu::GPUFuncOp> attnc::buildFlashAttentionKernel(
    OpBuilder &b, Location loc, gpu::GPUModuleOp module, StringRef name,
    const FlashAttentionKernelConfig &cfg, KernelABI &abi) {
  if (failed(verifyConfig(loc, cfg)))
    return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  SmallVector<Type> argTypes(kArgB, ptrType);
  argTypes.append(kNumArgs - kArgB, b.getI64Type());
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int32_t threads = cfg.numWarps * mma::kWarpSize;
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  FlashAttentionEmitter(b, loc, cfg, func).emit();
  fillABI(cfg, name, FlashAttentionEmitter::sharedMemoryBytes(cfg), abi);
  return func;
}
