// Mask and score regions that read tensors from above: one element per
// block (an ALiBi slope per query head, a value per sequence, a scalar in
// device memory). --attnc-online-softmax hoists each read out of the K/V
// loops to one per (batch, head, query tile); the kernel has a tensor
// parameter for it, named after the function argument, with the extents
// the block's coordinates run over, and loads the element once.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=64 block-kv=64" -mlir-print-local-scope | FileCheck %s --check-prefix=FORM
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="to-nvvm=false" | FileCheck %s
// The derived backward reads them per score (kernel _backward_1).
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="backward=true to-nvvm=false" | FileCheck %s --check-prefix=BWD

// ALiBi with per-head slopes [H, 1, 1] under GQA (32 query heads, 8 K/V
// heads): the read is at the query head, so the op is not packed.
// FORM-LABEL: func.func @alibi
// FORM: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in
// FORM: %[[SLOPE:.+]] = tensor.extract %arg3[%[[H]], %{{.+}}, %{{.+}}] : tensor<?x1x1xf32>
// FORM: scf.for
// FORM: attnc.online_attention
// FORM: score {
// FORM-NOT: tensor.extract
// FORM: arith.mulf %[[SLOPE]]
// FORM: attnc.yield
// CHECK-LABEL: gpu.module @alibi_module
// CHECK-SAME: tensor<"q", bf16, [B, 32, Sq, 128], input
// CHECK-SAME: tensor<"slopes", f32, [32, 1, 1], input, align = 4>
// CHECK-SAME: stride<"slopes.stride0", i64, tensor = "slopes", dim = 0>
// CHECK-SAME: stride<"slopes.stride2", i64, tensor = "slopes", dim = 2>
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xf32, 1>
// CHECK-NOT: tensor.expand_shape
// BWD-LABEL: gpu.module @alibi_backward_1_module
// BWD-SAME: tensor<"slopes", f32, [32, 1, 1], input, align = 4>
// BWD-SAME: stride<"slopes.stride0", i64, tensor = "slopes", dim = 0>
// BWD: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xf32, 1>
func.func @alibi(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %slopes: tensor<?x1x1xf32> {attnc.name = "slopes"}) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %m = tensor.extract %slopes[%h, %c0, %c0] : tensor<?x1x1xf32>
        %d = arith.subi %j, %i : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %m, %df : f32
        %r = arith.addf %s, %bias : f32
        attnc.yield %r : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// A mask reading a per-sequence tensor that is not the K/V lengths (keys
// before a sequence's start are hidden): an i32 [B] parameter named by the
// argument's position.
// FORM-LABEL: func.func @per_sequence
// FORM: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// FORM: tensor.extract %arg3[%[[B]]] : tensor<?xi32>
// CHECK-LABEL: gpu.module @per_sequence_module
// CHECK-SAME: tensor<"arg3", i32, [B], input, align = 4>
// CHECK-SAME: stride<"arg3.stride0", i64, tensor = "arg3", dim = 0>
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xi32, 1>
func.func @per_sequence(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %starts: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64, config = #attnc.flash_config<block_q = 32, block_kv = 64, warps = 2, stages = 2, strategy = mma_sync>}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %n = tensor.extract %starts[%b] : tensor<?xi32>
        %s = arith.index_castui %n : i32 to index
        %keep = arith.cmpi uge, %j, %s : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// A factor in device memory (a 0-d tensor) and a bias per batch and head,
// under the Hopper strategy: the parameters sit beside its tensor maps.
// CHECK-LABEL: gpu.module @scalar_and_bias_module
// CHECK-SAME: tensor<"temp", f32, [], input, align = 4>
// CHECK-SAME: tensor<"bias", f32, [B, H, 1, 1], input, align = 4>
// CHECK-SAME: tensormap<"k.map"
func.func @scalar_and_bias(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %t: tensor<f32> {attnc.name = "temp"}, %bias: tensor<?x?x1x1xf32> {attnc.name = "bias"}) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws>}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %x = tensor.extract %t[] : tensor<f32>
        %y = tensor.extract %bias[%b, %h, %c0, %c0] : tensor<?x?x1x1xf32>
        %sx = arith.mulf %s, %x : f32
        %r = arith.addf %sx, %y : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Without a mask, d = 64 takes the persistent strategy by default on
