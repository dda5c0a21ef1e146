// RUN: attnc-opt %s -split-input-file --attnc-online-softmax --canonicalize --cse | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=size-variants=false --canonicalize --cse | FileCheck %s --check-prefix=ONE
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=block-q=64 --canonicalize --cse | FileCheck %s --check-prefix=ONE
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=backward-strategy=mma_sync --canonicalize --cse | FileCheck %s --check-prefix=MMA
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=overlap-pv=on --canonicalize --cse | FileCheck %s --check-prefix=OVERLAP

// Size variants: sm_90a runs the d = 64 wgmma backward faster with 128 x
// 128 tiles from Sq = 2048 on (4096 under a causal mask, below) and with
// 64 x 64 ones below, so with a dynamic Sq the op is built in versions:
// scf.if on Sq >= 2048, the 128 x 128 flash form in the then region and
// the default one in the else region, each yielding its form's results,
// which the function returns.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[SQ:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[LONG:.*]] = arith.cmpi sge, %[[SQ]], %c2048 : index
// CHECK: %[[R:.*]]:3 = scf.if %[[LONG]]
// CHECK:   %[[A:.*]]:3 = scf.forall
// CHECK:     attnc.online_attention_grad
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
// CHECK:   scf.yield %[[A]]#0, %[[A]]#1, %[[A]]#2
// CHECK: } else {
// CHECK:   %[[B:.*]]:3 = scf.forall
// CHECK:     attnc.online_attention_grad
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma>
// CHECK:   scf.yield %[[B]]#0, %[[B]]#1, %[[B]]#2
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// Without size variants, or with tiles given, one form.
// ONE-LABEL: func.func @dynamic_rows
// ONE-NOT: scf.if
// ONE: scf.forall
// ONE-NOT: scf.if
// ONE: return
// mma_sync has no variant.
// MMA-LABEL: func.func @dynamic_rows
// MMA-NOT: scf.if
// MMA: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>
func.func @dynamic_rows(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>,
    %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>)
    -> (tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32>
        -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
}

// -----

// A static Sq picks its version at compile time: 2048 rows run the 128 x
// 128 tiles, 2047 the default ones.
// CHECK-LABEL: func.func @static_rows
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma>
func.func @static_rows(%q: tensor<1x2x2048x64xbf16>, %k: tensor<1x2x2048x64xbf16>, %v: tensor<1x2x2048x64xbf16>,
    %do: tensor<1x2x2048x64xbf16>, %lse: tensor<1x2x2048xf32>, %dl: tensor<1x2x2048x1xf32>,
    %q2: tensor<1x2x2047x64xbf16>, %do2: tensor<1x2x2047x64xbf16>, %lse2: tensor<1x2x2047xf32>,
    %dl2: tensor<1x2x2047x1xf32>)
    -> (tensor<1x2x2048x64xf32>, tensor<1x2x2047x64xf32>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>,
        tensor<1x2x2048x64xbf16>, tensor<1x2x2048xf32>, tensor<1x2x2048x1xf32>
        -> tensor<1x2x2048x64xf32>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>
  %dq2, %dk2, %dv2 = attnc.attention_grad %q2, %k, %v, %do2, %lse2, %dl2 {scale = 0.125 : f64}
      : tensor<1x2x2047x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>,
        tensor<1x2x2047x64xbf16>, tensor<1x2x2047xf32>, tensor<1x2x2047x1xf32>
        -> tensor<1x2x2047x64xf32>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>
  return %dq, %dq2 : tensor<1x2x2048x64xf32>, tensor<1x2x2047x64xf32>
}

// -----

// Under a causal mask the 128 x 128 tiles pay from Sq = 4096 (a CTA's
// query loop is shorter: half the tiles on average).
// CHECK-LABEL: func.func @dynamic_causal
// CHECK: %[[SQ:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[LONG:.*]] = arith.cmpi sge, %[[SQ]], %c4096 : index
// CHECK: scf.if %[[LONG]]
func.func @dynamic_causal(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>,
    %do: tensor<?x2x?x64xbf16>, %lse: tensor<?x2x?xf32>, %dl: tensor<?x2x?x1xf32>)
    -> tensor<?x2x?x64xf32> {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x1xf32>
        -> tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ule, %j, %i : index
    attnc.yield %keep : i1
  }
  return %dq : tensor<?x2x?x64xf32>
}

// -----

// d = 128 has no variant: its default tile already has 128 K/V rows.
// CHECK-LABEL: func.func @head_dim_128
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
func.func @head_dim_128(%q: tensor<?x2x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>,
    %do: tensor<?x2x?x128xbf16>, %lse: tensor<?x2x?xf32>, %dl: tensor<?x2x?x1xf32>)
    -> tensor<?x2x?x128xf32> {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>,
        tensor<?x2x?x128xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x1xf32>
        -> tensor<?x2x?x128xf32>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>
  return %dq : tensor<?x2x?x128xf32>
}

