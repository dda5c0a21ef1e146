// Pins the report's printed values for d = 128 bf16: the arithmetic
// intensity of unfused and of flash attention and of the memory-bound
// elementwise chain, against the model of docs/design.md ("Intensity
// model").
//
// RUN: attnc-opt %s --attnc-report-intensity | FileCheck %s --check-prefix=S4K
// RUN: attnc-opt %s --attnc-report-intensity="seq-len=1024" | FileCheck %s --check-prefix=S1K
// RUN: attnc-opt %s --attnc-report-intensity="seq-len=16384" | FileCheck %s --check-prefix=S16K
// RUN: attnc-opt %s --attnc-report-intensity="seq-len=32768 heads=32" | FileCheck %s --check-prefix=S32K
// RUN: attnc-opt %s --attnc-report-intensity="device=h200 seq-len-q=1 seq-len-kv=128 batch=2 heads=4" | FileCheck %s --check-prefix=SMALL
// RUN: attnc-opt %s --attnc-report-intensity="device=custom peak-tflops=100 bandwidth-tbps=1 launch-overhead-us=2" | FileCheck %s --check-prefix=CUSTOM
// RUN: attnc-opt %s --attnc-report-intensity="device=a100 format=json" | FileCheck %s --check-prefix=JSON
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir --attnc-report-intensity | FileCheck %s --check-prefix=CHAIN
// RUN: not attnc-opt %s --attnc-report-intensity="device=b200" 2>&1 | FileCheck %s --check-prefix=BADDEV
// RUN: attnc-opt %s --attnc-report-intensity | FileCheck %s --check-prefix=IR
// RUN: attnc-opt %s --attnc-report-intensity="device=sm_80" | FileCheck %s --check-prefix=CHIP

// S4K: attnc intensity report: device h100, peak 989.0 TFLOP/s, bandwidth 3.35 TB/s, ridge 295.2 FLOP/B, launch 5.0 us
// S4K: sizes: batch=1 heads=1 seq-len-q=4096 seq-len-kv=4096
// S4K-LABEL: func @unfused_attention
// S4K: 0 attnc.matmul 4.295 35.652 120.5 bandwidth-bound 10.64
// S4K: 1 attnc.softmax 0.084 67.109 1.2 bandwidth-bound 20.03
// S4K: 2 attnc.matmul 4.295 35.652 120.5 bandwidth-bound 10.64
// S4K: total: 3 kernels, 8.674 GFLOP, 138.41 MB, intensity 62.7 FLOP/B, time 41.32 us
// S4K: score-matrix traffic: 134.22 MB; unfused-attention intensity (matmul FLOP / S x S bytes) 64.0 FLOP/B
// S4K-LABEL: func @fused_attention
// S4K: 0 attnc.attention 8.590 4.194 2048.0 compute-bound 8.69
// S4K: total: 1 kernel, 8.590 GFLOP, 4.19 MB, intensity 2048.0 FLOP/B
// S4K-NOT: score-matrix traffic
// S4K: attention #0: score matrix kept on chip 33.55 MB (B*H*S_q*S_kv*2 B; 33.55 MB per head)
// S4K: attention #0: compute-bound past S = 590 (h100) 412 (h200) 306 (a100)
// S4K-LABEL: func @chain_fused
// S4K: 0 attnc.fusion 1.208 536.895 2.2 bandwidth-bound 160.27
// S4K: total bytes: 2.00x the largest argument or result (268.44 MB)
// S4K-LABEL: func @flash
// S4K: 0 scf.forall 8.590 4.211 2040.0 compute-bound 8.69
// S4K: attention #0: score matrix kept on chip 33.55 MB
// A causal mask region halves the FLOPs: the tiles past the diagonal are
// never visited.
// S4K-LABEL: func @fused_causal
// S4K: 0 attnc.attention 4.295 4.194 1024.0 overhead-bound 5.00

// S1K-LABEL: func @unfused_attention
// S1K: unfused-attention intensity (matmul FLOP / S x S bytes) 64.0 FLOP/B
// S1K-LABEL: func @fused_attention
// S1K: 0 attnc.attention 0.537 1.049 512.0 overhead-bound 5.00

// S16K-LABEL: func @unfused_attention
// S16K: unfused-attention intensity (matmul FLOP / S x S bytes) 64.0 FLOP/B
// S16K-LABEL: func @fused_attention
// S16K: 0 attnc.attention 137.439 16.777 8192.0 compute-bound 138.97

