//===- KernelUtils.cpp - helpers shared by the kernel builders ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "attnc/Dialect/Attnc/IR/AttentionMask.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Target/TargetDescription.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace attnc;

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

Value attnc::dynamicSharedBytes(OpBuilder &b, Location loc) {
  auto ws =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, ws));
}

std::optional<int64_t> attnc::dynamicSharedMemoryLimit(StringRef chip) {
  FailureOr<TargetDescription> desc = lookupTargetDescription(chip);
  if (failed(desc))
    return std::nullopt;
  return desc->sharedMemoryPerBlock - kStaticSharedBytes;
}

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

/// `v` (i32 or i64) through a side-effecting `mov` of its width.
static Value opaqueMove(OpBuilder &b, Location loc, Value v) {
  bool wide = v.getType().isInteger(64);
  return LLVM::InlineAsmOp::create(
             b, loc, v.getType(), ValueRange{v},
             b.getStringAttr(wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;"),
             b.getStringAttr(wide ? "=l,l" : "=r,r"), b.getUnitAttr(),
             /*is_align_stack=*/nullptr, /*tail_call_kind=*/nullptr,
             /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
      .getRes();
}

Value attnc::opaqueIndex(OpBuilder &b, Location loc, Value v) {
  Value asI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                    opaqueMove(b, loc, asI64));
}

Value attnc::opaqueI32(OpBuilder &b, Location loc, Value v) {
  assert(v.getType().isInteger(32) && "an i32 value");
  return opaqueMove(b, loc, v);
}

std::pair<Value, Value> attnc::ringDivRem(OpBuilder &b, Location loc, Value n,
                                          int64_t d) {
  Type i32 = b.getI32Type();
  Value narrow = arith::IndexCastOp::create(b, loc, i32, n);
  Value divisor = arith::ConstantIntOp::create(b, loc, i32, d);
  auto widen = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  return {widen(arith::DivUIOp::create(b, loc, narrow, divisor)),
          widen(arith::RemUIOp::create(b, loc, narrow, divisor))};
}

FailureOr<GridFactor> attnc::gridFactorOf(
    OpFoldResult extent,
    function_ref<std::optional<std::string>(Value)> symbolOfDim) {
  if (std::optional<int64_t> c = getConstantIntValue(extent))
    return GridFactor::constant(*c);
  Value v = cast<Value>(extent);
  if (auto sym = symbolOfDim(v))
    return GridFactor::symbol(*sym);
  if (auto apply = v.getDefiningOp<affine::AffineApplyOp>();
      apply && apply.getMapOperands().size() == 1) {
    auto bin = dyn_cast<AffineBinaryOpExpr>(apply.getAffineMap().getResult(0));
    auto k = bin ? dyn_cast<AffineConstantExpr>(bin.getRHS()) : nullptr;
    if (bin && k && bin.getKind() == AffineExprKind::CeilDiv &&
        isa<AffineDimExpr, AffineSymbolExpr>(bin.getLHS()))
      if (auto sym = symbolOfDim(apply.getMapOperands()[0]))
        return GridFactor::ceilDivOf(*sym, k.getValue());
  }
  return emitError(v.getLoc())
         << "is a dimension of a flash form's forall whose extent the host "
            "cannot compute: it must be a constant, a sequence/batch/head "
            "extent of Q, K or V, or ceildiv of one";
}

LogicalResult attnc::planForallGrid(
    scf::ForallOp forall,
    function_ref<FailureOr<std::vector<GridFactor>>(OpFoldResult)> factors,
    std::vector<GridFactor> (&grid)[3], SmallVectorImpl<unsigned> &gridDims) {
  for (int i = 0; i < 3; ++i)
    grid[i] = {GridFactor::constant(1)};
  ArrayAttr mapping = *forall.getMapping();
  SmallVector<OpFoldResult> ubs = forall.getMixedUpperBound();
  SmallVector<OpFoldResult> lbs = forall.getMixedLowerBound();
  SmallVector<OpFoldResult> steps = forall.getMixedStep();
  unsigned used = 0;
  for (auto [i, m] : llvm::enumerate(mapping)) {
    auto block = dyn_cast<gpu::GPUBlockMappingAttr>(m);
    unsigned dim = block ? block.getMappingId() : 3;
    if (dim > 2 || (used & (1u << dim)))
      return forall.emitOpError()
             << "maps dimension " << i << " to " << m
             << "; a flash form's dimensions map to distinct x, y, z blocks";
    used |= 1u << dim;
    if (!isConstantIntValue(lbs[i], 0) || !isConstantIntValue(steps[i], 1))
      return forall.emitOpError("of a flash form must count from 0 in "
                                "steps of 1 (one block per iteration)");
    FailureOr<std::vector<GridFactor>> f = factors(ubs[i]);
    if (failed(f))
      return failure();
    grid[dim] = *f;
    gridDims.push_back(dim);
  }
  return success();
}

LogicalResult attnc::checkPerScoreOps(Region &r,
                                      function_ref<bool(Operation *)> lowered) {
  for (Operation &op : r.getOps()) {
    if (isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        isa<attnc::YieldOp>(op) || lowered(&op))
      continue;
    if (isa<tensor::ExtractOp>(op))
      return op.emitOpError("reads a tensor defined in its region; the "
                            "kernel reads tensors defined above the flash "
                            "form");
    return op.emitOpError("cannot be lowered in a mask or score region: the "
                          "kernel evaluates only arith and math ops per "
                          "score");
  }
  return success();
}

std::string attnc::sourceArgumentName(BlockArgument arg, StringRef fallback) {
  if (auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    if (auto n =
            fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttrName))
      return n.str();
  if (!fallback.empty())
    return fallback.str();
  return "arg" + std::to_string(arg.getArgNumber());
}

ABIParam attnc::scalarArgumentParam(Value v, StringRef fallback) {
  ABIParam p;
  p.kind = ABIParam::Kind::Scalar;
  p.name = fallback.str();
  if (auto arg = dyn_cast<BlockArgument>(v))
    p.name = sourceArgumentName(arg, fallback);
  p.dtype = mlirTypeToDType(v.getType());
  return p;
}

ABIParam attnc::runtimeScaleParam(Value runtimeScale) {
  return scalarArgumentParam(runtimeScale, "scale");
}

SmallVector<Value, 4> attnc::philox4x32(OpBuilder &b, Location loc, Value c0,
                                        Value c1, Value k0, Value k1) {
  // Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11),
  // the constants of cuRAND and PyTorch.
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  constexpr int kRounds = 10;
  auto i32 = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
        .getResult();
  };
  Value c2 = i32(0), c3 = i32(0);
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      k0 = arith::AddIOp::create(b, loc, k0, i32(kW0));
      k1 = arith::AddIOp::create(b, loc, k1, i32(kW1));
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, i32(kM0), c0);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, i32(kM1), c2);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c1), k0);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c3), k1);
    c0 = n0;
    c1 = p1.getLow();
    c2 = n2;
    c3 = p0.getLow();
  }
  return {c0, c1, c2, c3};
}

