// The persistent backward (wgmma_persistent): as many CTAs per SM as it
// holds at once (the contract's grid is num_sms times that) walk the
// forall's K/V tiles, CTA c taking tile c first.
// The first tile's K/V load before the loop; at the end of each tile, once
// its K/V copy and the last dQ product are complete and the dQ reductions
// have read their staging, the next tile's K/V load starts, then this
// tile's dK and dV are stored. Without a mask the tiles are walked in the
// grid's order (K/V tiles on x fastest, heads, batch) by the stride
// t = CTA, CTA + #CTAs, ...; under a causal mask (a longest-first grid)
// in the launch order too, heads (x) fastest, then K/V tiles (y), then
// batch (z): a batch's longest tiles first, a batch at a time (every
// batch's longest tiles first lost 2x at S = 1k: the Q, dO and dQ of all
// batches at once exceed L2); the CTAs draw their tiles from a counter: thread
// 0 takes the next as the CTA starts a tile and leaves it in shared memory
// for the others, who read it after the tile's last barrier.
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
// The walk carries the tile, its position and the query tiles loaded so
// far (the phase of the query tiles' mbarrier continues across tiles):
// CHECK: scf.while (%[[T0:.*]] = %[[CTA]], %{{.*}} = %c0{{.*}}, %{{.*}} = %c0{{.*}}) : (index, index, index) -> (index, index, index) {
// CHECK-NEXT: %[[MORE0:.*]] = arith.cmpi ult, %[[T0]], %[[TOTAL]] : index
// CHECK-NEXT: scf.condition(%[[MORE0]])
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[T:.*]]: index, %{{.*}}: index, %[[LOADS:.*]]: index):
// The tile's coordinates in 32 bits (drawn from a 32-bit counter):
// CHECK-NEXT: %[[T32:.*]] = arith.index_castui %[[T]] : index to i32
// CHECK-NEXT: %[[KV32:.*]] = arith.index_castui %[[KV]] : index to i32
// CHECK-NEXT: %[[TILE:.*]] = arith.remui %[[T32]], %[[KV32]] : i32
// CHECK-NEXT: arith.index_castui %[[TILE]] : i32 to index
// CHECK-NEXT: %[[REST:.*]] = arith.divui %[[T32]], %[[KV32]] : i32
// CHECK-NEXT: arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: arith.remui %[[REST]], %{{.*}} : i32
// CHECK-NOT: llvm.atomicrmw
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
// CHECK: scf.yield %[[NEXT]], %{{.*}} : index, index
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
// two CTAs per SM. Causal: the tiles come from the tile_counter workspace.
// CHECK-LABEL: gpu.module @causal_module
// CHECK-SAME: workspace<"tile_counter", bytes = [4], zero_init>
// CHECK-SAME: grid = {{\[}}[device(num_sms), 2], [1], [1]]
// 8 bytes of slots and the query tiles' 8-byte mbarrier: 99328 + 16, plus
// the base's padding reserve of 1008.
// CHECK-SAME: shared_memory = 100352
// The two slots after the staging boxes (at 99328 = 66560 + 2 x 64 x 64 x
// 4 bytes past the aligned base):
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %c99328 : index
// CHECK-NEXT: %[[SLOTS:.*]] = memref.view %{{.*}}[%[[AT]]][] : memref<{{.*}}xi8, #gpu.address_space<workgroup>> to memref<2xi32, #gpu.address_space<workgroup>>
// CHECK: %[[KV:.*]] = arith.divui %{{.*}}, %c64 : index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[KV]] : index
// CHECK: %[[CTA:.*]] = gpu.block_id x
// CHECK: %[[STRIDE:.*]] = gpu.grid_dim x
// CHECK: scf.while (%{{.*}} = %[[CTA]], %{{.*}} = %c0{{.*}}, %{{.*}} = %c0{{.*}}) : (index, index, index) -> (index, index, index) {
// CHECK: ^bb0(%[[T:.*]]: index, %[[I:.*]]: index, %{{.*}}: index):
// Thread 0 draws the next tile (#CTAs + the counter's value) into slot
// i mod 2:
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[SLOT:.*]] = arith.andi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %[[ZERO]] : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[N:.*]] = llvm.atomicrmw add %{{.*}}, %[[ONE]] monotonic : !llvm.ptr<1>, i32
// CHECK-NEXT: %[[NI:.*]] = arith.index_castui %[[N]] : i32 to index
// CHECK-NEXT: %[[TILE:.*]] = arith.addi %[[STRIDE]], %[[NI]] : index
// CHECK-NEXT: %[[DRAWN:.*]] = arith.index_cast %[[TILE]] : index to i32
// CHECK-NEXT: memref.store %[[DRAWN]], %[[SLOTS]][%[[SLOT]]]
// CHECK-NEXT: }
// Heads (x), then the K/V tile (y), then batch (z):
// CHECK-NEXT: %[[T32:.*]] = arith.index_castui %[[T]] : index to i32
// CHECK-NEXT: %[[HEADS:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: arith.remui %[[T32]], %[[HEADS]] : i32
// CHECK-NEXT: arith.index_castui
// CHECK-NEXT: %[[R1:.*]] = arith.divui %[[T32]], %[[HEADS]] : i32
// CHECK-NEXT: %[[KV32:.*]] = arith.index_castui %[[KV]] : index to i32
// CHECK-NEXT: arith.remui %[[R1]], %[[KV32]] : i32
// CHECK-NEXT: arith.index_castui
// CHECK-NEXT: %[[R2:.*]] = arith.divui %[[R1]], %[[KV32]] : i32
// CHECK-NEXT: arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: arith.remui %[[R2]], %{{.*}} : i32
// After the flush's final barrier and the reductions' read, every thread
// takes the drawn tile from the same slot and starts its K/V load:
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: %[[NEXT32:.*]] = memref.load %[[SLOTS]][%[[SLOT]]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.index_castui %[[NEXT32]] : i32 to index
// CHECK-NEXT: %[[HAS:.*]] = arith.cmpi ult, %[[NEXT]], %[[TOTAL]] : index
// CHECK-NEXT: scf.if %[[HAS]] {
// CHECK: scf.yield %[[NEXT]], %{{.*}} : index, index
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
