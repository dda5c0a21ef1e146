// --attnc-verify-no-global-scores on GPU-level IR: the kernels' launch
// contract, allocations and global stores. The real kernels pass; each
// hand-written kernel below breaks one rule.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false" \
// RUN:   | attnc-opt --attnc-convert-to-gpu --attnc-verify-no-global-scores | FileCheck %s --check-prefix=REAL
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="to-gpu=false" \
// RUN:   | attnc-opt --attnc-convert-to-gpu --attnc-verify-no-global-scores | FileCheck %s --check-prefix=REAL
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-verify-no-global-scores

// REAL: gpu.func
// REAL-SAME: kernel

// A kernel whose contract has it write the scores [B, H, Sq, Skv].
gpu.module @scores_module attributes {attnc.abi = "{\22params\22: [{\22name\22: \22q\22, \22kind\22: \22tensor\22, \22dtype\22: \22bf16\22, \22shape\22: [\22B\22, \22H\22, \22Sq\22, 128], \22role\22: \22input\22}, {\22name\22: \22k\22, \22kind\22: \22tensor\22, \22dtype\22: \22bf16\22, \22shape\22: [\22B\22, \22H\22, \22Skv\22, 128], \22role\22: \22input\22}, {\22name\22: \22s\22, \22kind\22: \22tensor\22, \22dtype\22: \22f32\22, \22shape\22: [\22B\22, \22H\22, \22Sq\22, \22Skv\22], \22role\22: \22output\22}]}"} {
  // expected-error @+1 {{kernel @scores writes 's' of B x H x Sq x Skv elements, which grows faster than every input of the kernel: a score matrix in global memory}}
  gpu.func @scores(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>, %s: !llvm.ptr<1>) kernel {
    gpu.return
  }
}

// -----

// A kernel that writes one of its inputs.
gpu.module @writes_input_module attributes {attnc.abi = "{\22params\22: [{\22name\22: \22x\22, \22kind\22: \22tensor\22, \22dtype\22: \22f32\22, \22shape\22: [\22N\22], \22role\22: \22input\22}, {\22name\22: \22y\22, \22kind\22: \22tensor\22, \22dtype\22: \22f32\22, \22shape\22: [\22N\22], \22role\22: \22output\22}]}"} {
  gpu.func @writes_input(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel {
    %v = arith.constant 1.0 : f32
    // expected-error @+1 {{stores to 'x', an input of the kernel's launch contract}}
    llvm.store %v, %x : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A kernel with hidden global scratch the contract does not describe.
gpu.module @scratch_module attributes {attnc.abi = "{\22params\22: [{\22name\22: \22y\22, \22kind\22: \22tensor\22, \22dtype\22: \22f32\22, \22shape\22: [\22N\22], \22role\22: \22output\22}, {\22name\22: \22N\22, \22kind\22: \22size\22, \22dtype\22: \22i64\22}]}"} {
  gpu.func @scratch(%y: !llvm.ptr<1>, %n: i64) kernel {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    %size = arith.index_cast %n : i64 to index
    // expected-error @+1 {{allocates memory inside a kernel: kernels get their global buffers from the host's launch contract}}
    %buf = memref.alloc(%size) : memref<?xf32, 1>
    // expected-error @+1 {{stores to global memory that is not a tensor parameter of the kernel's launch contract}}
    memref.store %v, %buf[%c0] : memref<?xf32, 1>
    gpu.return
  }
}

// -----

// A run-time-sized on-chip buffer (a row of scores would need one).
gpu.module @dynamic_alloca_module attributes {attnc.abi = "{\22params\22: [{\22name\22: \22N\22, \22kind\22: \22size\22, \22dtype\22: \22i64\22}]}"} {
  gpu.func @dynamic_alloca(%n: i64) kernel {
    %size = arith.index_cast %n : i64 to index
    // expected-error @+1 {{allocates on-chip memory whose size depends on run-time values; kernel buffers must be tile-sized}}
    %buf = memref.alloca(%size) : memref<?xf32, 5>
    gpu.return
  }
}

// -----

// Without a launch contract, nothing is known about bare pointers' sizes.
// expected-error @+1 {{kernel module has no attnc.abi launch contract: the sizes of its pointer parameters are unknown}}
gpu.module @no_contract_module {
  gpu.func @no_contract(%y: !llvm.ptr<1>) kernel {
    gpu.return
  }
}
