//===- CalibrationKernels.cpp - --attnc-calibration-kernels ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The microbenchmarks `python3 -m attnc.calibrate` times to measure the
// ceilings the cost model prices kernels with (docs/cost-model.md). Each is a
// gpu.module with a launch contract, lowered and compiled like any attnc
// kernel, so the runtime plans and launches them from the manifest on a
// machine without LLVM. Each kernel keeps one unit busy and nothing else:
//
//   calibrate_mma_sync   mma.sync m16n8k16 bf16, 8 independent chains a warp
//   calibrate_wgmma      wgmma m64n256k16 bf16 from shared memory, 2
//   (_n128, _n64)        (m64n128k16, m64n64k16: attention's widths)
//                        warpgroups a CTA, 8 MMAs per commit group
//   calibrate_exp        the softmax's per-score work: max, fma, ex2, add
//   calibrate_ldmatrix   ldmatrix.x4 from conflict-free shared memory
//   calibrate_copy       16-byte loads and stores, grid-stride (HBM)
//   calibrate_reduce     red.global.add.v2.f32, as the backward's dQ
//   calibrate_latency    one thread chasing pointers (HBM latency)
//   calibrate_empty      nothing, N CTAs (launch overhead, CTA launch rate)
//
// Operand values come from the thread index, so that nothing folds and the
// tensor cores see non-zero data (their clock depends on it); every chain's
// result reaches `out`, so nothing is dead.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Target/TargetDescription.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "AttncToGPU/MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNCCALIBRATIONKERNELS
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {

/// mma.sync chains per warp, wgmma MMAs per commit group, exp chains and
/// ldmatrix loads per thread per iteration: enough independent work to
/// cover each unit's latency at the occupancy the grids give.
constexpr int64_t kMmaChains = 8;
constexpr int64_t kWgmmaPerGroup = 8;
constexpr int64_t kExpChains = 8;
constexpr int64_t kLdmatrixPerIter = 8;
/// Shared memory of the wgmma kernel: A (64 x 128 bf16) and B (256 x 128),
/// 128-byte rows, plus one swizzle atom of alignment slack.
constexpr int64_t kWgmmaABytes = 64 * 128 * 2;
/// B (N x 128) of the widest, N = 256; the others measure attention's
/// widths: S = Q K^T of 128 keys, P V at d = 128 and 64.
constexpr int64_t kWgmmaBBytes = 256 * 128 * 2;
constexpr int64_t kAtom = 1024;
constexpr int64_t kLdmatrixBytes = 16384;
constexpr int64_t kCopyUnroll = 4;

struct Builder {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(float(v)));
  }
  Value toI64(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  }
  Value tid() { return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x); }
  /// (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x.
  Value globalThread() {
    Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value gx = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    Value bd = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
    Value block = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, by, gx), bx);
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, bd), tid());
  }
  /// A float in [0.5, 1) from the thread index: non-zero, never folded.
  Value threadFloat(Value thread, int64_t salt) {
    Value bits = arith::AndIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), thread),
            i32(salt)),
        i32(255));
    Value f = arith::UIToFPOp::create(b, loc, b.getF32Type(), bits);
    return arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, f, f32(1.0 / 512)), f32(0.5));
  }
  Value gep(Value ptr, Type elem, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), elem, ptr,
                               ValueRange{toI64(offset)});
  }
  /// out[thread] = v when thread < n.
  void storeResult(Value out, Value n, Value thread, Value v) {
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     toI64(thread), n);
    auto guard = scf::IfOp::create(b, loc, in, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    LLVM::StoreOp::create(b, loc, v, gep(out, b.getF32Type(), thread));
  }
  /// An empty asm tied to `v`: LLVM sees no dependence between a warpgroup
  /// MMA's results and wgmma.wait_group, so a use must go through this
  /// after the wait.
  Value pinned(Value v) {
    return LLVM::InlineAsmOp::create(b, loc, v.getType(), ValueRange{v},
                                     b.getStringAttr(""),
                                     b.getStringAttr("=f,0"), b.getUnitAttr(),
                                     nullptr, nullptr, nullptr, nullptr)
        .getResult(0);
  }
};

