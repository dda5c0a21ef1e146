// RUN: attnc-opt %s -split-input-file --attnc-pack-gqa -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-pack-gqa=group-size=4 -mlir-print-local-scope | FileCheck %s --check-prefix=GROUP

// 32 query heads on 8 K/V heads: Q [B, 32, Sq, 128] is viewed as
// [B, 8, 4 * Sq, 128] (packed row r = g * Sq + i is head 4 * hkv + g at
// position i), the attention runs per K/V head, and its result is viewed
// back. The bottom-right causal mask sees the packed coordinates and
// rebuilds (h, i) first.
// CHECK-LABEL: func.func @decode_gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<?x32x?x128xbf16>, %[[K:.+]]: tensor<?x8x?x128xbf16>, %[[V:.+]]: tensor<?x8x?x128xbf16>)
// CHECK: %[[G:.+]] = arith.constant 4 : index
// CHECK: %[[X:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 8, 4, %{{.+}}, 128] : tensor<?x32x?x128xbf16> into tensor<?x8x4x?x128xbf16>
// CHECK: %[[P:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3], [4]] : tensor<?x8x4x?x128xbf16> into tensor<?x8x?x128xbf16>
// CHECK: %[[A:.+]] = attnc.attention %[[P]], %[[K]], %[[V]] {scale = 0.088388347648318447 : f64} : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x128xbf16> mask {
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %[[HKV:.+]]: index, %[[R:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:   %[[HG:.+]] = arith.muli %[[HKV]], %[[G]] : index
// CHECK-NEXT:   %[[HR:.+]] = arith.divui %[[R]], %[[SQ:.+]] : index
// CHECK-NEXT:   %[[H:.+]] = arith.addi %[[HG]], %[[HR]] : index
// CHECK-NEXT:   %[[I:.+]] = arith.remui %[[R]], %[[SQ]] : index
// CHECK-NEXT:   %[[JJ:.+]] = arith.addi %[[J]], %{{.+}} : index
// CHECK-NEXT:   %[[II:.+]] = arith.addi %[[I]], %{{.+}} : index
// CHECK-NEXT:   %[[KEEP:.+]] = arith.cmpi ule, %[[JJ]], %[[II]] : index
// CHECK-NEXT:   attnc.yield %[[KEEP]] : i1
// CHECK: %[[UX:.+]] = tensor.expand_shape %[[A]] {{\[}}[0], [1], [2, 3], [4]] output_shape [%{{.+}}, 8, 4, %{{.+}}, 128] : tensor<?x8x?x128xbf16> into tensor<?x8x4x?x128xbf16>
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[UX]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x8x4x?x128xbf16> into tensor<?x32x?x128xbf16>
// CHECK: return %[[O]]
func.func @decode_gqa(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x32x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// A score modifier keeps its score argument first; ALiBi-like use of the
// head sees the query head, not the K/V head.
// CHECK-LABEL: func.func @score_head
// CHECK: attnc.attention {{.+}} -> tensor<2x2x8x64xf16> score {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[HKV:.+]]: index, %[[R:.+]]: index, %{{.+}}: index):
// CHECK-NEXT:   %[[HG:.+]] = arith.muli %[[HKV]], %c4 : index
// CHECK-NEXT:   %[[HR:.+]] = arith.divui %[[R]], %{{.+}} : index
// CHECK-NEXT:   %[[H:.+]] = arith.addi %[[HG]], %[[HR]] : index
// CHECK:        arith.index_cast %[[H]]
func.func @score_head(%q: tensor<2x8x2x64xf16>, %k: tensor<2x2x100x64xf16>, %v: tensor<2x2x100x64xf16>) -> tensor<2x8x2x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<2x8x2x64xf16>, tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16> -> tensor<2x8x2x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %r = arith.subf %s, %hf : f32
        attnc.yield %r : f32
      }
  return %o : tensor<2x8x2x64xf16>
}

// -----

// Left alone: equal head counts, dynamic head counts (the group size must
// be known to the kernel's grid), too many static query rows.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @left_alone(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>,
                      %qd: tensor<?x?x?x64xbf16>, %kd: tensor<?x?x?x64xbf16>,
                      %ql: tensor<1x8x512x64xbf16>, %kl: tensor<1x2x512x64xbf16>)
    -> (tensor<?x8x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<1x8x512x64xbf16>) {
  %a = attnc.attention %q, %k, %k {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %b = attnc.attention %qd, %kd, %kd {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  %c = attnc.attention %ql, %kl, %kl {scale = 0.125 : f64}
      : tensor<1x8x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16> -> tensor<1x8x512x64xbf16>
  return %a, %b, %c : tensor<?x8x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<1x8x512x64xbf16>
}

// -----

// Left alone: a score region reading a tensor at the query head (ALiBi
// slopes). Packed, the head would change from row to row of a block; the
// kernel reads such tensors once per block.
// CHECK-LABEL: func.func @per_head_tensor
// CHECK-NOT: tensor.expand_shape
// CHECK: attnc.attention
// CHECK: tensor.extract %{{.+}}[%{{.+}}] : tensor<8xf32>
func.func @per_head_tensor(%q: tensor<2x8x2x64xf16>, %k: tensor<2x2x100x64xf16>, %v: tensor<2x2x100x64xf16>, %slopes: tensor<8xf32>) -> tensor<2x8x2x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<2x8x2x64xf16>, tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16> -> tensor<2x8x2x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %m = tensor.extract %slopes[%h] : tensor<8xf32>
        %r = arith.subf %s, %m : f32
        attnc.yield %r : f32
      }
  return %o : tensor<2x8x2x64xf16>
}

