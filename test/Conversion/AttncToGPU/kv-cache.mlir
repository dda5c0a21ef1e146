// Attention over a K/V cache: per-sequence lengths (kv_lengths) and paged
// caches (attnc.paged_kv). The flash form bounds its K/V loops by each
// batch's keys, min(kv_lengths[b], Skv); the kernel reads the length once
// per block and, for a paged cache, the pools through the block table.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=32 block-kv=64" -mlir-print-local-scope | FileCheck %s --check-prefix=FORM
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="split-kv=128 to-nvvm=false" | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="to-nvvm=false" | FileCheck %s --check-prefix=ONE

// The lengths pick mma_sync (their loads stop at each length); the batch's
// keys bound the K/V loop and the tail tile.
// FORM-LABEL: func.func @lengths
// FORM: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// FORM: %[[L:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// FORM: %[[LI:.+]] = arith.index_castui %[[L]] : i32 to index
// FORM: %[[KEYS:.+]] = arith.minui %[[LI]], %{{.+}} : index
// FORM: %[[TILES:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[KEYS]]]
// FORM: scf.for %[[J:.+]] = %{{.+}} to %[[TILES]] step
// FORM: affine.min affine_map<(d0)[s0] -> (64, d0 * -64 + s0)>(%[[J]])[%[[KEYS]]]
// FORM: strategy = mma_sync
// The partial kernel takes the lengths after V and loads one per block.
// CHECK-LABEL: gpu.module @lengths_0_module
// CHECK-SAME: tensor<"kv_lengths", i32, [B], input, align = 4>
// CHECK-SAME: stride<"kv_lengths.stride0", i64, tensor = "kv_lengths", dim = 0>
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xi32, 1>
// CHECK-LABEL: gpu.module @lengths_1_module
// ONE-LABEL: gpu.module @lengths_module
// ONE-SAME: kind = "attention"
// ONE-SAME: tensor<"kv_lengths", i32, [B], input, align = 4>
// ONE-SAME: strategy = "mma_sync"
func.func @lengths(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %used: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>) {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// A paged cache: K and V are the pools [NB, 64, 8, 128], read through the
// block table [B, MB] (the decode tile's 128 rows span two pages, looked up
// once per page); the split rule counts ceil(MB / 2) tiles, one block per
// SM (two 32 KiB tiles in flight each). A table has an entry per sequence
// at least and the pool a page.
// FORM-LABEL: func.func @paged
// FORM: attnc.paged_kv
// CHECK-LABEL: gpu.module @paged_0_module
// CHECK-SAME: tensor<"k", bf16, [NB, 64, 8, 128], input, align = 16, row_align = 16>
// CHECK-SAME: tensor<"v", bf16, [NB, 64, 8, 128], input, align = 16, row_align = 16>
// CHECK-SAME: tensor<"kv_lengths", i32, [B], input, align = 4>
// CHECK-SAME: tensor<"block_table", i32, [B, MB], input, align = 4>
// CHECK-SAME: size<"NB", i64>, size<"MB", i64>
// CHECK-SAME: stride<"block_table.stride1", i64, tensor = "block_table", dim = 1>
// CHECK-SAME: constraints = [min(MB, 1), min(NB, 1), min(splits, 1), max(splits, 128)]
// CHECK-SAME: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(MB, 2)], max = 128, per_sm = 1)]
// CHECK-NOT: attnc.paged_kv
// CHECK-LABEL: gpu.module @paged_1_module
// ONE-LABEL: gpu.module @paged_module
// ONE-SAME: tensor<"block_table", i32, [B, MB], input, align = 4>
func.func @paged(%q: tensor<?x32x?x128xbf16>, %kp: tensor<?x64x8x128xbf16>, %vp: tensor<?x64x8x128xbf16>, %table: tensor<?x?xi32>, %used: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  %k = attnc.paged_kv %kp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %v = attnc.paged_kv %vp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>) {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// Pages of 16 rows, eight per K/V tile: ceil(MB / 8) tiles; no lengths (a
// sequence uses all its pages).
// CHECK-LABEL: gpu.module @paged16_0_module
// CHECK-SAME: tensor<"k", bf16, [NB, 16, 8, 128], input
// CHECK-NOT: kv_lengths
// CHECK-SAME: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(MB, 8)], max = 128, per_sm = 1)]
func.func @paged16(%q: tensor<?x32x?x128xbf16>, %kp: tensor<?x16x8x128xbf16>, %vp: tensor<?x16x8x128xbf16>, %table: tensor<?x?xi32>) -> tensor<?x32x?x128xbf16> {
  %k = attnc.paged_kv %kp, %table {page_size = 16} : tensor<?x16x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %v = attnc.paged_kv %vp, %table {page_size = 16} : tensor<?x16x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// A chunk of new tokens at the end of each sequence: the mask reads the
// sequence's length (bottom-right per sequence). The read is hoisted out of
// the steps to the one per block the K/V loops are bounded by.
// FORM-LABEL: func.func @chunk
// FORM: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// FORM: %[[L:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// FORM-NOT: tensor.extract %
// FORM: attnc.online_attention {{.+}} mask {
// FORM: arith.index_castui %[[L]] : i32 to index
// FORM-NOT: tensor.extract %
// FORM: attnc.online_attention_finalize
// CHECK-LABEL: gpu.module @chunk_0_module
// CHECK-SAME: tensor<"kv_lengths", i32, [B], input, align = 4>
// ONE-LABEL: gpu.module @chunk_module
func.func @chunk(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %used: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x32x?x128xbf16>
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>) {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %n = tensor.extract %used[%b] : tensor<?xi32>
        %len = arith.index_castui %n : i32 to index
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %len : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x32x?x128xbf16>
}
