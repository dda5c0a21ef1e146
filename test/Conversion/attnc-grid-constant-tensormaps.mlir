// --attnc-grid-constant-tensormaps: the arguments the launch contract names
// tensormaps become grid-constant by-value parameters of the lowered kernel;
// the other arguments are left alone. The real flash kernel gets them in
// the pipeline (test/Pipelines/pipeline-wgmma-ws.mlir checks the PTX).
// RUN: attnc-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(attnc-grid-constant-tensormaps))" \
// RUN:   | FileCheck %s

// CHECK-LABEL: llvm.func @tma(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]*}}: i64,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
gpu.module @tma_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @tma, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, tensor<"o", bf16, [S, 64], output, align = 16>, tensormap<"q.map", tensor = "q", box = [64, 64], swizzle = 128, oob_fill = zero>, size<"S", i64>, tensormap<"o.map", tensor = "o", box = [64, 64], swizzle = 128, oob_fill = zero>], grid = [[ceil_div(S, 64)], [1], [1]], block = [128, 1, 1], shared_memory = 8192>} {
  llvm.func @tma(%q: !llvm.ptr<1>, %o: !llvm.ptr<1>, %qmap: !llvm.ptr, %s: i64, %omap: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// A contract without tensormaps: nothing changes.
// CHECK-LABEL: llvm.func @plain(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr<1>)
// CHECK-NOT: grid_constant
gpu.module @plain_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @plain, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  llvm.func @plain(%x: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{kernel @early takes tensormap parameters but is not an llvm.func (run --attnc-grid-constant-tensormaps after convert-gpu-to-nvvm)}}
gpu.module @early_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @early, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, tensormap<"q.map", tensor = "q", box = [64, 64], swizzle = 128, oob_fill = zero>], grid = [[1], [1], [1]], block = [128, 1, 1], shared_memory = 0>} {
  gpu.func @early(%q: !llvm.ptr<1>, %qmap: !llvm.ptr) kernel {
    gpu.return
  }
}

// -----

gpu.module @global_map_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @global_map, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, tensormap<"q.map", tensor = "q", box = [64, 64], swizzle = 128, oob_fill = zero>], grid = [[1], [1], [1]], block = [128, 1, 1], shared_memory = 0>} {
  // expected-error @+1 {{argument 1 is tensormap parameter 'q.map' of the launch contract but has type '!llvm.ptr<1>'; a tensor map is passed as a generic !llvm.ptr}}
  llvm.func @global_map(%q: !llvm.ptr<1>, %qmap: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}