/// A 1-D tensor parameter over size symbol `sym`.
ABIParam tensorParam(StringRef name, StringRef dtype, StringRef sym,
                     StringRef role) {
  ABIParam p;
  p.kind = ABIParam::Kind::Tensor;
  p.name = name.str();
  p.dtype = dtype.str();
  p.shape = {sym.str()};
  p.role = role.str();
  return p;
}

/// The iteration count a microbenchmark's loop runs.
ABIParam itersParam() {
  ABIParam p;
  p.kind = ABIParam::Kind::Scalar;
  p.name = "iters";
  p.dtype = "i64";
  return p;
}

/// A kernel of `ctasPerSM` CTAs of `threads` per SM (the grid the host
/// reads from `ctas_per_sm` to count the work done).
KernelABI perSMABI(StringRef name, int64_t ctasPerSM, int64_t threads) {
  KernelABI abi;
  abi.name = name.str();
  abi.kind = "calibration";
  abi.grid[0] = {GridFactor::numSMs()};
  abi.grid[1] = {GridFactor::constant(ctasPerSM)};
  abi.block[0] = threads;
  abi.attrs["ctas_per_sm"] = std::to_string(ctasPerSM);
  return abi;
}

/// `out` (f32 [N], one value per thread), N and the iteration count: the
/// parameters every compute microbenchmark takes.
KernelABI computeABI(StringRef name, int64_t ctasPerSM, int64_t threads,
                     int64_t sharedBytes) {
  KernelABI abi = perSMABI(name, ctasPerSM, threads);
  abi.params = {tensorParam("out", "f32", "N", "output"), ABIParam::size("N"),
                itersParam()};
  abi.dynamicSharedMemoryBytes = sharedBytes;
  return abi;
}

/// scf.for over [0, iters) carrying `init`; `body` maps (iv, carried) to
/// the next carried values.
SmallVector<Value>
loop(Builder &k, Value iters, ValueRange init,
     function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  OpBuilder &b = k.b;
  Value n = arith::IndexCastOp::create(b, k.loc, b.getIndexType(), iters);
  auto forOp = scf::ForOp::create(b, k.loc, k.idx(0), n, k.idx(1), init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(forOp.getBody());
  SmallVector<Value> next =
      body(forOp.getInductionVar(), forOp.getRegionIterArgs());
  // Without carried values the builder has already put the yield there.
  if (!init.empty())
    scf::YieldOp::create(b, k.loc, next);
  return SmallVector<Value>(forOp.getResults());
}

Value sum(Builder &k, ValueRange vs) {
  Value acc = vs.front();
  for (Value v : vs.drop_front())
    acc = arith::AddFOp::create(k.b, k.loc, acc, v);
  return acc;
}

void buildMmaSync(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  Value thread = k.globalThread();
  Type bf16 = b.getBF16Type();
  auto pairOf = [&](int64_t salt) {
    Value x = k.threadFloat(thread, salt);
    return mma::packPair(b, k.loc, bf16, x, x);
  };
  mma::FragA a = {pairOf(1), pairOf(2), pairOf(3), pairOf(4)};
  mma::FragB bf = {pairOf(5), pairOf(6)};
  SmallVector<Value> init(kMmaChains * 4, k.f32(0));
  SmallVector<Value> accs =
      loop(k, f.getArgument(2), init, [&](Value, ValueRange c) {
        SmallVector<Value> next;
        for (int64_t i = 0; i < kMmaChains; ++i) {
          mma::FragC ci = {c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]};
          mma::FragC d = mma::mmaSync(b, k.loc, bf16, a, bf, ci);
          next.append(d.begin(), d.end());
        }
        return next;
      });
  k.storeResult(f.getArgument(0), f.getArgument(1), thread, sum(k, accs));
}

