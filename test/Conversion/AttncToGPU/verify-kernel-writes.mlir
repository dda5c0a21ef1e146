// --attnc-verify-no-global-scores: every way a kernel writes global memory
// is traced to a parameter of its launch contract, in both kernel forms
// (gpu.func with `kernel`, llvm.func with `nvvm.kernel`). Writes into an
// output tensor, a tensor map of an output or a workspace pass; writes into
// an input, or through a pointer the trace cannot attribute, are errors
// naming the op.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-verify-no-global-scores

// Plain stores and atomics into the output, through the memref descriptor
// the kernel builders wrap pointers in, views, GEPs, address-space casts,
// integer round trips, selects and loop-carried pointers: all pass.
gpu.module @stores_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @stores, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, tensor<"y", f32, [N], output, align = 16>, tensor<"z", f32, [N], output, align = 16>, size<"N", i64>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @stores(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>, %z: !llvm.ptr<1>, %n: i64) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i0 = llvm.mlir.constant(0 : i64) : i64
    %i1 = llvm.mlir.constant(1 : i64) : i64
    %i8 = llvm.mlir.constant(8 : i64) : i64
    %v = arith.constant 1.0 : f32
    %vec = arith.constant dense<1.0> : vector<4xf32>
    // The descriptor wrapGlobalPointer builds.
    %d0 = llvm.mlir.poison : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d1 = llvm.insertvalue %y, %d0[0] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d2 = llvm.insertvalue %y, %d1[1] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d3 = llvm.insertvalue %i0, %d2[2] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d4 = llvm.insertvalue %n, %d3[3, 0] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d5 = llvm.insertvalue %i1, %d4[4, 0] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %m = builtin.unrealized_conversion_cast %d5 : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)> to memref<?xf32, 1>
    memref.store %v, %m[%c0] : memref<?xf32, 1>
    vector.store %vec, %m[%c4] : memref<?xf32, 1>, vector<4xf32>
    %sub = memref.subview %m[4] [4] [1] : memref<?xf32, 1> to memref<4xf32, strided<[1], offset: 4>, 1>
    vector.transfer_write %vec, %sub[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: 4>, 1>
    %old = memref.atomic_rmw addf %v, %m[%c1] : (f32, memref<?xf32, 1>) -> f32
    %g = memref.generic_atomic_rmw %m[%c1] : memref<?xf32, 1> {
    ^bb0(%cur: f32):
      %s = arith.addf %cur, %v : f32
      memref.atomic_yield %s : f32
    }
    // Pointer arithmetic.
    %p = llvm.getelementptr %y[%i8] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %gen = llvm.addrspacecast %p : !llvm.ptr<1> to !llvm.ptr
    llvm.store %v, %gen : f32, !llvm.ptr
    %a = llvm.atomicrmw fadd %p, %v monotonic : !llvm.ptr<1>, f32
    %vi = llvm.mlir.constant(1 : i32) : i32
    %c = llvm.cmpxchg %p, %vi, %vi acq_rel monotonic : !llvm.ptr<1>, i32
    %int = llvm.ptrtoint %z : !llvm.ptr<1> to i64
    %off = llvm.add %int, %i8 : i64
    %back = llvm.inttoptr %off : i64 to !llvm.ptr<1>
    llvm.store %v, %back : f32, !llvm.ptr<1>
    // Either output, and a pointer carried through a loop.
    %t = arith.cmpi ult, %c0, %c1 : index
    %either = llvm.select %t, %y, %z : i1, !llvm.ptr<1>
    llvm.store %v, %either : f32, !llvm.ptr<1>
    %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %z) -> (!llvm.ptr<1>) {
      llvm.store %v, %q : f32, !llvm.ptr<1>
      %next = llvm.getelementptr %q[%i1] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
      scf.yield %next : !llvm.ptr<1>
    }
    // Shared memory is on chip.
    %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %sv = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %v, %sv[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// Atomics and a loop-carried pointer that reach an input.
gpu.module @atomics_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @atomics, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, tensor<"y", f32, [N], output, align = 16>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  llvm.func @atomics(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    %i = llvm.mlir.constant(1 : i32) : i32
    %one = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{'llvm.atomicrmw' op writes 'x', an input of the launch contract of kernel @atomics}}
    %a = llvm.atomicrmw fadd %x, %v monotonic : !llvm.ptr<1>, f32
    // expected-error @+1 {{'llvm.cmpxchg' op writes 'x', an input}}
    %c = llvm.cmpxchg %x, %i, %i acq_rel monotonic : !llvm.ptr<1>, i32
    llvm.br ^loop(%y : !llvm.ptr<1>)
  ^loop(%p: !llvm.ptr<1>):
    // expected-error @+1 {{'llvm.store' op writes 'x', an input}}
    llvm.store %v, %p : f32, !llvm.ptr<1>
    %n = llvm.getelementptr %p[%one] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %t = llvm.icmp "eq" %one, %one : i64
    llvm.cond_br %t, ^loop(%x : !llvm.ptr<1>), ^done
  ^done:
    llvm.return
  }
}

