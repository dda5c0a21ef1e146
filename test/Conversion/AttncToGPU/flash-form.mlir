// The back-end lowers the flash form it is given: these small hand-written
// forms (Q, K, V of 1 x 2 x 128 x 64, 64-row query tiles) show that the
// kernel's grid, loops, tiles and masks are the IR's.
// RUN: attnc-opt %s -split-input-file --attnc-convert-to-gpu | FileCheck %s

// One unmasked K/V loop over two full 64-row tiles: the forall's (1, 2, 2)
// becomes the grid (x = query tiles), the loop is the kernel's, and no score
// is masked. Static shapes: no size parameters, only the strides.
// CHECK-LABEL: gpu.module @full_module
// CHECK-SAME: grid = {{\[\[}}2], [2], [1]]
// CHECK: gpu.func @full(%{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{[^:]+}}: i64,
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.view {{.+}} to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: gpu.block_id  x
// CHECK-DAG: gpu.block_id  y
// CHECK-DAG: gpu.block_id  z
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C2:.+]] step
// CHECK: nvvm.mma.sync
// CHECK-NOT: arith.cmpi ule
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @full(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
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
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// The causal form: tiles [0, t) unmasked, tile t (the diagonal) with the
// mask region's j <= i, tested per row: each row's last key relative to
// the thread's first column, one 32-bit comparison per score
// (mask-by-interval.mlir). The launch order is the form's (query tile t =
// block x here): the back-end adds no reordering of its own.
// CHECK-LABEL: gpu.func @causal
// CHECK-NOT: gpu.grid_dim
// CHECK: scf.for
// CHECK-NOT: arith.cmpi sle, %c0_i32
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK-NOT: arith.cmpi ule
// CHECK: arith.cmpi sle, %c0_i32{{.*}} : i32
// CHECK: arith.select
// CHECK-NOT: arith.cmpi ule
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @causal(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
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
    %ub0 = affine.apply affine_map<(d0) -> (d0)>(%t)
    %r0:3 = scf.for %j = %lb0 to %ub0 step %c1 iter_args(%a = %a0, %m = %m0, %s = %s0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %lb1 = affine.apply affine_map<(d0) -> (d0)>(%t)
    %ub1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)
    %r1:3 = scf.for %j = %lb1 to %ub1 step %c1 iter_args(%a = %r0#0, %m = %r0#1, %s = %r0#2) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
      %k0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%j)
      %kt = tensor.extract_slice %k[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %vt = tensor.extract_slice %v[%b, %h, %k0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x128x64xbf16> to tensor<64x64xbf16>
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
          mask {
          ^bb0(%bi: index, %hi: index, %i: index, %jj: index):
            %keep = arith.cmpi ule, %jj, %i : index
            attnc.yield %keep : i1
          }
      scf.yield %na, %nm, %ns : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
    }
    %out, %lse = attnc.online_attention_finalize %r1#0, %r1#1, %r1#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xbf16>, tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %o[%b, %h, %q0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xbf16> into tensor<1x2x128x64xbf16>
      tensor.parallel_insert_slice %lse into %l[%b, %h, %q0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<1x2x128xf32>
    }
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// The same form with its masked loop deleted is a different program, and
// the kernel follows: one loop, no mask.
// CHECK-LABEL: gpu.func @causal_without_masked_loop
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK-NOT: arith.cmpi ule
// CHECK: gpu.return
func.func @causal_without_masked_loop(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
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
    %ub0 = affine.apply affine_map<(d0) -> (d0)>(%t)
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

// -----

// 32-row K/V slices (and a config that says so): the kernel's K/V tiles
// are 32 rows, four of them.
// CHECK-LABEL: gpu.module @kv32_module
// CHECK-SAME: block_kv = 32 : i64
// CHECK: memref.view {{.+}} to memref<2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C4]] step
func.func @kv32(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
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
  } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return %r#0 : tensor<1x2x128x64xbf16>
}

// -----

// A score modifier (tanh soft-capping) is evaluated per score, after the
// scale; the runtime scale is a kernel parameter (f32, after the strides).
// CHECK-LABEL: gpu.module @softcap_module
// CHECK-SAME: scalar<"scale", f32>
// CHECK: gpu.func @softcap({{.+}}, %[[S:[^:]+]]: f32)
// CHECK: arith.mulf %{{.+}}, %[[S]] : f32
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: arith.mulf
// CHECK: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>}
func.func @softcap(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %rs: f32) -> tensor<1x2x128x64xbf16> {
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
      %na, %nm, %ns = attnc.online_attention %qt, %kt, %vt, %a, %m, %s at [%b, %h, %q0, %k0] runtime_scale(%rs) {scale = 0.125 : f64}
          : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
          score {
          ^bb0(%x: f32, %bi: index, %hi: index, %i: index, %jj: index):
            %cap = arith.constant 30.0 : f32
            %d = arith.divf %x, %cap : f32
            %th = math.tanh %d : f32
            %y = arith.mulf %th, %cap : f32
            attnc.yield %y : f32
          }
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
