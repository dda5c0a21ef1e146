//===- FlashFormSequences.cpp - sequences read per block ------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The parts of a flash form that read a tensor element per sequence, once
// per (batch, head, query tile): the reads mask and score regions make of
// per-sequence tensors (hoisted out of the steps), and ragged batches,
// whose tiles address the packed rows from each sequence's first.
//
//===----------------------------------------------------------------------===//

#include "FlashFormBuilder.h"
#include "FlashTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::tiling;
using namespace attnc::flash_form;

AttentionExtents attnc::flash_form::getRaggedExtents(OpBuilder &b,
                                                     AttentionOp op,
                                                     RaggedViewOp q,
                                                     RaggedViewOp k,
                                                     RaggedViewOp v) {
  Location loc = op.getLoc();
  AttentionExtents e;
  e.batch = getExtent(b, loc, q.getStarts(), 0, {q.getEnds().getType()});
  e.heads = getExtent(b, loc, q.getPacked(), 1, {});
  e.seqQ = getExtent(b, loc, q.getPacked(), 0, {});
  e.headsKV = getExtent(b, loc, k.getPacked(), 1, {v.getPacked().getType()});
  e.seqKV = getExtent(b, loc, k.getPacked(), 0, {v.getPacked().getType()});
  e.headDimV = cast<RankedTensorType>(v.getPacked().getType()).getDimSize(2);
  return e;
}

void FlashFormBuilder::hoistBatchReads(OnlineAttentionOp step,
                                       scf::ForOp loop) {
  auto hoist = [&](Region &r, unsigned batchArg) {
    if (r.empty())
      return;
    SmallVector<tensor::ExtractOp> reads;
    r.walk([&](tensor::ExtractOp x) {
      if (x.getIndices().size() == 1 &&
          x.getIndices()[0] == r.getArgument(batchArg) &&
          !r.isAncestor(x.getTensor().getParentRegion()))
        reads.push_back(x);
    });
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop);
    for (tensor::ExtractOp x : reads) {
      x.getResult().replaceAllUsesWith(readBatch(x.getTensor()));
      x.erase();
    }
  };
  hoist(step.getMask(), /*batchArg=*/0);
  hoist(step.getScore(), /*batchArg=*/1);
}

Value FlashFormBuilder::readBatch(Value tensor) {
  Value &v = batchReads[tensor];
  if (!v)
    v = tensor::ExtractOp::create(b, loc, tensor, ValueRange{batch});
  return v;
}

Value FlashFormBuilder::readBatchIndex(Value tensor) {
  Value &index = batchIndices[tensor];
  if (!index)
    index = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                         readBatch(tensor));
  return index;
}

Value FlashFormBuilder::raggedRows(RaggedViewOp view, OpFoldResult bound) {
  Value start = readBatchIndex(view.getStarts());
  Value end = readBatchIndex(view.getEnds());
  // Unsigned: a range is cut at the packed rows, ends before starts (or a
  // start past the rows) give an empty sequence.
  Value last = arith::MinUIOp::create(
      b, loc, end, getValueOrCreateConstantIndexOp(b, loc, bound));
  return arith::SubIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, last, start), start);
}

Value FlashFormBuilder::extractPackedTile(OpBuilder &nb, Value source,
                                          Value base, Value head,
                                          OpFoldResult start,
                                          OpFoldResult rows) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t cols = type.getDimSize(2);
  Value row = arith::AddIOp::create(
      nb, loc, base, getValueOrCreateConstantIndexOp(nb, loc, start));
  OpFoldResult unit = nb.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      nb, loc, getTileType(rows, cols, type.getElementType()), source,
      SmallVector<OpFoldResult>{row, head, nb.getIndexAttr(0)},
      SmallVector<OpFoldResult>{rows, unit, nb.getIndexAttr(cols)},
      SmallVector<OpFoldResult>(3, unit));
}
