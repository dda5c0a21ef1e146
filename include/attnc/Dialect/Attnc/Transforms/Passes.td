//===- Passes.td - attnc passes ----------------------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pass flags are part of attnc's public contract (shared/design.md).
// Each pass is a thin driver over a function in Transforms.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_TD
#define ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttncFuseAttention : Pass<"attnc-fuse-attention"> {
  let summary = "Fuse matmul, scale, mask, softmax, matmul into attnc.attention";
  let description = [{
    Recognizes attention in the spellings people write: softmax as one op or
    spelled out (reduce_max, sub, exp, reduce_sum, div); the scale applied to
    the scores or folded into Q; a causal mask as a select on a comparison of
    row and column iotas; no mask; K and V heads broadcast by
    repeat_interleave for grouped-query attention. The chain is replaced by
    one `attnc.attention`. A chain whose intermediates have other users (the
    scores or probabilities are also returned, say) is left alone: fusing it
    would still need the S x S matrix.

    The `scale` attribute is the product of every splat-constant
    multiplication (or division) on the scores and on Q. A multiplication by
    a run-time scalar, `attnc.mul %s, %t` (either order) with
    `%t = tensor.from_elements %f : tensor<f32>` (or a one-element tensor
    of f16/bf16, widened exactly), becomes the `runtime_scale` operand; the
    product of several such scalars is computed once with `arith.mulf`. A
    0-d tensor that is itself a function argument is not a run-time scale:
    reading it would need a load from device memory. The mask fill must be
    -inf or a value <= -1e9 (a "safe" finite -inf), and -inf when a
    run-time scale multiplies the masked scores (a finite fill times an
    unknown factor need not stay a mask); iota masks other than top-left
    causal (anti-causal, strictly causal) are left alone, as are chains
    whose final matmul widens bf16 inputs to an f32 result (the fused op
    returns Q's element type) and chains of rank other than 4. A causal mask
    becomes the op's mask region: top-left `j <= i`, or bottom-right
    `j + Sq <= i + Skv`.

    Bottom-right causal is written as PyTorch's `tril(diagonal=Skv - Sq)`:
    the row iota shifted by an i64 offset, `attnc.add %rows, %off` (either
    order; or `attnc.sub %cols, %off` on the column side) compared `ge`
    with the column iota, where `%off` is `tensor.from_elements` of
    `Skv - Sq` (`arith.subi` of `tensor.dim`s of K or V and of Q, through
    `arith.index_cast`s) or, with static sequence lengths, an i64 splat
    constant equal to `Skv - Sq`. An offset of 0 is top-left. Any other
    shift (one not provably `Skv - Sq`, lengths read off the scores, which
    would keep them alive) is left alone.
  }];
  let dependentDialects = ["::attnc::AttncDialect"];
}

def AttncFuseElementwise : Pass<"attnc-fuse-elementwise"> {
  let summary = "Group maximal chains of elementwise and row ops into attnc.fusion";
  let description = [{
    Each maximal connected group of elementwise, broadcast and row-reduction
    ops (including softmax, layer_norm, rms_norm and dropout) becomes one
    `attnc.fusion`, which the back-end turns into one kernel that reads its
    inputs once and writes its results once. Values used outside the group
    become results of the fusion. Ops that are not elementwise (matmul,
    attention) bound the groups.
  }];
  let dependentDialects = ["::attnc::AttncDialect"];
}

