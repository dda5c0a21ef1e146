// Static shapes through the whole pipeline (both found by
// fuzz/gen_graphs.py). Attention: canonicalization folds the
// recurrence's initial tiles (tensor.splat of a constant) into splat dense
// constants when the tiles are static, and inlines K/V loops of one
// iteration; the back-end must still read the recurrence (every static
// attention graph was refused).
// RUN: attnc-opt %s -split-input-file --attnc-pipeline | FileCheck %s

// CHECK: gpu.module @static_causal_module
// CHECK: llvm.func @static_causal(
func.func @static_causal(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x4x128x64xbf16>,
                         %v: tensor<2x4x128x64xbf16>) -> tensor<2x4x100x64xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x4x100x64xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x100x128xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<2x4x100x128xf32>, tensor<f32> -> tensor<2x4x100x128xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<2x4x100x128xf32> -> tensor<2x4x100x128xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<2x4x100x128xf32> -> tensor<2x4x100x128xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<2x4x100x128xi64>, tensor<2x4x100x128xi64> -> tensor<2x4x100x128xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<2x4x100x128xi1>, tensor<2x4x100x128xf32>, tensor<f32> -> tensor<2x4x100x128xf32>
  %p = attnc.softmax %m : tensor<2x4x100x128xf32>
  %pb = attnc.cast %p : tensor<2x4x100x128xf32> to tensor<2x4x100x128xbf16>
  %o = attnc.matmul %pb, %v : tensor<2x4x100x128xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// One row: [1, N] is the iteration shape, not a broadcast vector; the result
// was refused as "not the iteration shape".
// CHECK: gpu.module @one_row_module
// CHECK: llvm.func @one_row(
func.func @one_row(%x: tensor<1x64xf32>, %g: tensor<64xf32>, %b: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %n = attnc.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %y = attnc.sub %n, %b : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

// A single K/V tile (Skv = 37 < block_kv): the loop canonicalization removes
// is rebuilt.
// CHECK: gpu.module @one_kv_tile_module
// CHECK: llvm.func @one_kv_tile(
func.func @one_kv_tile(%q: tensor<1x2x64x128xf16>, %k: tensor<1x2x37x128xf16>, %v: tensor<1x2x37x128xf16>) -> tensor<1x2x64x128xf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<1x2x64x128xf16>, tensor<1x2x37x128xf16> -> tensor<1x2x64x37xf32>
  %c = arith.constant dense<0.088> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<1x2x64x37xf32>, tensor<f32> -> tensor<1x2x64x37xf32>
  %p = attnc.softmax %ss : tensor<1x2x64x37xf32>
  %pb = attnc.cast %p : tensor<1x2x64x37xf32> to tensor<1x2x64x37xf16>
  %o = attnc.matmul %pb, %v : tensor<1x2x64x37xf16>, tensor<1x2x37x128xf16> -> tensor<1x2x64x128xf16>
  return %o : tensor<1x2x64x128xf16>
}

// -----

// One query row, causal: its only K/V tile is full, so canonicalization makes
// the K and V slices static and casts them back to the step's tile type.
// CHECK: gpu.module @one_row_causal_module
// CHECK: llvm.func @one_row_causal(
func.func @one_row_causal(%q: tensor<2x1x1x128xbf16>, %k: tensor<2x1x300x128xbf16>, %v: tensor<2x1x300x128xbf16>) -> tensor<2x1x1x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<2x1x1x128xbf16>, tensor<2x1x300x128xbf16> -> tensor<2x1x1x300xf32>
  %c = arith.constant dense<0.088> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<2x1x1x300xf32>, tensor<f32> -> tensor<2x1x1x300xf32>
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<2x1x1x300xf32> -> tensor<2x1x1x300xi64>
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<2x1x1x300xf32> -> tensor<2x1x1x300xi64>
  %keep = attnc.cmp ge, %rows, %cols : tensor<2x1x1x300xi64>, tensor<2x1x1x300xi64> -> tensor<2x1x1x300xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %ss, %ninf : tensor<2x1x1x300xi1>, tensor<2x1x1x300xf32>, tensor<f32> -> tensor<2x1x1x300xf32>
  %p = attnc.softmax %m : tensor<2x1x1x300xf32>
  %pb = attnc.cast %p : tensor<2x1x1x300xf32> to tensor<2x1x1x300xbf16>
  %o = attnc.matmul %pb, %v : tensor<2x1x1x300xbf16>, tensor<2x1x300x128xbf16> -> tensor<2x1x1x128xbf16>
  return %o : tensor<2x1x1x128xbf16>
}
