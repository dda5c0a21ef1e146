//===- Passes.h - attnc passes ----------------------------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_H
#define ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_H

#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace attnc {
#define GEN_PASS_DECL
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_TRANSFORMS_PASSES_H
