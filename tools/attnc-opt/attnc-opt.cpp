//===- attnc-opt.cpp - mlir-opt with the attnc dialect and passes ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Like mlir-opt: parses, runs passes, prints. It knows the attnc dialect and
// passes, --attnc-pipeline, and the upstream dialects and passes that the
// lowering to NVVM, PTX and cubins uses.
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAll/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  attnc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attnc optimizer driver\n", registry));
}
