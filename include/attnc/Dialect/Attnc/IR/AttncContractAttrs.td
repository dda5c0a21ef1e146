//===- AttncContractAttrs.td - kernel launch contracts -----*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The launch contract of a generated kernel as typed attributes: its
// parameters in launch order, its grid and block rule, its dynamic shared
// memory and the rules on sizes a host must check before launching.
// --attnc-convert-to-gpu attaches one `#attnc.launch_contract` to each
// kernel's gpu.module; the no-S x S analysis reads it, and attnc-compile
// writes it as the kernel's manifest entry (docs/launch-contract.md).
// Included from AttncAttrs.td; the enums below are generated with the
// dialect's other enums from AttncOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCCONTRACTATTRS_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCCONTRACTATTRS_TD

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Attnc_TensorRole : I32EnumAttr<"TensorRole",
    "whether a kernel reads or writes a tensor parameter", [
      I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"output", 1>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

def Attnc_OOBFill : I32EnumAttr<"OOBFill",
    "what a TMA load returns for elements outside the tensor", [
      I32EnumAttrCase<"zero", 0>, I32EnumAttrCase<"nan", 1>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

def Attnc_FactorKind : I32EnumAttr<"FactorKind",
    "how one factor of a grid extent or a workspace size is computed", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"symbol", 1>,
      I32EnumAttrCase<"ceil_div", 2>, I32EnumAttrCase<"device", 3>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

def Attnc_DeviceValue : I32EnumAttr<"DeviceValue",
    "a property of the device a launch runs on", [
      I32EnumAttrCase<"num_sms", 0>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

def Attnc_ConstraintKind : I32EnumAttr<"ConstraintKind",
    "a rule on size symbols a host checks before launching", [
      I32EnumAttrCase<"divisible", 0>, I32EnumAttrCase<"equal", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"ratio", 4>, I32EnumAttrCase<"at_most", 5>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

def Attnc_SizeRuleKind : I32EnumAttr<"SizeRuleKind",
    "how a host chooses a size symbol that the caller picks", [
      I32EnumAttrCase<"kv_splits", 0>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Grid factors, constraints and size rules
//===----------------------------------------------------------------------===//

def Attnc_GridFactorAttr : Attnc_Attr<"GridFactor", "factor"> {
  let summary = "one factor of a grid extent or of a workspace's size";
  let description = [{
    An extent is the product of its factors. A factor is a positive
    constant (`64`), the value of a size symbol (`B`), a rounded-up
    quotient of a symbol (`ceil_div(Sq, 128)`), that quotient plus the
    value of another symbol (`ceil_div(T, 128) + B`: a ragged batch's
    query tiles, at most one partial tile per sequence) or a property of
    the device the launch runs on (`device(num_sms)`, for persistent
    kernels).

    Example: `#attnc.factor<ceil_div(Sq, 128)>`,
    `#attnc.factor<ceil_div(T, 128) + B>`
  }];
  let parameters = (ins "::attnc::FactorKind":$kind,
                        StringRefParameter<"symbol">:$symbol,
                        "int64_t":$value,
                        "::attnc::DeviceValue":$device,
                        StringRefParameter<"a symbol added to a ceil_div",
                                           "\"\"">:$plus);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static GridFactorAttr getConstant(::mlir::MLIRContext *ctx, int64_t v);
    static GridFactorAttr getSymbol(::mlir::MLIRContext *ctx,
                                    ::llvm::StringRef sym);
    static GridFactorAttr getCeilDiv(::mlir::MLIRContext *ctx,
                                     ::llvm::StringRef sym, int64_t divisor,
                                     ::llvm::StringRef plus = "");
    static GridFactorAttr getDevice(::mlir::MLIRContext *ctx,
                                    ::attnc::DeviceValue device);
    /// The bare form used inside a contract: `ceil_div(Sq, 128)`.
    void printBody(::mlir::AsmPrinter &printer) const;
    static GridFactorAttr parseBody(::mlir::AsmParser &parser);
  }];
}

def Attnc_ConstraintAttr : Attnc_Attr<"Constraint", "constraint"> {
  let summary = "a rule on size symbols a host checks before launching";
  let description = [{
    `divisible(lhs, rhs)`: lhs % rhs == 0 and rhs > 0 (grouped-query
    attention: H is a multiple of Hkv). `equal(lhs, rhs)`: lhs == rhs.
    `min(sym, value)`: sym >= value. `max(sym, value)`: sym <= value (the
    split count of split-KV partials, which keeps them linear in their
    rows). `ratio(lhs, rhs, value)`: lhs == value * rhs (GQA groups of a
    fixed size). `at_most(lhs, rhs, value)`: lhs <= value * rhs (a ragged
    batch of T rows in B sequences whose mean length is at most `value`:
    the sizes a kernel version runs for).

    Example: `#attnc.constraint<divisible(H, Hkv)>`
  }];
  let parameters = (ins "::attnc::ConstraintKind":$kind,
                        StringRefParameter<"symbol">:$lhs,
                        StringRefParameter<"symbol (divisible, equal)">:$rhs,
                        "int64_t":$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The bare form used inside a contract: `divisible(H, Hkv)`.
    void printBody(::mlir::AsmPrinter &printer) const;
    static ConstraintAttr parseBody(::mlir::AsmParser &parser);
  }];
}

def Attnc_SizeRuleAttr : Attnc_Attr<"SizeRule", "size_rule"> {
  let summary = "how a host chooses a size symbol that the caller picks";
  let description = [{
    Some size symbols are bound by tensors the caller allocates, at a size
    the caller chooses: any value the constraints allow is correct, and the
    rule names the one that runs fast. The host evaluates it from the other
    symbols of a call (bound by the tensors it already has) and the device,
    then allocates the tensors. A rule never constrains a call: a plan
    accepts any value the constraints allow.

    `kv_splits(sym, kv_tiles = [...], max = M, per_sm = P)` is the split
    count of split-KV attention (the rule of `attnc.kv_split_count`). With
    `ctas` the product of the kernel's grid extents with `sym` set to 1,
    `tiles` the product of the `kv_tiles` factors (the K/V tiles of one
    row) and `slots = num_sms * P`: the most splits of one wave,
    `n = min(M, floor(slots / ctas), tiles)`; 1 when `n <= 1` (or `ctas` is
    0); else the fewest splits with as many tiles each as `n` splits have,
    `ceil(tiles / ceil(tiles / n))`.

    The result is between 1 and `M` (1 to 128). `P` is at least 1 and
    `kv_tiles` has at least one factor, none of them `sym`.

    Example:

    ```mlir
    #attnc.size_rule<kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)],
                               max = 128, per_sm = 2)>
    ```
  }];
  let parameters = (ins "::attnc::SizeRuleKind":$kind,
                        StringRefParameter<"symbol">:$symbol,
                        ArrayRefParameter<"::attnc::GridFactorAttr",
                                          "K/V tiles of one row">:$kvTiles,
                        "int64_t":$maxValue,
                        "int64_t":$ctasPerSM);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The bare form used inside a contract:
    /// `kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128,
    /// per_sm = 2)`.
    void printBody(::mlir::AsmPrinter &printer) const;
    static SizeRuleAttr parseBody(::mlir::AsmParser &parser);
  }];
}

