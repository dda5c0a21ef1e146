//===- DeviceModel.cpp - roofline ceilings of the GPUs attnc targets ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The built-in device models and where each number comes from. Measured
// ceilings are lower than these datasheet peaks; the report takes them as
// overrides (peak-tflops, bandwidth-tbps) rather than baking one run in.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/DeviceModel.h"

using namespace attnc;

/// Dense (no 2:4 sparsity) bf16 tensor-core peak of the SXM parts, TFLOP/s:
/// 989 for H100 and H200 (same GH100 die and clocks, NVIDIA H100 and H200
/// datasheets), 312 for A100 (NVIDIA A100 datasheet). The course notes use
/// 989 and derive the ridge of 295 from it.
static constexpr double kHopperBf16DenseTflops = 989.0;
static constexpr double kAmpereBf16DenseTflops = 312.0;

/// HBM bandwidth, TB/s: H100 SXM HBM3 3.35, H200 HBM3e 4.8, A100 80GB SXM
/// HBM2e 2.04 (the datasheets; the notes use 3.35 and 2.04, whose ridges
/// are 295 and 153).
static constexpr double kH100BandwidthTBps = 3.35;
static constexpr double kH200BandwidthTBps = 4.8;
static constexpr double kA100BandwidthTBps = 2.04;

/// Launch overhead, us: the notes' "≈5 µs" per launch (490 launches = 2.45
/// ms of a decode step) inside the "≈3–10 µs" range of the kernels note;
/// the same CUDA launch path serves all three devices.
static constexpr double kLaunchOverheadUs = 5.0;

static const DeviceModel kBuiltinModels[] = {
    {"h100", kHopperBf16DenseTflops, kH100BandwidthTBps, kLaunchOverheadUs},
    {"h200", kHopperBf16DenseTflops, kH200BandwidthTBps, kLaunchOverheadUs},
    {"a100", kAmpereBf16DenseTflops, kA100BandwidthTBps, kLaunchOverheadUs},
};

llvm::ArrayRef<DeviceModel> attnc::getBuiltinDeviceModels() {
  return kBuiltinModels;
}

std::optional<DeviceModel> attnc::lookupDeviceModel(llvm::StringRef name) {
  for (const DeviceModel &model : kBuiltinModels)
    if (name.equals_insensitive(model.name))
      return model;
  return std::nullopt;
}
