//===- AttncOps.td - attnc graph and fused ops -------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Layer 1 (graph) ops, then the fused ops that the passes of layers 2 and 3
// produce. Op families share TableGen classes; rules that relate operands
// (broadcasting, matmul contraction, attention heads) are C++ verifiers in
// lib/Dialect/Attnc/IR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_TD

include "attnc/Dialect/Attnc/IR/AttncDialect.td"
include "attnc/Dialect/Attnc/IR/AttncAttrs.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ParallelCombiningOpInterface.td"

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

def Attnc_FloatTensor : RankedTensorOf<[BF16, F16, F32, F64]>;
def Attnc_MaskTensor : RankedTensorOf<[I1]>;
def Attnc_IndexTensor : RankedTensorOf<[I64]>;
/// Floats, or i64 indices (an iota shifted by an offset in a mask).
def Attnc_NumericTensor : RankedTensorOf<[BF16, F16, F32, F64, I64]>;
def Attnc_AnyTensor : RankedTensorOf<[BF16, F16, F32, F64, I1, I64]>;

def Attnc_CmpPredicate : I32EnumAttr<"CmpPredicate",
    "comparison predicate of attnc.cmp", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::attnc";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// Every attnc op. Ops without regions have no side effects: dropout is a
/// pure function of its seed and offset.
/// No tensor of an attnc op is so large that its element count, byte size
/// or the arithmetic of a later layer overflows 64 bits.
def Attnc_TensorSizesFit : NativeOpTrait<"TensorSizesFit"> {
  let cppNamespace = "::attnc";
}

class Attnc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attnc_Dialect, mnemonic, !listconcat(traits, [Attnc_TensorSizesFit])>;
class Attnc_PureOp<string mnemonic, list<Trait> traits = []>
    : Attnc_Op<mnemonic, !listconcat([Pure], traits)>;

/// Elementwise binary ops with NumPy broadcasting, on floats unless
/// `tensorType` says otherwise.
class Attnc_BinaryOp<string mnemonic, string math, string fn,
                     TypeConstraint tensorType = Attnc_FloatTensor,
                     string typeNote = "">
    : Attnc_PureOp<mnemonic> {
  let summary = "elementwise " # fn # " with broadcasting";
  let description = [{
    Computes `result[i] = }] # math # [{` elementwise after broadcasting
    `lhs` and `rhs` to the result shape (NumPy rules, trailing dimensions
    aligned, static 1 stretches). Element types of both operands and the
    result are equal.}] # typeNote # [{

    Example:

    ```mlir
    %r = attnc.}] # mnemonic # [{ %a, %b : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

/// Elementwise unary ops on floats.
class Attnc_UnaryOp<string mnemonic, string math, string fn>
    : Attnc_PureOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # fn;
  let description = [{
    Computes `result[i] = }] # math # [{` elementwise. Operand and result
    have the same type.

    Example:

    ```mlir
    %r = attnc.}] # mnemonic # [{ %x : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Reductions over the last dimension that keep it with extent 1.
class Attnc_RowReductionOp<string mnemonic, string math, string fn>
    : Attnc_PureOp<mnemonic> {
  let summary = "row " # fn # " over the last dimension";
  let description = [{
    Reduces the last dimension: `result[..., 0] = }] # math # [{`. The
    reduced dimension is kept with extent 1 so the result broadcasts back
    against the input.

    Example:

    ```mlir
    %r = attnc.}] # mnemonic # [{ %s : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Index arithmetic for masks (`rows + (Skv - Sq) >= cols`, a window
/// `rows - cols < 1024`, chunks `rows / 512 == cols / 512`, an ALiBi
/// distance `abs(rows - cols)`): the arithmetic ops also take i64 tensors.
defvar kIndexArithmeticNote = [{ Besides floats, it takes i64 index
    tensors (iotas and what is computed from them), for index arithmetic in
    masks and score modifiers such as `rows + (Skv - Sq) >= cols`; i64
    results wrap around on overflow as two's-complement integers do.}];
def Attnc_AddOp : Attnc_BinaryOp<"add", "lhs[i] + rhs[i]", "addition",
                                 Attnc_NumericTensor, kIndexArithmeticNote>;
def Attnc_SubOp : Attnc_BinaryOp<"sub", "lhs[i] - rhs[i]", "subtraction",
                                 Attnc_NumericTensor, kIndexArithmeticNote>;
def Attnc_MulOp : Attnc_BinaryOp<"mul", "lhs[i] * rhs[i]", "multiplication",
                                 Attnc_NumericTensor, kIndexArithmeticNote>;
def Attnc_DivOp : Attnc_BinaryOp<"div", "lhs[i] / rhs[i]", "division",
                                 Attnc_NumericTensor, kIndexArithmeticNote # [{
    On i64 it is floor division (Python's and PyTorch's `//`: the quotient
    rounded towards negative infinity), so that `i / c` numbers the chunks
    of c indices; a zero divisor is an error where it is a constant.}]>;
