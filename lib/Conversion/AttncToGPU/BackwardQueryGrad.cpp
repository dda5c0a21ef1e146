//===- BackwardQueryGrad.cpp - dQ's tiles added to the workspace ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The backward kernel's dQ reductions, shared by both strategies: each K/V
// tile's contribution dS K to a query tile's dQ is added to the zeroed f32
// workspace where the IR's attnc.accumulate and attnc.parallel_accumulate
// put it: mma_sync by the threads' reduction instructions (inline PTX:
// MLIR has no vector reduction, and the no-S x S check traces these to the
// workspace); wgmma by staging each tile in shared memory and adding it by
// TMA reductions through the workspace's tensor map.
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;

FailureOr<BackwardKernelBuilder::QueryGradTarget>
BackwardKernelBuilder::queryGradTarget(BackwardQueryLoop &l, IRMapping &scope) {
  // dQ[b, h0 + g, q0 + r0 + row, c0 + col] with (b, h0, r0, c0) the
  // parallel accumulate's offsets and (g, q0, col) the accumulate's.
  SmallVector<Value> outer, inner;
  for (auto [offsets, out] : {std::pair{form.dqAccumulate.getOffsets(), &outer},
                              std::pair{l.accumulate.getOffsets(), &inner}})
    for (Value o : offsets) {
      FailureOr<Value> v = materialize(o, scope);
      if (failed(v))
        return failure();
      out->push_back(*v);
    }
  QueryGradTarget t;
  Value heads = extentOf(form.query, 1);
  Value head = arith::AddIOp::create(b, loc, outer[1], inner[0]);
  Value row0 = arith::AddIOp::create(b, loc, outer[2], inner[1]);
  Value col = arith::AddIOp::create(b, loc, outer[3], inner[2]);
  Value matrix = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, outer[0], heads), head);
  t.start = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, matrix, seqQ), row0),
          idx(d)),
      col);
  t.rows = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row0, seqQ),
      arith::SubIOp::create(b, loc, seqQ, row0), idx(0));
  std::optional<int64_t> outerCol = getConstantIntValue(outer[3]);
  std::optional<int64_t> innerCol = getConstantIntValue(inner[2]);
  if (outerCol && innerCol)
    t.constantCol = *outerCol + *innerCol;
  auto i32 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  // A tile is one if any of its rows is inside the sequence; TMA skips the
  // rest (they are outside the map).
  t.carried = {
      arith::ExtUIOp::create(
          b, loc, b.getI32Type(),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row0, seqQ)),
      i32(col), i32(row0), i32(head), i32(outer[0])};
  return t;
}

