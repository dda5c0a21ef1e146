// RUN: attnc-opt %s -split-input-file --attnc-fuse-attention | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-fuse-attention | FileCheck %s --check-prefix=EXAMPLE
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-fuse-attention --attnc-fuse-elementwise | FileCheck %s --check-prefix=PIPE

// The example as written: f32 scores, scale by a rank-0 splat, causal mask
// (cmp ge rows, cols; -inf fill), attnc.softmax, P cast to bf16.
// EXAMPLE-LABEL: func.func @naive_attention
// EXAMPLE-SAME:    (%[[Q:.+]]: tensor<?x?x?x128xbf16>, %[[K:.+]]: tensor<?x?x?x128xbf16>, %[[V:.+]]: tensor<?x?x?x128xbf16>)
// The scale is the f32 constant widened exactly, not 1/sqrt(128) retyped.
// EXAMPLE-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 0.088388346135616302 : f64}
// EXAMPLE-SAME:      -> tensor<?x?x?x128xbf16> mask {
// EXAMPLE-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// EXAMPLE-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// EXAMPLE-NEXT:      attnc.yield %[[KEEP]] : i1
// EXAMPLE-NEXT:    }
// EXAMPLE-NEXT:    return %[[O]]

// After both fusion passes nothing elementwise is left: one kernel.
// PIPE-LABEL: func.func @naive_attention
// PIPE-COUNT-1: attnc.attention
// PIPE-NOT:     attnc.attention
// PIPE-NOT:     attnc.fusion
// PIPE-NOT:     attnc.matmul
// PIPE:         return

// CHECK-LABEL: func.func @naive_causal
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x?x?x128xbf16>, %[[K:.+]]: tensor<?x?x?x128xbf16>, %[[V:.+]]: tensor<?x?x?x128xbf16>)
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME:      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16> mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[O]]
func.func @naive_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                        %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Softmax spelled out (max, sub, exp, sum, div), scale as a division by a
// constant (scale = 1/8), no mask, static shapes.
// CHECK-LABEL: func.func @spelled_softmax_div_scale
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x64x64xbf16>, %[[K:.+]]: tensor<2x4x32x64xbf16>, %[[V:.+]]: tensor<2x4x32x128xbf16>)
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME:      -> tensor<2x4x64x128xbf16>{{$}}
// CHECK-NEXT:    return %[[O]]
func.func @spelled_softmax_div_scale(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x32x64xbf16>,
                                     %v: tensor<2x4x32x128xbf16>) -> tensor<2x4x64x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x4x64x64xbf16>, tensor<2x4x32x64xbf16> -> tensor<2x4x64x32xf32>
  %c = arith.constant dense<8.0> : tensor<1xf32>
  %ss = attnc.div %s, %c : tensor<2x4x64x32xf32>, tensor<1xf32> -> tensor<2x4x64x32xf32>
  %mx = attnc.reduce_max %ss : tensor<2x4x64x32xf32> -> tensor<2x4x64x1xf32>
  %d = attnc.sub %ss, %mx : tensor<2x4x64x32xf32>, tensor<2x4x64x1xf32> -> tensor<2x4x64x32xf32>
  %e = attnc.exp %d : tensor<2x4x64x32xf32>
  %sum = attnc.reduce_sum %e : tensor<2x4x64x32xf32> -> tensor<2x4x64x1xf32>
  %p = attnc.div %e, %sum : tensor<2x4x64x32xf32>, tensor<2x4x64x1xf32> -> tensor<2x4x64x32xf32>
  %pb = attnc.cast %p : tensor<2x4x64x32xf32> to tensor<2x4x64x32xbf16>
  %o = attnc.matmul %pb, %v : tensor<2x4x64x32xbf16>, tensor<2x4x32x128xbf16> -> tensor<2x4x64x128xbf16>
  return %o : tensor<2x4x64x128xbf16>
}

// -----

