// --attnc-pipeline with backward=true: the forward kernel plus the three
// kernels of its derived backward, all through both no-S x S checks (the
// pipeline fails if a kernel writes a buffer that grows as Sq x Skv).
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true to-nvvm=false" | FileCheck %s --check-prefix=GPU
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true backward-strategy=mma_sync binary=isa" | FileCheck %s --check-prefix=PTX
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true backward-strategy=wgmma to-nvvm=false" | FileCheck %s --check-prefix=WGMMA-GPU
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true backward-strategy=wgmma binary=isa" | FileCheck %s --check-prefix=WGMMA
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true backward-strategy=wgmma target=a100" 2>&1 | FileCheck %s --check-prefix=WGMMA-A100
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true target=a100 binary=isa" | FileCheck %s --check-prefix=A100
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="backward=true backward-strategy=wgmma_ws" 2>&1 | FileCheck %s --check-prefix=WGMMA-WS

// GPU: gpu.module @naive_attention_module
// delta = rowsum(dO * O): a row kernel reading dO and O.
// GPU: gpu.module @naive_attention_backward_0_module
// GPU-SAME: kind = "fusion", params = [tensor<"do", bf16, [D0, D1, D2, 128], input
// GPU-SAME: tensor<"o", bf16, [D0, D1, D2, 128], input
// GPU-SAME: tensor<"result0", f32, [D0, D1, D2, 1], output
// GPU: gpu.module @naive_attention_backward_1_module
// GPU-SAME: kind = "attention_backward"
// GPU-SAME: workspace<"dq_accum", bytes = [B, H, Sq, 512], zero_init, view = f32 [B, H, Sq, 128]>
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
// PTX-SAME: red.global.add.v4.f32

// backward-strategy=wgmma: two warpgroups of four warps own 64 keys each of
// the 128-row K/V tile; query tiles of 64 rows; swizzled tiles from a
// 1024-byte-aligned base (K, V, two stages of Q and dO, two buffers of
// dSᵀ, the row statistics, two staging tiles of dQ: 64 x 128 f32 each in
// four 128-byte-swizzled boxes of 32 columns, the query tiles' mbarrier,
// an atom less 16 bytes of slack for the 16-byte-aligned base): 231416
// bytes, within sm_90a's 232448. The dQ workspace is also an f32 [B, H,
// Sq, 128] view, and its tensor map's box is a staging box; Q and dO are
// read through tensor maps of 64-row boxes.
// WGMMA-GPU: gpu.module @naive_attention_backward_1_module
// WGMMA-GPU-SAME: kind = "attention_backward"
// WGMMA-GPU-SAME: workspace<"dq_accum", bytes = [B, H, Sq, 512], zero_init, view = f32 [B, H, Sq, 128]>
// WGMMA-GPU-SAME: tensormap<"dq_accum.map", tensor = "dq_accum", box = [1, 1, 64, 32], swizzle = 128, oob_fill = zero>
// WGMMA-GPU-SAME: tensormap<"q.map", tensor = "q", box = [1, 1, 64, 64], swizzle = 128, oob_fill = zero>
// WGMMA-GPU-SAME: tensormap<"do.map", tensor = "do", box = [1, 1, 64, 64], swizzle = 128, oob_fill = zero>
// WGMMA-GPU-SAME: grid = {{\[}}[Hkv], [ceil_div(Skv, 128)], [B]], block = [256, 1, 1], shared_memory = 231416
// WGMMA-GPU-SAME: block_kv = 128 : i64, block_q = 64 : i64
// WGMMA-GPU-SAME: strategy = "wgmma"
// An operand's first descriptor is built from its address (behind an opaque
// copy), the next k-steps' by one add to its address field: dQ = dS K's
// operands advance 16 rows of 128 bytes (2048 / 16 = 128) per step.
// WGMMA-GPU: %[[DQ0:.*]] = nvvm.wgmma.mma_async %[[DS:[0-9]+]], %[[K:[0-9]+]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>]
// WGMMA-GPU-NEXT: %[[C1:.*]] = arith.constant 128 : i64
// WGMMA-GPU-NEXT: %[[DS1:.*]] = arith.addi %[[DS]], %[[C1]] : i64
// WGMMA-GPU-NEXT: %[[C2:.*]] = arith.constant 128 : i64
// WGMMA-GPU-NEXT: %[[K1:.*]] = arith.addi %[[K]], %[[C2]] : i64
// WGMMA-GPU-NEXT: nvvm.wgmma.mma_async %[[DS1]], %[[K1]], %[[DQ0]], <m = 64, n = 64, k = 16>, D[<f32>, <one>]

