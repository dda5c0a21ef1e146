//===- Passes.td - attnc conversion passes -----------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_PASSES_TD
#define ATTNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttncConvertToGPU : Pass<"attnc-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower flash-form attention and attnc.fusion ops to GPU kernels";
  let description = [{
    Every kernel-forming op of every function becomes one `gpu.func` kernel
    in its own `gpu.module` (so each kernel gets its own PTX and cubin),
    carrying the NVVM target of `chip`.

    Attention: the flash form (an `scf.forall` holding
    `attnc.online_attention`, as --attnc-online-softmax writes it or as
    written by hand) is lowered as it is given, piece by piece:
    - each forall dimension becomes the grid dimension its
      `#gpu.block<x|y|z>` mapping names and its induction variable that
      block index (the host computes the extent from the contract's sizes);
    - index values of the form (tile starts and extents, loop bounds, the
      GQA head map) are rebuilt in the kernel from the block indices and the
      size parameters, by cloning their computation;
    - each K/V `scf.for` becomes a kernel loop over the same tiles. Where
      its tiles may be partial (`min(block_kv, Skv - kv_start)` rows), an
      unmasked loop is split into full tiles, without a bounds test, and a
      bounds-checked tail; a masked loop adds the bounds test to its mask in
      every step. Consecutive loops share one K/V pipeline;
    - each `attnc.online_attention` step becomes the score stage between
      S = Q K^T and P V: scale, the step's own score modifier and mask
      regions evaluated per score element on absolute positions, online
      softmax;
    - the finalize and the inserts become the stores of O and of the
      logsumexp. The logsumexp is always written, for the rows of O, even
      when the forall no longer returns it.
    The forall's `#attnc.flash_config` gives the tiles, warps and pipeline
    depth, and its `strategy` picks the tile strategy that moves and
    multiplies the tiles: `mma_sync` (cp.async into padded shared memory,
    ldmatrix, mma.sync m16n8k16; sm_80 and later) today.

    A form the back-end cannot lower is refused with an error naming the op
    and the rule, never partly lowered: a forall without
    `attnc.flash_config` or a mapping of its dimensions to distinct blocks,
    one not counting from 0 in steps of 1, or one with an extent the host
    cannot compute (it must be a constant, a batch, head or sequence extent
    of Q, K or V, or a ceildiv of one); slice rows that disagree with `flash_config`; a K/V
    loop whose step is not 1, with more than one step, or with ops other
    than its K/V slices and index computations; a K/V tile of iteration j
    that does not start at row t * block_kv, t being j or an index
    computation of j in the loop (a loop that visits tiles out of order;
    or whose step's `kv_start` says otherwise) or whose rows are neither
    block_kv nor
    min(block_kv, Skv - kv_start); steps that differ in scale, run-time
    scale or the presence of a score modifier; a recurrence that does not
    start from acc = 0, max = -inf, sum = 0; ops other than arith and math
    in a mask or score region; an index value the kernel cannot rebuild;
    any other op in the forall body; a value head dim unlike the query's;
    and shapes the tile strategy cannot build (mma_sync: head dim 64 or
    128, bf16 or f16, 16 or 32 query rows per warp, 2 stages). An
    `attnc.attention` left in a function is an error too: run
    --attnc-online-softmax first.

    Fusions: each `attnc.fusion` becomes a row kernel (16-byte accesses;
    rows of at most a warp's accesses packed several to a 256-thread block
    and reduced by shuffles within their lanes, longer rows a block each,
    reduced through shuffles and shared memory); its
    parameters take their names from the source function's `attnc.name`
    argument and result attributes. Any other attnc op left at the top of a
    function is an error naming it: it has no kernel of its own.

    Kernels take bare pointers, sizes and strides. Each kernel's
    `gpu.module` carries its launch contract as the typed attribute
    `attnc.launch_contract = #attnc.launch_contract<...>`
    (docs/launch-contract.md): the parameters in launch order, the grid and
    block, the dynamic shared memory, the rules on size symbols (an
    attention kernel with dynamic head counts requires `divisible(H, Hkv)`)
    and what was compiled in (`attrs`). The host functions are left as they
    are: attnc-compile writes the manifest a host needs from the contracts.
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
    Option<"ptxFeatures", "features", "std::string", /*default=*/"\"\"",
           "PTX ISA features of the NVVM target (default: what the chip's "
           "kernels need, e.g. +ptx86 on sm_90a for TMA into CTA shared "
           "memory)">,
    Option<"fusionAccessesPerThread", "fusion-accesses-per-thread", "int64_t",
           /*default=*/"4",
           "16-byte accesses per thread and full-shape input in row kernels">,
  ];
}

def AttncGridConstantTensormaps
    : Pass<"attnc-grid-constant-tensormaps", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the kernels' TMA tensor maps as grid-constant "
                "by-value parameters";
  let description = [{
    A `tensormap` parameter of a launch contract is a 128-byte
    `CUtensorMap` that the host passes by value; TMA instructions take its
    address in the kernel parameter space (a `__grid_constant__` parameter
    in CUDA C++). `gpu.func` cannot carry that attribute in MLIR 22, so the
    kernel builder declares the parameter as a generic `!llvm.ptr`, and this
    pass, run after `convert-gpu-to-nvvm` (when the kernel is an
    `llvm.func` with `nvvm.kernel`), marks each argument that the gpu.module's
    `attnc.launch_contract` names a tensormap `llvm.byval =
    !llvm.array<128 x i8>`, `llvm.align = 64` and `nvvm.grid_constant`.
    NVPTX then declares `.param .align 64 .b8 [128]` and takes its generic
    address with `cvta.param`.

    A tensormap argument that is not a generic pointer, or a kernel still a
    `gpu.func`, is an error: the map would otherwise be read through a
    pointer the host never passes.

    Example: with `params = [tensor<"k", ...>, tensormap<"k.map", tensor =
    "k", ...>]`,
    ```mlir
    llvm.func @attn(%k: !llvm.ptr<1>, %map: !llvm.ptr) attributes {nvvm.kernel}
    ```
    becomes
    ```mlir
    llvm.func @attn(%k: !llvm.ptr<1>, %map: !llvm.ptr {llvm.align = 64 : i64,
        llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
        attributes {nvvm.kernel}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AttncCalibrationKernels
    : Pass<"attnc-calibration-kernels", "::mlir::ModuleOp"> {
  let summary = "Add the microbenchmark kernels the cost model is "
                "calibrated with";
  let description = [{
    Appends to the module one `gpu.module` per microbenchmark, each with a
    launch contract of kind `"calibration"`, for `attnc-compile
    --calibration` to compile and `python3 -m attnc.calibrate` to time
    (docs/cost-model.md). Each kernel keeps one unit of the SM busy:
    `calibrate_mma_sync` (mma.sync m16n8k16 bf16), `calibrate_wgmma`
    (wgmma m64n256k16 bf16 from shared memory; only for a chip with wgmma),
    `calibrate_exp` (the online softmax's per-score max, fma, ex2 and add),
    `calibrate_ldmatrix` (shared-memory reads by ldmatrix.x4),
    `calibrate_copy` (HBM, 16-byte loads and stores), `calibrate_reduce`
    (`red.global.add.v2.f32`, as the backward's dQ), `calibrate_latency`
    (a pointer chase) and `calibrate_empty` (N empty CTAs: launch overhead and
    the rate CTAs start at). The compute
    kernels take `out` (one f32 per thread, so nothing is dead), `N` and an
    iteration count `iters`; their grids are a multiple of the SM count.

    Example: `attnc-opt --attnc-calibration-kernels` on an empty module
    gives
    ```mlir
    gpu.module @calibrate_mma_sync_module [#nvvm.target<...>] attributes {
        attnc.launch_contract = #attnc.launch_contract<
          kernel = @calibrate_mma_sync, kind = "calibration",
          params = [tensor<"out", f32, [N], output, align = 16>,
                    size<"N", i64>, scalar<"iters", i64>],
          grid = [[device(num_sms)], [2], []], block = [256, 1, 1], ...>} {
      gpu.func @calibrate_mma_sync(...) kernel { ... nvvm.mma.sync ... }
    }
    ```
  }];
  let dependentDialects = ["::attnc::AttncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "the chip the kernels are compiled for">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "PTX features of the NVVM target (default: the chip's)">,
  ];
}

#endif // ATTNC_CONVERSION_PASSES_TD
