// A dim query past the rank verifies upstream (it is undefined at run time)
// but crashed attnc's shape reasoning (ValueBoundsConstraintSet reads past
// the shape; found by the fuzz campaign, fuzz/regressions/opt/
// dim-out-of-range-mask.mlir). Each attnc pass that reasons about shapes
// refuses it first, naming the op.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-fuse-attention
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-convert-to-gpu

// The bottom-right offset Skv - Sq of a mask, with a mutated dim index.
func.func @offset(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x37x64xbf16>) -> index {
  %c2 = arith.constant 2147483647 : index
  // expected-error @+1 {{'tensor.dim' op asks for dimension 2147483647 of a rank-4 value; attnc refuses a query past the shape (undefined at run time)}}
  %sq = tensor.dim %q, %c2 : tensor<1x1x256x64xbf16>
  %c2b = arith.constant 2 : index
  %skv = tensor.dim %k, %c2b : tensor<1x1x37x64xbf16>
  %delta = arith.subi %skv, %sq : index
  return %delta : index
}

// -----

func.func @negative(%m: memref<?x?xf32>) -> index {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'memref.dim' op asks for dimension -1 of a rank-2 value}}
  %d = memref.dim %m, %c : memref<?x?xf32>
  return %d : index
}
