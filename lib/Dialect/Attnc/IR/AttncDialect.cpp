//===- AttncDialect.cpp - attnc dialect registration ----------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Registers the attnc ops and holds the TableGen-generated dialect and enum
// definitions. Op verifiers live beside, split by op family.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace attnc;

#include "attnc/Dialect/Attnc/IR/AttncDialect.cpp.inc"
#include "attnc/Dialect/Attnc/IR/AttncEnums.cpp.inc"

void AttncDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "attnc/Dialect/Attnc/IR/AttncOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncOps.cpp.inc"

LogicalResult attnc::verifyTensorSizes(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned index) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    int64_t elements = 1;
    for (int64_t extent : tensor.getShape()) {
      if (ShapedType::isDynamic(extent))
        continue;
      if (llvm::MulOverflow(elements, extent, elements) ||
          elements > kMaxTensorElements)
        return op->emitOpError()
               << what << " #" << index << " of type " << type << " has more "
               << "than 2^56 elements; attnc's size arithmetic stays inside "
                  "64 bits";
    }
    return success();
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}