void buildWgmma(Builder &k, gpu::GPUFuncOp f, int64_t n) {
  OpBuilder &b = k.b;
  MLIRContext *ctx = b.getContext();
  Value thread = k.globalThread();
  auto ws = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value raw = dynamicSharedBytes(b, k.loc);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, k.loc, raw);
  Value pad = arith::AndIOp::create(
      b, k.loc, arith::SubIOp::create(b, k.loc, k.idx(0), base),
      k.idx(kAtom - 1));
  // Fill A and B with non-zero bf16 pairs from the thread index.
  int64_t words = (kWgmmaABytes + n * 128 * 2) / 4;
  auto view = memref::ViewOp::create(
      b, k.loc,
      MemRefType::get({words}, b.getI32Type(), MemRefLayoutAttrInterface{}, ws),
      raw, pad, ValueRange{});
  Value tid = k.tid();
  {
    auto fill = scf::ForOp::create(b, k.loc, tid, k.idx(words), k.idx(256));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(fill.getBody());
    Value x = k.threadFloat(fill.getInductionVar(), 7);
    Value pair = mma::packPair(b, k.loc, b.getBF16Type(), x, x);
    Value word = LLVM::BitcastOp::create(b, k.loc, b.getI32Type(), pair);
    memref::StoreOp::create(b, k.loc, word, view,
                            ValueRange{fill.getInductionVar()});
  }
  gpu::BarrierOp::create(b, k.loc);
  // wgmma reads shared memory through the async proxy.
  NVVM::FenceProxyOp::create(
      b, k.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  Value start = k.toI64(arith::AddIOp::create(b, k.loc, base, pad));
  // 128-byte swizzled K-major tiles, as the attention kernels' Q and K.
  auto descriptor = [&](int64_t offset) {
    Value addr = arith::AddIOp::create(b, k.loc, start, k.i64(offset));
    Value field = arith::ShRUIOp::create(
        b, k.loc, arith::AndIOp::create(b, k.loc, addr, k.i64(0x3FFFF)),
        k.i64(4));
    int64_t fixed =
        (int64_t(1) << 16) | (int64_t(kAtom >> 4) << 32) | (int64_t(1) << 62);
    return arith::OrIOp::create(b, k.loc, field, k.i64(fixed)).getResult();
  };
  Type f32 = b.getF32Type();
  SmallVector<Type> fields(n / 2, f32);
  Type accType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value zero = LLVM::ZeroOp::create(b, k.loc, accType);
  SmallVector<Value> result =
      loop(k, f.getArgument(2), ValueRange{zero}, [&](Value, ValueRange c) {
        Value acc = c[0];
        NVVM::WgmmaFenceAlignedOp::create(b, k.loc);
        for (int64_t s = 0; s < kWgmmaPerGroup; ++s) {
          // k steps of 32 bytes inside a 128-byte row, a new box of rows
          // every four.
          int64_t inBox = (s % 4) * 32, box = s / 4;
          acc = NVVM::WgmmaMmaAsyncOp::create(
              b, k.loc, accType, acc, descriptor(box * 64 * 128 + inBox),
              descriptor(kWgmmaABytes + box * n * 128 + inBox),
              NVVM::MMAShapeAttr::get(ctx, 64, n, 16), NVVM::WGMMATypes::bf16,
              NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32,
              NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
              NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
              NVVM::MMALayout::col,
              /*satfinite=*/nullptr);
        }
        NVVM::WgmmaGroupSyncAlignedOp::create(b, k.loc);
        // One group in flight while the next is issued.
        NVVM::WgmmaWaitGroupSyncOp::create(b, k.loc, 1);
        return SmallVector<Value>{acc};
      });
  NVVM::WgmmaWaitGroupSyncOp::create(b, k.loc, 0);
  SmallVector<Value> vals;
  for (int64_t i = 0; i < 4; ++i)
    vals.push_back(k.pinned(LLVM::ExtractValueOp::create(
        b, k.loc, result[0], ArrayRef<int64_t>{i})));
  k.storeResult(f.getArgument(0), f.getArgument(1), thread, sum(k, vals));
}

