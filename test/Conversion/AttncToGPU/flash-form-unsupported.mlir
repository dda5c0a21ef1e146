// Flash forms the back-end cannot lower are refused with a diagnostic that
// names the op and the rule; nothing in the loop nest is silently ignored.
// RUN: not attnc-opt %s -split-input-file --attnc-convert-to-gpu 2>&1 | FileCheck %s

// The K/V slices are 32 rows but the config says 64: the kernel's tile is
// the IR's, so they must agree.
// CHECK: error: 'tensor.extract_slice' op takes K/V tiles of up to 32 rows but the flash form's #attnc.flash_config has block_kv = 64; the kernel's tile is the IR's: make them agree
func.func @kv32_mismatch(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %r:2 = scf.forall (%b, %h, %t) in (1, 2, 2) shared_outs(%o = %o0, %l = %l0) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
    %q0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    %qt = tensor.extract_slice %q[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
    %a0 = tensor.splat %zero : tensor<64x64xf32>
    %m0 = tensor.splat %ninf : tensor<64xf32>
    %s0 = tensor.splat %zero : tensor<64xf32>
    %lb0 = arith.constant 0 : index
    %ub0 = arith.constant 4 : index
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c1 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 32)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<32x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<32x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r0#0, %r0#1, %r0#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// The K/V tile of iteration j starts half a tile past j * 64: the kernel
// loads whole tiles, at multiples of block_kv.
// CHECK: error: 'tensor.extract_slice' op must start the K/V tile of iteration j at row t * block_kv (64), as the step's kv_start says, with t = j or an index computation of j in the loop
func.func @kv_start_off_tile(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x192x64xbf16>, %v: tensor<1x2x192x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %r:2 = scf.forall (%b, %h, %t) in (1, 2, 2) shared_outs(%o = %o0, %l = %l0) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
    %q0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    %qt = tensor.extract_slice %q[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
    %a0 = tensor.splat %zero : tensor<64x64xf32>
    %m0 = tensor.splat %ninf : tensor<64xf32>
    %s0 = tensor.splat %zero : tensor<64xf32>
    %lb0 = arith.constant 0 : index
    %ub0 = arith.constant 2 : index
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c1 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64 + 32)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x192x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x192x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r0#0, %r0#1, %r0#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: 'scf.for' op is a K/V loop of a flash form; its step must be 1 (one K/V tile per iteration)
func.func @step2(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %r:2 = scf.forall (%b, %h, %t) in (1, 2, 2) shared_outs(%o = %o0, %l = %l0) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
    %q0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    %qt = tensor.extract_slice %q[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
    %a0 = tensor.splat %zero : tensor<64x64xf32>
    %m0 = tensor.splat %ninf : tensor<64xf32>
    %s0 = tensor.splat %zero : tensor<64xf32>
    %lb0 = arith.constant 0 : index
    %ub0 = arith.constant 2 : index
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c2 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r0#0, %r0#1, %r0#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// CHECK: error: 'scf.forall' op holds attnc.online_attention but has no 'attnc.flash_config' (run --attnc-online-softmax, which chooses it)
func.func @noconfig(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %r:2 = scf.forall (%b, %h, %t) in (1, 2, 2) shared_outs(%o = %o0, %l = %l0) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
    %q0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    %qt = tensor.extract_slice %q[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
    %a0 = tensor.splat %zero : tensor<64x64xf32>
    %m0 = tensor.splat %ninf : tensor<64xf32>
    %s0 = tensor.splat %zero : tensor<64xf32>
    %lb0 = arith.constant 0 : index
    %ub0 = arith.constant 2 : index
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c1 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r0#0, %r0#1, %r0#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// An op the kernel has no counterpart for is refused, not dropped.
// CHECK: error: 'attnc.exp' op cannot be lowered in a flash form: the kernel has no counterpart for it
func.func @extra_op(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %r:2 = scf.forall (%b, %h, %t) in (1, 2, 2) shared_outs(%o = %o0, %l = %l0) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
    %q0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    %qt = tensor.extract_slice %q[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
    %a0 = tensor.splat %zero : tensor<64x64xf32>
    %m0 = tensor.splat %ninf : tensor<64xf32>
    %s0 = tensor.splat %zero : tensor<64xf32>
    %e = attnc.exp %qt : tensor<64x64xbf16>
    %lb0 = arith.constant 0 : index
    %ub0 = arith.constant 2 : index
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c1 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r0#0, %r0#1, %r0#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}
