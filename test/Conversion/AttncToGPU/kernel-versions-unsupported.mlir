// A kernel in versions that a host could not choose among, or whose
// versions a host could not call alike, is refused with the rule it breaks.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax --attnc-convert-to-gpu

// The condition reads an index argument: a host evaluates conditions only
// on the kernel's size symbols.
func.func @not_a_size(%q: tensor<?x4x?x64xbf16>, %n: index) -> tensor<?x4x?x64xbf16> {
  %c64 = arith.constant 64 : index
  %small = arith.cmpi slt, %n, %c64 : index
  // expected-error @+1 {{'scf.if' op holds kernels in versions, but its condition is not a conjunction (arith.andi) of comparisons (arith.cmpi sge, sgt, sle, slt or eq) of a size (tensor.dim with a constant index) with a constant, or of a size at most (sle) a constant times a size: a host cannot evaluate it}}
  %o = scf.if %small -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// A size at least a constant times a size: a manifest says only at most
// (at_most), so a host could not evaluate it.
func.func @at_least_per(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %limit = arith.muli %b, %c64 : index
  %long = arith.cmpi sge, %sq, %limit : index
  // expected-error @+1 {{'scf.if' op holds kernels in versions, but its condition is not a conjunction (arith.andi) of comparisons (arith.cmpi sge, sgt, sle, slt or eq) of a size (tensor.dim with a constant index) with a constant, or of a size at most (sle) a constant times a size: a host cannot evaluate it}}
  %o = scf.if %long -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// Two kernels in one region: a version is one kernel.
func.func @two_kernels(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %small = arith.cmpi slt, %sq, %c64 : index
  // expected-error @+1 {{'scf.if' op holds kernels in versions, but its then region has 2 kernels; each version is exactly one kernel (the else region's may be another versioned kernel)}}
  %o = scf.if %small -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    %b = attnc.attention %a, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %b : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// A version that yields something else than its kernel's results.
func.func @yields_other(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %small = arith.cmpi slt, %sq, %c64 : index
  // expected-error @+1 {{'scf.if' op holds kernels in versions, but its else region yields a value that is not a result of its kernel; every version computes the op's results and nothing else}}
  %o = scf.if %small -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %q : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// A condition on the head dimension, which is no size symbol of the kernel.
func.func @head_dim(%q: tensor<?x4x?x?xbf16>, %k: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %d = tensor.dim %q, %c3 : tensor<?x4x?x?xbf16>
  %wide = arith.cmpi sge, %d, %c64 : index
  // expected-error @+1 {{'scf.if' op runs version 'head_dim_v0' by dim 3 of a tensor that is not the Q, K or V of the kernel (or by the head dimension); a host evaluates a version's conditions on the kernel's size symbols}}
  %o = scf.if %wide -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %k, %k, %k {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %k, %k, %k {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// Versions taking other arguments (a run-time scale in one only): a host
// calls whichever runs with one set of arguments.
func.func @other_arguments(%q: tensor<?x4x?x64xbf16>, %s: f32) -> tensor<?x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %small = arith.cmpi slt, %sq, %c64 : index
  // expected-error @+1 {{'scf.if' op holds kernel 'other_arguments' in versions, but version 'other_arguments_v0' takes other arguments than the default; every version takes the same tensors, workspaces and scalars}}
  %o = scf.if %small -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %q, %q runtime_scale(%s) {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}

// -----

// A version that has no kernel of the GPU lowering.
func.func @matmul_version(%q: tensor<?x4x?x64xbf16>, %x: tensor<4x64x64xbf16>) -> tensor<4x64x64xbf16> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %small = arith.cmpi slt, %sq, %c64 : index
  %o = scf.if %small -> tensor<4x64x64xbf16> {
    // expected-error @+1 {{'attnc.matmul' op is a version of kernel 'matmul_version', but only flash forms and attnc.fusion have kernels}}
    %a = attnc.matmul %x, %x : tensor<4x64x64xbf16>, tensor<4x64x64xbf16> -> tensor<4x64x64xbf16>
    scf.yield %a : tensor<4x64x64xbf16>
  } else {
    %a = attnc.matmul %x, %x : tensor<4x64x64xbf16>, tensor<4x64x64xbf16> -> tensor<4x64x64xbf16>
    scf.yield %a : tensor<4x64x64xbf16>
  }
  return %o : tensor<4x64x64xbf16>
}

// -----

// The variant's name is a kernel of a function before it.
func.func @taken_v0(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %a : tensor<?x4x?x64xbf16>
}
func.func @taken(%q: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %sq = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %small = arith.cmpi slt, %sq, %c64 : index
  %o = scf.if %small -> tensor<?x4x?x64xbf16> {
    // expected-error @+1 {{would be kernel 'taken_v0', a name another kernel of this module has or that is not a C identifier of at most 200 characters; rename the function}}
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}
