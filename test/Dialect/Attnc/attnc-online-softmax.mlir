// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=64 block-kv=64 strategy=mma_sync" -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="strategy=mma_sync" -mlir-print-local-scope | FileCheck %s --check-prefix=DEFAULT
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=32 strategy=mma_sync" -mlir-print-local-scope | FileCheck %s --check-prefix=TILE
// RUN: not attnc-opt %s -split-input-file --attnc-online-softmax="chip=sm_42" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attnc-opt %s -split-input-file --attnc-online-softmax="block-kv=-8" 2>&1 | FileCheck %s --check-prefix=NEG

// Affine maps are printed inline (-mlir-print-local-scope) so that each case
// checks its own index arithmetic.

// CHIP: error: unknown chip 'sm_42' for --attnc-online-softmax; known chips: sm_80, sm_90, sm_90a
// NEG: error: --attnc-online-softmax options block-q and block-kv must be positive (or 0 for the target's default), got block-q=0 and block-kv=-8

// Non-causal, every extent dynamic: one K/V loop over all ceildiv(Skv, 64)
// tiles, no mask, one division (the finalize).

// The target description's defaults (sm_90a): 256 query rows for every
// head dimension, 64 K/V rows for d=128 and 128 for d<=64.
// DEFAULT-LABEL: func.func @noncausal
// DEFAULT: attnc.flash_config = #attnc.flash_config<block_q = 256, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync>
// DEFAULT-LABEL: func.func @gqa
// DEFAULT: attnc.flash_config = #attnc.flash_config<block_q = 256, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>

// CHECK-LABEL: func.func @noncausal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x?x128xbf16>, %[[K:.+]]: tensor<?x?x?x128xbf16>, %[[V:.+]]: tensor<?x?x?x128xbf16>)
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[H:.+]] = tensor.dim %[[Q]], %c1
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %[[Q]], %c2
// CHECK-DAG: %[[HKV:.+]] = tensor.dim %[[K]], %c1
// CHECK-DAG: %[[SKV:.+]] = tensor.dim %[[K]], %c2
// CHECK-DAG: %[[NQ:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[SQ]]]
// CHECK-DAG: %[[NKV:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[SKV]]]
// CHECK-DAG: %[[GROUP:.+]] = arith.divui %[[H]], %[[HKV]] : index
// CHECK-DAG: %[[O_INIT:.+]] = tensor.empty(%[[B]], %[[H]], %[[SQ]]) : tensor<?x?x?x128xbf16>
// CHECK-DAG: %[[LSE_INIT:.+]] = tensor.empty(%[[B]], %[[H]], %[[SQ]]) : tensor<?x?x?xf32>
// CHECK: %[[RES:.+]]:2 = scf.forall (%[[BI:.+]], %[[HI:.+]], %[[QT:.+]]) in (%[[B]], %[[H]], %[[NQ]])
// CHECK-SAME: shared_outs(%[[O_OUT:.+]] = %[[O_INIT]], %[[LSE_OUT:.+]] = %[[LSE_INIT]])
// CHECK-SAME: -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
// CHECK: %[[HKVI:.+]] = arith.divui %[[HI]], %[[GROUP]] : index
// CHECK: %[[Q0:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[QT]])
// CHECK: %[[MQ:.+]] = affine.min affine_map<(d0)[s0] -> (64, d0 * -64 + s0)>(%[[QT]])[%[[SQ]]]
// CHECK: %[[QTILE:.+]] = tensor.extract_slice %[[Q]][%[[BI]], %[[HI]], %[[Q0]], 0] [1, 1, %[[MQ]], 128] [1, 1, 1, 1]
// CHECK-SAME: : tensor<?x?x?x128xbf16> to tensor<?x128xbf16>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ACC0:.+]] = tensor.splat %[[ZERO]][%[[MQ]]] : tensor<?x128xf32>
// CHECK-DAG: %[[M0:.+]] = tensor.splat %[[NEGINF]][%[[MQ]]] : tensor<?xf32>
// CHECK-DAG: %[[L0:.+]] = tensor.splat %[[ZERO]][%[[MQ]]] : tensor<?xf32>
// CHECK: %[[LOOP:.+]]:3 = scf.for %[[J:.+]] = %{{.+}} to %[[NKV]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[ACC0]], %[[M:.+]] = %[[M0]], %[[L:.+]] = %[[L0]])
// CHECK-SAME: -> (tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>)
// CHECK: %[[K0:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[J]])
// CHECK: %[[NK:.+]] = affine.min affine_map<(d0)[s0] -> (64, d0 * -64 + s0)>(%[[J]])[%[[SKV]]]
// CHECK: %[[KTILE:.+]] = tensor.extract_slice %[[K]][%[[BI]], %[[HKVI]], %[[K0]], 0] [1, 1, %[[NK]], 128] [1, 1, 1, 1]
// CHECK: %[[VTILE:.+]] = tensor.extract_slice %[[V]][%[[BI]], %[[HKVI]], %[[K0]], 0] [1, 1, %[[NK]], 128] [1, 1, 1, 1]
// CHECK: %[[NACC:[^,]+]], %[[NM:[^,]+]], %[[NL:[^,]+]] = attnc.online_attention %[[QTILE]], %[[KTILE]], %[[VTILE]], %[[ACC]], %[[M]], %[[L]] at{{ ?}}[%[[BI]], %[[HI]], %[[Q0]], %[[K0]]]
// CHECK-SAME: {scale = 0.088388347648318447 : f64}
// CHECK-NOT: mask
// CHECK: scf.yield %[[NACC]], %[[NM]], %[[NL]]
// CHECK-NOT: scf.for
// CHECK-NOT: divf
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = attnc.online_attention_finalize %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2
// CHECK-SAME: -> tensor<?x128xbf16>, tensor<?xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[OUT]] into %[[O_OUT]][%[[BI]], %[[HI]], %[[Q0]], 0] [1, 1, %[[MQ]], 128] [1, 1, 1, 1]
// CHECK-NEXT: tensor.parallel_insert_slice %[[LSE]] into %[[LSE_OUT]][%[[BI]], %[[HI]], %[[Q0]]] [1, 1, %[[MQ]]] [1, 1, 1]
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT: attnc.attention
// CHECK: return %[[RES]]#0

