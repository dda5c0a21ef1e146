// attnc-gen: mask=sinks:64 softcap=None
func.func @g7_38(%q: tensor<?x?x?x64xbf16> {attnc.name = "q"}, %k: tensor<?x?x?x64xbf16> {attnc.name = "k"}, %v: tensor<?x?x?x64xbf16> {attnc.name = "v"})
    -> (tensor<?x?x?x64xbf16> {attnc.name = "o"}) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %sc = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %sc : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows0 = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %n = arith.constant dense<64> : tensor<i64>
  %causal = attnc.cmp le, %cols, %rows0 : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %dist = attnc.sub %rows0, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %near = attnc.cmp lt, %dist, %n : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %keep0 = attnc.and %causal, %near : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %four = arith.constant dense<4> : tensor<i64>
  %sink = attnc.cmp lt, %cols, %four : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %keep = attnc.or %sink, %keep0 : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
