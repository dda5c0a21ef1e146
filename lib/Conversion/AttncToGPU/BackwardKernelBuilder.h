//===- BackwardKernelBuilder.h - the backward kernel builder ---*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The class that lowers a backward flash form to a kernel, shared by its
// files: BackwardKernelContract.cpp (configuration, launch contract, grid,
// the kernel's values of the form's leaves) and BackwardKernel.cpp (data
// movement, the five products, the loops).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H

#include "attnc/Conversion/KernelABI.h"

#include "BackwardForm.h"
#include "KernelValues.h"
#include "MmaFragments.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

namespace attnc::backward_kernel {

using namespace mlir;

inline constexpr int64_t kCopyBytes = 16;
inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr const char *kSizeSymbols[] = {"B", "H", "Hkv", "Sq", "Skv"};
/// Tensors with stride parameters (dims 0..2 each), in launch order.
inline constexpr const char *kStridedTensors[] = {"q",   "k",     "v",  "do",
                                                  "lse", "delta", "dk", "dv"};

class BackwardKernelBuilder {
public:
  BackwardKernelBuilder(OpBuilder &b, BackwardForm &form, StringRef name,
                        KernelABI &abi)
      : b(b), form(form), loc(form.forall.getLoc()), name(name), abi(abi),
        values(b, loc, [this](Value v) { return leafValue(v); }) {}

  FailureOr<gpu::GPUFuncOp> build(gpu::GPUModuleOp module);

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value param(StringRef n) { return func.getArgument(paramIndex.lookup(n)); }
  Value paramIndexValue(StringRef n) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), param(n));
  }
  LogicalResult verifyConfig();
  std::string symbolOf(Value tensor, int64_t dim) const;
  std::vector<ABIDim> shapeOf(Value tensor, int64_t rank) const;
  void planParameters();
  LogicalResult planGrid();
  FailureOr<GridFactor> gridFactor(OpFoldResult extent);
  Value extentOf(Value tensor, int64_t dim);
  FailureOr<Value> leafValue(Value v);
  FailureOr<Value> materialize(OpFoldResult v, IRMapping &scope) {
    return values.materialize(v, scope);
  }

  void emitPrologue();
  FailureOr<GlobalTile> tileOf(OffsetSizeAndStrideOpInterface slice,
                               StringRef tensor, IRMapping &scope);
  void copyTile(const GlobalTile &src, Value smem, Value stage, int64_t rows,
                int64_t cols);
  void copyRowValues(const GlobalTile &src, Value smem, Value stage,
                     Value threadRow);
  LogicalResult loadQueryTile(BackwardQueryLoop &l, Value i, IRMapping scope);
  LogicalResult emitBody();
  FailureOr<SmallVector<Value>>
  emitQueryLoop(BackwardQueryLoop &l, IRMapping &scope, ArrayRef<Value> acc);
  LogicalResult emitStep(BackwardQueryLoop &l, IRMapping &scope, Value stage,
                         MutableArrayRef<Value> dk, MutableArrayRef<Value> dv);
  /// Rows x (k 16-wide steps) products of the warp's 16 keys with
  /// `blockQ` rows of `rowsSmem` (both operands non-transposed): Sᵀ or dPᵀ.
  SmallVector<mma::FragC> keyRowProducts(Value keysSmem, Value rowsSmem,
                                         Value stage, int64_t depth);
  /// acc[16 keys x width] += A (packed Pᵀ or dSᵀ pairs) x rows of `smem`.
  void accumulateKeyRows(ArrayRef<std::array<Value, 2>> packed, Value smem,
                         Value stage, int64_t width,
                         MutableArrayRef<Value> acc);
  LogicalResult emitQueryGrad(BackwardQueryLoop &l, IRMapping &scope);

  OpBuilder &b;
  BackwardForm &form;
  Location loc;
  StringRef name;
  KernelABI &abi;
  KernelValues values;

  gpu::GPUFuncOp func;
  llvm::StringMap<unsigned> paramIndex;
  llvm::StringMap<Value> globalMem;
  SmallVector<unsigned> gridDims;
  IRMapping prologue;
  int64_t blockQ = 0, blockKV = 0, warps = 0, stages = 0, d = 0, dv = 0;
  int64_t rowElems = 0, rowElemsV = 0, dsRowElems = 0;
  mma::WarpCoords w;
  Value warp;
  Value kSmem, vSmem, qSmem, doSmem, dsSmem, lseSmem, deltaSmem;
  Value seqQ, seqKV, kvStart;
  Value scale; // c = scale x run-time scale, f32
};

} // namespace attnc::backward_kernel

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_BACKWARDKERNELBUILDER_H
