//===- BackwardKernelContract.cpp - the backward kernel's contract -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// What the backward kernel promises its host: the configurations it
// lowers, its parameters (tensors, the dQ workspace, sizes, strides, the
// run-time scale), its grid from the forall's mapping, and the kernel's
// values of the form's leaves (sizes and the run-time scale).
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::backward_kernel;

//===----------------------------------------------------------------------===//
// Contract
//===----------------------------------------------------------------------===//

LogicalResult BackwardKernelBuilder::verifyConfig() {
  FlashConfigAttr c = form.config;
  blockQ = c.getBlockQ();
  blockKV = c.getBlockKV();
  warps = c.getWarps();
  stages = c.getStages();
  d = form.headDim;
  elemBytes = form.elementType.getIntOrFloatBitWidth() / 8;
  dv = cast<RankedTensorType>(form.value.getType()).getDimSize(3);
  Location diag = form.forall.getLoc();
  persistent = c.getStrategy() == TileStrategy::wgmma_persistent;
  wgmma = c.getStrategy() == TileStrategy::wgmma || persistent;
  if ((c.getStrategy() != TileStrategy::mma_sync && !wgmma) || c.getFallback())
    return emitError(diag) << "attention backward: only the mma_sync, wgmma "
                              "and wgmma_persistent strategies have a "
                              "backward kernel, got "
                           << stringifyTileStrategy(c.getStrategy())
                           << (c.getFallback() ? " with a fallback" : "");
  if (wgmma && chip != "sm_90a")
    return emitError(diag) << "attention backward: strategy "
                           << stringifyTileStrategy(c.getStrategy())
                           << " needs warpgroup MMAs, which only sm_90a has; "
                              "the kernel targets "
                           << chip;
  if (!form.elementType.isBF16() && !form.elementType.isF16())
    return emitError(diag)
           << "attention backward: element type must be bf16 or f16";
  if (c.getKeyWarps() != 1)
    return emitError(diag) << "attention backward: each warp owns whole K/V "
                              "rows; key_warps must be 1, got "
                           << c.getKeyWarps();
  if (c.getInterleaveKV())
    return emitError(diag) << "attention backward: its pipeline loads Q, dO "
                              "and the row statistics together; interleave_kv "
                              "is the forward's";
  if (c.getOverlapPV())
    return emitError(diag) << "attention backward: its steps wait for each "
                              "product they issue; overlap_pv is the forward's";
  if (c.getMmaRowSums())
    return emitError(diag) << "attention backward: it reads each row's "
                              "logsumexp and sums no probabilities; "
                              "mma_row_sums is the forward's";
  if ((d != 64 && d != 128) || dv != d)
    return emitError(diag) << "attention backward: head dims must be equal "
                              "and 64 or 128, got d = "
                           << d << ", dv = " << dv;
  if (blockKV != warps * mma::kM)
    return emitError(diag) << "attention backward: block_kv (" << blockKV
                           << ") must be 16 rows per warp (" << warps
                           << " warps)";
  if (stages < 1 || stages > 2)
    return emitError(diag) << "attention backward: stages must be 1 or 2, got "
                           << stages;
  if (wgmma) {
    // Warpgroups of four warps own 64 keys each; a query tile is the N of
    // Sᵀ's MMAs and the M of dQ's: one m64 from one 128-byte box of dSᵀ,
    // or, at d = 64 with two warpgroups, two (one box each).
    if (warps != 4 && warps != 8)
      return emitError(diag) << "attention backward: strategy wgmma runs one "
                                "or two warpgroups (4 or 8 warps), got "
                             << warps;
    if (blockQ != 64 && !(blockQ == 128 && warps == 8 && d == 64))
      return emitError(diag)
             << "attention backward: strategy wgmma needs block_q 64 (one m64 "
                "MMA of dQ), or 128 with two warpgroups at d = 64 (one m64 "
                "each), got block_q "
             << blockQ << " with " << warps << " warps at d = " << d;
    return success();
  }
  int64_t threads = warps * mma::kWarpSize;
  int64_t rowsPerPass = threads / (d * 2 / kCopyBytes);
  int64_t slabsQ = blockQ / mma::kM;
  if (blockQ % (2 * mma::kM) != 0 || blockQ % rowsPerPass != 0 ||
      blockKV % rowsPerPass != 0 || 2 * blockQ > threads ||
      warps % slabsQ != 0 || (d / mma::kN) % (2 * (warps / slabsQ)) != 0)
    return emitError(diag)
           << "attention backward: block_q (" << blockQ
           << ") must be a multiple of 32 and of the rows one pass of "
           << threads << " threads copies, at most half the threads, and "
           << "split dQ's columns evenly among " << warps << " warps";
  return success();
}

