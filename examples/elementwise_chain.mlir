// A memory-bound elementwise chain: dropout(x + bias) followed by
// LayerNorm over the last dimension, on a (8, 4096, 4096) bf16 activation.
// Eagerly each op is one kernel and one HBM round trip (~6x the tensor's
// bytes); fused it reads x once and writes y once (2x). MLIR keeps no SSA
// names, so `attnc.name` gives the kernel's parameters the source's names.
func.func @bias_dropout_layernorm(%x: tensor<8x4096x4096xbf16> {attnc.name = "x"},
                                  %bias: tensor<4096xbf16> {attnc.name = "bias"},
                                  %gamma: tensor<4096xbf16> {attnc.name = "gamma"},
                                  %beta: tensor<4096xbf16> {attnc.name = "beta"},
                                  %seed: i64 {attnc.name = "seed"},
                                  %offset: i64 {attnc.name = "offset"})
    -> (tensor<8x4096x4096xbf16> {attnc.name = "y"}) {
  %h = attnc.add %x, %bias
      : tensor<8x4096x4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  %d = attnc.dropout %h, %seed, %offset {probability = 1.000000e-01 : f64}
      : tensor<8x4096x4096xbf16>
  %y = attnc.layer_norm %d, %gamma, %beta {epsilon = 1.000000e-05 : f64}
      : tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  return %y : tensor<8x4096x4096xbf16>
}
