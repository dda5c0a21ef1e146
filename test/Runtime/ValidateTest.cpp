//===- ValidateTest.cpp - Argument validation, grid and parameter packing -===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of launch plans: a valid call against the fixture kernels gives
// the expected grid and packed parameters (ABI order, C types); each
// refusal rule is broken by editing one thing of that valid call and must
// give its exact message. Pointers are made-up addresses: nothing here is
// dereferenced. The last tests reach the GPU half only far enough to check
// its error paths without a driver (empty grids, a missing libcuda).
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

const std::string inputs = ATTNC_TEST_INPUTS;

/// A tensor argument owning its sizes and strides (contiguous by default).
struct Tensor {
  uint64_t data;
  attnc_dtype dtype;
  std::vector<int64_t> sizes, strides;

  Tensor(uint64_t data, attnc_dtype dtype, std::vector<int64_t> sizes)
      : data(data), dtype(dtype), sizes(sizes), strides(sizes.size()) {
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s *= sizes[i];
    }
  }
  attnc_tensor desc() const {
    return {data, dtype, static_cast<int32_t>(sizes.size()), sizes.data(),
            strides.data()};
  }
};

class Plans : public ::testing::Test {
protected:
  attnc_module *module = nullptr;
  attnc_kernel *kernel = nullptr;
  std::vector<Tensor> tensors;
  std::vector<attnc_scalar> scalars;
  attnc_plan *plan = nullptr;

  void load(const char *dir, const char *name) {
    attnc_module_unload(module);
    module = nullptr;
    ASSERT_EQ(attnc_module_load((inputs + "/" + dir).c_str(), &module),
              ATTNC_OK)
        << attnc_last_error();
    ASSERT_EQ(attnc_module_get_kernel(module, name, &kernel), ATTNC_OK);
  }
  void TearDown() override {
    attnc_plan_destroy(plan);
    attnc_module_unload(module);
  }
  attnc_status create() {
    std::vector<attnc_tensor> descs;
    for (const Tensor &t : tensors)
      descs.push_back(t.desc());
    attnc_plan_destroy(plan);
    plan = nullptr;
    return attnc_plan_create(kernel, descs.data(), descs.size(), scalars.data(),
                             scalars.size(), &plan);
  }
  /// Expects a refusal with exactly MESSAGE after the kernel name.
  void refused(const std::string &message) {
    EXPECT_EQ(create(), ATTNC_ERROR_VALIDATION);
    EXPECT_EQ(plan, nullptr);
    EXPECT_EQ(attnc_last_error(),
              std::string(attnc_kernel_name(kernel)) + ": " + message);
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
};

/// attention_fwd with B=2, H=8, Hkv=2, Sq=100, Skv=300, all contiguous.
class Attention : public Plans {
protected:
  void SetUp() override {
    load("attention", "attention_fwd");
    tensors = {
        Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 100, 128}),  // q
        Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 2, 300, 128}), // k
        Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 2, 300, 128}), // v
        Tensor(0x3000000, ATTNC_DTYPE_BF16, {2, 8, 100, 128}), // o
        Tensor(0x4000000, ATTNC_DTYPE_F32, {2, 8, 100}),       // lse
    };
  }
};

