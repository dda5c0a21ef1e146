// Dropout of the probabilities (attnc.dropout before P V, fused into the
// attention): the seed and offset are the kernel's i64 scalar parameters,
// the mask's Philox-4x32-10 runs in the score stage (its multiplier
// 0xD2511F53 = -766435501 as i32), the quad shares its calls through 1 KB
// of shared memory per warp (past the strategy's: 12 warps, 3072 words;
// four stores, a warp barrier and one 16-byte load per 4 groups), a
// probability is kept when its 16-bit draw is at least ceil(0.1 * 2^16) =
// 6554 (the high half's word at least 6554 * 2^16 = 429522944, the low
// half masked first), and 1 / (1 - 0.1) joins the final 1 / l. Both
// strategies (the wgmma kernel and its mma_sync fallback).
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false" | FileCheck %s
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false" | FileCheck %s --check-prefix=FALLBACK
// Key-split warps would offset each part's draw groups: refused.
// RUN: not attnc-opt %s --attnc-pipeline="to-nvvm=false strategy=mma_sync block-q=64 key-warps=2" 2>&1 | FileCheck %s --check-prefix=KEYS
// KEYS: drops probabilities out; its kernel splits the keys of each tile over key_warps = 2 warps, which dropout does not support (compile with --key-warps=1; split-KV decoding splits keys by default)
// Row sums on the tensor cores would be of the kept probabilities P V
// reads; dropout's are of all of them: refused.
// RUN: not attnc-opt %s --attnc-pipeline="to-nvvm=false mma-row-sums=true" 2>&1 | FileCheck %s --check-prefix=SUMS
// SUMS: drops probabilities out; its config's mma_row_sums would sum the kept probabilities that P V reads, where the softmax's row sums are of all of them (compile without --mma-row-sums)
// A decode build of it keeps one warp per row when asked to.
// RUN: attnc-opt %s --attnc-pipeline="split-kv=128 key-warps=1 to-nvvm=false" | FileCheck %s --check-prefix=DECODE
// DECODE: #attnc.flash_config<block_q = 16, block_kv = 128, warps = 1, stages = 3, strategy = mma_sync, interleave_kv>

// CHECK: gpu.module @attn_module
// CHECK-SAME: scalar<"seed", i64>, scalar<"offset", i64>, workspace<"tile_counter", bytes = [4], zero_init>]
// The draw exchange (12 KB) leaves no room for a second query buffer
// (242832 bytes of the 232448 sm_90a gives a block): one, which the
// consumers load between two tiles (named barrier 1, below).
// CHECK-SAME: shared_memory = 210032
// CHECK: gpu.func @attn(
// CHECK: %[[EX:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3072xi32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: arith.mului_extended
// CHECK: memref.store %{{.+}}, %[[EX]]
// CHECK: nvvm.bar.warp.sync %c-1_i32
// CHECK: vector.load %[[EX]][%{{.+}}] : memref<3072xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: %[[LO:.+]] = arith.andi %{{.+}}, %c65535_i32
// CHECK: arith.cmpi uge, %[[LO]], %c6554_i32 : i32
// CHECK: arith.cmpi uge, %{{.+}}, %c429522944_i32 : i32
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: arith.constant 1.11111116 : f32
// CHECK: gpu.return
// FALLBACK: gpu.module @attn_fallback_module
// FALLBACK-SAME: scalar<"seed", i64>, scalar<"offset", i64>, workspace<"tile_counter", bytes = [4], zero_init>]
// FALLBACK: memref<2048xi32, #gpu.address_space<workgroup>>
// FALLBACK: arith.mului_extended
// FALLBACK: nvvm.bar.warp.sync
// FALLBACK: arith.cmpi uge, %{{.+}}, %c429522944_i32 : i32
func.func @attn(%q: tensor<?x?x?x128xbf16> {attnc.name = "q"}, %k: tensor<?x?x?x128xbf16> {attnc.name = "k"},
                %v: tensor<?x?x?x128xbf16> {attnc.name = "v"}, %seed: i64 {attnc.name = "seed"},
                %offset: i64 {attnc.name = "offset"}) -> (tensor<?x?x?x128xbf16> {attnc.name = "o"}) {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %sc = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %sc : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %ss : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %pd = attnc.dropout %pb, %seed, %offset {probability = 0.1 : f64} : tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pd, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
