// Backward flash forms and configurations the back-end cannot lower are
// refused with a diagnostic naming the rule.
// RUN: not attnc-opt %s -split-input-file --attnc-online-softmax --attnc-convert-to-gpu 2>&1 | FileCheck %s

// CHECK: error: attention backward: only the mma_sync, wgmma and wgmma_persistent strategies have a backward kernel, got wgmma_ws
func.func @wgmma_ws(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: it reads each row's logsumexp and sums no probabilities; mma_row_sums is the forward's
func.func @mma_row_sums(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = wgmma, mma_row_sums>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: strategy wgmma needs block_q 64 (one m64 MMA of dQ), or 128 with two warpgroups at d = 64 (one m64 each), got block_q 128 with 4 warps at d = 64
func.func @wgmma_block_q(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 4, stages = 2, strategy = wgmma>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: strategy wgmma runs one or two warpgroups (4 or 8 warps), got 16
func.func @wgmma_warps(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 256, warps = 16, stages = 2, strategy = wgmma>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: block_kv (64) must be 16 rows per warp (8 warps)
func.func @kv_rows(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: stages must be 1 or 2, got 3
func.func @stages(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 3, strategy = mma_sync>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: block_q (48) must be a multiple of 32
func.func @block_q(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 48, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: attention backward: head dims must be equal and 64 or 128, got d = 32, dv = 32
func.func @head_dim(%q: tensor<1x2x128x32xbf16>, %do: tensor<1x2x128x32xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x32xf32>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>}
      : tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x32xf32>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x32xf32>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>
}

// -----

// dQ must start at 0: every K/V tile adds to it, so a form whose dQ
// starts from anything else (here tensor.empty) cannot be lowered.
// CHECK: error: 'scf.forall' op in a backward flash form: dQ (the first shared output) must start at 0: every K/V tile adds to it
func.func @dq_not_zero(%q: tensor<1x2x64x64xbf16>, %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>, %dl: tensor<1x2x64x1xf32>)
    -> (tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %zq = arith.constant dense<0.0> : tensor<1x64x64xf32>
  %dq0 = tensor.empty() : tensor<1x2x64x64xf32>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %r:3 = scf.forall (%b, %h, %n) in (1, 2, 1) shared_outs(%DQ = %dq0, %DK = %e, %DV = %e) -> (tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) {
    %kt = tensor.extract_slice %q[0, %h, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x64x64xbf16> to tensor<64x64xbf16>
    %qt = tensor.extract_slice %q[0, %h, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x64x64xbf16> to tensor<64x64xbf16>
    %dot = tensor.extract_slice %do[0, %h, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x64x64xbf16> to tensor<64x64xbf16>
    %lt = tensor.extract_slice %lse[0, %h, 0] [1, 1, 64] [1, 1, 1] : tensor<1x2x64xf32> to tensor<64xf32>
    %dt = tensor.extract_slice %dl[0, %h, 0, 0] [1, 1, 64, 1] [1, 1, 1, 1] : tensor<1x2x64x1xf32> to tensor<64xf32>
    %dk, %dv, %dqt = attnc.online_attention_grad %qt, %kt, %kt, %dot, %lt, %dt, %z, %z at [%c0, %h, %c0, %c0] {scale = 1.250000e-01 : f64}
        : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %acc = attnc.accumulate %dqt into %zq[%c0, %c0, %c0] : tensor<64x64xf32> into tensor<1x64x64xf32>
    %dkb = attnc.cast %dk : tensor<64x64xf32> to tensor<64x64xbf16>
    %dvb = attnc.cast %dv : tensor<64x64xf32> to tensor<64x64xbf16>
    scf.forall.in_parallel {
      attnc.parallel_accumulate %acc into %DQ[%c0, %h, %c0, %c0] : tensor<1x64x64xf32> into tensor<1x2x64x64xf32>
      tensor.parallel_insert_slice %dkb into %DK[0, %h, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x64x64xbf16>
      tensor.parallel_insert_slice %dvb into %DV[0, %h, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x64x64xbf16>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0, %r#1, %r#2 : tensor<1x2x64x64xf32>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>
}

// -----

// l2_group_mib orders the heads of a longest-first (causal) grid; an
// unmasked backward's grid (K/V tiles on x) has none to order.
// CHECK: error: 'scf.forall' op has l2_group_mib = 32 in its flash config but its grid does not run longest first (batch on z, K/V heads on x, K/V tiles on y: a causal mask), the grid whose heads the groups order
func.func @l2_groups_unmasked(%q: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %dl: tensor<1x2x128x1xf32>)
    -> (tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma, l2_group_mib = 32>}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, tensor<1x2x128x1xf32>
        -> tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf32>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}
