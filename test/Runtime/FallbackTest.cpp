//===- FallbackTest.cpp - A kernel's fallback: manifest rules and plans ---===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A kernel entry may name a `fallback` (docs/abi.md): another kernel of the
// module that takes the same arguments with weaker alignment, for tensors
// the kernel refuses for its alignment or TMA rules. Tested here without a
// driver: each loader rule with its message, and which kernel a plan picks
// (Inputs/fallback: `attn` reads Q, K, V through tensormaps, `attn_fallback`
// by element). The primary's tensormaps need the driver to be encoded, so a
// plan that picks the primary fails here with ATTNC_ERROR_NO_DRIVER, which
// must not fall back; DriverTest.cpp plans and launches it with a fake one.
//
//===----------------------------------------------------------------------===//

#include "TensorArgs.h"

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using attnc_test::descsOf;
using attnc_test::fallbackFixtureScalars;
using attnc_test::fallbackFixtureTensors;
using attnc_test::ModulePtr;
using attnc_test::parse;
using attnc_test::Tensor;

const std::string inputs = ATTNC_TEST_INPUTS;
// Before any test: whatever libcuda the machine has is never loaded.
const int noDriverSet = setenv("ATTNC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);

//===--- Loader rules -----------------------------------------------------===//

// A primary with a tensormap, a num_sms grid and a workspace, and its
// fallback: the same arguments (x, y, ws, seed) with other alignments, no
// tensormap, other sizes and strides, another grid and zero_init. Each case
// below edits one fragment of one of them.
const std::string primaryKernel =
    R"({"name": "k1", "cubin": "k1.cubin", "fallback": "k1_fb", )"
    R"("block": [128, 1, 1], "grid": [[{"device": "num_sms"}], [1], [1]], )"
    R"("params": [)"
    R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )"
    R"("role": "input", "align": 16, "row_align": 16}, )"
    R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )"
    R"("role": "output", "align": 16, "row_align": 16}, )"
    R"({"name": "x_map", "kind": "tensormap", "tensor": "x", )"
    R"("box": [32, 32], "swizzle": 128, "oob_fill": "zero"}, )"
    R"({"name": "ws", "kind": "workspace", )"
    R"("bytes": [{"device": "num_sms"}, "N", 4], "zero_init": true}, )"
    R"({"name": "N", "kind": "size", "dtype": "i64"}, )"
    R"({"name": "seed", "kind": "scalar", "dtype": "i64"}]})";
const std::string fallbackKernel =
    R"({"name": "k1_fb", "cubin": "k1_fb.cubin", )"
    R"("block": [64, 1, 1], "grid": [[{"device": "num_sms"}], [2], [1]], )"
    R"("params": [)"
    R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )"
    R"("role": "input", "align": 4, "row_align": 4}, )"
    R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )"
    R"("role": "output", "align": 4}, )"
    R"({"name": "ws", "kind": "workspace", )"
    R"("bytes": [{"device": "num_sms"}, "N", 4], "zero_init": false}, )"
    R"({"name": "N", "kind": "size", "dtype": "i32"}, )"
    R"({"name": "x.s0", "kind": "stride", "tensor": "x", "dim": 0}, )"
    R"({"name": "seed", "kind": "scalar", "dtype": "i64"}]})";

std::string moduleWith(const std::string &primary,
                       const std::string &fallback) {
  return R"({"attnc_manifest_version": 2, "module": "m", "kernels": [)" +
         primary + ", " + fallback + "]}";
}

/// Parses the inline pair (primaryKernel with its fallbackKernel) and
/// finds both kernels.
void loadInlinePair(ModulePtr &m, attnc_kernel *&primary,
                    attnc_kernel *&fallback) {
  std::string error;
  ASSERT_EQ(parse(moduleWith(primaryKernel, fallbackKernel), error, &m),
            ATTNC_OK)
      << error;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "k1", &primary), ATTNC_OK);
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "k1_fb", &fallback), ATTNC_OK);
}

