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

def Attnc_AttentionOp : Attnc_PureOp<"attention"> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    `result = softmax(scale * query key^T + mask) value` per batch and head,
    with `query : [B, H, Sq, d]`, `key : [B, Hkv, Skv, d]`,
    `value : [B, Hkv, Skv, dv]` and `result : [B, H, Sq, dv]`. When
    `Hkv < H` (grouped-query or multi-query attention) query head `h` uses
    key/value head `h / (H / Hkv)`; `H` must be a multiple of `Hkv`.
    With `causal`, key `j` is visible to query `i` only when `j <= i`
    (top-left aligned, as PyTorch's `is_causal`); a row that sees no key
    yields 0. Head dimensions are static.

    Example:

    ```mlir
    %o = attnc.attention %q, %k, %v {causal, scale = 0.08838834764831845 : f64}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value, F64Attr:$scale,
                       UnitAttr:$causal);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key) `,`
    type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_OnlineAttentionOp : Attnc_PureOp<"online_attention", [
    AllTypesMatch<["acc", "new_acc"]>, AllTypesMatch<["max", "new_max"]>,
    AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "one K/V tile step of the online-softmax recurrence";
  let description = [{
    For a query tile `Q : [Mq, d]`, a key tile `K : [Nk, d]` and a value
    tile `V : [Nk, dv]`, with `S = scale * Q K^T` (masked to -inf where
    `causal` and `kv_start + j > q_start + i`):

    ```
    new_max[i] = max(max[i], max_j S[i, j])
    alpha[i]   = exp(max[i] - new_max[i])
    P[i, j]    = exp(S[i, j] - new_max[i])
    new_sum[i] = alpha[i] * sum[i] + sum_j P[i, j]
    new_acc    = alpha * acc + P V
    ```

    `max` is in scaled units and starts at -inf, `sum` and `acc` at 0; rows
    whose max is still -inf keep alpha = 1 and P = 0 instead of NaN. P is
    rounded to the value type before the product, as tensor cores do. Tile
    extents may be dynamic: a tail tile is just shorter.

    Example:

    ```mlir
    %a, %m, %l = attnc.online_attention %q, %k, %v, %acc, %max, %sum at [%qs, %ks]
        {causal, scale = 0.08838834764831845 : f64}
        : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>,
          tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$query, Attnc_FloatTensor:$key,
                       Attnc_FloatTensor:$value, Attnc_FloatTensor:$acc,
                       Attnc_FloatTensor:$max, Attnc_FloatTensor:$sum,
                       Index:$q_start, Index:$kv_start, F64Attr:$scale,
                       UnitAttr:$causal);
  let results = (outs Attnc_FloatTensor:$new_acc, Attnc_FloatTensor:$new_max,
                      Attnc_FloatTensor:$new_sum);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $acc `,` $max `,` $sum
    `at` ` ` `[` $q_start `,` $kv_start `]` attr-dict `:` type($query) `,`
    type($key) `,` type($value) `,` type($acc) `,` type($max) `,` type($sum)
  }];
  let hasVerifier = 1;
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

def Attnc_YieldOp : Attnc_PureOp<"yield", [HasParent<"FusionOp">,
                                           ReturnLike, Terminator]> {
  let summary = "returns the results of an attnc.fusion body";
  let description = [{
    Ends the body of `attnc.fusion`; its operands become the fusion's
    results.

    Example:

    ```mlir
    attnc.yield %y : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCFUSEDOPS_TD
