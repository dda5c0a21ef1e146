// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-verify-no-global-scores
// RUN: not attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-verify-no-global-scores 2>&1 | FileCheck %s --check-prefix=EXAMPLE
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-verify-no-global-scores | FileCheck %s --check-prefix=CHAIN

// EXAMPLE: error: 'attnc.matmul' result #0 is a buffer in global memory of dim 0 of %arg0 x dim 1 of %arg0 x dim 2 of %arg0 x dim 2 of %arg1 elements; it grows as dim 2 of %arg0 x dim 2 of %arg1, faster than every input and output (O(S_q*S_kv) where they are O(S)); the score matrix must stay on chip
// EXAMPLE-NOT: 'attnc.matmul' result #0 is a buffer {{.*}} x 128 elements

// CHAIN: func.func @bias_dropout_layernorm

// -----

// The naive graph (examples/naive_attention.mlir): every S_q x S_kv
// intermediate of the unfused chain is a kernel result in HBM. The final
// matmul's [B, H, S_q, 128] result is bounded by Q and passes.
func.func @naive_attention(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                           %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory of dim 0 of %arg0 x dim 1 of %arg0 x dim 2 of %arg0 x dim 2 of %arg1 elements; it grows as dim 2 of %arg0 x dim 2 of %arg1, faster than every input and output}}
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %scale = arith.constant dense<0.08838834764831845> : tensor<f32>
  // expected-error @+1 {{'attnc.mul' result #0 is a buffer in global memory}}
  %ss = attnc.mul %s, %scale : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.iota' result #0 is a buffer in global memory}}
  %rows = attnc.iota %ss {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  // expected-error @+1 {{'attnc.iota' result #0 is a buffer in global memory}}
  %cols = attnc.iota %ss {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  // expected-error @+1 {{'attnc.cmp' result #0 is a buffer in global memory}}
  %keep = attnc.cmp ge, %rows, %cols
      : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  // expected-error @+1 {{'attnc.select' result #0 is a buffer in global memory}}
  %masked = attnc.select %keep, %ss, %ninf
      : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.softmax' result #0 is a buffer in global memory of dim 0 of %arg0 x dim 1 of %arg0 x dim 2 of %arg0 x dim 2 of %arg1 elements; it grows as dim 2 of %arg0 x dim 2 of %arg1}}
  %p = attnc.softmax %masked : tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.cast' result #0 is a buffer in global memory}}
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v
      : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Static shapes, S = 256 > d = 64: the scores have more elements than any
// input or output.
func.func @naive_static(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                        %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory of 131072 elements; it has 131072 elements, more than the largest input or output (32768)}}
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x256xbf16>
  // expected-error @+1 {{'attnc.softmax' result #0 is a buffer in global memory of 131072 elements}}
  %p = attnc.softmax %s : tensor<1x2x256x256xbf16>
  %o = attnc.matmul %p, %v
      : tensor<1x2x256x256xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}

// -----

// Static shapes, S = 64 < d = 128: the scores are smaller than Q, but their
// trailing extents are the sequence extents of the inputs.
func.func @naive_static_short(%q: tensor<1x2x64x128xbf16>, %k: tensor<1x2x64x128xbf16>,
                              %v: tensor<1x2x64x128xbf16>) -> tensor<1x2x64x128xbf16> {
  // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory of 8192 elements; it is [B, H, S_q, S_kv] = [1, 2, 64, 64], with the sequence extents of the attention inputs}}
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x2x64x64xbf16>
  // expected-error @+1 {{'attnc.softmax' result #0 is a buffer in global memory}}
  %p = attnc.softmax %s : tensor<1x2x64x64xbf16>
  %o = attnc.matmul %p, %v
      : tensor<1x2x64x64xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x2x64x128xbf16>
  return %o : tensor<1x2x64x128xbf16>
}

// -----

