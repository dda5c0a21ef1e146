//===- FlashKernelValues.cpp - the flash form's values in the kernel ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Index values of the flash form (tile starts, loop bounds, GQA head maps)
// are rebuilt in the kernel from the block indices and the size parameters
// by cloning the computation that defines them; mask and score regions are
// cloned per score element; tile addresses come from the slices' offsets.
// What cannot be rebuilt is refused with a diagnostic naming the op.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include <functional>

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

//===----------------------------------------------------------------------===//
// Kernel values
//===----------------------------------------------------------------------===//

/// The kernel values of the flash form's leaves: the run-time scale is its
/// parameter and batch, head and sequence extents of Q, K and V their size
/// parameters (or constants). Anything else is not a leaf (null).
FailureOr<Value> FlashKernelBuilder::leafValue(Value v) {
  if (v == form.runtimeScale)
    return param(runtimeScaleParam(v).name);
  if (form.dropout > 0.0 && isa<BlockArgument>(v) &&
      (v == form.dropoutSeed || v == form.dropoutOffset))
    return param(dropoutParam(v).name);
  if (v.getDefiningOp<KVSplitCountOp>() && isPartial())
    return paramIndexValue(kSplitSymbol);
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return Value();
  std::optional<int64_t> index = dim.getConstantIndex();
  bool blockTensor = form.blockTensorOf(dim.getSource());
  if (!index ||
      (!blockTensor && !llvm::is_contained({form.query, form.key, form.value,
                                            form.packedSource},
                                           dim.getSource())) ||
      *index > (blockTensor   ? 0
                : form.ragged ? 1
                              : 2))
    return dim.emitOpError("reads an extent the kernel has no parameter "
                           "for; only batch, head and sequence extents of "
                           "Q, K and V (and a ragged batch's sequence "
                           "count) are");
  return extentOf(dim.getSource(), *index);
}

Value FlashKernelBuilder::pagedExtent(int64_t dim) {
  auto table = cast<RankedTensorType>(form.keyPages.getBlockTable().getType());
  auto pool = cast<RankedTensorType>(form.keyPages.getPool().getType());
  if (dim == 0)
    return extentOrParam(table, 0, kTableSymbols[0]);
  if (dim == 1)
    return extentOrParam(pool, 2, kPoolSymbols[2]);
  return arith::MulIOp::create(
      b, loc, extentOrParam(table, 1, kTableSymbols[1]),
      arith::ConstantIndexOp::create(b, loc, form.keyPages.getPageSize()));
}

void FlashKernelBuilder::pageRows(GlobalTile &tile, StringRef tensor,
                                  Value batch) {
  if (!form.keyPages || (tensor != "k" && tensor != "v"))
    return;
  std::string t = tensor.str();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto table = cast<RankedTensorType>(form.keyPages.getBlockTable().getType());
  auto pool = cast<RankedTensorType>(form.keyPages.getPool().getType());
  tile.pageSize = form.keyPages.getPageSize();
  tile.rowStride = paramIndexValue(t + ".stride1");
  tile.pageStride = paramIndexValue(t + ".stride0");
  tile.pageTable = globalMem.lookup("block_table");
  tile.tableRow = arith::MulIOp::create(b, loc, batch,
                                        paramIndexValue("block_table.stride0"));
  tile.tableStride = paramIndexValue("block_table.stride1");
  tile.lastEntry = arith::SubIOp::create(
      b, loc, extentOrParam(table, 1, kTableSymbols[1]), idx(1));
  tile.lastPage = arith::SubIOp::create(
      b, loc, extentOrParam(pool, 0, kPoolSymbols[0]), idx(1));
  // A tile starts at a multiple of block_kv: when pages hold whole tiles,
  // all its rows are in the page of its first.
  if (tile.pageSize % form.config.getBlockKV() == 0)
    tile.tilePage = pageOffset(b, loc, tile, tile.rowStart);
}

/// The (batch, head) matrix and first row a slice reads or an insert writes.
FailureOr<GlobalTile> FlashKernelBuilder::tileOf(tensor::ExtractSliceOp slice,
                                                 StringRef tensor,
                                                 IRMapping &scope) {
  std::string t = tensor.str();
  GlobalTile g;
  g.mem = globalMem.lookup(tensor);
  // A ragged batch's packed rows: row r of the tile is packed row
  // offsets[0] + r, rows a stride0 apart.
  g.rowStride = paramIndexValue(t + (form.ragged ? ".stride0" : ".stride2"));
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  FailureOr<Value> row = materialize(offsets[form.ragged ? 0 : 2], scope);
  if (failed(row))
    return failure();
  g.rowStart = *row;
  // The (batch, head) matrix of a K/V slice does not change from tile to
  // tile: it is computed once, in the prologue (see emitBody), and not in
  // the loop's conditional prefetch, where LLVM may not hoist the GQA head
  // division out.
  auto it = invariantMatrices.find(slice);
  FailureOr<Matrix> m = it != invariantMatrices.end()
                            ? FailureOr<Matrix>(it->second)
                            : matrixOf(slice, tensor, scope);
  if (failed(m))
    return failure();
  g.base = m->base;
  if (tensor == "q")
    packRows(g, "q.stride1");
  pageRows(g, tensor, m->batch);
  if (strategy->tensorMapRows(tensor) > 0) {
    g.map = param(t + ".map");
    g.batch = m->batch;
    g.head = m->head;
  }
  return g;
}

FailureOr<FlashKernelBuilder::Matrix>
FlashKernelBuilder::matrixOf(OffsetSizeAndStrideOpInterface slice,
                             StringRef tensor, IRMapping &scope) {
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  // A ragged batch's packed [T, H, d]: the head is the matrix, its rows the
  // sequence's packed rows.
  if (form.ragged) {
    FailureOr<Value> head = materialize(offsets[1], scope);
    if (failed(head))
      return failure();
    return Matrix{
        arith::MulIOp::create(b, loc, *head,
                              paramIndexValue(tensor.str() + ".stride1")),
        Value(), *head};
  }
  FailureOr<Value> batch = materialize(offsets[0], scope);
  FailureOr<Value> head = materialize(offsets[1], scope);
  if (failed(batch) || failed(head))
    return failure();
  // A packed form's K/V head hkv holds query heads hkv * G onwards.
  if (form.packedSource && (tensor == "q" || tensor == "o"))
    head = arith::MulIOp::create(b, loc, *head, groupSize()).getResult();
  std::string t = tensor.str();
  // A paged cache's pool is [page, row, head, d]: the head is an offset
  // within each page, the batch picks pages through the table.
  if (form.keyPages && (tensor == "k" || tensor == "v"))
    return Matrix{
        arith::MulIOp::create(b, loc, *head, paramIndexValue(t + ".stride2")),
        *batch, *head};
  Value base = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, *batch, paramIndexValue(t + ".stride0")),
      arith::MulIOp::create(b, loc, *head, paramIndexValue(t + ".stride1")));
  return Matrix{base, *batch, *head};
}

Value FlashKernelBuilder::loadElement(const BlockTensor &bt,
                                      ArrayRef<Value> indices) {
  return flash_reads::loadElement(
      b, loc, bt, globalMem[bt.name], indices,
      [&](const std::string &n) { return paramIndexValue(n); }, seqQ,
      extentOf(form.key, 2));
}
