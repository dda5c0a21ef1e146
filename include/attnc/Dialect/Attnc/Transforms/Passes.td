//===- Passes.td - attnc passes ----------------------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pass flags are part of attnc's public contract: each has a lit test
// that runs it (test/pass-flags.test checks it).
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
    unknown factor need not stay a mask). Chains whose final matmul widens
    bf16 inputs to an f32 result (the fused op returns Q's element type) and
    chains of rank other than 4 are left alone. A causal mask becomes the
    op's mask region: top-left `j <= i`, or bottom-right
    `j + Sq <= i + Skv`.

    Any other mask of positions becomes the mask region op for op: a select
    whose condition is computed from iotas of the scores' dimensions, i64
    splat constants and run-time i64 scalars with attnc's integer arithmetic
    (add, sub, mul, floor div, min, max, abs), `attnc.cmp` and
    `attnc.and`/`or`/`not` (a sliding window
    `cols <= rows and rows - cols < W`, chunks `rows / C == cols / C`, a
    prefix `cols <= rows or cols < P`). Comparisons become signed `index`
    comparisons. Elementwise float steps on the scaled scores before the
    mask (tanh, neg, exp, abs, and add/sub/mul/div/min/max with a splat
    constant: a softcap `c * tanh(s / c)`) become the score region; the
    scales next to Q K^T stay the op's scale, later constant scales join
    the modifier, and a modifier applied after the mask (which would change
    the -inf of masked scores) or a run-time scale inside one is left alone.

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
  let dependentDialects = ["::attnc::AttncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def AttncDeriveBackward : Pass<"attnc-derive-backward", "::mlir::ModuleOp"> {
  let summary = "Add the backward of each attention function, P recomputed";
  let description = [{
    For each function `f` whose one result is an `attnc.attention` of its
    arguments Q, K and V, adds `f_backward(q, k, v, o, lse, dO, ...) ->
    (dq, dk, dv)` after it: `o` and `lse` are what `f`'s kernel writes
    (its result and the logsumexp, `[B, H, Sq]` f32), `dO` the gradient of
    the result, and the trailing arguments are those of `f`'s other
    arguments that the attention uses (a run-time scale, a window size).
    The body is the graph of the backward with recomputation:

    ```
    delta    = reduce_sum(cast<f32>(dO) * cast<f32>(o))   [B, H, Sq, 1]
    dq32, dk, dv = attnc.attention_grad q, k, v, dO, lse, delta
    dq       = cast(dq32)
    ```

    `--attnc-fuse-elementwise` makes the first line and the last one row
    kernels; `--attnc-online-softmax` gives `attnc.attention_grad` its flash
    form. The gradient has the forward's scale, run-time scale and mask
    (the mask region and the values it uses from above, cloned). A function
    the pass cannot differentiate is an error naming the reason: a score
    modifier (no derived gradient yet), more than one attention, Q, K or V
    computed inside the function, results other than the attention's, or a
    name `f_backward` already taken.
  }];
  let dependentDialects = ["::attnc::AttncDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
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
    Replaces each `attnc.attention` by its flash (online-softmax) form, an
    `scf.forall` over (batch, head, query tile) mapped to `#gpu.block<z>`,
    `#gpu.block<y>`, `#gpu.block<x>` (query tiles on grid x, so consecutive
    CTAs share K/V in L2). Its body extracts the query tile
    (`tensor.extract_slice`, rank-reduced to `[rows, d]`; `q0 = t * block_q`,
    `rows = min(block_q, Sq - q0)`), runs one or two `scf.for` loops over
    K/V tile indices whose `iter_args` are the accumulator, the running max
    and the running sum, then divides once
    (`attnc.online_attention_finalize`) and writes its tile of O and of the
    per-row logsumexp with `tensor.parallel_insert_slice`. The forall's
    results are O (which replaces the attention) and the logsumexp
    (`[B, H, Sq]`, f32) that a backward pass needs.

    Iteration `j` of a K/V loop slices K and V at row `kv0 = j * block_kv`
    (`min(block_kv, Skv - kv0)` rows, or `block_kv` when every tile is
    full) of K/V head `h floordiv (H / Hkv)` (grouped-query attention), and
    runs one step, `attnc.online_attention ... at [%b, %h, %q0, %kv0]`: the
    batch, the query head and the absolute first rows of the query and K/V
    tiles, from which the step's mask and score regions get the absolute
    positions `i` and `j` of each score.

    The op's mask region decides the K/V loops. A top-left (`j <= i`) or
    bottom-right (`j + Sq <= i + Skv`) causal mask splits the loop at the
    diagonal. With `delta` = 0 (top-left) or `Skv - Sq` (bottom-right) and
    `numKV = ceildiv(Skv, block_kv)`, tiles
    `[0, unmasked)`, `unmasked = min(numKV, max(0, (q0 + 1 + delta) floordiv
    block_kv))`, lie wholly on the visible side and run without the mask;
    tiles `[unmasked, visited)`, `visited = min(numKV, max(0, ceildiv(q0 +
    rows + delta, block_kv)))`, cross the diagonal and run with the mask
    region; tiles from `visited` on are never visited. Any other mask
    (padding, sliding window, document masks) gives one loop over all
    `numKV` tiles with the mask region in every step; no mask, one loop
    without. The score modifier region, if any, is cloned into every step
    of every loop. Index arithmetic is `affine`; static extents fold to
    constants.

    Serving forms (docs/decode.md): with `kv_lengths`, the body reads the
    batch's length once, `keys = min(kv_lengths[b], Skv)`, and bounds every
    K/V loop and tail tile by it instead of Skv; a mask or score region's
    reads of a per-sequence tensor at the batch (`tensor.extract %t[%b]`)
    are hoisted out of the steps to that one read. A ragged batch (Q, K
    and V `attnc.ragged_view`, the result read by one `attnc.ragged_pack`
    of Q's sequences) becomes a form over the packed rows: tiles start at
    `starts[b] + q0` and `kv_starts[b] + kv0`, are bounded by the
    sequence's rows, and O `[T, H, dv]` and the logsumexp `[T, H]` are
    written packed; the views and the pack go. Both pick the mma_sync
    strategy when no option chooses one (its loads go row by row).

    The kernel configuration is written on the forall as
    `attnc.flash_config = #attnc.flash_config<...>`: the op's own `config`
    when it has one, else the target description of `chip` for the op's
    head dimension, with `block-q` and `block-kv` overriding its tiles (the
    warps then follow from `block_q`). --attnc-convert-to-gpu reads it (its
    `strategy` picks the tile strategy) and refuses a form whose slices
    disagree with it. An unknown chip is an error that lists the known ones.

    Size variants: where the target runs a kernel faster with another
    configuration at some sizes (on sm_90a, the d <= 64 backward with
    wgmma, unmasked or causal: 128 x 128 tiles from Sq = 4096 on, 64 x 64
    below; the d = 128
    forward, unmasked or causal: without overlap_pv up to 1024 keys, 2048
    causal), an op without a config is built in versions: `scf.if` on the
    size (`tensor.dim %q, 2 >= 4096`, `tensor.dim %k, 2 <= 1024`) with
    the variant's flash form in its then region and the default's in its
    else region, each yielding its form's results. With a static size the
    pass picks the one that runs. --attnc-convert-to-gpu builds both
    kernels, the default under the function's kernel name with the other
    as a variant of its launch contract, which a host chooses by size
    (docs/abi.md, "Variants"). `size-variants=false`, `block-q`,
    `block-kv` or (forward) `overlap-pv` build one kernel.
    docs/attention.md specifies the ops and the flash form.

    Example: top-left causal attention on Q, K, V of 1 x 4 x 512 x 64 bf16
    with `block-q=128 block-kv=64` (%query, %key, %value, %o_init, %l_init,
    %zero = 0.0, %ninf = -inf, %c0 and %c1 defined above):

    ```mlir
    %r:2 = scf.forall (%b, %h, %t) in (1, 4, 4)
        shared_outs(%o = %o_init, %l = %l_init) -> (tensor<1x4x512x64xbf16>, tensor<1x4x512xf32>) {
      %q0 = affine.apply affine_map<(d0) -> (d0 * 128)>(%t)
      %qt = tensor.extract_slice %query[%b, %h, %q0, 0] [1, 1, 128, 64] [1, 1, 1, 1]
          : tensor<1x4x512x64xbf16> to tensor<128x64xbf16>
      %acc0 = tensor.splat %zero : tensor<128x64xf32>
      %max0 = tensor.splat %ninf : tensor<128xf32>
      %sum0 = tensor.splat %zero : tensor<128xf32>
      %unmasked = affine.min affine_map<(d0) -> (8, d0 * 2)>(%t)
      %visited = affine.min affine_map<(d0) -> (8, d0 * 2 + 2)>(%t)
      // K/V tiles wholly on the visible side of the diagonal: no mask.
      %s:3 = scf.for %j = %c0 to %unmasked step %c1
          iter_args(%acc = %acc0, %max = %max0, %sum = %sum0)
          -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
        %kv0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
        %kt = tensor.extract_slice %key[%b, %h, %kv0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
            : tensor<1x4x512x64xbf16> to tensor<64x64xbf16>
        %vt = tensor.extract_slice %value[%b, %h, %kv0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
            : tensor<1x4x512x64xbf16> to tensor<64x64xbf16>
        %a:3 = attnc.online_attention %qt, %kt, %vt, %acc, %max, %sum
            at [%b, %h, %q0, %kv0] {scale = 0.125 : f64}
            : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>,
              tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
        scf.yield %a#0, %a#1, %a#2 : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
      }
      // K/V tiles crossing the diagonal: the op's mask region; tiles past it
      // are never visited.
      %m:3 = scf.for %j = %unmasked to %visited step %c1
          iter_args(%acc = %s#0, %max = %s#1, %sum = %s#2)
          -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
        %kv0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
        %kt = tensor.extract_slice %key[%b, %h, %kv0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
            : tensor<1x4x512x64xbf16> to tensor<64x64xbf16>
        %vt = tensor.extract_slice %value[%b, %h, %kv0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
            : tensor<1x4x512x64xbf16> to tensor<64x64xbf16>
        %a:3 = attnc.online_attention %qt, %kt, %vt, %acc, %max, %sum
            at [%b, %h, %q0, %kv0] {scale = 0.125 : f64}
            : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>,
              tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
            mask {
            ^bb0(%mb: index, %mh: index, %mi: index, %mj: index):
              %visible = arith.cmpi ule, %mj, %mi : index
              attnc.yield %visible : i1
            }
        scf.yield %a#0, %a#1, %a#2 : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
      }
      %out, %lse_tile = attnc.online_attention_finalize %m#0, %m#1, %m#2
          : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          -> tensor<128x64xbf16>, tensor<128xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 128, 64] [1, 1, 1, 1]
            : tensor<128x64xbf16> into tensor<1x4x512x64xbf16>
        tensor.parallel_insert_slice %lse_tile into %l[%b, %h, %q0] [1, 1, 128] [1, 1, 1]
            : tensor<128xf32> into tensor<1x4x512xf32>
      }
    } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>,
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
    Option<"strategy", "strategy", "std::string", /*default=*/"\"\"",
           "tile strategy: mma_sync, wgmma, wgmma_ws, wgmma_ws_persistent or mma_sync_unaligned (empty: the target's default; "
           "the wgmma ones need a target with warpgroup MMAs, sm_90a)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "K/V tiles in flight in shared memory (0: the target's default; "
           "the strategy checks what it supports)">,
    Option<"keyWarps", "key-warps", "int64_t", /*default=*/"0",
           "warps that split each K/V tile's keys for every query row "
           "(mma_sync; 0: one, each warp all keys of its rows)">,
    Option<"interleaveKV", "interleave-kv", "bool", /*default=*/"false",
           "mma_sync: K and V tiles take turns in one ring of `stages` "
           "single-tile buffers instead of stages (K, V) pairs">,
    Option<"overlapPV", "overlap-pv", "std::string", /*default=*/"\"\"",
           "wgmma strategies: P V of a step runs during the next step's "
           "softmax, `on` or `off` (empty: the target's choice)">,
    Option<"sharedP", "shared-p", "bool", /*default=*/"false",
           "forward kernels of a warp-specialised wgmma strategy with "
           "overlap_pv read P V's P from two shared-memory buffers instead "
           "of registers (flash_config's shared_p; an error where the "
           "configuration has no overlap_pv)">,
    Option<"mmaRowSums", "mma-row-sums", "bool", /*default=*/"false",
           "forward kernels of a wgmma strategy take the softmax's row sums "
           "on the tensor cores (P against ones, mma.sync) instead of by "
           "f32 adds (flash_config's mma_row_sums; an error where the "
           "configuration has an mma_sync strategy or shared_p)">,
    Option<"l2GroupMib", "l2-group-mib", "int64_t", /*default=*/"-1",
           "a grid that runs longest first (a causal mask) takes its heads "
           "in groups whose K and V (a backward's: whose query rows: Q, dO, "
           "dQ) fit this many MiB, "
           "each group longest first (0: a batch's heads together; -1: the "
           "target's choice)">,
    Option<"fallback", "fallback", "bool", /*default=*/"true",
           "give kernels that read by TMA an mma_sync_unaligned fallback "
           "for tensors TMA cannot address (when its shared memory fits)">,
    Option<"oneMaskedLoop", "one-masked-loop", "bool", /*default=*/"true",
           "every tile that tests scores (masked on either side of the "
           "fully visible ones, as under a sliding window or document ids, "
           "or a short tail tile) is visited in one loop (the forward's "
           "over K/V tiles, the backward's over query tiles), its tile a "
           "function of the visit count, and the unmasked loop's tiles are "
           "whole: one loop body that tests scores per kernel">,
    Option<"backwardStrategy", "backward-strategy", "std::string",
           /*default=*/"\"\"",
           "tile strategy of attnc.attention_grad without a config: mma_sync, "
           "wgmma or wgmma_persistent (sm_90a; empty: the target's "
           "default)">,
    Option<"sizeVariants", "size-variants", "bool", /*default=*/"true",
           "where the target runs a kernel faster with another "
           "configuration at some sizes (the d <= 64 wgmma backward from Sq = "
           "4096 on, the d = 128 forward without overlap_pv up to 1024 keys), "
           "build both in versions under an scf.if on the sizes (unless "
           "block-q, block-kv, overlap-pv or shared-p is given)">,
  ];
}

def AttncPackGQA : Pass<"attnc-pack-gqa"> {
  let summary = "Pack the query heads of each K/V group into the rows of one attention (GQA packing)";
  let description = [{
    For grouped-query attention with few query rows (decoding), rewrites
    each `attnc.attention` whose K/V have fewer heads than Q into an
    attention over a packed view of Q: `[B, H, Sq, d]` viewed as
    `[B, Hkv, G * Sq, d]` (G = H / Hkv; `tensor.expand_shape` to
    `[B, Hkv, G, Sq, d]` then `tensor.collapse_shape`), so that packed row
    `r = g * Sq + i` is query head `hkv * G + g` at position `i`. The
    attention then has as many heads as K/V: the G * Sq rows of a group
    share one query tile and each K/V byte is read once per group instead of
    once per query head. Its result is viewed back to `[B, H, Sq, dv]`. The
    mask and score regions receive the packed coordinates `(b, hkv, r, j)`
    and first rebuild `h = hkv * G + r floordiv Sq` and `i = r mod Sq`, so
    every mask means what it meant (the rebuilt position is not monotone
    in `r`, so interval masks are evaluated on every tile).

    The group size must be known when compiling: from static head counts
    (a model's configuration) or, for head counts known only at run time,
    from `group-size` (then H = G * Hkv is a rule of the kernels, which the
    runtime checks before launching: one compiled module serves every model
    with that group size). It must divide `block-q` or be a multiple of it
    (the grid then counts `ceildiv(Sq, block_q / G)` or `Sq * G / block_q`
    tiles); attentions with equal head counts, one static and one dynamic
    head count, dynamic ones without `group-size`, other group sizes, of a
    tensor with itself, or with more than `max-rows` static query rows are
    left alone.
  }];
  let dependentDialects = ["::attnc::AttncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"16",
           "most static query rows an attention may have to be packed">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "the query tile the flash form will use: groups that neither "
           "divide it nor are a multiple of it are left alone (their packed "
           "tiles would not be a whole number of rows per head; 0: no "
           "check)">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"0",
           "the group size G = H / Hkv of attentions whose head counts are "
           "both dynamic (0 or 1: such attentions are left alone); static "
           "head counts give their own">,
  ];
}

def AttncSplitKV : Pass<"attnc-split-kv"> {
  let summary = "Split the K/V loops of flash forms into parallel parts and a combine (FlashDecoding)";
  let description = [{
    For decoding (a few query rows against a long K/V sequence) a flash form
    has too few (batch, head, query tile) iterations to fill the GPU. This
    pass cuts each row's K/V tiles into `splits` consecutive parts of
    `per = ceildiv(ceildiv(Skv, block_kv), splits)` tiles and turns every
    flash form (the `scf.forall` of `--attnc-online-softmax` with its
    `attnc.flash_config`) into two:

    1. The **partial form**, the same loop nest with a split index: the last
       forall dimension runs over `tiles * splits` (`t = qt * splits + s`),
       every K/V loop's bounds are clamped to `[s * per, (s + 1) * per)`
       (the clamp of each bound, so that chained loops stay chained), and
       the finalize writes the split's normalized output and logsumexp in
       f32 into `o_partial [splits, B, H, Sq, dv]` and
       `lse_partial [splits, B, H, Sq]` at `[s, b, h, q0]`. A split that
       sees no key of a row gives it O = 0 and a logsumexp of -inf.
    2. The **combine form**, an `scf.forall` over (batch, head, row tile of
       `combine-rows` rows) whose body runs the online-softmax merge over the
       splits (`attnc.online_attention_merge` in an `scf.for` from 0 to
       `splits`, starting from acc = 0, max = -inf, sum = 0), finalizes and
       writes O (and the logsumexp when the original form kept it).

    `splits` is `attnc.kv_split_count` of the original grid's block count
    and the K/V tile count, with `max-splits` and `ctas-per-sm` (by default
    the partial blocks whose mma_sync tiles fit in the shared memory of one
    SM of `chip`, at most 2048 threads, and no more than keep the target's
    K/V bytes in flight per SM, counting a block's loads ahead of the tile
    it computes): the host evaluates it for the device it launches on.
    Partials are
    `O(splits * B * H * Sq * dv)` with `splits <= 128`, so no buffer grows as
    `Sq * Skv` (--attnc-verify-no-global-scores proves it). Backward flash
    forms and forms already split are left alone.

    With one split the combine only converts the partial to O, yet costs a
    launch. So (option `unsplit`) a function whose only kernel is the split
    form keeps its unsplit twin: before the rewrite the pass clones it as
    `@<name>_unsplit` (one kernel, the form as it was) and marks the
    partial form `attnc.unsplit = @<name>_unsplit`; the partial kernel's
    launch contract names that kernel, and a host runs it instead of the
    two when the split rule gives 1. Functions with other kernels, names
    too long for a kernel or whose twin's is taken, and runs nested on a
    function (which cannot add one to the module) get no twin.
  }];
  let dependentDialects = ["::attnc::AttncDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::gpu::GPUDialect"];
  let options = [
    Option<"maxSplits", "max-splits", "int64_t", /*default=*/"128",
           "most parts a row's keys are cut into (1 to 128)">,
    Option<"ctasPerSM", "ctas-per-sm", "int64_t", /*default=*/"0",
           "blocks of the partial kernel one SM runs at once, for the split "
           "rule's wave count (0: from the target's shared memory and "
           "bytes in flight per SM and the mma_sync tiles of the form's "
           "config)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target whose description gives the shared memory for "
           "ctas-per-sm=0">,
    Option<"combineRows", "combine-rows", "int64_t", /*default=*/"16",
           "query rows per block of the combine form">,
    Option<"unsplit", "unsplit", "bool", /*default=*/"true",
           "keep each split function's unsplit twin @<name>_unsplit, which "
           "a host runs when the split rule gives one split">,
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
    S_kv) traffic and the matmul FLOPs per score byte (unfused attention's
    intensity, 64 at d = 128 bf16), and for attention the score matrix it
    keeps on chip and the sequence length past which it is compute-bound on
    each built-in device. The ceilings are the roofline of the target
    description (`attnc/Target/TargetDescription.h`) that `device` names;
    `peak-tflops`, `bandwidth-tbps` and `launch-overhead-us` override them.
    Each kernel's time is also predicted by the cost model
    (docs/cost-model.md) from its schedule — the tiles, warps and strategy
    of its `#attnc.flash_config`, the CTAs it launches, its mask — on the
    built-in datasheet device or on a calibrated `device-file`; a line
    `model #i` gives the time, the limiting term and the regime. Dynamic sizes are bound by the options by
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
    Option<"deviceFile", "device-file", "std::string", /*default=*/"\"\"",
           "a device file of measured ceilings (python3 -m attnc.calibrate): "
           "the cost model and the roofline read it instead of `device`'s "
           "datasheet numbers">,
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
