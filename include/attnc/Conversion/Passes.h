//===- Passes.h - attnc conversion passes -----------------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_PASSES_H
#define ATTNC_CONVERSION_PASSES_H

#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace attnc {
#define GEN_PASS_DECL
#include "attnc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

#endif // ATTNC_CONVERSION_PASSES_H