// Scale folded into Q (the usual "q = q * d^-0.5"), everything in bf16,
// causal mask spelled `le, cols, rows`.
// CHECK-LABEL: func.func @scale_on_q_bf16
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x?x?x64xbf16>, %[[K:.+]]: tensor<?x?x?x64xbf16>, %[[V:.+]]: tensor<?x?x?x64xbf16>)
// CHECK-NOT:     attnc.mul
// CHECK:         %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME:      mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NOT:     attnc.matmul
// CHECK:         return %[[O]]
func.func @scale_on_q_bf16(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                           %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %c = arith.constant dense<0.125> : tensor<bf16>
  %qs = attnc.mul %q, %c : tensor<?x?x?x64xbf16>, tensor<bf16> -> tensor<?x?x?x64xbf16>
  %s = attnc.matmul %qs, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xbf16>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xbf16> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xbf16> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF80> : tensor<bf16>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xbf16>, tensor<bf16> -> tensor<?x?x?x?xbf16>
  %p = attnc.softmax %m : tensor<?x?x?x?xbf16>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// No scale and no mask: scale 1.0. f32 throughout.
// CHECK-LABEL: func.func @no_scale_f32
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x8x?x32xf32>, %[[K:.+]]: tensor<1x8x?x32xf32>, %[[V:.+]]: tensor<1x8x?x32xf32>)
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f64}
// CHECK-SAME:      -> tensor<1x8x?x32xf32>{{$}}
// CHECK-NEXT:    return %[[O]]
func.func @no_scale_f32(%q: tensor<1x8x?x32xf32>, %k: tensor<1x8x?x32xf32>,
                        %v: tensor<1x8x?x32xf32>) -> tensor<1x8x?x32xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x8x?x32xf32>, tensor<1x8x?x32xf32> -> tensor<1x8x?x?xf32>
  %p = attnc.softmax %s : tensor<1x8x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<1x8x?x?xf32>, tensor<1x8x?x32xf32> -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

// -----

// Mask by selecting the fill where the key is ahead (`select drop, fill, s`
// with drop = cols > rows), a finite -1e9 fill, the mask applied before the
// scale, which is a rank-4 splat written on the left.
// CHECK-LABEL: func.func @inverted_finite_mask
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x?x?x128xbf16>, %[[K:.+]]: tensor<?x?x?x128xbf16>, %[[V:.+]]: tensor<?x?x?x128xbf16>)
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-SAME:      mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[O]]
func.func @inverted_finite_mask(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                                %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %drop = attnc.cmp gt, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %fill = arith.constant dense<-1.0e9> : tensor<f32>
  %m = attnc.select %drop, %fill, %s : tensor<?x?x?x?xi1>, tensor<f32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.25> : tensor<1x1x1x1xf32>
  %ms = attnc.mul %c, %m : tensor<1x1x1x1xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %ms : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Grouped-query attention: 2 K/V heads broadcast to 8 query heads. The
// fused op reads the 2 shared heads; the repeats are gone.
// CHECK-LABEL: func.func @gqa
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x8x?x128xbf16>, %[[K:.+]]: tensor<?x2x?x128xbf16>, %[[V:.+]]: tensor<?x2x?x128xbf16>)
// CHECK-NOT:     attnc.repeat_interleave
// CHECK:         %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 0.088388346135616302 : f64}
// CHECK-SAME:      : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16> mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NOT:     attnc.repeat_interleave
// CHECK:         return %[[O]]
func.func @gqa(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>,
               %v: tensor<?x2x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  %k8 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %v8 = attnc.repeat_interleave %v {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %s = attnc.matmul %q, %k8 {transpose_b} : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x?xf32>
  %c = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x8x?x?xi64>, tensor<?x8x?x?xi64> -> tensor<?x8x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x8x?x?xi1>, tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
  %p = attnc.softmax %m : tensor<?x8x?x?xf32>
  %pb = attnc.cast %p : tensor<?x8x?x?xf32> to tensor<?x8x?x?xbf16>
  %o = attnc.matmul %pb, %v8 : tensor<?x8x?x?xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// -----

// Multi-query attention: one K/V head for all 16 query heads.
// CHECK-LABEL: func.func @mqa
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x16x?x64xbf16>, %[[K:.+]]: tensor<2x1x?x64xbf16>, %[[V:.+]]: tensor<2x1x?x64xbf16>)
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME:      -> tensor<2x16x?x64xbf16>{{$}}
// CHECK-NEXT:    return %[[O]]
func.func @mqa(%q: tensor<2x16x?x64xbf16>, %k: tensor<2x1x?x64xbf16>,
               %v: tensor<2x1x?x64xbf16>) -> tensor<2x16x?x64xbf16> {
  %k16 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 16 : i64} : tensor<2x1x?x64xbf16> -> tensor<2x16x?x64xbf16>
  %v16 = attnc.repeat_interleave %v {dimension = 1 : i64, repeats = 16 : i64} : tensor<2x1x?x64xbf16> -> tensor<2x16x?x64xbf16>
  %s = attnc.matmul %q, %k16 {transpose_b} : tensor<2x16x?x64xbf16>, tensor<2x16x?x64xbf16> -> tensor<2x16x?x?xbf16>
  %c = arith.constant dense<0.125> : tensor<bf16>
  %ss = attnc.mul %s, %c : tensor<2x16x?x?xbf16>, tensor<bf16> -> tensor<2x16x?x?xbf16>
  %p = attnc.softmax %ss : tensor<2x16x?x?xbf16>
  %o = attnc.matmul %p, %v16 : tensor<2x16x?x?xbf16>, tensor<2x16x?x64xbf16> -> tensor<2x16x?x64xbf16>
  return %o : tensor<2x16x?x64xbf16>
}

