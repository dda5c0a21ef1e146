//===- Pipelines.cpp - the attnc compilation pipeline ---------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// buildAttncPipeline is the one place the order of attnc's passes is
// written down; attnc-opt --attnc-pipeline and attnc-compile both run it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Target/TargetDescription.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>

using namespace mlir;

std::string attnc::findCudaRoot(StringRef explicitRoot) {
  if (!explicitRoot.empty())
    return explicitRoot.str();
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "/usr/local/cuda";
}

void attnc::buildKernelToNVVMPipeline(OpPassManager &pm) {
  // The order that lowers nvgpu, vector, memref views and math together:
  // nvgpu first (it produces vector and memref ops the later passes lower),
  // affine after memref metadata expansion, and the GPU-to-NVVM patterns
  // last, followed by the cleanup that lets the casts reconcile.
  OpPassManager &k = pm.nest<gpu::GPUModuleOp>();
  k.addPass(createConvertNVGPUToNVVMPass());
  k.addPass(createConvertVectorToSCFPass());
  k.addPass(createSCFToControlFlowPass());
  k.addPass(createConvertNVVMToLLVMPass());
  k.addPass(memref::createExpandStridedMetadataPass());
  k.addPass(createLowerAffinePass());
  k.addPass(createArithToLLVMConversionPass());
  k.addPass(createConvertIndexToLLVMPass());
  k.addPass(createConvertGpuOpsToNVVMOps());
  // Kernels are llvm.func now: their tensor maps can become grid-constant.
  k.addPass(createAttncGridConstantTensormaps());
  k.addPass(createCanonicalizerPass());
  k.addPass(createCSEPass());
  k.addPass(createReconcileUnrealizedCastsPass());
}

std::string attnc::getTargetName(const AttncPipelineOptions &options) {
  return options.target.empty() ? options.chip.getValue()
                                : options.target.getValue();
}

void attnc::buildAttncPipeline(OpPassManager &pm,
                               const AttncPipelineOptions &options) {
  // The tiling pass looks the target up by the name given (a device keeps
  // its own description); the GPU lowering needs the chip it resolves to.
  // An unknown name goes through unchanged: --attnc-online-softmax reports
  // it with the known ones.
  std::string target = getTargetName(options);
  FailureOr<TargetDescription> description = lookupTargetDescription(target);
  std::string chip = succeeded(description) ? description->chip : target;
  if (options.fuseAttention)
    pm.addPass(createAttncFuseAttention());
  // The backward is derived from the fused graph, before fusion groups its
  // row computations into kernels.
  if (options.fuseAttention && options.backward)
    pm.addPass(createAttncDeriveBackward());
  pm.addPass(createAttncFuseElementwise());
  if (options.fuseAttention) {
    AttncOnlineSoftmaxOptions tiles;
    tiles.chip = target;
    tiles.blockQ = options.blockQ;
    tiles.blockKV = options.blockKV;
    tiles.strategy = options.strategy;
    // Decoding: the target's decode tiles and mma_sync (its kernels write
    // the f32 partials and address packed rows), unless given.
    if (options.splitKV > 0) {
      if (FailureOr<TargetDescription> desc = lookupTargetDescription(target);
          succeeded(desc)) {
        if (tiles.blockQ == 0)
          tiles.blockQ = desc->decodeBlockQ;
        if (tiles.blockKV == 0)
          tiles.blockKV = desc->decodeBlockKV;
        if (options.keyWarps == 0)
          tiles.keyWarps = desc->decodeKeyWarps;
        if (!options.interleaveKV.hasValue())
          tiles.interleaveKV = desc->decodeInterleaveKV;
      }
      if (tiles.strategy.empty())
        tiles.strategy = "mma_sync";
    }
    tiles.stages = options.stages;
    if (options.keyWarps > 0)
      tiles.keyWarps = options.keyWarps;
    if (options.interleaveKV.hasValue())
      tiles.interleaveKV = options.interleaveKV;
    tiles.overlapPV = options.overlapPV;
    tiles.sharedP = options.sharedP;
    tiles.mmaRowSums = options.mmaRowSums;
    tiles.l2GroupMib = options.l2GroupMib;
    tiles.fallback = options.fallback;
    tiles.oneMaskedLoop = options.oneMaskedLoop;
    tiles.backwardStrategy = options.backwardStrategy;
    // (Split-KV rewrites every forward form: a form in versions would
    // become two kernels per version.)
    tiles.sizeVariants = options.sizeVariants && options.splitKV == 0;
    // Decoding: the query heads of a K/V group share one tile.
    if (options.splitKV > 0) {
      AttncPackGQAOptions pack;
      pack.blockQ = tiles.blockQ;
      pack.groupSize = options.gqaGroup;
      pm.addPass(createAttncPackGQA(pack));
    }
    pm.addPass(createAttncOnlineSoftmax(tiles));
    if (options.splitKV > 0) {
      AttncSplitKVOptions split;
      split.maxSplits = options.splitKV;
      split.unsplit = options.unsplit;
      pm.addPass(createAttncSplitKV(split));
    }
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The check runs on the kernel-level graph: from here on every value that
  // crosses a top-level op is a buffer in global memory, and each such op is
  // exactly one kernel of the GPU lowering below.
  if (options.verifyNoGlobalScores)
    pm.addPass(createAttncVerifyNoGlobalScores());
  if (!options.toGPU)
    return;
  AttncConvertToGPUOptions gpuOptions;
  gpuOptions.chip = chip;
  gpuOptions.fusionAccessesPerThread = options.fusionAccessesPerThread;
  pm.addPass(createAttncConvertToGPU(gpuOptions));
  // Again on the GPU-level IR: the kernels' pointer parameters, allocations
  // and global stores, before NVVM lowering erases the memref view of them.
  if (options.verifyNoGlobalScores)
    pm.addPass(createAttncVerifyNoGlobalScores());
  if (!options.toNVVM && options.binary == KernelBinary::None)
    return;
  buildKernelToNVVMPipeline(pm);
  if (options.binary != KernelBinary::None) {
    GpuModuleToBinaryPassOptions binOptions;
    binOptions.compilationTarget =
        options.binary == KernelBinary::Isa ? "isa" : "bin";
    binOptions.toolkitPath = findCudaRoot(options.cudaRoot);
    pm.addPass(createGpuModuleToBinaryPass(binOptions));
  }
}

void attnc::registerAttncPipeline() {
  PassPipelineRegistration<AttncPipelineOptions>(
      "attnc-pipeline",
      "attnc graph to fused GPU kernels in NVVM (docs/design.md, layers 2-5)",
      buildAttncPipeline);
}
