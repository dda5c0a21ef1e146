// Attention without a mask as people write it (d = 128, bf16, batch, heads
// and sequence lengths dynamic): on sm_90a the compiler builds a kernel,
// its fallback and a size variant without overlap_pv for up to 1024 keys.
func.func @attention(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                     %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %scale = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %scale : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %ss : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v
      : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
