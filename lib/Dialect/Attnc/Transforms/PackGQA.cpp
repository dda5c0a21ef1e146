//===- PackGQA.cpp - --attnc-pack-gqa -------------------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Grouped-query attention with few query rows (decoding) leaves a query
// tile mostly empty and reads each K/V head once per query head of its
// group. Packing views Q [B, H, Sq, d] as [B, Hkv, G * Sq, d] (G = H / Hkv,
// packed row r = g * Sq + i is query head hkv * G + g at position i), runs
// the attention per K/V head on those rows, and views the result back: the
// G * Sq rows of a group share one tile and each K/V byte is read once.
// The mask and score regions see the packed coordinates and turn them back
// into (head, position) first, so they mean what they meant.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"

#include "FlashTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNCPACKGQA
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {

/// [B, H, S, x] -> [B, Hkv, G * S, x] through [B, Hkv, G, S, x].
Value pack(OpBuilder &b, Location loc, Value t, OpFoldResult heads,
           OpFoldResult group) {
  auto type = cast<RankedTensorType>(t.getType());
  return tiling::reshape(b, loc, t,
                         {tiling::getExtent(b, loc, t, 0), heads, group,
                          tiling::getExtent(b, loc, t, 2),
                          b.getIndexAttr(type.getDimSize(3))},
                         {{0}, {1, 2}, {3}, {4}}, {{0}, {1}, {2, 3}, {4}});
}

/// The inverse of pack: [B, Hkv, G * S, x] -> [B, H, S, x] as `type`.
Value unpack(OpBuilder &b, Location loc, Value t, RankedTensorType type,
             OpFoldResult batch, OpFoldResult kvHeads, OpFoldResult group,
             OpFoldResult rows) {
  return tiling::reshape(
      b, loc, t,
      {batch, kvHeads, group, rows, b.getIndexAttr(type.getDimSize(3))},
      {{0}, {1}, {2, 3}, {4}}, {{0}, {1, 2}, {3}, {4}}, type);
}

/// Region `from` moved into `to` with its (b, h, i, j) block arguments
/// replaced by the packed coordinates (b, hkv, r, j):
/// h = hkv * G + r floordiv S, i = r mod S. `lead` arguments (the score)
/// come first and stay.
void remapRegion(OpBuilder &b, Location loc, Region &from, Region &to,
                 unsigned lead, Value group, Value rows) {
  if (from.empty())
    return;
  Block &old = from.front();
  Block *block = new Block();
  to.push_back(block);
  for (BlockArgument a : old.getArguments())
    block->addArgument(a.getType(), a.getLoc());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  Value kvHead = block->getArgument(lead + 1);
  Value row = block->getArgument(lead + 2);
  Value first = arith::MulIOp::create(b, loc, kvHead, group);
  Value member = arith::DivUIOp::create(b, loc, row, rows);
  Value head = arith::AddIOp::create(b, loc, first, member);
  Value pos = arith::RemUIOp::create(b, loc, row, rows);
  IRMapping map;
  for (unsigned i = 0; i < old.getNumArguments(); ++i)
    map.map(old.getArgument(i), block->getArgument(i));
  map.map(old.getArgument(lead + 1), head);
  map.map(old.getArgument(lead + 2), pos);
  for (Operation &op : old)
    b.clone(op, map);
}

/// True when `region` reads a tensor from above at its head or position
/// arguments (from number `headArg` on: h, i, j).
bool readsAtHeadOrPosition(Region &region, unsigned headArg) {
  if (region.empty())
    return false;
  WalkResult r = region.walk([&](tensor::ExtractOp x) {
    for (unsigned k = headArg; k < region.getNumArguments(); ++k)
      if (llvm::is_contained(x.getIndices(), region.getArgument(k)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

struct AttncPackGQAPass : attnc::impl::AttncPackGQABase<AttncPackGQAPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      packOne(op);
  }

  void packOne(AttentionOp op) {
    auto qType = cast<RankedTensorType>(op.getQuery().getType());
    auto kType = cast<RankedTensorType>(op.getKey().getType());
    // Packing needs the group size at compile time (a model's head counts
    // are): the packed tiles are then a whole number of query rows' worth
    // of groups. Nothing to share without groups.
    // (A ragged batch's rows are addressed per sequence, not packed.)
    if (op.getQuery().getDefiningOp<RaggedViewOp>() ||
        op.getKey().getDefiningOp<RaggedViewOp>())
      return;
    // Dropout's counters number the probabilities' rows per query head: a
    // packed tile's rows are not consecutive ones.
    if (op.hasDropout())
      return;
    // A region's read at the query head (an ALiBi slope per head) stays
    // one read per block only while the blocks are query heads; packed,
    // the head changes from row to row (and a read per query position
    // would read at the packed row's position).
    if (readsAtHeadOrPosition(op.getMask(), 1) ||
        readsAtHeadOrPosition(op.getScore(), 2))
      return;
    if (op.getQuery() == op.getKey())
      return;
    // Run-time heads pack with the group size the option promises; the
    // kernels then require H = G * Hkv.
    int64_t groupSize = this->groupSize;
    if (!qType.isDynamicDim(1) && !kType.isDynamicDim(1))
      groupSize = qType.getDimSize(1) / kType.getDimSize(1);
    else if (!qType.isDynamicDim(1) || !kType.isDynamicDim(1))
      return;
    if (groupSize <= 1)
      return;
    if (blockQ > 0 && blockQ % groupSize != 0 && groupSize % blockQ != 0)
      return;
    // Packed rows beyond what one decode tile holds gain nothing.
    if (!qType.isDynamicDim(2) && qType.getDimSize(2) > maxRows)
      return;
    OpBuilder b(op);
    Location loc = op.getLoc();
    OpFoldResult kvHeads = tiling::getExtent(b, loc, op.getKey(), 1);
    Value group = arith::ConstantIndexOp::create(b, loc, groupSize);
    OpFoldResult groupFold = b.getIndexAttr(groupSize);
    OpFoldResult rows = tiling::getExtent(b, loc, op.getQuery(), 2);
    Value packedQ = pack(b, loc, op.getQuery(), kvHeads, groupFold);
    auto packedType = cast<RankedTensorType>(packedQ.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto packedResult = RankedTensorType::get(
        {packedType.getDimSize(0), packedType.getDimSize(1),
         packedType.getDimSize(2), resultType.getDimSize(3)},
        resultType.getElementType());
    // (Before the op: its regions read it.)
    Value rowsValue = getValueOrCreateConstantIndexOp(b, loc, rows);
    auto packed = AttentionOp::create(
        b, loc, packedResult, packedQ, op.getKey(), op.getValue(),
        op.getRuntimeScale(), op.getKvLengths(),
        /*dropout_seed=*/Value(),
        /*dropout_offset=*/Value(), op.getScaleAttr(),
        /*dropout_probability=*/FloatAttr(), op.getConfigAttr());
    remapRegion(b, loc, op.getMask(), packed.getMask(), 0, group, rowsValue);
    remapRegion(b, loc, op.getScore(), packed.getScore(), 1, group, rowsValue);
    Value result = unpack(b, loc, packed.getResult(), resultType,
                          tiling::getExtent(b, loc, op.getQuery(), 0), kvHeads,
                          groupFold, rows);
    op.replaceAllUsesWith(result);
    op.erase();
  }
};

} // namespace
