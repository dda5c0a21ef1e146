//===- AttncToGPU.cpp - --attnc-convert-to-gpu ----------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Finds the kernel-forming ops of each function (the flash form of attention
// and attnc.fusion), builds one gpu.func per op in its own gpu.module with
// the NVVM target attached, and records the launch contract on the kernel.
// The kernels are built by FlashAttentionKernel.cpp and FusionKernel.cpp;
// this file only decides what becomes a kernel and with which configuration.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/FlashAttentionKernel.h"
#include "attnc/Conversion/AttncToGPU/FusionKernel.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "attnc-convert-to-gpu"

namespace attnc {
#define GEN_PASS_DEF_ATTNCCONVERTTOGPU
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

/// mma.sync m16n8k16 works on 16-row slabs; large query tiles give each
/// warp two (32 rows), which halves the shared-memory reads of K and V per
/// mma (measured: FlashAttentionKernel.h, TargetDescription.cpp).
static constexpr int64_t kSlabRows = 16;
static constexpr int64_t kLargeTileRowsPerWarp = 32;
static constexpr int64_t kLargeTile = 128;

/// Reads the tile sizes and the attention parameters off the flash form.
static FailureOr<FlashAttentionKernelConfig>
flashConfig(scf::ForallOp forall, SmallVectorImpl<OnlineAttentionOp> &steps) {
  FlashAttentionKernelConfig cfg;
  OnlineAttentionOp first = steps.front();
  RankedTensorType q = first.getQuery().getType();
  cfg.headDim = q.getDimSize(1);
  int64_t valueDim = first.getValue().getType().getDimSize(1);
  if (valueDim != cfg.headDim)
    return first.emitOpError()
           << "has value head dim " << valueDim << " but query/key head dim "
           << cfg.headDim
           << "; the flash kernel needs them equal (pad V or split the heads)";
  cfg.elementType = q.getElementType();
  cfg.scale = first.getScale().convertToDouble();
  cfg.causal =
      llvm::any_of(steps, [](OnlineAttentionOp s) { return s.getCausal(); });
  for (OnlineAttentionOp s : steps)
    if (s.getScale() != first.getScale() ||
        s.getQuery().getType() != first.getQuery().getType())
      return s.emitOpError("differs from the other tile steps of its loop "
                           "nest in scale or tile type; one kernel needs one "
                           "configuration");
  auto bq = forall->getAttrOfType<IntegerAttr>("attnc.block_q");
  auto bkv = forall->getAttrOfType<IntegerAttr>("attnc.block_kv");
  if (!bq || !bkv)
    return forall.emitOpError("holds attnc.online_attention but lacks the "
                              "attnc.block_q / attnc.block_kv tile sizes that "
                              "--attnc-online-softmax records");
  cfg.blockQ = bq.getInt();
  cfg.blockKV = bkv.getInt();
  cfg.numWarps = cfg.blockQ /
                 (cfg.blockQ >= kLargeTile ? kLargeTileRowsPerWarp : kSlabRows);
  if (forall.getNumResults() < 1)
    return forall.emitOpError("of the flash form must return O");
  auto o = cast<RankedTensorType>(forall.getResult(0).getType());
  if (o.getElementType() != cfg.elementType)
    return forall.emitOpError("writes O in ")
           << o.getElementType() << " but its tiles are " << cfg.elementType
           << "; the kernel writes O in the input type";
  return cfg;
}

namespace {
struct AttncConvertToGPUPass
    : attnc::impl::AttncConvertToGPUBase<AttncConvertToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Attribute target = b.getAttr<NVVM::NVVMTargetAttr>(
        /*optLevel=*/3, /*triple=*/"nvptx64-nvidia-cuda", chip, ptxFeatures);
    bool failedAny = false;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      SmallVector<Operation *> kernels;
      for (Operation &op : fn.getBody().getOps()) {
        if (isa<FusionOp>(op) ||
            (isa<scf::ForallOp>(op) && op.walk([](OnlineAttentionOp) {
                                           return WalkResult::interrupt();
                                         }).wasInterrupted())) {
          kernels.push_back(&op);
          continue;
        }
        if (isa<AttentionOp>(op)) {
          op.emitOpError("has no kernel of its own: run --attnc-online-softmax "
                         "to get its flash form first");
          failedAny = true;
        } else if (isa<AttncDialect>(op.getDialect())) {
          op.emitOpError("cannot be lowered to a GPU kernel: only fused "
                         "attention (--attnc-fuse-attention, "
                         "--attnc-online-softmax) and attnc.fusion "
                         "(--attnc-fuse-elementwise) have kernels");
          failedAny = true;
        }
      }
      for (auto [i, op] : llvm::enumerate(kernels)) {
        std::string name = fn.getSymName().str();
        if (kernels.size() > 1)
          name += "_" + std::to_string(i);
        if (failed(buildKernel(b, module, target, name, op)))
          failedAny = true;
      }
    }
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult buildKernel(OpBuilder &b, ModuleOp module, Attribute target,
                            StringRef name, Operation *op) {
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(
        b, op->getLoc(), (name + "_module").str(), b.getArrayAttr({target}));
    KernelABI abi;
    FailureOr<gpu::GPUFuncOp> kernel = failure();
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      kernel = buildFusionKernel(b, gpuModule, name, fusion, abi,
                                 fusionAccessesPerThread);
    } else {
      SmallVector<OnlineAttentionOp> steps;
      op->walk([&](OnlineAttentionOp s) { steps.push_back(s); });
      FailureOr<FlashAttentionKernelConfig> cfg =
          flashConfig(cast<scf::ForallOp>(op), steps);
      if (failed(cfg))
        return failure();
      kernel = buildFlashAttentionKernel(b, op->getLoc(), gpuModule, name, *cfg,
                                         abi);
    }
    if (failed(kernel)) {
      gpuModule.erase();
      return failure();
    }
    abi.name = name.str();
    LaunchContractAttr contract = buildLaunchContract(
        b.getContext(), abi, [&] { return op->emitOpError(); });
    if (!contract) {
      gpuModule.erase();
      return failure();
    }
    // On the gpu.module, not the gpu.func: the module op survives the
    // lowering to NVVM unchanged, so attnc-compile finds it there.
    gpuModule->setAttr(kLaunchContractAttrName, contract);
    return success();
  }
};
} // namespace
