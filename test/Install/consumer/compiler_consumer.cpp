// Embeds the installed attnc compiler: parses an attention graph, runs the
// attnc pipeline down to GPU kernels (not NVVM: no CUDA toolkit needed) and
// lists the kernels with the tile strategy their contracts name.
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/InitAll/InitAll.h"
#include "attnc/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: " << argv[0] << " GRAPH.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  attnc::AttncPipelineOptions options;
  options.toNVVM = false;
  attnc::buildAttncPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 1;
  for (auto gpuModule : module->getOps<mlir::gpu::GPUModuleOp>()) {
    auto contract = attnc::getLaunchContract(gpuModule);
    llvm::outs() << "kernel " << contract.getKernel() << " strategy "
                 << contract.getAttrs().get("strategy") << "\n";
  }
  return 0;
}