LogicalResult BackwardKernelBuilder::addQueryGrad(const QueryGradTarget &target,
                                                  ArrayRef<mma::FragC> c,
                                                  Value slab, Value col0) {
  int64_t nTiles = c.size();
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value dqBase = param("dq_accum");
  // `body` with the offset of this thread's row (16 slab + quad row +
  // `below` of the tile) in the workspace, for rows inside the sequence.
  auto inRow = [&](Value below, function_ref<void(Value)> body) {
    Value row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, slab, idx(mma::kM)),
        arith::AddIOp::create(b, loc, w.quadRow, below));
    auto inside = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                              target.rows),
        false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(inside.thenBlock());
    body(arith::AddIOp::create(b, loc, target.start,
                               arith::MulIOp::create(b, loc, row, idx(d))));
  };
  // Vector reductions (.v2, .v4 of f32) need sm_90; before it, one f32
  // per red.
  bool vectors = chip.starts_with("sm_90");
  auto reduce = [&](Value rowBase, Value col, ArrayRef<Value> values) {
    Value offset = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, rowBase, col));
    Value addr = LLVM::GEPOp::create(b, loc, ptrType, b.getF32Type(), dqBase,
                                     ValueRange{offset});
    auto emit = [&](StringRef text, StringRef constraints,
                    ValueRange operands) {
      LLVM::InlineAsmOp::create(
          b, loc, TypeRange{}, operands, b.getStringAttr(text),
          b.getStringAttr(constraints), b.getUnitAttr(),
          /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
          /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
    };
    if (!vectors) {
      for (auto [i, v] : llvm::enumerate(values))
        emit("red.global.add.f32 [$0], $1;", "l,f",
             {LLVM::GEPOp::create(b, loc, ptrType, b.getF32Type(), addr,
                                  ArrayRef<LLVM::GEPArg>{int32_t(i)}),
              v});
      return;
    }
    SmallVector<Value> operands = {addr};
    operands.append(values.begin(), values.end());
    if (values.size() == 4)
      emit("red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f",
           operands);
    else
      emit("red.global.add.v2.f32 [$0], {$1, $2};", "l,f,f", operands);
  };
  if (vectors && target.constantCol && *target.constantCol % 4 == 0) {
    // sm_90 adds four f32 in one reduction. Quad neighbours (2c, 2c + 1)
    // trade a pair: the even one then holds columns 4c'..4c'+3 of row r,
    // the odd one those of row r + 8 (one shuffle per value sent), and
    // each adds one 16-byte, aligned vector: half the reductions of pairs.
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, w.quadCol, idx(1)), idx(0));
    Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
    Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
    SmallVector<std::array<Value, 4>> vecs;
    for (int64_t n = 0; n < nTiles; ++n) {
      Value got[2];
      for (int64_t i = 0; i < 2; ++i) {
        Value send = arith::SelectOp::create(b, loc, odd, c[n][i], c[n][2 + i]);
        got[i] = gpu::ShuffleOp::create(b, loc, send, one, width,
                                        gpu::ShuffleMode::XOR)
                     .getShuffleResult();
      }
      std::array<Value, 4> v;
      for (int64_t i = 0; i < 2; ++i) {
        v[i] = arith::SelectOp::create(b, loc, odd, got[i], c[n][i]);
        v[2 + i] = arith::SelectOp::create(b, loc, odd, c[n][2 + i], got[i]);
      }
      vecs.push_back(v);
    }
    Value pairCol = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, w.quadCol, idx(2)), idx(4));
    inRow(arith::SelectOp::create(b, loc, odd, idx(8), idx(0)),
          [&](Value rowBase) {
            for (int64_t n = 0; n < nTiles; ++n)
              reduce(
                  rowBase,
                  arith::AddIOp::create(
                      b, loc, col0,
                      arith::AddIOp::create(b, loc, pairCol, idx(n * mma::kN))),
                  vecs[n]);
          });
    return success();
  }
  // Each thread's (2t, 2t + 1) column pair is 8 contiguous, 8-byte aligned
  // bytes (d is even): one red.global.add.v2.f32 per pair, half the
  // reductions of scalar atomics. MLIR has no vector atomic, hence PTX.
  // (Where the columns may not start at a multiple of 4.)
  for (int64_t half = 0; half < 2; ++half)
    inRow(idx(8 * half), [&](Value rowBase) {
      for (int64_t n = 0; n < nTiles; ++n) {
        Value col = arith::AddIOp::create(
            b, loc, col0,
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, w.quadCol, idx(2)),
                idx(n * mma::kN)));
        reduce(rowBase, col, {c[n][2 * half], c[n][2 * half + 1]});
      }
    });
  return success();
}

