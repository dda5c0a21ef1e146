//===- AttncFusedOps.td - ops produced by the fusion passes -*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Attention comes in two ops, as in IREE: `attention`, the whole computation
// the fusion pass recognizes, and `online_attention`, one step of its flash
// form over a K/V tile carrying the running max and sum, closed by
// `online_attention_finalize`. `fusion` holds an elementwise chain that
// becomes one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCFUSEDOPS_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCFUSEDOPS_TD

/// The parts `attention` and its flash step share: a runtime scale next to
/// the constant one, and the mask and score-modifier regions.
class Attnc_AttentionLikeOp<string mnemonic, list<Trait> traits = []>
    : Attnc_PureOp<mnemonic, !listconcat(traits, [
        RecursiveMemoryEffects])> {
  let regions = (region MaxSizedRegion<1>:$mask, MaxSizedRegion<1>:$score);
  let hasRegionVerifier = 1;
  code sharedDeclarations = [{
    /// The causal form of the mask region, if it is one.
    std::optional<::attnc::CausalMask> getCausalMask() {
      return ::attnc::matchCausalMask(getMask());
    }
    /// True when the op has a score modifier (a non-empty `score` region).
    bool hasScoreModifier() { return !getScore().empty(); }
    /// True when the score modifier reads the key position (its `%j`).
    bool scoreReadsKeyPositions() {
      return hasScoreModifier() &&
             !getScore().front().getArgument(4).use_empty();
    }
    /// True when the probabilities are dropped before P V.
    bool hasDropout() { return static_cast<bool>(getDropoutSeed()); }
  }];
}

