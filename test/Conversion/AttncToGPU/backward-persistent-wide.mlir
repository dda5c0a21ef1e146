// The persistent backward's drawn-tile slots (two i32 after the dQ staging
// boxes) still fit sm_90a's 232448 bytes of shared memory with the 128 x 128
// tiles at d = 64 (the size variant's, whose base padding reserve leaves 16
// bytes): 232432 + 8, less the static byte that holds the dynamic array's
// base. The query tiles' 8-byte mbarrier does not fit beside them, so this
// kernel loads Q and dO by cp.async (no tensor maps of q or do; no
// mbarrier), where every other wgmma backward uses TMA.
// RUN: attnc-opt %s --attnc-online-softmax="backward-strategy=wgmma_persistent block-q=128 block-kv=128 size-variants=false" --attnc-convert-to-gpu | FileCheck %s

// CHECK: gpu.module @causal_module
// CHECK-SAME: workspace<"tile_counter", bytes = [4], zero_init>
// CHECK-NOT: tensormap<"q.map"
// CHECK-NOT: tensormap<"do.map"
// CHECK-SAME: shared_memory = 232440
// CHECK-NOT: nvvm.mbarrier
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvgpu.device_async_copy
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
