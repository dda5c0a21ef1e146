// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=backward-strategy=mma_sync --canonicalize --cse | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax --canonicalize --cse | FileCheck %s --check-prefix=WG
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=l2-group-mib=0 --canonicalize --cse | FileCheck %s --check-prefix=NOGROUP

// The backward's flash form, K/V stationary: a forall over (batch, K/V
// head, K/V tile), with a causal mask on grid (z, x, y) (the longest K/V
// tiles, the first of each head, start first); dQ starts at 0 and every K/V tile adds
// its contributions; a loop over the 4 query heads of the group, and for
// each, with a top-left causal mask, the query tiles crossing the diagonal
// (masked) then those past it (unmasked): the ones before it are skipped.
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0)[s0] -> (d0 * 2, s0 ceildiv 64)>
// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0)[s0] -> ((d0 * 128 + 127) ceildiv 64, s0 ceildiv 64)>
// CHECK-LABEL: func.func @causal_gqa
// CHECK: %[[ZERO:.*]] = tensor.splat %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x8x?x64xf32>
// CHECK: scf.forall (%[[B:.*]], %[[HKV:.*]], %[[N:.*]]) in (%{{.*}}, 2, %{{.*}}) shared_outs(%[[DQ:.*]] = %[[ZERO]], %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}})
// CHECK:   %[[KV0:.*]] = affine.apply #{{.*}}(%[[N]])
// CHECK:   %[[K:.*]] = tensor.extract_slice %arg1[%[[B]], %[[HKV]], %[[KV0]], 0]
// CHECK:   scf.for %[[G:.*]] = %c0 to %c4 step %c1 iter_args
// CHECK:     %[[H:.*]] = affine.apply #{{.*}}(%[[HKV]], %[[G]])
// CHECK:     %[[LO:.*]] = affine.min #[[FIRST]](%[[N]])[%{{.*}}]
// CHECK:     %[[MID:.*]] = affine.min #[[FULL]](%[[N]])[%{{.*}}]
// CHECK:     scf.for %[[I:.*]] = %[[LO]] to %[[MID]] step %c1
// CHECK:       %[[LSE:.*]] = tensor.extract_slice %arg4[%[[B]], %[[H]], %{{.*}}] [1, 1, %{{.*}}] [1, 1, 1] : tensor<?x8x?xf32> to tensor<?xf32>
// CHECK:       %[[D:.*]] = tensor.extract_slice %arg5[%[[B]], %[[H]], %{{.*}}, 0] [1, 1, %{{.*}}, 1] [1, 1, 1, 1] : tensor<?x8x?x1xf32> to tensor<?xf32>
// CHECK:       attnc.online_attention_grad %{{.*}}, %[[K]], %{{.*}}, %{{.*}}, %[[LSE]], %[[D]], %{{.*}}, %{{.*}} at [%[[B]], %[[H]], %{{.*}}, %[[KV0]]]
// CHECK-SAME:    mask {
// CHECK:       attnc.accumulate %{{.*}} into %{{.*}}[%[[G]], %{{.*}}, %c0] : tensor<?x64xf32> into tensor<4x?x64xf32>
// CHECK:     scf.for %{{.*}} = %[[MID]] to %{{.*}} step %c1
// CHECK:       attnc.online_attention_grad
// CHECK-NOT:     mask
// CHECK:       attnc.accumulate
// CHECK:   attnc.cast %{{.*}} : tensor<?x64xf32> to tensor<?x64xbf16>
// CHECK:   attnc.cast %{{.*}} : tensor<?x64xf32> to tensor<?x64xbf16>
// CHECK:   scf.forall.in_parallel {
// CHECK:     attnc.parallel_accumulate %{{.*}} into %[[DQ]][%[[B]], %{{.*}}, %c0, %c0] : tensor<4x?x64xf32> into tensor<?x8x?x64xf32>
// CHECK:     tensor.parallel_insert_slice %{{.*}} into %[[DK]][%[[B]], %[[HKV]], %[[KV0]], 0]
// CHECK:     tensor.parallel_insert_slice %{{.*}} into %[[DV]][%[[B]], %[[HKV]], %[[KV0]], 0]
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]}
// sm_90a's default backward runs on warpgroup MMAs, at d = 64 one warpgroup
// of 64 keys per K/V tile (two blocks fit an SM); its causal grid runs
// longest first with the heads in groups whose query rows fit 32 MiB of L2
// (and none with the option's 0).
// WG: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma, l2_group_mib = 32>, mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]}
// NOGROUP: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma>, mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]}
func.func @causal_gqa(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>,
    %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>)
    -> (tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32>
        -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
}