// -----

// memref atomics into an input.
gpu.module @memref_atomics_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @memref_atomics, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  gpu.func @memref_atomics(%x: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    %d0 = llvm.mlir.poison : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %d1 = llvm.insertvalue %x, %d0[1] : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>
    %m = builtin.unrealized_conversion_cast %d1 : !llvm.struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)> to memref<?xf32, 1>
    // expected-error @+1 {{'memref.atomic_rmw' op writes 'x', an input}}
    %old = memref.atomic_rmw addf %v, %m[%c0] : (f32, memref<?xf32, 1>) -> f32
    // expected-error @+1 {{'memref.generic_atomic_rmw' op writes 'x', an input}}
    %g = memref.generic_atomic_rmw %m[%c0] : memref<?xf32, 1> {
    ^bb0(%cur: f32):
      memref.atomic_yield %cur : f32
    }
    gpu.return
  }
}

// -----

// TMA: stores and reductions go through a tensor map to the tensor it
// maps; the tensor map of the output passes, that of an input does not.
gpu.module @tma_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @tma, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, tensor<"o", bf16, [S, 64], output, align = 16>, tensormap<"q.map", tensor = "q", box = [64, 64], swizzle = 128, oob_fill = zero>, tensormap<"o.map", tensor = "o", box = [64, 64], swizzle = 128, oob_fill = zero>], grid = [[ceil_div(S, 64)], [1], [1]], block = [128, 1, 1], shared_memory = 8192>} {
  llvm.func @tma(%q: !llvm.ptr<1>, %o: !llvm.ptr<1>, %qmap: !llvm.ptr, %omap: !llvm.ptr) attributes {nvvm.kernel} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %n = llvm.mlir.constant(1024 : i32) : i32
    %smem = llvm.mlir.addressof @tile : !llvm.ptr<3>
    nvvm.cp.async.bulk.tensor.global.shared.cta %omap, %smem, box[%c0, %c0] : !llvm.ptr, !llvm.ptr<3>
    // expected-error @+1 {{'nvvm.cp.async.bulk.tensor.global.shared.cta' op a TMA store writes 'q' through tensor map 'q.map', an input of the launch contract of kernel @tma}}
    nvvm.cp.async.bulk.tensor.global.shared.cta %qmap, %smem, box[%c0, %c0] : !llvm.ptr, !llvm.ptr<3>
    // expected-error @+1 {{'nvvm.cp.async.bulk.tensor.reduce' op a TMA reduction writes 'q' through tensor map 'q.map'}}
    nvvm.cp.async.bulk.tensor.reduce %qmap, %smem, box[%c0, %c0] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
    %ogen = llvm.addrspacecast %o : !llvm.ptr<1> to !llvm.ptr
    // expected-error @+1 {{'nvvm.cp.async.bulk.tensor.global.shared.cta' op a TMA store takes its tensor map from 'o', a tensor parameter, not a tensormap parameter}}
    nvvm.cp.async.bulk.tensor.global.shared.cta %ogen, %smem, box[%c0, %c0] : !llvm.ptr, !llvm.ptr<3>
    // Bulk copies to global memory write the address they are given.
    nvvm.cp.async.bulk.global.shared.cta %o, %smem, %n : !llvm.ptr<1>, !llvm.ptr<3>
    // expected-error @+1 {{'nvvm.cp.async.bulk.global.shared.cta' op a bulk copy writes 'q', an input}}
    nvvm.cp.async.bulk.global.shared.cta %q, %smem, %n : !llvm.ptr<1>, !llvm.ptr<3>
    %v = llvm.mlir.constant(0 : i8) : i8
    // expected-error @+1 {{'llvm.store' op writes into tensor map 'o.map' itself}}
    llvm.store %v, %omap : i8, !llvm.ptr
    llvm.return
  }
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4096 x i8>
}

