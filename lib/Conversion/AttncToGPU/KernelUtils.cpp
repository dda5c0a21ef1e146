//===- KernelUtils.cpp - helpers shared by the kernel builders ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::string attnc::mlirTypeToDType(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  for (unsigned w : {1u, 8u, 32u, 64u})
    if (t.isInteger(w))
      return "i" + std::to_string(w);
  return "";
}

bool attnc::isSupportedDType(Type t) {
  return t.isBF16() || t.isF16() || t.isF32();
}

/// The kernels index with 64-bit offsets and never read the descriptor's
/// size: the extent is set to the largest signed value so no check trips.
static constexpr int64_t kUnboundedExtent = INT64_MAX;

Value attnc::wrapGlobalPointer(OpBuilder &b, Location loc, Value ptr,
                               Type elemType) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto arr = LLVM::LLVMArrayType::get(i64, 1);
  Type ptrType = ptr.getType();
  auto descType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptrType, ptrType, i64, arr, arr});
  auto c = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value d = LLVM::PoisonOp::create(b, loc, descType);
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{0});
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{1});
  d = LLVM::InsertValueOp::create(b, loc, d, c(0), ArrayRef<int64_t>{2});
  d = LLVM::InsertValueOp::create(b, loc, d, c(kUnboundedExtent),
                                  ArrayRef<int64_t>{3, 0});
  d = LLVM::InsertValueOp::create(b, loc, d, c(1), ArrayRef<int64_t>{4, 0});
  auto memrefType =
      MemRefType::get({ShapedType::kDynamic}, elemType,
                      MemRefLayoutAttrInterface{}, b.getI64IntegerAttr(1));
  return UnrealizedConversionCastOp::create(b, loc, memrefType, d).getResult(0);
}

Value attnc::opaqueIndex(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  Value asI64 = arith::IndexCastOp::create(b, loc, i64, v);
  auto mov = LLVM::InlineAsmOp::create(
      b, loc, i64, ValueRange{asI64}, b.getStringAttr("mov.b64 $0, $1;"),
      b.getStringAttr("=l,l"), b.getUnitAttr(), /*is_align_stack=*/nullptr,
      /*tail_call_kind=*/nullptr, /*asm_dialect=*/nullptr,
      /*operand_attrs=*/nullptr);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), mov.getRes());
}
