//===- AttncAttrs.h - attnc attributes --------------------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H
#define ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

// The enums of every attnc .td file are generated once, from AttncOps.td.
#include "attnc/Dialect/Attnc/IR/AttncEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h.inc"

namespace attnc {
/// The name under which the flash form's `scf.forall` carries its
/// FlashConfigAttr.
inline constexpr llvm::StringLiteral kFlashConfigAttrName =
    "attnc.flash_config";
} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H
