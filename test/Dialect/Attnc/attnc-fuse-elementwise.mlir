// RUN: attnc-opt %s -split-input-file --attnc-fuse-elementwise | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-fuse-elementwise | FileCheck %s --check-prefix=EXAMPLE

// The bias-dropout-LayerNorm chain, dropout(x + bias) -> layer_norm: one kernel. The
// seed and offset are scalar inputs.
// EXAMPLE-LABEL: func.func @bias_dropout_layernorm
// EXAMPLE-COUNT-1: attnc.fusion
// EXAMPLE-NOT:     attnc.fusion
// EXAMPLE:         return

// CHECK-LABEL: func.func @bias_dropout_layernorm
// CHECK-SAME:    (%[[X:.+]]: tensor<8x4096x4096xbf16>, %[[BIAS:.+]]: tensor<4096xbf16>, %[[G:.+]]: tensor<4096xbf16>, %[[B:.+]]: tensor<4096xbf16>, %[[SEED:.+]]: i64, %[[OFF:.+]]: i64)
// CHECK-NEXT:    %[[Y:.+]] = attnc.fusion(%[[X]], %[[BIAS]], %[[SEED]], %[[OFF]], %[[G]], %[[B]])
// CHECK-SAME:      : (tensor<8x4096x4096xbf16>, tensor<4096xbf16>, i64, i64, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<8x4096x4096xbf16>
// CHECK-NEXT:    ^bb0(%[[AX:.+]]: tensor<8x4096x4096xbf16>, %[[ABIAS:.+]]: tensor<4096xbf16>, %[[ASEED:.+]]: i64, %[[AOFF:.+]]: i64, %[[AG:.+]]: tensor<4096xbf16>, %[[AB:.+]]: tensor<4096xbf16>):
// CHECK-NEXT:      %[[H:.+]] = attnc.add %[[AX]], %[[ABIAS]]
// CHECK-NEXT:      %[[D:.+]] = attnc.dropout %[[H]], %[[ASEED]], %[[AOFF]]
// CHECK-NEXT:      %[[N:.+]] = attnc.layer_norm %[[D]], %[[AG]], %[[AB]]
// CHECK-NEXT:      attnc.yield %[[N]] : tensor<8x4096x4096xbf16>
// CHECK-NEXT:    }
// CHECK-NOT:     attnc.fusion
// CHECK-NEXT:    return %[[Y]]
func.func @bias_dropout_layernorm(%x: tensor<8x4096x4096xbf16>, %bias: tensor<4096xbf16>,
                                  %gamma: tensor<4096xbf16>, %beta: tensor<4096xbf16>,
                                  %seed: i64, %offset: i64) -> tensor<8x4096x4096xbf16> {
  %h = attnc.add %x, %bias : tensor<8x4096x4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  %d = attnc.dropout %h, %seed, %offset {probability = 1.000000e-01 : f64} : tensor<8x4096x4096xbf16>
  %y = attnc.layer_norm %d, %gamma, %beta {epsilon = 1.000000e-05 : f64}
      : tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
  return %y : tensor<8x4096x4096xbf16>
}

// -----

// A matmul splits the chain into two kernels, one on each side.
// CHECK-LABEL: func.func @split_by_matmul
// CHECK-SAME:    (%[[X:.+]]: tensor<?x64x64xf32>, %[[B:.+]]: tensor<64xf32>, %[[W:.+]]: tensor<?x64x64xf32>)
// CHECK:         %[[F0:.+]] = attnc.fusion(%[[X]], %[[B]])
// CHECK:           attnc.add
// CHECK-NEXT:      attnc.tanh
// CHECK-NEXT:      attnc.yield
// CHECK:         %[[M:.+]] = attnc.matmul %[[F0]], %[[W]]
// CHECK-NEXT:    %[[F1:.+]] = attnc.fusion(%[[M]])
// CHECK:           attnc.exp
// CHECK-NEXT:      attnc.yield
// CHECK-NOT:     attnc.fusion
// CHECK:         return %[[F1]]
func.func @split_by_matmul(%x: tensor<?x64x64xf32>, %b: tensor<64xf32>,
                           %w: tensor<?x64x64xf32>) -> tensor<?x64x64xf32> {
  %0 = attnc.add %x, %b : tensor<?x64x64xf32>, tensor<64xf32> -> tensor<?x64x64xf32>
  %1 = attnc.tanh %0 : tensor<?x64x64xf32>
  %2 = attnc.matmul %1, %w : tensor<?x64x64xf32>, tensor<?x64x64xf32> -> tensor<?x64x64xf32>
  %3 = attnc.exp %2 : tensor<?x64x64xf32>
  return %3 : tensor<?x64x64xf32>
}

// -----

