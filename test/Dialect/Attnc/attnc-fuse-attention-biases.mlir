// RUN: attnc-opt %s -split-input-file --attnc-fuse-attention | FileCheck %s

// Score biases written as tensor code on the scores: ALiBi is a per-head
// slope (a function argument that broadcasts over the query and key
// positions) times a distance computed from iotas and cast to f32. The
// score region reads the slope at the region's head argument and rebuilds
// the distance per element.

// ALiBi's signed causal form, as its reference code writes it:
// scores + slope[h] * (j - i), under a causal mask.
// CHECK-LABEL: func.func @alibi_causal
// CHECK-SAME: %[[SL:[^:]+]]: tensor<?x1x1xf32>
// CHECK: attnc.attention
// CHECK-SAME: {scale = 0.088388{{[0-9]*}} : f64}
// CHECK: score {
// CHECK: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[SLOPE:.+]] = tensor.extract %[[SL]][%[[H]], %[[C0]], %{{.+}}] : tensor<?x1x1xf32>
// CHECK-DAG: %[[D:.+]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[D64:.+]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[DF:.+]] = arith.sitofp %[[D64]] : i64 to f32
// CHECK: %[[BIAS:.+]] = arith.mulf %[[SLOPE]], %[[DF]] : f32
// CHECK: %[[R:.+]] = arith.addf %[[S]], %[[BIAS]] : f32
// CHECK: attnc.yield %[[R]] : f32
// CHECK: mask {
// CHECK: arith.cmpi ule
// CHECK-NOT: attnc.iota
// CHECK-NOT: attnc.cast
func.func @alibi_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %slopes: tensor<?x1x1xf32>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831845> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %d = attnc.sub %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %df = attnc.cast %d : tensor<?x?x?x?xi64> to tensor<?x?x?x?xf32>
  %bias = attnc.mul %slopes, %df : tensor<?x1x1xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %sb = attnc.add %ss, %bias : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %keep = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %sb, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The symmetric form, bottom-right aligned and without a mask:
// scores - slope[h] * |i + (Skv - Sq) - j|, slopes [1, H, 1, 1] (PyTorch's
// slopes.view(1, H, 1, 1)); the shift is a run-time scalar from the extents.
// CHECK-LABEL: func.func @alibi_symmetric_bottom_right
// CHECK-SAME: %[[SL:[^:]+]]: tensor<1x16x1x1xf32>
// CHECK: attnc.attention
// CHECK: score {
// CHECK: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: %[[SLOPE:.+]] = tensor.extract %[[SL]][%{{.+}}, %[[H]], %{{.+}}, %{{.+}}] : tensor<1x16x1x1xf32>
// CHECK-DAG: %[[SH:.+]] = arith.addi %[[I]], %{{.+}} : index
// CHECK: %[[D:.+]] = arith.subi %[[SH]], %[[J]] : index
// CHECK: arith.sitofp
// CHECK: math.absf
// CHECK: arith.mulf %[[SLOPE]]
// CHECK: arith.subf %[[S]]
// CHECK-NOT: mask {
func.func @alibi_symmetric_bottom_right(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %slopes: tensor<1x16x1x1xf32>) -> tensor<?x16x?x64xf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x16x?x64xf16>
  %skv = tensor.dim %k, %c2 : tensor<?x16x?x64xf16>
  %delta = arith.subi %skv, %sq : index
  %di = arith.index_cast %delta : index to i64
  %off = tensor.from_elements %di : tensor<i64>
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x16x?x?xf32>, tensor<f32> -> tensor<?x16x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2} : tensor<?x16x?x?xf32> -> tensor<?x16x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3} : tensor<?x16x?x?xf32> -> tensor<?x16x?x?xi64>
  %sh = attnc.add %rows, %off : tensor<?x16x?x?xi64>, tensor<i64> -> tensor<?x16x?x?xi64>
  %d = attnc.sub %sh, %cols : tensor<?x16x?x?xi64>, tensor<?x16x?x?xi64> -> tensor<?x16x?x?xi64>
  %df = attnc.cast %d : tensor<?x16x?x?xi64> to tensor<?x16x?x?xf32>
  %a = attnc.abs %df : tensor<?x16x?x?xf32>
  %bias = attnc.mul %slopes, %a : tensor<1x16x1x1xf32>, tensor<?x16x?x?xf32> -> tensor<?x16x?x?xf32>
  %sb = attnc.sub %ss, %bias : tensor<?x16x?x?xf32>, tensor<?x16x?x?xf32> -> tensor<?x16x?x?xf32>
  %p = attnc.softmax %sb : tensor<?x16x?x?xf32>
  %pb = attnc.cast %p : tensor<?x16x?x?xf32> to tensor<?x16x?x?xf16>
  %o = attnc.matmul %pb, %v : tensor<?x16x?x?xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>
  return %o : tensor<?x16x?x64xf16>
}

// -----

// A bias per batch and head ([B, H, 1, 1]) reads both region arguments.
// CHECK-LABEL: func.func @bias_per_batch_and_head
// CHECK: score {
// CHECK: ^bb0(%[[S:.+]]: f32, %[[B:.+]]: index, %[[H:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK: %[[X:.+]] = tensor.extract %{{.+}}[%[[B]], %[[H]], %{{.+}}, %{{.+}}] : tensor<?x?x1x1xf32>
// CHECK: arith.addf %[[S]], %[[X]] : f32
func.func @bias_per_batch_and_head(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %t: tensor<?x?x1x1xf32>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %sb = attnc.add %ss, %t : tensor<?x?x?x?xf32>, tensor<?x?x1x1xf32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %sb : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Left alone (the S x S scores stay and the no-S x S check refuses the
// function): a bias that varies along the keys ([Skv], right-aligned with
// the key dimension: a tensor per key, not per block), a bias computed in
// the function rather than passed to it, and f16 slopes (terms are f32).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: attnc.attention
// CHECK: return
func.func @left_alone(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %perkey: tensor<?xf32>, %x: tensor<?x1x1xf32>, %h16: tensor<?x1x1xf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %a = attnc.add %s, %perkey : tensor<?x?x?x?xf32>, tensor<?xf32> -> tensor<?x?x?x?xf32>
  %pa = attnc.softmax %a : tensor<?x?x?x?xf32>
  %pab = attnc.cast %pa : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %oa = attnc.matmul %pab, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  %s2 = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %e = attnc.exp %x : tensor<?x1x1xf32>
  %b = attnc.add %s2, %e : tensor<?x?x?x?xf32>, tensor<?x1x1xf32> -> tensor<?x?x?x?xf32>
  %pb = attnc.softmax %b : tensor<?x?x?x?xf32>
  %pbb = attnc.cast %pb : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %ob = attnc.matmul %pbb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  %s3 = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %hf = attnc.cast %h16 : tensor<?x1x1xf16> to tensor<?x1x1xf32>
  %c = attnc.add %s3, %hf : tensor<?x?x?x?xf32>, tensor<?x1x1xf32> -> tensor<?x?x?x?xf32>
  %pc = attnc.softmax %c : tensor<?x?x?x?xf32>
  %pcb = attnc.cast %pc : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %oc = attnc.matmul %pcb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %oa, %ob, %oc : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}