def Attnc_KernelVariantAttr : Attnc_Attr<"KernelVariant", "kernel_variant"> {
  let summary = "another kernel a host runs instead for some sizes";
  let description = [{
    A size variant of a kernel: another kernel of the same program that
    computes the same results from the same caller-supplied parameters with
    another configuration (tiles, overlap), and the sizes it runs for:
    every constraint of `when`
    (`#attnc.constraint`, written bare) holds. The compiler writes one for
    each non-default version of a kernel in versions (an `scf.if` on sizes,
    docs/attention.md); a host runs the first variant whose conditions the
    call's sizes meet, else the kernel itself (docs/abi.md, "Variants").
    `when` is not empty.

    Example: `#attnc.kernel_variant<@attn_backward_1_v0 when [min(Sq, 4096)]>`
  }];
  let parameters = (ins StringRefParameter<"kernel symbol">:$kernel,
                        ArrayRefParameter<"::attnc::ConstraintAttr",
                                          "sizes it runs for">:$when);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The bare form used inside a contract:
    /// `@attn_backward_1_v0 when [min(Sq, 4096)]`.
    void printBody(::mlir::AsmPrinter &printer) const;
    static KernelVariantAttr parseBody(::mlir::AsmParser &parser);
  }];
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

class Attnc_ParamAttr<string name, string attrMnemonic>
    : Attnc_Attr<name, attrMnemonic, [Attnc_KernelParamAttrInterface]> {
  let genVerifyDecl = 1;
}

def Attnc_TensorParamAttr : Attnc_ParamAttr<"TensorParam", "tensor_param"> {
  let summary = "a tensor the kernel reads or writes through a bare pointer";
  let description = [{
    Passed as a pointer to global memory. `shape` holds static extents and
    size symbols; every occurrence of a symbol binds the same value. The
    innermost dimension has stride 1, the pointer is aligned to `align`
    bytes and, with `row_align`, every outer stride in bytes of a dimension
    with more than one element is a multiple of `row_align` (the kernel
    moves rows with vector accesses).

    Example:

    ```mlir
    #attnc.tensor_param<"q", bf16, [B, H, Sq, 128], input, align = 16,
                        row_align = 16>
    ```
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        "::mlir::Type":$dtype,
                        ArrayRefParameter<"::mlir::Attribute",
                                          "extents and symbols">:$shape,
                        "::attnc::TensorRole":$role,
                        "int64_t":$align,
                        DefaultValuedParameter<"int64_t", "0">:$rowAlign);
  let assemblyFormat = [{
    `<` $name `,` $dtype `,` custom<ContractShape>($shape) `,` $role `,`
    `align` `=` $align (`,` `row_align` `=` $rowAlign^)? `>`
  }];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
  }];
}

