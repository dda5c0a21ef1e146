// The wgmma backward at d = 64 with 128-row query tiles: two warpgroups own
// 64 keys each of a 128-row K/V tile, so dQ = dS K has 128 rows, which
// the warpgroups split: warpgroup g multiplies box g of dSᵀ (its 64 query
// rows, box stride 128 keys x 128 bytes = 16384) by all 128 keys of K (K's
// start does not move with g): eight m64n64k16 per step, both operands
// MN-major. Its dQ tile leaves by TMA reductions of 128-row boxes; shared
// memory is 232440 bytes (the query tiles' mbarrier, an atom less 16 of
// slack), under sm_90a's 232448.
// RUN: attnc-opt %s --attnc-online-softmax --attnc-convert-to-gpu | FileCheck %s

// CHECK: tensormap<"dq_accum.map", tensor = "dq_accum", box = [1, 1, 128, 32], swizzle = 128, oob_fill = zero>
// CHECK-SAME: block = [256, 1, 1], shared_memory = 232440
// CHECK-SAME: block_kv = 128 : i64, block_q = 128 : i64
// The step's dQ product: dSᵀ's box of the warpgroup, K from its start.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[BOX:.*]] = arith.constant 16384 : i64
// CHECK-NEXT: %[[DS:.*]] = arith.muli %[[G:.*]], %[[BOX]] : i64
// CHECK-NEXT: arith.addi %{{.*}}, %[[DS]] : i64
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: arith.muli %[[G]], %[[ZERO]] : i64
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// Sᵀ = K Qᵀ: the warpgroup's 64 keys against the 128 query rows.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
func.func @rows(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>,
    %do: tensor<?x2x?x64xbf16>, %lse: tensor<?x2x?xf32>, %dl: tensor<?x2x?x1xf32>)
    -> (tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64,
      config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>}
      : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x1xf32>
        -> tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
}
