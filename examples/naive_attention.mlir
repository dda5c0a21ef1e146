// Naive attention as people write it: scores = Q K^T, scaled by 1/sqrt(d),
// causal mask by comparing row and column indices, softmax, then P V.
// Batch, heads and sequence length are dynamic; d = 128; bf16 in and out,
// scores in f32. Unfused, the (B, H, S, S) score matrix goes through HBM.
func.func @naive_attention(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                           %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %scale = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %scale : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols
      : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %masked = attnc.select %keep, %ss, %ninf
      : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %masked : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v
      : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
