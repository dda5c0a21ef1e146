//===- FlashForm.h - the flash form as the back-end reads it ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The parts of a flash form (--attnc-online-softmax's output, or one
// written by hand) that the kernel builder lowers: the parallel loop and its
// grid mapping, the query slice, the chain of K/V loops with their steps and
// slices, the finalize and the two parallel inserts. analyzeFlashForm
// accepts exactly the forms it can lower and names the op and the rule
// otherwise: nothing in the loop nest is ignored.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHFORM_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHFORM_H

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace attnc {

/// The contract's name of each dimension of Q, K and V (and dO): [B, H, Sq,
/// d], [B, Hkv, Skv, d], [B, Hkv, Skv, dv]; the forward, backward and
/// versioned kernels' contracts all use them.
inline constexpr const char *kQuerySymbols[] = {"B", "H", "Sq"};
inline constexpr const char *kKeySymbols[] = {"B", "Hkv", "Skv"};

/// One K/V loop: `scf.for %j = lb to ub step 1` whose body is one
/// `attnc.online_attention` over K/V tiles starting at row j * block_kv.
struct FlashKVLoop {
  mlir::scf::ForOp loop;
  OnlineAttentionOp step;
  mlir::tensor::ExtractSliceOp key, value;
  /// The K/V slice may be shorter than block_kv (a tail tile): then its
  /// extent is min(block_kv, Skv - kv_start).
  bool mayBePartial = false;
  /// Iteration j reads K/V tile j. Otherwise j counts visits and the tile
  /// is an index computation of j in the loop's body (masked tiles of both
  /// sides of an interval in one loop): kernels then derive nothing about
  /// a tile from j but through the slices.
  bool tileIsIteration = true;
  /// The loop starts where the previous one ends and slices its tiles by
  /// the same computation of the iteration: one load pipeline runs through
  /// both.
  bool continuesPrevious = false;
};

/// A tensor defined above the flash form (a kernel parameter: i32, i64 or
/// f32) that the kernel reads one element of per block or per score.
struct BlockTensor {
  mlir::Value tensor;
  /// The kernel parameter's name.
  std::string name;
  /// Per dimension, what every read indexes it by: kBatchCoord, kHeadCoord
  /// (the block's query head), kRowCoord / kColCoord (a score's query / key
  /// position: a read per score), kPositionCoord (the query position in
  /// some reads, the key position in others: one ids tensor of a
  /// self-attention, whose Sq and Skv must then be equal), or a constant
  /// (>= 0) within a static extent.
  llvm::SmallVector<int64_t> coords;
  static constexpr int64_t kBatchCoord = -1, kHeadCoord = -2, kRowCoord = -3,
                           kColCoord = -4, kPositionCoord = -5;
  static bool isPosition(int64_t coord) {
    return coord == kRowCoord || coord == kColCoord || coord == kPositionCoord;
  }
  /// True when a dimension indexed by both positions needs Sq = Skv.
  bool readsBothPositions() const {
    return llvm::is_contained(coords, kPositionCoord);
  }

  /// The extent coordinate `coord` runs over: dimension `dim` of the keys
  /// (`ofKeys`: their positions) or of the queries ([B, H, Sq]); nullopt
  /// for a constant.
  struct Extent {
    bool ofKeys;
    int64_t dim;
  };
  /// The bytes of one element, which the kernel's loads assume its address
  /// is aligned to (i64 ids in one load, not two).
  int64_t elementBytes() const {
    return llvm::cast<mlir::RankedTensorType>(tensor.getType())
               .getElementTypeBitWidth() /
           8;
  }
  static std::optional<Extent> extentOf(int64_t coord) {
    switch (coord) {
    case kBatchCoord:
      return Extent{false, 0};
    case kHeadCoord:
      return Extent{false, 1};
    case kRowCoord:
    case kPositionCoord:
      return Extent{false, 2};
    case kColCoord:
      return Extent{true, 2};
    default:
      return std::nullopt;
    }
  }
};

/// The entry of `tensor` in `tensors`, or null.
const BlockTensor *findBlockTensor(llvm::ArrayRef<BlockTensor> tensors,
                                   mlir::Value tensor);

struct FlashForm {
  mlir::scf::ForallOp forall;
  FlashConfigAttr config;
  /// The whole Q, K and V tensors (defined above the forall).
  mlir::Value query, key, value;
  mlir::tensor::ExtractSliceOp querySlice;
  /// In execution order; the recurrence flows from one to the next.
  llvm::SmallVector<FlashKVLoop> loops;
  OnlineAttentionFinalizeOp finalize;
  mlir::tensor::ParallelInsertSliceOp outInsert;
  /// Null when nothing reads the logsumexp (canonicalization drops the
  /// forall's second output); the kernel still writes it, for the rows of
  /// O: the contract of every attention kernel includes the logsumexp, which
  /// a backward pass needs.
  mlir::tensor::ParallelInsertSliceOp lseInsert;
  /// Split-KV partial forms (--attnc-split-kv): the split index the inserts
  /// write at (their first offset); O and the logsumexp are then f32
  /// partials [splits, B, H, Sq(, dv)]. Null otherwise.
  mlir::OpFoldResult splitIndex;
  /// Packed GQA forms (--attnc-pack-gqa): the [B, H, Sq, d] query that
  /// `query` views as [B, Hkv, G * Sq, d]; O and the logsumexp are written
  /// through the same packing (their results are read only through the
  /// views that unpack them). Null otherwise.
  mlir::Value packedSource;
  /// Packed GQA forms: G, the query heads of a K/V group (the packed view's
  /// static group extent; the kernels require H = G * Hkv).
  int64_t packedGroup = 0;
  /// Per-sequence K/V lengths (attnc.attention's kv_lengths): the i32
  /// tensor [B] defined above the forall (read once per block: one of the
  /// blockReads). `seqKV` below is the keys the batch attends to,
  /// min(length, Skv), which bound every K/V loop and tail tile. Null
  /// without lengths (the keys are then Skv).
  mlir::Value kvLengths;
  /// A paged cache (attnc.paged_kv views of K and V, one block table and
  /// page size): the kernel reads the pools through the table. Null for
  /// contiguous K/V.
  PagedKVOp keyPages, valuePages;
  mlir::Value seqKV;
  /// A ragged batch (--attnc-online-softmax of attnc.ragged_view Q, K, V):
  /// Q, K, V and O are the packed [T, H, d] rows and the logsumexp [T, H];
  /// each tile starts at its sequence's first row (qRowBase, kvRowBase:
  /// values of the forall body) plus its position.
  bool ragged = false;
  mlir::Value qRowBase, kvRowBase;
  /// The tensors the kernel reads one element of per block (the K/V
  /// lengths, a ragged batch's starts and ends, what mask and score regions
  /// read per sequence or head: an ALiBi slope), and the reads
  /// (tensor.extract at the block's coordinates).
  llvm::SmallVector<BlockTensor> blockTensors;
  llvm::SmallVector<mlir::tensor::ExtractOp> blockReads;
  /// Reads left in the steps' mask and score regions, of a value per query
  /// or key position (a document id): the kernel loads them per score.
  llvm::SmallVector<mlir::tensor::ExtractOp> elementReads;
  /// Tile bounds from ids per position (document masks), computed by the
  /// whole block before its K/V loops.
  llvm::SmallVector<IdTileBoundsOp> idBounds;
  /// The entry of `tensor` in blockTensors, or null.
  const BlockTensor *blockTensorOf(mlir::Value tensor) const;
  int64_t headDim;
  mlir::Type elementType;
  /// Shared by every step (the softmax domain must not change mid-row).
  double scale;
  mlir::Value runtimeScale;
  bool modified;
  /// Dropout of the probabilities (every step's, one mask): its
  /// probability (0: none), seed and offset (i64 function arguments or
  /// constants) and the steps' `rows` operands.
  double dropout = 0.0;
  mlir::Value dropoutSeed, dropoutOffset, dropoutRow, dropoutRowWords;
};

/// Puts steps of the recurrence that canonicalization took out of their K/V
/// loop (a loop of one iteration, from static shapes) back into a loop of
/// one iteration, so that the back-end reads one shape of flash form.
/// Fails with a diagnostic on a step it cannot place.
mlir::LogicalResult rerollFlashForm(mlir::scf::ForallOp forall);

/// Index computations a kernel rebuilds from its own coordinates (affine
/// and tensor.dim ops, side-effect-free arith ops without regions).
bool isIndexComputation(mlir::Operation *op);

/// True when `v` is a tensor of `value` everywhere: a tensor.splat of a
/// float constant, or the splat dense constant canonicalization folds it to.
bool isSplatOf(mlir::Value v, double value);

/// The op of type OpTy that defines `v`, or null (a constant, another op).
template <typename OpTy> OpTy definingOpOf(mlir::OpFoldResult v) {
  auto value = llvm::dyn_cast<mlir::Value>(v);
  return value ? value.getDefiningOp<OpTy>() : OpTy();
}

namespace flash_reads {
/// The parts of analyzeFlashForm that read tensors one element per block
/// (FlashFormReads.cpp): per-sequence K/V lengths (`key` is K's source), a
/// ragged batch's starts and ends, and the tensors mask and score regions
/// read (hoisted out of the steps by --attnc-online-softmax), last.
mlir::LogicalResult readKVLengths(FlashForm &form, mlir::Value key);
mlir::LogicalResult readRaggedRows(FlashForm &form, OnlineAttentionOp first);
mlir::LogicalResult readRegionTensors(FlashForm &form);
/// The reads region `r` (its b, h, i, j arguments from number `lead` on)
/// makes of tensors from above, per score: each is checked and its tensor
/// entered into `tensors` (extents from `q` and `k`), the read into `reads`;
/// anything else in the region but arith and math is refused. A non-empty
/// `unaddressable` names a form whose positions the kernel cannot index
/// tensors by.
mlir::LogicalResult
readRegionElements(mlir::Region &r, unsigned lead, mlir::RankedTensorType q,
                   mlir::RankedTensorType k, llvm::StringRef unaddressable,
                   llvm::SmallVectorImpl<BlockTensor> &tensors,
                   llvm::SmallVectorImpl<mlir::tensor::ExtractOp> &reads);
/// The element of `bt` (its global memory `mem`) at kernel `indices`, by
/// its parameter's strides (`param` of "NAME.strideD"); query and key
/// positions clamped into `seqQ` and `seqKV`.
mlir::Value
loadElement(mlir::OpBuilder &b, mlir::Location loc, const BlockTensor &bt,
            mlir::Value mem, llvm::ArrayRef<mlir::Value> indices,
            llvm::function_ref<mlir::Value(const std::string &)> param,
            mlir::Value seqQ, mlir::Value seqKV);
/// The rules on Sq and Skv (`q`, `k`: their extents, a symbol or a constant)
/// that a tensor read at both positions needs: equal.
std::vector<ABIConstraint>
positionConstraints(llvm::ArrayRef<BlockTensor> tensors, const ABIDim &q,
                    const ABIDim &k);
} // namespace flash_reads

/// Reads `forall` as a flash form, or emits a diagnostic and fails.
mlir::FailureOr<FlashForm> analyzeFlashForm(mlir::scf::ForallOp forall);

} // namespace attnc

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_FLASHFORM_H