// -----

// Dropout numbers its Philox counters by one head's consecutive query rows;
// packed, a tile's rows are not: the op stays unpacked.
// CHECK-LABEL: func.func @dropout_left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK: attnc.attention %{{.+}}, %{{.+}}, %{{.+}} dropout(
// CHECK-NOT: tensor.collapse_shape
func.func @dropout_left_alone(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>,
                              %seed: i64) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v dropout(%seed, %seed) {dropout_probability = 0.1 : f64, scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// Head counts known only at run time pack with the group size the option
// promises (the GROUP run, group-size=4): Q [B, H, Sq, 64] is viewed as
// [B, Hkv, 4, Sq, 64] with Hkv read from K, and the result viewed back.
// Without the option they are left alone, and so is a static H over a
// dynamic Hkv under both (the group is then neither promised nor known).
// CHECK-LABEL: func.func @runtime_heads
// CHECK-NOT: tensor.expand_shape
// CHECK: return
// GROUP-LABEL: func.func @runtime_heads
// GROUP-SAME: (%[[Q:.+]]: tensor<?x?x?x64xbf16>, %[[K:.+]]: tensor<?x?x?x64xbf16>, %[[V:.+]]: tensor<?x?x?x64xbf16>)
// GROUP: %[[HKV:.+]] = tensor.dim %[[K]], %c1
// GROUP: %[[X:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, %[[HKV]], 4, %{{.+}}, 64] : tensor<?x?x?x64xbf16> into tensor<?x?x4x?x64xbf16>
// GROUP: %[[P:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3], [4]]
// GROUP: %[[A:.+]] = attnc.attention %[[P]], %[[K]], %[[V]]
// GROUP: %[[U:.+]] = tensor.expand_shape %[[A]] {{\[}}[0], [1], [2, 3], [4]] output_shape [%{{.+}}, %[[HKV]], 4, %{{.+}}, 64]
// GROUP: %[[O:.+]] = tensor.collapse_shape %[[U]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x?x4x?x64xbf16> into tensor<?x?x?x64xbf16>
// GROUP: return %[[O]]
// GROUP-LABEL: func.func @mixed_heads
// GROUP-NOT: tensor.expand_shape
// GROUP: return
func.func @runtime_heads(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                         %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
func.func @mixed_heads(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x?x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attnc.attention %q, %k, %k {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}