// -----

// A TMA reduction through the tensor map of a workspace's view (the
// backward's dQ) lands in the workspace: accepted.
gpu.module @view_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @view, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, workspace<"acc", bytes = [S, 256], zero_init, view = f32 [S, 64]>, tensormap<"acc.map", tensor = "acc", box = [64, 32], swizzle = 128, oob_fill = zero>], grid = [[ceil_div(S, 64)], [1], [1]], block = [128, 1, 1], shared_memory = 8192>} {
  llvm.func @view(%q: !llvm.ptr<1>, %acc: !llvm.ptr<1>, %accmap: !llvm.ptr) attributes {nvvm.kernel} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %smem = llvm.mlir.addressof @staging : !llvm.ptr<3>
    nvvm.cp.async.bulk.tensor.reduce %accmap, %smem, box[%c0, %c0] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
    llvm.return
  }
  llvm.mlir.global internal @staging() {addr_space = 3 : i32} : !llvm.array<8192 x i8>
}

// -----

// Inline PTX: global writes are classified by mnemonic and their `$N`
// address is traced; anything else is no write.
gpu.module @asm_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @asm, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, tensor<"y", f32, [N], output, align = 16>, workspace<"w", bytes = [device(num_sms), 16]>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  llvm.func @asm(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>, %w: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    %i = llvm.mlir.constant(7 : i64) : i64
    // The attention kernel's register move, and other non-writes.
    %m = llvm.inline_asm has_side_effects "mov.b64 $0, $1;", "=l,l" %i : (i64) -> i64
    %e = llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %v : (f32) -> f32
    llvm.inline_asm has_side_effects "setmaxnreg.inc.sync.aligned.u32 240;", "" : () -> ()
    llvm.inline_asm has_side_effects "{ .reg .b32 r; st.shared.f32 [$0], $1; }", "r,f" %i, %v : (i64, f32) -> ()
    // Writes into the output and the workspace.
    llvm.inline_asm has_side_effects "st.global.f32 [$0], $1;", "l,f" %y, %v : (!llvm.ptr<1>, f32) -> ()
    llvm.inline_asm has_side_effects "@p red.global.add.f32 [$0+4], $1; // partial", "l,f" %w, %v : (!llvm.ptr<1>, f32) -> ()
    %old = llvm.inline_asm has_side_effects "atom.global.add.f32 $0, [$1], $2;", "=f,l,f" %y, %v : (!llvm.ptr<1>, f32) -> f32
    %yi = llvm.ptrtoint %y : !llvm.ptr<1> to i64
    llvm.inline_asm has_side_effects "multimem.st.relaxed.sys.global.f32 [$0], $1;", "l,f" %yi, %v : (i64, f32) -> ()
    // expected-error @+1 {{'llvm.inline_asm' op `st.f32` in its PTX writes 'x', an input}}
    llvm.inline_asm has_side_effects "st.f32 [$0], $1;", "l,f" %x, %v : (!llvm.ptr<1>, f32) -> ()
    // expected-error @+1 {{'llvm.inline_asm' op `cp.async.bulk.global.shared::cta.bulk_group` in its PTX writes 'x', an input}}
    llvm.inline_asm has_side_effects "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], 16;", "l,r" %x, %i : (!llvm.ptr<1>, i64) -> ()
    // expected-error @+1 {{'llvm.inline_asm' op `red.global.add.f32` in its PTX writes global memory the analysis cannot attribute to the launch contract of kernel @asm: its destination is not an operand of the asm}}
    llvm.inline_asm has_side_effects "{ .reg .b64 a; mov.b64 a, $0; red.global.add.f32 [a], $1; }", "l,f" %y, %v : (!llvm.ptr<1>, f32) -> ()
    llvm.return
  }
}

