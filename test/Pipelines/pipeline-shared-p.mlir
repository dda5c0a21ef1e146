// P through shared memory (flash_config's shared_p, off unless asked for):
// the overlapped P V reads its A operand through a descriptor instead of
// registers. Each step stores its packed probabilities into the one of two
// buffers the P V in flight does not read, fences them into the async
// proxy and meets its warpgroup at its named barrier, all before that P V's
// wait; so no register the MMA reads is written by the softmax, and ptxas
// keeps the wait below it. With P in registers ptxas hoists the wait above
// every exponential of the step (SASS-DEFAULT); with shared_p all of them
// come before it (checked by bench/sass_order.py, which counts the MUFUs on
// either side of the wait in the cubin). The persistent kernel at d = 128
// has no room for a second query buffer beside the two P buffers: it keeps
// one, and stages O in the first P buffer.
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false shared-p=true" | FileCheck %s --check-prefix=CONFIG
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false shared-p=true strategy=wgmma_ws" | FileCheck %s --check-prefix=CONFIG-WS
// RUN: rm -rf %t && attnc-compile %attnc_src_root/examples/naive_attention.mlir --shared-p -o %t/p
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not="p, 1, 1, 1;" < %t/p/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST --implicit-check-not=query_buffers < %t/p/manifest.json
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/p/naive_attention.ptx -o %t/p.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %python %attnc_src_root/bench/sass_order.py %t/p.cubin | FileCheck %s --check-prefix=SASS
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --shared-p --strategy=wgmma_ws -o %t/ws
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not="p, 1, 1, 1;" < %t/ws/naive_attention.ptx
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/ws/naive_attention.ptx -o %t/ws.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %python %attnc_src_root/bench/sass_order.py %t/ws.cubin | FileCheck %s --check-prefix=SASS
// With 64-key tiles the two P buffers fit beside two query buffers: the
// persistent kernel keeps its query prefetch, and O its own staging buffer.
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --shared-p --block-kv=64 -o %t/kv64
// RUN: FileCheck %s --check-prefix=KV64 < %t/kv64/manifest.json
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/kv64/naive_attention.ptx -o %t/kv64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-KV64
// RUN: %python %attnc_src_root/bench/sass_order.py %t/kv64.cubin | FileCheck %s --check-prefix=SASS
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir -o %t/default
// RUN: %cuda_root/bin/ptxas -arch=sm_90a %t/default/naive_attention.ptx -o %t/default.cubin
// RUN: %python %attnc_src_root/bench/sass_order.py %t/default.cubin | FileCheck %s --check-prefix=SASS-DEFAULT

// CONFIG: strategy = wgmma_ws_persistent, overlap_pv, shared_p, l2_group_mib = 32, fallback = <{{.*}}strategy = mma_sync_unaligned>
// CONFIG-WS: strategy = wgmma_ws, overlap_pv, shared_p, l2_group_mib = 32, fallback = <{{.*}}strategy = mma_sync_unaligned>

// A loop step: its S and the previous step's P V (A and B by descriptor,
// trans-a 0, trans-b 1) issued, S waited for with the P V in flight, the
// step's P stored (eight stmatrix .x4 a thread: two n8 tiles of its warp's
// 16 rows each) and published to the warpgroup, then the P V's wait.
// PTX: .visible .entry naive_attention(
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX: ex2.approx
// PTX-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync %r{{[0-9]+}}, 128;
// PTX-NOT: ex2.approx
// PTX: wgmma.wait_group.sync.aligned 0;

// MANIFEST: "shared_p": 1,
// MANIFEST-NEXT: "strategy": "wgmma_ws_persistent"

// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// KV64: "block_kv": 64,
// KV64: "query_buffers": 2,
// KV64-NEXT: "scale"
// KV64-NEXT: "shared_p": 1,
// KV64-NEXT: "strategy": "wgmma_ws_persistent"
// ptxas assembles it (with 8 bytes of spills; none with 128-key tiles).
// PTXAS-KV64: Used {{[0-9]+}} registers

// SASS: overlapped step 0: {{[1-9][0-9]+}} MUFU before P V's wait, {{[01]}} after
// SASS-NEXT: overlapped step 1: {{[1-9][0-9]+}} MUFU before P V's wait, {{[01]}} after
// SASS-DEFAULT: overlapped step 0: 0 MUFU before P V's wait, {{[1-9][0-9]+}} after
