// A causal backward's grid runs longest first (K/V heads on x, K/V tiles
// on y, batch on z): its blocks start x fastest, so those running together
// hold the same K/V tile of every head and each head's query rows are read
// by few of them. With l2_group_mib the block takes the (head, tile) of its
// position in groups of K/V heads whose query rows fit the budget: here
// Sq x (H / Hkv) rows of 512 bytes (Q and dO 2 x 64 x 2, dQ's f32 workspace
// 64 x 4) per K/V head, grouped only when a batch's heads exceed 32 MiB;
// the manifest says so.
// RUN: attnc-opt %s --attnc-online-softmax --attnc-convert-to-gpu | FileCheck %s

// CHECK: attrs = {{{.*}}l2_group_mib = 32 : i64
// CHECK: %[[BZ:.*]] = gpu.block_id  z
// CHECK-NEXT: %[[BX:.*]] = gpu.block_id  x
// CHECK-NEXT: %[[BY:.*]] = gpu.block_id  y
// CHECK-NEXT: %[[HKV:.*]] = gpu.grid_dim  x
// CHECK-NEXT: %[[SQ:.*]] = arith.index_cast
// CHECK-NEXT: %[[H:.*]] = arith.index_cast
// CHECK-NEXT: %[[GQA:.*]] = arith.divui %[[H]], %[[HKV]] : index
// CHECK-NEXT: %[[ROWS:.*]] = arith.muli %[[SQ]], %[[GQA]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.constant 512 : index
// CHECK-NEXT: %[[HEAD:.*]] = arith.muli %[[ROWS]], %[[ROW]] : index
// CHECK-NEXT: %[[BUDGET:.*]] = arith.constant 33554432 : index
// CHECK-NEXT: %[[ALL:.*]] = arith.muli %[[HKV]], %[[HEAD]] : index
// CHECK-NEXT: %[[GROUPED:.*]] = arith.cmpi ugt, %[[ALL]], %[[BUDGET]] : index
// CHECK-NEXT: %[[AT:.*]]:2 = scf.if %[[GROUPED]] -> (index, index) {
// The heads that fit, as equal groups; the block's place in launch order.
// CHECK: arith.divui %[[BUDGET]], %[[HEAD]] : index
// CHECK: arith.ceildivui
// CHECK: arith.ceildivui
// CHECK: gpu.grid_dim  y
// CHECK: scf.yield %{{.*}}, %{{.*}} : index, index
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[BX]], %[[BY]] : index, index
// The K/V tile's rows and the head's offsets follow the group's (head, tile).
// CHECK: arith.muli %[[AT]]#1, %c64 : index
// CHECK: arith.muli %[[AT]]#0
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
    %do: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64,
      config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma, l2_group_mib = 32>}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
        -> tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
  mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ule, %j, %i : index
    attnc.yield %keep : i1
  }
  return %dq, %dk, %dv : tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}
