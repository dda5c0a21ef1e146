//===- DriverTest.cpp - The GPU half against a fake CUDA driver -----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's calls into the driver, checked on machines without a GPU:
// ATTNC_LIBCUDA points at FakeCuda.cpp's library, which records what the
// runtime asks for. Covers what a real GPU run could only show as a crash or
// a wrong answer: the SM count query, every argument of
// cuTensorMapEncodeTiled (dimension order, byte strides, box, swizzle, fill),
// the packed 128-byte aligned maps, workspace zeroing before the kernel on
// the launch stream, and both inside a graph capture; which of a kernel and
// its fallback a plan launches. A separate binary from the other runtime
// tests because the driver, once loaded, stays loaded for the process.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include "TensorArgs.h"

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace {

using attnc_test::descsOf;
using attnc_test::fallbackFixtureScalars;
using attnc_test::fallbackFixtureTensors;
using attnc_test::Tensor;

const std::string inputs = ATTNC_TEST_INPUTS;
const int fakeDriverSet = setenv("ATTNC_LIBCUDA", ATTNC_FAKE_CUDA, 1);

/// The fake's records: the library the runtime dlopens, opened once more.
fakecuda::State &fake() {
  static fakecuda::State *state = [] {
    void *handle = dlopen(ATTNC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return static_cast<fakecuda::State *>(nullptr);
    auto get = reinterpret_cast<fakecuda::State *(*)()>(
        dlsym(handle, "fake_cuda_state"));
    return get ? get() : nullptr;
  }();
  if (!state)
    std::abort();
  return *state;
}

/// Loads fixture Inputs/FIXTURE's manifest with its cubins looked up in a
/// temporary directory that holds a dummy file per kernel in KERNELS, so
/// that launches get as far as the fake driver.
attnc_status loadWithCubins(const char *fixture,
                            std::initializer_list<const char *> kernels,
                            attnc_module **out) {
  std::ifstream in(inputs + "/" + fixture + "/manifest.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  std::string dir = ::testing::TempDir();
  for (const char *kernel : kernels)
    std::ofstream(dir + "/" + kernel + ".cubin") << "not a real cubin";
  return attnc_manifest_parse(json.data(), json.size(), dir.c_str(), out);
}

/// The persistent fixture in a directory with (dummy) cubins, so that
/// launches get as far as the fake driver.
class Driver : public ::testing::Test {
protected:
  attnc_module *module = nullptr;
  attnc_kernel *kernel = nullptr;
  attnc_plan *plan = nullptr;
  std::vector<Tensor> tensors;
  std::vector<attnc_scalar> scalars;
  int64_t numSMs = 0;

  void SetUp() override {
    fake() = fakecuda::State();
    ASSERT_EQ(loadWithCubins("persistent",
                             {"decode_fwd", "tile_copy", "row_sum"}, &module),
              ATTNC_OK)
        << attnc_last_error();
    ASSERT_EQ(attnc_module_get_kernel(module, "decode_fwd", &kernel), ATTNC_OK);
    // B=2, H=8, Hkv=2, Sq=1, Skv=1000.
    tensors = {
        Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 1, 128}),          // q
        Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 2, 1000, 128}), // k
        Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 2, 1000, 128}), // v
        Tensor(0x300000, ATTNC_DTYPE_BF16, {2, 8, 1, 128}),          // o
        Tensor(0x400000, ATTNC_DTYPE_I8, {1 << 20}),                 // partial
        Tensor(0x600000, ATTNC_DTYPE_I8, {32}),                      // counters
    };
    scalars = {attnc_scalar{1, {0}}};
    scalars[0].value.f = 0.125;
  }
  void TearDown() override {
    attnc_plan_destroy(plan);
    attnc_module_unload(module);
  }
  attnc_status create() {
    std::vector<attnc_tensor> descs = descsOf(tensors);
    attnc_plan_destroy(plan);
    plan = nullptr;
    attnc_plan_options options = {numSMs};
    return attnc_plan_create_with_options(kernel, descs.data(), descs.size(),
                                          scalars.data(), scalars.size(),
                                          &options, &plan);
  }
  std::vector<unsigned char> paramBytes(size_t i) {
    const void *bytes;
    size_t size;
    EXPECT_EQ(attnc_plan_param(plan, i, &bytes, &size), ATTNC_OK);
    auto *p = static_cast<const unsigned char *>(bytes);
    return std::vector<unsigned char>(p, p + size);
  }
  /// Makes the fake copy each parameter with the plan's packed sizes.
  void expectParamSizes() {
    fake().paramSizes.clear();
    for (size_t i = 0; i < attnc_plan_num_params(plan); ++i)
      fake().paramSizes.push_back(paramBytes(i).size());
  }
};

