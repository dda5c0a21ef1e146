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
  }];
}

def Attnc_AttentionOp : Attnc_AttentionLikeOp<"attention"> {
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
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value,
                       Optional<F32>:$runtime_scale, F64Attr:$scale,
                       OptionalAttr<Attnc_FlashConfigAttr>:$config);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`runtime_scale` `(` $runtime_scale^ `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result) (`score` $score^)? (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = sharedDeclarations;
}

def Attnc_OnlineAttentionOp : Attnc_AttentionLikeOp<"online_attention", [
    AllTypesMatch<["acc", "new_acc"]>, AllTypesMatch<["max", "new_max"]>,
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
                       F64Attr:$scale);
  let results = (outs Attnc_FloatTensor:$new_acc, Attnc_FloatTensor:$new_max,
                      Attnc_FloatTensor:$new_sum);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $acc `,` $max `,` $sum
    `at` ` ` `[` $batch `,` $head `,` $q_start `,` $kv_start `]`
    (`runtime_scale` `(` $runtime_scale^ `)`)? attr-dict `:` type($query) `,`
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
    ParentOneOf<["FusionOp", "AttentionOp", "OnlineAttentionOp"]>,
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