def AttncOnlineSoftmax : Pass<"attnc-online-softmax"> {
  let summary = "Rewrite attnc.attention into its flash (online-softmax) form";
  let description = [{
    Replaces each `attnc.attention` by an `scf.forall` over (batch, head,
    query tile), mapped to `#gpu.block<z>`, `#gpu.block<y>`,
    `#gpu.block<x>` (query tiles on grid x, so consecutive CTAs share K/V in
    L2). Its body extracts the query tile (`tensor.extract_slice`, rank-reduced
    to `[rows, d]`; `rows = min(block-q, Sq - q0)`), runs an `scf.for` over
    K/V tiles whose `iter_args` are the accumulator, the running max and the
    running sum, one `attnc.online_attention` per tile, then divides once
    (`attnc.online_attention_finalize`) and writes its tile of O and of the
    per-row logsumexp with `tensor.parallel_insert_slice`. The forall's
    results are O (which replaces the attention) and the logsumexp
    (`[B, H, Sq]`, f32) that a backward pass needs. With GQA, query head `h`
    reads K/V head `h floordiv (H / Hkv)`.

    With `causal` (key j visible to query i iff j <= i), the K/V loop is
    split: tiles wholly on or below the diagonal
    (`[0, min(ceildiv(Skv, block-kv), (q0 + 1) floordiv block-kv))`) run
    without the mask, tiles crossing it run with `causal`, and tiles wholly
    above it (from `min(ceildiv(Skv, block-kv), ceildiv(min(q0 + block-q,
    Sq), block-kv))` on) are never visited. Index arithmetic is `affine`;
    static extents fold to constants.

    Tile sizes come from the target description of `chip`; `block-q` and
    `block-kv` override them. They are also recorded on the forall as
    `attnc.block_q` and `attnc.block_kv`, for convenience only: the slice
    sizes and loop bounds are the source of truth. An unknown chip is an
    error that lists the known ones.

    Example (non-causal, 64 x 64 tiles, abridged):

    ```mlir
    %r:2 = scf.forall (%b, %h, %t) in (%B, %H, %nq)
        shared_outs(%o = %o_init, %lse = %lse_init) -> (...) {
      %q = tensor.extract_slice %query[%b, %h, %q0, 0] [1, 1, %mq, 128] [1, 1, 1, 1]
      %s:3 = scf.for %j = %c0 to %nkv step %c1
          iter_args(%acc = %acc0, %m = %m0, %l = %l0) -> (...) {
        %a:3 = attnc.online_attention %q, %k, %v, %acc, %m, %l at [%q0, %k0] {scale = ...}
        scf.yield %a#0, %a#1, %a#2 : ...
      }
      %out, %lse_tile = attnc.online_attention_finalize %s#0, %s#1, %s#2 : ...
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, %mq, 128] [1, 1, 1, 1]
        tensor.parallel_insert_slice %lse_tile into %lse[%b, %h, %q0] [1, 1, %mq] [1, 1, 1]
      }
    } {attnc.block_kv = 64, attnc.block_q = 64,
       mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
    ```
  }];
  let dependentDialects = ["::attnc::AttncDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::gpu::GPUDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target (a chip such as sm_90a, or a device such as h200) whose "
           "description gives the default tile sizes">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "query rows per tile (0: from the target description)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "key/value rows per tile (0: from the target description)">,
  ];
}

