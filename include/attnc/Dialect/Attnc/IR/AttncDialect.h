//===- AttncDialect.h - The attnc graph dialect -----------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_H
#define ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "attnc/Dialect/Attnc/IR/AttncDialect.h.inc"

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCDIALECT_H
