// The backward flash form lowered as it is given: the forall's dimensions
// are the grid, the IR's query loops the kernel's loops, each step the five
// tensor-core products, dQ by atomics into a workspace the host zeroes.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=backward-strategy=mma_sync --canonicalize --cse --attnc-convert-to-gpu | FileCheck %s

// GQA 8:2, bottom-right causal, dynamic lengths: the contract names every
// tensor and the zero-initialised f32 dQ workspace; causal, so heads on
// grid x and K/V tiles on y (longest first).
// CHECK-LABEL: gpu.module @causal_gqa_module
// CHECK-SAME: kind = "attention_backward"
// CHECK-SAME: tensor<"q", bf16, [B, 8, Sq, 128], input, align = 16, row_align = 16>
// CHECK-SAME: tensor<"do", bf16, [B, 8, Sq, 128], input
// CHECK-SAME: tensor<"lse", f32, [B, 8, Sq], input, align = 4
// CHECK-SAME: tensor<"delta", f32, [B, 8, Sq, 1], input, align = 4
// CHECK-SAME: tensor<"dk", bf16, [B, 2, Skv, 128], output
// CHECK-SAME: tensor<"dv", bf16, [B, 2, Skv, 128], output
// CHECK-SAME: workspace<"dq_accum", bytes = [B, 8, Sq, 512], zero_init, view = f32 [B, 8, Sq, 128]>
// CHECK-SAME: grid = {{\[}}[2], [ceil_div(Skv, 128)], [B]], block = [256, 1, 1], shared_memory = 158720
// CHECK-SAME: mask = "causal_bottom_right"
// CHECK: gpu.func @causal_gqa(
// The K/V tile once, by cp.async.
// CHECK: nvgpu.device_async_copy
// The loop over the group's 4 query heads holds the two query loops (the
// diagonal's, masked, and the rest).
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4
// CHECK: scf.for
// S^T and dP^T: non-transposed ldmatrix of K/V rows and Q/dO rows.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync
// P recomputed with exp2 from the logsumexp.
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// dV and dK: Q/dO rows as the k dimension.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// dS^T through shared memory, then dQ added to the workspace: quad
// neighbours trade a pair (a shuffle per value), then four f32 per
// red.global.add.v4.f32 (sm_90a).
// CHECK: vector.store
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK: llvm.inline_asm {{.*}}"red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f"
// CHECK: scf.for
// CHECK: llvm.inline_asm {{.*}}"red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f"
// dK and dV stored once.
// CHECK: vector.store
// CHECK: gpu.return
func.func @causal_gqa(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>,
    %do: tensor<?x8x?x128xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>)
    -> (tensor<?x8x?x128xf32>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>) {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x2x?x128xbf16>
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.08838834764831845 : f64}
      : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>,
        tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32>
        -> tensor<?x8x?x128xf32>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x8x?x128xf32>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>
}

// -----

// Static shapes of one query tile: canonicalization folds the query loop
// (and the head loop of MHA) away; the kernel runs the step once.
// CHECK-LABEL: gpu.module @one_tile_module
// CHECK-SAME: workspace<"dq_accum", bytes = [1, 2, 64, 256], zero_init, view = f32 [1, 2, 64, 64]>
// CHECK-SAME: grid = {{\[}}[1], [2], [1]]
// CHECK: gpu.func @one_tile(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: nvvm.mma.sync
// CHECK: llvm.inline_asm {{.*}}"red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f"
func.func @one_tile(%q: tensor<1x2x64x64xbf16>, %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>, %dl: tensor<1x2x64x1xf32>)
    -> (tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>,
        tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>, tensor<1x2x64x1xf32>
        -> tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>
}
