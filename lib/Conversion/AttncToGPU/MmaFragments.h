//===- MmaFragments.h - Warp-level mma.sync fragment helpers ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-thread pieces of warp-level tensor-core math for the
// m16n8k16 shape: ldmatrix loads that produce A/B fragments, mma.sync with
// f32 accumulation for f16 and bf16, and reductions across the four threads
// ("quad") that share a row of an accumulator tile. Fragments are kept as
// individual SSA values (one 32-bit register each) so that the kernel
// builder can rearrange them freely, e.g. reuse an accumulator as an A
// operand, without vector shuffles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_MMAFRAGMENTS_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_MMAFRAGMENTS_H

#include "TileStrategy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <array>

namespace attnc::mma {

/// m16n8k16: the only tensor-core shape the kernels use.
constexpr int64_t kM = 16;
constexpr int64_t kN = 8;
constexpr int64_t kK = 16;
/// Threads per warp and per quad (threads sharing one accumulator row).
constexpr int64_t kWarpSize = 32;
constexpr int64_t kQuadSize = 4;

/// A operand (16x16, row-major): a0 (row g, k 2t..2t+1), a1 (row g+8),
/// a2 (row g, k+8), a3 (row g+8, k+8), each a vector<2xT>; g = lane/4,
/// t = lane%4 (PTX ISA, "mma.m16n8k16 fragment layout").
using FragA = std::array<mlir::Value, 4>;
/// B operand (16x8, "col"): b0 (k 2t..2t+1, col g), b1 (k+8), vector<2xT>.
using FragB = std::array<mlir::Value, 2>;
/// Accumulator (16x8 f32): c0,c1 (row g, cols 2t,2t+1), c2,c3 (row g+8).
using FragC = std::array<mlir::Value, 4>;

/// ldmatrix.x4 from `smem` at this thread's row address `indices`; returns
/// the four 8x8 matrices' per-thread registers (vector<2xT> each). Lanes
/// 8i..8i+7 supply the row addresses of matrix i.
std::array<mlir::Value, 4> loadMatrixX4(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::Value smem,
                                        mlir::ValueRange indices,
                                        bool transpose);

/// d = a * b + c on tensor cores (mma.sync.m16n8k16.row.col.f32.T.T.f32).
FragC mmaSync(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elemType,
              const FragA &a, const FragB &bFrag, const FragC &c);

/// Packs two f32 values into one vector<2xT> register (round to nearest).
mlir::Value packPair(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Type elemType, mlir::Value lo, mlir::Value hi);

/// Reduces `v` over the quad (lanes xor 1, xor 2) with max or add; every
/// lane of the quad gets the result.
enum class QuadReduction { Max, Add };
mlir::Value quadAllReduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                          QuadReduction kind);

/// Thread coordinates shared by the strategies and their layouts.
struct WarpCoords {
  mlir::Value lane, quadRow, quadCol; // lane, g = lane/4, t = lane%4
  mlir::Value warpRow0;               // first tile row of this warp
  /// With key-split warps: the first tile column (key) of this warp's part
  /// of each K/V tile, and whether this warp's part writes the rows (i1).
  /// Null: column 0, and every warp writes its rows.
  mlir::Value warpCol0, writesRows;
};

