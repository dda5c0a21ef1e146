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
