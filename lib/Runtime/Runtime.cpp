//===- Runtime.cpp - Load cubins, launch kernels, record CUDA graphs ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The GPU half of the runtime, over the CUDA driver API only. libcuda.so.1 is
// opened with dlopen at the first call that needs it (not linked), so that
// the library, its CPU-only half and the Python package load on machines
// without an NVIDIA driver; the CUDA stub library cannot even be executed.
// Cubins are loaded lazily per CUDA context, at a kernel's first launch in
// that context (or all at once by attnc_module_load_gpu). Plans call in here
// for the device's SM count and to encode tensormaps; a launch zeroes the
// zero_init workspaces on its stream before the kernel, so both land in a
// CUDA graph being captured. Every CUDA error message says what was being
// done and carries cuGetErrorName's name.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace attnc::rt;

struct attnc_graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

namespace {

// The driver entry points we use, with the exported symbol of the version
// whose signature cuda.h declares (cuda.h maps e.g. cuStreamBeginCapture to
// cuStreamBeginCapture_v2 by macro, and decltype sees the mapped name too).
#define ATTNC_CUDA_FUNCTIONS(X)                                                \
  X(cuInit, "cuInit")                                                          \
  X(cuGetErrorName, "cuGetErrorName")                                          \
  X(cuGetErrorString, "cuGetErrorString")                                      \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")                                        \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                        \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2")                                   \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2")                                     \
  X(cuCtxGetDevice, "cuCtxGetDevice")                                          \
  X(cuDeviceGet, "cuDeviceGet")                                                \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                              \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                      \
  X(cuModuleLoadData, "cuModuleLoadData")                                      \
  X(cuModuleUnload, "cuModuleUnload")                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                  \
  X(cuLaunchKernel, "cuLaunchKernel")                                          \
  X(cuMemsetD8Async, "cuMemsetD8Async")                                        \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled")                          \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2")                           \
  X(cuStreamEndCapture, "cuStreamEndCapture")                                  \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")                \
  X(cuGraphLaunch, "cuGraphLaunch")                                            \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")                                  \
  X(cuGraphDestroy, "cuGraphDestroy")

struct Driver {
#define ATTNC_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  ATTNC_CUDA_FUNCTIONS(ATTNC_DECLARE)
#undef ATTNC_DECLARE
  /// Optional (CUDA 12 drivers): without it, or with
  /// ATTNC_PROGRAMMATIC_LAUNCH=0, programmatic kernels launch plainly, which
  /// their griddepcontrol.wait also allows.
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;
};

Driver driver;
std::atomic<bool> driverReady{false};
std::mutex driverMutex;

/// The enum's name from cuda.h, for drivers whose cuGetErrorName fails (the
/// stub library's does).
const char *knownErrorName(CUresult r) {
  switch (r) {
#define ATTNC_NAME(e)                                                          \
  case e:                                                                      \
    return #e;
    ATTNC_NAME(CUDA_ERROR_INVALID_VALUE)
    ATTNC_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    ATTNC_NAME(CUDA_ERROR_NOT_INITIALIZED)
    ATTNC_NAME(CUDA_ERROR_DEINITIALIZED)
    ATTNC_NAME(CUDA_ERROR_STUB_LIBRARY)
    ATTNC_NAME(CUDA_ERROR_NO_DEVICE)
    ATTNC_NAME(CUDA_ERROR_INVALID_DEVICE)
    ATTNC_NAME(CUDA_ERROR_INVALID_IMAGE)
    ATTNC_NAME(CUDA_ERROR_INVALID_CONTEXT)
    ATTNC_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    ATTNC_NAME(CUDA_ERROR_INVALID_HANDLE)
    ATTNC_NAME(CUDA_ERROR_NOT_FOUND)
    ATTNC_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    ATTNC_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    ATTNC_NAME(CUDA_ERROR_LAUNCH_FAILED)
    ATTNC_NAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    ATTNC_NAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
#undef ATTNC_NAME
  default:
    return nullptr;
  }
}