TEST_F(Driver, NumSMsFromTheDevice) {
  fake().numSMs = 78;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 78);
  uint64_t bytes;
  ASSERT_EQ(attnc_plan_workspace_bytes(plan, 6, &bytes), ATTNC_OK);
  EXPECT_EQ(bytes, 78u * 8 * 128 * 4);   // the same count as the grid
  EXPECT_EQ(fake().attributeQueries, 1); // once per plan, not per factor
  // An explicit count wins and asks nothing.
  numSMs = 16;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 16);
  EXPECT_EQ(fake().attributeQueries, 1);
}

TEST_F(Driver, EncodesTensorMapsInDriverOrder) {
  tensors[1].strides = {2 * 1000 * 136, 1000 * 136, 136, 1}; // padded rows
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(fake().encodes.size(), 2u);
  const fakecuda::EncodeCall &k = fake().encodes[0];
  EXPECT_EQ(k.dtype, 9); // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(k.rank, 4u);
  EXPECT_EQ(k.address, 0x100000000000u);
  EXPECT_EQ(k.dims, (std::vector<uint64_t>{128, 1000, 2, 2}));
  EXPECT_EQ(k.strides,
            (std::vector<uint64_t>{136 * 2, 1000 * 136 * 2, 2000 * 136 * 2}));
  EXPECT_EQ(k.box, (std::vector<uint32_t>{64, 64, 1, 1}));
  EXPECT_EQ(k.elementStrides, (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(k.interleave, 0);  // NONE
  EXPECT_EQ(k.swizzle, 3);     // 128B
  EXPECT_EQ(k.l2Promotion, 2); // L2_128B
  EXPECT_EQ(k.oobFill, 0);     // zero
  EXPECT_EQ(k.mapAddress % 128, 0u);
  const fakecuda::EncodeCall &v = fake().encodes[1];
  EXPECT_EQ(v.address, 0x200000000000u);
  EXPECT_EQ(v.strides, (std::vector<uint64_t>{256, 256000, 512000}));
  EXPECT_EQ(v.oobFill, 1); // NAN_REQUEST_ZERO_FMA

  // The packed parameters are the encoded maps, 128-byte aligned (the
  // driver needs 64; cuda.h declares CUtensorMap alignas(128)).
  for (size_t i : {4, 5}) {
    std::vector<unsigned char> bytes = paramBytes(i);
    ASSERT_EQ(bytes.size(), 128u);
    uint64_t words[16];
    std::memcpy(words, bytes.data(), 128);
    EXPECT_EQ(words[0], i == 4 ? 0x100000000000u : 0x200000000000u);
    EXPECT_EQ(words[1], 4u);
    EXPECT_EQ(words[15], 0xa77cu);
    const void *p;
    size_t size;
    ASSERT_EQ(attnc_plan_param(plan, i, &p, &size), ATTNC_OK);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p), fake().encodes[i - 4].mapAddress)
        << "encoded in place";
  }
}

TEST_F(Driver, EncodesAWorkspaceView) {
  // grad_accum: acc (M x 64 bytes) is also an f32 [M, N] view its tensormap
  // describes: the workspace's pointer, the view's extents, packed strides.
  attnc_kernel *k = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(module, "grad_accum", &k), ATTNC_OK);
  auto planFor = [&](int64_t n, attnc_plan **out) {
    std::vector<Tensor> args = {Tensor(0x100000, ATTNC_DTYPE_F32, {100, n}),
                                Tensor(0x700000, ATTNC_DTYPE_I8, {6400})};
    std::vector<attnc_tensor> descs = descsOf(args);
    return attnc_plan_create(k, descs.data(), descs.size(), nullptr, 0, out);
  };
  attnc_plan *p = nullptr;
  ASSERT_EQ(planFor(16, &p), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(fake().encodes.size(), 1u);
  const fakecuda::EncodeCall &e = fake().encodes[0];
  EXPECT_EQ(e.dtype, 7); // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.address, 0x700000u);
  EXPECT_EQ(e.dims, (std::vector<uint64_t>{16, 100}));
  EXPECT_EQ(e.strides, (std::vector<uint64_t>{64}));
  EXPECT_EQ(e.box, (std::vector<uint32_t>{16, 64}));
  EXPECT_EQ(e.swizzle, 2); // 64B
  attnc_plan_destroy(p);
  // The byte rule (M x 64) does not cover the view when N = 32.
  EXPECT_EQ(planFor(32, &p), ATTNC_ERROR_VALIDATION);
  EXPECT_STREQ(attnc_last_error(), "grad_accum: workspace acc is 6400 bytes "
                                   "but its view f32[M, N] needs 12800");
}

