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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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

void FlashFormBuilder::hoistBlockReads(OnlineAttentionOp step,
                                       scf::ForOp loop) {
  auto hoist = [&](Region &r, unsigned batchArg) {
    if (r.empty())
      return;
    Value batchIn = r.getArgument(batchArg),
          headIn = r.getArgument(batchArg + 1);
    // Reads of a tensor from above at the batch, the head and constants.
    SmallVector<tensor::ExtractOp> reads;
    r.walk([&](tensor::ExtractOp x) {
      if (!r.isAncestor(x.getTensor().getParentRegion()) &&
          llvm::all_of(x.getIndices(), [&](Value i) {
            return i == batchIn || i == headIn || getConstantIntValue(i);
          }))
        reads.push_back(x);
    });
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop);
    for (tensor::ExtractOp x : reads) {
      x.getResult().replaceAllUsesWith(readBlock(
          x.getTensor(), blockCoords(x.getIndices(), batchIn, headIn)));
      x.erase();
    }
  };
  hoist(step.getMask(), /*batchArg=*/0);
  hoist(step.getScore(), /*batchArg=*/1);
}

std::array<OpFoldResult, 4>
FlashFormBuilder::boundByIds(std::array<OpFoldResult, 4> bounds) {
  auto [first, full, fullEnd, end] = bounds;
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  auto pair = AffineMap::get(2, 0, {d0, d1}, ctx);
  auto max = [&](OpFoldResult x, OpFoldResult y) {
    return affine::makeComposedFoldedAffineMax(b, loc, pair, {x, y});
  };
  auto min = [&](OpFoldResult x, OpFoldResult y) {
    return affine::makeComposedFoldedAffineMin(b, loc, pair, {x, y});
  };
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  Region &mask = op.getMask();
  // The read's indices but its position's, at the current batch and head.
  auto outer = [&](tensor::ExtractOp read, unsigned position) {
    SmallVector<Value> indices;
    for (auto [d, c] : llvm::enumerate(blockCoords(
             read.getIndices(), mask.getArgument(0), mask.getArgument(1))))
      if (d != position)
        indices.push_back(coordValue(c));
    return indices;
  };
  for (const IdMatch &m : interval->matches) {
    auto q = cast<tensor::ExtractOp>(m.queryRead);
    auto k = cast<tensor::ExtractOp>(m.keyRead);
    Type index = b.getIndexType();
    auto ids = IdTileBoundsOp::create(
        b, loc, index, index, index, index, q.getTensor(), outer(q, m.queryDim),
        value(qStart), value(qRows), k.getTensor(), outer(k, m.keyDim),
        value(seqKV), value(first), value(end), m.queryDim, m.keyDim,
        tiles.blockKV);
    first = ids.getVisitFirst();
    end = ids.getVisitEnd();
    full = min(max(full, ids.getFullFirst()), end);
    full = max(full, first);
    fullEnd = min(min(fullEnd, ids.getFullEnd()), end);
    fullEnd = max(fullEnd, full);
  }
  return {first, full, fullEnd, end};
}

Value FlashFormBuilder::readRegionBlock(tensor::ExtractOp read) {
  Region &mask = op.getMask();
  return readBlock(
      read.getTensor(),
      blockCoords(read.getIndices(), mask.getArgument(0), mask.getArgument(1)));
}

SmallVector<int64_t>
FlashFormBuilder::blockCoords(ValueRange indices, Value batchIn, Value headIn) {
  SmallVector<int64_t> coords;
  for (Value i : indices) {
    std::optional<int64_t> c = getConstantIntValue(i);
    coords.push_back(i == batchIn  ? kBatchCoord
                     : i == headIn ? kHeadCoord
                     : c           ? *c
                                   : kPositionCoord);
  }
  return coords;
}

Value FlashFormBuilder::coordValue(int64_t coord) {
  if (coord == kBatchCoord)
    return batch;
  if (coord == kHeadCoord)
    return head;
  return arith::ConstantIndexOp::create(b, loc, coord);
}

Value FlashFormBuilder::readBlock(Value tensor, ArrayRef<int64_t> coords) {
  for (auto &[t, c, v] : blockReads)
    if (t == tensor && ArrayRef(c) == coords)
      return v;
  SmallVector<Value> indices;
  for (int64_t c : coords)
    indices.push_back(coordValue(c));
  Value v = tensor::ExtractOp::create(b, loc, tensor, indices);
  blockReads.push_back({tensor, SmallVector<int64_t>(coords), v});
  return v;
}

Value FlashFormBuilder::readBatch(Value tensor) {
  return readBlock(tensor, {kBatchCoord});
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