// sm_90a, regions that read tensors too: a persistent block walks tiles of
// many heads, so the slope is loaded in the walks (each role's scf.while),
// once per work tile, and not before them.
// CHECK-LABEL: gpu.module @unmasked_d64_module
// CHECK-SAME: tensor<"slopes", f32, [1, H, 1, 1], input, align = 4>
// CHECK-SAME: strategy = "wgmma_ws_persistent"
// CHECK: gpu.func @unmasked_d64(
// CHECK-NOT: memref.load {{.*}} : memref<?xf32, 1>
// CHECK: scf.while
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xf32, 1>
// CHECK: scf.while
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<?xf32, 1>
// CHECK: gpu.module @unmasked_d64_fallback_module
func.func @unmasked_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %slopes: tensor<1x?x1x1xf32> {attnc.name = "slopes"}) -> tensor<?x?x?x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %m = tensor.extract %slopes[%c0, %h, %c0, %c0] : tensor<1x?x1x1xf32>
        %d = arith.subi %i, %j : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %a = math.absf %df : f32
        %bias = arith.mulf %m, %a : f32
        %r = arith.subf %s, %bias : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x?x?x64xf16>
}

// -----

// Document masks: ids per query and per key position, read per score (the
// position clamped into the extent: padding rows and columns of a tile are
// evaluated too, then masked), parameters with the positions' extents.
// One tile per block (asked for: under a causal conjunct the default is the
// persistent grid, below). The
// tiles come from attnc.id_tile_bounds, which the block computes before
// its loops: the query tile's ids (least and greatest, then the rows of
// each, counted per warp by redux.sync), one strided pass over the keys
// (eight partials per thread), reduced per warp by redux.sync and across
// the 12 warps through 96 words of shared memory past the strategy's 82992
// bytes, behind a CTA barrier.
// CHECK-LABEL: gpu.module @documents_module
// CHECK-SAME: tensor<"doc_q", i64, [B, 1, Sq, 1], input, align = 8>
// CHECK-SAME: tensor<"doc_kv", i64, [B, 1, 1, Skv], input, align = 8>
// CHECK-SAME: stride<"doc_kv.stride3", i64, tensor = "doc_kv", dim = 3>
// CHECK-SAME: block = [384, 1, 1], shared_memory = 83376
// CHECK: memref.view %{{.+}}[%c82992][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<96xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.redux.sync  add
// CHECK: nvvm.redux.sync  max
// CHECK: nvvm.redux.sync  add
// CHECK: scf.for {{.+}} -> (i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK-COUNT-2: nvvm.redux.sync  min
// CHECK: nvvm.redux.sync  add
// CHECK: nvvm.redux.sync  min
// CHECK: nvvm.redux.sync  max
// CHECK: nvvm.redux.sync  add
// CHECK: gpu.barrier
// CHECK: arith.minui
// CHECK: memref.load %{{.+}}[%{{.+}}] {alignment = 8 : i64} : memref<?xi64, 1>
// BWD-LABEL: gpu.module @documents_backward_1_module
// BWD-SAME: tensor<"doc_q", i64, [B, 1, Sq, 1], input, align = 8>
// BWD-SAME: tensor<"doc_kv", i64, [B, 1, 1, Skv], input, align = 8>
// BWD: arith.minui
// BWD: memref.load %{{.+}}[%{{.+}}] {alignment = 8 : i64} : memref<?xi64, 1>
func.func @documents(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x1x?x1xi64> {attnc.name = "doc_q"}, %dk: tensor<?x1x1x?xi64> {attnc.name = "doc_kv"}) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %x = tensor.extract %dq[%b, %c0, %i, %c0] : tensor<?x1x?x1xi64>
        %y = tensor.extract %dk[%b, %c0, %c0, %j] : tensor<?x1x1x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %c = arith.cmpi sle, %j, %i : index
        %keep = arith.andi %same, %c : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// The same with the target's choice: a causal conjunct bounds the keys by
