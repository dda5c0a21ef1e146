//===- AttncAttrs.cpp - attnc attributes ----------------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Registration, verifiers and the dialect's check of the discardable
// attributes it names (`attnc.flash_config` on the flash form's loop).
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncAttrs.cpp.inc"

void AttncDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attnc/Dialect/Attnc/IR/AttncAttrs.cpp.inc"
      >();
}

LogicalResult
FlashConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t blockQ, int64_t blockKV, int64_t warps,
                        int64_t stages, TileStrategy strategy) {
  if (blockQ <= 0 || blockKV <= 0)
    return emitError() << "block_q and block_kv must be positive, got "
                       << blockQ << " and " << blockKV;
  if (warps <= 0 || blockQ % warps != 0)
    return emitError() << "warps (" << warps
                       << ") must be positive and divide block_q (" << blockQ
                       << ")";
  if (stages < 1)
    return emitError() << "stages must be at least 1, got " << stages;
  return success();
}

LogicalResult AttncDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kFlashConfigAttrName) {
    if (!isa<FlashConfigAttr>(attr.getValue()))
      return op->emitError() << "'" << kFlashConfigAttrName
                             << "' must be a #attnc.flash_config, got "
                             << attr.getValue();
    if (!isa<scf::ForallOp>(op))
      return op->emitError() << "'" << kFlashConfigAttrName
                             << "' belongs on the scf.forall of a flash form";
    return success();
  }
  return success();
}
