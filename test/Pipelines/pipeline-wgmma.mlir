// The wgmma tile strategy down to PTX (requires ptxas: the PTX comes from
// LLVM's NVPTX back-end): Q, K and V staged by cp.async into 128-byte
// swizzled shared memory, published to the async proxy, Q K^T by warpgroup
// MMAs from two descriptors, P V by the register-A form.
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="strategy=wgmma binary=isa" | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="strategy=wgmma to-gpu=false" | FileCheck %s --check-prefix=CONFIG
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="strategy=wgmma target=a100" 2>&1 | FileCheck %s --check-prefix=A100

// Four warps per warpgroup, 16 query rows per warp, 128 keys per step.
// CONFIG: #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
// A100: tile strategy wgmma needs warpgroup MMAs, which a100 lacks (sm_90a only)

// CHECK: gpu.binary @naive_attention_module
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-SAME: cp.async.cg.shared.global
// CHECK-SAME: fence.proxy.async.shared::cta
// CHECK-SAME: wgmma.fence.sync.aligned
// Q K^T: both operands from shared-memory descriptors (64-bit registers).
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[^;]*}}, {{%rd[0-9]+, %rd[0-9]+, p, 1, +1, 0, +0;}}
// CHECK-SAME: wgmma.commit_group.sync.aligned
// CHECK-SAME: {{wgmma.wait_group.sync.aligned[^;]*0;}}
// P V: A from four 32-bit registers, V N-major (trans-b 1).
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[^;]*}}, {{\{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, p, 1, 1, 1;}}