// a bound that grows with the query, so the persistent grid: its roles walk
// their tiles apart, so the producer warpgroup's three warps beside the
// issuing one (named barrier 12 of 96 threads, twice: the partials, then
// the scratch's reuse) draw the CTA's tiles and compute their bounds ahead
// of the others, and hand them on through an exchange past the scratch:
// four more mbarriers (full: one arrival, the helper that writes; empty:
// 257, the issuing thread and the 256 consumer threads) and two slots of
// the tile and its 10 words, then the helpers' draw word.
// CHECK-LABEL: gpu.module @documents_persistent_module
// CHECK-SAME: shared_memory = 116332
// CHECK-SAME: strategy = "wgmma_ws_persistent"
// CHECK: gpu.func @documents_persistent(
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c257_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c257_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// The issuing thread: each tile's words from its slot past the tile word,
// the slot released; after the tile's loads, the next tile from the next
// slot (the consumers get it as a drawn one).
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: memref.view %{{.+}}[%c116240][] {{.+}} to memref<23xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-10: memref.load %{{.+}}[%{{.+}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK-NEXT: arith.index_cast
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<23xi32, #gpu.address_space<workgroup>>
// The helpers: the bounds over their 3 warps' partials, published (the
// tile, then 10 words), the next tile drawn (once the readers have taken
// this one) and shared; past the grid's
// end, one more slot that ends the readers' walks.
// CHECK: scf.while
// CHECK: nvvm.redux.sync  min
// CHECK: nvvm.barrier id = %c12_i32{{.*}} number_of_threads = %c96_i32
// CHECK-COUNT-24: memref.load %{{.+}}[%{{.+}}] : memref<96xi32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.load
// CHECK: nvvm.barrier id = %c12_i32{{.*}} number_of_threads = %c96_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-11: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.atomicrmw add
// CHECK: memref.store %{{.+}}, %{{.+}}[%c22{{.*}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.barrier id = %c12_i32{{.*}} number_of_threads = %c96_i32
// CHECK: memref.load %{{.+}}[%c22{{.*}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-11: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive
// The consumers: each tile's words at its start, the slot released; no
// bounds of their own.
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-10: memref.load %{{.+}}[%{{.+}}] : memref<23xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.redux.sync
// CHECK: gpu.module @documents_persistent_fallback_module
func.func @documents_persistent(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x1x?x1xi64> {attnc.name = "doc_q"}, %dk: tensor<?x1x1x?xi64> {attnc.name = "doc_kv"}) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %x = tensor.extract %dq[%b, %c0, %i, %c0] : tensor<?x1x?x1xi64>
        %y = tensor.extract %dk[%b, %c0, %c0, %j] : tensor<?x1x1x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %c = arith.cmpi sle, %j, %i : index
        %keep = arith.andi %same, %c : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// One ids tensor of a self-attention read at the query and at the key
// position: its position dimension runs over both, so the contract asks
// Sq = Skv; the tile bounds read it on both sides.
// CHECK-LABEL: gpu.module @documents_self_module
// CHECK-SAME: tensor<"ids", i32, [B, H, Sq], input, align = 4>
// CHECK-SAME: constraints = [divisible(H, Hkv), equal(Sq, Skv)]
// CHECK: nvvm.redux.sync  min
// CHECK: nvvm.redux.sync  max
// CHECK-LABEL: gpu.module @documents_self_fallback_module
// CHECK-SAME: constraints = [divisible(H, Hkv), equal(Sq, Skv)]
func.func @documents_self(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %ids: tensor<?x?x?xi32> {attnc.name = "ids"}) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %ids[%b, %h, %i] : tensor<?x?x?xi32>
        %y = tensor.extract %ids[%b, %h, %j] : tensor<?x?x?xi32>
        %same = arith.cmpi eq, %x, %y : i32
        attnc.yield %same : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}