attnc_status cudaFail(CUresult r, const std::string &what) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName && driver.cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!name)
    name = knownErrorName(r);
  if (driver.cuGetErrorString &&
      driver.cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string message =
      what + ": " + (name ? name : "CUDA error " + std::to_string(r));
  if (text)
    message += std::string(" (") + text + ")";
  return fail(ATTNC_ERROR_CUDA, message);
}

/// Opens the driver and runs cuInit once. A failure is not cached, so a
/// process can retry (e.g. after fixing ATTNC_LIBCUDA).
attnc_status ensureDriver() {
  if (driverReady.load(std::memory_order_acquire))
    return ATTNC_OK;
  std::lock_guard<std::mutex> lock(driverMutex);
  if (driverReady.load(std::memory_order_relaxed))
    return ATTNC_OK;
  const char *path = std::getenv("ATTNC_LIBCUDA");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return fail(ATTNC_ERROR_NO_DRIVER,
                std::string("cannot load the CUDA driver: dlopen(") + path +
                    "): " + (why ? why : "unknown error") +
                    " (is an NVIDIA driver installed? ATTNC_LIBCUDA can name "
                    "the library)");
  }
  Driver d;
#define ATTNC_LOOKUP(fn, symbol)                                               \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(handle, symbol));              \
  if (!d.fn) {                                                                 \
    dlclose(handle);                                                           \
    return fail(ATTNC_ERROR_NO_DRIVER, std::string("the CUDA driver ") +       \
                                           path + " lacks " + symbol +         \
                                           " (driver too old?)");              \
  }
  ATTNC_CUDA_FUNCTIONS(ATTNC_LOOKUP)
#undef ATTNC_LOOKUP
  const char *programmatic = std::getenv("ATTNC_PROGRAMMATIC_LAUNCH");
  if (!programmatic || std::strcmp(programmatic, "0") != 0)
    d.cuLaunchKernelEx = reinterpret_cast<decltype(d.cuLaunchKernelEx)>(
        dlsym(handle, "cuLaunchKernelEx"));
  driver = d;
  if (CUresult r = driver.cuInit(0)) {
    attnc_status st = cudaFail(r, "cuInit");
    driver = Driver();
    dlclose(handle);
    return st;
  }
  // The handle is kept open for the life of the process.
  driverReady.store(true, std::memory_order_release);
  return ATTNC_OK;
}

/// The current context, or device 0's primary context made current when the
/// thread has none (a plain C host that never touched CUDA). The retained
/// primary context is deliberately never released: modules loaded into it
/// must stay valid for the process.
attnc_status currentContext(CUcontext &ctx) {
  if (attnc_status st = ensureDriver())
    return st;
  if (CUresult r = driver.cuCtxGetCurrent(&ctx))
    return cudaFail(r, "cuCtxGetCurrent");
  if (ctx)
    return ATTNC_OK;
  CUdevice dev;
  if (CUresult r = driver.cuDeviceGet(&dev, 0))
    return cudaFail(r, "cuDeviceGet(0)");
  if (CUresult r = driver.cuDevicePrimaryCtxRetain(&ctx, dev))
    return cudaFail(r, "cuDevicePrimaryCtxRetain(device 0)");
  if (CUresult r = driver.cuCtxSetCurrent(ctx))
    return cudaFail(r, "cuCtxSetCurrent(primary context of device 0)");
  return ATTNC_OK;
}

attnc_status readFile(const std::string &path, std::string &out) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return fail(ATTNC_ERROR_IO,
                "cannot open " + path + ": " + std::strerror(errno));
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  return bad ? fail(ATTNC_ERROR_IO, "cannot read " + path) : ATTNC_OK;
}

