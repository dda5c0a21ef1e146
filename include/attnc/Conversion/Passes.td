//===- Passes.td - attnc conversion passes -----------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_PASSES_TD
#define ATTNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttncConvertToGPU : Pass<"attnc-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn fused attention and attnc.fusion ops into GPU kernels";
  let description = [{
    Every kernel-forming op of every function becomes one `gpu.func` kernel
    in its own `gpu.module` (so each kernel gets its own PTX and cubin),
    carrying the NVVM target of `chip`:
    - the flash form of attention (the `scf.forall` over query tiles that
      --attnc-online-softmax produces) becomes a FlashAttention-2 style kernel
      (K/V tiles staged in shared memory, QK^T and PV through ldmatrix and
      mma.sync, softmax statistics in registers);
    - each `attnc.fusion` becomes a row kernel (one CTA per row, 16-byte
      accesses, reductions through shuffles and shared memory).
    Kernels take bare pointers, sizes and strides; each kernel's
    `gpu.module` carries its launch contract as the typed attribute
    `attnc.launch_contract` (docs/launch-contract.md). Fusion parameters
    take their names from the source function's `attnc.name` argument and
    result attributes. Any other attnc op left at the top of a function is an
    error naming it: it has no kernel of its own (run the fusion passes).
    The host functions are left as they are: attnc-compile writes the
    manifest a host needs instead.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target chip of the NVVM target attached to the kernels">,
    Option<"ptxFeatures", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX ISA features (sm_90a needs PTX 8.0)">,
    Option<"fusionAccessesPerThread", "fusion-accesses-per-thread", "int64_t",
           /*default=*/"4",
           "16-byte accesses per thread and full-shape input in row kernels">,
  ];
}

#endif // ATTNC_CONVERSION_PASSES_TD
