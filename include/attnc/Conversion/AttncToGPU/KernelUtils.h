//===- KernelUtils.h - helpers shared by the kernel builders ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H
#define ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H

#include "attnc/Conversion/KernelABI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <optional>
#include <string>

namespace attnc {

/// The manifest's name of an element or scalar type (docs/abi.md):
/// bf16, f16, f32, f64, i1, i8, i32, i64; "" when it has none.
std::string mlirTypeToDType(mlir::Type type);

/// Element types the kernels read and write: bf16, f16, f32.
bool isSupportedDType(mlir::Type type);

/// Wraps a bare global pointer (a kernel parameter) into memref<?xT, 1> by
/// building the LLVM memref descriptor; reconcile-unrealized-casts folds the
/// cast away once memref ops are lowered, so the kernel keeps its plain
/// pointer parameter and its body can use memref and vector ops.
mlir::Value wrapGlobalPointer(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value ptr, mlir::Type elemType);

/// The kernel's dynamic shared memory as bytes, memref<?xi8, workgroup>:
/// what the strategies and the block-wide reductions take views of.
/// (gpu.dynamic_shared_memory lowers to a one-byte `.shared` variable
/// whose address is the array's base: that byte is static shared memory,
/// which counts against a block's limit with the dynamic bytes; an H100
/// refused 232448 dynamic bytes, sm_90a's whole 227 KiB, and ran 232440.)
mlir::Value dynamicSharedBytes(mlir::OpBuilder &b, mlir::Location loc);
inline constexpr int64_t kStaticSharedBytes = 1;

/// The most dynamic shared memory a block of `chip` may ask for: its
/// opt-in limit per block less kStaticSharedBytes; none for a chip without
/// a description (left to the driver at launch).
std::optional<int64_t> dynamicSharedMemoryLimit(llvm::StringRef chip);

/// `v` (an index) through an opaque, side-effecting register move: LLVM
/// can neither merge the result with other computations of the same value
/// nor recompute it from its operands, nor hoist what is built on it out of
/// a loop. Used to shape live ranges where LLVM's choices cost registers in
/// a kernel's hot loop.
mlir::Value opaqueIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
/// The same for an i32 value.
mlir::Value opaqueI32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// `n / d` and `n mod d` (indices) of a pipeline counter `n` by a constant
/// `d`, computed in 32 bits: `n` counts a CTA's K/V tiles or steps, far
/// below 2^32. In 64 bits a stage count of 3 costs a multiply-high and its
/// carries at every use, on the path between a step's MMAs.
std::pair<mlir::Value, mlir::Value>
ringDivRem(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n, int64_t d);

/// The scalar parameter of a kernel's run-time softmax scale: named by the
/// function argument's `attnc.name`, else "scale".
ABIParam runtimeScaleParam(mlir::Value runtimeScale);
/// The scalar parameter of function argument `v` (f32 or i64) that a
/// kernel reads: named by its `attnc.name`, else `fallback`.
ABIParam scalarArgumentParam(mlir::Value v, llvm::StringRef fallback);

/// Philox-4x32-10 (Salmon et al., SC'11) of the 64-bit counter (c0 low,
/// c1 high word; the upper counter words 0) under the 64-bit key (k0, k1):
/// the four 32-bit words of attnc.dropout's draws. i32 values.
llvm::SmallVector<mlir::Value, 4> philox4x32(mlir::OpBuilder &b,
                                             mlir::Location loc, mlir::Value c0,
                                             mlir::Value c1, mlir::Value k0,
                                             mlir::Value k1);
/// The low and high 32-bit words of an i64 value.
std::pair<mlir::Value, mlir::Value> splitI64(mlir::OpBuilder &b,
                                             mlir::Location loc, mlir::Value v);

/// Checks that mask or score region `r`, which a kernel evaluates per score
/// by cloning its body, holds only arith and math ops and the reads
/// `lowered` accepts (the tensor.extract ops a kernel loads per score);
/// refuses anything else once, naming the op.
mlir::LogicalResult
checkPerScoreOps(mlir::Region &r,
                 llvm::function_ref<bool(mlir::Operation *)> lowered);

/// The name the source program gives function argument `arg`: its
/// `attnc.name`, else `fallback` (or "arg<N>" when `fallback` is empty).
/// MLIR keeps no SSA names: the attribute is how the source's names reach
/// the manifest.
std::string sourceArgumentName(mlir::BlockArgument arg,
                               llvm::StringRef fallback = "");

/// `x` as a `tensor.dim` of one of `tensors` at a constant index <= 2 (a
/// batch, head or sequence extent, which a kernel has a size parameter
/// for), else null.
mlir::Operation *sizeDimOf(mlir::Value x, llvm::ArrayRef<mlir::Value> tensors);

/// The contract's shape of dimensions `dims` of `tensor`: each static size,
/// or the symbol `symbolOf(dim)` names for a dynamic one.
std::vector<ABIDim>
abiShapeOf(mlir::Value tensor, llvm::ArrayRef<int64_t> dims,
           llvm::function_ref<std::string(int64_t)> symbolOf);

/// A kernel `name` whose parameters are `abi`'s (pointers to global memory
/// for tensors and workspaces, generic pointers for tensor maps, f32 and
/// i64 scalars), `threads` per block, built at `b`'s insertion point; `b`
/// is left at the start of its body.
mlir::gpu::GPUFuncOp createKernelFunc(mlir::OpBuilder &b, mlir::Location loc,
                                      llvm::StringRef name,
                                      const KernelABI &abi, int32_t threads);

/// What a mask region holds, for the contract's `mask` attribute: "none"
/// (empty), "causal" (top-left), "causal_bottom_right" or "custom"; and the
/// kind of a kernel whose steps have kinds `a` and `b`.
std::string maskKindOf(mlir::Region &mask);
std::string joinMaskKinds(llvm::StringRef a, llvm::StringRef b);

/// The host's rule for grid extent `extent` of a flash form's forall: a
/// constant, a size symbol (`symbolOfDim` names the extents the host
/// knows, null for others), or ceildiv of one. Emits a diagnostic and fails
/// on anything else.
mlir::FailureOr<GridFactor> gridFactorOf(
    mlir::OpFoldResult extent,
    llvm::function_ref<std::optional<std::string>(mlir::Value)> symbolOfDim);

/// Puts each dimension of flash-form `forall` on the grid dimension its
/// mapping names (`grid`, with 1 on unused ones) and records it in
/// `gridDims`; the dimensions must map to distinct blocks and count from 0
/// in steps of 1.
mlir::LogicalResult
planForallGrid(mlir::scf::ForallOp forall,
               llvm::function_ref<
                   mlir::FailureOr<std::vector<GridFactor>>(mlir::OpFoldResult)>
                   factors,
               std::vector<GridFactor> (&grid)[3],
               llvm::SmallVectorImpl<unsigned> &gridDims);

/// The workspace a persistent kernel draws its tiles from (every forward
/// one; the backward's on a longest-first grid): one u32, zeroed before
/// every launch (docs/abi.md).
inline constexpr const char *kTileCounterName = "tile_counter";

/// The kTileCounterName workspace parameter: 4 bytes, zeroed before every
/// launch (a CUDA graph records the zeroing with the launch).
ABIParam tileCounterParam();

/// The next work tile of a persistent grid of `ctas` CTAs (index) that
/// draws its tiles from the kTileCounterName workspace `counter`: each CTA
/// first takes its own index, so draw n is tile #CTAs + n.
mlir::Value drawWorkTile(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value counter, mlir::Value ctas);

/// Block (bx, by) of a grid that runs longest first (`heads` units on x,
/// tiles counted down on y): where the `kvHeads` K/V heads of a batch take
/// more than `mib` MiB at `headBytes` each (index values), the (head, tile)
/// of its position in groups of heads whose bytes fit that (whole GQA
/// groups: `heads` is a multiple of `kvHeads`; groups as equal as they can
/// be, the last perhaps narrower), each group longest first; (bx, by)
/// otherwise. The blocks that run together then share the rows of a few
/// heads, which stay in L2.
std::pair<mlir::Value, mlir::Value>
groupedBlockTile(mlir::OpBuilder &b, mlir::Location loc, int64_t mib,
                 mlir::Value heads, mlir::Value kvHeads, mlir::Value headBytes,
                 mlir::Value bx, mlir::Value by);

/// The operands of groupedBlockTile besides the block indices: the units
/// on x, the K/V heads and each K/V head's bytes.
struct HeadGroupOperands {
  mlir::Value heads, kvHeads, headBytes;
};

/// Maps the forall induction variables `ivs` of a one-block-per-tile grid
/// (`ivs[i]` on grid dimension `gridDims[i]`) in `scope` to the block
/// indices; with `mib` > 0 (a longest-first grid: batch on z, heads on x,
/// tiles on y) the head and tile through groupedBlockTile, whose operands
/// `groupOperands` builds after the block indices.
void mapGroupedBlockIndices(
    mlir::OpBuilder &b, mlir::Location loc, int64_t mib, mlir::ValueRange ivs,
    llvm::ArrayRef<unsigned> gridDims, mlir::IRMapping &scope,
    llvm::function_ref<HeadGroupOperands()> groupOperands);

/// Maps the forall induction variables `ivs` (`ivs[i]` on grid dimension
/// `gridDims[i]`, of extent `extents[i]`) in `scope` to work tile `t` of a
/// persistent grid's linearised tiles: the dimensions in `order`, the first
/// fastest.
void mapPersistentWorkTile(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value t, llvm::ArrayRef<unsigned> order,
                           llvm::ArrayRef<unsigned> gridDims,
                           mlir::ValueRange ivs,
                           llvm::ArrayRef<mlir::Value> extents,
                           mlir::IRMapping &scope);

} // namespace attnc

#endif // ATTNC_CONVERSION_ATTNCTOGPU_KERNELUTILS_H
