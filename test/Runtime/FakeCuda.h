//===- FakeCuda.h - What the fake CUDA driver records -----------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// State shared between FakeCuda.cpp (a libcuda.so.1 stand-in the runtime
// dlopens through ATTNC_LIBCUDA) and DriverTest.cpp, which reads it through
// the fake_cuda_state() symbol. It records the calls whose arguments the
// runtime computes (SM count, tensor map encoding, memsets, launches, graph
// capture), so that the GPU half is tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_RUNTIME_FAKECUDA_H
#define ATTNC_TEST_RUNTIME_FAKECUDA_H

#include <cstdint>
#include <string>
#include <vector>

namespace fakecuda {

struct EncodeCall {
  int dtype = -1;
  unsigned rank = 0;
  uint64_t address = 0;
  std::vector<uint64_t> dims, strides; // strides: rank - 1 entries
  std::vector<uint32_t> box, elementStrides;
  int interleave = -1, swizzle = -1, l2Promotion = -1, oobFill = -1;
  uintptr_t mapAddress = 0; // where the map was written
};

struct MemsetCall {
  uint64_t ptr = 0;
  unsigned value = 0;
  size_t bytes = 0;
  void *stream = nullptr;
  bool captured = false;
};

struct LaunchCall {
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  unsigned sharedMemoryBytes = 0;
  void *stream = nullptr;
  bool captured = false;
  /// Launched by cuLaunchKernelEx with programmatic stream serialization.
  bool programmatic = false;
  /// The kernel parameters, copied with State::paramSizes.
  std::vector<std::vector<unsigned char>> params;
  std::vector<uintptr_t> paramAddresses;
};

struct State {
  int numSMs = 132;
  /// CUresult the next cuTensorMapEncodeTiled returns (0: encode).
  int encodeResult = 0;
  /// Sizes of the parameters cuLaunchKernel copies into LaunchCall::params.
  std::vector<size_t> paramSizes;
  int attributeQueries = 0;
  int smemAttributeValue = 0;
  std::vector<EncodeCall> encodes;
  std::vector<MemsetCall> memsets;
  std::vector<LaunchCall> launches;
  /// Order of memsets ("memset") and launches ("launch") and graph calls.
  std::vector<std::string> events;
  void *capturing = nullptr; // the stream being captured
  int graphLaunches = 0;
};

} // namespace fakecuda

extern "C" fakecuda::State *fake_cuda_state();

#endif // ATTNC_TEST_RUNTIME_FAKECUDA_H