def Attnc_MaxOp : Attnc_BinaryOp<"max", "max(lhs[i], rhs[i])", "maximum",
                                 Attnc_NumericTensor, kIndexArithmeticNote>;
def Attnc_MinOp : Attnc_BinaryOp<"min", "min(lhs[i], rhs[i])", "minimum",
                                 Attnc_NumericTensor, kIndexArithmeticNote>;
def Attnc_AndOp : Attnc_BinaryOp<"and", "lhs[i] and rhs[i]", "conjunction",
                                 Attnc_MaskTensor, [{ Both operands are i1
    masks: the keys two masks both keep.}]>;
def Attnc_OrOp : Attnc_BinaryOp<"or", "lhs[i] or rhs[i]", "disjunction",
                                Attnc_MaskTensor, [{ Both operands are i1
    masks: the keys either mask keeps.}]>;

def Attnc_AbsOp : Attnc_PureOp<"abs", [SameOperandsAndResultType]> {
  let summary = "elementwise absolute value";
  let description = [{
    Computes `result[i] = |input[i]|` on floats or i64 index tensors (an
    ALiBi distance `|i - j|`). Operand and result have the same type.

    Example:

    ```mlir
    %d = attnc.abs %diff : tensor<?x?x?x?xi64>
    ```
  }];
  let arguments = (ins Attnc_NumericTensor:$input);
  let results = (outs Attnc_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attnc_NotOp : Attnc_PureOp<"not", [SameOperandsAndResultType]> {
  let summary = "elementwise negation of a mask";
  let description = [{
    Computes `result[i] = !input[i]` on an i1 mask: the keys it drops.

    Example:

    ```mlir
    %drop = attnc.not %keep : tensor<?x?x?x?xi1>
    ```
  }];
  let arguments = (ins Attnc_MaskTensor:$input);
  let results = (outs Attnc_MaskTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attnc_ExpOp : Attnc_UnaryOp<"exp", "e^input[i]", "exponential">;
def Attnc_LogOp : Attnc_UnaryOp<"log", "ln(input[i])", "natural logarithm">;
def Attnc_NegOp : Attnc_UnaryOp<"neg", "-input[i]", "negation">;
def Attnc_TanhOp : Attnc_UnaryOp<"tanh", "tanh(input[i])", "hyperbolic tangent">;
def Attnc_RsqrtOp : Attnc_UnaryOp<"rsqrt", "1 / sqrt(input[i])", "reciprocal square root">;

def Attnc_CastOp : Attnc_PureOp<"cast"> {
  let summary = "elementwise conversion to a float type";
  let description = [{
    Converts each element to the result's element type, rounding to nearest
    even when narrowing: `result[i] = (T)input[i]`. The input is a float
    tensor or an i64 index tensor (a distance `i - j` that a score modifier
    such as ALiBi multiplies by a slope), converted as a signed integer.
    Shapes are equal.

    Example:

    ```mlir
    %f = attnc.cast %x : tensor<?x128xbf16> to tensor<?x128xf32>
    %d = attnc.cast %dist : tensor<1x1x?x?xi64> to tensor<1x1x?x?xf32>
    ```
  }];
  let arguments = (ins Attnc_NumericTensor:$input);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}


def Attnc_IotaOp : Attnc_PureOp<"iota"> {
  let summary = "indices along one dimension, shaped like another tensor";
  let description = [{
    `result[i_0, ..., i_n] = i_dimension`, with the shape of `like` (only
    its shape is used). Comparing two iotas builds masks such as the causal
    one.

    Example:

    ```mlir
    %rows = attnc.iota %s {dimension = 2} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
    ```
  }];
  let arguments = (ins Attnc_AnyTensor:$like,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension);
  let results = (outs Attnc_IndexTensor:$result);
  let assemblyFormat = "$like attr-dict `:` type($like) `->` type($result)";
  let hasVerifier = 1;
}

def Attnc_CmpOp : Attnc_PureOp<"cmp"> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    `result[i] = lhs[i] <predicate> rhs[i]` after broadcasting, an `i1`
    tensor. Operands have equal element types (`i64` indices or floats).

    Example (the causal mask: key column <= query row):

    ```mlir
    %keep = attnc.cmp ge, %rows, %cols : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
    ```
  }];
  let arguments = (ins Attnc_CmpPredicate:$predicate, Attnc_AnyTensor:$lhs,
                       Attnc_AnyTensor:$rhs);
  let results = (outs Attnc_MaskTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_SelectOp : Attnc_PureOp<"select"> {
  let summary = "elementwise choice by a mask, with broadcasting";
  let description = [{
    `result[i] = condition[i] ? true_value[i] : false_value[i]` after
    broadcasting all three operands.

    Example:

    ```mlir
    %m = attnc.select %keep, %s, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins Attnc_MaskTensor:$condition,
                       Attnc_FloatTensor:$true_value,
                       Attnc_FloatTensor:$false_value);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:` type($condition)
    `,` type($true_value) `,` type($false_value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_DropoutOp : Attnc_PureOp<"dropout",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "counter-based (Philox) dropout";
  let description = [{
    `result[r, j] = keep(r, j) ? input[r, j] / (1 - probability) : 0`
    where `keep(r, j) = u(r, j) >= probability` and `u = b / 2^16` is a
    uniform 16-bit draw. Rows `r` are the row-major index over every
    dimension but the last (of extent `n`), `j` the position in the last.
    Philox-4x32-10 with key `seed` and counter
    `offset + r * ceil(n / 8) + floor(j / 8)` gives four 32-bit words, and
    element (r, j) takes the low (`j` even) or high (`j` odd) half of word
    `(j mod 8) / 2`. When `n` is a multiple of 8 the counter is
    `offset + floor(i / 8)` for the row-major linear index `i`. The same
    seed and offset always give the same mask, on any device and any
    tiling (a fused attention draws its probabilities' mask the same way),
    so a backward pass can regenerate it instead of storing it; a step
    advances `offset` by `rows * ceil(n / 8)`.

    Example:

    ```mlir
    %d = attnc.dropout %x, %seed, %offset {probability = 1.000000e-01 : f64}
        : tensor<8x4096x4096xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input, I64:$seed, I64:$offset,
                       F64Attr:$probability);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $seed `,` $offset attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

def Attnc_ReduceMaxOp : Attnc_RowReductionOp<"reduce_max", "max_j input[..., j]", "maximum">;
def Attnc_ReduceSumOp : Attnc_RowReductionOp<"reduce_sum", "sum_j input[..., j]", "sum">;

def Attnc_SoftmaxOp : Attnc_PureOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax over the last dimension";
  let description = [{
    `result[..., j] = exp(x[..., j] - m) / sum_k exp(x[..., k] - m)` with
    `m = max_k x[..., k]` (the max subtraction keeps exp in range; it does
    not change the value).

    Example:

    ```mlir
    %p = attnc.softmax %s : tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attnc_LayerNormOp : Attnc_PureOp<"layer_norm"> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    With `mu = mean_j x[..., j]` and `var = mean_j (x[..., j] - mu)^2`
    (biased), `result[..., j] = (x[..., j] - mu) * rsqrt(var + epsilon) *
    gamma[j] + beta[j]`. `gamma` and `beta` are rank 1 with the extent of
    the last dimension. Statistics are computed in f32.

    Example:

    ```mlir
    %y = attnc.layer_norm %x, %gamma, %beta {epsilon = 1.000000e-05 : f64}
        : tensor<8x4096x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<8x4096x4096xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input, Attnc_FloatTensor:$gamma,
                       Attnc_FloatTensor:$beta, F64Attr:$epsilon);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma)
    `,` type($beta) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_RmsNormOp : Attnc_PureOp<"rms_norm"> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `result[..., j] = x[..., j] * rsqrt(mean_k x[..., k]^2 + epsilon) *
    gamma[j]`, statistics in f32; `gamma` is rank 1 with the extent of the
    last dimension.

    Example:

    ```mlir
    %y = attnc.rms_norm %x, %gamma {epsilon = 1.000000e-06 : f64}
        : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input, Attnc_FloatTensor:$gamma,
                       F64Attr:$epsilon);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` type($input) `,` type($gamma) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matmul and head broadcasting
//===----------------------------------------------------------------------===//

def Attnc_MatmulOp : Attnc_PureOp<"matmul"> {
  let summary = "batched matrix product with transpose flags";
  let description = [{
    For operands of equal rank r >= 2 whose leading r-2 (batch) dimensions
    are equal: `result[b, m, n] = sum_k A[b, m, k] * B[b, k, n]`, where
    `A = transpose_a ? lhs^T : lhs` and `B = transpose_b ? rhs^T : rhs`
    transpose the last two dimensions. Products are accumulated in f32;
    the result element type is the operands' or f32.

    Example (attention scores, K used transposed):

    ```mlir
    %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$lhs, Attnc_FloatTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attnc_RepeatInterleaveOp : Attnc_PureOp<"repeat_interleave"> {
  let summary = "repeat each slice along a dimension (K/V heads for GQA)";
  let description = [{
    `result[..., i, ...] = input[..., i / repeats, ...]` along `dimension`,
    whose extent grows `repeats` times. Grouped-query attention broadcasts
    each K/V head to `repeats` query heads this way (torch's
    `repeat_interleave`); fused attention reads the shared head instead of
    materializing the copies.

    Example:

    ```mlir
    %k8 = attnc.repeat_interleave %k {dimension = 1, repeats = 4}
        : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
    ```
  }];
  let arguments = (ins Attnc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension,
                       ConfinedAttr<I64Attr, [IntPositive]>:$repeats);
  let results = (outs Attnc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

include "attnc/Dialect/Attnc/IR/AttncFusedOps.td"

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCOPS_TD