std::string BackwardKernelBuilder::symbolOf(Value tensor, int64_t dim) const {
  bool isKV = tensor == form.key || tensor == form.value;
  return isKV ? kKeySymbols[dim] : kQuerySymbols[dim];
}

std::vector<ABIDim> BackwardKernelBuilder::shapeOf(Value tensor,
                                                   int64_t rank) const {
  // (Head dimensions are static.)
  return abiShapeOf(tensor, llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                    [&](int64_t d) { return symbolOf(tensor, d); });
}

/// q, k, v, do, lse, delta (inputs), dk, dv (outputs), dq_accum (the f32
/// dQ, a zeroed workspace), the dynamic sizes, the strides and, when the
/// program has one, the run-time scale.
void BackwardKernelBuilder::planParameters() {
  std::string dtype = mlirTypeToDType(form.elementType);
  auto push = [&](ABIParam p) {
    paramIndex[p.name] = abi.params.size();
    abi.params.push_back(std::move(p));
  };
  auto tensor = [&](const char *n, std::string dt, std::vector<ABIDim> shape,
                    const char *role, int64_t align) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = n;
    p.dtype = std::move(dt);
    p.shape = std::move(shape);
    p.role = role;
    p.align = align;
    p.rowAlign = align;
    push(std::move(p));
  };
  // Q, K, V and dO move by 16-byte cp.async (Q and dO by TMA with wgmma
  // where it fits, which asks the same alignment); dK and dV leave as element
  // pairs; the logsumexp and delta one f32 at a time.
  tensor("q", dtype, shapeOf(form.query, 4), "input", kCopyBytes);
  tensor("k", dtype, shapeOf(form.key, 4), "input", kCopyBytes);
  tensor("v", dtype, shapeOf(form.value, 4), "input", kCopyBytes);
  tensor("do", dtype, shapeOf(form.outGrad, 4), "input", kCopyBytes);
  tensor("lse", "f32", shapeOf(form.logsumexp, 3), "input", 4);
  tensor("delta", "f32", shapeOf(form.delta, 4), "input", 4);
  // The tensors the regions read per score (a slope per head, ids per
  // position): an address aligned to their element, any strides; a dimension a
  // batch, head or position indexes runs over the query's or the keys'.
  std::vector<ABIDim> qs = shapeOf(form.query, 3), ks = shapeOf(form.key, 3);
  for (const BlockTensor &bt : form.regionTensors) {
    auto type = cast<RankedTensorType>(bt.tensor.getType());
    std::vector<ABIDim> shape;
    for (auto [dim, coord] : llvm::enumerate(bt.coords)) {
      std::optional<BlockTensor::Extent> e = BlockTensor::extentOf(coord);
      shape.push_back(!e          ? ABIDim(type.getDimSize(dim))
                      : e->ofKeys ? ks[e->dim]
                                  : qs[e->dim]);
    }
    tensor(bt.name.c_str(), mlirTypeToDType(type.getElementType()), shape,
           "input", bt.elementBytes());
    abi.params.back().rowAlign = 0;
  }
  tensor("dk", dtype, shapeOf(form.key, 4), "output", 4);
  tensor("dv", dtype, shapeOf(form.value, 4), "output", 4);
  {
    ABIParam p;
    p.kind = ABIParam::Kind::Workspace;
    p.name = "dq_accum";
    for (int64_t i = 0; i < 3; ++i) {
      ABIDim dim = shapeOf(form.query, 3)[i];
      p.bytes.push_back(std::holds_alternative<int64_t>(dim)
                            ? GridFactor::constant(std::get<int64_t>(dim))
                            : GridFactor::symbol(std::get<std::string>(dim)));
    }
    p.bytes.push_back(GridFactor::constant(d * 4));
    p.zeroInit = true;
    p.viewDtype = "f32";
    p.viewShape = shapeOf(form.query, 3);
    p.viewShape.push_back(d);
    push(std::move(p));
  }
  for (const char *sym : kSizeSymbols)
    if (mentionsSymbol({shapeOf(form.query, 3), shapeOf(form.key, 3)}, sym))
      push(ABIParam::size(sym));
  for (const char *t : kStridedTensors)
    for (int64_t dim = 0; dim < 3; ++dim)
      push(ABIParam::stride(t, dim));
  for (const BlockTensor &bt : form.regionTensors)
    for (int64_t dim = 0; dim < static_cast<int64_t>(bt.coords.size()); ++dim)
      push(ABIParam::stride(bt.name, dim));
  if (form.runtimeScale) {
    push(runtimeScaleParam(form.runtimeScale));
    runtimeScaleParamName = abi.params.back().name;
  }
  if (wgmma) {
    // dQ's tiles are added by TMA reductions, in boxes of block_q rows x 32
    // f32 (one 128-byte swizzled row each).
    ABIParam p;
    p.kind = ABIParam::Kind::TensorMap;
    p.name = "dq_accum.map";
    p.tensor = "dq_accum";
    p.box = {1, 1, blockQ, kQueryGradBoxCols};
    p.swizzle = kTensorMapSwizzleBytes;
    push(std::move(p));
  }
}

