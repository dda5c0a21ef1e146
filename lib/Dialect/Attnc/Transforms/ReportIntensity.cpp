//===- ReportIntensity.cpp - --attnc-report-intensity ---------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pass that prints FLOPs, HBM bytes, intensity, regime and predicted time
// per kernel. It resolves the device's roofline from the target description
// (attnc/Target/TargetDescription.h) and the size options and hands every
// function to attnc::countFunctionCost / printIntensityReport
// (attnc/Analysis/Intensity.h); the IR is not changed.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/Intensity.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Target/TargetDescription.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/MemoryBuffer.h"

#define DEBUG_TYPE "attnc-report-intensity"

namespace attnc {
#define GEN_PASS_DEF_ATTNCREPORTINTENSITY
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
struct AttncReportIntensityPass
    : attnc::impl::AttncReportIntensityBase<AttncReportIntensityPass> {
  using Base::Base;

  /// The roofline of the target `device` names (a device, or a chip for its
  /// default device), with the overrides applied.
  FailureOr<RooflineModel> resolveDevice() {
    FailureOr<TargetDescription> target = lookupTargetDescription(device);
    if (failed(target) && device != "custom") {
      emitError(getOperation().getLoc())
          << "unknown device '" << device << "': expected "
          << getKnownTargetNames() << ", or custom";
      return failure();
    }
    RooflineModel m =
        succeeded(target) ? target->roofline : RooflineModel{"custom", 0, 0, 0};
    if (peakTflops > 0)
      m.peakTflops = peakTflops;
    if (bandwidthTBps > 0)
      m.bandwidthTBps = bandwidthTBps;
    if (launchOverheadUs > 0)
      m.launchOverheadUs = launchOverheadUs;
    if (m.peakTflops <= 0 || m.bandwidthTBps <= 0) {
      emitError(getOperation().getLoc())
          << "device 'custom' needs peak-tflops and bandwidth-tbps";
      return failure();
    }
    return m;
  }

  /// The cost model's device: the device file when one is given, else the
  /// built-in datasheet device `device` names, with the overrides.
  FailureOr<cost::DeviceModel> resolveModel(const RooflineModel &roofline) {
    if (!deviceFile.empty()) {
      auto text = llvm::MemoryBuffer::getFile(deviceFile, /*IsText=*/true);
      if (!text) {
        emitError(getOperation().getLoc())
            << "cannot read device file '" << deviceFile
            << "': " << text.getError().message();
        return failure();
      }
      std::string error;
      std::optional<cost::DeviceModel> m =
          cost::parseDeviceModel((*text)->getBuffer().str(), error);
      if (!m) {
        emitError(getOperation().getLoc())
            << "device file '" << deviceFile << "': " << error;
        return failure();
      }
      return *m;
    }
    FailureOr<TargetDescription> target = lookupTargetDescription(device);
    const cost::DeviceModel *builtin = cost::builtinDeviceModel(
        succeeded(target) ? target->device : std::string("h100"));
    cost::DeviceModel m = *builtin;
    m.name = roofline.name;
    // One peak for every tensor-core family and width, as the roofline.
    m.mmaSyncTflops = m.wgmmaTflops = m.wgmmaN128Tflops = m.wgmmaN64Tflops =
        roofline.peakTflops;
    m.dramTBps = m.reduceTBps = roofline.bandwidthTBps;
    m.launchUs = roofline.launchOverheadUs;
    return m;
  }

  void runOnOperation() override {
    markAllAnalysesPreserved();
    if (format != "table" && format != "json") {
      emitError(getOperation().getLoc())
          << "unknown format '" << format << "': expected table or json";
      return signalPassFailure();
    }
    FailureOr<RooflineModel> model = resolveDevice();
    if (failed(model))
      return signalPassFailure();
    FailureOr<cost::DeviceModel> costModel = resolveModel(*model);
    if (failed(costModel))
      return signalPassFailure();
    // A device file prices the roofline columns too, unless overridden.
    if (!deviceFile.empty()) {
      RooflineModel measured = rooflineOf(*costModel);
      model->name = measured.name;
      if (peakTflops <= 0)
        model->peakTflops = measured.peakTflops;
      if (bandwidthTBps <= 0)
        model->bandwidthTBps = measured.bandwidthTBps;
      if (launchOverheadUs <= 0)
        model->launchOverheadUs = measured.launchOverheadUs;
    }
    SizeBindings sizes{batch, heads, seqLenQ > 0 ? seqLenQ : seqLen,
                       seqLenKV > 0 ? seqLenKV : seqLen};
    SmallVector<FunctionCost, 1> functions;
    bool failedAny = false;
    getOperation().walk([&](FunctionOpInterface func) {
      // Kernels inside a gpu.module are priced by their host's view.
      if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
        return;
      FailureOr<FunctionCost> cost = countFunctionCost(func, sizes);
      if (failed(cost))
        failedAny = true;
      else
        functions.push_back(std::move(*cost));
    });
    if (failedAny)
      return signalPassFailure();
    printIntensityReport(llvm::outs(), functions, *model, *costModel, sizes,
                         format == "json");
  }
};
} // namespace
