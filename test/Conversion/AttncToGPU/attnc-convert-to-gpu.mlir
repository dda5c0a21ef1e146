// The fused graphs become one gpu.func each, in their own gpu.module with the
// sm_90a NVVM target and the launch contract (attnc.launch_contract)
// attached.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false strategy=mma_sync" \
// RUN:   | attnc-opt --attnc-convert-to-gpu | FileCheck %s --check-prefix=ATTN
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-pipeline="to-gpu=false" \
// RUN:   | attnc-opt --attnc-convert-to-gpu | FileCheck %s --check-prefix=CHAIN
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir \
// RUN:   --attnc-pipeline="to-gpu=false fuse-attention=false verify-no-global-scores=false" \
// RUN:   | not attnc-opt --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=UNFUSED
// RUN: not attnc-opt %s --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: sed -e 's/ {attnc.name = "[a-z]*"}//' %attnc_src_root/examples/elementwise_chain.mlir \
// RUN:   | attnc-opt --attnc-pipeline="to-gpu=false" | attnc-opt --attnc-convert-to-gpu | FileCheck %s --check-prefix=UNNAMED
// RUN: sed -e 's/"seed"/"x.stride0"/' %attnc_src_root/examples/elementwise_chain.mlir \
// RUN:   | attnc-opt --attnc-pipeline="to-gpu=false" | not attnc-opt --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=CLASH

// Attention: one kernel; K/V tiles staged in shared memory with cp.async,
// QK^T and PV on tensor cores, bare pointers and i64 sizes as parameters.
// ATTN: gpu.module @naive_attention_module [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">]
// ATTN-SAME: attnc.launch_contract = #attnc.launch_contract<kernel = @naive_attention, kind = "attention",
// ATTN-SAME: params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16, row_align = 16>,
// ATTN-SAME: tensor<"lse", f32, [B, H, Sq], output, align = 16>, size<"B", i64>,
// ATTN-SAME: stride<"q.stride0", i64, tensor = "q", dim = 0>,
// ATTN-SAME: block = [256, 1, 1], shared_memory = 139264
// ATTN-SAME: causal = true
// ATTN: gpu.func @naive_attention(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64
// ATTN-SAME: kernel
// ATTN: gpu.dynamic_shared_memory
// ATTN: nvgpu.device_async_copy
// ATTN: nvgpu.ldmatrix
// ATTN: nvvm.mma.sync
// ATTN-NOT: gpu.module

// The elementwise chain dropout(x + bias) -> LayerNorm is one kernel.
// Parameters are named after the source's attnc.name attributes.
// CHAIN: gpu.module @bias_dropout_layernorm_module
// CHAIN-SAME: #attnc.launch_contract<kernel = @bias_dropout_layernorm, kind = "fusion",
// CHAIN-SAME: params = [tensor<"x", bf16, [8, 4096, 4096], input, align = 16, row_align = 16>,
// CHAIN-SAME: tensor<"bias", bf16, [4096], input, align = 16>,
// CHAIN-SAME: tensor<"y", bf16, [8, 4096, 4096], output, align = 16, row_align = 16>,
// CHAIN-SAME: stride<"x.stride0", i64, tensor = "x", dim = 0>,
// CHAIN-SAME: scalar<"seed", i64>, scalar<"offset", i64>],
// CHAIN-SAME: grid = {{\[\[}}8, 4096], [1], [1]], block = [128, 1, 1]
// CHAIN: gpu.func @bias_dropout_layernorm({{.*}}) workgroup(%{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) kernel
// CHAIN: vector.load {{.*}} {alignment = 16 : i64} : memref<?xbf16, 1>, vector<8xbf16>
// CHAIN: arith.mului_extended
// CHAIN: gpu.shuffle xor
// CHAIN: gpu.barrier
// CHAIN: vector.store {{.*}} {alignment = 16 : i64} : memref<?xbf16, 1>, vector<8xbf16>
// CHAIN-NOT: gpu.func

// Without attnc.name, parameters are named after positions: the source
// function's argument, the fusion's result.
// UNNAMED: params = [tensor<"arg0", bf16, [8, 4096, 4096], input
// UNNAMED-SAME: tensor<"result0", bf16, [8, 4096, 4096], output
// UNNAMED-SAME: scalar<"arg4", i64>, scalar<"arg5", i64>]

// A source name that clashes with a generated one is refused on the fusion.
// CLASH: error: 'attnc.fusion' op parameter name 'x.stride0' is used twice

// Without the attention fusion the matmuls have no kernel: the error names
// the op and says which passes give it one.
// UNFUSED: error: 'attnc.matmul' op cannot be lowered to a GPU kernel: only fused attention

// A plain attnc.attention must be put in its flash form first.
// PLAIN: error: 'attnc.attention' op has no kernel of its own: run --attnc-online-softmax
func.func @plain(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
