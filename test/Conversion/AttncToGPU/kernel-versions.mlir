// A kernel in versions (scf.if on sizes, attnc/Analysis/KernelVersions.h)
// becomes one kernel per version: the default under the function's kernel
// name, whose launch contract lists the others as size variants with the
// sizes each runs for, written on the kernel's size symbols; the variants
// follow as <name>_v<i>, each with its own tiles (and its own fallback).
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax --canonicalize --cse --attnc-convert-to-gpu | FileCheck %s

// The backward that --attnc-online-softmax builds in versions (d = 64,
// Sq >= 2048 unmasked: 128 x 128 tiles, eight warps).
// CHECK-LABEL: gpu.module @grad_module
// CHECK-SAME: kind = "attention_backward"
// CHECK-SAME: grid = {{\[\[}}ceil_div(Skv, 64)], [2], [B]], block = [128, 1, 1]
// CHECK-SAME: block_kv = 64 : i64, block_q = 64 : i64
// CHECK-SAME: variants = [@grad_v0 when [min(Sq, 2048)]]>
// CHECK-LABEL: gpu.module @grad_v0_module
// CHECK-SAME: kernel = @grad_v0, kind = "attention_backward"
// CHECK-SAME: grid = {{\[\[}}ceil_div(Skv, 128)], [2], [B]], block = [256, 1, 1]
// CHECK-SAME: block_kv = 128 : i64, block_q = 128 : i64
// CHECK-NOT: variants
// CHECK-SAME: >
func.func @grad(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>,
    %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>)
    -> (tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32>
        -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
}

// -----

// Versions written by hand, in a chain (the else region holds another
// versioned kernel): a forward whose K/V rows pick the tile, a condition
// with its constant first (4096 < Skv), a conjunction and an equality.
// The first version that holds runs, so the contract lists them in order.
// CHECK-LABEL: gpu.module @fwd_module
// CHECK-SAME: kernel = @fwd, kind = "attention"
// CHECK-SAME: block_kv = 64 : i64, block_q = 64 : i64
// CHECK-SAME: variants = [@fwd_v0 when [min(Skv, 4097), max(B, 2)], @fwd_v1 when [min(Sq, 128), max(Sq, 128)]]>
// CHECK-LABEL: gpu.module @fwd_v0_module
// CHECK-SAME: block_kv = 128 : i64, block_q = 128 : i64
// CHECK-LABEL: gpu.module @fwd_v1_module
// CHECK-SAME: block_kv = 32 : i64, block_q = 128 : i64
func.func @fwd(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %c128 = arith.constant 128 : index
  %skv = tensor.dim %k, %c2 : tensor<?x4x?x64xbf16>
  %b = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %longkv = arith.cmpi slt, %c4096, %skv : index
  %small = arith.cmpi sle, %b, %c2 : index
  %first = arith.andi %longkv, %small : i1
  %o = scf.if %first -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %k, %v {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
        : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %rows = arith.cmpi eq, %sq, %c128 : index
    %r = scf.if %rows -> tensor<?x4x?x64xbf16> {
      %a = attnc.attention %q, %k, %v {config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
          : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
      scf.yield %a : tensor<?x4x?x64xbf16>
    } else {
      %a = attnc.attention %q, %k, %v {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
          : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
      scf.yield %a : tensor<?x4x?x64xbf16>
    }
    scf.yield %r : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// A ragged batch's versions (d = 128 unmasked: 64 x 64 tiles while T <= 384 * B):
// the condition on the view's rows and sequences becomes at_most on the
// packed rows T and the sequences B the contract binds.
// CHECK-LABEL: gpu.module @ragged_module
// CHECK-SAME: kernel = @ragged, kind = "attention"
// CHECK-SAME: block_kv = 128 : i64, block_q = 128 : i64
// CHECK-SAME: variants = [@ragged_v0 when [at_most(T, B, 384)]]>
// CHECK-LABEL: gpu.module @ragged_v0_module
// CHECK-SAME: grid = {{\[\[}}ceil_div(T, 64) + B], [16], [1]]
// CHECK-SAME: block_kv = 64 : i64, block_q = 64 : i64
func.func @ragged(%q: tensor<?x16x128xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>)
    -> tensor<?x16x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.08838834764831843 : f64}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x16x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// A size at most a constant times a size, written by hand with the
// constant first in the product and the comparison the other way round
// (64 * B >= Sq): at_most on the kernel's symbols.
// CHECK-LABEL: gpu.module @per_batch_module
// CHECK-SAME: variants = [@per_batch_v0 when [at_most(Sq, B, 64)]]>
func.func @per_batch(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %limit = arith.muli %c64, %b : index
  %short = arith.cmpi sge, %limit, %sq : index
  %o = scf.if %short -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
        : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
        : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}
