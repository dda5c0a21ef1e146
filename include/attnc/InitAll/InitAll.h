//===- InitAll.h - registration shared by the attnc tools -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The dialects, interfaces, translations and passes every attnc tool needs.
// Kept in one translation unit: the upstream headers involved are the
// slowest to compile in the project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INITALL_INITALL_H
#define ATTNC_INITALL_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace attnc {
/// attnc plus every upstream dialect, interface and translation the lowering
/// to NVVM, PTX and cubins needs.
void registerAllDialects(mlir::DialectRegistry &registry);
/// attnc passes, the pipeline and the upstream passes it uses.
void registerAllPasses();
} // namespace attnc

#endif // ATTNC_INITALL_INITALL_H