TEST_F(Attention, ValidCallGivesGridAndParams) {
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_STREQ(attnc_last_error(), "");
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 2);  // ceil(100 / 64)
  EXPECT_EQ(grid[1], 16); // B * H
  EXPECT_EQ(grid[2], 1);
  EXPECT_EQ(attnc_plan_is_empty(plan), 0);
  int64_t v;
  ASSERT_EQ(attnc_plan_symbol(plan, "Skv", &v), ATTNC_OK);
  EXPECT_EQ(v, 300);
  EXPECT_EQ(attnc_plan_symbol(plan, "D", &v), ATTNC_ERROR_NOT_FOUND);

  ASSERT_EQ(attnc_plan_num_params(plan), 15u);
  EXPECT_EQ(param<uint64_t>(0), 0x100000u);
  EXPECT_EQ(param<uint64_t>(4), 0x4000000u);
  EXPECT_EQ(param<int64_t>(5), 2);   // B
  EXPECT_EQ(param<int64_t>(6), 8);   // H
  EXPECT_EQ(param<int64_t>(7), 2);   // Hkv
  EXPECT_EQ(param<int64_t>(8), 100); // Sq
  EXPECT_EQ(param<int64_t>(9), 300); // Skv
  EXPECT_EQ(param<int64_t>(10), 8 * 100 * 128);
  EXPECT_EQ(param<int64_t>(11), 100 * 128);
  EXPECT_EQ(param<int64_t>(12), 128);
  EXPECT_EQ(param<int64_t>(13), 128);
  EXPECT_EQ(param<int32_t>(14), 100); // lse.stride1 is i32
}

TEST_F(Attention, StridedViewsAreAccepted) {
  // q as a slice of a packed [B, Sq, 3, H, 128] tensor, transposed to
  // [B, H, Sq, 128]: only the innermost stride must be 1.
  tensors[0].strides = {100 * 3 * 8 * 128, 128, 3 * 8 * 128, 1};
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(param<int64_t>(10), 100 * 3 * 8 * 128);
  EXPECT_EQ(param<int64_t>(11), 128);
  EXPECT_EQ(param<int64_t>(12), 3 * 8 * 128);
  // A one-element innermost dimension may have any stride.
  Tensor t(0x5000000, ATTNC_DTYPE_F32, {2, 8, 1});
  t.strides[2] = 7;
  tensors[4] = t;
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 1, 128});
  tensors[3] = Tensor(0x3000000, ATTNC_DTYPE_BF16, {2, 8, 1, 128});
  EXPECT_EQ(create(), ATTNC_OK) << attnc_last_error();
}

TEST_F(Attention, WrongCounts) {
  tensors.pop_back();
  refused("expected 5 tensors (q, k, v, o, lse), got 4");
  SetUp();
  scalars.push_back({0, {1}});
  refused("expected 0 scalars (), got 1");
}

TEST_F(Attention, WrongRank) {
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 300, 128});
  refused("k has rank 3 but the kernel expects rank 4 [B, Hkv, Skv, 128]");
}

TEST_F(Attention, WrongDType) {
  tensors[2].dtype = ATTNC_DTYPE_F16;
  refused("v has dtype f16 but the kernel expects bf16");
  tensors[2].dtype = static_cast<attnc_dtype>(42);
  refused("v has dtype <invalid> but the kernel expects bf16");
}

TEST_F(Attention, StaticDimMismatch) {
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 100, 64});
  refused("q.shape[3] = 64 but the kernel was compiled for 128");
}

TEST_F(Attention, SymbolBoundTwice) {
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {3, 2, 300, 128});
  refused("k.shape[0] = 3 but B = 2 from q.shape[0]");
  SetUp();
  tensors[2] = Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 2, 299, 128});
  refused("v.shape[2] = 299 but Skv = 300 from k.shape[2]");
  SetUp();
  tensors[4] = Tensor(0x4000000, ATTNC_DTYPE_F32, {2, 8, 101});
  refused("lse.shape[2] = 101 but Sq = 100 from q.shape[2]");
}

TEST_F(Attention, NegativeSizesAndStrides) {
  tensors[0].sizes[2] = -1;
  refused("q.shape[2] = -1 is negative");
  SetUp();
  tensors[0].strides[1] = -5;
  refused("q.stride[1] = -5 is negative (negative strides are not "
          "supported)");
}

TEST_F(Attention, InnermostStride) {
  tensors[3].strides[3] = 2;
  refused("o.stride[3] = 2 but the innermost dimension must be contiguous "
          "(stride 1)");
}

TEST_F(Attention, Alignment) {
  tensors[1].data += 2;
  refused("k: data pointer 0x1000002 is not aligned to 16 bytes");
}

