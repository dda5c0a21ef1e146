// attnc-gen: mask=brwindow:16 softcap=None
func.func @g7_251(%q: tensor<1x1x256x96xbf16> {attnc.name = "q"}, %k: tensor<1x1x37x96xbf16> {attnc.name = "k"}, %v: tensor<1x1x37x96xbf16> {attnc.name = "v"}, %scale: f32 {attnc.name = "scale"})
    -> (tensor<1x1x256x96xbf16> {attnc.name = "o"}) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x1x256x96xbf16>, tensor<1x1x37x96xbf16> -> tensor<1x1x256x37xf32>
  %sc = tensor.from_elements %scale : tensor<f32>
  %ss = attnc.mul %s, %sc : tensor<1x1x256x37xf32>, tensor<f32> -> tensor<1x1x256x37xf32>
  %rows0 = attnc.iota %ss {dimension = 2 : i64} : tensor<1x1x256x37xf32> -> tensor<1x1x256x37xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<1x1x256x37xf32> -> tensor<1x1x256x37xi64>
  %n = arith.constant dense<16> : tensor<i64>
  %c2 = arith.constant 2147483647 : index
  %sq = tensor.dim %q, %c2 : tensor<1x1x256x96xbf16>
  %skv = tensor.dim %k, %c2 : tensor<1x1x37x96xbf16>
  %delta = arith.subi %skv, %sq : index
  %di = arith.index_cast %delta : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %rows = attnc.add %rows0, %off : tensor<1x1x256x37xi64>, tensor<i64> -> tensor<1x1x256x37xi64>
  %causal = attnc.cmp le, %cols, %rows : tensor<1x1x256x37xi64>, tensor<1x1x256x37xi64> -> tensor<1x1x256x37xi1>
  %dist = attnc.sub %rows, %cols : tensor<1x1x256x37xi64>, tensor<1x1x256x37xi64> -> tensor<1x1x256x37xi64>
  %near = attnc.cmp lt, %dist, %n : tensor<1x1x256x37xi64>, tensor<i64> -> tensor<1x1x256x37xi1>
  %keep0 = attnc.and %causal, %near : tensor<1x1x256x37xi1>, tensor<1x1x256x37xi1> -> tensor<1x1x256x37xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep0, %ss, %ninf : tensor<1x1x256x37xi1>, tensor<1x1x256x37xf32>, tensor<f32> -> tensor<1x1x256x37xf32>
  %p = attnc.softmax %m : tensor<1x1x256x37xf32>
  %pb = attnc.cast %p : tensor<1x1x256x37xf32> to tensor<1x1x256x37xbf16>
  %o = attnc.matmul %pb, %v : tensor<1x1x256x37xbf16>, tensor<1x1x37x96xbf16> -> tensor<1x1x256x96xbf16>
  return %o : tensor<1x1x256x96xbf16>
}