std::pair<Value, Value> attnc::splitI64(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  Value lo = arith::TruncIOp::create(b, loc, i32, v);
  Value hi = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(
          b, loc, v,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
  return {lo, hi};
}

Operation *attnc::sizeDimOf(Value x, ArrayRef<Value> tensors) {
  auto dim = x.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!dim || !index || *index > 2 ||
      !llvm::is_contained(tensors, dim.getSource()))
    return nullptr;
  return dim;
}

std::vector<ABIDim>
attnc::abiShapeOf(Value tensor, ArrayRef<int64_t> dims,
                  function_ref<std::string(int64_t)> symbolOf) {
  auto type = cast<RankedTensorType>(tensor.getType());
  std::vector<ABIDim> shape;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      shape.push_back(symbolOf(d));
    else
      shape.push_back(type.getDimSize(d));
  }
  return shape;
}

gpu::GPUFuncOp attnc::createKernelFunc(OpBuilder &b, Location loc,
                                       StringRef name, const KernelABI &abi,
                                       int32_t threads) {
  SmallVector<Type> argTypes;
  for (const ABIParam &p : abi.params) {
    if (p.kind == ABIParam::Kind::Tensor || p.kind == ABIParam::Kind::Workspace)
      argTypes.push_back(LLVM::LLVMPointerType::get(b.getContext(), 1));
    else if (p.kind == ABIParam::Kind::TensorMap)
      // A generic pointer to the by-value CUtensorMap: the NVVM lowering
      // makes it a grid-constant byval parameter
      // (--attnc-grid-constant-tensormaps).
      argTypes.push_back(LLVM::LLVMPointerType::get(b.getContext()));
    else if (p.dtype == "f32")
      argTypes.push_back(b.getF32Type());
    else
      argTypes.push_back(b.getI64Type());
  }
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  return func;
}

std::string attnc::maskKindOf(Region &mask) {
  if (mask.empty())
    return "none";
  std::optional<CausalMask> c = matchCausalMask(mask);
  if (!c)
    return "custom";
  return c->alignment == CausalMask::Alignment::TopLeft ? "causal"
                                                        : "causal_bottom_right";
}

std::string attnc::joinMaskKinds(StringRef a, StringRef b) {
  if (a == "none" || a == b)
    return b.str();
  return b == "none" ? a.str() : "custom";
}

ABIParam attnc::tileCounterParam() {
  ABIParam p;
  p.kind = ABIParam::Kind::Workspace;
  p.name = kTileCounterName;
  p.bytes = {GridFactor::constant(4)};
  p.zeroInit = true;
  return p;
}

Value attnc::drawWorkTile(OpBuilder &b, Location loc, Value counter,
                          Value ctas) {
  Type i32 = b.getI32Type();
  Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
  Value drawn =
      LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add, counter, one,
                                LLVM::AtomicOrdering::monotonic);
  Value wide = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), drawn);
  return arith::AddIOp::create(b, loc, ctas, wide);
}

