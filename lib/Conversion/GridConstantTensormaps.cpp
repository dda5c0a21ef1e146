//===- GridConstantTensormaps.cpp - --attnc-grid-constant-tensormaps ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The launch contract says which kernel arguments are tensor maps; this
// pass gives those arguments of the lowered kernel the attributes that make
// NVPTX pass them by value in the parameter space, where TMA reads them.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNCGRIDCONSTANTTENSORMAPS
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
/// sizeof(CUtensorMap), and the alignment the driver needs for it as a
/// kernel parameter.
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapParamAlign = 64;

struct GridConstantTensormapsPass
    : attnc::impl::AttncGridConstantTensormapsBase<GridConstantTensormapsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    LaunchContractAttr contract = getLaunchContract(module);
    if (!contract)
      return;
    ArrayRef<Attribute> params = contract.getParams();
    auto isMap = [](Attribute p) { return isa<TensorMapParamAttr>(p); };
    if (llvm::none_of(params, isMap))
      return;
    // The contract's verifier has checked that the kernel exists and takes
    // one argument per parameter.
    auto func =
        dyn_cast<LLVM::LLVMFuncOp>(module.lookupSymbol(contract.getKernel()));
    if (!func) {
      module.emitError() << "kernel @" << contract.getKernel()
                         << " takes tensormap parameters but is not an "
                            "llvm.func (run --attnc-grid-constant-tensormaps "
                            "after convert-gpu-to-nvvm)";
      return signalPassFailure();
    }
    Builder b(&getContext());
    auto storage = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
    for (auto [i, p] : llvm::enumerate(params)) {
      auto map = dyn_cast<TensorMapParamAttr>(p);
      if (!map)
        continue;
      auto ptr = dyn_cast<LLVM::LLVMPointerType>(func.getArgumentTypes()[i]);
      if (!ptr || ptr.getAddressSpace() != 0) {
        func.emitError() << "argument " << i << " is tensormap parameter '"
                         << map.getName()
                         << "' of the launch contract but has type "
                         << func.getArgumentTypes()[i]
                         << "; a tensor map is passed as a generic !llvm.ptr";
        return signalPassFailure();
      }
      func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(storage));
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(kTensorMapParamAlign));
      func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
    }
  }
};
} // namespace