TEST_F(Attention, RowAlignment) {
  // A view that drops one column of each 128-wide row: rows of 127 bf16
  // elements start 254 bytes apart, off the 16-byte grid.
  tensors[0].strides[2] = 127;
  refused("q.stride[2] = 127 elements (254 bytes) is not a multiple of 16 "
          "bytes: every row must start aligned");
}

TEST_F(Attention, NullPointer) {
  tensors[2].data = 0;
  refused("v: data pointer is NULL but the tensor is not empty");
}

TEST_F(Attention, OutputAliasesInput) {
  tensors[3].data = tensors[0].data;
  refused("output o and input q share the data pointer 0x100000: an output "
          "must not alias another argument");
}

TEST_F(Attention, OutputOverlapsInput) {
  // o starts inside v: [0x2000000, 0x2000000 + 2*2*300*128*2 = 0x2025800).
  tensors[3].data = 0x2000000 + 0x1000;
  refused("output o [0x2001000, 0x2065000) overlaps input v [0x2000000, "
          "0x204b000): an output must not overlap another argument");
}

TEST_F(Attention, OutputsOverlapEachOther) {
  tensors[4].data = 0x3000000 + 16;
  refused("output o [0x3000000, 0x3064000) overlaps output lse [0x3000010, "
          "0x3001910): an output must not overlap another argument");
}

TEST_F(Attention, InputsMayShareMemory) {
  tensors[2].data = tensors[1].data; // k is v
  EXPECT_EQ(create(), ATTNC_OK) << attnc_last_error();
}

TEST_F(Attention, GQAHeads) {
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 3, 300, 128});
  tensors[2] = Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 3, 300, 128});
  refused("GQA: H = 8 (from q.shape[1]) is not a multiple of Hkv = 3 (from "
          "k.shape[1])");
}

TEST_F(Attention, EmptyTensorsNeedNoPointer) {
  // Sq = 0: q, o and lse are empty, so NULL is fine and nothing launches.
  tensors[0] = Tensor(0, ATTNC_DTYPE_BF16, {2, 8, 0, 128});
  tensors[3] = Tensor(0, ATTNC_DTYPE_BF16, {2, 8, 0, 128});
  tensors[4] = Tensor(0x4000004, ATTNC_DTYPE_F32, {2, 8, 0}); // unaligned: ok
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 0);
  EXPECT_EQ(attnc_plan_is_empty(plan), 1);
  // An empty launch succeeds without touching CUDA at all.
  EXPECT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_OK) << attnc_last_error();
}

TEST_F(Attention, GridLimit) {
  // B * H = 70000 > 65535 on grid.y.
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_BF16, {7000, 10, 1, 128});
  tensors[1] = Tensor(0x1000000000, ATTNC_DTYPE_BF16, {7000, 2, 1, 128});
  tensors[2] = Tensor(0x2000000000, ATTNC_DTYPE_BF16, {7000, 2, 1, 128});
  tensors[3] = Tensor(0x3000000000, ATTNC_DTYPE_BF16, {7000, 10, 1, 128});
  tensors[4] = Tensor(0x4000000000, ATTNC_DTYPE_F32, {7000, 10, 1});
  refused("grid.y = 70000 (B*H) exceeds the CUDA limit of 65535");
}

TEST_F(Attention, I32StrideOverflow) {
  // lse.stride1 is an i32 parameter.
  tensors[4].strides = {8ll << 31, 1ll << 31, 1};
  refused("lse.stride[1] = 2147483648 does not fit the kernel's i32 "
          "parameter lse.stride1");
}

/// bias_dropout_fwd: x [B, T, 1024] f16, bias [1024], y; T is an i32 size;
/// scalars seed (i64), offset (i32), p (f32).
class Fusion : public Plans {
protected:
  void SetUp() override {
    load("fusion", "bias_dropout_fwd");
    tensors = {
        Tensor(0x100000, ATTNC_DTYPE_F16, {4, 33, 1024}),
        Tensor(0x900000, ATTNC_DTYPE_F16, {1024}),
        Tensor(0xa00000, ATTNC_DTYPE_F16, {4, 33, 1024}),
    };
    scalars.assign(3, attnc_scalar{});
    scalars[0].value.i = 1234567890123ll;
    scalars[1].value.i = 7;
    scalars[2].is_float = 1;
    scalars[2].value.f = 0.1;
  }
};

