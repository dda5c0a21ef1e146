//===- FlashKernelEpilogue.cpp - the attention kernel's epilogue ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The finalize and the two inserts of a flash form in the kernel: O = acc / l
// and the logsumexp into the rows the inserts name (packed rows of a ragged
// batch, packed GQA heads, a TMA store when the strategy has a map for O),
// or a split-KV partial form's f32 partials.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

/// O = acc / l into the rows the O insert names, and the logsumexp of each
/// of them into the rows of the logsumexp insert.
LogicalResult FlashKernelBuilder::emitEpilogue(OnlineSoftmaxState &st) {
  SmallVector<Value> lse = scoreStage->finalize(b, st);
  auto rowsOf = [&](tensor::ParallelInsertSliceOp ins)
      -> FailureOr<std::array<Value, 4>> {
    SmallVector<OpFoldResult> offsets = ins.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = ins.getMixedSizes();
    std::array<Value, 4> r;
    for (int i = 0; i < 3; ++i) {
      FailureOr<Value> v = materialize(offsets[i], prologue);
      if (failed(v))
        return failure();
      r[i] = *v;
    }
    FailureOr<Value> rows = materialize(sizes[2], prologue);
    if (failed(rows))
      return failure();
    r[3] = arith::AddIOp::create(b, loc, r[2], *rows);
    return r;
  };
  if (isPartial())
    return emitPartialEpilogue(st.acc, lse);
  if (form.ragged) {
    // Packed rows row0.. of O [T, H, dv] (heads a stride1 apart) and of the
    // contiguous logsumexp [T, H], up to the tile's rows.
    FailureOr<Matrix> head = matrixOf(form.outInsert, "o", prologue);
    FailureOr<Value> row0 =
        materialize(form.outInsert.getMixedOffsets()[0], prologue);
    FailureOr<Value> rows =
        materialize(form.outInsert.getMixedSizes()[0], prologue);
    if (failed(head) || failed(row0) || failed(rows))
      return failure();
    Value end = arith::AddIOp::create(b, loc, *row0, *rows);
    GlobalTile o;
    o.mem = globalMem.lookup("o");
    o.base = head->base;
    o.rowStride = paramIndexValue("o.stride0");
    o.rowStart = *row0;
    o.rowLimit = end;
    strategy->storeOutput(b, st.acc, o);
    GlobalTile l;
    l.mem = globalMem.lookup("lse");
    l.base = head->head;
    l.rowStride = extentOf(form.query, 1);
    storeRowValues(lse, l, *row0, end);
    return success();
  }
  FailureOr<std::array<Value, 4>> out = rowsOf(form.outInsert);
  FailureOr<std::array<Value, 4>> lseRows =
      form.lseInsert ? rowsOf(form.lseInsert) : out;
  if (failed(out) || failed(lseRows))
    return failure();
  GlobalTile o;
  o.mem = globalMem.lookup("o");
  FailureOr<Matrix> oMatrix = matrixOf(form.outInsert, "o", prologue);
  if (failed(oMatrix))
    return failure();
  o.base = oMatrix->base;
  o.rowStride = paramIndexValue("o.stride2");
  o.rowStart = (*out)[2];
  o.rowLimit = (*out)[3];
  packRows(o, "o.stride1");
  if (strategy->tensorMapRows("o") > 0) {
    o.map = param("o.map");
    o.batch = oMatrix->batch;
    o.head = oMatrix->head;
  }
  strategy->storeOutput(b, st.acc, o);

  // The logsumexp is a contiguous [B, H, Sq] f32 tensor.
  Value heads = extentOf(form.query, 1);
  auto [lb, lh, lq0, lEnd] = *lseRows;
  Value bh = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, lb, heads), lh);
  Value rowBase = arith::MulIOp::create(b, loc, bh, seqQ);
  // (Packed rows of a group are consecutive rows of the contiguous
  // logsumexp: group hkv's are rows hkv * G * Sq onwards.)
  GlobalTile l;
  l.mem = globalMem.lookup("lse");
  l.base = rowBase;
  l.rowStride = arith::ConstantIndexOp::create(b, loc, 1);
  storeRowValues(lse, l, lq0, lEnd);
  return success();
}

/// One f32 per row of the tile, rows [q0, end), at the row's offset in
/// `to` (its rows one element each), by the row's leader thread.
void FlashKernelBuilder::storeRowValues(ArrayRef<Value> values,
                                        const GlobalTile &to, Value q0,
                                        Value end) {
  const AccumulatorLayout &layout = strategy->outputLayout();
  for (auto [slot, value] : llvm::enumerate(values)) {
    Value row = arith::AddIOp::create(b, loc, q0, layout.slotRow(b, loc, slot));
    Value write = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, end),
        layout.isRowLeader(b, loc));
    auto ifOp = scf::IfOp::create(b, loc, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, loc, value, to.mem,
                            ValueRange{globalRowOffset(b, loc, to, row)});
  }
}

/// A split's normalized output and logsumexp, in f32, at [s, b, h, q0] of
/// the partials (strided, innermost stride 1).
LogicalResult FlashKernelBuilder::emitPartialEpilogue(ArrayRef<Value> acc,
                                                      ArrayRef<Value> lse) {
  auto offsetOf = [&](tensor::ParallelInsertSliceOp ins, StringRef tensor,
                      Value &q0, Value &end) -> FailureOr<Value> {
    SmallVector<OpFoldResult> offsets = ins.getMixedOffsets();
    Value base = arith::ConstantIndexOp::create(b, loc, 0);
    for (int64_t d = 0; d < 3; ++d) {
      FailureOr<Value> v = materialize(offsets[d], prologue);
      if (failed(v))
        return failure();
      // A packed form's K/V head hkv writes query heads hkv * G onwards.
      if (d == 2 && form.packedSource)
        v = arith::MulIOp::create(b, loc, *v, groupSize()).getResult();
      base = arith::AddIOp::create(
          b, loc, base,
          arith::MulIOp::create(
              b, loc, *v,
              paramIndexValue((tensor + ".stride" + Twine(d)).str())));
    }
    FailureOr<Value> start = materialize(offsets[3], prologue);
    FailureOr<Value> rows = materialize(ins.getMixedSizes()[3], prologue);
    if (failed(start) || failed(rows))
      return failure();
    q0 = *start;
    end = arith::AddIOp::create(b, loc, *start, *rows);
    return base;
  };
  Value q0, end, lq0, lend;
  FailureOr<Value> oBase = offsetOf(form.outInsert, "o_partial", q0, end);
  FailureOr<Value> lseBase = offsetOf(form.lseInsert, "lse_partial", lq0, lend);
  if (failed(oBase) || failed(lseBase))
    return failure();
  GlobalTile o;
  o.mem = globalMem.lookup("o_partial");
  o.base = *oBase;
  o.rowStride = paramIndexValue("o_partial.stride3");
  o.rowStart = q0;
  o.rowLimit = end;
  o.elementType = b.getF32Type();
  GlobalTile l;
  l.mem = globalMem.lookup("lse_partial");
  l.base = *lseBase;
  l.rowStride = arith::ConstantIndexOp::create(b, loc, 1);
  packRows(o, "o_partial.stride2");
  packRows(l, "lse_partial.stride2");
  strategy->storeOutput(b, acc, o);
  storeRowValues(lse, l, lq0, lend);
  return success();
}