void buildExp(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  Value thread = k.globalThread();
  SmallVector<Value> init;
  for (int64_t i = 0; i < kExpChains; ++i)
    init.push_back(k.threadFloat(thread, i));
  init.push_back(k.f32(0));  // running sum
  init.push_back(k.f32(-1)); // running max
  Value scale = k.f32(-1.0), bias = k.f32(0.25);
  SmallVector<Value> out =
      loop(k, f.getArgument(2), init, [&](Value, ValueRange c) {
        SmallVector<Value> next;
        Value s = c[kExpChains], m = c[kExpChains + 1];
        for (int64_t i = 0; i < kExpChains; ++i) {
          // As one score of the online softmax: scale and subtract the row
          // max in one fma, exp2, add to the row sum, fold into the max.
          // 2^(0.25 - x) maps [0.5, 1) into itself: the chain stays finite.
          Value x = math::FmaOp::create(b, k.loc, c[i], scale, bias);
          Value e =
              LLVM::CallIntrinsicOp::create(
                  b, k.loc, b.getF32Type(),
                  b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{x})
                  .getResult(0);
          s = arith::AddFOp::create(b, k.loc, s, e);
          m = arith::MaximumFOp::create(b, k.loc, m, e);
          next.push_back(e);
        }
        next.push_back(s);
        next.push_back(m);
        return next;
      });
  k.storeResult(f.getArgument(0), f.getArgument(1), thread, sum(k, out));
}

void buildLdmatrix(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  MLIRContext *ctx = b.getContext();
  Value thread = k.globalThread();
  auto ws = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value raw = dynamicSharedBytes(b, k.loc);
  int64_t elems = kLdmatrixBytes / 2;
  Value smem =
      memref::ViewOp::create(b, k.loc,
                             MemRefType::get({elems}, b.getBF16Type(),
                                             MemRefLayoutAttrInterface{}, ws),
                             raw, k.idx(0), ValueRange{});
  Value lane = arith::RemUIOp::create(b, k.loc, k.tid(), k.idx(32));
  Value zero = k.i32(0);
  SmallVector<Value> init(4, zero);
  SmallVector<Value> words =
      loop(k, f.getArgument(2), init, [&](Value iv, ValueRange c) {
        SmallVector<Value> next(c.begin(), c.end());
        for (int64_t l = 0; l < kLdmatrixPerIter; ++l) {
          // Lane L addresses 16-byte row L of a 512-byte block: the eight
          // rows of each matrix are 128 consecutive bytes, one bank each.
          // The block moves with the iteration, so no load is invariant.
          Value block = arith::RemUIOp::create(
              b, k.loc,
              arith::AddIOp::create(
                  b, k.loc, arith::MulIOp::create(b, k.loc, iv, k.idx(3)),
                  k.idx(l)),
              k.idx(kLdmatrixBytes / 512));
          Value index = arith::AddIOp::create(
              b, k.loc, arith::MulIOp::create(b, k.loc, block, k.idx(256)),
              arith::MulIOp::create(b, k.loc, lane, k.idx(8)));
          std::array<Value, 4> regs = mma::loadMatrixX4(
              b, k.loc, smem, ValueRange{index}, /*transpose=*/false);
          for (int64_t r = 0; r < 4; ++r)
            next[r] = arith::XOrIOp::create(
                b, k.loc, next[r],
                LLVM::BitcastOp::create(b, k.loc, b.getI32Type(), regs[r]));
        }
        return next;
      });
  Value x = words[0];
  for (int64_t r = 1; r < 4; ++r)
    x = arith::XOrIOp::create(b, k.loc, x, words[r]);
  k.storeResult(f.getArgument(0), f.getArgument(1), thread,
                arith::BitcastOp::create(b, k.loc, b.getF32Type(), x));
}

