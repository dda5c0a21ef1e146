//===- Pipelines.h - the attnc compilation pipeline -------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The graph-to-GPU pipeline as one builder function. attnc-opt
// (--attnc-pipeline), attnc-compile and the Python package (through
// attnc-compile) all run this same function.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_PIPELINES_PIPELINES_H
#define ATTNC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace attnc {

/// What --attnc-pipeline's `binary` option serializes the kernels to.
enum class KernelBinary { None, Isa, Bin };

struct AttncPipelineOptions
    : public mlir::PassPipelineOptions<AttncPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("target chip"), llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("target device (h100, h200, a100) or chip whose "
                     "description gives the chip and the tiling defaults; "
                     "overrides chip (empty: chip)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("query rows per attention tile (0: target default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("key/value rows per attention tile (0: target default)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("attention tile strategy: mma_sync, wgmma, wgmma_ws, "
                     "wgmma_ws_persistent or mma_sync_unaligned (empty: "
                     "the target's default)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("K/V tiles in flight in an attention kernel's shared "
                     "memory (0: target default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyWarps{
      *this, "key-warps",
      llvm::cl::desc("warps splitting each K/V tile's keys in an attention "
                     "kernel (mma_sync; 0: the target's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> interleaveKV{
      *this, "interleave-kv",
      llvm::cl::desc("mma_sync attention kernels interleave their K and V "
                     "loads in one ring of `stages` tile buffers (default: "
                     "the target's decode choice with split-kv, else off)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> overlapPV{
      *this, "overlap-pv",
      llvm::cl::desc("wgmma attention kernels overlap P V of a step with the "
                     "next step's softmax: on or off (empty: the target's "
                     "choice)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> sharedP{
      *this, "shared-p",
      llvm::cl::desc("overlapped wgmma_ws attention kernels read P V's P "
                     "from two shared-memory buffers instead of registers"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> mmaRowSums{
      *this, "mma-row-sums",
      llvm::cl::desc("wgmma attention kernels take the softmax's row sums "
                     "on the tensor cores (P against ones) instead of by f32 "
                     "adds"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> l2GroupMib{
      *this, "l2-group-mib",
      llvm::cl::desc("attention grids that run longest first take their "
                     "heads in groups whose K and V (a backward's: whose "
                     "query rows) fit this many MiB (0: a batch's heads "
                     "together; -1: the target's choice)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> fallback{
      *this, "fallback",
      llvm::cl::desc("give attention kernels that read by TMA an "
                     "mma_sync_unaligned fallback kernel for tensors TMA "
                     "cannot address"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> oneMaskedLoop{
      *this, "one-masked-loop",
      llvm::cl::desc("attention visits every tile that tests scores "
                     "(masked tiles of both sides of the fully visible ones, "
                     "a short tail tile) in one loop (--attnc-online-softmax "
                     "one-masked-loop)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> backward{
      *this, "backward",
      llvm::cl::desc("add the backward of each attention function "
                     "(--attnc-derive-backward) and compile it too"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> backwardStrategy{
      *this, "backward-strategy",
      llvm::cl::desc("tile strategy of the backward kernels: mma_sync, "
                     "wgmma or wgmma_persistent (sm_90a; default: the "
                     "target's)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> sizeVariants{
      *this, "size-variants",
      llvm::cl::desc("compile kernels the target runs faster with another "
                     "configuration at some sizes in versions, a host "
                     "choosing by size (--attnc-online-softmax "
                     "size-variants; off under split-kv)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> splitKV{
      *this, "split-kv",
      llvm::cl::desc("split the K/V loops of forward attention into at most "
                     "this many parallel parts merged by a combine kernel "
                     "(--attnc-split-kv, for decoding; 0: no split)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> unsplit{
      *this, "unsplit",
      llvm::cl::desc("with split-kv: keep each split function's unsplit twin "
                     "@<name>_unsplit, which hosts run when the split rule "
                     "gives one split (default: on)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> gqaGroup{
      *this, "gqa-group",
      llvm::cl::desc("with split-kv: pack attentions whose head counts are "
                     "known only at run time in GQA groups of this many "
                     "query heads (--attnc-pack-gqa group-size; the kernels "
                     "then require H = G * Hkv; 0: no packing of run-time "
                     "heads)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("run the attention fusion and online-softmax rewrite "
                     "(off: the naive graph, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> verifyNoGlobalScores{
      *this, "verify-no-global-scores",
      llvm::cl::desc("fail when a S_q x S_kv buffer reaches global memory"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> toGPU{
      *this, "to-gpu",
      llvm::cl::desc("build the GPU kernels and lower them to NVVM (off: "
                     "stop after the fused, tiled graph)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> toNVVM{
      *this, "to-nvvm",
      llvm::cl::desc("lower the GPU kernels to NVVM (off: stop at the "
                     "gpu-dialect kernels and their checks; a binary other "
                     "than none needs NVVM and turns it on)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> fusionAccessesPerThread{
      *this, "fusion-accesses-per-thread",
      llvm::cl::desc("16-byte accesses per thread and full-shape input in "
                     "the row kernels of attnc.fusion"),
      llvm::cl::init(4)};
  /// An enumerated option, so that a misspelt value is a parse error (a
  /// non-zero exit) instead of a diagnostic from a pass that goes on.
  PassOptions::Option<KernelBinary> binary{
      *this, "binary", llvm::cl::desc("serialize the kernels"),
      llvm::cl::init(KernelBinary::None),
      llvm::cl::values(
          clEnumValN(KernelBinary::None, "none", "keep the NVVM IR"),
          clEnumValN(KernelBinary::Isa, "isa", "PTX"),
          clEnumValN(KernelBinary::Bin, "bin", "cubin (runs ptxas)"))};
  PassOptions::Option<std::string> cudaRoot{
      *this, "cuda-root",
      llvm::cl::desc("CUDA toolkit for libdevice and ptxas (empty: "
                     "CUDA_ROOT, CUDA_HOME, CUDA_PATH, /usr/local/cuda)"),
      llvm::cl::init("")};
};

/// The CUDA toolkit directory: `explicitRoot` if set, else the first of
/// CUDA_ROOT, CUDA_HOME, CUDA_PATH, else /usr/local/cuda.
std::string findCudaRoot(llvm::StringRef explicitRoot);

/// Appends the lowering of the kernels (inside every gpu.module) to NVVM.
void buildKernelToNVVMPipeline(mlir::OpPassManager &pm);

/// The name of the target the pipeline compiles for: `target`, else `chip`.
std::string getTargetName(const AttncPipelineOptions &options);

/// Appends the graph-to-GPU pipeline to `pm` (which runs on a module).
void buildAttncPipeline(mlir::OpPassManager &pm,
                        const AttncPipelineOptions &options);

/// Registers --attnc-pipeline.
void registerAttncPipeline();

} // namespace attnc

#endif // ATTNC_PIPELINES_PIPELINES_H