// S32K-LABEL: func @unfused_attention
// S32K: unfused-attention intensity (matmul FLOP / S x S bytes) 64.0 FLOP/B
// S32K-LABEL: func @fused_attention
// S32K: 0 attnc.attention 17592.186 1073.742 16384.0 compute-bound
// S32K: attention #0: score matrix kept on chip 68.72 GB (B*H*S_q*S_kv*2 B; 2.15 GB per head)

// Decode-like: one query against 128 keys is overhead-bound everywhere.
// SMALL: ridge 206.0 FLOP/B
// SMALL: sizes: batch=2 heads=4 seq-len-q=1 seq-len-kv=128
// SMALL-LABEL: func @fused_attention
// SMALL: 0 attnc.attention {{.*}} overhead-bound 5.00

// CUSTOM: device custom, peak 100.0 TFLOP/s, bandwidth 1.00 TB/s, ridge 100.0 FLOP/B, launch 2.0 us
// CUSTOM-LABEL: func @fused_attention
// CUSTOM: 0 attnc.attention 8.590 4.194 2048.0 compute-bound 85.90

// JSON: "name": "a100",
// JSON: "ridge": 152.94117647058
// JSON: "name": "unfused_attention",
// JSON: "total": {
// JSON: "score_intensity": 64,
// JSON: "name": "fused_attention",
// JSON: "op": "attnc.attention",
// JSON: "matmul_flops": 8589934592,
// JSON: "bytes": 4194304,
// JSON: "intensity": 2048,
// JSON: "regime": "compute-bound",
// JSON: "avoided_score_bytes": 33554432,
// JSON: "crossover_seq_len": {
// JSON-NEXT: "h100": 590,
// JSON-NEXT: "h200": 412,
// JSON-NEXT: "a100": 306
// JSON: "name": "chain_fused",
// JSON: "bytes_over_largest_boundary": 2.0000915

// The eager chain: three round trips, 6x the activation's bytes.
// CHAIN-LABEL: func @bias_dropout_layernorm
// CHAIN: 0 attnc.add
// CHAIN: 1 attnc.dropout
// CHAIN: 2 attnc.layer_norm
// CHAIN: total: 3 kernels
// CHAIN: total bytes: 6.00x the largest argument or result (268.44 MB)

// A chip prices on its default device, from the same target description
// that gives the tiles.
// CHIP: attnc intensity report: device a100, peak 312.0 TFLOP/s, bandwidth 2.04 TB/s, ridge 152.9 FLOP/B, launch 5.0 us

// BADDEV: error: unknown device 'b200': expected h100, h200, a100 (devices) or sm_80, sm_90, sm_90a (chips), or custom

// The report does not change the IR.
// IR-LABEL: func.func @unfused_attention
// IR: attnc.softmax

// Unfused attention: three kernels, QK^T, softmax,
// PV, each handing the bf16 S x S matrix to the next through HBM.
func.func @unfused_attention(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                             %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xbf16>
  %p = attnc.softmax %s : tensor<?x?x?x?xbf16>
  %o = attnc.matmul %p, %v
      : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// The same attention fused: Q, K, V read once, O written once.
func.func @fused_attention(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                           %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// The elementwise chain of examples/elementwise_chain.mlir as one fusion:
// x read once, y written once.
func.func @chain_fused(%x: tensor<8x4096x4096xbf16>, %bias: tensor<4096xbf16>,
                       %gamma: tensor<4096xbf16>, %beta: tensor<4096xbf16>,
                       %seed: i64, %offset: i64) -> tensor<8x4096x4096xbf16> {
  %y = attnc.fusion (%x, %bias, %gamma, %beta, %seed, %offset)
      : (tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>,
         tensor<4096xbf16>, i64, i64) -> tensor<8x4096x4096xbf16> {
  ^bb0(%a0: tensor<8x4096x4096xbf16>, %a1: tensor<4096xbf16>, %a2: tensor<4096xbf16>,
       %a3: tensor<4096xbf16>, %s: i64, %o: i64):
    %h = attnc.add %a0, %a1
        : tensor<8x4096x4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
    %d = attnc.dropout %h, %s, %o {probability = 1.000000e-01 : f64}
        : tensor<8x4096x4096xbf16>
    %n = attnc.layer_norm %d, %a2, %a3 {epsilon = 1.000000e-05 : f64}
        : tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
    attnc.yield %n : tensor<8x4096x4096xbf16>
  }
  return %y : tensor<8x4096x4096xbf16>
}
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

// Top-left causal attention: the mask region's causal form halves the work.
func.func @fused_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                        %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}
