//===- DimIndices.cpp - dimension queries that read past a shape ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/DimIndices.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"

using namespace mlir;

LogicalResult attnc::checkDimIndices(Operation *root) {
  bool failed = false;
  root->walk([&](ShapedDimOpInterface dim) {
    auto type = dyn_cast<ShapedType>(dim.getShapedValue().getType());
    std::optional<int64_t> index = getConstantIntValue(dim.getDimension());
    if (!type || !type.hasRank() || !index)
      return;
    if (*index < 0 || *index >= type.getRank()) {
      dim->emitOpError() << "asks for dimension " << *index << " of a rank-"
                         << type.getRank()
                         << " value; attnc refuses a query past the shape "
                            "(undefined at run time)";
      failed = true;
    }
  });
  return failure(failed);
}