TEST_F(Fusion, PacksScalarsWithTheirCTypes) {
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 9); // ceil(33 / 4)
  EXPECT_EQ(grid[1], 4);
  EXPECT_EQ(param<int32_t>(3), 33); // T: i32
  EXPECT_EQ(param<int64_t>(4), 4);  // B: default i64
  EXPECT_EQ(param<int64_t>(5), 1234567890123ll);
  EXPECT_EQ(param<int32_t>(6), 7);
  EXPECT_EQ(param<float>(7), 0.1f);
  EXPECT_EQ(param<int64_t>(8), 1024);
}

TEST_F(Fusion, ScalarConversions) {
  scalars[0].is_float = 1;
  scalars[0].value.f = 3.0; // integral float: accepted
  scalars[2].is_float = 0;
  scalars[2].value.i = 2; // int for f32: accepted
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(param<int64_t>(5), 3);
  EXPECT_EQ(param<float>(7), 2.0f);
  scalars[0].value.f = 1.5;
  refused("scalar seed is i64 but the non-integer value 1.5 was given");
  scalars[0].is_float = 0;
  scalars[1].value.i = 1ll << 31;
  refused("scalar offset = 2147483648 does not fit the kernel's i32 "
          "parameter offset");
  scalars.pop_back();
  refused("expected 3 scalars (seed, offset, p), got 2");
}

TEST_F(Fusion, I32SizeOverflow) {
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_F16, {1, 1ll << 31, 1024});
  tensors[2] = Tensor(0x100000000000, ATTNC_DTYPE_F16, {1, 1ll << 31, 1024});
  refused("size T = 2147483648 does not fit the kernel's i32 parameter T");
}

TEST_F(Fusion, UncheckedLayoutWhenTheManifestSaysSo) {
  // The copy kernel: align 1, contiguous_last false.
  ASSERT_EQ(attnc_module_get_kernel(module, "copy", &kernel), ATTNC_OK);
  Tensor a(0x1001, ATTNC_DTYPE_I8, {10});
  a.strides[0] = 3;
  tensors = {a, Tensor(0x2003, ATTNC_DTYPE_I8, {10})};
  scalars.clear();
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(param<int64_t>(2), 3);
}

// The GPU half without a GPU: its failures must be errors, not crashes.
TEST_F(Fusion, LaunchWithoutDriver) {
  ASSERT_EQ(create(), ATTNC_OK);
  setenv("ATTNC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  EXPECT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_ERROR_NO_DRIVER);
  EXPECT_EQ(std::string(attnc_last_error())
                .rfind("cannot load the CUDA driver: "
                       "dlopen(/nonexistent/libcuda.so.1): ",
                       0),
            0u)
      << attnc_last_error();
  EXPECT_EQ(attnc_module_load_gpu(module), ATTNC_ERROR_NO_DRIVER);
  EXPECT_EQ(attnc_graph_begin(nullptr), ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_graph_replay(nullptr, nullptr), ATTNC_ERROR_INVALID_ARGUMENT);
  attnc_graph_destroy(nullptr);

  // The toolkit's stub libcuda loads but every call fails: the message must
  // carry the CUDA error name.
  if (std::ifstream(ATTNC_CUDA_STUB).good()) {
    setenv("ATTNC_LIBCUDA", ATTNC_CUDA_STUB, 1);
    EXPECT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_ERROR_CUDA);
    EXPECT_EQ(std::string(attnc_last_error()).rfind("cuInit: CUDA_ERROR_", 0),
              0u)
        << attnc_last_error();
  }
  unsetenv("ATTNC_LIBCUDA");
}

} // namespace