/// The kernel's function in context CTX, loading its cubin on first use.
/// The caller holds the module's gpuMutex.
attnc_status getFunction(attnc_kernel &k, CUcontext ctx, CUfunction &fn) {
  for (const auto &f : k.functions)
    if (f.first == ctx) {
      fn = static_cast<CUfunction>(f.second);
      return ATTNC_OK;
    }
  attnc_module &m = *k.module;
  if (m.dir.empty())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "module '" + m.name +
                    "' was parsed without a directory: cannot load " + k.cubin);
  std::string image;
  if (attnc_status st = readFile(m.dir + "/" + k.cubin, image))
    return st;
  CUmodule mod;
  if (CUresult r = driver.cuModuleLoadData(&mod, image.data()))
    return cudaFail(r, "cuModuleLoadData(" + k.cubin + ")");
  m.cuModules.push_back({ctx, mod});
  if (CUresult r = driver.cuModuleGetFunction(&fn, mod, k.entry.c_str()))
    return cudaFail(r,
                    "cuModuleGetFunction(" + k.entry + " in " + k.cubin + ")");
  // Above 48 KiB of dynamic shared memory a kernel must opt in.
  if (k.sharedMemoryBytes > 48 * 1024)
    if (CUresult r = driver.cuFuncSetAttribute(
            fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(k.sharedMemoryBytes)))
      return cudaFail(r, "cuFuncSetAttribute(" + k.name +
                             ", MAX_DYNAMIC_SHARED_SIZE_BYTES = " +
                             std::to_string(k.sharedMemoryBytes) + ")");
  k.functions.push_back({ctx, fn});
  return ATTNC_OK;
}

