// --attnc-pipeline with split-kv: GQA packing, the flash form, the split-KV
// rewrite, and its two kernels through both no-S x S checks: the partial
// kernel (f32 partials with a split dimension, the split count a size the
// host chooses by the manifest's rule) and the combine kernel.
// REQUIRES: ptxas
// RUN: attnc-opt %s --attnc-pipeline="split-kv=128 block-q=16 block-kv=64 strategy=mma_sync fallback=false to-nvvm=false" | FileCheck %s --check-prefix=GPU
// RUN: attnc-opt %s --attnc-pipeline="split-kv=128 block-q=16 block-kv=64 strategy=mma_sync fallback=false binary=isa" | FileCheck %s --check-prefix=PTX
// RUN: attnc-opt %s --attnc-pipeline="split-kv=128 block-q=16 block-kv=64 key-warps=4 strategy=mma_sync fallback=false to-nvvm=false" | FileCheck %s --check-prefix=KEYS
// RUN: attnc-opt %s --attnc-pipeline="split-kv=128 block-q=16 block-kv=128 key-warps=4 interleave-kv=true stages=3 strategy=mma_sync fallback=false to-nvvm=false" | FileCheck %s --check-prefix=RING

// The packed rows of a group (4 query heads x Sq) share a tile of 16: the
// grid runs ceil(Sq / 4) tiles times the splits per (batch, K/V head).
// GPU: gpu.module @attn_0_module
// GPU-SAME: kind = "attention_partial"
// GPU-SAME: tensor<"q", bf16, [B, 32, Sq, 128], input
// GPU-SAME: tensor<"k", bf16, [B, 8, Skv, 128], input
// GPU-SAME: tensor<"o_partial", f32, [splits, B, 32, Sq, 128], output
// GPU-SAME: tensor<"lse_partial", f32, [splits, B, 32, Sq], output
// GPU-SAME: size<"splits", i64>
// GPU-SAME: grid = {{\[}}[ceil_div(Sq, 4), splits], [8], [B]]
// GPU-SAME: constraints = [min(splits, 1), max(splits, 128)]
// GPU-SAME: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = 2)]
// GPU: gpu.module @attn_1_module
// GPU-SAME: kind = "attention_combine"
// GPU-SAME: tensor<"o_partial", f32, [splits, B, 32, Sq, 128], input
// GPU-SAME: tensor<"lse_partial", f32, [splits, B, 32, Sq], input
// GPU-SAME: tensor<"o", bf16, [B, 32, Sq, 128], output
// GPU-SAME: grid = {{\[}}[ceil_div(Sq, 16)], [32], [B]], block = [512, 1, 1], shared_memory = 4608

// Four warps split each 64-key tile of the 16 packed rows (16 keys each):
// after the loop, parts 1-3 write their states (per thread 2 maxima, 2
// sums and 64 accumulators: 68 words, 32 lanes) to shared memory between
// two barriers, and every thread reads its lane's 3 x 68 words back.
// KEYS: gpu.module @attn_0_module
// KEYS-SAME: block = [128, 1, 1]
// KEYS-SAME: key_warps = 4
// KEYS: memref.view {{.*}} to memref<6528xf32, #gpu.address_space<workgroup>>
// KEYS: nvvm.cp.async.wait.group 0
// KEYS-NEXT: gpu.barrier
// KEYS: scf.if
// KEYS-COUNT-68: memref.store {{.*}} : memref<6528xf32, #gpu.address_space<workgroup>>
// KEYS: gpu.barrier
// KEYS-COUNT-204: memref.load {{.*}} : memref<6528xf32, #gpu.address_space<workgroup>>
// KEYS: gpu.module @attn_1_module

// Interleaved K/V loads through a ring of three 128-row buffers (one
// shared-memory array after Q: 4096 + 3 x 32768 bytes, from the first
// 128-byte line): the prologue starts
// Q, K of the first tile and its V (three groups) and waits for the first
// two; each step waits for its K with one load still in flight, starts
// the load two ahead (the next K, or an empty group past the chain's end),
// computes S, then waits for its V the same way and starts the next V
// before P V. Without the ring's second wait no P V could be correct.
// RING: gpu.module @attn_0_module
// RING-SAME: interleave_kv = 1
// RING: %[[ORIGIN:.+]] = arith.andi %{{.+}}, %c127
// RING: %[[RING:.+]] = arith.addi %[[ORIGIN]], %c4096
// RING: memref.view {{.*}}[%[[RING]]][] {{.*}} to memref<3x128x128xbf16, #gpu.address_space<workgroup>>
// RING-COUNT-3: nvgpu.device_async_create_group
// RING-NEXT: nvvm.cp.async.wait.group 1
// RING-NEXT: gpu.barrier
// RING: scf.for
// RING-NEXT: nvvm.cp.async.wait.group 1
// RING-NEXT: gpu.barrier
// RING: scf.if
// RING: nvgpu.device_async_create_group
// RING: } else {
// RING-NEXT: nvvm.cp.async.commit.group
// RING: nvvm.mma.sync
// RING: nvvm.cp.async.wait.group 1
// RING-NEXT: gpu.barrier
// RING: scf.if
// RING: nvgpu.device_async_create_group
// RING: } else {
// RING-NEXT: nvvm.cp.async.commit.group
// RING: nvvm.mma.sync
// RING: scf.yield
// RING: gpu.module @attn_1_module

// The partial kernel stores pairs of f32 partials (8-byte stores); the
// combine's merge weights are exponentials, its parts meet at a barrier
// and one bf16 of O per thread is stored.
// PTX: gpu.binary @attn_0_module
// PTX-SAME: griddepcontrol.launch_dependents
// PTX-SAME: cp.async.cg.shared.global
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-SAME: st.global.v2.b32
// PTX: gpu.binary @attn_1_module
// PTX-SAME: griddepcontrol.wait
// PTX-SAME: ex2.approx
// PTX-SAME: bar.sync
// PTX-SAME: st.global.b16
func.func @attn(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