TEST(FallbackManifest, FallbackIsResolved) {
  std::string error;
  ModulePtr m;
  attnc_kernel *primary = nullptr, *fallback = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadInlinePair(m, primary, fallback));
  EXPECT_EQ(attnc_kernel_fallback(primary), fallback);
  EXPECT_EQ(attnc_kernel_fallback(fallback), nullptr);
  EXPECT_EQ(attnc_kernel_fallback(nullptr), nullptr);
  // The fallback may come first in the list.
  ASSERT_EQ(parse(R"({"attnc_manifest_version": 2, "module": "m", )"
                  R"("kernels": [)" +
                      fallbackKernel + ", " + primaryKernel + "]}",
                  error, &m),
            ATTNC_OK)
      << error;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "k1", &primary), ATTNC_OK);
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "k1_fb", &fallback), ATTNC_OK);
  EXPECT_EQ(attnc_kernel_fallback(primary), fallback);
}

struct Case {
  bool inFallback; // which kernel the fragment is edited in
  const char *from, *to, *message;
};

const std::string sameArgs = "kernels[0].fallback: fallback kernel 'k1_fb' "
                             "must take the arguments of 'k1' (only align "
                             "and row_align may differ): ";

TEST(FallbackManifest, EachRuleHasItsMessage) {
  const Case cases[] = {
      {false, R"("fallback": "k1_fb")", R"("fallback": "k1")",
       "kernels[0].fallback: kernel 'k1' names itself as its fallback"},
      {false, R"("fallback": "k1_fb")", R"("fallback": "k2")",
       "kernels[0].fallback: fallback 'k2' of kernel 'k1' is not a kernel of "
       "this module (it has: k1, k1_fb)"},
      {false, R"("fallback": "k1_fb")", R"("fallback": "")",
       "kernels[0].fallback: empty kernel name"},
      {false, R"("fallback": "k1_fb")", R"("fallback": ["k1_fb"])",
       "kernels[0].fallback: expected a string, got an array"},
      {true, R"("cubin": "k1_fb.cubin", )",
       R"("cubin": "k1_fb.cubin", "fallback": "k1", )",
       "kernels[0].fallback: fallback kernel 'k1_fb' of 'k1' has a fallback "
       "of its own ('k1'); a plan falls back only once"},
      {true, R"({"name": "x.s0")",
       R"({"name": "x_map", "kind": "tensormap", "tensor": "x", )"
       R"("box": [32, 32], "swizzle": 128, "oob_fill": "zero"}, )"
       R"({"name": "x.s0")",
       "kernels[0].fallback: fallback kernel 'k1_fb' of 'k1' has tensormap "
       "parameter 'x_map' (kernels[1].params[4]); a fallback runs the "
       "tensors that TMA may refuse, so it must not use TMA"},
      // The arguments, one attribute at a time.
      {true, R"({"name": "y", )", R"({"name": "z", )",
       "argument 1 is 'y' in 'k1' but 'z' in 'k1_fb'"},
      {true,
       R"({"name": "ws", "kind": "workspace", )"
       R"("bytes": [{"device": "num_sms"}, "N", 4], "zero_init": false})",
       R"({"name": "ws", "kind": "scalar", "dtype": "i64"})",
       "parameter 'ws' is a workspace in 'k1' but a scalar in 'k1_fb'"},
      {true, R"("dtype": "f32", "shape": ["N", 64], "role": "input")",
       R"("dtype": "f16", "shape": ["N", 64], "role": "input")",
       "parameter 'x' has dtype f32 in 'k1' but f16 in 'k1_fb'"},
      {true, R"("shape": ["N", 64], "role": "input")",
       R"("shape": ["N", 32], "role": "input")",
       "parameter 'x' has shape [N, 64] in 'k1' but [N, 32] in 'k1_fb'"},
      {true, R"("shape": ["N", 64], "role": "output")",
       R"("shape": ["M", 64], "role": "output")",
       "parameter 'y' has shape [N, 64] in 'k1' but [M, 64] in 'k1_fb'"},
      {true, R"("role": "output")", R"("role": "input")",
       "parameter 'y' is an output in 'k1' but an input in 'k1_fb'"},
      {true, R"("align": 4, "row_align": 4})",
       R"("align": 4, "row_align": 4, "contiguous_last": false})",
       "parameter 'x' has contiguous_last true in 'k1' but false in "
       "'k1_fb'"},
      {true, R"("N", 4], "zero_init": false)", R"("N", 8], "zero_init": false)",
       "workspace 'ws' needs num_sms*N*4 bytes in 'k1' but num_sms*N*8 in "
       "'k1_fb'"},
      {true, R"({"name": "seed", "kind": "scalar", "dtype": "i64"})",
       R"({"name": "seed", "kind": "scalar", "dtype": "f64"})",
       "parameter 'seed' has dtype i64 in 'k1' but f64 in 'k1_fb'"},
      {true, R"(, {"name": "seed", "kind": "scalar", "dtype": "i64"})", "",
       "'k1' takes 4 arguments (x, y, ws, seed) but 'k1_fb' takes 3 (x, y, "
       "ws)"},
      {false, R"(, {"name": "seed", "kind": "scalar", "dtype": "i64"})", "",
       "'k1' takes 3 arguments (x, y, ws) but 'k1_fb' takes 4 (x, y, ws, "
       "seed)"},
  };
  for (const Case &c : cases) {
    std::string primary = primaryKernel, fallback = fallbackKernel;
    std::string &edited = c.inFallback ? fallback : primary;
    size_t at = edited.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    ASSERT_EQ(edited.find(c.from, at + 1), std::string::npos) << c.from;
    edited.replace(at, std::strlen(c.from), c.to);
    std::string error;
    EXPECT_EQ(parse(moduleWith(primary, fallback), error), ATTNC_ERROR_MANIFEST)
        << c.message;
    std::string message = c.message;
    if (message.rfind("kernels[", 0) != 0)
      message = sameArgs + message;
    EXPECT_EQ(error, "manifest: " + message);
  }
}