// Fused: one attnc.attention, whose [B, H, S_q, d] result is bounded by Q.
func.func @fused(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                 %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%bi: index, %hi: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// GQA: the repeated K/V heads are a copy in HBM, but it grows as K does.
func.func @fused_gqa(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>,
                     %v: tensor<?x2x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  %k8 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 4 : i64}
      : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %v8 = attnc.repeat_interleave %v {dimension = 1 : i64, repeats = 4 : i64}
      : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k8, %v8 {scale = 0.08838834764831845 : f64}
      : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// -----

// The flash form: tiles live inside the forall body; what it writes goes
// into shared outputs of [B, H, S_q(, d)] elements, bounded by Q.
func.func @flash(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                 %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %B = tensor.dim %q, %c0 : tensor<?x?x?x128xbf16>
  %H = tensor.dim %q, %c1 : tensor<?x?x?x128xbf16>
  %Sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %Skv = tensor.dim %k, %c2 : tensor<?x?x?x128xbf16>
  %tiles = arith.ceildivui %Sq, %c64 : index
  %o_init = tensor.empty(%B, %H, %Sq) : tensor<?x?x?x128xbf16>
  %lse_init = tensor.empty(%B, %H, %Sq) : tensor<?x?x?xf32>
  %res:2 = scf.forall (%b, %h, %t) in (%B, %H, %tiles)
      shared_outs(%o = %o_init, %lse = %lse_init) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
    %qs = arith.muli %t, %c64 : index
    %left = arith.subi %Sq, %qs : index
    %mq = arith.minui %left, %c64 : index
    %qt = tensor.extract_slice %q[%b, %h, %qs, 0] [1, 1, %mq, 128] [1, 1, 1, 1]
        : tensor<?x?x?x128xbf16> to tensor<?x128xbf16>
    %acc0 = tensor.splat %zero[%mq] : tensor<?x128xf32>
    %max0 = tensor.splat %ninf[%mq] : tensor<?xf32>
    %sum0 = tensor.splat %zero[%mq] : tensor<?xf32>
    %r:3 = scf.for %j = %c0 to %Skv step %c64
        iter_args(%acc = %acc0, %m = %max0, %l = %sum0) -> (tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>) {
      %kleft = arith.subi %Skv, %j : index
      %nk = arith.minui %kleft, %c64 : index
      %kt = tensor.extract_slice %k[%b, %h, %j, 0] [1, 1, %nk, 128] [1, 1, 1, 1]
          : tensor<?x?x?x128xbf16> to tensor<?x128xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %j, 0] [1, 1, %nk, 128] [1, 1, 1, 1]
          : tensor<?x?x?x128xbf16> to tensor<?x128xbf16>
      %a, %mn, %ln = attnc.online_attention %qt, %kt, %vt, %acc, %m, %l at [%b, %h, %qs, %j]
          {scale = 0.08838834764831845 : f64}
          : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>,
            tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
      scf.yield %a, %mn, %ln : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
    }
    %ot, %lt = attnc.online_attention_finalize %r#0, %r#1, %r#2
        : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x128xbf16>, tensor<?xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %ot into %o[%b, %h, %qs, 0] [1, 1, %mq, 128] [1, 1, 1, 1]
          : tensor<?x128xbf16> into tensor<?x?x?x128xbf16>
      tensor.parallel_insert_slice %lt into %lse[%b, %h, %qs] [1, 1, %mq] [1, 1, 1]
          : tensor<?xf32> into tensor<?x?x?xf32>
    }
  }
  return %res#0, %res#1 : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// The elementwise chain, dynamic rows: every intermediate is [B, T, d].
func.func @chain(%x: tensor<?x?x4096xbf16>, %bias: tensor<4096xbf16>,
                 %gamma: tensor<4096xbf16>, %beta: tensor<4096xbf16>,
                 %seed: i64, %offset: i64) -> tensor<?x?x4096xbf16> {
  %h = attnc.add %x, %bias
      : tensor<?x?x4096xbf16>, tensor<4096xbf16> -> tensor<?x?x4096xbf16>
  %d = attnc.dropout %h, %seed, %offset {probability = 1.000000e-01 : f64}
      : tensor<?x?x4096xbf16>
  %y = attnc.layer_norm %d, %gamma, %beta {epsilon = 1.000000e-05 : f64}
      : tensor<?x?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<?x?x4096xbf16>
  return %y : tensor<?x?x4096xbf16>
}

// -----

// GPU level: a host allocation of B x H x S_q x S_kv, sizes from memref.dim
// of two different arguments.
func.func @host_scores(%q: memref<?x?x?x128xbf16>, %k: memref<?x?x?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %q, %c0 : memref<?x?x?x128xbf16>
  %h = memref.dim %q, %c1 : memref<?x?x?x128xbf16>
  %sq = memref.dim %q, %c2 : memref<?x?x?x128xbf16>
  %skv = memref.dim %k, %c2 : memref<?x?x?x128xbf16>
  // expected-error @+1 {{'memref.alloc' result #0 is a buffer in global memory of dim 0 of %arg0 x dim 1 of %arg0 x dim 2 of %arg0 x dim 2 of %arg1 elements; it grows as dim 2 of %arg0 x dim 2 of %arg1}}
  %s = memref.alloc(%b, %h, %sq, %skv) : memref<?x?x?x?xf32>
  memref.dealloc %s : memref<?x?x?x?xf32>
  return
}

// -----

// GPU level: an allocation the size of the output (and on-chip scratch of
// any size) passes.
func.func @host_output(%q: memref<?x?x?x128xbf16>, %k: memref<?x?x?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %q, %c0 : memref<?x?x?x128xbf16>
  %h = memref.dim %q, %c1 : memref<?x?x?x128xbf16>
  %sq = memref.dim %q, %c2 : memref<?x?x?x128xbf16>
  %skv = memref.dim %k, %c2 : memref<?x?x?x128xbf16>
  %o = memref.alloc(%b, %h, %sq) : memref<?x?x?x128xbf16>
  %lse = memref.alloc(%b, %h, %sq) : memref<?x?x?xf32>
  %tile = memref.alloc(%sq, %skv) : memref<?x?xf32, #gpu.address_space<workgroup>>
  memref.dealloc %tile : memref<?x?xf32, #gpu.address_space<workgroup>>
  memref.dealloc %lse : memref<?x?x?xf32>
  memref.dealloc %o : memref<?x?x?x128xbf16>
  return
}

