//===- FlashTiling.cpp - tiles and slices of the flash forms --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#include "FlashTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace attnc;

/// Extent `dim` of `source`, as a constant if `source` or any of `peers` (the
/// other operands or the result, which the verifier holds equal) has it
/// static, else as `tensor.dim` of `source`.
OpFoldResult attnc::tiling::getExtent(OpBuilder &b, Location loc, Value source,
                                      int64_t dim, ArrayRef<Type> peers) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (!sourceType.isDynamicDim(dim))
    return b.getIndexAttr(sourceType.getDimSize(dim));
  for (Type peer : peers) {
    auto peerType = cast<RankedTensorType>(peer);
    if (!peerType.isDynamicDim(dim))
      return b.getIndexAttr(peerType.getDimSize(dim));
  }
  return tensor::DimOp::create(b, loc, source, dim).getResult();
}

/// `min(block, total - start)`: the rows of the tile that begins at `start`.
/// The minimum folds away when `total` is static and every tile is full
/// (`total` a positive multiple of `block`), or when there is at most one
/// tile (`total <= block`, so `start` is 0); the tile type is then static
/// too. (An empty `total` has no tiles: a `block`-row slice of it would be
/// out of bounds even though it is never executed.)
OpFoldResult attnc::tiling::getTileStart(OpBuilder &b, Location loc, Value tile,
                                         int64_t block) {
  AffineExpr d0;
  bindDims(b.getContext(), d0);
  return affine::makeComposedFoldedAffineApply(b, loc, d0 * block, {tile});
}

OpFoldResult attnc::tiling::getTileExtent(OpBuilder &b, Location loc,
                                          OpFoldResult start, int64_t block,
                                          OpFoldResult total) {
  if (std::optional<int64_t> n = getConstantIntValue(total)) {
    if (*n > 0 && *n % block == 0)
      return b.getIndexAttr(block);
    if (*n <= block)
      return b.getIndexAttr(*n);
  }
  AffineExpr d0, s0;
  bindDims(b.getContext(), d0);
  bindSymbols(b.getContext(), s0);
  auto map = AffineMap::get(1, 1, {b.getAffineConstantExpr(block), s0 - d0},
                            b.getContext());
  return affine::makeComposedFoldedAffineMin(b, loc, map, {start, total});
}

/// `ceildiv(total, block)`: the number of tiles of `block` rows in `total`.
OpFoldResult attnc::tiling::getNumTiles(OpBuilder &b, Location loc,
                                        OpFoldResult total, int64_t block) {
  AffineExpr s0;
  bindSymbols(b.getContext(), s0);
  return affine::makeComposedFoldedAffineApply(b, loc, s0.ceilDiv(block),
                                               {total});
}

/// `[rows, cols]` with `rows` static where it folded to a constant.
RankedTensorType attnc::tiling::getTileType(OpFoldResult rows, int64_t cols,
                                            Type elementType) {
  int64_t staticRows = getConstantIntValue(rows).value_or(ShapedType::kDynamic);
  return RankedTensorType::get({staticRows, cols}, elementType);
}

/// The [rows, cols] tile of `source[batch, head]` starting at row `start`,
/// rank-reduced to 2-D: the operand shape `attnc.online_attention` takes.
Value attnc::tiling::extractTile(OpBuilder &b, Location loc, Value source,
                                 Value batch, Value head, OpFoldResult start,
                                 OpFoldResult rows) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t cols = sourceType.getDimSize(3);
  SmallVector<OpFoldResult> offsets = {batch, head, start, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, getTileType(rows, cols, sourceType.getElementType()), source,
      offsets, sizes, strides);
}

Value attnc::tiling::reshape(OpBuilder &b, Location loc, Value t,
                             ArrayRef<OpFoldResult> shape,
                             ArrayRef<ReassociationIndices> split,
                             ArrayRef<ReassociationIndices> merge,
                             RankedTensorType type) {
  SmallVector<Value> dynamic;
  SmallVector<int64_t> staticShape;
  dispatchIndexOpFoldResults(shape, dynamic, staticShape);
  auto expandedType = RankedTensorType::get(
      staticShape, cast<RankedTensorType>(t.getType()).getElementType());
  Value expanded =
      tensor::ExpandShapeOp::create(b, loc, expandedType, t, split, shape);
  if (type)
    return tensor::CollapseShapeOp::create(b, loc, type, expanded, merge);
  return tensor::CollapseShapeOp::create(b, loc, expanded, merge);
}

/// `tensor.empty` of `type`, its dynamic extents taken from `sizes`.
Value attnc::tiling::createEmpty(OpBuilder &b, Location loc,
                                 RankedTensorType type,
                                 ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  return tensor::EmptyOp::create(b, loc, type, dynamicSizes);
}

void attnc::tiling::insertTile(OpBuilder &b, Location loc, Value tile,
                               Value dest, OpFoldResult batch,
                               OpFoldResult head, OpFoldResult start,
                               OpFoldResult rows) {
  int64_t cols = cast<RankedTensorType>(dest.getType()).getDimSize(3);
  OpFoldResult unit = b.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      b, loc, tile, dest,
      SmallVector<OpFoldResult>{batch, head, start, b.getIndexAttr(0)},
      SmallVector<OpFoldResult>{unit, unit, rows, b.getIndexAttr(cols)},
      SmallVector<OpFoldResult>(4, unit));
}
