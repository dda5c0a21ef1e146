// A causal grid runs longest first: heads on x, query tiles counted down on
// y, batch on z, so the blocks that start together are a batch's heads'
// longest tiles. With l2_group_mib (the target's 32 MiB for wgmma_ws above
// d = 64) a block whose batch's K and V exceed the budget takes instead the
// tile of its launch position in groups of heads whose K/V fit (whole GQA
// groups), each group longest first: the kernel compares Hkv * Skv *
// (d + dv) * 2 bytes with the budget, and only then divides (shorter
// sequences keep the block indices).
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false strategy=wgmma_ws" | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false strategy=wgmma_ws l2-group-mib=0" | FileCheck %s --check-prefix=NONE
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false strategy=wgmma_ws l2-group-mib=4" | FileCheck %s --check-prefix=OPTION
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false strategy=mma_sync" | FileCheck %s --check-prefix=MMA
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false" | FileCheck %s --check-prefix=PERSISTENT
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-online-softmax="l2-group-mib=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-online-softmax="l2-group-mib=1048577" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false strategy=wgmma_ws_persistent l2-group-mib=8" | FileCheck %s --check-prefix=PERSISTENT-GROUPS
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
// The default under a causal mask, the persistent grid, groups at every
// head dimension (32 MiB on sm_90a).
// PERSISTENT: strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32, fallback
// NEGATIVE: option l2-group-mib must be in [0, 1048576] (MiB; 0: no groups) or -1 (the target's choice), got -2
// HUGE: option l2-group-mib must be in [0, 1048576] (MiB; 0: no groups) or -1 (the target's choice), got 1048577

// On the persistent grid every role maps the tiles it draws the same way
// (the producer for its K/V and for each tile's query, the consumers):
// groups of heads (batch-major) whose K/V fit the budget, at least one
// K/V head and at most a batch's (whose groups are then the batches, in
// the launch order), each group longest first; in 32 bits, recomputed per tile from opaque copies of the
// sizes (Skv, Hkv, H, B, query tiles) so that nothing of it stays live
// through the consumers' loop. 8 MiB are 16384 rows of 512 bytes (K and V
// at d = 128, bf16): the K/V heads that fit are 16384 / Skv.
// PERSISTENT-GROUPS-LABEL: gpu.func @naive_attention(
// PERSISTENT-GROUPS: scf.while (%[[T:.*]] = %block_id_x,
// PERSISTENT-GROUPS: ^bb0(%[[WALK:[^:]*]]: index,
// PERSISTENT-GROUPS-COUNT-5: llvm.inline_asm has_side_effects "mov.b32 $0, $1;"
// PERSISTENT-GROUPS: %[[SOME:.*]] = arith.maxui %{{.*}}, %c1_i32 : i32
// PERSISTENT-GROUPS: %[[ROWS:.*]] = arith.constant 16384 : i32
// PERSISTENT-GROUPS: %[[FITTING:.*]] = arith.divui %[[ROWS]], %[[SOME]] : i32
// PERSISTENT-GROUPS: %[[ONE:.*]] = arith.maxui %[[FITTING]], %{{.*}} : i32
// The cap is Hkv, the divisor of H / Hkv:
// PERSISTENT-GROUPS: %[[FIT:.*]] = arith.minui %[[ONE]], %[[KVHEADS:.*]] : i32
// PERSISTENT-GROUPS: %[[GQA:.*]] = arith.divui %{{.*}}, %[[KVHEADS]] : i32
// PERSISTENT-GROUPS: %[[SIZE:.*]] = arith.muli %[[FIT]], %[[GQA]] : i32
// PERSISTENT-GROUPS: %[[UNITS:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// PERSISTENT-GROUPS: %[[AT:.*]] = arith.index_cast %[[WALK]] : index to i32
// PERSISTENT-GROUPS: %[[PER:.*]] = arith.muli %[[SIZE]], %{{.*}} : i32
// PERSISTENT-GROUPS: %[[GROUP:.*]] = arith.divui %[[AT]], %[[PER]] : i32
// PERSISTENT-GROUPS: %[[FIRST:.*]] = arith.muli %[[GROUP]], %[[SIZE]] : i32
// PERSISTENT-GROUPS: %[[LEFT:.*]] = arith.subi %[[UNITS]], %[[FIRST]] : i32
// PERSISTENT-GROUPS: %[[WIDTH:.*]] = arith.minui %[[SIZE]], %[[LEFT]] : i32
// PERSISTENT-GROUPS: %[[TILE:.*]] = arith.divui %{{.*}}, %[[WIDTH]] : i32
// PERSISTENT-GROUPS: %[[UNIT:.*]] = arith.addi %[[FIRST]], %{{.*}} : i32
// PERSISTENT-GROUPS: %[[BATCH:.*]] = arith.divui %[[UNIT]], %{{.*}} : i32
// PERSISTENT-GROUPS: arith.index_castui %[[BATCH]] : i32 to index
// PERSISTENT-GROUPS: arith.index_castui %[[TILE]] : i32 to index
// The producer draws the next tile once it has issued a tile's loads, and
// maps it to load its query; then the consumers' loop.
// PERSISTENT-GROUPS: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// PERSISTENT-GROUPS: arith.constant 16384 : i32
// PERSISTENT-GROUPS: arith.constant 16384 : i32
// PERSISTENT-GROUPS-NOT: arith.constant 16384 : i32
// The fallback, one block per tile, groups a batch's heads as wgmma_ws does.
// PERSISTENT-GROUPS-LABEL: gpu.func @naive_attention_fallback(
// PERSISTENT-GROUPS: arith.cmpi ugt, %{{.*}}, %c8388608

// -----

// A grid that does not run longest first (no causal mask: query tiles on
// x) has no order for the groups to change, one block per tile or
// persistent.
func.func @not_longest_first(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>) -> tensor<1x8x512x128xbf16> {
  // expected-error @+1 {{has l2_group_mib = 16 in its flash config but its grid does not run longest first (batch on z, heads on x, query tiles on y), the grid whose heads the groups order}}
  %o = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = 16>, scale = 0.125 : f64}
      : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}

// -----

func.func @not_longest_first_persistent(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>) -> tensor<1x8x512x128xbf16> {
  // expected-error @+1 {{has l2_group_mib = 16 in its flash config but its grid does not run longest first (batch on z, heads on x, query tiles on y), the grid whose heads the groups order}}
  %o = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, l2_group_mib = 16>, scale = 0.125 : f64}
      : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}
