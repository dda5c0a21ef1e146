// The elementwise chain of the course notes: dropout(x + bias) followed by
// LayerNorm over the last dimension, on a (8, 4096, 4096) bf16 activation.
// Eagerly each op is one kernel and one HBM round trip (~6x the tensor's
// bytes); fused it reads x once and writes y once (2x).
func.func @bias_dropout_layernorm(%x: tensor<8x4096x4096xbf16>, %bias: tensor<4096xbf16>,
                                  %gamma: tensor<4096xbf16>, %beta: tensor<4096xbf16>,
                                  %seed: i64, %offset: i64) -> tensor<8x4096x4096xbf16> {
  %h = attnc.add %x, %bias
      : tensor<8x4096x4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  %d = attnc.dropout %h, %seed, %offset {probability = 1.000000e-01 : f64}
      : tensor<8x4096x4096xbf16>
  %y = attnc.layer_norm %d, %gamma, %beta {epsilon = 1.000000e-05 : f64}
      : tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  return %y : tensor<8x4096x4096xbf16>
}
