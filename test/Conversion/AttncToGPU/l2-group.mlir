// A causal grid runs longest first: heads on x, query tiles counted down on
// y, batch on z, so the blocks that start together are a batch's heads'
// longest tiles. With l2_group_mib (the target's 32 MiB for wgmma_ws above
// d = 64) a block whose batch's K and V exceed the budget takes instead the
// tile of its launch position in groups of heads whose K/V fit (whole GQA
// groups), each group longest first: the kernel compares Hkv * Skv *
// (d + dv) * 2 bytes with the budget, and only then divides (shorter
// sequences keep the block indices).
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false" | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false l2-group-mib=0" | FileCheck %s --check-prefix=NONE
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false l2-group-mib=4" | FileCheck %s --check-prefix=OPTION
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false strategy=mma_sync" | FileCheck %s --check-prefix=MMA
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false strategy=wgmma_ws_persistent" | FileCheck %s --check-prefix=PERSISTENT
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-online-softmax="l2-group-mib=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-online-softmax="l2-group-mib=1048577" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-online-softmax="strategy=wgmma_ws_persistent l2-group-mib=8" 2>&1 | FileCheck %s --check-prefix=PERSISTENT-OPTION
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax --attnc-convert-to-gpu

// CHECK-LABEL: gpu.func @naive_attention(
// CHECK-DAG: %[[X:.*]] = gpu.block_id x
// CHECK-DAG: %[[Y:.*]] = gpu.block_id y
// CHECK-DAG: %[[H:.*]] = gpu.grid_dim x
// One K/V head's K and V: Skv * 512 bytes at d = 128, bf16; a batch's K/V
// heads (Hkv, the query heads of a GQA group share one) take Hkv times that.
// CHECK: %[[HKV:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[HEAD:.*]] = arith.muli %{{.*}}, %c512
// CHECK: %[[BUDGET:.*]] = arith.constant 33554432 : index
// CHECK: %[[ALL:.*]] = arith.muli %[[HKV]], %[[HEAD]]
// CHECK: %[[MORE:.*]] = arith.cmpi ugt, %[[ALL]], %[[BUDGET]]
// CHECK: %[[TILE:.*]]:2 = scf.if %[[MORE]] -> (index, index) {
// The K/V heads that fit, as many groups as they need, as equal as they can
// be, each the query heads of its K/V heads (H / Hkv of each).
// CHECK: arith.divui %[[BUDGET]], %[[HEAD]]
// CHECK: %[[GROUPS:.*]] = arith.ceildivui
// CHECK: %[[KVSIZE:.*]] = arith.ceildivui %{{.*}}, %[[GROUPS]] : i32
// CHECK: %[[GQA:.*]] = arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: arith.muli %[[KVSIZE]], %[[GQA]] : i32
// Then the position's group, tile and head.
// CHECK: arith.divui %{{.*}} : i32
// CHECK: arith.minui
// CHECK: arith.divui %{{.*}} : i32
// CHECK: scf.yield
// CHECK: } else {
// CHECK: scf.yield %[[X]], %[[Y]] : index, index
// The fallback lowers the same grid in the same order.
// CHECK-LABEL: gpu.func @naive_attention_fallback(
// CHECK: arith.constant 33554432 : index
// CHECK: scf.if

// NONE-LABEL: gpu.func @naive_attention(
// NONE-NOT: 33554432
// NONE-NOT: scf.if %{{.*}} -> (index, index)
// NONE: gpu.return

// OPTION: strategy = wgmma_ws, overlap_pv, l2_group_mib = 4, fallback
// MMA: strategy = mma_sync
// MMA-NOT: l2_group_mib
// PERSISTENT: strategy = wgmma_ws_persistent, overlap_pv, fallback
// NEGATIVE: option l2-group-mib must be in [0, 1048576] (MiB; 0: no groups) or -1 (the target's choice), got -2
// HUGE: option l2-group-mib must be in [0, 1048576] (MiB; 0: no groups) or -1 (the target's choice), got 1048577
// PERSISTENT-OPTION: option l2-group-mib orders a grid of one block per tile; strategy wgmma_ws_persistent's blocks walk the tiles themselves

// -----

// A grid that does not run longest first (no causal mask: query tiles on
// x) has no order for the groups to change.
func.func @not_longest_first(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>) -> tensor<1x8x512x128xbf16> {
  // expected-error @+1 {{has l2_group_mib = 16 in its flash config but its grid does not run longest first (batch on z, heads on x, query tiles on y), the grid whose heads the groups order}}
  %o = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = 16>, scale = 0.125 : f64}
      : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}