// -----

// GPU level: sizes passed as index arguments, the scores handed to a kernel.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scores(%q: memref<?x?x?x128xbf16>, %s: memref<?x?x?x?xf32>) kernel {
      gpu.return
    }
  }
  func.func @host_launch(%q: memref<?x?x?x128xbf16>, %b: index, %h: index,
                         %sq: index, %skv: index) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'gpu.alloc' result #0 is a buffer in global memory of %arg1 x %arg2 x %arg3 x %arg4 elements; it grows as %arg3 x %arg4}}
    %s = gpu.alloc (%b, %h, %sq, %skv) : memref<?x?x?x?xf32>
    gpu.launch_func @kernels::@scores blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%q : memref<?x?x?x128xbf16>, %s : memref<?x?x?x?xf32>)
    return
  }
}

// -----

// GPU level, kernels with bare pointers: judged by their launch contract
// (both kernel forms; every write kind is in
// test/Conversion/AttncToGPU/verify-kernel-writes.mlir). A kernel that
// writes its output and a per-SM workspace passes.
gpu.module @rows_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @rows, kind = "test", params = [tensor<"x", f32, [R, 128], input, align = 16>, tensor<"y", f32, [R, 128], output, align = 16>, workspace<"partials", bytes = [device(num_sms), 512], zero_init>], grid = [[R], [1], [1]], block = [128, 1, 1], shared_memory = 0>} {
  gpu.func @rows(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>, %p: !llvm.ptr<1>) kernel {
    %v = arith.constant 1.0 : f32
    llvm.store %v, %y : f32, !llvm.ptr<1>
    %old = llvm.atomicrmw fadd %p, %v monotonic : !llvm.ptr<1>, f32
    gpu.return
  }
}

// -----

// A lowered kernel that spills a score tile to a workspace of
// B x H x Sq x Skv bytes.
gpu.module @spill_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @spill, kind = "test", params = [tensor<"q", bf16, [B, H, Sq, 64], input, align = 16>, tensor<"k", bf16, [B, H, Skv, 64], input, align = 16>, tensor<"o", bf16, [B, H, Sq, 64], output, align = 16>, workspace<"s", bytes = [B, H, Sq, Skv, 4]>], grid = [[ceil_div(Sq, 64)], [H], [B]], block = [128, 1, 1], shared_memory = 0>} {
  // expected-error @+1 {{kernel @spill takes workspace 's' of B x H x Sq x Skv bytes, which grows faster than every input of the kernel: a score matrix in global memory}}
  llvm.func @spill(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>, %o: !llvm.ptr<1>, %s: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    llvm.inline_asm has_side_effects "st.global.f32 [$0], $1;", "l,f" %s, %v : (!llvm.ptr<1>, f32) -> ()
    llvm.return
  }
}

// -----

// A backward built without recomputation: P is computed once and kept for
// dV = Pᵀ dO and dS = P (dP - delta), so P, dP and dS are S_q x S_kv
// buffers in global memory. (The derived backward recomputes P from the
// logsumexp inside its kernel: test/Pipelines/pipeline-backward.mlir.)
func.func @backward_without_recompute(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
    %v: tensor<?x?x?x64xbf16>, %do: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory}}
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.softmax' result #0 is a buffer in global memory}}
  %p = attnc.softmax %s : tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.cast' result #0 is a buffer in global memory}}
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %dv = attnc.matmul %pb, %do {transpose_a} : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory}}
  %dp = attnc.matmul %do, %v {transpose_b} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.mul' result #0 is a buffer in global memory}}
  %ds = attnc.mul %p, %dp : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  // expected-error @+1 {{'attnc.cast' result #0 is a buffer in global memory}}
  %dsb = attnc.cast %ds : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %dq = attnc.matmul %dsb, %k : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %dq, %dv : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// -----

// A kernel in versions (scf.if on sizes) is a kernel: its result crosses
// to the next kernel through HBM, so scores computed in versions are
// refused like scores computed by one kernel, and each version's own
// result too.
func.func @scores_in_versions(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x1xf32> {
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %long = arith.cmpi sge, %sq, %c4096 : index
  // expected-error @+1 {{'scf.if' result #0 is a buffer in global memory of dim 0 of %arg0 x dim 1 of %arg0 x dim 2 of %arg0 x dim 2 of %arg1 elements}}
  %s = scf.if %long -> tensor<?x?x?x?xf32> {
    // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory}}
    %a = attnc.matmul %q, %k {transpose_b}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
    scf.yield %a : tensor<?x?x?x?xf32>
  } else {
    // expected-error @+1 {{'attnc.matmul' result #0 is a buffer in global memory}}
    %a = attnc.matmul %q, %k {transpose_b}
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
    scf.yield %a : tensor<?x?x?x?xf32>
  }
  %m = attnc.reduce_max %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  return %m : tensor<?x?x?x1xf32>
}
