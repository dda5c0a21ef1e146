// Masks and score modifiers written as tensor code become the attention
// op's regions, op for op (ScoreRegions.cpp); left-alone negatives last.
// RUN: attnc-opt %s -split-input-file --attnc-fuse-attention | FileCheck %s

// A sliding window of 1024 keys, as Mistral writes it: causal and
// rows - cols < 1024. The region holds both comparisons, signed, in the
// order written (left operand first, whichever compiler built attnc).
// CHECK-LABEL: func.func @sliding_window
// CHECK:       attnc.attention {{.*}} mask {
// CHECK-NEXT:  ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:    %[[C:.*]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK-NEXT:    %[[D:.*]] = arith.subi %[[I]], %[[J]] : index
// CHECK-NEXT:    %[[W:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[NEAR:.*]] = arith.cmpi slt, %[[D]], %[[W]] : index
// CHECK-NEXT:    %[[K:.*]] = arith.andi %[[C]], %[[NEAR]] : i1
// CHECK-NEXT:    attnc.yield %[[K]] : i1
// CHECK-NOT:   attnc.softmax
func.func @sliding_window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %causal = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %d = attnc.sub %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %w = arith.constant dense<1024> : tensor<i64>
  %near = attnc.cmp lt, %d, %w : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %keep = attnc.and %causal, %near : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Keys j in [i - 128, i + 64], written on cols - rows.
// CHECK-LABEL: func.func @two_sided_window
// CHECK:       attnc.attention
// CHECK:         arith.subi %[[J:.*]], %[[I:.*]] : index
// CHECK:         arith.constant -128 : index
// CHECK:         arith.cmpi sge
// CHECK:         arith.cmpi sle
// CHECK:         arith.andi
func.func @two_sided_window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %d = attnc.sub %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %lo = arith.constant dense<-128> : tensor<i64>
  %hi = arith.constant dense<64> : tensor<i64>
  %a = attnc.cmp ge, %d, %lo : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %b = attnc.cmp le, %d, %hi : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %keep = attnc.and %a, %b : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Prefix-LM: the first 1000 keys are seen by every query, the rest causally.