// -----

// Pointers the trace cannot attribute: loaded from memory, a module
// global in global memory, handed to an external function; and a device
// function that writes global memory.
gpu.module @untraced_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @untraced, kind = "test", params = [tensor<"ptrs", i64, [N], input, align = 16>, size<"N", i64>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  llvm.mlir.global internal @hidden() {addr_space = 1 : i32} : !llvm.array<1024 x f32>
  llvm.func @external(!llvm.ptr<1>)
  llvm.func @helper(%p: !llvm.ptr<1>) {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    // expected-error @+1 {{'llvm.store' op may write global memory in @helper, a device function: writes are only attributed inside kernels, to their launch contract}}
    llvm.store %v, %p : f32, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @untraced(%ptrs: !llvm.ptr<1>, %n: i64) attributes {nvvm.kernel} {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    // expected-note @+1 {{the trace stops here}}
    %p = llvm.load %ptrs : !llvm.ptr<1> -> !llvm.ptr<1>
    // expected-error @+1 {{'llvm.store' op writes global memory through a pointer that is no parameter of kernel @untraced: it comes from the result of 'llvm.load'}}
    llvm.store %v, %p : f32, !llvm.ptr<1>
    // expected-note @+1 {{the trace stops here}}
    %h = llvm.mlir.addressof @hidden : !llvm.ptr<1>
    // expected-error @+1 {{it comes from the module global @hidden, which no launch contract describes}}
    llvm.store %v, %h : f32, !llvm.ptr<1>
    // expected-error @+1 {{'llvm.call' op writes global memory the analysis cannot attribute to the launch contract of kernel @untraced: it passes global memory to a function without a body in this module}}
    llvm.call @external(%ptrs) : (!llvm.ptr<1>) -> ()
    llvm.call @helper(%ptrs) : (!llvm.ptr<1>) -> ()
    // expected-note @+1 {{the trace stops here}}
    %addr = llvm.inttoptr %n : i64 to !llvm.ptr<1>
    // expected-error @+1 {{it comes from an integer that is computed from no pointer}}
    llvm.store %v, %addr : f32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// A parameter that is no memory, and a workspace used as a tensor map.
gpu.module @not_memory_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @not_memory, kind = "test", params = [tensor<"x", f32, [N], input, align = 16>, size<"N", i64>, workspace<"w", bytes = [N, 4]>], grid = [[N], [1], [1]], block = [32, 1, 1], shared_memory = 0>} {
  llvm.func @not_memory(%x: !llvm.ptr<1>, %n: !llvm.ptr<1>, %w: !llvm.ptr) attributes {nvvm.kernel} {
    %v = llvm.mlir.constant(1.0 : f32) : f32
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %smem = llvm.mlir.addressof @tile : !llvm.ptr<3>
    // expected-error @+1 {{'llvm.store' op writes through 'N', a size parameter, which is no memory}}
    llvm.store %v, %n : f32, !llvm.ptr<1>
    // expected-error @+1 {{'nvvm.cp.async.bulk.tensor.global.shared.cta' op a TMA store takes its tensor map from 'w', a workspace}}
    nvvm.cp.async.bulk.tensor.global.shared.cta %w, %smem, box[%c0] : !llvm.ptr, !llvm.ptr<3>
    llvm.store %v, %w : f32, !llvm.ptr
    llvm.return
  }
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4096 x i8>
}

// -----

// More inline PTX: TMA through a tensor map operand, and instructions that
// only look like writes (shared-memory, prefetch, loads into shared memory).
gpu.module @asm_tma_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @asm_tma, kind = "test", params = [tensor<"q", bf16, [S, 64], input, align = 16>, tensor<"o", bf16, [S, 64], output, align = 16>, tensormap<"q.map", tensor = "q", box = [64, 64], swizzle = 128, oob_fill = zero>, tensormap<"o.map", tensor = "o", box = [64, 64], swizzle = 128, oob_fill = zero>], grid = [[ceil_div(S, 64)], [1], [1]], block = [128, 1, 1], shared_memory = 8192>} {
  llvm.func @asm_tma(%q: !llvm.ptr<1>, %o: !llvm.ptr<1>, %qmap: !llvm.ptr, %omap: !llvm.ptr) attributes {nvvm.kernel} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %smem = llvm.mlir.addressof @tile : !llvm.ptr<3>
    %v = llvm.mlir.constant(1.0 : f32) : f32
    llvm.inline_asm has_side_effects "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $1}], [$2];", "l,r,r" %omap, %c0, %smem : (!llvm.ptr, i32, !llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [$0, {$1, $1}], [$2];", "l,r,r" %omap, %c0, %smem : (!llvm.ptr, i32, !llvm.ptr<3>) -> ()
    // expected-error @+1 {{'llvm.inline_asm' op `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group` in its PTX writes 'q' through tensor map 'q.map', an input of the launch contract of kernel @asm_tma}}
    llvm.inline_asm has_side_effects "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $1}], [$2];", "l,r,r" %qmap, %c0, %smem : (!llvm.ptr, i32, !llvm.ptr<3>) -> ()
    // Reads of global memory and writes of shared memory are no global writes.
    llvm.inline_asm has_side_effects "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $2}], [$0];", "r,l,r" %smem, %qmap, %c0 : (!llvm.ptr<3>, !llvm.ptr, i32) -> ()
    llvm.inline_asm has_side_effects "cp.async.bulk.prefetch.L2.global [$0], 256;", "l" %q : (!llvm.ptr<1>) -> ()
    llvm.inline_asm has_side_effects "prefetch.tensormap [$0];", "l" %qmap : (!llvm.ptr) -> ()
    llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$0];", "r,r" %smem, %c0 : (!llvm.ptr<3>, i32) -> ()
    llvm.inline_asm has_side_effects "st.bulk.weak.shared::cta [$0], 256, 0;", "r" %smem : (!llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [$0], $1, [$0];", "r,r" %smem, %c0 : (!llvm.ptr<3>, i32) -> ()
    %r = llvm.inline_asm has_side_effects "multimem.ld_reduce.relaxed.sys.global.add.f32 $0, [$1];", "=f,l" %q : (!llvm.ptr<1>) -> f32
    %l = llvm.inline_asm "ld.global.nc.f32 $0, [$1]; // st.global in a comment", "=f,l" %q : (!llvm.ptr<1>) -> f32
    // A predicated store after a label, through a generic pointer; the
    // same store into shared memory is skipped by its traced origin.
    %ogen = llvm.addrspacecast %o : !llvm.ptr<1> to !llvm.ptr
    llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.u32 p, 1, 0; DONE: @!p st.f32 [$0], $1; }", "l,f" %ogen, %v : (!llvm.ptr, f32) -> ()
    %sgen = llvm.addrspacecast %smem : !llvm.ptr<3> to !llvm.ptr
    llvm.inline_asm has_side_effects "st.f32 [$0], $1;", "l,f" %sgen, %v : (!llvm.ptr, f32) -> ()
    // expected-error @+1 {{'llvm.inline_asm' op `tensormap.replace.tile.global_address.global.b1024.b64` in its PTX writes 'q', an input}}
    llvm.inline_asm has_side_effects "tensormap.replace.tile.global_address.global.b1024.b64 [$0], $1;", "l,l" %q, %q : (!llvm.ptr<1>, !llvm.ptr<1>) -> ()
    llvm.return
  }
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4096 x i8>
}
