// --attnc-pipeline down to PTX for both examples (requires ptxas: the PTX is
// produced by LLVM's NVPTX back-end, the cubin check is in test/Tools).
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="strategy=mma_sync binary=isa" | FileCheck %s --check-prefix=ATTN
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="binary=isa" | FileCheck %s --check-prefix=CHAIN
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="fuse-attention=false" 2>&1 | FileCheck %s --check-prefix=NAIVE
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="target=h200 binary=isa" | FileCheck %s --check-prefix=TARGET
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="target=a100 to-gpu=false" | FileCheck %s --check-prefix=A100
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false" | FileCheck %s --check-prefix=GPU
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="strategy=mma_sync to-nvvm=false binary=isa" | FileCheck %s --check-prefix=ATTN

// target= names a device of the target description: its chip is what the
// kernels are built for, its attention defaults what they are tiled with.
// TARGET: gpu.binary @naive_attention_module
// TARGET-SAME: .target sm_90a
// A100: attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>

// to-nvvm=false stops at the gpu-dialect kernel (with its launch contract);
// asking for a binary lowers it anyway.
// GPU: gpu.module @naive_attention_module
// GPU: gpu.func @naive_attention(
// GPU-SAME: kernel
// GPU-NOT: llvm.func
// GPU-NOT: gpu.binary

// One binary for attention (the mma_sync strategy; sm_90a defaults to wgmma,
// test/Pipelines/pipeline-wgmma.mlir), holding PTX for sm_90a with mma,
// cp.async into shared memory and ldmatrix out of it.
// ATTN-COUNT-1: gpu.binary @naive_attention_module
// ATTN-SAME: .target sm_90a
// ATTN-SAME: .visible .entry naive_attention(
// ATTN-SAME: cp.async.cg.shared.global
// ATTN-SAME: ldmatrix.sync.aligned
// ATTN-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ATTN-NOT: gpu.binary

// The elementwise chain is one kernel with 16-byte global loads and stores.
// CHAIN-COUNT-1: gpu.binary @bias_dropout_layernorm_module
// CHAIN-SAME: .target sm_90a
// CHAIN-SAME: ld.global.v4.b32
// CHAIN-SAME: st.global.v4.b32
// CHAIN-NOT: gpu.binary

// With the rewrite off, the no-S x S check rejects the naive graph before any
// kernel is built: the score matrix would live in global memory.
// NAIVE: error: 'attnc.matmul' result #0 is a buffer in global memory
// NAIVE-SAME: grows as dim 2 of %arg0 x dim 2 of %arg1