// -----

// Without a mask: one query loop over every tile, steps without a mask;
// static shapes fold the tiles, and the group loop of one head (MHA: the
// query head is the K/V head) folds away.
// CHECK-LABEL: func.func @plain
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[N:.*]]) in (2, 4, 2)
// CHECK-NOT: scf.for %{{.*}} = %c0 to %c1
// CHECK:     scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK:       attnc.online_attention_grad {{.*}} at [%[[B]], %[[H]], %{{.*}}, %{{.*}}] {scale = 1.250000e-01 : f64} : tensor<64x128xf16>, tensor<128x128xf16>
// CHECK-NOT:   mask
// Every K/V tile costs the same: K/V tiles on grid x, whose consecutive
// CTAs read the same query rows.
// CHECK: mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]
func.func @plain(%q: tensor<2x4x256x128xf16>, %do: tensor<2x4x256x128xf16>, %lse: tensor<2x4x256xf32>, %dl: tensor<2x4x256x1xf32>)
    -> (tensor<2x4x256x128xf32>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>,
        tensor<2x4x256x128xf16>, tensor<2x4x256xf32>, tensor<2x4x256x1xf32>
        -> tensor<2x4x256x128xf32>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>
  return %dq, %dk, %dv : tensor<2x4x256x128xf32>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>
}

// -----

// A sliding window of 100 keys (lo(i) = i - 99, hi(i) = i): the K/V tile at
// 128n is seen by query tiles [2n, 2n + 4) (queries 128n to 128n + 226),
// of which [2n + 2, 2n + 1) see all of it (none: the window is narrower
// than a tile), the invisible query tiles never visited. The masked tiles
// of both sides are visited in one loop (its tile a select of the visit
// count), then the unmasked ones (with one-masked-loop=false: three loops,
// masked / unmasked / masked).
// CHECK-DAG: #[[WFIRST:.*]] = affine_map<(d0) -> (0, d0 * 2)>
// CHECK-DAG: #[[WEND:.*]] = affine_map<(d0, d1) -> (d1, d0 * 2 + 4)>
// CHECK-DAG: #[[WFULL:.*]] = affine_map<(d0, d1) -> ((d0 * 128 + 127) ceildiv 64, d1)>
// CHECK-DAG: #[[WFULLEND:.*]] = affine_map<(d0, d1) -> (d1, d0 * 2 + 1)>
// CHECK-LABEL: func.func @window
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %[[N:.*]]) in
// CHECK: affine.max #[[WFIRST]](%[[N]])
// CHECK: affine.max #[[WEND]](%[[N]], %{{.*}})
// CHECK: affine.max #[[WFULL]](%[[N]], %{{.*}})
// CHECK: affine.max #[[WFULLEND]](%[[N]], %{{.*}})
// CHECK: scf.for %{{.*}} = %c0 to
// CHECK:   arith.select
// CHECK:   attnc.online_attention_grad {{.*}} mask {
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK:   attnc.online_attention_grad
// CHECK-NOT: mask
// CHECK-NOT: scf.for %
// CHECK: attnc.parallel_accumulate
func.func @window(%q: tensor<?x?x?x64xbf16>, %do: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
        -> tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 100 : index
        %le = arith.cmpi sle, %j, %i : index
        %jj = arith.addi %j, %c : index
        %near = arith.cmpi sgt, %jj, %i : index
        %keep = arith.andi %le, %near : i1
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// -----

// A window whose size is read from device memory bounds the forward's K/V
// tiles (attnc-online-softmax-masks.mlir); here the loop runs over query
// tiles, which it is not written to bound: every query tile of the group
// is visited, masked.
// CHECK-LABEL: func.func @window_runtime
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: scf.for
// CHECK:   attnc.online_attention_grad {{.*}} mask {
// CHECK-NOT: scf.for %
// CHECK: scf.forall.in_parallel
func.func @window_runtime(%q: tensor<?x?x?x64xbf16>, %do: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>, %w: tensor<i64>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
        -> tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %wv = tensor.extract %w[] : tensor<i64>
        %c = arith.index_cast %wv : i64 to index
        %le = arith.cmpi sle, %j, %i : index
        %jj = arith.addi %j, %c : index
        %near = arith.cmpi sgt, %jj, %i : index
        %keep = arith.andi %le, %near : i1
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}
