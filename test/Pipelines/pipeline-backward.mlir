// --attnc-pipeline with backward=true: the forward kernel plus the three
// kernels of its derived backward, all through both no-S x S checks (the
// pipeline fails if a kernel writes a buffer that grows as Sq x Skv).
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true to-nvvm=false" | FileCheck %s --check-prefix=GPU
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true binary=isa" | FileCheck %s --check-prefix=PTX

// GPU: gpu.module @naive_attention_module
// delta = rowsum(dO * O): a row kernel reading dO and O.
// GPU: gpu.module @naive_attention_backward_0_module
// GPU-SAME: kind = "fusion", params = [tensor<"do", bf16, [D0, D1, D2, 128], input
// GPU-SAME: tensor<"o", bf16, [D0, D1, D2, 128], input
// GPU-SAME: tensor<"result0", f32, [D0, D1, D2, 1], output
// GPU: gpu.module @naive_attention_backward_1_module
// GPU-SAME: kind = "attention_backward"
// GPU-SAME: workspace<"dq_accum", bytes = [B, H, Sq, 512], zero_init>
// GPU-SAME: mask = "causal"
// dQ converted from the workspace's f32.
// GPU: gpu.module @naive_attention_backward_2_module
// GPU-SAME: kind = "fusion", params = [tensor<"in0", f32, [D0, D1, D2, 128], input
// GPU-SAME: tensor<"dq", bf16, [D0, D1, D2, 128], output

// In the backward kernel's PTX, tensor-core products from ldmatrix (plain and
// transposed), cp.async loads, exp2 for the recomputed P, dQ by atomics.
// PTX: gpu.binary @naive_attention_backward_1_module
// PTX-SAME: cp.async.cg.shared.global
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-SAME: ex2.approx.ftz.f32
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-SAME: red.global.add.v2.f32