// Its PTX, in order: the query tiles' mbarrier set up; K and V by
// cp.async; the first query tile's Q and dO by four TMA boxes (two 64-column
// boxes each) on the barrier that expects their bytes, its logsumexp and
// delta rows by 4-byte cp.async; at each step the row statistics' and the
// barrier's waits, the logsumexp rows rewritten
// as exp2's exponents (-log2(e) lse) by the threads that loaded them,
// fenced into the async proxy before the step's one CTA barrier; the dQ
// tile the previous step staged,
// added to the workspace by four TMA reductions (a box of 32 columns each;
// TMA leaves out rows past Sq) through the workspace's tensor map; the
// previous step's dQ = dS K from its stored dSᵀ, both transposed (1, 1),
// waited for, staged into the swizzled boxes (8-byte pairs, not fenced
// yet); Sᵀ = K Qᵀ and dPᵀ = V dOᵀ from two K-major
// descriptors (trans 0, 0); the recomputed P; dV += Pᵀ dO and dK += dSᵀ Q
// with A from registers and B transposed; dSᵀ stored (4-byte pairs) and
// one fence for both stores; the reductions' reads waited for, with no CTA barrier before the
// next step's. After the loops, the last two steps' dQ tiles; the
// reductions waited for before the kernel ends. No reductions by the
// threads.
// WGMMA: gpu.binary @naive_attention_backward_1_module
// WGMMA-SAME: mbarrier.init.shared.b64
// WGMMA-SAME: fence.mbarrier_init.release.cluster
// WGMMA-SAME: cp.async.cg.shared.global
// WGMMA-SAME: mbarrier.arrive.expect_tx.shared.b64
// WGMMA-COUNT-4: cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// WGMMA-SAME: cp.async.ca.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 4,
// WGMMA-SAME: cp.async.wait_group
// WGMMA-SAME: mbarrier.try_wait.parity.shared.b64
// WGMMA-SAME: mul.rn.f32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 0fBFB8AA3B;
// WGMMA-SAME: st.shared.b32
// WGMMA-SAME: fence.proxy.async.shared::cta
// WGMMA-SAME: bar.sync
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}];
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d
// WGMMA-SAME: cp.async.bulk.commit_group
// WGMMA-SAME: wgmma.fence.sync.aligned
// WGMMA-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{[{][^}]*[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 1,  1;
// WGMMA-SAME: wgmma.commit_group.sync.aligned
// WGMMA-SAME: wgmma.wait_group.sync.aligned \090;
// WGMMA-SAME: st.shared.v2.b32
// WGMMA-NOT: fence.proxy.async
// WGMMA-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{[{][^}]*[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// WGMMA-SAME: wgmma.commit_group.sync.aligned
// WGMMA-SAME: wgmma.wait_group.sync.aligned \091;
// WGMMA-SAME: ex2.approx.ftz.f32
// WGMMA-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{][^}]*[}]}}, {{[{][^}]*[}]}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// WGMMA-SAME: st.shared.b32
// WGMMA-SAME: fence.proxy.async.shared::cta
// WGMMA-SAME: wgmma.wait_group.sync.aligned \090;
// WGMMA-SAME: cp.async.bulk.wait_group.read \090;
// WGMMA-NOT: bar.sync
// WGMMA-SAME: cp.async.wait_group
// WGMMA-SAME: bar.sync
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d
// WGMMA-SAME: bar.sync
// WGMMA-SAME: cp.reduce.async.bulk.tensor.4d
// WGMMA-SAME: cp.async.bulk.wait_group \090;
// WGMMA-NOT: ldmatrix
// WGMMA-NOT: red.global
// WGMMA-NOT: st.shared.b16

// A target without warpgroup MMAs, and a strategy without a backward.
// WGMMA-A100: backward tile strategy wgmma needs warpgroup MMAs, which a100 lacks (sm_90a only)
// WGMMA-WS: unknown backward tile strategy 'wgmma_ws' for --attnc-online-softmax; known: mma_sync, wgmma, wgmma_persistent

// sm_80 has no vector reductions: dQ adds one f32 per red (and the default
// backward strategy there is mma_sync).
// A100: gpu.binary @naive_attention_backward_1_module
// A100-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// A100-SAME: red.global.add.f32
// A100-NOT: red.global.add.v
