// The K/V tile bounds --attnc-online-softmax derives from a mask region with
// an interval form (lo(i) <= j <= hi(i), non-decreasing): visited tiles,
// masked at both ends, unmasked in between; and the fallback. The masked
// tiles of both ends are visited in one loop, then the unmasked ones (the
// visit order is pinned in attnc-online-softmax-one-masked-loop.mlir).
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync" -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="strategy=mma_sync" | FileCheck %s --check-prefix=DEFAULT
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax | FileCheck %s --check-prefix=WGMMA
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=strategy=wgmma | FileCheck %s --check-prefix=HALF

// A sliding window of 1024 keys (keys [i - 1023, i]): per query tile of
// rows [128 t, 128 t + m - 1], K/V tiles of 64 from the one holding key
// 128 t - 1023 (2 t - 16, at least 0) to the one holding the last row's
// key; unmasked from the first tile whose first key is >= the last row's
// lo (ceildiv) to the last tile whose last key is <= 128 t (2 t). The
// masked loop visits END - FULLEND' + FULL - FIRST tiles (FULLEND' stops
// the unmasked ones at the last whole tile), the unmasked loop the rest.
// With the target's tiles, a window shorter than 8 query tiles halves the
// query tile (the masked fringe of each tile is block_q + block_kv keys);
// the prefix mask keeps the default.
// DEFAULT-LABEL: func.func @window
// DEFAULT: attnc.flash_config = #attnc.flash_config<block_q = 128,
// DEFAULT-LABEL: func.func @prefix
// DEFAULT: attnc.flash_config = #attnc.flash_config<block_q = 256,
// wgmma keeps its two-warpgroup query tile and halves the K/V tile instead
// (at d = 128); wgmma_ws (sm_90a's default: two consumer warpgroups with a
// mask) keeps both, and has an mma_sync_unaligned fallback of
// the same tiles for tensors TMA cannot address.
// A constant-span window (every query tile visits about as many K/V tiles)
// takes the persistent grid, and so does prefix-LM, whose keys run from the
// first to a bound that grows with the query: its grid runs longest first
// (heads on x, query tiles on y), as a causal one. Other masks keep one
// tile per block.
// WGMMA-LABEL: func.func @window(
// WGMMA: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>
// WGMMA-LABEL: func.func @prefix(
// WGMMA: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]
// HALF-LABEL: func.func @window_d128
// HALF: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma>
// HALF-LABEL: func.func @prefix_d128
// HALF: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
// WGMMA-LABEL: func.func @window_d128
// WGMMA: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>
// WGMMA-LABEL: func.func @prefix_d128
// WGMMA: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]
// CHECK-LABEL: func.func @window
// CHECK:     %[[M:.*]] = affine.min affine_map<(d0)[s0] -> (128, d0 * -128 + s0)>(%[[T:.*]])[%{{.*}}]
// CHECK:     %[[F0:.*]] = affine.max affine_map<(d0) -> (d0 * 2 - 16, 0)>(%[[T]])
// CHECK:     %[[FIRST:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>(%[[F0]])
// CHECK:     %[[E0:.*]] = affine.max affine_map<(d0, d1, d2) -> ((d0 + d1 * 128 - 1) floordiv 64 + 1, d2)>(%[[M]], %[[T]], %[[FIRST]])
// CHECK:     %[[END:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>(%[[E0]])
// CHECK:     affine.max affine_map<(d0, d1, d2) -> ((d0 + d1 * 128 - 1024) ceildiv 64, d2)>(%[[M]], %[[T]], %[[FIRST]])
// CHECK:     %[[FULL:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// CHECK:     affine.max affine_map<(d0, d1) -> (d0 * 2, d1)>(%[[T]], %[[FULL]])
// CHECK:     %[[FULLEND:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// CHECK:     %[[W0:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[FULLEND]])
// CHECK:     %[[WHOLE:.*]] = affine.max affine_map<(d0, d1) -> (d0, d1)>(%[[FULL]], %[[W0]])
// CHECK:     %[[NM:.*]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 - d1 + d2 - d3)>(%[[END]], %[[WHOLE]], %[[FULL]], %[[FIRST]])
// CHECK:     %[[NV:.*]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d2 - d3)>(%[[WHOLE]], %[[FULL]], %[[END]], %[[FIRST]])
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %[[NM]]
// CHECK:       attnc.online_attention {{.*}} mask {
// CHECK:     scf.for %{{.*}} = %[[NM]] to %[[NV]]
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK-NOT: scf.for %
func.func @window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %w : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %causal, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Prefix-LM (keys < 1000 or causal): hi(i) = max(i, 999), lo unbounded, so
// every tile from 0 is visited, the tiles up to hi of the first row are
// unmasked, and none is masked on their left: two loops, the unmasked
// tiles (up to the last whole one) then the masked ones.
// CHECK-LABEL: func.func @prefix
// CHECK:     affine.max affine_map<(d0) -> (d0 * 128, 999)>
// CHECK:     affine.max affine_map<(d0, d1) -> (d0 + d1 * 128 - 1, 999)>
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %[[W:[^ ]*]] step
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK:     scf.for %{{.*}} = %[[W]] to
// CHECK:       attnc.online_attention {{.*}} mask {
// CHECK-NOT: scf.for %
func.func @prefix(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %n = arith.constant 1000 : index
    %p = arith.cmpi slt, %j, %n : index
    %c = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %c, %p : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Chunks of 512, causal inside: lo(i) = 512 (i floordiv 512), hi(i) =
// min(lo(i) + 511, i); a query tile of 128 rows starts its K/V loop at
// tile 8 (t floordiv 4). Masked tiles on both sides: one loop for them,
// one for the unmasked ones.
// CHECK-LABEL: func.func @chunks
// CHECK:     affine.min affine_map<(d0) -> ((d0 floordiv 4) * 512 + 511, d0 * 128)>
// CHECK:     affine.max affine_map<(d0) -> ((d0 floordiv 4) * 8, 0)>
// CHECK:     scf.for %
// CHECK:       attnc.online_attention {{.*}} mask {
// CHECK:     scf.for %
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK-NOT: scf.for %
func.func @chunks(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %n = arith.constant 512 : index
    %cj = arith.floordivsi %j, %n : index
    %ci = arith.floordivsi %i, %n : index
    %same = arith.cmpi eq, %ci, %cj : index
    %c = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %same, %c : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Attention sinks plus a window (keys < 4, or keys in [i - 255, i]): two
// intervals with a gap, so only their hull (from key 0 to the last row's
// diagonal) bounds the loop and no tile is proven fully visible: one masked
// loop over the hull.
// CHECK-LABEL: func.func @sinks
// CHECK:     affine.max affine_map<(d0, d1) -> (3, d0 + d1 * 128 - 1)>
// CHECK:     %[[END:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %[[END]]
// CHECK:       mask {
// CHECK-NOT: scf.for %
func.func @sinks(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %four = arith.constant 4 : index
    %w = arith.constant 256 : index
    %sink = arith.cmpi slt, %j, %four : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %w : index
    %c = arith.cmpi sle, %j, %i : index
    %win = arith.andi %c, %near : i1
    %keep = arith.ori %sink, %win : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// |i - j| <= 256 through max(x, -x) has no interval form here: one loop
// over every K/V tile, each masked.
// CHECK-LABEL: func.func @no_interval
// CHECK:       scf.for %{{.*}} = %c0{{.*}} to
// CHECK:       mask {
// CHECK-NOT:   scf.for %
func.func @no_interval(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 256 : index
    %z = arith.constant 0 : index
    %d = arith.subi %i, %j : index
    %n = arith.subi %z, %d : index
    %a = arith.maxsi %d, %n : index
    %keep = arith.cmpi sle, %a, %w : index
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// A bottom-right sliding window (keys [i + Skv - Sq - 127, i + Skv - Sq]), its
// shift an i64 computed above the op and cast in the region: the bounds take
// the shift as a symbol, cast to index outside the region (a cast inside
// would not dominate the loop bounds).
// CHECK-LABEL: func.func @bottom_right_window
// CHECK:     %[[OFF:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:     scf.forall
// CHECK:       %[[S:.*]] = arith.index_cast %[[OFF]] : i64 to index
// CHECK:       affine.apply affine_map<(d0)[s0] -> (d0 * 128 + s0 - 127)>(%{{.*}})[%[[S]]]
// CHECK-COUNT-2: scf.for %
// CHECK-NOT:   scf.for %
// CHECK:     scf.forall.in_parallel
func.func @bottom_right_window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x64xbf16>
  %d = arith.subi %skv, %sq : index
  %off = arith.index_cast %d : index to i64
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %o = arith.index_cast %off : i64 to index
    %w = arith.constant 128 : index
    %si = arith.addi %i, %o : index
    %c = arith.cmpi sle, %j, %si : index
    %dist = arith.subi %si, %j : index
    %near = arith.cmpi slt, %dist, %w : index
    %keep = arith.andi %c, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

func.func @window_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 8.838835e-02 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %w : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %causal, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @prefix_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 8.838835e-02 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %n = arith.constant 1000 : index
    %prefix = arith.cmpi slt, %j, %n : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %causal, %prefix : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

// Document ids compared (an id match) with a causal conjunct: the
// diagonal's tile bounds (first tile 0, the constant, end at the last
// row's diagonal, unmasked from 0 up to the first row's) go to attnc.id_tile_bounds as the tiles
// to look at, and its run-time bounds intersect them: masked from the
// first tile holding a key of the tile's documents, unmasked where both
// prove every key visible, masked to the last. The masked tiles of both
// sides (V0..U0 and U1'..V1, U1' = max(U0, min(U1, Skv floordiv 64)))
// are visited first, in one loop, then the unmasked ones. The causal
// conjunct bounds each query tile's keys by a bound that grows with the
// query, so the grid runs longest first by that bound (heads on x, query
// tiles counted down on y): the tiles at the grid's end see few keys.
// CHECK-LABEL: func.func @documents_causal
// CHECK: %[[LAST:.+]] = arith.subi %{{.+}}, %c1{{.*}} overflow<nsw, nuw> : index
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %[[Y:.+]]) in
// CHECK:   %[[T:.+]] = arith.subi %[[LAST]], %[[Y]] overflow<nsw, nuw> : index
// CHECK:   %[[Q0:.+]] = affine.apply affine_map<(d0) -> (d0 * 128)>(%[[T]])
// CHECK:   %[[M:.+]] = affine.min affine_map<(d0)[s0] -> (128, d0 * -128 + s0)>(%[[T]])
// CHECK:   %[[END:.+]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// CHECK:   %[[FULLEND:.+]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.+}}, %[[END]])
// CHECK:   %[[V0:.+]], %[[F0:.+]], %[[F1:.+]], %[[V1:.+]] = attnc.id_tile_bounds %arg3[%[[B]]] at 1 rows %[[Q0]] + %[[M]], %arg4[%[[B]]] at 1 keys %{{.+}} tiles %{{.+}} to %[[END]] block_kv 64 : tensor<?x?xi64>, tensor<?x?xi64>
// CHECK:   %[[A:.+]] = affine.max affine_map<(d0) -> (0, d0)>(%[[F0]])
// CHECK:   %[[B2:.+]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%[[A]], %[[V1]])
// CHECK:   %[[U0:.+]] = affine.max affine_map<(d0, d1) -> (d0, d1)>(%[[B2]], %[[V0]])
// CHECK:   %[[C:.+]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%[[FULLEND]], %[[F1]])
// CHECK:   %[[D:.+]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%[[C]], %[[V1]])
// CHECK:   %[[U1:.+]] = affine.max affine_map<(d0, d1) -> (d0, d1)>(%[[D]], %[[U0]])
// CHECK:   %[[W0:.+]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[U1]])
// CHECK:   %[[W:.+]] = affine.max affine_map<(d0, d1) -> (d0, d1)>(%[[U0]], %[[W0]])
// CHECK:   %[[NL:.+]] = affine.apply affine_map<(d0, d1) -> (d0 - d1)>(%[[U0]], %[[V0]])
// CHECK:   %[[NM:.+]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 - d1 + d2 - d3)>(%[[V1]], %[[W]], %[[U0]], %[[V0]])
// CHECK:   %[[NV:.+]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d2 - d3)>(%[[W]], %[[U0]], %[[V1]], %[[V0]])
// CHECK:   scf.for %{{.+}} = %{{.+}} to %[[NM]]
// CHECK:     attnc.online_attention
// CHECK-SAME: mask {
// CHECK:   scf.for %{{.+}} = %[[NM]] to %[[NV]]
// CHECK-NOT: mask {
// CHECK:     attnc.online_attention
// CHECK: attnc.online_attention_finalize
// CHECK: mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]
func.func @documents_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x?xi64>, %dk: tensor<?x?xi64>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi64>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %c = arith.cmpi sle, %j, %i : index
        %keep = arith.andi %same, %c : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Documents alone: every tile is looked at (no other bound), the ids bound
// them. The backward's loops run over query tiles, which the ids do not
// bound (see attnc-online-softmax-backward.mlir). No bound grows with the
// query: query tiles stay on grid x, in order.
// CHECK-LABEL: func.func @documents
// CHECK: %[[V0:.+]], %[[F0:.+]], %[[F1:.+]], %[[V1:.+]] = attnc.id_tile_bounds %arg3[%{{.+}}, %{{.+}}] at 2 rows %{{.+}} + %{{.+}}, %arg4[%{{.+}}, %{{.+}}] at 2 keys
// CHECK-SAME: tiles %{{.+}} to %{{.+}} block_kv 64 : tensor<?x?x?xi32>, tensor<?x?x?xi32>
// CHECK: %[[NM:.+]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 - d1 + d2 - d3)>(%[[V1]], %{{.+}}, %{{.+}}, %[[V0]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[NM]]
// CHECK:   mask {
// CHECK: scf.for %{{.+}} = %[[NM]] to
// CHECK-NOT: scf.for %
// CHECK: mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]
func.func @documents(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x?x?xi32>, %dk: tensor<?x?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %y = tensor.extract %dk[%b, %h, %j] : tensor<?x?x?xi32>
        %x = tensor.extract %dq[%b, %h, %i] : tensor<?x?x?xi32>
        %same = arith.cmpi eq, %y, %x : i32
        attnc.yield %same : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Ids compared in a union are no bound: one masked loop over every tile.
// CHECK-LABEL: func.func @documents_or_prefix
// CHECK-NOT: attnc.id_tile_bounds
// CHECK: scf.for %
// CHECK-NOT: scf.for %
// CHECK: attnc.online_attention_finalize
func.func @documents_or_prefix(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x?xi64>, %dk: tensor<?x?xi64>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi64>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %n = arith.constant 16 : index
        %p = arith.cmpi slt, %j, %n : index
        %keep = arith.ori %same, %p : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A window whose size comes at run time (a 0-d tensor in device memory):
// the read is a symbol of the bounds, read once per (batch, head, query
// tile) before them; the K/V loops are those of a constant size
// (lo(i) = i - w + 1): masked tiles of both sides, then the unmasked ones.
// CHECK-LABEL: func.func @window_runtime
// CHECK: scf.forall
// CHECK:   %[[W:.+]] = tensor.extract %arg3[] : tensor<i64>
// CHECK:   %[[WI:.+]] = arith.index_cast %[[W]] : i64 to index
// CHECK:   affine.apply affine_map<(d0)[s0] -> (d0 * 128 - s0 + 1)>(%{{.+}})[%[[WI]]]
// CHECK:   scf.for %
// CHECK:     attnc.online_attention {{.*}} mask {
// CHECK-NOT:   tensor.extract
// CHECK:   scf.for %
// CHECK-NOT: mask {
// CHECK:     attnc.online_attention
// CHECK-NOT: scf.for %
func.func @window_runtime(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %w: tensor<i64>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %wv = tensor.extract %w[] : tensor<i64>
    %wi = arith.index_cast %wv : i64 to index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %wi : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %causal, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}