def Attnc_PagedKVOp : Attnc_PureOp<"paged_kv"> {
  let summary = "a paged K or V cache viewed as one [B, Hkv, Skv, d] tensor";
  let description = [{
    A K or V cache stored in pages, vLLM's layout: `pool : [num_blocks,
    page_size, Hkv, d]` holds pages of `page_size` consecutive tokens of
    every K/V head, and `block_table : [B, max_blocks]` (i32) lists the
    pages of each sequence in order. The result is the cache each sequence
    sees, `[B, Hkv, max_blocks * page_size, d]`:

    ```
    result[b, h, n, :] = pool[block_table[b, n / page_size], n mod page_size, h, :]
    ```

    It is a view, not a copy: attention reads the pool through the table,
    one page lookup per K/V row (per tile when a page holds whole tiles).
    `page_size` is a power of two from 16 to 256 (the pool's dimension 1,
    checked here when static and by the runtime otherwise), so that the
    host counts K/V tiles as whole pages or tiles. Entries of the table
    past a sequence's used length (`kv_lengths`) are never read; an entry
    out of `[0, num_blocks)` in the used part reads the last page instead
    of outside the pool. Pages may be shared and in any order.

    Example (K and V caches sharing one table):

    ```mlir
    %k = attnc.paged_kv %k_pool, %table {page_size = 64}
        : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$pool,
                       RankedTensorOf<[I32]>:$block_table,
                       I64Attr:$page_size);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $pool `,` $block_table attr-dict `:` type($pool) `,` type($block_table)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_RaggedViewOp : Attnc_PureOp<"ragged_view"> {
  let summary = "sequences packed back to back viewed as one [B, H, T, d] batch";
  let description = [{
    A batch of sequences of different lengths packed back to back (a
    "varlen" batch, FlashAttention's `cu_seqlens`): `packed : [T, H, d]`
    holds sequence `b` in rows `[starts[b], ends[b])` (`starts`, `ends` :
    `[B]` i32; from `cu_seqlens` they are `cu_seqlens[:-1]` and
    `cu_seqlens[1:]`, views of one tensor). The result is the batch
    `[B, H, T, d]` with

    ```
    result[b, h, n, :] = packed[starts[b] + n, h, :]   for n < ends[b] - starts[b]
    ```

    Rows `n >= ends[b] - starts[b]` (or all rows when `ends[b] <= starts[b]`)
    are absent: as the K or V of `attnc.attention` they are not keys; as its
    Q, their outputs are never read (`attnc.ragged_pack` packs the rows that
    exist). The sequence dimension is `T`, which bounds every length. Like
    `attnc.paged_kv` this is a view the attention kernels read through, one
    per (batch, head) row block.

    Example (self-attention over a packed batch):

    ```mlir
    %qv = attnc.ragged_view %q, %starts, %ends
        : tensor<?x32x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x?x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$packed,
                       RankedTensorOf<[I32]>:$starts,
                       RankedTensorOf<[I32]>:$ends);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $packed `,` $starts `,` $ends attr-dict `:` type($packed) `,`
    type($starts) `,` type($ends) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_RaggedPackOp : Attnc_PureOp<"ragged_pack"> {
  let summary = "the rows of a ragged batch packed back to back";
  let description = [{
    The inverse of `attnc.ragged_view`: `result : [T, H, d]` holds row `n`
    of sequence `b` of `batch : [B, H, T, d]` at row `starts[b] + n`, for
    `n < ends[b] - starts[b]`. Rows no sequence covers are unspecified (the
    kernel that writes the result does not touch them), as in
    `tensor.empty`; sequences must not overlap. `T` is the result's row
    count, the batch's sequence dimension.

    Example (the output of attention over a ragged Q):

    ```mlir
    %o = attnc.ragged_pack %ov, %starts, %ends
        : tensor<?x32x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$batch,
                       RankedTensorOf<[I32]>:$starts,
                       RankedTensorOf<[I32]>:$ends);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $batch `,` $starts `,` $ends attr-dict `:` type($batch) `,`
    type($starts) `,` type($ends) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_AttentionOp : Attnc_AttentionLikeOp<"attention", [
    AttrSizedOperandSegments]> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    `result = softmax(mask(score(scale * query key^T))) value` per batch and
    head, with `query : [B, H, Sq, d]`, `key : [B, Hkv, Skv, d]`,
    `value : [B, Hkv, Skv, dv]` and `result : [B, H, Sq, dv]`. When
    `Hkv < H` (grouped-query or multi-query attention) query head `h` uses
    key/value head `h / (H / Hkv)`; `H` must be a multiple of `Hkv`. Head
    dimensions are static.

    - `scale` (f64 attribute) multiplies every score; with the optional
      `runtime_scale` operand (an f32 value known only at run time, such as
      a function argument) the scores are multiplied by both.
    - `score` (optional region) rewrites each scaled score:
      `^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index)` yields the
      new f32 score of query `i`, key `j` of batch `b`, head `h`. Empty: the
      identity.
    - `mask` (optional region) decides which keys each query sees:
      `^bb0(%b: index, %h: index, %i: index, %j: index)` yields an `i1`,
      true when key `j` is visible to query `i`. Masked scores are -inf
      before the softmax; a row that sees no key yields 0. Empty: every key
      is visible. The regions may use values defined above the op (sequence
      lengths, for instance). Causal attention is a mask like any other:
      top-left (`j <= i`, PyTorch's `is_causal`) or bottom-right
      (`j <= i + Skv - Sq`, the last query sees the last key).
    - `kv_lengths` (optional, `tensor<B x i32>`) are the K/V lengths each
      sequence uses (vLLM's `seqused_k`): batch `b` attends to keys
      `j < min(kv_lengths[b], Skv)` only, as if its K/V sequence were that
      long, and skips the rest of the cache (its tiles are never read).
      They are data, read by the kernel: one compiled kernel (and one
      captured CUDA graph) serves every length up to `Skv`. A sequence of
      length 0 yields 0. The mask and score regions still see the padded
      positions: a bottom-right causal mask aligns to `Skv`.
    - `dropout(%seed, %offset)` with `dropout_probability = p` (optional)
      drops probabilities before the product with V, as `attnc.dropout`
      applied to the [B, H, Sq, Skv] probabilities does:
      `result = (keep * softmax(...) / (1 - p)) value`, with the keep mask
      of `attnc.dropout` (seed, offset) over that tensor: probability
      (b, h, i, j) is row `(b * H + h) * Sq + i` of it, column `j`. The
      softmax's max, sum and logsumexp are those of the undropped
      probabilities.
    - `config` (optional) fixes the kernel's tiles, warps and strategy
      instead of the target description's defaults.

    Example (top-left causal):

    ```mlir
    %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
        mask {
        ^bb0(%b: index, %h: index, %i: index, %j: index):
          %keep = arith.cmpi ule, %j, %i : index
          attnc.yield %keep : i1
        }
    ```

    Decoding against a cache whose sequences use part of it:

    ```mlir
    %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>)
        {scale = 0.08838834764831845 : f64}
        : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>
    ```

    Training with attention dropout (p = 0.1):

    ```mlir
    %o = attnc.attention %q, %k, %v dropout(%seed, %offset)
        {dropout_probability = 1.000000e-01 : f64, scale = 0.08838834764831845 : f64}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value,
                       Optional<F32>:$runtime_scale,
                       Optional<RankedTensorOf<[I32]>>:$kv_lengths,
                       Optional<I64>:$dropout_seed,
                       Optional<I64>:$dropout_offset,
                       F64Attr:$scale,
                       OptionalAttr<F64Attr>:$dropout_probability,
                       OptionalAttr<Attnc_FlashConfigAttr>:$config);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`runtime_scale` `(` $runtime_scale^ `)`)?
    (`kv_lengths` `(` $kv_lengths^ `:` type($kv_lengths) `)`)?
    (`dropout` `(` $dropout_seed^ `,` $dropout_offset `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result) (`score` $score^)? (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = sharedDeclarations;
}

def Attnc_OnlineAttentionOp : Attnc_AttentionLikeOp<"online_attention", [
    AttrSizedOperandSegments, AllTypesMatch<["acc", "new_acc"]>, AllTypesMatch<["max", "new_max"]>,
    AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "one K/V tile step of the online-softmax recurrence";
  let description = [{
    For a query tile `Q : [Mq, d]` of batch `b`, head `h`, starting at query
    row `q_start`, a key tile `K : [Nk, d]` and a value tile `V : [Nk, dv]`
    starting at key row `kv_start`, with
    `S[i, j] = score(scale * (Q K^T)[i, j])` (times `runtime_scale` when
    present) and `S[i, j] = -inf` where the mask yields false for query
    `q_start + i` and key `kv_start + j`:

    ```
    new_max[i] = max(max[i], max_j S[i, j])
    alpha[i]   = exp(max[i] - new_max[i])
    P[i, j]    = exp(S[i, j] - new_max[i])
    new_sum[i] = alpha[i] * sum[i] + sum_j P[i, j]
    new_acc    = alpha * acc + P V
    ```

    The `score` and `mask` regions have the signatures of `attnc.attention`'s
    and see absolute positions. `max` is in scaled units and starts at
    -inf, `sum` and `acc` at 0; rows whose max is still -inf keep alpha = 1
    and P = 0 instead of NaN. P is rounded to the value type before the
    product, as tensor cores do. Tile extents may be dynamic: a tail tile is
    just shorter. A step without a mask region is one where the flash form
    proved every key visible.

    With `dropout(%seed, %offset) rows(%row, %row_words)` and
    `dropout_probability = p`, P V uses `keep[i, j] * P[i, j]` (new_max and
    new_sum do not: they are the undropped softmax's; the 1 / (1 - p) is
    the finalize's caller's). `keep` is `attnc.dropout`'s mask for element
    (row + i, kv_start + j) of a tensor of `row_words` Philox counters per
    row: counter `offset + (row + i) * row_words + floor((kv_start + j) /
    8)`, 16-bit lane `(kv_start + j) mod 8`, kept when the draw is at least
    `ceil(p * 2^16)`. The flash form of an attention with dropout sets
    `row` to the probability row of the tile's first query,
    `(b * H + h) * Sq + q_start`, and `row_words` to `ceil(Skv / 8)`.

    Example:

    ```mlir
    %a, %m, %l = attnc.online_attention %q, %k, %v, %acc, %max, %sum
        at [%b, %h, %qs, %ks] {scale = 0.08838834764831845 : f64}
        : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>,
          tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
        mask {
        ^bb0(%bi: index, %hi: index, %i: index, %j: index):
          %keep = arith.cmpi ule, %j, %i : index
          attnc.yield %keep : i1
        }
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value, Attnc_FloatTensor:$acc,
                       Attnc_FloatTensor:$max, Attnc_FloatTensor:$sum,
                       Index:$batch, Index:$head, Index:$q_start,
                       Index:$kv_start, Optional<F32>:$runtime_scale,
                       Optional<I64>:$dropout_seed,
                       Optional<I64>:$dropout_offset,
                       Optional<Index>:$dropout_row,
                       Optional<Index>:$dropout_row_words,
                       F64Attr:$scale,
                       OptionalAttr<F64Attr>:$dropout_probability);
  let results = (outs Attnc_FloatTensor:$new_acc, Attnc_FloatTensor:$new_max,
                      Attnc_FloatTensor:$new_sum);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $acc `,` $max `,` $sum
    `at` ` ` `[` $batch `,` $head `,` $q_start `,` $kv_start `]`
    (`runtime_scale` `(` $runtime_scale^ `)`)?
    (`dropout` `(` $dropout_seed^ `,` $dropout_offset `)` `rows` `(`
     $dropout_row `,` $dropout_row_words `)`)? attr-dict `:` type($query) `,`
    type($key) `,` type($value) `,` type($acc) `,` type($max) `,` type($sum)
    (`score` $score^)? (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = sharedDeclarations;
}

def Attnc_OnlineAttentionFinalizeOp
    : Attnc_PureOp<"online_attention_finalize"> {
  let summary = "the one division that ends the online-softmax recurrence";
  let description = [{
    `result[i, :] = sum[i] > 0 ? acc[i, :] / sum[i] : 0` and
    `logsumexp[i] = sum[i] > 0 ? max[i] + ln(sum[i]) : -inf`. The
    logsumexp of each row (in scaled units) is what a backward pass needs
    to recompute the probabilities without the score matrix.

    Example:

    ```mlir
    %o, %lse = attnc.online_attention_finalize %acc, %max, %sum
        : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x128xbf16>, tensor<?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$acc, Attnc_FloatTensor:$max,
                       Attnc_FloatTensor:$sum);
  let results = (outs Attnc_FloatTensor:$result,
                      Attnc_FloatTensor:$logsumexp);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` type($acc) `,` type($max) `,`
    type($sum) `->` type($result) `,` type($logsumexp)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Split-KV (decode)
//===----------------------------------------------------------------------===//

def Attnc_OnlineAttentionMergeOp
    : Attnc_PureOp<"online_attention_merge", [
        AllTypesMatch<["acc", "new_acc"]>, AllTypesMatch<["max", "new_max"]>,
        AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "merges a partial attention over other keys into the running state";
  let description = [{
    The combine step of split-KV attention. `partial` and `partial_lse` are
    what `attnc.online_attention_finalize` gives for the same rows over
    another, disjoint set of keys: the normalized output `O_s` (f32) and its
    logsumexp `lse_s` (scaled units, -inf for a row that saw none of those
    keys). To the online softmax such a partial is one more key, of score
    `lse_s` and value `O_s`, so the merge is its update rule:

    ```
    m'   = max(m, lse_s)
    acc' = acc * exp(m - m') + O_s * exp(lse_s - m')
    l'   = l   * exp(m - m') +       exp(lse_s - m')
    ```

    with each factor 0 where its first exponent's operand is -inf (so that
    -inf - -inf is never formed). Merging the partials of every split of a
    row's keys, in any order, from (0, -inf, 0), then finalizing, gives the
    attention over all of them.

    Example:

    ```mlir
    %acc2, %m2, %l2 = attnc.online_attention_merge %acc, %m, %l, %o_s, %lse_s
        : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x128xf32>, tensor<?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$acc, Attnc_FloatTensor:$max,
                       Attnc_FloatTensor:$sum, Attnc_FloatTensor:$partial,
                       Attnc_FloatTensor:$partial_lse);
  let results = (outs Attnc_FloatTensor:$new_acc, Attnc_FloatTensor:$new_max,
                      Attnc_FloatTensor:$new_sum);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum `,` $partial `,` $partial_lse attr-dict `:`
    type($acc) `,` type($max) `,` type($sum) `,` type($partial) `,`
    type($partial_lse)
  }];
  let hasVerifier = 1;
}

def Attnc_KVSplitCountOp : Attnc_PureOp<"kv_split_count"> {
  let summary = "how many parts split-KV attention cuts each row's keys into";
  let description = [{
    The number of K/V splits for a kernel of `ctas` blocks (before
    splitting) over `kv_tiles` K/V tiles per row, on the device the kernel
    runs on: the host evaluates it at launch from the device's SM count,
    so it never folds. With `slots = num_sms * ctas_per_sm`, the rule is
    one wave: `n = min(max_splits, floor(slots / ctas), kv_tiles)` splits
    at most (1 when the grid is already over half the device), lowered to
    the fewest splits with the same tiles each, `ceil(kv_tiles /
    ceil(kv_tiles / n))`. (FlashAttention-2's heuristic, which fills later
    waves to 85%, measured up to 1.22x slower on the H200 where it takes
    more than one wave.)

    The result is between 1 and `max_splits` (at most 128), and at most
    `kv_tiles` when that is positive. Any split count gives the same
    attention; the rule only chooses a fast one.

    Example:

    ```mlir
    %splits = attnc.kv_split_count %ctas, %tiles {max_splits = 128, ctas_per_sm = 2}
    ```
  }];
  let arguments = (ins Index:$ctas, Index:$kv_tiles,
                       ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<128>]>:$max_splits,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ctas_per_sm);
  let results = (outs Index:$splits);
  let assemblyFormat = "$ctas `,` $kv_tiles attr-dict";
}

def Attnc_IdTileBoundsOp : Attnc_PureOp<"id_tile_bounds", [
    AttrSizedOperandSegments]> {
  let summary = "the K/V tiles a query tile visits under an id-equality mask";
  let description = [{
    Tile bounds of a mask `query_ids[.., i, ..] == key_ids[.., j, ..]` (a
    document mask of packed sequences: a query sees the keys of its own
    document) for one query tile, computed at run time from the ids. The
    flash form intersects them with the bounds of the mask's other
    conjuncts (a causal diagonal).

    The query tile is rows `[row, row + rows)` (`rows >= 1`): their ids are
    `query_ids` at `query_indices` with the row inserted at dimension
    `query_dim`; qmin and qmax are the least and the greatest. The keys
    looked at are `[first * block_kv, min(end * block_kv, keys))`, their
    ids `key_ids` at `key_indices` with the key inserted at `key_dim`.
    Of those keys, V holds the ones whose id is in [qmin, qmax] and E the
    ones whose id equals qmin when qmin = qmax. The results are K/V tile
    indices:

    - `visit_first`, `visit_end`: the tiles of the least and (one past) the
      greatest key of V; both `first` when V is empty. A tile outside
      them holds no key whose id equals any row's: it is never visited.
    - `full_first`, `full_end`: when E is one run of consecutive keys, the
      tiles inside it (a run that ends at the last key looked at takes
      that last, possibly short, tile); otherwise none (both
      `visit_first`). Every key of such a tile matches every row: the
      tile needs no mask.

    `visit_first <= full_first <= full_end <= visit_end`, all in
    `[first, max(first, end)]`. The kernel computes them with the whole
    block before its K/V loops: the ids of the query tile, then one pass
    over the keys looked at, reduced across the block. Sorted ids (packed
    documents) give exact bounds; any other ids give correct ones, with
    masked tiles where the run is broken.

    Example:

    ```mlir
    %first, %full, %full_end, %end = attnc.id_tile_bounds
        %doc_q[%b] at 1 rows %q0 + %m, %doc_kv[%b] at 1 keys %skv
        tiles %t0 to %t1 block_kv 128 : tensor<?x?xi64>, tensor<?x?xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32, I64]>:$query_ids,
                       Variadic<Index>:$query_indices, Index:$row,
                       Index:$rows,
                       RankedTensorOf<[I32, I64]>:$key_ids,
                       Variadic<Index>:$key_indices, Index:$keys,
                       Index:$first, Index:$end,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$query_dim,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$key_dim,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$block_kv);
  let results = (outs Index:$visit_first, Index:$full_first, Index:$full_end,
                      Index:$visit_end);
  let assemblyFormat = [{
    $query_ids `[` $query_indices `]` `at` $query_dim `rows` $row `+` $rows
    `,` $key_ids `[` $key_indices `]` `at` $key_dim `keys` $keys `tiles`
    $first `to` $end `block_kv` $block_kv attr-dict `:` type($query_ids) `,`
    type($key_ids)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention backward
//===----------------------------------------------------------------------===//

def Attnc_AttentionGradOp : Attnc_PureOp<"attention_grad", [
    RecursiveMemoryEffects]> {
  let summary = "gradients of fused attention, P recomputed from the logsumexp";
  let description = [{
    The backward of `attnc.attention` with the same `scale`,
    `runtime_scale` and `mask`. From the forward's inputs, the gradient of
    its result `out_grad` (dO, `[B, H, Sq, dv]`), its `logsumexp`
    (`[B, H, Sq]`, f32, scaled units, natural log, -inf for a row that saw
    no key) and `delta = rowsum(dO * O)` (`[B, H, Sq, 1]`, f32, as
    `attnc.reduce_sum` gives it), with `c = scale * runtime_scale`:

    ```
    S  = c * Q K^T,  -inf where the mask is false
    P  = exp(S - logsumexp)          (0 where S or logsumexp is -inf)
    dV = P^T dO                      (summed over the query heads of a group)
    dP = dO V^T
    dS = c * P * (dP - delta)
    dK = dS^T Q                      (summed over the query heads of a group)
    dQ = dS K
    ```

    No `Sq x Skv` matrix is an operand or a result: P is recomputed from
    the logsumexp. `query_grad` is f32 (the flash form accumulates it from
    every K/V tile); `key_grad` and `value_grad` have the types of `key`
    and `value`. P and dS are rounded to the operands' type before the
    products that use them, as tensor cores do.

    With a score modifier, `score` is the forward's region (S above is
    `score(c Q K^T)`, masked after) and `score_grad` yields its derivative
    with respect to the scaled score, `d score(s) / d s` with the same block
    arguments; dS is then multiplied by it before the scale.
    `--attnc-derive-backward` builds `score_grad` by differentiating
    `score`. Both are present or neither.

    Example (top-left causal, d = 128):

    ```mlir
    %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %delta
        {scale = 0.08838834764831845 : f64}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
          -> tensor<?x?x?x128xf32>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
        mask {
        ^bb0(%b: index, %h: index, %i: index, %j: index):
          %keep = arith.cmpi ule, %j, %i : index
          attnc.yield %keep : i1
        }
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value, Attnc_FloatTensor:$out_grad,
                       Attnc_FloatTensor:$logsumexp, Attnc_FloatTensor:$delta,
                       Optional<F32>:$runtime_scale, F64Attr:$scale,
                       OptionalAttr<Attnc_FlashConfigAttr>:$config);
  let results = (outs Attnc_FloatTensor:$query_grad,
                      Attnc_FloatTensor:$key_grad,
                      Attnc_FloatTensor:$value_grad);
  let regions = (region MaxSizedRegion<1>:$mask, MaxSizedRegion<1>:$score,
                        MaxSizedRegion<1>:$score_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out_grad `,` $logsumexp `,` $delta
    (`runtime_scale` `(` $runtime_scale^ `)`)? attr-dict `:` type($query)
    `,` type($key) `,` type($value) `,` type($out_grad) `,` type($logsumexp)
    `,` type($delta) `->` type($query_grad) `,` type($key_grad) `,`
    type($value_grad) (`score` $score^)? (`score_grad` $score_grad^)?
    (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The causal form of the mask region, if it is one.
    std::optional<::attnc::CausalMask> getCausalMask() {
      return ::attnc::matchCausalMask(getMask());
    }
    /// True when the op has a score modifier (and its derivative).
    bool hasScoreModifier() { return !getScore().empty(); }
  }];
}

def Attnc_OnlineAttentionGradOp : Attnc_PureOp<"online_attention_grad", [
    RecursiveMemoryEffects, AllTypesMatch<["key_acc", "new_key_acc"]>,
    AllTypesMatch<["value_acc", "new_value_acc"]>]> {
  let summary = "one query-tile step of the attention backward over a K/V tile";
  let description = [{
    The step of `attnc.attention_grad`'s flash form. A K/V tile
    (`key : [Nk, d]`, `value : [Nk, dv]`, first row `kv_start`) stays;
    the step visits one query tile (`query : [Mq, d]`, `out_grad :
    [Mq, dv]`, `logsumexp` and `delta : [Mq]`, first row `q_start`) of
    batch `b`, query head `h`, and with `c = scale * runtime_scale`:

    ```
    S             = score(c * Q K^T), -inf where the mask is false
    P             = exp(S - logsumexp)        (0 where either is -inf)
    new_value_acc = value_acc + P^T dO
    dS            = c * P * (dO V^T - delta) * score_grad(c * Q K^T)
    new_key_acc   = key_acc + dS^T Q
    query_grad    = dS K
    ```

    `query_grad` is this tile's contribution to dQ; the flash form adds it
    into the query rows it belongs to (`attnc.accumulate`). The mask, score
    and score_grad regions are those of `attnc.attention_grad` and see
    absolute positions (score and its derivative are the identity and 1
    when absent); a step
    without one is a step the flash form proved fully visible. Accumulators
    are f32; P and dS are rounded to the operands' type before the products
    that use them.

    Example:

    ```mlir
    %dk2, %dv2, %dqt = attnc.online_attention_grad %q, %k, %v, %do, %lse,
        %delta, %dk, %dv at [%b, %h, %qs, %ks] {scale = 0.125 : f64}
        : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>,
          tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>,
          tensor<?x64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value, Attnc_FloatTensor:$out_grad,
                       Attnc_FloatTensor:$logsumexp, Attnc_FloatTensor:$delta,
                       Attnc_FloatTensor:$key_acc,
                       Attnc_FloatTensor:$value_acc, Index:$batch,
                       Index:$head, Index:$q_start, Index:$kv_start,
                       Optional<F32>:$runtime_scale, F64Attr:$scale);
  let results = (outs Attnc_FloatTensor:$new_key_acc,
                      Attnc_FloatTensor:$new_value_acc,
                      Attnc_FloatTensor:$query_grad);
  let regions = (region MaxSizedRegion<1>:$mask, MaxSizedRegion<1>:$score,
                        MaxSizedRegion<1>:$score_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out_grad `,` $logsumexp `,` $delta `,`
    $key_acc `,` $value_acc
    `at` ` ` `[` $batch `,` $head `,` $q_start `,` $kv_start `]`
    (`runtime_scale` `(` $runtime_scale^ `)`)? attr-dict `:` type($query)
    `,` type($key) `,` type($value) `,` type($out_grad) `,`
    type($logsumexp) `,` type($delta) `,` type($key_acc) `,`
    type($value_acc) `->` type($query_grad) (`score` $score^)?
    (`score_grad` $score_grad^)? (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The causal form of the mask region, if it is one.
    std::optional<::attnc::CausalMask> getCausalMask() {
      return ::attnc::matchCausalMask(getMask());
    }
    /// True when the op has a score modifier (and its derivative).
    bool hasScoreModifier() { return !getScore().empty(); }
  }];
}

def Attnc_AccumulateOp : Attnc_PureOp<"accumulate", [
    AllTypesMatch<["dest", "result"]>]> {
  let summary = "adds a tile into a slice of a tensor";
  let description = [{
    `result = dest` except that the tile is added to the slice of `dest`
    at `offsets`: for a tile of rank `r` and a destination of rank `R >= r`
    with `R` offsets, `result[o0, ..., oR-r-1, oR-r + i0, ..., oR-1 + ir-1]
    += tile[i0, ..., ir-1]`: the slice has extent 1 in the leading
    `R - r` dimensions and the tile's extents in the others, and must lie
    inside `dest`. The flash form of `attnc.attention_grad` sums the dQ
    contributions of a K/V tile this way before `attnc.parallel_accumulate`
    adds them into the result.

    Example:

    ```mlir
    %acc2 = attnc.accumulate %dqt into %acc[%g, %q0, %c0]
        : tensor<?x128xf32> into tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$tile, Attnc_FloatTensor:$dest,
                       Variadic<Index>:$offsets);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $tile `into` $dest `[` $offsets `]` attr-dict `:` type($tile) `into`
    type($dest)
  }];
  let hasVerifier = 1;
}

def Attnc_ParallelAccumulateOp : Attnc_Op<"parallel_accumulate", [
    DeclareOpInterfaceMethods<ParallelCombiningOpInterface,
       ["getUpdatedDestinations", "getIteratingParent"]>]> {
  let summary = "adds one parallel iteration's contribution into a result";
  let description = [{
    In the `scf.forall.in_parallel` terminator: adds `source` into the
    slice of the shared output `dest` at `offsets` (the rules of
    `attnc.accumulate`). Unlike `tensor.parallel_insert_slice`, slices of
    different iterations may overlap: the forall's result is `dest`'s
    initial value plus the contributions of every iteration, summed in any
    order (the GPU adds them with atomics, so f32 sums are not bitwise
    reproducible from run to run).

    Example:

    ```mlir
    scf.forall.in_parallel {
      attnc.parallel_accumulate %dqc into %DQ[%b, %h0, %c0, %c0]
          : tensor<?x?x128xf32> into tensor<?x?x?x128xf32>
    }
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$source, Attnc_FloatTensor:$dest,
                       Variadic<Index>:$offsets);
  let assemblyFormat = [{
    $source `into` $dest `[` $offsets `]` attr-dict `:` type($source) `into`
    type($dest)
  }];
  let hasVerifier = 1;
}

def Attnc_FusionOp : Attnc_Op<"fusion", [IsolatedFromAbove, SingleBlock,
                                         RecursiveMemoryEffects]> {
  let summary = "a chain of elementwise ops and row reductions, one kernel";
  let description = [{
    The body computes the results from the block arguments, which stand for
    `inputs` (tensors, or scalars such as a dropout seed). It holds only
    elementwise, broadcast and row-reduction attnc ops (and constants) and
    ends in `attnc.yield`. The back-end turns one `fusion` into one kernel
    that reads each input once and writes each result once: the chain's
    intermediates never reach global memory.

    Example:

    ```mlir
    %y = attnc.fusion (%x, %b) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16> {
    ^bb0(%a0: tensor<?x4096xbf16>, %a1: tensor<4096xbf16>):
      %s = attnc.add %a0, %a1 : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
      attnc.yield %s : tensor<?x4096xbf16>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<Attnc_FloatTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasRegionVerifier = 1;
}

def Attnc_YieldOp : Attnc_PureOp<"yield", [
    ParentOneOf<["FusionOp", "AttentionOp", "OnlineAttentionOp",
                 "AttentionGradOp", "OnlineAttentionGradOp"]>,
    ReturnLike, Terminator]> {
  let summary = "returns the values of an attnc region";
  let description = [{
    Ends the body of `attnc.fusion` (its operands become the fusion's
    results) and the `mask` and `score` regions of the attention ops (an
    `i1` visibility or an f32 score).

    Example:

    ```mlir
    attnc.yield %y : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCFUSEDOPS_TD