def AttncVerifyNoGlobalScores : Pass<"attnc-verify-no-global-scores",
                                     "::mlir::ModuleOp"> {
  let summary = "Fail if a buffer in global memory grows as S_q * S_kv";
  let description = [{
    Looks at the IR, not at markers: every buffer that reaches global memory
    gets a symbolic size as a product of the dynamic dimensions of the
    function's arguments (attnc/Analysis/SymbolicShapes.h). Global buffers
    are the function's arguments and results, the results of top-level ops
    that become kernels (attnc ops, attnc.fusion, attnc.attention, the flash
    form's scf.forall), top-level tensor.empty destinations, memref.alloc /
    gpu.alloc results and gpu.launch_func memref operands; tiles inside an
    scf.forall body and a fusion's intermediates are on chip. A buffer whose
    element count does not divide (up to a constant) that of some argument
    or result grows faster than every input and output, as the
    B x H x S_q x S_kv score matrix does; it is reported on its defining op
    with its symbolic size. With static shapes the rule compares element
    counts with the largest argument or result, and also rejects a rank-4
    buffer whose last two extents are the sequence extents (dim 2) of rank-4
    arguments. Sizes the analysis cannot derive are not reported.

    On GPU-level IR (after --attnc-convert-to-gpu, and after the NVVM
    lowering too; the pipeline runs the check on both levels) it also looks
    at every kernel of every gpu.module, `gpu.func` with `kernel` and
    `llvm.func` with `nvvm.kernel`: each write to global memory (memref,
    vector and llvm stores, atomics, TMA stores and reductions, bulk copies,
    global-writing instructions in inline PTX) is traced to a parameter of
    the kernel's launch contract (`attnc.launch_contract` on its gpu.module)
    and must land in an output tensor, the tensor map of an output, or a
    workspace, so a kernel has no hidden global scratch; a write the trace
    cannot attribute is an error naming the op. A kernel may not allocate
    global memory or run-time-sized on-chip memory, and no output tensor or
    workspace may grow faster than every input tensor (a [B, H, Sq, Skv]
    output next to Q [B, H, Sq, d] is a score matrix).
    docs/launch-contract.md lists what the trace accepts.
  }];
}

def AttncReportIntensity : Pass<"attnc-report-intensity", "::mlir::ModuleOp"> {
  let summary = "Report FLOPs, HBM bytes, arithmetic intensity and regime per kernel";
  let description = [{
    For every kernel-to-be (each attention, fusion, matmul or unfused
    elementwise op), counts the FLOPs and the minimal HBM bytes (each input
    read once, each output written once), and prints the arithmetic
    intensity, the device's ridge point, the regime (compute-, bandwidth- or
    overhead-bound, counting launch overhead) and a predicted time
    max(FLOPs / peak, bytes / bandwidth, launch overhead); a total per
    function (kernels run back to back), the bytes of score-sized (S_q x
    S_kv) traffic and the matmul FLOPs per score byte (the notes' unfused
    intensity, 64 at d = 128 bf16), and for attention the score matrix it
    keeps on chip and the sequence length past which it is compute-bound on
    each built-in device. The ceilings are the roofline of the target
    description (`attnc/Target/TargetDescription.h`) that `device` names;
    `peak-tflops`, `bandwidth-tbps` and `launch-overhead-us` override them. Dynamic sizes are bound by the options by
    position: [B, H, S, d] for rank 4, [B, S, d] for rank 3, [S, d] for
    rank 2; a sequence dim of an argument that feeds K or V (or a matmul's
    rhs) takes seq-len-kv. The report is a table or JSON on stdout; the IR
    is not changed.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"h100\"",
           "target whose roofline prices the kernels: a device (h100, h200, "
           "a100), a chip (its default device), or custom (give the "
           "ceilings)">,
    Option<"peakTflops", "peak-tflops", "double", /*default=*/"0",
           "override the dense bf16/f16 tensor-core peak, TFLOP/s">,
    Option<"bandwidthTBps", "bandwidth-tbps", "double", /*default=*/"0",
           "override the HBM bandwidth, TB/s">,
    Option<"launchOverheadUs", "launch-overhead-us", "double",
           /*default=*/"0", "override the per-kernel launch overhead, us">,
    Option<"format", "format", "std::string", /*default=*/"\"table\"",
           "table or json">,
    Option<"batch", "batch", "int64_t", /*default=*/"1",
           "value of a dynamic batch dimension">,
    Option<"heads", "heads", "int64_t", /*default=*/"1",
           "value of a dynamic head dimension">,
    Option<"seqLen", "seq-len", "int64_t", /*default=*/"4096",
           "value of dynamic sequence dimensions">,
    Option<"seqLenQ", "seq-len-q", "int64_t", /*default=*/"0",
           "value of dynamic query sequence dimensions (0: seq-len)">,
    Option<"seqLenKV", "seq-len-kv", "int64_t", /*default=*/"0",
           "value of dynamic key/value sequence dimensions (0: seq-len)">,
  ];
}

#endif // ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_TD