void BackwardKernelBuilder::stageQueryGrad(ArrayRef<mma::FragC> c, Value slab,
                                           Value col0, Value buffer,
                                           Value partial) {
  // Box k of a tile holds its columns [32 k, 32 k + 32), a 128-byte row per
  // query row with 16-byte chunk j at j ^ (row mod 8), as the tensor map's
  // 128-byte swizzle has it. A thread's row mod 8 is its quad row, so the
  // eight rows of a store (four threads, 32 bytes each) fall in four
  // distinct 32-byte bank groups twice. (A 64-bit store goes by half
  // warps, whose rows r and r ^ 1 share a bank group: ncu counts 8-12% of
  // the shared wavefronts excessive. Unswizzled boxes of one n8 tile, 32
  // bytes a row, avoid that but need four times the TMA reductions, of
  // 32-byte rows: 5-10% slower on the H200.)
  int64_t rowBytes = kQueryGradBoxCols * 4;
  int64_t boxBytes = blockQ * rowBytes;
  int64_t tileBytes = d / kQueryGradBoxCols * boxBytes;
  Value tile = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, buffer, idx(dqPartials)), partial);
  Value slabRow0 = arith::MulIOp::create(b, loc, slab, idx(mma::kM));
  Value base = arith::AddIOp::create(
      b, loc, idx(dqOffset),
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tile, idx(tileBytes)),
          arith::MulIOp::create(b, loc, slabRow0, idx(rowBytes))));
  // col0 is a multiple of 64: whole boxes.
  Value firstBox = arith::DivUIOp::create(b, loc, col0, idx(kQueryGradBoxCols));
  base = arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, firstBox, idx(boxBytes)));
  Value half = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, w.quadCol, idx(1)), idx(8));
  Value chunkOfQuad = arith::DivUIOp::create(b, loc, w.quadCol, idx(2));
  int64_t tilesPerBox = kQueryGradBoxCols / mma::kN;
  for (auto [n, frag] : llvm::enumerate(c)) {
    int64_t box = int64_t(n) / tilesPerBox;
    Value chunk = arith::XOrIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, chunkOfQuad,
                              idx(2 * (int64_t(n) % tilesPerBox))),
        w.quadRow);
    for (int64_t h = 0; h < 2; ++h) {
      Value row = arith::AddIOp::create(b, loc, w.quadRow, idx(8 * h));
      Value bytes = arith::AddIOp::create(
          b, loc, base,
          arith::AddIOp::create(
              b, loc,
              arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, row, idx(rowBytes)),
                  idx(box * boxBytes)),
              arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, chunk, idx(16)),
                  half)));
      Value ptr = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
          arith::AddIOp::create(
              b, loc, smemAddress,
              arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes))
              .getResult());
      Value pair = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, b.getF32Type()),
          ValueRange{frag[2 * h], frag[2 * h + 1]});
      LLVM::StoreOp::create(b, loc, pair, ptr, /*alignment=*/8);
    }
  }
  // Generic-proxy writes, read by the async proxy after the next barrier:
  // the caller fences before it (a step's fence after its dSᵀ stores
  // covers these too; fenced here, the fence waited for the stores, 7% of
  // the d = 128 kernel's stall samples).
}

void BackwardKernelBuilder::issueQueryGradReduce(ValueRange carried,
                                                 Value buffer) {
  MLIRContext *ctx = b.getContext();
  Value first = isFirstThread();
  Value none = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value issues = arith::AndIOp::create(
      b, loc, first,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, carried[0],
                            none));
  auto issue = scf::IfOp::create(b, loc, issues, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(issue.thenBlock());
  int64_t boxBytes = blockQ * kQueryGradBoxCols * 4;
  int64_t boxes = d / kQueryGradBoxCols;
  Value col = carried[1];
  for (int64_t p = 0; p < dqPartials; ++p) {
    Value tile = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, buffer, idx(dqPartials)), idx(p));
    Value tileStart = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        arith::AddIOp::create(
            b, loc, idx(dqOffset),
            arith::MulIOp::create(b, loc, tile, idx(boxes * boxBytes))));
    for (int64_t box = 0; box < boxes; ++box) {
      Value shared = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(ctx, 3),
          arith::AddIOp::create(
              b, loc, smemAddress,
              arith::AddIOp::create(b, loc, tileStart, i64(box * boxBytes)))
              .getResult());
      Value boxCol = arith::AddIOp::create(
          b, loc, col,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                       box * kQueryGradBoxCols));
      // Element-wise atomic adds: the partials of several warpgroups and
      // CTAs add up; rows past the sequence are outside the map.
      NVVM::CpAsyncBulkTensorReduceOp::create(
          b, loc, param("dq_accum.map"), shared, NVVM::TMAReduxKind::ADD,
          NVVM::TMAStoreMode::TILE,
          ValueRange{boxCol, carried[2], carried[3], carried[4]},
          /*l2CacheHint=*/Value());
    }
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}