TEST(FallbackManifest, OnlyWhatTheCallerDoesNotSeeMayDiffer) {
  // Alignments, zero_init, sizes, strides, tensormaps, grid, block and
  // constraints are the kernels' own; the base pair already differs in all
  // but constraints.
  std::string fallback = fallbackKernel;
  fallback.insert(fallback.size() - 1,
                  R"(, "constraints": [{"kind": "min", "sym": "N", )"
                  R"("value": 1}])");
  std::string error;
  EXPECT_EQ(parse(moduleWith(primaryKernel, fallback), error), ATTNC_OK)
      << error;
}

//===--- Plans ------------------------------------------------------------===//

/// Inputs/fallback with B=2, H=8, Hkv=2, Sq=300, Skv=500, head_dim 64.
class FallbackPlans : public ::testing::Test {
protected:
  ModulePtr module;
  attnc_kernel *primary = nullptr, *fallback = nullptr;
  std::vector<Tensor> tensors;
  std::vector<attnc_scalar> scalars;
  attnc_plan *plan = nullptr;

  void SetUp() override {
    attnc_module *m = nullptr;
    ASSERT_EQ(attnc_module_load((inputs + "/fallback").c_str(), &m), ATTNC_OK)
        << attnc_last_error();
    module.reset(m);
    ASSERT_EQ(attnc_module_get_kernel(m, "attn", &primary), ATTNC_OK);
    ASSERT_EQ(attnc_module_get_kernel(m, "attn_fallback", &fallback), ATTNC_OK);
    tensors = fallbackFixtureTensors();
    scalars = fallbackFixtureScalars();
  }
  void TearDown() override { attnc_plan_destroy(plan); }