/// y[i] = x[i] for i < M (M a multiple of 4), 16 bytes per access, four
/// loads in flight per thread before their stores (one at a time leaves the
/// HBM pipe short of requests). Indices past the end are clamped to the
/// last vector: its copy is repeated, which changes nothing.
void buildCopy(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  Value thread = k.globalThread();
  Value gx = gpu::GridDimOp::create(b, k.loc, gpu::Dimension::x);
  Value gy = gpu::GridDimOp::create(b, k.loc, gpu::Dimension::y);
  Value bd = gpu::BlockDimOp::create(b, k.loc, gpu::Dimension::x);
  Value stride = arith::MulIOp::create(
      b, k.loc, arith::MulIOp::create(b, k.loc, gx, gy), bd);
  Value m =
      arith::IndexCastOp::create(b, k.loc, b.getIndexType(), f.getArgument(2));
  Value vectors = arith::DivUIOp::create(b, k.loc, m, k.idx(4));
  Value last = arith::SubIOp::create(b, k.loc, vectors, k.idx(1));
  auto forOp = scf::ForOp::create(
      b, k.loc, thread, vectors,
      arith::MulIOp::create(b, k.loc, stride, k.idx(kCopyUnroll)));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(forOp.getBody());
  Type vec = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> at, loaded;
  for (int64_t u = 0; u < kCopyUnroll; ++u) {
    Value i = arith::AddIOp::create(
        b, k.loc, forOp.getInductionVar(),
        arith::MulIOp::create(b, k.loc, stride, k.idx(u)));
    at.push_back(arith::MinUIOp::create(b, k.loc, i, last));
    loaded.push_back(LLVM::LoadOp::create(
        b, k.loc, vec, k.gep(f.getArgument(0), vec, at.back()),
        /*alignment=*/16));
  }
  for (int64_t u = 0; u < kCopyUnroll; ++u)
    LLVM::StoreOp::create(b, k.loc, loaded[u],
                          k.gep(f.getArgument(1), vec, at[u]),
                          /*alignment=*/16);
}

/// `iters` red.global.add.v2.f32 per thread, spread over `out` (M floats).
void buildReduce(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  Value thread = k.globalThread();
  Value pairs = arith::DivUIOp::create(
      b, k.loc,
      arith::IndexCastOp::create(b, k.loc, b.getIndexType(), f.getArgument(1)),
      k.idx(2));
  Value x = k.threadFloat(thread, 3);
  loop(k, f.getArgument(2), ValueRange{}, [&](Value iv, ValueRange) {
    // Consecutive threads hit consecutive pairs, as a warp's dQ row does.
    Value slot = arith::RemUIOp::create(
        b, k.loc,
        arith::AddIOp::create(
            b, k.loc, thread,
            arith::MulIOp::create(b, k.loc, iv, k.idx(1 << 20))),
        pairs);
    Value addr = k.gep(f.getArgument(0), b.getF32Type(),
                       arith::MulIOp::create(b, k.loc, slot, k.idx(2)));
    LLVM::InlineAsmOp::create(
        b, k.loc, TypeRange{}, ValueRange{addr, x, x},
        b.getStringAttr("red.global.add.v2.f32 [$0], {$1, $2};"),
        b.getStringAttr("l,f,f"), b.getUnitAttr(), nullptr, nullptr, nullptr,
        nullptr);
    return SmallVector<Value>{};
  });
}

