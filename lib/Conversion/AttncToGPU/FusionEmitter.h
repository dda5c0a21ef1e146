//===- FusionEmitter.h - state of the attnc.fusion row kernel ----*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Conversion/AttncToGPU: the emitter shared by
// FusionKernel.cpp (planning, parameters, loads and stores) and
// FusionBody.cpp (the body's ops, reductions and dropout).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNCTOGPU_FUSIONEMITTER_H
#define ATTNC_LIB_CONVERSION_ATTNCTOGPU_FUSIONEMITTER_H

#include "attnc/Conversion/AttncToGPU/FusionKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

namespace attnc::fusion_kernel {
using namespace mlir;

/// Elements per access: 8 x 16-bit = 16 bytes, the widest global load.
constexpr int64_t kVec = 8;
/// The manifest promises 16-byte aligned tensors (docs/abi.md) and every
/// chunk starts at a multiple of 8 elements of a row whose stride the
/// runtime checks, so accesses are 16-byte aligned; without saying so, LLVM
/// splits them into 2-byte loads.
constexpr uint64_t kAccessAlign = 16;
constexpr int64_t kWarpSize = 32;
/// CUDA's limit on threads per block.
constexpr int64_t kMaxThreads = 1024;
/// Threads of a block that packs several rows (rows of at most a warp).
constexpr int64_t kPackedThreads = 256;
/// 16-byte accesses one thread makes per row (it keeps them in registers):
/// rows of up to kMaxThreads * kMaxChunks * kVec = 262144 elements.
constexpr int64_t kMaxChunks = 32;

enum class Kind { Full, Col, Row, Scalar };

struct Val {
  Kind kind;
  SmallVector<Value> chunks; // Full, Col: one vector<8xT> per chunk
  Value scalar;              // Row, Scalar
  bool perElement() const { return kind == Kind::Full || kind == Kind::Col; }
};

class FusionEmitter {
public:
  FusionEmitter(OpBuilder &b, FusionOp fusion, KernelABI &abi)
      : b(b), loc(fusion.getLoc()), fusion(fusion), abi(abi) {}

  FailureOr<gpu::GPUFuncOp> emit(gpu::GPUModuleOp module, StringRef name);

  /// 16-byte accesses each thread makes per full-shape input (a target).
  int64_t accessesPerThread = 4;

private:
  LogicalResult plan();
  void emitPrologue(gpu::GPUFuncOp func);
  LogicalResult loadInputs(gpu::GPUFuncOp func);
  Val loadInput(BlockArgument arg);
  /// The per-thread value of `v`, loading a fusion input at first use.
  Val value(Value v);
  LogicalResult emitOp(Operation *op);
  void storeResults(gpu::GPUFuncOp func);

  // Arithmetic helpers.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value i32(uint32_t v) {
    return arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Value splat(Value s) {
    return vector::BroadcastOp::create(b, loc,
                                       VectorType::get({kVec}, s.getType()), s);
  }
  Val map(Val a, function_ref<Value(Value)> fn);
  Val zip(Val a, Val c, function_ref<Value(Value, Value)> fn);
  SmallVector<Value> perElementChunks(const Val &v);
  Value rowReduce(const Val &v, bool isMax);
  Value blockReduce(Value partial, bool isMax);
  Value rowOffset(unsigned param);
  Value load(unsigned tensorParam, Kind kind, Type elem);
  Kind classify(RankedTensorType t, std::string &why);

  OpBuilder &b;
  Location loc;
  FusionOp fusion;
  KernelABI &abi;

  // Iteration space [R..., N].
  SmallVector<int64_t> iter;
  int64_t n = 0, chunks = 1, activeThreads = 0, threads = 0, slots = 0;
  /// Rows of at most a warp's threads are packed: `rowsPerBlock` rows per
  /// block, `rowLanes` (a power of two) consecutive threads per row, so a
  /// row's reductions stay within its lanes of one warp. Longer rows take
  /// one block each (rowsPerBlock = 1, rowLanes = threads).
  int64_t rowsPerBlock = 1, rowLanes = 0;
  bool packed() const { return rowsPerBlock > 1; }
  // Per fusion input / result: the ABI parameter of its pointer or value,
  // its class and the parameters of its leading strides.
  SmallVector<int64_t> inputParam, resultParam;
  SmallVector<Kind> inputKind;
  DenseMap<int64_t, SmallVector<int64_t>> strideParams;
  /// Tensor parameters in order: ABI index, class, element type.
  struct TensorParam {
    int64_t index;
    Kind kind;
    Type elem;
  };
  SmallVector<TensorParam> tensorParams;
  SmallVector<int64_t> sizeParam; // per leading dim, -1 when static

  // Kernel values: the thread's lane within its row's lanes, whether the
  // row exists (a packed block's last rows may not) and the row's linear
  // index.
  Value tid, lane, rowValid, rowId, active, smem;
  SmallVector<Value> args, memrefs, leadIdx, colBase;
  int64_t nextSlot = 0;
  DenseMap<Value, Val> vals;
};

} // namespace attnc::fusion_kernel

#endif // ATTNC_LIB_CONVERSION_ATTNCTOGPU_FUSIONEMITTER_H
