//===- FakeCuda.cpp - A libcuda.so.1 stand-in for the runtime's tests -----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Every driver entry point the runtime looks up, with just enough behaviour
// for a launch to go through: one device with State::numSMs SMs, a context,
// modules and functions as dummy handles, and stream capture as a flag.
// Calls whose arguments the runtime computes are recorded in the State of
// FakeCuda.h. A tensor map is "encoded" as a recognizable pattern (its
// address and rank) so that tests can find it in the packed parameters.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <cstring>

using fakecuda::State;

namespace {
State state;
CUcontext current = nullptr;
char contextObject, moduleObject, functionObject, graphObject, execObject;
} // namespace

#define FAKE_API extern "C" __attribute__((visibility("default")))

FAKE_API State *fake_cuda_state() { return &state; }

FAKE_API CUresult cuInit(unsigned) { return CUDA_SUCCESS; }

FAKE_API CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                        : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGetErrorString(CUresult, const char **text) {
  *text = "fake driver error";
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = current;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPushCurrent(CUcontext ctx) {
  current = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPopCurrent(CUcontext *ctx) {
  *ctx = current;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice *dev) {
  *dev = 0;
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

FAKE_API CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
  *dev = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

FAKE_API CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attr,
                                       CUdevice dev) {
  if (dev != 0 || attr != CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    return CUDA_ERROR_INVALID_VALUE;
  ++state.attributeQueries;
  *value = state.numSMs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = reinterpret_cast<CUcontext>(&contextObject);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleLoadData(CUmodule *mod, const void *) {
  *mod = reinterpret_cast<CUmodule>(&moduleObject);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }

FAKE_API CUresult cuModuleGetFunction(CUfunction *fn, CUmodule, const char *) {
  *fn = reinterpret_cast<CUfunction>(&functionObject);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute attr,
                                     int value) {
  if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state.smemAttributeValue = value;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn,
                                   void **params, void **extra) {
  bool programmatic = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &a = config->attrs[i];
    if (a.id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      return CUDA_ERROR_INVALID_VALUE;
    programmatic = a.value.programmaticStreamSerializationAllowed != 0;
  }
  CUresult r =
      cuLaunchKernel(fn, config->gridDimX, config->gridDimY, config->gridDimZ,
                     config->blockDimX, config->blockDimY, config->blockDimZ,
                     config->sharedMemBytes, config->hStream, params, extra);
  if (r == CUDA_SUCCESS)
    state.launches.back().programmatic = programmatic;
  return r;
}

FAKE_API CUresult cuLaunchKernel(CUfunction, unsigned gx, unsigned gy,
                                 unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned smem, CUstream stream,
                                 void **params, void **extra) {
  if (extra)
    return CUDA_ERROR_INVALID_VALUE;
  fakecuda::LaunchCall c;
  c.grid[0] = gx, c.grid[1] = gy, c.grid[2] = gz;
  c.block[0] = bx, c.block[1] = by, c.block[2] = bz;
  c.sharedMemoryBytes = smem;
  c.stream = stream;
  c.captured = stream && stream == state.capturing;
  for (size_t i = 0; i < state.paramSizes.size(); ++i) {
    auto *p = static_cast<unsigned char *>(params[i]);
    c.params.emplace_back(p, p + state.paramSizes[i]);
    c.paramAddresses.push_back(reinterpret_cast<uintptr_t>(p));
  }
  state.launches.push_back(c);
  state.events.push_back("launch");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemsetD8Async(CUdeviceptr ptr, unsigned char value,
                                  size_t bytes, CUstream stream) {
  state.memsets.push_back(
      {ptr, value, bytes, stream, stream && stream == state.capturing});
  state.events.push_back("memset");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  fakecuda::EncodeCall c;
  c.dtype = dtype;
  c.rank = rank;
  c.address = reinterpret_cast<uintptr_t>(address);
  c.dims.assign(dims, dims + rank);
  c.strides.assign(strides, strides + rank - 1);
  c.box.assign(box, box + rank);
  c.elementStrides.assign(elementStrides, elementStrides + rank);
  c.interleave = interleave;
  c.swizzle = swizzle;
  c.l2Promotion = l2;
  c.oobFill = oob;
  c.mapAddress = reinterpret_cast<uintptr_t>(map);
  state.encodes.push_back(c);
  if (state.encodeResult)
    return static_cast<CUresult>(state.encodeResult);
  std::memset(map, 0, sizeof(*map));
  map->opaque[0] = c.address;
  map->opaque[1] = rank;
  map->opaque[15] = 0xa77c;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  state.capturing = stream;
  state.events.push_back("begin");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (stream != state.capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  state.capturing = nullptr;
  *graph = reinterpret_cast<CUgraph>(&graphObject);
  state.events.push_back("end");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph,
                                              unsigned long long) {
  *exec = reinterpret_cast<CUgraphExec>(&execObject);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphLaunch(CUgraphExec, CUstream) {
  ++state.graphLaunches;
  state.events.push_back("replay");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphExecDestroy(CUgraphExec) { return CUDA_SUCCESS; }

FAKE_API CUresult cuGraphDestroy(CUgraph) { return CUDA_SUCCESS; }