// A diamond through a matmul: %a feeds the matmul and the op after it.
// Putting both adds in one kernel would make the kernel feed and consume
// the matmul, so they stay apart.
// CHECK-LABEL: func.func @no_cycle_through_matmul
// CHECK:         %[[F0:.+]] = attnc.fusion
// CHECK:         %[[M:.+]] = attnc.matmul %[[F0]]
// CHECK-NEXT:    %[[F1:.+]] = attnc.fusion(%[[F0]], %[[M]])
// CHECK:         return %[[F1]]
func.func @no_cycle_through_matmul(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>,
                                   %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = attnc.add %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %m = attnc.matmul %a, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %b = attnc.add %a, %m : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

// A value read by two fusible consumers and also returned: one kernel with
// three results.
// CHECK-LABEL: func.func @shared_and_returned
// CHECK-SAME:    (%[[X:.+]]: tensor<?x128xf32>, %[[Y:.+]]: tensor<?x128xf32>)
// CHECK-NEXT:    %[[F:.+]]:3 = attnc.fusion(%[[X]], %[[Y]]) : (tensor<?x128xf32>, tensor<?x128xf32>) -> (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
// CHECK:           %[[S:.+]] = attnc.add
// CHECK-NEXT:      %[[E:.+]] = attnc.exp %[[S]]
// CHECK-NEXT:      %[[N:.+]] = attnc.neg %[[S]]
// CHECK-NEXT:      attnc.yield %[[S]], %[[E]], %[[N]]
// CHECK-NOT:     attnc.fusion
// CHECK:         return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @shared_and_returned(%x: tensor<?x128xf32>, %y: tensor<?x128xf32>)
    -> (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  %s = attnc.add %x, %y : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %e = attnc.exp %s : tensor<?x128xf32>
  %n = attnc.neg %s : tensor<?x128xf32>
  return %s, %e, %n : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}

// -----

// Scalar and splat constants are cloned into the body; the offset, a
// function argument, is a scalar input; a non-splat constant is an input.
// CHECK-LABEL: func.func @scalars_and_constants
// CHECK-SAME:    (%[[X:.+]]: tensor<?x4xf32>, %[[OFF:.+]]: i64)
// CHECK:         %[[TABLE:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NOT:     arith.constant
// CHECK:         %[[F:.+]] = attnc.fusion(%[[X]], %[[OFF]], %[[TABLE]]) : (tensor<?x4xf32>, i64, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    ^bb0(%[[AX:.+]]: tensor<?x4xf32>, %[[AOFF:.+]]: i64, %[[AT:.+]]: tensor<4xf32>):
// CHECK-DAG:       %[[SEED:.+]] = arith.constant 42 : i64
// CHECK-DAG:       %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK:           %[[D:.+]] = attnc.dropout %[[AX]], %[[SEED]], %[[AOFF]]
// CHECK-NEXT:      %[[M:.+]] = attnc.mul %[[D]], %[[HALF]]
// CHECK-NEXT:      %[[A:.+]] = attnc.add %[[M]], %[[AT]]
// CHECK-NEXT:      attnc.yield %[[A]]
// CHECK:         return %[[F]]
func.func @scalars_and_constants(%x: tensor<?x4xf32>, %offset: i64) -> tensor<?x4xf32> {
  %seed = arith.constant 42 : i64
  %half = arith.constant dense<0.5> : tensor<f32>
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %d = attnc.dropout %x, %seed, %offset {probability = 2.000000e-01 : f64} : tensor<?x4xf32>
  %m = attnc.mul %d, %half : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  %a = attnc.add %m, %table : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

// A single op is a kernel too; two unconnected ops are two kernels.
// CHECK-LABEL: func.func @unconnected
// CHECK:         attnc.fusion
// CHECK:           attnc.exp
// CHECK:         attnc.fusion
// CHECK:           attnc.rsqrt
// CHECK-NOT:     attnc.fusion
// CHECK:         return
func.func @unconnected(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = attnc.exp %x : tensor<16xf32>
  %b = attnc.rsqrt %y : tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// A mask (i1) that is also used outside: a fusion returns only float
// tensors, so the iotas and the cmp are recomputed after the kernel.
// CHECK-LABEL: func.func @mask_used_outside
// CHECK-SAME:    (%[[S:.+]]: tensor<?x?xf32>)
// CHECK:         %[[F:.+]] = attnc.fusion(%[[S]])
// CHECK:           attnc.cmp ge
// CHECK:           attnc.select
// CHECK:           attnc.softmax
// CHECK:           attnc.yield
// CHECK-NEXT:    }
// CHECK-DAG:     %[[R:.+]] = attnc.iota %[[S]] {dimension = 0 : i64}
// CHECK-DAG:     %[[C:.+]] = attnc.iota %[[S]] {dimension = 1 : i64}
// CHECK:         %[[K:.+]] = attnc.cmp ge, %[[R]], %[[C]]
// CHECK-NOT:     attnc.fusion
// CHECK:         return %[[F]], %[[K]]
func.func @mask_used_outside(%s: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi1>) {
  %rows = attnc.iota %s {dimension = 0 : i64} : tensor<?x?xf32> -> tensor<?x?xi64>
  %cols = attnc.iota %s {dimension = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %s, %ninf : tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %p = attnc.softmax %m : tensor<?x?xf32>
  return %p, %keep : tensor<?x?xf32>, tensor<?x?xi1>
}

// -----

// Must not change: nothing elementwise.
// CHECK-LABEL: func.func @only_matmul
// CHECK-NEXT:    %[[M:.+]] = attnc.matmul
// CHECK-NEXT:    return %[[M]]
func.func @only_matmul(%a: tensor<?x?x64xbf16>, %b: tensor<?x64x?xbf16>) -> tensor<?x?x?xf32> {
  %m = attnc.matmul %a, %b : tensor<?x?x64xbf16>, tensor<?x64x?xbf16> -> tensor<?x?x?xf32>
  return %m : tensor<?x?x?xf32>
}

// -----

// Must not change: integer add only shifts an iota inside a mask (attention
// fusion absorbs it); fusion kernels compute in floats, so it stays out of
// attnc.fusion.
// CHECK-LABEL: func.func @integer_add
// CHECK-NOT:     attnc.fusion
// CHECK:         attnc.add %{{.+}}, %{{.+}} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
// CHECK-NOT:     attnc.fusion
// CHECK:         return
func.func @integer_add(%s: tensor<?x?xf32>, %off: tensor<i64>) -> tensor<?x?xi64> {
  %rows = attnc.iota %s {dimension = 0 : i64} : tensor<?x?xf32> -> tensor<?x?xi64>
  %shifted = attnc.add %rows, %off : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  return %shifted : tensor<?x?xi64>
}
