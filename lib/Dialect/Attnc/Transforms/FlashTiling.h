//===- FlashTiling.h - tiles and slices of the flash forms ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The index arithmetic and slices that the forward (OnlineSoftmax.cpp) and
// the backward (OnlineSoftmaxBackward.cpp) flash forms share: extents that
// fold to constants where shapes are static, tile extents and counts, tile
// slices rank-reduced to 2-D.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHTILING_H
#define ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHTILING_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace attnc::tiling {

using namespace mlir;

/// Extent `dim` of `source`: a constant when it or one of `peers` has it
/// static, else a `tensor.dim`.
OpFoldResult getExtent(OpBuilder &b, Location loc, Value source, int64_t dim,
                       ArrayRef<Type> peers = {});
/// `tile * block`, the first row of tile `tile` (an affine.apply, folded
/// where `tile` is a constant).
OpFoldResult getTileStart(OpBuilder &b, Location loc, Value tile,
                          int64_t block);
/// `min(block, total - start)`, folded where the shapes allow.
OpFoldResult getTileExtent(OpBuilder &b, Location loc, OpFoldResult start,
                           int64_t block, OpFoldResult total);
/// `ceildiv(total, block)`.
OpFoldResult getNumTiles(OpBuilder &b, Location loc, OpFoldResult total,
                         int64_t block);
/// `[rows, cols]`, `rows` static where it folded to a constant.
RankedTensorType getTileType(OpFoldResult rows, int64_t cols, Type elementType);
/// The `[rows, d]` tile of `source[batch, head]` from row `start`.
Value extractTile(OpBuilder &b, Location loc, Value source, Value batch,
                  Value head, OpFoldResult start, OpFoldResult rows);
/// `tensor.parallel_insert_slice` of the `[rows, d]` tile into
/// `dest[batch, head]` from row `start`: extractTile's inverse, in a
/// forall's terminator.
void insertTile(OpBuilder &b, Location loc, Value tile, Value dest,
                OpFoldResult batch, OpFoldResult head, OpFoldResult start,
                OpFoldResult rows);
/// `t` expanded to `shape` by tensor.expand_shape (`split`), then collapsed
/// by tensor.collapse_shape (`merge`), to `type` if given: the views that
/// pack and unpack GQA rows.
Value reshape(OpBuilder &b, Location loc, Value t, ArrayRef<OpFoldResult> shape,
              ArrayRef<ReassociationIndices> split,
              ArrayRef<ReassociationIndices> merge, RankedTensorType type = {});
/// `tensor.empty` of `type` with its dynamic extents from `sizes`.
Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> sizes);

} // namespace attnc::tiling

#endif // ATTNC_LIB_DIALECT_ATTNC_TRANSFORMS_FLASHTILING_H