// TILE-LABEL: func.func @noncausal
// TILE-DAG: affine.apply affine_map<()[s0] -> (s0 ceildiv 128)>
// TILE-DAG: %[[NKV:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 32)>
// TILE: scf.forall
// TILE: affine.apply affine_map<(d0) -> (d0 * 128)>
// TILE: affine.min affine_map<(d0)[s0] -> (128, d0 * -128 + s0)>
// TILE: scf.for %{{.+}} = %{{.+}} to %[[NKV]]
// TILE: affine.apply affine_map<(d0) -> (d0 * 32)>
// TILE: affine.min affine_map<(d0)[s0] -> (32, d0 * -32 + s0)>
// TILE: attnc.online_attention
// TILE: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync>
func.func @noncausal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Causal: tiles [0, nwhole) run unmasked, [nwhole, nvisit) with the mask,
// and tiles past the last query row of the tile are not visited. With
// q0 = 64 * qt and mq rows in the query tile:
//   nvisit = min(ceildiv(Skv, 64), ceildiv(q0 + mq, 64))
//   nfull  = min(ceildiv(Skv, 64), (q0 + 1) floordiv 64) = min(.., qt)
//   nwhole = min(nfull, Skv floordiv 64)
// The unmasked tiles are whole (static 64-row slices); a short last K/V
// tile is masked with the diagonal's.

// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x?x128xbf16>, %[[K:.+]]: tensor<?x?x?x128xbf16>, %[[V:.+]]: tensor<?x?x?x128xbf16>)
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %[[Q]], %c2
// CHECK-DAG: %[[SKV:.+]] = tensor.dim %[[K]], %c2
// Longest first: the forall counts query tiles down from the last one,
// heads on grid x, query tiles on y, batch on z.
// CHECK: %[[NQ:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[SQ]]]
// CHECK: %[[LAST:.+]] = arith.subi %[[NQ]], %c1{{.*}} overflow<nsw, nuw> : index
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[IV:.+]]) in (%{{.+}}, %{{.+}}, %[[NQ]])
// CHECK: %[[QT:.+]] = arith.subi %[[LAST]], %[[IV]] overflow<nsw, nuw> : index
// CHECK: %[[Q0:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[QT]])
// CHECK: %[[MQ:.+]] = affine.min affine_map<(d0)[s0] -> (64, d0 * -64 + s0)>(%[[QT]])[%[[SQ]]]
// CHECK: %[[QTILE:.+]] = tensor.extract_slice %[[Q]]
// CHECK-DAG: %[[ACC0:.+]] = tensor.splat %{{.+}}[%[[MQ]]] : tensor<?x128xf32>
// CHECK-DAG: %[[NVISIT:.+]] = affine.min affine_map<(d0, d1)[s0] -> (s0 ceildiv 64, (d0 + d1 * 64) ceildiv 64)>(%[[MQ]], %[[QT]])[%[[SKV]]]
// CHECK-DAG: %[[NFULL:.+]] = affine.min affine_map<(d0)[s0] -> (s0 ceildiv 64, d0)>(%[[QT]])[%[[SKV]]]
// CHECK: %[[NWHOLE:.+]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[NFULL]])[%[[SKV]]]
// CHECK: %[[FULL:.+]]:3 = scf.for %[[J:.+]] = %{{.+}} to %[[NWHOLE]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[ACC0]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: %[[K0:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[J]])
// CHECK: tensor.extract_slice %[[K]][%{{.+}}, %{{.+}}, %[[K0]], 0] [1, 1, 64, 128] [1, 1, 1, 1] : tensor<?x?x?x128xbf16> to tensor<64x128xbf16>
// CHECK: attnc.online_attention %[[QTILE]], %{{.+}}, %{{.+}}, %[[ACC]], %{{.+}}, %{{.+}} at{{ ?}}[%{{.+}}, %{{.+}}, %[[Q0]], %[[K0]]]
// CHECK-SAME: {scale = 0.088388347648318447 : f64}
// CHECK-NOT: mask
// CHECK: scf.yield
// CHECK: %[[DIAG:.+]]:3 = scf.for %[[J2:.+]] = %[[NWHOLE]] to %[[NVISIT]] step %{{.+}} iter_args(%{{.+}} = %[[FULL]]#0, %{{.+}} = %[[FULL]]#1, %{{.+}} = %[[FULL]]#2)
// CHECK: %[[K02:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[J2]])
// CHECK: attnc.online_attention %[[QTILE]], {{.+}} at{{ ?}}[%{{.+}}, %{{.+}}, %[[Q0]], %[[K02]]]
// CHECK-SAME: {scale = 0.088388347648318447 : f64}
// CHECK-SAME: mask {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[JJ:.+]]: index):
// CHECK-NEXT: %[[KEEP:.+]] = arith.cmpi ule, %[[JJ]], %[[I]] : index
// CHECK-NEXT: attnc.yield %[[KEEP]] : i1
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: attnc.online_attention_finalize %[[DIAG]]#0, %[[DIAG]]#1, %[[DIAG]]#2
// CHECK: mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]

// With 128 x 32 tiles: nvisit = min(ceildiv(Skv, 32), ceildiv(q0 + mq, 32)),
// nfull = min(ceildiv(Skv, 32), (128 * qt + 1) floordiv 32 = 4 * qt),
// nwhole = min(nfull, Skv floordiv 32).
// TILE-LABEL: func.func @causal
// TILE: %[[MQ:.+]] = affine.min affine_map<(d0)[s0] -> (128, d0 * -128 + s0)>(%[[QT:.+]])[%{{.+}}]
// TILE-DAG: %[[NVISIT:.+]] = affine.min affine_map<(d0, d1)[s0] -> (s0 ceildiv 32, (d0 + d1 * 128) ceildiv 32)>(%[[MQ]], %[[QT]])
// TILE-DAG: %[[NFULL:.+]] = affine.min affine_map<(d0)[s0] -> (s0 ceildiv 32, d0 * 4)>(%[[QT]])
// TILE: %[[NWHOLE:.+]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 32)>(%[[NFULL]])
// TILE: scf.for %{{.+}} = %{{.+}} to %[[NWHOLE]]
// TILE: scf.for %{{.+}} = %[[NWHOLE]] to %[[NVISIT]]
// TILE: mask
func.func @causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Grouped-query attention with static heads (32 query heads, 8 K/V heads):
// query head h reads K/V head h floordiv 4; the query tile uses h itself.

// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<2x32x?x64xf16>, %[[K:.+]]: tensor<2x8x?x64xf16>, %[[V:.+]]: tensor<2x8x?x64xf16>)
// CHECK-NOT: arith.divui
// CHECK: %[[O_INIT:.+]] = tensor.empty(%{{.+}}) : tensor<2x32x?x64xf16>
// CHECK: %[[LSE_INIT:.+]] = tensor.empty(%{{.+}}) : tensor<2x32x?xf32>
// CHECK: scf.forall (%[[BI:.+]], %[[HI:.+]], %{{.+}}) in (2, 32, %{{.+}})
// CHECK: %[[HKVI:.+]] = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%[[HI]])
// CHECK: tensor.extract_slice %[[Q]][%[[BI]], %[[HI]], %{{.+}}, 0]
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[K]][%[[BI]], %[[HKVI]], %{{.+}}, 0] [1, 1, %{{.+}}, 64] [1, 1, 1, 1] : tensor<2x8x?x64xf16> to tensor<?x64xf16>
// CHECK: tensor.extract_slice %[[V]][%[[BI]], %[[HKVI]], %{{.+}}, 0] [1, 1, %{{.+}}, 64] [1, 1, 1, 1] : tensor<2x8x?x64xf16> to tensor<?x64xf16>
// CHECK: attnc.online_attention
// CHECK-SAME: {scale = 1.250000e-01 : f64}
// CHECK-SAME: : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
// CHECK: attnc.online_attention_finalize
// CHECK-SAME: -> tensor<?x64xf16>, tensor<?xf32>
func.func @gqa(%q: tensor<2x32x?x64xf16>, %k: tensor<2x8x?x64xf16>, %v: tensor<2x8x?x64xf16>) -> tensor<2x32x?x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<2x32x?x64xf16>, tensor<2x8x?x64xf16>, tensor<2x8x?x64xf16> -> tensor<2x32x?x64xf16>
  return %o : tensor<2x32x?x64xf16>
}

// -----

// Static shapes, causal, Sq = 256 (a multiple of 64: query tiles are static
// 64-row tiles), Skv = 100 (not a multiple: K/V tiles keep a dynamic extent),
// value head dim 96 != 128, H == Hkv (no head division at all).

// CHECK-LABEL: func.func @static_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x256x128xbf16>, %[[K:.+]]: tensor<1x4x100x128xbf16>, %[[V:.+]]: tensor<1x4x100x96xbf16>)
// CHECK-NOT: tensor.dim
// CHECK-NOT: arith.divui
// CHECK: %[[O_INIT:.+]] = tensor.empty() : tensor<1x4x256x96xbf16>
// CHECK: %[[LSE_INIT:.+]] = tensor.empty() : tensor<1x4x256xf32>
// CHECK: %[[LAST:.+]] = arith.constant 3 : index
// CHECK: %[[RES:.+]]:2 = scf.forall (%[[BI:.+]], %[[HI:.+]], %[[IV:.+]]) in (1, 4, 4) shared_outs(%{{.+}} = %[[O_INIT]], %{{.+}} = %[[LSE_INIT]])
// CHECK: %[[QT:.+]] = arith.subi %[[LAST]], %[[IV]] overflow<nsw, nuw> : index
// CHECK: %[[Q0:.+]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[QT]])
// CHECK: %[[QTILE:.+]] = tensor.extract_slice %[[Q]][%[[BI]], %[[HI]], %[[Q0]], 0] [1, 1, 64, 128] [1, 1, 1, 1] : tensor<1x4x256x128xbf16> to tensor<64x128xbf16>
// CHECK-DAG: tensor.splat %{{.+}} : tensor<64x96xf32>
// CHECK-DAG: %[[NVISIT:.+]] = affine.min affine_map<(d0) -> (2, d0 + 1)>(%[[QT]])
// CHECK-DAG: %[[NFULL:.+]] = affine.min affine_map<(d0) -> (2, d0)>(%[[QT]])
// CHECK: %[[NWHOLE:.+]] = affine.min affine_map<(d0) -> (d0, 1)>(%[[NFULL]])
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %[[NWHOLE]]
// CHECK: tensor.extract_slice %[[K]][%[[BI]], %[[HI]], %{{.+}}, 0] [1, 1, 64, 128]
// CHECK: tensor.extract_slice %[[V]][%[[BI]], %[[HI]], %{{.+}}, 0] [1, 1, 64, 96] [1, 1, 1, 1] : tensor<1x4x100x96xbf16> to tensor<64x96xbf16>
// CHECK: attnc.online_attention
// CHECK-SAME: {scale = 5.000000e-01 : f64}
// CHECK-SAME: : tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x96xbf16>, tensor<64x96xf32>, tensor<64xf32>, tensor<64xf32>{{$}}
// CHECK: scf.for %[[J2:.+]] = %[[NWHOLE]] to %[[NVISIT]]
// CHECK: %[[NK:.+]] = affine.min affine_map<(d0) -> (64, d0 * -64 + 100)>(%[[J2]])
// CHECK: tensor.extract_slice %[[K]][%[[BI]], %[[HI]], %{{.+}}, 0] [1, 1, %[[NK]], 128]
// CHECK: attnc.online_attention
// CHECK-SAME: {scale = 5.000000e-01 : f64}
// CHECK-SAME: mask
// CHECK: attnc.online_attention_finalize
// CHECK-SAME: -> tensor<64x96xbf16>, tensor<64xf32>
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[BI]], %[[HI]], %[[Q0]], 0] [1, 1, 64, 96] [1, 1, 1, 1] : tensor<64x96xbf16> into tensor<1x4x256x96xbf16>
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[BI]], %[[HI]], %[[Q0]]] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x4x256xf32>
// CHECK: return %[[RES]]#0 : tensor<1x4x256x96xbf16>