CUtensorMapDataType tensorMapType(attnc_dtype d) {
  switch (d) {
  case ATTNC_DTYPE_BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case ATTNC_DTYPE_F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case ATTNC_DTYPE_F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case ATTNC_DTYPE_F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case ATTNC_DTYPE_I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case ATTNC_DTYPE_I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  default: // i1 and i8: TMA only moves the bytes
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
}

CUtensorMapSwizzle tensorMapSwizzle(int32_t bytes) {
  switch (bytes) {
  case 32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  default:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

} // namespace

attnc_status attnc::rt::deviceNumSMs(int64_t &numSMs) {
  if (attnc_status st = ensureDriver())
    return st;
  // Without a current context a launch would use device 0 (currentContext),
  // so that is the device whose SMs count; no context is created here.
  CUcontext ctx = nullptr;
  if (CUresult r = driver.cuCtxGetCurrent(&ctx))
    return cudaFail(r, "cuCtxGetCurrent");
  CUdevice dev;
  if (ctx) {
    if (CUresult r = driver.cuCtxGetDevice(&dev))
      return cudaFail(r, "cuCtxGetDevice");
  } else if (CUresult r = driver.cuDeviceGet(&dev, 0)) {
    return cudaFail(r, "cuDeviceGet(0)");
  }
  int count = 0;
  if (CUresult r = driver.cuDeviceGetAttribute(
          &count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
    return cudaFail(r, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT, device " +
                           std::to_string(dev) + ")");
  numSMs = count;
  return ATTNC_OK;
}

attnc_status attnc::rt::encodeTensorMap(const TensorMapRequest &r, void *out,
                                        const std::string &what) {
  static_assert(sizeof(CUtensorMap) == kTensorMapBytes,
                "the packed parameter must hold a whole CUtensorMap");
  static_assert(alignof(CUtensorMap) <= kTensorMapAlign,
                "the packed parameter must be aligned as a CUtensorMap");
  if (attnc_status st = ensureDriver())
    return fail(st, what +
                        " is encoded by the CUDA driver when the plan is "
                        "made: " +
                        attnc_last_error());
  // Copies, because the driver's array types differ from ours and the
  // strides array may be empty (a 1-D tensor has no outer stride).
  std::vector<cuuint64_t> dims(r.dims.begin(), r.dims.end());
  std::vector<cuuint64_t> strides(r.strides.begin(), r.strides.end());
  std::vector<cuuint32_t> box(r.box.begin(), r.box.end());
  std::vector<cuuint32_t> elementStrides(r.dims.size(), 1);
  strides.push_back(0); // never read; keeps data() valid for rank 1
  if (CUresult res = driver.cuTensorMapEncodeTiled(
          static_cast<CUtensorMap *>(out), tensorMapType(r.dtype),
          static_cast<cuuint32_t>(dims.size()),
          reinterpret_cast<void *>(static_cast<uintptr_t>(r.address)),
          dims.data(), strides.data(), box.data(), elementStrides.data(),
          CU_TENSOR_MAP_INTERLEAVE_NONE, tensorMapSwizzle(r.swizzle),
          CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          r.oobFillNaN ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                       : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    return cudaFail(res, "cuTensorMapEncodeTiled(" + what + ")");
  return ATTNC_OK;
}

extern "C" {

void attnc_module_unload(attnc_module *m) {
  if (!m)
    return;
  // Errors are ignored: at process exit the contexts may already be gone.
  if (driverReady.load() && !m->cuModules.empty()) {
    for (const auto &cm : m->cuModules) {
      if (driver.cuCtxPushCurrent(static_cast<CUcontext>(cm.first)) !=
          CUDA_SUCCESS)
        continue;
      driver.cuModuleUnload(static_cast<CUmodule>(cm.second));
      CUcontext popped;
      driver.cuCtxPopCurrent(&popped);
    }
  }
  delete m;
}

attnc_status attnc_module_load_gpu(attnc_module *m) {
  if (!m)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_module_load_gpu: module is NULL");
  CUcontext ctx;
  if (attnc_status st = currentContext(ctx))
    return st;
  std::lock_guard<std::mutex> lock(m->gpuMutex);
  for (auto &k : m->kernels) {
    CUfunction fn;
    if (attnc_status st = getFunction(*k, ctx, fn))
      return st;
  }
  return ok();
}

attnc_status attnc_plan_launch(const attnc_plan *plan, attnc_stream stream) {
  if (!plan)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT, "attnc_plan_launch: NULL plan");
  // A zero grid extent means no work; do not even require a driver.
  if (plan->empty)
    return ok();
  attnc_kernel &k = const_cast<attnc_kernel &>(*plan->kernel);
  CUcontext ctx;
  if (attnc_status st = currentContext(ctx))
    return st;
  CUfunction fn;
  {
    std::lock_guard<std::mutex> lock(k.module->gpuMutex);
    if (attnc_status st = getFunction(k, ctx, fn))
      return st;
  }
  // Zeroing goes on the launch stream, in order before the kernel, so that
  // a graph capture records both and every replay zeroes again.
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind != ATTNC_PARAM_WORKSPACE || !k.params[i].zeroInit ||
        plan->workspaceBytes[i] == 0)
      continue;
    if (CUresult r = driver.cuMemsetD8Async(
            static_cast<CUdeviceptr>(plan->workspaceData[i]), 0,
            static_cast<size_t>(plan->workspaceBytes[i]), stream))
      return cudaFail(r, "cuMemsetD8Async(workspace " + k.params[i].name +
                             ", " + std::to_string(plan->workspaceBytes[i]) +
                             " bytes)");
  }
  std::vector<void *> args(plan->sizes.size());
  for (size_t i = 0; i < args.size(); ++i)
    args[i] = const_cast<unsigned char *>(plan->param(i));
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(plan->grid[0]);
  config.gridDimY = static_cast<unsigned>(plan->grid[1]);
  config.gridDimZ = static_cast<unsigned>(plan->grid[2]);
  config.blockDimX = static_cast<unsigned>(k.block[0]);
  config.blockDimY = static_cast<unsigned>(k.block[1]);
  config.blockDimZ = static_cast<unsigned>(k.block[2]);
  config.sharedMemBytes = static_cast<unsigned>(k.sharedMemoryBytes);
  config.hStream = stream;
  // Programmatic dependent launch: the kernel's blocks may be scheduled
  // before the previous kernel on the stream ends (once its blocks all ran
  // griddepcontrol.launch_dependents or exited); the kernel's
  // griddepcontrol.wait keeps its reads after that kernel's writes. A
  // capture records it as a programmatic graph edge.
  bool programmatic = k.programmaticLaunch && driver.cuLaunchKernelEx;
  CUlaunchAttribute attr = {};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUresult r;
  if (programmatic) {
    config.attrs = &attr;
    config.numAttrs = 1;
    r = driver.cuLaunchKernelEx(&config, fn, args.data(), nullptr);
  } else {
    r = driver.cuLaunchKernel(
        fn, config.gridDimX, config.gridDimY, config.gridDimZ, config.blockDimX,
        config.blockDimY, config.blockDimZ, config.sharedMemBytes, stream,
        args.data(), nullptr);
  }
  if (r)
    return cudaFail(
        r, std::string(programmatic ? "cuLaunchKernelEx(" : "cuLaunchKernel(") +
               k.name + ", grid [" + std::to_string(plan->grid[0]) + ", " +
               std::to_string(plan->grid[1]) + ", " +
               std::to_string(plan->grid[2]) + "], block [" +
               std::to_string(k.block[0]) + ", " + std::to_string(k.block[1]) +
               ", " + std::to_string(k.block[2]) + "], " +
               std::to_string(k.sharedMemoryBytes) +
               " B dynamic shared memory)");
  return ok();
}

attnc_status attnc_launch(const attnc_kernel *kernel,
                          const attnc_tensor *tensors, size_t numTensors,
                          const attnc_scalar *scalars, size_t numScalars,
                          attnc_stream stream) {
  attnc_plan *plan = nullptr;
  if (attnc_status st = attnc_plan_create(kernel, tensors, numTensors, scalars,
                                          numScalars, &plan))
    return st;
  attnc_status st = attnc_plan_launch(plan, stream);
  attnc_plan_destroy(plan);
  return st;
}

attnc_status attnc_graph_begin(attnc_stream stream) {
  if (!stream)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_graph_begin: the legacy default stream (NULL) cannot "
                "be captured; use a created stream (cuStreamCreate, "
                "torch.cuda.Stream())");
  if (attnc_status st = ensureDriver())
    return st;
  // Relaxed: a kernel's first launch may load its cubin inside the capture.
  if (CUresult r =
          driver.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED))
    return cudaFail(r, "cuStreamBeginCapture");
  return ok();
}

attnc_status attnc_graph_end(attnc_stream stream, attnc_graph **out) {
  if (!stream || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_graph_end: stream and out must not be NULL");
  *out = nullptr;
  if (attnc_status st = ensureDriver())
    return st;
  auto g = std::make_unique<attnc_graph>();
  if (CUresult r = driver.cuStreamEndCapture(stream, &g->graph))
    return cudaFail(r, "cuStreamEndCapture");
  if (CUresult r = driver.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0)) {
    attnc_status st = cudaFail(r, "cuGraphInstantiateWithFlags");
    driver.cuGraphDestroy(g->graph);
    return st;
  }
  *out = g.release();
  return ok();
}

attnc_status attnc_graph_replay(const attnc_graph *g, attnc_stream stream) {
  if (!g)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT, "attnc_graph_replay: NULL graph");
  if (CUresult r = driver.cuGraphLaunch(g->exec, stream))
    return cudaFail(r, "cuGraphLaunch");
  return ok();
}

void attnc_graph_destroy(attnc_graph *g) {
  if (!g)
    return;
  if (driverReady.load()) {
    if (g->exec)
      driver.cuGraphExecDestroy(g->exec);
    if (g->graph)
      driver.cuGraphDestroy(g->graph);
  }
  delete g;
}

} // extern "C"
