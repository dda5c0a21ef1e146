// --attnc-verify-no-global-scores on GPU-level IR: the kernels' launch
// contract, allocations and global stores. The real kernels pass, as built
// (gpu.func) and lowered to NVVM (llvm.func with nvvm.kernel); each
// hand-written kernel below breaks one rule. Write kinds (TMA, atomics,
// inline PTX, ...) have their own file, verify-kernel-writes.mlir.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false" \
// RUN:   | attnc-opt --attnc-convert-to-gpu --attnc-verify-no-global-scores | FileCheck %s --check-prefix=REAL
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="to-gpu=false" \
// RUN:   | attnc-opt --attnc-convert-to-gpu --attnc-verify-no-global-scores | FileCheck %s --check-prefix=REAL
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="binary=none" \
// RUN:   | attnc-opt --attnc-verify-no-global-scores | FileCheck %s --check-prefix=LOWERED
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="binary=none" \
// RUN:   | attnc-opt --attnc-verify-no-global-scores | FileCheck %s --check-prefix=LOWERED
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="binary=none" \
// RUN:   | sed -e 's/tensor<"y", bf16, \[8, 4096, 4096\], output/tensor<"y", bf16, [8, 4096, 4096], input/' \
// RUN:   | not attnc-opt --attnc-verify-no-global-scores 2>&1 | FileCheck %s --check-prefix=FLIPPED
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-verify-no-global-scores

// REAL: gpu.func
// REAL-SAME: kernel

// LOWERED: llvm.func @{{.*}} attributes {{{.*}}nvvm.kernel

// The lowered row kernel's stores (through GEPs of the descriptor's
// aligned pointer and CFG block arguments) are found and traced to y.
// FLIPPED: error: 'llvm.store' op writes 'y', an input of the launch contract of kernel @bias_dropout_layernorm

// A kernel whose contract has it write the scores [B, H, Sq, Skv].
gpu.module @scores_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @scores, kind = "test", params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16>, tensor<"k", bf16, [B, H, Skv, 128], input, align = 16>, tensor<"s", f32, [B, H, Sq, Skv], output, align = 16>], grid = [[1], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  // expected-error @+1 {{kernel @scores writes 's' of B x H x Sq x Skv elements, which grows faster than every input of the kernel: a score matrix in global memory}}
  gpu.func @scores(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>, %s: !llvm.ptr<1>) kernel {
    gpu.return
  }
}

// -----

// A workspace whose byte rule is score-sized is a score matrix too; one
// per SM (a persistent kernel's partials) is not.
gpu.module @ws_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @ws, kind = "test", params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16>, tensor<"k", bf16, [B, H, Skv, 128], input, align = 16>, workspace<"partials", bytes = [device(num_sms), 65536], zero_init>, workspace<"scratch", bytes = [B, H, Sq, ceil_div(Skv, 64), 256]>], grid = [[device(num_sms)], [1], [1]], block = [128, 1, 1], shared_memory = 0>} {
  // expected-error @+1 {{kernel @ws takes workspace 'scratch' of B x H x Sq x Skv bytes, which grows faster than every input of the kernel: a score matrix in global memory}}
  gpu.func @ws(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>, %p: !llvm.ptr<1>, %s: !llvm.ptr<1>) kernel {
    %v = arith.constant 1.0 : f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A kernel that writes one of its inputs.
gpu.module @writes_input_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @writes_input, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, tensor<"y", f32, [N], output, align = 16>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @writes_input(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel {
    %v = arith.constant 1.0 : f32
    // expected-error @+1 {{'llvm.store' op writes 'x', an input of the launch contract of kernel @writes_input}}
    llvm.store %v, %x : f32, !llvm.ptr<1>
    llvm.store %v, %y : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A kernel with hidden global scratch the contract does not describe.
gpu.module @scratch_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @scratch, kind = "test", params = [tensor<"y", f32, [N], output, align = 16>, size<"N", i64>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @scratch(%y: !llvm.ptr<1>, %n: i64) kernel {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    %size = arith.index_cast %n : i64 to index
    // expected-error @+2 {{allocates memory inside a kernel: kernels get their global buffers from the host's launch contract}}
    // expected-note @+1 {{the trace stops here}}
    %buf = memref.alloc(%size) : memref<?xf32, 1>
    // expected-error @+1 {{'memref.store' op writes global memory through a pointer that is no parameter of kernel @scratch: it comes from the result of 'memref.alloc'}}
    memref.store %v, %buf[%c0] : memref<?xf32, 1>
    gpu.return
  }
}

// -----

// A run-time-sized on-chip buffer (a row of scores would need one).
gpu.module @dynamic_alloca_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @dynamic_alloca, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, size<"N", i64>], grid = [[1], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @dynamic_alloca(%x: !llvm.ptr<1>, %n: i64) kernel {
    %size = arith.index_cast %n : i64 to index
    // expected-error @+1 {{allocates on-chip memory whose size depends on run-time values; kernel buffers must be tile-sized}}
    %buf = memref.alloca(%size) : memref<?xf32, 5>
    gpu.return
  }
}

// -----

// Without a launch contract, nothing is known about bare pointers' sizes.
gpu.module @no_contract_module {
  // expected-error @+1 {{kernel @no_contract has no launch contract: the gpu.module's attnc.launch_contract is missing, so the sizes of its pointer parameters are unknown}}
  gpu.func @no_contract(%y: !llvm.ptr<1>) kernel {
    gpu.return
  }
}

// -----

// A second kernel in a module whose contract describes the first.
gpu.module @two_kernels_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @first, kind = "test", params = [tensor<"y", f32, [N], output, align = 16>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @first(%y: !llvm.ptr<1>) kernel {
    gpu.return
  }
  // expected-error @+1 {{kernel @second has no launch contract: the gpu.module's attnc.launch_contract describes @first}}
  llvm.func @second(%y: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// Kernels with memref parameters carry their sizes and are judged at their
// launch sites; they need no contract.
gpu.module @memref_module {
  gpu.func @memref_kernel(%y: memref<?xf32, 1>) kernel {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %y[%c0] : memref<?xf32, 1>
    gpu.return
  }
}