/// Accumulators of `slabs` 16-row slabs x `nTiles` n8 tiles per warp, in
/// the m16n8 layout: element (slab * nTiles + n) * 4 + i holds row
/// g + 8*(i/2) of the slab, column 8n + 2t + i%2; row slot slab * 2 + i/2.
/// mma.sync's accumulators have it, and so has a warp's quarter of a wgmma
/// m64nN accumulator (one slab, N/8 tiles, element i of the PTX order).
class AccumulatorTiles : public AccumulatorLayout {
public:
  AccumulatorTiles(int64_t slabs, int64_t nTiles, const WarpCoords &w)
      : slabs(slabs), nTiles(nTiles), w(w) {}
  int64_t numElements() const override { return slabs * nTiles * 4; }
  int64_t numRowSlots() const override { return slabs * 2; }
  int64_t rowSlot(int64_t e) const override {
    return (e / (nTiles * 4)) * 2 + (e % 4) / 2;
  }
  mlir::Value slotRow(mlir::OpBuilder &b, mlir::Location loc,
                      int64_t slot) const override;
  mlir::Value column(mlir::OpBuilder &b, mlir::Location loc,
                     int64_t e) const override;
  int64_t columnKey(int64_t e) const override {
    return ((e / 4) % nTiles) * 2 + e % 2;
  }
  mlir::Value rowBase(mlir::OpBuilder &b, mlir::Location loc) const override;
  mlir::Value columnBase(mlir::OpBuilder &b, mlir::Location loc) const override;
  int64_t slotRowOffset(int64_t slot) const override {
    return (slot / 2) * kM + 8 * (slot % 2);
  }
  int64_t columnOffset(int64_t e) const override {
    return ((e / 4) % nTiles) * kN + e % 2;
  }
  mlir::Value reduceRow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        RowReduction kind) const override;
  mlir::Value isRowLeader(mlir::OpBuilder &b,
                          mlir::Location loc) const override;
  /// The quad shares the Philox calls: thread t computes the words of the
  /// groups (n8 tiles) n = t mod 4 and the quad transposes them, thread t
  /// keeping word t of each (its columns 8n + 2t, 8n + 2t + 1): a quarter
  /// of the calls of one per thread and group. The transpose goes through
  /// `exchange` (4 stores and one 16-byte load per thread and 4 groups).
  llvm::SmallVector<mlir::Value>
  rowDraws(mlir::OpBuilder &b, mlir::Location loc, int64_t slot,
           GroupWords words, DrawExchange &exchange) const override;
  int64_t drawShift(int64_t k) const override { return 16 * (k % 2); }
  int64_t getNumTiles() const { return nTiles; }
  const WarpCoords &coords() const { return w; }

private:
  int64_t slabs, nTiles;
  const WarpCoords &w;
};

/// The global element index and the element count of one cp.async of
/// `elems` elements at (tile row `row`, column `col`) of `src`: rows at or
/// past `src.rowLimit` read 0 elements (zero fill) from row 0, an in-bounds
/// address.
std::pair<mlir::Value, mlir::Value>
clampedRowChunk(mlir::OpBuilder &b, mlir::Location loc, const GlobalTile &src,
                mlir::Value row, mlir::Value col, int64_t elems);

/// Column `col` of a shared-memory row whose index mod 8 is `rowKey`, in
/// rows swizzled by 16-byte chunk (`chunkElems` elements): the chunk moves
/// to chunk ^ rowKey.
mlir::Value swizzledColumn(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value col, mlir::Value rowKey,
                           int64_t chunkElems);

/// cp.async of `rows` rows of `cols` elements from `src.rowStart` into
/// `smem` (at [stage] when given), `elemsPerCopy` elements (16 bytes) per
/// copy, `threads` threads in whole passes over the tile; rows at or past
/// `src.rowLimit` are zero-filled (src-size 0) from a clamped, in-bounds
/// address. Appends the copies' tokens to `tokens`. With `swizzle`, chunk c
/// of row r lands at chunk c ^ (r mod 8) of its row (rows of whole
/// 128-byte lines).
void copyRowsAsync(mlir::OpBuilder &b, mlir::Location loc,
                   const GlobalTile &src, mlir::Value smem, mlir::Value stage,
                   int64_t rows, int64_t cols, int64_t elemsPerCopy,
                   int64_t threads, llvm::SmallVectorImpl<mlir::Value> &tokens,
                   bool swizzle = false);

/// Stores accumulators of `layout` (f32) rounded to `elemType`: each thread
/// its (cols 2t, 2t+1) pairs of rows g and g+8 as one 4-byte store, or as
/// two element stores with `elementWise` (O aligned to its element only);
/// rows past `o.rowLimit` are skipped.
void storeAccumulatorRows(mlir::OpBuilder &b, mlir::Location loc,
                          const AccumulatorTiles &layout,
                          llvm::ArrayRef<mlir::Value> acc, const GlobalTile &o,
                          mlir::Type elemType, bool elementWise = false);

} // namespace attnc::mma

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_MMAFRAGMENTS_H