/// Thread 0 follows `table` (a permutation cycle the host writes) `iters`
/// times; each load waits for the one before.
void buildLatency(Builder &k, gpu::GPUFuncOp f) {
  OpBuilder &b = k.b;
  Value first = arith::CmpIOp::create(b, k.loc, arith::CmpIPredicate::eq,
                                      k.globalThread(), k.idx(0));
  auto guard = scf::IfOp::create(b, k.loc, first, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(guard.thenBlock());
  SmallVector<Value> last =
      loop(k, f.getArgument(3), ValueRange{k.i32(0)}, [&](Value, ValueRange c) {
        Value at = arith::IndexCastOp::create(b, k.loc, b.getIndexType(), c[0]);
        Value next =
            LLVM::LoadOp::create(b, k.loc, b.getI32Type(),
                                 k.gep(f.getArgument(0), b.getI32Type(), at));
        return SmallVector<Value>{next};
      });
  LLVM::StoreOp::create(
      b, k.loc, arith::SIToFPOp::create(b, k.loc, b.getF32Type(), last[0]),
      f.getArgument(1));
}

struct CalibrationKernelsPass
    : attnc::impl::AttncCalibrationKernelsBase<CalibrationKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::string ptx = features.empty() ? ptxFeaturesForChip(chip)
                                       : std::string(features.getValue());
    auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                            "nvptx64-nvidia-cuda", chip, ptx);
    bool hasWgmma = false;
    if (FailureOr<TargetDescription> desc = lookupTargetDescription(chip);
        succeeded(desc))
      hasWgmma = desc->hasFeature(TargetFeature::Wgmma);

    struct Spec {
      StringRef name;
      int64_t ctasPerSM, threads, shared;
      void (*body)(Builder &, gpu::GPUFuncOp);
    };
    SmallVector<Spec> specs = {
        {"calibrate_mma_sync", 2, 256, 0, buildMmaSync},
        {"calibrate_exp", 4, 256, 0, buildExp},
        {"calibrate_ldmatrix", 2, 256, kLdmatrixBytes, buildLdmatrix},
    };
    if (hasWgmma)
      specs.append(
          {{"calibrate_wgmma", 1, 256, kWgmmaABytes + kWgmmaBBytes + kAtom,
            [](Builder &k, gpu::GPUFuncOp f) { buildWgmma(k, f, 256); }},
           {"calibrate_wgmma_n128", 1, 256,
            kWgmmaABytes + kWgmmaBBytes / 2 + kAtom,
            [](Builder &k, gpu::GPUFuncOp f) { buildWgmma(k, f, 128); }},
           {"calibrate_wgmma_n64", 1, 256,
            kWgmmaABytes + kWgmmaBBytes / 4 + kAtom,
            [](Builder &k, gpu::GPUFuncOp f) { buildWgmma(k, f, 64); }}});

    OpBuilder b(ctx);
    Location loc = module.getLoc();
    auto emit = [&](KernelABI abi, void (*body)(Builder &, gpu::GPUFuncOp)) {
      b.setInsertionPointToEnd(module.getBody());
      auto km = gpu::GPUModuleOp::create(b, loc, abi.name + "_module",
                                         b.getArrayAttr({target}));
      b.setInsertionPointToStart(km.getBody());
      gpu::GPUFuncOp f =
          createKernelFunc(b, loc, abi.name, abi, int32_t(abi.block[0]));
      Builder k{b, loc};
      body(k, f);
      gpu::ReturnOp::create(b, loc);
      LaunchContractAttr contract =
          buildLaunchContract(ctx, abi, [&] { return module.emitError(); });
      if (!contract)
        return failure();
      km->setAttr(kLaunchContractAttrName, contract);
      return success();
    };
    for (const Spec &s : specs)
      if (failed(emit(computeABI(s.name, s.ctasPerSM, s.threads, s.shared),
                      s.body)))
        return signalPassFailure();

    KernelABI copy = perSMABI("calibrate_copy", 8, 256);
    copy.params = {tensorParam("x", "f32", "M", "input"),
                   tensorParam("y", "f32", "M", "output"), ABIParam::size("M")};
    copy.constraints = {ABIConstraint::min("M", 4)};

    KernelABI reduce = perSMABI("calibrate_reduce", 4, 256);
    reduce.params = {tensorParam("out", "f32", "M", "output"),
                     ABIParam::size("M"), itersParam()};
    reduce.constraints = {ABIConstraint::min("M", 2)};

    KernelABI latency;
    latency.name = "calibrate_latency";
    latency.kind = "calibration";
    latency.params = {tensorParam("table", "i32", "M", "input"),
                      tensorParam("out", "f32", "N", "output"),
                      ABIParam::size("M"), itersParam()};
    latency.grid[0] = {GridFactor::constant(1)};
    latency.block[0] = 32;

    // One CTA per element of `out`: N = 1 times a launch, a large N the
    // rate at which the device starts CTAs.
    KernelABI empty;
    empty.name = "calibrate_empty";
    empty.kind = "calibration";
    empty.params = {tensorParam("out", "f32", "N", "output")};
    empty.grid[0] = {GridFactor::symbol("N")};
    empty.block[0] = 32;

    if (failed(emit(copy, buildCopy)) || failed(emit(reduce, buildReduce)) ||
        failed(emit(latency, buildLatency)) ||
        failed(emit(empty, [](Builder &, gpu::GPUFuncOp) {})))
      return signalPassFailure();
  }
};

} // namespace