void attnc::mapGroupedBlockIndices(
    OpBuilder &b, Location loc, int64_t mib, ValueRange ivs,
    ArrayRef<unsigned> gridDims, IRMapping &scope,
    function_ref<HeadGroupOperands()> groupOperands) {
  auto block = [&](unsigned dim) -> Value {
    return gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(dim));
  };
  if (mib == 0) {
    for (auto [iv, dim] : llvm::zip(ivs, gridDims))
      scope.map(iv, block(dim));
    return;
  }
  scope.map(ivs[0], block(2));
  Value bx = block(0), by = block(1);
  HeadGroupOperands g = groupOperands();
  auto [head, tile] =
      groupedBlockTile(b, loc, mib, g.heads, g.kvHeads, g.headBytes, bx, by);
  scope.map(ivs[1], head);
  scope.map(ivs[2], tile);
}

std::pair<Value, Value> attnc::groupedBlockTile(OpBuilder &b, Location loc,
                                                int64_t mib, Value heads,
                                                Value kvHeads, Value headBytes,
                                                Value bx, Value by) {
  // (One op per statement here: the order of a call's arguments is the
  // compiler's, and the IR's order should not be.)
  Value budget = arith::ConstantIndexOp::create(b, loc, mib << 20);
  Value grouped = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ugt,
      arith::MulIOp::create(b, loc, kvHeads, headBytes), budget);
  Type index = b.getIndexType();
  auto order = scf::IfOp::create(b, loc, TypeRange{index, index}, grouped,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(order.thenBlock());
    // In 32 bits: heads * query tiles is a grid's x * y.
    Type i32 = b.getI32Type();
    auto narrow = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, i32, v);
    };
    // The K/V heads that fit (at least one; fewer than all here), as many
    // groups as that needs, made as equal as they can be; a group's query
    // heads are its K/V heads' GQA groups.
    Value x = narrow(heads);
    Value kv = narrow(kvHeads);
    Value fitting = arith::DivUIOp::create(b, loc, budget, headBytes);
    Value fit = narrow(arith::MaxUIOp::create(
        b, loc, fitting, arith::ConstantIndexOp::create(b, loc, 1)));
    Value groups = arith::CeilDivUIOp::create(b, loc, kv, fit);
    Value kvSize = arith::CeilDivUIOp::create(b, loc, kv, groups);
    Value gqa = arith::DivUIOp::create(b, loc, x, kv);
    Value size = arith::MulIOp::create(b, loc, kvSize, gqa);
    Value y = narrow(gpu::GridDimOp::create(b, loc, gpu::Dimension::y));
    // The block's position in launch order within its batch.
    Value column = narrow(bx);
    Value row = arith::MulIOp::create(b, loc, x, narrow(by));
    Value at = arith::AddIOp::create(b, loc, column, row);
    Value perGroup = arith::MulIOp::create(b, loc, size, y);
    Value group = arith::DivUIOp::create(b, loc, at, perGroup);
    Value rest = arith::SubIOp::create(
        b, loc, at, arith::MulIOp::create(b, loc, group, perGroup));
    Value first = arith::MulIOp::create(b, loc, group, size);
    // The last group may be smaller.
    Value width = arith::MinUIOp::create(
        b, loc, size, arith::SubIOp::create(b, loc, x, first));
    Value tile = arith::DivUIOp::create(b, loc, rest, width);
    Value head = arith::AddIOp::create(
        b, loc, first,
        arith::SubIOp::create(b, loc, rest,
                              arith::MulIOp::create(b, loc, tile, width)));
    auto wide = [&](Value v) -> Value {
      return arith::IndexCastUIOp::create(b, loc, index, v);
    };
    scf::YieldOp::create(b, loc, ValueRange{wide(head), wide(tile)});
    b.setInsertionPointToStart(order.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{bx, by});
  }
  return {order.getResult(0), order.getResult(1)};
}

void attnc::mapPersistentWorkTile(OpBuilder &b, Location loc, Value t,
                                  ArrayRef<unsigned> order,
                                  ArrayRef<unsigned> gridDims, ValueRange ivs,
                                  ArrayRef<Value> extents, IRMapping &scope) {
  // In 32 bits: tiles are drawn from a 32-bit counter. In 64, each
  // division came with LLVM's 32-bit fast path and kept both widths of the
  // sizes live, in the producer's registers too (24 of them then).
  Type i32 = b.getI32Type();
  auto narrow = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i32, v);
  };
  Value rest = narrow(t);
  for (unsigned dim : order) {
    const auto *it = llvm::find(gridDims, dim);
    if (it == gridDims.end())
      continue;
    size_t i = it - gridDims.begin();
    Value extent = narrow(extents[i]);
    scope.map(ivs[i], arith::IndexCastUIOp::create(
                          b, loc, b.getIndexType(),
                          arith::RemUIOp::create(b, loc, rest, extent)));
    rest = arith::DivUIOp::create(b, loc, rest, extent);
  }
}