  attnc_status create(const attnc_kernel *kernel) {
    std::vector<attnc_tensor> descs = descsOf(tensors);
    attnc_plan_destroy(plan);
    plan = nullptr;
    return attnc_plan_create(kernel, descs.data(), descs.size(), scalars.data(),
                             scalars.size(), &plan);
  }
  template <typename T> T param(size_t i) {
    const void *bytes;
    size_t size;
    EXPECT_EQ(attnc_plan_param(plan, i, &bytes, &size), ATTNC_OK);
    EXPECT_EQ(size, sizeof(T)) << "parameter " << i;
    T v;
    std::memcpy(&v, bytes, sizeof(T));
    return v;
  }
  int64_t index(const attnc_kernel *k, const char *name) {
    int64_t i = -1;
    EXPECT_EQ(attnc_kernel_find_param(k, name, &i), ATTNC_OK) << name;
    return i;
  }
  /// The plan must be the fallback's, with its grid and parameters.
  void expectFallbackPlan() {
    EXPECT_EQ(attnc_plan_kernel(plan), fallback);
    EXPECT_STREQ(attnc_last_error(), "");
    int64_t grid[3];
    attnc_plan_grid(plan, grid);
    EXPECT_EQ(grid[0], 5); // ceil(300 / 64), the primary's would be 3
    EXPECT_EQ(grid[1], 8);
    EXPECT_EQ(grid[2], 2);
    ASSERT_EQ(attnc_plan_num_params(plan), attnc_kernel_num_params(fallback));
    EXPECT_NE(attnc_plan_num_params(plan), attnc_kernel_num_params(primary));
    EXPECT_EQ(param<uint64_t>(0), tensors[0].data);
    EXPECT_EQ(param<int64_t>(index(fallback, "q.stride2")),
              tensors[0].strides[2]);
    EXPECT_EQ(param<int64_t>(index(fallback, "k.stride1")),
              tensors[1].strides[1]);
    EXPECT_EQ(param<float>(index(fallback, "scale")), 0.125f);
  }
};

TEST_F(FallbackPlans, KernelsOfTheFixture) {
  EXPECT_EQ(attnc_kernel_fallback(primary), fallback);
  EXPECT_EQ(attnc_kernel_fallback(fallback), nullptr);
  EXPECT_EQ(attnc_plan_kernel(nullptr), nullptr);
}

TEST_F(FallbackPlans, PaddedQueryRowsRunTheFallback) {
  // Rows of 68 bf16 (136 bytes): neither row_align 16 nor TMA takes them.
  tensors[0].strides = {8 * 300 * 68, 300 * 68, 68, 1};
  ASSERT_EQ(create(primary), ATTNC_OK) << attnc_last_error();
  expectFallbackPlan();
}