TEST_F(Driver, OneElementDimensionsGetAValidStride) {
  // Hkv = 1 with a stride TMA could not take; it is never stepped along.
  tensors[1] = Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 1, 1000, 128});
  tensors[2] = Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 1, 1000, 128});
  tensors[1].strides[1] = 3;
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 1, 1, 128});
  tensors[3] = Tensor(0x300000, ATTNC_DTYPE_BF16, {2, 1, 1, 128});
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(fake().encodes[0].strides,
            (std::vector<uint64_t>{256, 256000, 256000}));
}

TEST_F(Driver, EncodingErrorsNameTheMap) {
  fake().encodeResult = 1; // CUDA_ERROR_INVALID_VALUE
  EXPECT_EQ(create(), ATTNC_ERROR_CUDA);
  EXPECT_STREQ(attnc_last_error(),
               "cuTensorMapEncodeTiled(decode_fwd: tensormap k_map of k): "
               "CUDA_ERROR_INVALID_VALUE (fake driver error)");
  EXPECT_EQ(plan, nullptr);
}

TEST_F(Driver, LaunchZeroesWorkspacesFirst) {
  numSMs = 4;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  expectParamSizes();
  auto stream = reinterpret_cast<attnc_stream>(0x5151);
  ASSERT_EQ(attnc_plan_launch(plan, stream), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(fake().events, (std::vector<std::string>{"memset", "launch"}));
  // Only counters (zero_init), only the bytes its rule asks for.
  ASSERT_EQ(fake().memsets.size(), 1u);
  EXPECT_EQ(fake().memsets[0].ptr, 0x600000u);
  EXPECT_EQ(fake().memsets[0].value, 0u);
  EXPECT_EQ(fake().memsets[0].bytes, 32u);
  EXPECT_EQ(fake().memsets[0].stream, stream);
  const fakecuda::LaunchCall &l = fake().launches[0];
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.sharedMemoryBytes, 65536u);
  EXPECT_EQ(fake().smemAttributeValue, 65536);
  EXPECT_EQ(l.stream, stream);
  // The kernel receives the packed bytes, the maps from 128-byte aligned
  // addresses.
  ASSERT_EQ(l.params.size(), attnc_kernel_num_params(kernel));
  for (size_t i = 0; i < l.params.size(); ++i)
    EXPECT_EQ(l.params[i], paramBytes(i)) << "parameter " << i;
  EXPECT_EQ(l.paramAddresses[4] % 128, 0u);
  EXPECT_EQ(l.paramAddresses[5] % 128, 0u);
  float scale;
  std::memcpy(&scale, l.params[14].data(), 4);
  EXPECT_EQ(scale, 0.125f);
}

