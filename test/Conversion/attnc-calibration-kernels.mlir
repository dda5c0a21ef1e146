// The cost model's microbenchmarks: one gpu.module per unit, each with a
// launch contract of kind "calibration" whose grid is a multiple of the SM
// count, and the instruction it measures inside a loop over `iters`.
// RUN: attnc-opt %s --attnc-calibration-kernels | FileCheck %s
// Without wgmma (sm_80) there is no wgmma kernel.
// RUN: attnc-opt %s --attnc-calibration-kernels="chip=sm_80" | FileCheck %s --check-prefix=SM80
// Down to PTX and cubins, with registers in the manifest.
// REQUIRES: ptxas
// RUN: rm -rf %t && attnc-compile --calibration -o %t | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// RUN: FileCheck %s --check-prefix=MMA < %t/calibrate_mma_sync.ptx
// RUN: FileCheck %s --check-prefix=WGMMA < %t/calibrate_wgmma.ptx
// RUN: FileCheck %s --check-prefix=EXP < %t/calibrate_exp.ptx
// RUN: FileCheck %s --check-prefix=LDM < %t/calibrate_ldmatrix.ptx
// RUN: FileCheck %s --check-prefix=RED < %t/calibrate_reduce.ptx
// RUN: not attnc-compile --calibration %s -o %t/x 2>&1 | FileCheck %s --check-prefix=BOTH

// CHECK: gpu.module @calibrate_mma_sync_module [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">] attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @calibrate_mma_sync, kind = "calibration", params = [tensor<"out", f32, [N], output, align = 16>, size<"N", i64>, scalar<"iters", i64>], grid = {{\[\[}}device(num_sms)], [2], []], block = [256, 1, 1], shared_memory = 0, attrs = {ctas_per_sm = 2 : i64}>}
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK: gpu.module @calibrate_exp_module
// CHECK: scf.for
// CHECK-COUNT-8: llvm.nvvm.ex2.approx.ftz.f
// CHECK: gpu.module @calibrate_ldmatrix_module
// CHECK-COUNT-8: nvgpu.ldmatrix
// CHECK: gpu.module @calibrate_wgmma_module
// CHECK: nvvm.fence.proxy
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: gpu.module @calibrate_wgmma_n128_module
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: gpu.module @calibrate_wgmma_n64_module
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: gpu.module @calibrate_copy_module
// CHECK-SAME: params = [tensor<"x", f32, [M], input, align = 16>, tensor<"y", f32, [M], output, align = 16>, size<"M", i64>]
// CHECK: gpu.module @calibrate_reduce_module
// CHECK: red.global.add.v2.f32
// CHECK: gpu.module @calibrate_latency_module
// CHECK: gpu.module @calibrate_empty_module

// SM80-NOT: wgmma
// SM80: gpu.module @calibrate_empty_module

// LOG: attnc-compile: 10 kernel(s) for sm_90a in

// MANIFEST: "kind": "calibration"
// MANIFEST: "name": "calibrate_mma_sync"
// MANIFEST: "registers": {{[0-9]+}}
// MANIFEST: "module": "calibration"

// MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// WGMMA: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// WGMMA: wgmma.wait_group.sync.aligned 1;
// EXP: ex2.approx.ftz.f32
// LDM: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// RED: red.global.add.v2.f32

// BOTH: attnc-compile: error: --calibration takes no input file

module {}