// CHECK-LABEL: func.func @prefix_lm
// CHECK:       attnc.attention
// CHECK:         %[[C:.*]] = arith.cmpi sle, %[[J:.*]], %{{.*}} : index
// CHECK:         %[[P:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK:         arith.ori %[[C]], %[[P]] : i1
func.func @prefix_lm(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %causal = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %n = arith.constant dense<1000> : tensor<i64>
  %prefix = attnc.cmp lt, %cols, %n : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %keep = attnc.or %causal, %prefix : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Chunked (local) attention: causal within chunks of 512, the chunk number
// a floor division.
// CHECK-LABEL: func.func @chunked
// CHECK:       attnc.attention
// CHECK:         arith.floordivsi %{{.*}}, %[[C512:.*]] : index
// CHECK:         arith.floordivsi %{{.*}}, %[[C512]] : index
// CHECK:         arith.cmpi eq
// CHECK:         arith.andi
func.func @chunked(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %n = arith.constant dense<512> : tensor<i64>
  %rc = attnc.div %rows, %n : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %cc = attnc.div %cols, %n : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %same = attnc.cmp eq, %rc, %cc : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %causal = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %keep = attnc.and %same, %causal : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A symmetric window through abs: |i - j| <= 256, abs as max(x, 0 - x).
// CHECK-LABEL: func.func @abs_window
// CHECK:       attnc.attention
// CHECK:         %[[D:.*]] = arith.subi
// CHECK:         %[[N:.*]] = arith.subi %{{.*}}, %[[D]] : index
// CHECK:         %[[A:.*]] = arith.maxsi %[[D]], %[[N]] : index
// CHECK:         arith.cmpi sle, %[[A]], %{{.*}} : index
func.func @abs_window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %d = attnc.sub %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %a = attnc.abs %d : tensor<?x?x?x?xi64>
  %w = arith.constant dense<256> : tensor<i64>
  %keep = attnc.cmp le, %a, %w : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A softcap (Gemma 2's 50 * tanh(s / 50)) before a causal mask: the scales
// next to Q K^T (0.125 and 1/50) are the op's scale, tanh and the outer
// 50 the score region; the mask stays causal.
// CHECK-LABEL: func.func @softcap_causal
// CHECK:       attnc.attention {{.*}} {scale = 2.500000e-03 : f64}
// CHECK-SAME:  score {
// CHECK-NEXT:  ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[S]] : f32
// CHECK-NEXT:    %[[CAP:.*]] = arith.constant 5.000000e+01 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.mulf %[[T]], %[[CAP]] : f32
// CHECK-NEXT:    attnc.yield %[[R]] : f32
// CHECK-NEXT:  } mask {
// CHECK:         arith.cmpi ule
// CHECK-NOT:   attnc.tanh
func.func @softcap_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %cap = arith.constant dense<50.0> : tensor<f32>
  %t = attnc.div %ss, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %th = attnc.tanh %t : tensor<?x?x?x?xf32>
  %sc = attnc.mul %th, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %sc {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %sc {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %sc, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A modifier applied after the mask would turn -inf into -1: left alone.
// CHECK-LABEL: func.func @tanh_after_mask
// CHECK-NOT:   attnc.attention
// CHECK:       attnc.tanh
func.func @tanh_after_mask(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %th = attnc.tanh %m : tensor<?x?x?x?xf32>
  %p = attnc.softmax %th : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A mask that compares scores (a threshold), not positions: left alone.
// CHECK-LABEL: func.func @score_threshold
// CHECK-NOT:   attnc.attention
// CHECK:       attnc.cmp gt
func.func @score_threshold(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %keep = attnc.cmp gt, %s, %z : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Document masks: a query sees the keys of its own document. The ids are
// function arguments per token, [B, 1, Sq, 1] and [B, 1, 1, Skv] (i64,
// right-aligned broadcasting); the mask region reads them at the row's
// and the key's position.
// CHECK-LABEL: func.func @documents
// CHECK-SAME: %[[DQ:[^:]+]]: tensor<?x1x?x1xi64>, %[[DK:[^:]+]]: tensor<?x1x1x?xi64>
// CHECK: mask {
// CHECK: ^bb0(%[[B:.+]]: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[X:.+]] = tensor.extract %[[DQ]][%[[B]], %{{.+}}, %[[I]], %{{.+}}] : tensor<?x1x?x1xi64>
// CHECK: %[[XI:.+]] = arith.index_cast %[[X]] : i64 to index
// CHECK: %[[Y:.+]] = tensor.extract %[[DK]][%[[B]], %{{.+}}, %{{.+}}, %[[J]]] : tensor<?x1x1x?xi64>
// CHECK: %[[YI:.+]] = arith.index_cast %[[Y]] : i64 to index
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[XI]], %[[YI]] : index
// CHECK: %[[C:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK: arith.andi %[[SAME]], %[[C]] : i1
func.func @documents(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x1x?x1xi64>, %dk: tensor<?x1x1x?xi64>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %causal = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %same = attnc.cmp eq, %dq, %dk : tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64> -> tensor<?x1x?x?xi1>
  %keep = attnc.and %same, %causal : tensor<?x1x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Left alone: a boolean mask per (query, key) pair, a score-sized tensor
// the kernel would read per score (and the no-S x S check refuses).
// CHECK-LABEL: func.func @pair_mask_left_alone
// CHECK-NOT: attnc.attention
// CHECK: attnc.softmax
func.func @pair_mask_left_alone(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %ids: tensor<?x?xi64>) -> tensor<?x?x?x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %z = arith.constant dense<0> : tensor<i64>
  %keep = attnc.cmp eq, %ids, %z : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