TEST_F(Driver, ProgrammaticKernelsLaunchWithTheAttribute) {
  // decode_fwd (no programmatic_launch) goes through cuLaunchKernel...
  numSMs = 4;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  auto stream = reinterpret_cast<attnc_stream>(0x5454);
  ASSERT_EQ(attnc_plan_launch(plan, stream), ATTNC_OK) << attnc_last_error();
  // ...row_sum (programmatic_launch) through cuLaunchKernelEx with
  // programmatic stream serialization, after its zeroing, same stream.
  ASSERT_EQ(attnc_module_get_kernel(module, "row_sum", &kernel), ATTNC_OK);
  tensors = {Tensor(0x100000, ATTNC_DTYPE_F32, {8, 64}),
             Tensor(0x200000, ATTNC_DTYPE_F32, {8}),
             Tensor(0x300000, ATTNC_DTYPE_I8, {4 * 64 * 4})};
  scalars.clear();
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(attnc_plan_launch(plan, stream), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(fake().launches.size(), 2u);
  EXPECT_FALSE(fake().launches[0].programmatic);
  EXPECT_TRUE(fake().launches[1].programmatic);
  EXPECT_EQ(fake().launches[1].stream, stream);
  EXPECT_EQ(fake().launches[1].grid[0], 4u);
  EXPECT_EQ(fake().launches[1].block[0], 256u);
  EXPECT_EQ(fake().events,
            (std::vector<std::string>{"memset", "launch", "memset", "launch"}));
}

TEST_F(Driver, GraphCaptureRecordsZeroingAndLaunch) {
  numSMs = 4;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  expectParamSizes();
  auto stream = reinterpret_cast<attnc_stream>(0x5252);
  ASSERT_EQ(attnc_graph_begin(stream), ATTNC_OK);
  ASSERT_EQ(attnc_plan_launch(plan, stream), ATTNC_OK) << attnc_last_error();
  attnc_graph *graph = nullptr;
  ASSERT_EQ(attnc_graph_end(stream, &graph), ATTNC_OK);
  ASSERT_EQ(attnc_graph_replay(graph, stream), ATTNC_OK);
  attnc_graph_destroy(graph);
  EXPECT_EQ(fake().events, (std::vector<std::string>{
                               "begin", "memset", "launch", "end", "replay"}));
  EXPECT_TRUE(fake().memsets[0].captured);
  EXPECT_TRUE(fake().launches[0].captured);
}

TEST_F(Driver, EmptyLaunchTouchesNothing) {
  ASSERT_EQ(attnc_module_get_kernel(module, "tile_copy", &kernel), ATTNC_OK);
  tensors = {Tensor(0, ATTNC_DTYPE_F32, {0, 64}),
             Tensor(0, ATTNC_DTYPE_F32, {0, 64})};
  scalars.clear();
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_OK);
  EXPECT_TRUE(fake().encodes.empty());
  EXPECT_TRUE(fake().events.empty());
}

TEST_F(Driver, TwoDimensionalMap) {
  ASSERT_EQ(attnc_module_get_kernel(module, "tile_copy", &kernel), ATTNC_OK);
  tensors = {Tensor(0x100000, ATTNC_DTYPE_F32, {100, 72}),
             Tensor(0x200000, ATTNC_DTYPE_F32, {100, 72})};
  scalars.clear();
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 3); // ceil(72 / 32)
  EXPECT_EQ(grid[1], 4); // ceil(100 / 32)
  ASSERT_EQ(fake().encodes.size(), 2u);
  EXPECT_EQ(fake().encodes[0].dtype, 7); // FLOAT32
  EXPECT_EQ(fake().encodes[0].dims, (std::vector<uint64_t>{72, 100}));
  EXPECT_EQ(fake().encodes[0].strides, (std::vector<uint64_t>{288}));
  EXPECT_EQ(fake().encodes[0].box, (std::vector<uint32_t>{32, 32}));
  EXPECT_EQ(fake().encodes[0].swizzle, 3); // 128B
  EXPECT_EQ(fake().encodes[1].swizzle, 0); // none
}

/// Inputs/fallback: `attn` reads Q, K, V through tensormaps, its fallback
/// `attn_fallback` by element; told apart at launch by block and shared
/// memory. B=2, H=8, Hkv=2, Sq=300, Skv=500.
class Fallback : public ::testing::Test {
protected:
  attnc_module *module = nullptr;
  attnc_kernel *primary = nullptr, *fallback = nullptr;
  attnc_plan *plan = nullptr;
  std::vector<Tensor> tensors;
  std::vector<attnc_scalar> scalars;