TEST_F(FallbackPlans, UnalignedBaseRunsTheFallback) {
  tensors[0].data = 0x100002; // 2-byte aligned: a view starting at q[..., 1]
  ASSERT_EQ(create(primary), ATTNC_OK) << attnc_last_error();
  expectFallbackPlan();
  tensors[0].data = 0x100000;
  tensors[4].data = 0x4000004; // lse: the fallback needs 4 bytes only
  ASSERT_EQ(create(primary), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(attnc_plan_kernel(plan), fallback);
}

TEST_F(FallbackPlans, AlignedTensorsStayWithThePrimary) {
  // The primary accepts them; only encoding its maps needs the driver, and
  // that failure is not a refusal: it is returned as it is.
  EXPECT_EQ(create(primary), ATTNC_ERROR_NO_DRIVER);
  EXPECT_EQ(plan, nullptr);
  std::string error = attnc_last_error();
  EXPECT_EQ(error.rfind("attn: tensormap q_map of q is encoded by the CUDA "
                        "driver",
                        0),
            0u)
      << error;
  EXPECT_EQ(error.find("fallback"), std::string::npos) << error;
  // The fallback alone needs no driver.
  ASSERT_EQ(create(fallback), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(attnc_plan_kernel(plan), fallback);
}

TEST_F(FallbackPlans, BothRefuse) {
  tensors[0].dtype = ATTNC_DTYPE_F16;
  EXPECT_EQ(create(primary), ATTNC_ERROR_VALIDATION);
  EXPECT_EQ(plan, nullptr);
  EXPECT_STREQ(attnc_last_error(),
               "attn: q has dtype f16 but the kernel expects bf16; its "
               "fallback kernel attn_fallback refuses them too: "
               "attn_fallback: q has dtype f16 but the kernel expects bf16");
}

TEST_F(FallbackPlans, FallbackRefusesForItsOwnReason) {
  tensors[3].data = 0x3000001; // o: not even 2-byte aligned
  EXPECT_EQ(create(primary), ATTNC_ERROR_VALIDATION);
  EXPECT_STREQ(attnc_last_error(),
               "attn: o: data pointer 0x3000001 is not aligned to 16 bytes; "
               "its fallback kernel attn_fallback refuses them too: "
               "attn_fallback: o: data pointer 0x3000001 is not aligned to 2 "
               "bytes");
}

TEST_F(FallbackPlans, MisuseDoesNotFallBack) {
  EXPECT_EQ(attnc_plan_create(primary, nullptr, tensors.size(), scalars.data(),
                              scalars.size(), &plan),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(attnc_last_error(), "attn: tensors/scalars array is NULL");
}

TEST_F(FallbackPlans, LaunchRunsThePlansKernel) {
  // attnc_launch plans like attnc_plan_create: the fallback's plan gets as
  // far as the (missing) driver, not a refusal.
  tensors[0].strides = {8 * 300 * 68, 300 * 68, 68, 1};
  std::vector<attnc_tensor> descs = descsOf(tensors);
  EXPECT_EQ(attnc_launch(primary, descs.data(), descs.size(), scalars.data(),
                         scalars.size(), nullptr),
            ATTNC_ERROR_NO_DRIVER)
      << attnc_last_error();
}

/// The inline pair above: a num_sms grid and a workspace on both sides.
TEST(FallbackPlan, NumSMsAndWorkspacesAreTheFallbacks) {
  ModulePtr m;
  attnc_kernel *primary = nullptr, *fallback = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadInlinePair(m, primary, fallback));
  Tensor x(0x100000, ATTNC_DTYPE_F32, {100, 64});
  x.strides = {65, 1}; // 260-byte rows: 4-byte aligned only
  Tensor y(0x200000, ATTNC_DTYPE_F32, {100, 64});
  Tensor ws(0x300000, ATTNC_DTYPE_I8, {132 * 100 * 4});
  attnc_tensor descs[] = {x.desc(), y.desc(), ws.desc()};
  attnc_scalar seed{0, {7}};
  attnc_plan_options options = {132};
  attnc_plan *plan = nullptr;
  ASSERT_EQ(attnc_plan_create_with_options(primary, descs, 3, &seed, 1,
                                           &options, &plan),
            ATTNC_OK)
      << attnc_last_error();
  std::unique_ptr<attnc_plan, void (*)(attnc_plan *)> owner(plan,
                                                            attnc_plan_destroy);
  EXPECT_EQ(attnc_plan_kernel(plan), fallback);
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 132); // the options' SM count, for the fallback too
  EXPECT_EQ(grid[1], 2);
  // Indices are the fallback's: ws is its parameter 2 (the primary's 3).
  uint64_t bytes = 0;
  ASSERT_EQ(attnc_plan_workspace_bytes(plan, 2, &bytes), ATTNC_OK);
  EXPECT_EQ(bytes, 132u * 100 * 4);
  EXPECT_EQ(attnc_plan_workspace_bytes(plan, 3, &bytes),
            ATTNC_ERROR_INVALID_ARGUMENT);
  // The fallback's size N is an i32.
  const void *p;
  size_t size;
  ASSERT_EQ(attnc_plan_param(plan, 3, &p, &size), ATTNC_OK);
  EXPECT_EQ(size, 4u);
  int32_t n;
  std::memcpy(&n, p, 4);
  EXPECT_EQ(n, 100);
  // A workspace too small for either kernel: both refuse.
  ws.sizes[0] = 1000;
  descs[2] = ws.desc();
  attnc_plan *refused = nullptr;
  EXPECT_EQ(attnc_plan_create_with_options(primary, descs, 3, &seed, 1,
                                           &options, &refused),
            ATTNC_ERROR_VALIDATION);
  EXPECT_EQ(refused, nullptr);
  EXPECT_STREQ(attnc_last_error(),
               "k1: x.stride[0] = 65 elements (260 bytes) is not a multiple "
               "of 16 bytes: every row must start aligned; its fallback "
               "kernel k1_fb refuses them too: k1_fb: workspace ws is 1000 "
               "bytes but the kernel needs 52800 (num_sms*N*4)");
}

} // namespace