// -----

// The mask built from broadcast iotas ([S, 1] rows against [1, S] columns)
// with the lowest finite f32 as the fill.
// CHECK-LABEL: func.func @broadcast_iotas_finite_fill
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x2x16x64xf32>, %[[K:[^:]+]]: tensor<1x2x16x64xf32>, %[[V:[^:]+]]: tensor<1x2x16x64xf32>
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f64}
// CHECK-SAME:      mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[O]]
func.func @broadcast_iotas_finite_fill(%q: tensor<1x2x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
                                       %r: tensor<16x1xf32>, %c: tensor<1x16xf32>) -> tensor<1x2x16x64xf32> {
  %rows = attnc.iota %r {dimension = 0 : i64} : tensor<16x1xf32> -> tensor<16x1xi64>
  %cols = attnc.iota %c {dimension = 1 : i64} : tensor<1x16xf32> -> tensor<1x16xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<16x1xi64>, tensor<1x16xi64> -> tensor<16x16xi1>
  %fill = arith.constant dense<-3.4028234663852886e+38> : tensor<f32>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x2x16x16xf32>
  %m = attnc.select %keep, %s, %fill : tensor<16x16xi1>, tensor<1x2x16x16xf32>, tensor<f32> -> tensor<1x2x16x16xf32>
  %p = attnc.softmax %m : tensor<1x2x16x16xf32>
  %o = attnc.matmul %p, %v : tensor<1x2x16x16xf32>, tensor<1x2x16x64xf32> -> tensor<1x2x16x64xf32>
  return %o : tensor<1x2x16x64xf32>
}

// -----

