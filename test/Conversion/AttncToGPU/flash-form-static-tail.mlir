// Found by the structured generator: a static-shape prefix-LM mask (keys < 64
// or causal) over S = 100 with block_kv = 64 splits the K/V loop in three,
// canonicalization folds the one-iteration loop of the last tile into a
// static 36-row slice, and the back-end must take that tail tile (it is the
// rest of the sequence) instead of refusing it. That split is the form of
// one-masked-loop=false; the default visits the short tile in its masked
// loop, and must compile too.
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false one-masked-loop=false" | FileCheck %s
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false" | FileCheck %s
// CHECK: gpu.func @g5_6(
// CHECK-SAME: kernel
func.func @g5_6(%q: tensor<2x4x100x128xf16> {attnc.name = "q"}, %k: tensor<2x4x100x128xf16> {attnc.name = "k"}, %v: tensor<2x4x100x128xf16> {attnc.name = "v"}, %scale: f32 {attnc.name = "scale"})
    -> (tensor<2x4x100x128xf16> {attnc.name = "o"}) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16> -> tensor<2x4x100x100xf32>
  %sc = tensor.from_elements %scale : tensor<f32>
  %ss = attnc.mul %s, %sc : tensor<2x4x100x100xf32>, tensor<f32> -> tensor<2x4x100x100xf32>
  %cap = arith.constant dense<50.0> : tensor<f32>
  %sd = attnc.div %ss, %cap : tensor<2x4x100x100xf32>, tensor<f32> -> tensor<2x4x100x100xf32>
  %th = attnc.tanh %sd : tensor<2x4x100x100xf32>
  %sm = attnc.mul %th, %cap : tensor<2x4x100x100xf32>, tensor<f32> -> tensor<2x4x100x100xf32>
  %rows = attnc.iota %sm {dimension = 2 : i64} : tensor<2x4x100x100xf32> -> tensor<2x4x100x100xi64>
  %cols = attnc.iota %sm {dimension = 3 : i64} : tensor<2x4x100x100xf32> -> tensor<2x4x100x100xi64>
  %n = arith.constant dense<64> : tensor<i64>
  %causal = attnc.cmp le, %cols, %rows : tensor<2x4x100x100xi64>, tensor<2x4x100x100xi64> -> tensor<2x4x100x100xi1>
  %pre = attnc.cmp lt, %cols, %n : tensor<2x4x100x100xi64>, tensor<i64> -> tensor<2x4x100x100xi1>
  %keep0 = attnc.or %causal, %pre : tensor<2x4x100x100xi1>, tensor<2x4x100x100xi1> -> tensor<2x4x100x100xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep0, %sm, %ninf : tensor<2x4x100x100xi1>, tensor<2x4x100x100xf32>, tensor<f32> -> tensor<2x4x100x100xf32>
  %p = attnc.softmax %m : tensor<2x4x100x100xf32>
  %pb = attnc.cast %p : tensor<2x4x100x100xf32> to tensor<2x4x100x100xf16>
  %o = attnc.matmul %pb, %v : tensor<2x4x100x100xf16>, tensor<2x4x100x128xf16> -> tensor<2x4x100x128xf16>
  return %o : tensor<2x4x100x128xf16>
}