def Attnc_SizeParamAttr : Attnc_ParamAttr<"SizeParam", "size_param"> {
  let summary = "the value of a size symbol";
  let description = [{
    The host binds the symbol from the tensor arguments' shapes and passes
    its value as an integer of type `dtype` (i64 or i32).

    Example: `#attnc.size_param<"Sq", i64>`
  }];
  let parameters = (ins StringRefParameter<"symbol">:$name,
                        "::mlir::Type":$dtype);
  let assemblyFormat = "`<` $name `,` $dtype `>`";
}

def Attnc_StrideParamAttr : Attnc_ParamAttr<"StrideParam", "stride_param"> {
  let summary = "the stride in elements of one dimension of a tensor";
  let description = [{
    Example: `#attnc.stride_param<"q.stride0", i64, tensor = "q", dim = 0>`
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        "::mlir::Type":$dtype,
                        StringRefParameter<"tensor parameter">:$tensor,
                        "int64_t":$dim);
  let assemblyFormat = [{
    `<` $name `,` $dtype `,` `tensor` `=` $tensor `,` `dim` `=` $dim `>`
  }];
}

def Attnc_ScalarParamAttr : Attnc_ParamAttr<"ScalarParam", "scalar_param"> {
  let summary = "a value the caller supplies (a dropout seed, a scale)";
  let description = [{
    Named after the source function's argument (`attnc.name`).

    Example: `#attnc.scalar_param<"seed", i64>`
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        "::mlir::Type":$dtype);
  let assemblyFormat = "`<` $name `,` $dtype `>`";
}

def Attnc_TensorMapParamAttr
    : Attnc_ParamAttr<"TensorMapParam", "tensormap_param"> {
  let summary = "a TMA descriptor of a tensor parameter, passed by value";
  let description = [{
    The 128-byte CUtensorMap the host encodes from the tensor argument
    `tensor` names (its pointer, shape and strides), or from the typed view
    of the workspace it names, with a box of `box`
    elements per dimension (innermost last, one entry per dimension of the
    tensor), `swizzle` bytes (0, 32, 64 or 128) and `oob_fill` for the
    elements outside the tensor. The caller supplies nothing for it. TMA
    stores through it write the tensor it maps.

    Example:

    ```mlir
    #attnc.tensormap_param<"q.map", tensor = "q", box = [1, 1, 64, 64],
                           swizzle = 128, oob_fill = zero>
    ```
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        StringRefParameter<"tensor parameter">:$tensor,
                        ArrayRefParameter<"int64_t", "box extents">:$box,
                        "int64_t":$swizzle,
                        "::attnc::OOBFill":$oobFill);
  let assemblyFormat = [{
    `<` $name `,` `tensor` `=` $tensor `,` `box` `=` `[` $box `]` `,`
    `swizzle` `=` $swizzle `,` `oob_fill` `=` $oobFill `>`
  }];
}

def Attnc_WorkspaceParamAttr
    : Attnc_ParamAttr<"WorkspaceParam", "workspace_param"> {
  let summary = "scratch global memory the caller allocates";
  let description = [{
    Passed like a tensor (a 16-byte aligned pointer) to at least the
    product of `bytes` bytes (factors as in a grid extent). With
    `zero_init` the host zeroes those bytes on the launch stream before the
    launch. With `view = <dtype> [shape]` the workspace is also a typed,
    contiguous (row-major) array of that shape (a host refuses a workspace
    smaller than its view): a tensormap parameter may then name the
    workspace, and the host encodes its descriptor from that view.

    Example:

    ```mlir
    #attnc.workspace_param<"partials", bytes = [device(num_sms), 4096],
                           zero_init>
    #attnc.workspace_param<"dq_accum", bytes = [B, H, Sq, 512], zero_init,
                           view = f32 [B, H, Sq, 128]>
    ```
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        ArrayRefParameter<"::attnc::GridFactorAttr",
                                          "byte rule">:$bytes,
                        "bool":$zeroInit,
                        OptionalParameter<"::mlir::Type",
                                          "the view's element type">:$viewType,
                        OptionalArrayRefParameter<"::mlir::Attribute",
                                          "the view's extents and symbols">:$viewShape);
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// The contract
//===----------------------------------------------------------------------===//

def Attnc_LaunchContractAttr
    : Attnc_Attr<"LaunchContract", "launch_contract"> {
  let summary = "everything a host needs to launch one kernel";
  let description = [{
    Attached as `attnc.launch_contract` to the gpu.module of each kernel
    `--attnc-convert-to-gpu` builds, and written by attnc-compile as the
    kernel's manifest entry.

    - `kernel`: the kernel function of the gpu.module (a `gpu.func` with
      `kernel` or an `llvm.func` with `nvvm.kernel`); it takes one argument
      per parameter, in order.
    - `kind`: `"attention"`, `"fusion"`, ...
    - `params`: the parameters in launch order, each written without the
      `#attnc.` prefix and the `_param` suffix: `tensor<...>`, `size<...>`,
      `stride<...>`, `scalar<...>`, `tensormap<...>`, `workspace<...>`.
    - `grid`: three extents, each a list of factors whose product it is.
    - `block`: three positive extents.
    - `shared_memory`: dynamic shared memory in bytes.
    - `constraints` (optional): rules on size symbols checked before launch.
    - `size_rules` (optional): how a host chooses the size symbols that the
      caller picks (`#attnc.size_rule`, written bare), one rule per symbol.
    - `attrs` (optional): what was compiled in (causal, scale, tiles);
      booleans, integers, floats and strings, informational only.
    - `fallback` (optional): another kernel of the same program, built from
      the same op with the same caller-supplied parameters (tensors,
      workspaces, scalars: names, types, shapes and roles) but weaker
      alignment rules; a host runs it on the tensors this kernel refuses
      and it accepts (TMA's 16-byte rules, for one).
    - `unsplit` (optional): on the partial kernel of a split-KV function
      (`--attnc-split-kv`), the kernel of the same module that computes the
      function's result in one launch, from the same inputs (without the
      partials) into the function's outputs; a host runs it instead of the
      partial kernel and the combine when this kernel's `splits` size rule
      gives one split, where the combine would only convert the partial.
    - `variants` (optional): size variants (`#attnc.kernel_variant`,
      written bare), other kernels of the same module with the kernel's
      caller-supplied parameters, each with the sizes it runs for; a host
      runs the first whose conditions hold, else this kernel.
    - `programmatic_launch` (optional keyword): the kernel waits for the
      grids before it on its stream (`griddepcontrol.wait`) before it
      touches global memory, so a host may launch it with programmatic
      stream serialization (CUDA's programmatic dependent launch): its
      blocks are scheduled while the previous kernel finishes, and wait
      there for its memory. sm_90 and later.

    The verifier checks that names are unique, that strides and tensor maps
    name a tensor parameter and a dimension it has, and that every size
    parameter and every symbol of the grid, of a workspace, of a
    constraint and of a size rule is bound by some tensor's shape.

    Example:

    ```mlir
    #attnc.launch_contract<kernel = @attn, kind = "attention",
      params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16>,
                tensor<"o", bf16, [B, H, Sq, 128], output, align = 16>,
                size<"B", i64>, size<"H", i64>, size<"Sq", i64>],
      grid = [[ceil_div(Sq, 128)], [H], [B]], block = [256, 1, 1],
      shared_memory = 0, constraints = [min(Sq, 1)],
      attrs = {causal = true}>
    ```
  }];
  let parameters = (ins StringRefParameter<"kernel symbol">:$kernel,
                        StringRefParameter<"kernel kind">:$kind,
                        ArrayRefParameter<"::mlir::Attribute",
                                          "parameters">:$params,
                        ArrayRefParameter<"::attnc::GridFactorAttr">:$gridX,
                        ArrayRefParameter<"::attnc::GridFactorAttr">:$gridY,
                        ArrayRefParameter<"::attnc::GridFactorAttr">:$gridZ,
                        ArrayRefParameter<"int64_t">:$block,
                        "int64_t":$sharedMemory,
                        ArrayRefParameter<"::attnc::ConstraintAttr">:
                            $constraints,
                        ArrayRefParameter<"::attnc::SizeRuleAttr">:
                            $sizeRules,
                        "::mlir::DictionaryAttr":$attrs,
                        StringRefParameter<"fallback kernel", "\"\"">:
                            $fallback,
                        StringRefParameter<"one-split kernel", "\"\"">:
                            $unsplit,
                        ArrayRefParameter<"::attnc::KernelVariantAttr">:
                            $variants,
                        DefaultValuedParameter<"bool", "false">:
                            $programmaticLaunch);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The factors of grid dimension `dim` (0: x, 1: y, 2: z).
    ::llvm::ArrayRef<GridFactorAttr> getGrid(unsigned dim) const;
    /// The parameter named `name`, or null.
    KernelParamAttrInterface lookupParam(::llvm::StringRef name) const;
    /// The tensor parameter named `name`, or null.
    TensorParamAttr lookupTensor(::llvm::StringRef name) const;
  }];
}

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCCONTRACTATTRS_TD