FailureOr<GridFactor> BackwardKernelBuilder::gridFactor(OpFoldResult extent) {
  return gridFactorOf(extent, [&](Value x) -> std::optional<std::string> {
    auto dim = cast_or_null<tensor::DimOp>(
        sizeDimOf(x, {form.query, form.key, form.value, form.outGrad,
                      form.logsumexp, form.delta}));
    if (!dim)
      return std::nullopt;
    return symbolOf(dim.getSource(), *dim.getConstantIndex());
  });
}

LogicalResult BackwardKernelBuilder::planGrid() {
  // (A persistent kernel's grid is replaced once shared memory is laid out:
  // planPersistentGrid.)
  if (failed(planForallGrid(
          form.forall,
          [&](OpFoldResult e) -> FailureOr<std::vector<GridFactor>> {
            FailureOr<GridFactor> f = gridFactor(e);
            if (failed(f))
              return failure();
            return std::vector<GridFactor>{*f};
          },
          abi.grid, gridDims)))
    return failure();
  // Groups order the heads of a longest-first grid of one CTA per tile.
  if (int64_t mib = form.config.getL2GroupMib(); mib && !runsLongestFirst())
    return form.forall.emitOpError()
           << "has l2_group_mib = " << mib
           << " in its flash config but its grid does not run longest first "
              "(batch on z, K/V heads on x, K/V tiles on y: a causal mask), "
              "the grid whose heads the groups order";
  return success();
}

/// As many CTAs as the SMs hold at once, which walk the forall's iterations
/// themselves (emitPersistentBody).
void BackwardKernelBuilder::planPersistentGrid() {
  // sm_90: 228 KiB of shared memory per SM, 1 KiB of it reserved per CTA;
  // 64K registers, at most 255 per thread. At d = 64 the 64 x 64 kernel
  // (one warpgroup, 98 KiB) fits twice, and a grid of one CTA per SM ran
  // it at half its speed (H100, 2026-12-05: 210 against 286 TFLOP/s at
  // S = 1k); the 226 KiB kernels fit once.
  constexpr int64_t kSharedPerSM = 228 * 1024, kReservedPerCTA = 1024;
  constexpr int64_t kRegistersPerSM = 65536, kMaxRegisters = 255;
  int64_t threads = warps * mma::kWarpSize;
  int64_t perSM =
      std::min(kSharedPerSM / (abi.dynamicSharedMemoryBytes + kReservedPerCTA),
               kRegistersPerSM / (threads * kMaxRegisters));
  abi.grid[0] = {GridFactor::numSMs()};
  if (perSM > 1)
    abi.grid[0].push_back(GridFactor::constant(perSM));
  abi.grid[1] = abi.grid[2] = {GridFactor::constant(1)};
}

Value BackwardKernelBuilder::extentOf(Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return idx(type.getDimSize(dim));
  return paramIndexValue(symbolOf(tensor, dim));
}

FailureOr<Value> BackwardKernelBuilder::leafValue(Value v) {
  if (form.runtimeScale && v == form.runtimeScale)
    return param(runtimeScaleParamName);
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return Value();
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!index || *index > 2 ||
      !llvm::is_contained({form.query, form.key, form.value, form.outGrad,
                           form.logsumexp, form.delta},
                          dim.getSource()))
    return dim.emitOpError("reads an extent the backward kernel has no "
                           "parameter for; only batch, head and sequence "
                           "extents of its tensors are");
  return extentOf(dim.getSource(), *index);
}