// Run-time scale: the scores times a scalar function argument, made a
// one-element tensor with tensor.from_elements (no device load), next to a
// constant scale. The constant folds into `scale`, the scalar becomes
// `runtime_scale`; the -inf fill stays -inf whatever the scalar is, so the
// scale may sit outside the mask.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<?x?x?x128xbf16>, %[[K:[^:]+]]: tensor<?x?x?x128xbf16>, %[[V:[^:]+]]: tensor<?x?x?x128xbf16>, %[[T:[^:]+]]: f32)
// CHECK-NOT:     tensor.from_elements
// CHECK-NOT:     attnc.mul
// CHECK:         %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] runtime_scale(%[[T]]) {scale = 1.250000e-01 : f64}
// CHECK-SAME:      mask {
// CHECK:         return %[[O]]
func.func @runtime_scale(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                         %v: tensor<?x?x?x128xbf16>, %t: f32) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %sc = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %sc {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %sc {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %sc, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %tt = tensor.from_elements %t : tensor<f32>
  %mt = attnc.mul %m, %tt : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %mt : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Two run-time scalars, one written on the left of the scores and one on Q
// (f32, so the scalar tensor matches Q's type): they multiply into one
// runtime_scale. The finite fill is fine here: the mask comes after both
// scales.
// CHECK-LABEL: func.func @runtime_scales_multiply
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x4x?x64xf32>, %[[K:[^:]+]]: tensor<1x4x?x64xf32>, %[[V:[^:]+]]: tensor<1x4x?x64xf32>, %[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32)
// CHECK-NEXT:    %[[AB:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] runtime_scale(%[[AB]]) {scale = 1.000000e+00 : f64}
// CHECK-SAME:      mask {
// CHECK-NOT:     attnc.mul
// CHECK:         return %[[O]]
func.func @runtime_scales_multiply(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>,
                                   %a: f32, %b: f32) -> tensor<1x4x?x64xf32> {
  %bt = tensor.from_elements %b : tensor<1x1x1x1xf32>
  %qs = attnc.mul %q, %bt : tensor<1x4x?x64xf32>, tensor<1x1x1x1xf32> -> tensor<1x4x?x64xf32>
  %s = attnc.matmul %qs, %k {transpose_b} : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x?xf32>
  %at = tensor.from_elements %a : tensor<f32>
  %sa = attnc.mul %at, %s : tensor<f32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %rows = attnc.iota %sa {dimension = 2 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xi64>
  %cols = attnc.iota %sa {dimension = 3 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<1x4x?x?xi64>, tensor<1x4x?x?xi64> -> tensor<1x4x?x?xi1>
  %fill = arith.constant dense<-1.0e9> : tensor<f32>
  %m = attnc.select %keep, %sa, %fill : tensor<1x4x?x?xi1>, tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %p = attnc.softmax %m : tensor<1x4x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// -----

// A bf16 scalar scaling bf16 scores widens exactly to the f32 runtime_scale.
// CHECK-LABEL: func.func @runtime_scale_bf16
// CHECK-SAME:    %[[T:[^:]+]]: bf16)
// CHECK-NEXT:    %[[TF:.+]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %{{.+}}, %{{.+}}, %{{.+}} runtime_scale(%[[TF]]) {scale = 1.000000e+00 : f64}
// CHECK-SAME:      -> tensor<?x?x?x64xbf16>{{$}}
// CHECK-NEXT:    return %[[O]]
func.func @runtime_scale_bf16(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                              %v: tensor<?x?x?x64xbf16>, %t: bf16) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xbf16>
  %tt = tensor.from_elements %t : tensor<bf16>
  %st = attnc.mul %s, %tt : tensor<?x?x?x?xbf16>, tensor<bf16> -> tensor<?x?x?x?xbf16>
  %p = attnc.softmax %st : tensor<?x?x?x?xbf16>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Bottom-right causal as PyTorch writes it (`tril(diagonal=Skv - Sq)`, or
// `rows + (Skv - Sq) >= cols`): the offset is the difference of the key and
// query sequence lengths, made a 0-d i64 tensor; the fused op's mask region
// compares j + Sq <= i + Skv with the same tensor.dim values.
// CHECK-LABEL: func.func @bottom_right_causal
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<?x?x?x128xbf16>, %[[K:[^:]+]]: tensor<?x?x?x128xbf16>, %[[V:[^:]+]]: tensor<?x?x?x128xbf16>)
// CHECK-DAG:     %[[SQ:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x?x?x128xbf16>
// CHECK-DAG:     %[[SKV:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x?x?x128xbf16>
// CHECK-NOT:     attnc.iota
// CHECK:         %[[O:.+]] = attnc.attention %[[Q]], %[[K]], %[[V]] {scale = 0.088388346135616302 : f64}
// CHECK-SAME:      mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[L:.+]] = arith.addi %[[J]], %[[SQ]] : index
// CHECK-NEXT:      %[[R:.+]] = arith.addi %[[I]], %[[SKV]] : index
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[L]], %[[R]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
// CHECK-NOT:     attnc.add
// CHECK:         return %[[O]]
func.func @bottom_right_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                               %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x128xbf16>
  %d = arith.subi %skv, %sq : index
  %di = arith.index_cast %d : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The same mask spelled from the other side, `cols - (Skv - Sq) <= rows`,
// with the lengths subtracted in i64 and Skv read off the repeated K: the
// fused op reads it off the shared K instead, so the repeat goes as usual.
// CHECK-LABEL: func.func @bottom_right_subtracted
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<?x8x?x64xbf16>, %[[K:[^:]+]]: tensor<?x2x?x64xbf16>
// CHECK-NOT:     attnc.repeat_interleave
// CHECK-DAG:     %[[SQ:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x8x?x64xbf16>
// CHECK-DAG:     %[[SKV:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x2x?x64xbf16>
// CHECK-NOT:     attnc.repeat_interleave
// CHECK-NOT:     attnc.matmul
// CHECK:         attnc.attention {{.*}} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16> mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[L:.+]] = arith.addi %[[J]], %[[SQ]] : index
// CHECK-NEXT:      %[[R:.+]] = arith.addi %[[I]], %[[SKV]] : index
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[L]], %[[R]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
func.func @bottom_right_subtracted(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                                    %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %k8 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %v8 = attnc.repeat_interleave %v {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %s = attnc.matmul %q, %k8 {transpose_b} : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x?xf32>
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xbf16>
  %skv = tensor.dim %k8, %c2 : tensor<?x8x?x64xbf16>
  %sqi = arith.index_cast %sq : index to i64
  %skvi = arith.index_cast %skv : index to i64
  %d = arith.subi %skvi, %sqi : i64
  %off = tensor.from_elements %d : tensor<1x1xi64>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xi64>
  %shifted = attnc.sub %cols, %off : tensor<?x8x?x?xi64>, tensor<1x1xi64> -> tensor<?x8x?x?xi64>
  %keep = attnc.cmp le, %shifted, %rows : tensor<?x8x?x?xi64>, tensor<?x8x?x?xi64> -> tensor<?x8x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x8x?x?xi1>, tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
  %p = attnc.softmax %m : tensor<?x8x?x?xf32>
  %pb = attnc.cast %p : tensor<?x8x?x?xf32> to tensor<?x8x?x?xbf16>
  %o = attnc.matmul %pb, %v8 : tensor<?x8x?x?xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// Static shapes, Sq = 16 and Skv = 48: a constant offset of 32 is Skv - Sq,
// so bottom-right; the lengths become constants in front of the op.
// CHECK-LABEL: func.func @bottom_right_static
// CHECK-DAG:     %[[SQ:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[SKV:.+]] = arith.constant 48 : index
// CHECK:         attnc.attention {{.*}} -> tensor<1x2x16x64xf32> mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[L:.+]] = arith.addi %[[J]], %[[SQ]] : index
// CHECK-NEXT:      %[[R:.+]] = arith.addi %[[I]], %[[SKV]] : index
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[L]], %[[R]] : index
// CHECK-NEXT:      attnc.yield %[[KEEP]] : i1
// CHECK-NEXT:    }
func.func @bottom_right_static(%q: tensor<1x2x16x64xf32>, %k: tensor<1x2x48x64xf32>,
                               %v: tensor<1x2x48x64xf32>) -> tensor<1x2x16x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x16x64xf32>, tensor<1x2x48x64xf32> -> tensor<1x2x16x48xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<1x2x16x48xf32> -> tensor<1x2x16x48xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<1x2x16x48xf32> -> tensor<1x2x16x48xi64>
  %off = arith.constant dense<32> : tensor<i64>
  %shifted = attnc.add %off, %rows : tensor<i64>, tensor<1x2x16x48xi64> -> tensor<1x2x16x48xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<1x2x16x48xi64>, tensor<1x2x16x48xi64> -> tensor<1x2x16x48xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<1x2x16x48xi1>, tensor<1x2x16x48xf32>, tensor<f32> -> tensor<1x2x16x48xf32>
  %p = attnc.softmax %m : tensor<1x2x16x48xf32>
  %o = attnc.matmul %p, %v : tensor<1x2x16x48xf32>, tensor<1x2x48x64xf32> -> tensor<1x2x16x64xf32>
  return %o : tensor<1x2x16x64xf32>
}

// -----

// An offset of 0 is the top-left mask.
// CHECK-LABEL: func.func @zero_offset_top_left
// CHECK:         attnc.attention {{.*}} mask {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: index, %{{[^:]+}}: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
func.func @zero_offset_top_left(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %off = arith.constant dense<0> : tensor<i64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Must not change
//===----------------------------------------------------------------------===//

// The scores are also returned: fusing would still need the S x S matrix.
// CHECK-LABEL: func.func @scores_returned
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.softmax
// CHECK:         attnc.matmul
func.func @scores_returned(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                           %v: tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32>) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %s : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o, %s : tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32>
}

// -----

// The probabilities are also returned (attention weights for inspection).
// CHECK-LABEL: func.func @probs_returned
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.reduce_max
// CHECK:         attnc.matmul
func.func @probs_returned(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                          %v: tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32>) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %mx = attnc.reduce_max %s : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %d = attnc.sub %s, %mx : tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32> -> tensor<?x?x?x?xf32>
  %e = attnc.exp %d : tensor<?x?x?x?xf32>
  %sum = attnc.reduce_sum %e : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %p = attnc.div %e, %sum : tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32> -> tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o, %p : tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32>
}

// -----

// Anti-causal mask (keep where rows <= cols: each query sees the future): not
// causal, but a mask of positions like any other, so its region holds the
// comparison as written (signed).
// CHECK-LABEL: func.func @anti_causal
// CHECK:         attnc.attention
// CHECK:         ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[K:.*]] = arith.cmpi sle, %[[I]], %[[J]] : index
// CHECK-NEXT:      attnc.yield %[[K]] : i1
// CHECK-NOT:     attnc.softmax
func.func @anti_causal(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                       %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp le, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Strictly causal (`gt`: the diagonal is masked too, row 0 sees nothing).
// CHECK-LABEL: func.func @strictly_causal
// CHECK:         attnc.attention
// CHECK:         arith.cmpi sgt
// CHECK-NOT:     attnc.softmax
func.func @strictly_causal(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                           %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp gt, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// A fill of -100 is a score bias, not a mask.
// CHECK-LABEL: func.func @small_fill_not_a_mask
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.select
func.func @small_fill_not_a_mask(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                 %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %fill = arith.constant dense<-100.0> : tensor<f32>
  %m = attnc.select %keep, %s, %fill : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// The scale is a 0-d tensor argument, not a scalar: a factor the kernel
// loads from device memory, once per block, so it is a score modifier that
// reads the tensor (a scalar argument made a tensor with
// tensor.from_elements is the op's run-time scale, see @runtime_scale).
// CHECK-LABEL: func.func @scale_from_device_tensor
// CHECK-SAME:    %[[T:[^:]+]]: tensor<f32>
// CHECK:         attnc.attention {{.+}} {scale = 1.000000e+00 : f64}
// CHECK:         score {
// CHECK-NEXT:    ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT:      %[[X:.+]] = tensor.extract %[[T]][] : tensor<f32>
// CHECK-NEXT:      %[[R:.+]] = arith.mulf %[[S]], %[[X]] : f32
// CHECK-NEXT:      attnc.yield %[[R]] : f32
func.func @scale_from_device_tensor(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                              %v: tensor<?x?x?x64xf32>, %c: tensor<f32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %ss : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// A per-head scale (not a splat) is not a scalar scale either.
// CHECK-LABEL: func.func @scale_not_splat
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.mul
func.func @scale_not_splat(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                           %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x?xf32>
  %c = arith.constant dense<[[[0.5]], [[0.25]]]> : tensor<2x1x1xf32>
  %ss = attnc.mul %s, %c : tensor<1x2x?x?xf32>, tensor<2x1x1xf32> -> tensor<1x2x?x?xf32>
  %p = attnc.softmax %ss : tensor<1x2x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// K is not used transposed (it would have to be stored as [d, S] already).
// CHECK-LABEL: func.func @k_not_transposed
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.softmax
func.func @k_not_transposed(%q: tensor<?x?x?x64xf32>, %kt: tensor<?x?x64x?xf32>,
                            %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %kt : tensor<?x?x?x64xf32>, tensor<?x?x64x?xf32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %s : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Rank 3 (no head dimension): attnc.attention is rank 4 only.
// CHECK-LABEL: func.func @rank3
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.softmax
func.func @rank3(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>,
                 %v: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x?xf32>
  %p = attnc.softmax %s : tensor<?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// bf16 inputs but an f32 output from P V: attnc.attention returns Q's type,
// and casting its bf16 result up would hand back less precision than the
// graph asks for, so the chain is left alone.
// CHECK-LABEL: func.func @f32_output_from_bf16
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.matmul {{.*}} -> tensor<?x?x?x128xf32>
func.func @f32_output_from_bf16(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                                %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %s : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xf32>
  return %o : tensor<?x?x?x128xf32>
}

// -----

// A run-time scale outside a finite-fill mask: -1e9 * t is a mask only for t
// large enough, so the fused op's -inf would not be what the graph computes.
// CHECK-LABEL: func.func @runtime_scale_outside_finite_mask
// CHECK-NOT:     attnc.attention
// CHECK:         tensor.from_elements
// CHECK:         attnc.select
// CHECK:         attnc.mul
func.func @runtime_scale_outside_finite_mask(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                             %v: tensor<?x?x?x64xf32>, %t: f32) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %fill = arith.constant dense<-1.0e9> : tensor<f32>
  %tt = tensor.from_elements %t : tensor<f32>
  %m = attnc.select %keep, %s, %fill : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %mt = attnc.mul %m, %tt : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %mt : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Division by a run-time scalar: multiplying by its reciprocal would round
// differently from the graph.
// CHECK-LABEL: func.func @runtime_scale_division
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.div
func.func @runtime_scale_division(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                  %v: tensor<?x?x?x64xf32>, %t: f32) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %tt = tensor.from_elements %t : tensor<f32>
  %st = attnc.div %s, %tt : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %st : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Two scalars, one per head, are a per-head scale, not a scalar one.
// CHECK-LABEL: func.func @runtime_scale_per_head
// CHECK-NOT:     attnc.attention
// CHECK:         tensor.from_elements
// CHECK:         attnc.mul
func.func @runtime_scale_per_head(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                                  %v: tensor<1x2x?x64xf32>, %t0: f32, %t1: f32) -> tensor<1x2x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x?xf32>
  %tt = tensor.from_elements %t0, %t1 : tensor<2x1x1xf32>
  %st = attnc.mul %s, %tt : tensor<1x2x?x?xf32>, tensor<2x1x1xf32> -> tensor<1x2x?x?xf32>
  %p = attnc.softmax %st : tensor<1x2x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// An f64 scalar would round on its way to the f32 runtime_scale.
// CHECK-LABEL: func.func @runtime_scale_f64
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.mul
func.func @runtime_scale_f64(%q: tensor<1x2x?x64xf64>, %k: tensor<1x2x?x64xf64>,
                             %v: tensor<1x2x?x64xf64>, %t: f64) -> tensor<1x2x?x64xf64> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x?x64xf64>, tensor<1x2x?x64xf64> -> tensor<1x2x?x?xf64>
  %tt = tensor.from_elements %t : tensor<f64>
  %st = attnc.mul %s, %tt : tensor<1x2x?x?xf64>, tensor<f64> -> tensor<1x2x?x?xf64>
  %p = attnc.softmax %st : tensor<1x2x?x?xf64>
  %o = attnc.matmul %p, %v : tensor<1x2x?x?xf64>, tensor<1x2x?x64xf64> -> tensor<1x2x?x64xf64>
  return %o : tensor<1x2x?x64xf64>
}

// -----

// The offset is Sq - Skv, the wrong way round: j <= i + Sq - Skv is not a
// causal mask attnc.attention knows.
// CHECK-LABEL: func.func @offset_reversed
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.add
func.func @offset_reversed(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                           %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xf32>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x64xf32>
  %d = arith.subi %sq, %skv : index
  %di = arith.index_cast %d : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// An offset that is not provably Skv - Sq (a function argument: a sliding
// diagonal of unknown shift) is left alone.
// CHECK-LABEL: func.func @offset_unknown
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.add
func.func @offset_unknown(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                          %v: tensor<?x?x?x64xf32>, %n: i64) -> tensor<?x?x?x64xf32> {
  %off = tensor.from_elements %n : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// A constant offset with dynamic sequence lengths cannot be proven Skv - Sq.
// CHECK-LABEL: func.func @offset_constant_dynamic
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.add
func.func @offset_constant_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                   %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %off = arith.constant dense<16> : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Lengths read off the scores keep the score matrix alive (tensor.dim is one
// more user of it), so the chain is left alone: take them from Q and K.
// CHECK-LABEL: func.func @offset_from_scores
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.softmax
func.func @offset_from_scores(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                              %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x?xf32>
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %sq = tensor.dim %s, %c2 : tensor<?x?x?x?xf32>
  %skv = tensor.dim %s, %c3 : tensor<?x?x?x?xf32>
  %d = arith.subi %skv, %sq : index
  %di = arith.index_cast %d : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %shifted, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %o = attnc.matmul %p, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Dropout of the probabilities before P V, after their cast to bf16 (or
// before it, below): its seed, offset and probability go to the op; the
// softmax's max and sum stay the undropped probabilities'.
// CHECK-LABEL: func.func @dropout_after_cast
// CHECK-SAME:    %[[SEED:[^:]+]]: i64 {attnc.name = "seed"}, %[[OFF:[^:]+]]: i64
// CHECK-NEXT:    %[[O:.+]] = attnc.attention %{{.+}}, %{{.+}}, %{{.+}} dropout(%[[SEED]], %[[OFF]]) {dropout_probability = 1.000000e-01 : f64, scale = 1.250000e-01 : f64}
// CHECK-SAME:      mask {
// CHECK-NOT:     attnc.dropout
// CHECK:         return %[[O]]
func.func @dropout_after_cast(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                              %v: tensor<?x?x?x128xbf16>, %seed: i64 {attnc.name = "seed"},
                              %offset: i64) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %pd = attnc.dropout %pb, %seed, %offset {probability = 0.1 : f64} : tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pd, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK-LABEL: func.func @dropout_before_cast
// CHECK:         attnc.attention {{.+}} dropout(%{{.+}}, %{{.+}}) {dropout_probability = 5.000000e-01 : f64, scale = 1.000000e+00 : f64}
// CHECK-NOT:     attnc.dropout
func.func @dropout_before_cast(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x32x64xbf16>,
                               %v: tensor<2x4x32x64xbf16>, %seed: i64) -> tensor<2x4x64x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x4x64x64xbf16>, tensor<2x4x32x64xbf16> -> tensor<2x4x64x32xf32>
  %p = attnc.softmax %s : tensor<2x4x64x32xf32>
  %c0 = arith.constant 0 : i64
  %pd = attnc.dropout %p, %seed, %c0 {probability = 0.5 : f64} : tensor<2x4x64x32xf32>
  %pb = attnc.cast %pd : tensor<2x4x64x32xf32> to tensor<2x4x64x32xbf16>
  %o = attnc.matmul %pb, %v : tensor<2x4x64x32xbf16>, tensor<2x4x32x64xbf16> -> tensor<2x4x64x64xbf16>
  return %o : tensor<2x4x64x64xbf16>
}

// -----

// The dropped probabilities are also returned: the chain stays as written.
// CHECK-LABEL: func.func @dropout_returned
// CHECK-NOT:     attnc.attention
// CHECK:         attnc.dropout
func.func @dropout_returned(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x32x64xbf16>,
                            %v: tensor<2x4x32x64xbf16>, %seed: i64)
    -> (tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16>) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x4x64x64xbf16>, tensor<2x4x32x64xbf16> -> tensor<2x4x64x32xf32>
  %p = attnc.softmax %s : tensor<2x4x64x32xf32>
  %pb = attnc.cast %p : tensor<2x4x64x32xf32> to tensor<2x4x64x32xbf16>
  %pd = attnc.dropout %pb, %seed, %seed {probability = 0.5 : f64} : tensor<2x4x64x32xbf16>
  %o = attnc.matmul %pd, %v : tensor<2x4x64x32xbf16>, tensor<2x4x32x64xbf16> -> tensor<2x4x64x64xbf16>
  return %o, %pd : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16>
}
