//===- AttncDialect.td - The attnc graph dialect -----------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_TD

include "mlir/IR/OpBase.td"

def Attnc_Dialect : Dialect {
  let name = "attnc";
  let cppNamespace = "::attnc";
  let summary = "Tensor graphs of attention and elementwise chains";
  let description = [{
    The `attnc` dialect is the input and middle level of the attnc compiler.
    Its ops work on builtin ranked tensors and describe attention the way
    people write it (matmul, scale, mask, softmax, matmul) and chains of
    elementwise ops and row reductions (bias, dropout, LayerNorm).

    Head dimensions and element types are static. Batch, head and sequence
    dimensions may be dynamic (`?`) so that one compiled kernel serves every
    length.

    Broadcasting follows NumPy: shapes are aligned on their trailing
    dimension; a dimension of static size 1 stretches to the other operand's
    size. Dynamic dimensions are never broadcast: a `?` paired with a static
    extent other than 1 is assumed equal to it at run time.

    Row reductions, `softmax`, `layer_norm` and `rms_norm` work on the last
    dimension.

    The dialect also holds the ops the fusion passes produce: `attention`
    (one fused attention), `online_attention` with
    `online_attention_finalize` (its flash form, one K/V tile step at a time)
    and `fusion` (a region that becomes one kernel).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::scf::SCFDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_TD