  void SetUp() override {
    fake() = fakecuda::State();
    ASSERT_EQ(loadWithCubins("fallback", {"attn", "attn_fallback"}, &module),
              ATTNC_OK)
        << attnc_last_error();
    ASSERT_EQ(attnc_module_get_kernel(module, "attn", &primary), ATTNC_OK);
    ASSERT_EQ(attnc_module_get_kernel(module, "attn_fallback", &fallback),
              ATTNC_OK);
    tensors = fallbackFixtureTensors();
    scalars = fallbackFixtureScalars();
  }
  void TearDown() override {
    attnc_plan_destroy(plan);
    attnc_module_unload(module);
  }
  std::vector<attnc_tensor> descs() const { return descsOf(tensors); }
  attnc_status create() {
    attnc_plan_destroy(plan);
    plan = nullptr;
    std::vector<attnc_tensor> d = descs();
    return attnc_plan_create(primary, d.data(), d.size(), scalars.data(),
                             scalars.size(), &plan);
  }
  void padQueryRows() { tensors[0].strides = {8 * 300 * 68, 300 * 68, 68, 1}; }
  void expectParamSizes() {
    fake().paramSizes.clear();
    for (size_t i = 0; i < attnc_plan_num_params(plan); ++i) {
      const void *bytes;
      size_t size;
      ASSERT_EQ(attnc_plan_param(plan, i, &bytes, &size), ATTNC_OK);
      fake().paramSizes.push_back(size);
    }
  }
};

TEST_F(Fallback, AlignedTensorsRunThePrimary) {
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(attnc_plan_kernel(plan), primary);
  EXPECT_EQ(fake().encodes.size(), 3u); // q, k and v
  EXPECT_EQ(attnc_plan_num_params(plan), attnc_kernel_num_params(primary));
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 3); // ceil(300 / 128)
  std::vector<attnc_tensor> d = descs();
  ASSERT_EQ(attnc_launch(primary, d.data(), d.size(), scalars.data(),
                         scalars.size(), reinterpret_cast<attnc_stream>(0x61)),
            ATTNC_OK)
      << attnc_last_error();
  ASSERT_EQ(fake().launches.size(), 1u);
  EXPECT_EQ(fake().launches[0].block[0], 384u);
  EXPECT_EQ(fake().launches[0].sharedMemoryBytes, 200704u);
  EXPECT_EQ(fake().launches[0].grid[0], 3u);
}

TEST_F(Fallback, PaddedRowsLaunchTheFallback) {
  padQueryRows();
  std::vector<attnc_tensor> d = descs();
  ASSERT_EQ(attnc_launch(primary, d.data(), d.size(), scalars.data(),
                         scalars.size(), reinterpret_cast<attnc_stream>(0x62)),
            ATTNC_OK)
      << attnc_last_error();
  EXPECT_TRUE(fake().encodes.empty()); // the fallback has no tensormap
  ASSERT_EQ(fake().launches.size(), 1u);
  EXPECT_EQ(fake().launches[0].block[0], 128u);
  EXPECT_EQ(fake().launches[0].sharedMemoryBytes, 49152u);
  EXPECT_EQ(fake().launches[0].grid[0], 5u); // ceil(300 / 64)
}

TEST_F(Fallback, GraphCaptureOfAFallbackPlan) {
  padQueryRows();
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(attnc_plan_kernel(plan), fallback);
  expectParamSizes();
  auto stream = reinterpret_cast<attnc_stream>(0x5353);
  ASSERT_EQ(attnc_graph_begin(stream), ATTNC_OK);
  ASSERT_EQ(attnc_plan_launch(plan, stream), ATTNC_OK) << attnc_last_error();
  attnc_graph *graph = nullptr;
  ASSERT_EQ(attnc_graph_end(stream, &graph), ATTNC_OK);
  ASSERT_EQ(attnc_graph_replay(graph, stream), ATTNC_OK);
  attnc_graph_destroy(graph);
  EXPECT_EQ(fake().events,
            (std::vector<std::string>{"begin", "launch", "end", "replay"}));
  ASSERT_EQ(fake().launches.size(), 1u);
  const fakecuda::LaunchCall &l = fake().launches[0];
  EXPECT_TRUE(l.captured);
  EXPECT_EQ(l.block[0], 128u);
  // The fallback's parameters, as its plan packed them.
  ASSERT_EQ(l.params.size(), attnc_kernel_num_params(fallback));
  for (size_t i = 0; i < l.params.size(); ++i) {
    const void *bytes;
    size_t size;
    ASSERT_EQ(attnc_plan_param(plan, i, &bytes, &size), ATTNC_OK);
    auto *p = static_cast<const unsigned char *>(bytes);
    EXPECT_EQ(l.params[i], std::vector<unsigned char>(p, p + size))
        << "parameter " << i;
  }
  int64_t stride = 0;
  std::memcpy(&stride, l.params[12].data(), 8); // q.stride2
  EXPECT_EQ(stride, 68);
}

} // namespace
