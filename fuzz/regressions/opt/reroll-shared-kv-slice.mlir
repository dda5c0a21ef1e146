func.func @f(%q: tensor<1x1x64x64xbf16>) -> (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  %b = attnc.attention %a, %q, %q {scale = 0.125 : f64} : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  return %a, %b : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}
func.func @f_1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = attnc.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
