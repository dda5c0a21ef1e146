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

#include "attnc/Analysis/DimIndices.h"
#include "attnc/Conversion/AttncToGPU/FlashAttentionKernel.h"
#include "attnc/Conversion/AttncToGPU/FusionKernel.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Target/TargetDescription.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "attnc-convert-to-gpu"

namespace attnc {
#define GEN_PASS_DEF_ATTNCCONVERTTOGPU
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
/// cp.async.bulk.tensor into shared::cta.
constexpr int64_t kTmaPtxVersion = 86;

struct AttncConvertToGPUPass
    : attnc::impl::AttncConvertToGPUBase<AttncConvertToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Shape reasoning (the flash form's analysis) reads past a shape on one.
    if (failed(checkDimIndices(module)))
      return signalPassFailure();
    OpBuilder b(module.getContext());
    features =
        ptxFeatures.empty() ? ptxFeaturesForChip(chip) : ptxFeatures.getValue();
    Attribute target = b.getAttr<NVVM::NVVMTargetAttr>(
        /*optLevel=*/3, /*triple=*/"nvptx64-nvidia-cuda", chip, features);
    // A chip without a description is left to the driver at launch.
    FailureOr<TargetDescription> desc = lookupTargetDescription(chip);
    sharedMemoryLimit = succeeded(desc)
                            ? std::optional<int64_t>(desc->sharedMemoryPerBlock)
                            : std::nullopt;
    bool failedAny = false;
    llvm::StringSet<> kernelNames;
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
      if (!kernels.empty() && !isKernelName(fn.getSymName())) {
        fn.emitOpError() << "is named '" << fn.getSymName()
                         << "', which cannot name a kernel: kernel names are "
                            "C identifiers of at most "
                         << kMaxKernelNameLength
                         << " characters (they become the PTX entry and the "
                            "names of the files attnc-compile writes)";
        failedAny = true;
        continue;
      }
      for (auto [i, op] : llvm::enumerate(kernels)) {
        std::string name = fn.getSymName().str();
        if (kernels.size() > 1)
          name += "_" + std::to_string(i);
        // `f` with two kernels and a function named `f_0` would both make
        // `f_0`; a host could then not tell them apart.
        if (!isKernelName(name) || !kernelNames.insert(name).second) {
          op->emitOpError()
              << "would be kernel '" << name
              << "', a name another kernel of this module has "
                 "or that is not a C identifier of at most "
              << kMaxKernelNameLength << " characters; rename the function";
          failedAny = true;
          continue;
        }
        if (failed(buildKernel(b, module, target, name, op)))
          failedAny = true;
      }
    }
    if (failedAny)
      signalPassFailure();
  }

  /// Dynamic shared memory one block of the target chip may use, when the
  /// chip has a target description.
  std::optional<int64_t> sharedMemoryLimit;
  /// The PTX features of the kernels' target.
  std::string features;

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
      kernel = buildFlashAttentionKernel(b, gpuModule, name,
                                         cast<scf::ForallOp>(op), chip, abi);
    }
    if (failed(kernel)) {
      gpuModule.erase();
      return failure();
    }
    abi.name = name.str();
    // Tile options can ask for more shared memory than the chip gives a
    // block (block-kv = 1024 at d = 128 is 1.13 MB): refused here, not at
    // launch.
    if (sharedMemoryLimit &&
        abi.dynamicSharedMemoryBytes > *sharedMemoryLimit) {
      op->emitOpError() << "needs " << abi.dynamicSharedMemoryBytes
                        << " bytes of shared memory per block; " << chip
                        << " gives a block at most " << *sharedMemoryLimit
                        << " (choose smaller tiles)";
      gpuModule.erase();
      return failure();
    }
    // TMA into CTA shared memory needs PTX 8.6: with less LLVM aborts in
    // instruction selection, so it is refused here.
    bool tma = llvm::any_of(abi.params, [](const ABIParam &p) {
      return p.kind == ABIParam::Kind::TensorMap;
    });
    if (tma && ptxVersionOf(features) < kTmaPtxVersion) {
      op->emitOpError() << "is lowered to a kernel that loads by TMA, which "
                           "needs PTX ISA 8.6 (features = \"+ptx86\"); the "
                           "target has features = \""
                        << features << "\"";
      gpuModule.erase();
      return failure();
    }
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
