// The persistent backward (wgmma_persistent): as many CTAs per SM as it
// holds at once (the contract's grid is num_sms times that) walk the
// forall's K/V tiles t = CTA, CTA + #CTAs, ....
// The first tile's K/V load before the loop; at the end of each tile, once
// its K/V copy and the last dQ product are complete and the dQ reductions
// have read their staging, the next tile's K/V load starts, then this
// tile's dK and dV are stored. Without a mask the tiles are walked in the
// grid's order (K/V tiles on x fastest, heads, batch); under a causal mask
// heads (x) fastest, then batch (z), then K/V tiles (y): every head's
// longest tile first, odd full rounds of the stride mirrored (serpentine).
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="backward-strategy=wgmma_persistent size-variants=false" --attnc-convert-to-gpu | FileCheck %s

// CHECK-LABEL: gpu.module @full_module
// CHECK-SAME: grid = {{\[}}[device(num_sms)], [1], [1]]
// CHECK-SAME: strategy = "wgmma_persistent"
// CHECK: gpu.func @full
// The tiles: batch x heads x ceil(Skv / 128).
// CHECK: %[[KV:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[KV]] : index
// CHECK: %[[CTA:.*]] = gpu.block_id x
// CHECK: %[[STRIDE:.*]] = gpu.grid_dim x
// CHECK: %[[HAS:.*]] = arith.cmpi ult, %[[CTA]], %[[TOTAL]] : index
// CHECK: scf.if %[[HAS]] {
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: }
// CHECK: scf.for %[[T:.*]] = %[[CTA]] to %[[TOTAL]] step %[[STRIDE]] {
// CHECK-NEXT: %[[TILE:.*]] = arith.remui %[[T]], %[[KV]] : index
// CHECK-NEXT: %[[REST:.*]] = arith.divui %[[T]], %[[KV]] : index
// CHECK-NEXT: arith.remui %[[REST]], %{{.*}} : index
// The query loops, then the flush of dQ:
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// CHECK: nvvm.wgmma.mma_async
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[T]], %[[STRIDE]] : index
// CHECK-NEXT: %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[TOTAL]] : index
// CHECK-NEXT: scf.if %[[MORE]] {
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: }
// dK and dV of this tile (bf16 pairs to global memory):
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<?xbf16, 1>, vector<2xbf16>
// After the loop, the last reductions are complete:
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK-NEXT: gpu.return
func.func @full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
    %do: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>)
    -> (tensor<?x?x?x128xf32>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
        -> tensor<?x?x?x128xf32>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf32>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

// -----

// The 64 x 64 kernel at d = 64 (one warpgroup, 98 KiB) fits twice per SM:
// two CTAs per SM.
// CHECK-LABEL: gpu.module @causal_module
// CHECK-SAME: grid = {{\[}}[device(num_sms), 2], [1], [1]]
// CHECK: %[[KV:.*]] = arith.divui %{{.*}}, %c64 : index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[KV]] : index
// CHECK: %[[CTA:.*]] = gpu.block_id x
// CHECK: %[[STRIDE:.*]] = gpu.grid_dim x
// CHECK: scf.for %[[T:.*]] = %[[CTA]] to %[[TOTAL]] step %[[STRIDE]] {
// Round r = t / G, c = t - rG; odd full rounds take rG + G - 1 - c.
// CHECK-NEXT: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK-NEXT: %[[G:.*]] = arith.index_cast %[[STRIDE]] : index to i32
// CHECK-NEXT: %[[R:.*]] = arith.divui %[[T32]], %[[G]] : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[R]], %[[G]] : i32
// CHECK-NEXT: %[[C:.*]] = arith.subi %[[T32]], %[[FIRST]] : i32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PARITY:.*]] = arith.andi %[[R]], %[[ONE]] : i32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ODD:.*]] = arith.cmpi ne, %[[PARITY]], %[[ZERO]] : i32
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[FIRST]], %[[G]] : i32
// CHECK-NEXT: %[[TOTAL32:.*]] = arith.index_cast %[[TOTAL]] : index to i32
// CHECK-NEXT: %[[FULL:.*]] = arith.cmpi ule, %[[END]], %[[TOTAL32]] : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[END]], %[[ONE]] : i32
// CHECK-NEXT: %[[MIRROR:.*]] = arith.subi %[[LAST]], %[[C]] : i32
// CHECK-NEXT: %[[FLIP:.*]] = arith.andi %[[ODD]], %[[FULL]] : i1
// CHECK-NEXT: %[[W:.*]] = arith.select %[[FLIP]], %[[MIRROR]], %[[T32]] : i32
// CHECK-NEXT: %[[WI:.*]] = arith.index_castui %[[W]] : i32 to index
// Heads (x), then batch (z), then the K/V tile (y) last:
// CHECK-NEXT: arith.remui %[[WI]], %[[HEADS:.*]] : index
// CHECK-NEXT: %[[R1:.*]] = arith.divui %[[WI]], %[[HEADS]] : index
// CHECK-NEXT: arith.remui %[[R1]], %[[BATCH:.*]] : index
// CHECK-NEXT: %[[R2:.*]] = arith.divui %[[R1]], %[[BATCH]] : index
// CHECK-NEXT: arith.remui %[[R2]], %[[KV]] : index
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
    %do: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
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
