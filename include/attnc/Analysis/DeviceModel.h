//===- DeviceModel.h - roofline ceilings of attnc targets -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The three numbers the intensity report's model needs per device: the dense
// bf16 tensor-core peak, the HBM bandwidth and the cost of one kernel
// launch. Their ratio, the ridge point, separates compute-bound from
// bandwidth-bound kernels; the launch cost marks overhead-bound ones.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_DEVICEMODEL_H
#define ATTNC_ANALYSIS_DEVICEMODEL_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace attnc {

/// Roofline ceilings of one device.
struct DeviceModel {
  std::string name;
  /// Dense bf16/f16 tensor-core peak, TFLOP/s.
  double peakTflops;
  /// HBM bandwidth, TB/s (10^12 bytes per second).
  double bandwidthTBps;
  /// Fixed cost of one kernel launch, microseconds.
  double launchOverheadUs;

  /// FLOP per byte at which a kernel moves from bandwidth- to compute-bound:
  /// peak / bandwidth (TFLOP/s over TB/s is FLOP/byte).
  double ridge() const { return peakTflops / bandwidthTBps; }
};

/// The built-in models: h100, h200, a100.
llvm::ArrayRef<DeviceModel> getBuiltinDeviceModels();

/// The built-in model called `name`, or nullopt. "custom" is not built in:
/// it is a model whose ceilings all come from overrides.
std::optional<DeviceModel> lookupDeviceModel(llvm::StringRef name);

} // namespace attnc

#endif // ATTNC_ANALYSIS_DEVICEMODEL_H