// -----

// The forward at d = 128 (warp-specialised, overlap_pv): its loop of K/V
// tiles is too short for the overlap to pay up to 1024 keys unmasked, so
// the op is built in versions on K's rows, the variant without overlap_pv
// and without a fallback of its own (a call it refuses goes to the
// kernel, whose fallback takes it).
// CHECK-LABEL: func.func @forward_full
// CHECK: %[[SKV:.*]] = tensor.dim %arg1, %c2
// CHECK: %[[SHORT:.*]] = arith.cmpi sle, %[[SKV]], %c1024 : index
// CHECK: %[[R:.*]] = scf.if %[[SHORT]]
// CHECK:   attnc.online_attention
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent>,
// CHECK: } else {
// CHECK:   attnc.online_attention
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, fallback = <{{.*}}strategy = mma_sync_unaligned>>
// CHECK: return %[[R]]
// ONE-LABEL: func.func @forward_full
// ONE-NOT: scf.if
// ONE: return
// An overlap chosen by option is kept at every size.
// OVERLAP-LABEL: func.func @forward_full
// OVERLAP-NOT: scf.if
// OVERLAP: return
func.func @forward_full(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>) -> tensor<?x4x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}

// -----

// Causal: one kernel at every size (without overlap_pv it lost 1-4% at
// 512-2048 keys on the H200). A static K/V length of an unmasked op picks
// its version: 1024 keys run without overlap_pv (and keep the fallback),
// 1025 with.
// CHECK-LABEL: func.func @forward_causal
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32, fallback =
// CHECK-NOT: scf.if
// CHECK: return
// CHECK-LABEL: func.func @forward_full_static
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, fallback =
// CHECK-NOT: scf.if
// CHECK: } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, fallback =
func.func @forward_causal(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>) -> tensor<?x4x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x4x?x128xbf16>
}
func.func @forward_full_static(%q: tensor<1x4x1024x128xbf16>, %q2: tensor<1x4x1025x128xbf16>)
    -> (tensor<1x4x1024x128xbf16>, tensor<1x4x1025x128xbf16>) {
  %o = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  %o2 = attnc.attention %q2, %q2, %q2 {scale = 0.125 : f64} : tensor<1x4x1025x128xbf16>, tensor<1x4x1025x128xbf16>, tensor<1x4x1025x128xbf16> -> tensor<1x4x1025x128xbf16>
  return %o, %o2 : tensor<1x4x1024x128xbf16>, tensor<1x4x1025x128xbf16>
}

// -----

// Only what was measured: a sliding window, d = 64 (no overlap_pv) and a
// softcap keep one kernel.
// CHECK-LABEL: func.func @forward_others
// CHECK-NOT: scf.if
// CHECK: return
func.func @forward_others(%q: tensor<?x4x?x128xbf16>, %q64: tensor<?x4x?x64xbf16>)
    -> (tensor<?x4x?x128xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x128xbf16>) {
  %w = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c256 = arith.constant 256 : index
        %past = arith.cmpi ule, %j, %i : index
        %lo = arith.addi %j, %c256 : index
        %near = arith.cmpi ugt, %lo, %i : index
        %keep = arith.andi %past, %near : i1
        attnc.yield %keep : i1
      }
  %s = attnc.attention %q64, %q64, %q64 {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
  %c = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %d = arith.divf %x, %cap : f32
        %t = math.tanh %d : f32
        %y = arith.mulf %t, %cap : f32
        attnc.yield %y : f32
      }
  return %w, %s, %c : tensor<?x4x?x128xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x128xbf16>
}

// -----

// The backward's variant was measured unmasked and causal only: under a
// sliding window each K/V tile's query loop is short (as at S = 1024, where
// 128-row tiles lose), and a mask reading a tensor (document ids) is not
// what was measured either: one kernel each.
// CHECK-LABEL: func.func @backward_window
// CHECK-NOT: scf.if
// CHECK: return
func.func @backward_window(%q: tensor<?x2x?x64xbf16>, %do: tensor<?x2x?x64xbf16>, %lse: tensor<?x2x?xf32>,
    %dl: tensor<?x2x?x1xf32>, %doc: tensor<?xi64>)
    -> (tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x1xf32>
        -> tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c256 = arith.constant 256 : index
        %past = arith.cmpi ule, %j, %i : index
        %lo = arith.addi %j, %c256 : index
        %near = arith.cmpi ugt, %lo, %i : index
        %keep = arith.andi %past, %near : i1
        attnc.yield %keep : i1
      }
  %dq2, %dk2, %dv2 = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x1xf32>
        -> tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %di = tensor.extract %doc[%i] : tensor<?xi64>
        %dj = tensor.extract %doc[%j] : tensor<?xi64>
        %same = arith.cmpi eq, %di, %dj : i64
        attnc.yield %same : i1
      }
  return %dq, %dq2 : tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>
}