// With 128 x 32 tiles: two query tiles, Skv = 100 gives 4 K/V tiles, 3
// whole ones; the fourth (4 rows) is masked.
// TILE-LABEL: func.func @static_causal
// TILE: scf.forall (%{{.+}}, %{{.+}}, %[[IV:.+]]) in (1, 4, 2)
// TILE: %[[QT:.+]] = arith.subi %{{.+}}, %[[IV]]
// TILE: tensor.extract_slice {{.+}} to tensor<128x128xbf16>
// TILE-DAG: %[[NVISIT:.+]] = affine.min affine_map<(d0) -> (4, d0 * 4 + 4)>(%[[QT]])
// TILE-DAG: %[[NFULL:.+]] = affine.min affine_map<(d0) -> (4, d0 * 4)>(%[[QT]])
// TILE: %[[NWHOLE:.+]] = affine.min affine_map<(d0) -> (d0, 3)>(%[[NFULL]])
// TILE: scf.for %{{.+}} = %{{.+}} to %[[NWHOLE]]
// TILE-NOT: affine.min
// TILE: scf.for %{{.+}} = %[[NWHOLE]] to %[[NVISIT]]
// TILE: affine.min affine_map<(d0) -> (32, d0 * -32 + 100)>
func.func @static_causal(%q: tensor<1x4x256x128xbf16>, %k: tensor<1x4x100x128xbf16>, %v: tensor<1x4x100x96xbf16>) -> tensor<1x4x256x96xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.5 : f64}
      : tensor<1x4x256x128xbf16>, tensor<1x4x100x128xbf16>, tensor<1x4x100x96xbf16> -> tensor<1x4x256x96xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<1x4x256x96xbf16>
}

// -----

// Decode: one query row (Sq = 1 <= block-q): the query tile is a static
// 1-row tile; multi-query attention (one K/V head) over a dynamic cache.

// CHECK-LABEL: func.func @decode_mqa
// CHECK: scf.forall (%{{.+}}, %[[HI:.+]], %[[QT:.+]]) in (%{{.+}}, 8, 1)
// CHECK: %[[HKVI:.+]] = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%[[HI]])
// CHECK: tensor.extract_slice {{.+}} [1, 1, 1, 128] [1, 1, 1, 1] : tensor<?x8x1x128xbf16> to tensor<1x128xbf16>
// CHECK: tensor.splat %{{.+}} : tensor<1x128xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[%{{.+}}, %[[HKVI]], %{{.+}}, 0]
// CHECK: attnc.online_attention_finalize
// CHECK-SAME: -> tensor<1x128xbf16>, tensor<1xf32>
func.func @decode_mqa(%q: tensor<?x8x1x128xbf16>, %k: tensor<?x1x?x128xbf16>, %v: tensor<?x1x?x128xbf16>) -> tensor<?x8x1x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x8x1x128xbf16>, tensor<?x1x?x128xbf16>, tensor<?x1x?x128xbf16> -> tensor<?x8x1x128xbf16>
  return %o : tensor<?x8x1x128xbf16>
}

// -----

// Must not change: a function without attention.

// CHECK-LABEL: func.func @no_attention
// CHECK-NEXT: %[[E:.+]] = attnc.exp %{{.+}} : tensor<?x4096xbf16>
// CHECK-NEXT: return %[[E]]
// CHECK-NOT: scf.forall
// TILE-LABEL: func.func @no_attention
// TILE-NOT: scf.forall
func.func @no_attention(%x: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %e = attnc.exp %x : tensor<?x4096xbf16>
  return %e : tensor<?x4096xbf16>
}

// -----

// Bottom-right causal (key j visible to query i iff j + Sq <= i + Skv): the
// K/V loop is split as for top-left with the diagonal shifted by Skv - Sq,
// clamped at 0 tiles (with Skv < Sq the first query rows see no key).

// TILE-LABEL: func.func @bottom_right
// CHECK-LABEL: func.func @bottom_right
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %{{.+}}, %c2{{.*}} : tensor<?x?x?x128xbf16>
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QT:.+]]) in
// CHECK-DAG: affine.max affine_map<(d0, d1)[s0, s1] -> (0, (d0 + d1 * 64 - s0 + s1) ceildiv 64)>
// CHECK-DAG: affine.max affine_map<(d0)[s0, s1] -> (0, (d0 * 64 - s0 + s1 + 1) floordiv 64)>
// CHECK: scf.for
// CHECK-NOT: mask
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: attnc.online_attention
// CHECK: mask {
// CHECK: %[[L:.+]] = arith.addi %{{.+}}, %[[SQ]] : index
// CHECK: %[[R:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: arith.cmpi ule, %[[L]], %[[R]] : index
func.func @bottom_right(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %l = arith.addi %j, %sq : index
        %r = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %l, %r : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A mask that is not causal (a sliding window of 128 keys) cannot skip
// tiles: one K/V loop over every tile, each step with the mask. A score
// modifier goes to every step; the runtime scale and the op's own config
// (which wins over the target's tiles) are carried over.

// TILE-LABEL: func.func @window_softcap
// CHECK-LABEL: func.func @window_softcap
// CHECK-SAME: %[[S:[^:]+]]: f32
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: attnc.online_attention {{.+}} runtime_scale(%[[S]]) {scale = 1.250000e-01 : f64}
// CHECK: score {
// CHECK: math.tanh
// CHECK: mask {
// CHECK: arith.cmpi ult
// CHECK-NOT: scf.for {{.+}} iter_args
// CHECK: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync>
func.func @window_softcap(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %s: f32) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v runtime_scale(%s)
      {config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 30.0 : f32
        %d = arith.divf %x, %c : f32
        %t = math.tanh %d : f32
        %y = arith.mulf %t, %c : f32
        attnc.yield %y : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %w = arith.constant 128 : index
        %jw = arith.addi %j, %w : index
        %keep = arith.cmpi ult, %i, %jw : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Dropout: every step of the flash form carries the op's seed, offset and
// probability, and the rows its mask numbers: the tile's first query is
// probability row (b * H + h) * Sq + q0 of ceil(Skv / 8) counters each.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[SEED:[^:]+]]: i64, %[[OFF:[^:]+]]: i64)
// CHECK-DAG: %[[H:.+]] = tensor.dim %{{.+}}, %c1
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %{{.+}}, %c2
// CHECK-DAG: %[[SKV:.+]] = tensor.dim %[[K:.+]], %c2
// CHECK: scf.forall (%[[BI:.+]], %[[HI:.+]], %{{.+}}) in
// CHECK: %[[ROW:.+]] = affine.apply affine_map<(d0, d1, d2)[s0, s1] -> (d2 * 64 + (d1 + d0 * s0) * s1)>(%[[BI]], %[[HI]], %{{.+}})[%[[H]], %[[SQ]]]
// CHECK: %[[WORDS:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 8)>()[%[[SKV]]]
// CHECK: scf.for
// CHECK: attnc.online_attention {{.+}} dropout(%[[SEED]], %[[OFF]]) rows(%[[ROW]], %[[WORDS]]) {dropout_probability = 2.500000e-01 : f64, scale = 1.250000e-01 : f64}
// CHECK: scf.for
// CHECK: attnc.online_attention {{.+}} dropout(%[[SEED]], %[[OFF]]) rows(%[[ROW]], %[[WORDS]]) {dropout_probability = 2.500000e-01 : f64, scale = 1.250000e-01 : f64}
// CHECK-SAME: mask
// CHECK: attnc.online_attention_finalize
func.func @dropout(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
                   %seed: i64, %offset: i64) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v dropout(%seed, %offset) {dropout_probability = 0.25 : f64, scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}
