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
// dereferenced. No driver is ever loaded here (ATTNC_LIBCUDA points
// nowhere), so these tests also pin what works without one: everything but
// num_sms from the device and tensormap encoding. DriverTest.cpp covers
// those with a fake driver.
//
//===----------------------------------------------------------------------===//

#include "TensorArgs.h"

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using attnc_test::descsOf;
using attnc_test::Tensor;

const std::string inputs = ATTNC_TEST_INPUTS;
const char *const noDriver = "/nonexistent/libcuda.so.1";
// Before any test: whatever libcuda the machine has is never loaded.
const int noDriverSet = setenv("ATTNC_LIBCUDA", noDriver, 1);

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
  /// 0: ask the driver when a factor needs the SM count.
  int64_t numSMs = 0;

  attnc_status create() {
    std::vector<attnc_tensor> descs = descsOf(tensors);
    attnc_plan_destroy(plan);
    plan = nullptr;
    attnc_plan_options options = {numSMs};
    return attnc_plan_create_with_options(kernel, descs.data(), descs.size(),
                                          scalars.data(), scalars.size(),
                                          &options, &plan);
  }
  /// Expects a refusal with exactly MESSAGE after the kernel name.
  void refused(const std::string &message) {
    EXPECT_EQ(create(), ATTNC_ERROR_VALIDATION) << message;
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
  EXPECT_EQ(grid[0], 2); // ceil(100 / 64)
  EXPECT_EQ(grid[1], 8); // H
  EXPECT_EQ(grid[2], 2); // B
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

TEST_F(Attention, DivisibleConstraint) {
  // The manifest's divisible(H, Hkv): grouped heads need whole groups.
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 3, 300, 128});
  tensors[2] = Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 3, 300, 128});
  refused("H (= 8) must be a multiple of Hkv (= 3)");
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 0, 300, 128});
  tensors[2] = Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 0, 300, 128});
  refused("H (= 8) must be a multiple of Hkv (= 0), which must be positive");
  tensors[1] = Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 8, 300, 128});
  tensors[2] = Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 8, 300, 128});
  EXPECT_EQ(create(), ATTNC_OK) << attnc_last_error(); // H = Hkv: plain MHA
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
  // B = 70000 > 65535 on grid.z.
  tensors[0] = Tensor(0x100000, ATTNC_DTYPE_BF16, {70000, 1, 1, 128});
  tensors[1] = Tensor(0x1000000000, ATTNC_DTYPE_BF16, {70000, 1, 1, 128});
  tensors[2] = Tensor(0x2000000000, ATTNC_DTYPE_BF16, {70000, 1, 1, 128});
  tensors[3] = Tensor(0x3000000000, ATTNC_DTYPE_BF16, {70000, 1, 1, 128});
  tensors[4] = Tensor(0x4000000000, ATTNC_DTYPE_F32, {70000, 1, 1});
  refused("grid.z = 70000 (B) exceeds the CUDA limit of 65535");
}

TEST_F(Attention, I32StrideOverflow) {
  // lse.stride1 is an i32 parameter.
  tensors[4].strides = {8ll << 31, 1ll << 31, 1};
  refused("lse.stride[1] = 2147483648 does not fit the kernel's i32 "
          "parameter lse.stride1");
}

/// A split-KV partial kernel packed in GQA groups of 4 query heads
/// (--attnc-pack-gqa group-size=4): a CTA per K/V head, so the manifest
/// states H = 4 * Hkv with ratio(H, Hkv, 4).
class PackedGroups : public Plans {
protected:
  void heads(int64_t h, int64_t hkv) {
    int64_t splits = 3;
    tensors = {
        Tensor(0x100000, ATTNC_DTYPE_BF16, {2, h, 1, 128}),
        Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, hkv, 500, 128}),
        Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, hkv, 500, 128}),
        Tensor(0x3000000, ATTNC_DTYPE_F32, {splits, 2, h, 1, 128}),
        Tensor(0x4000000, ATTNC_DTYPE_F32, {splits, 2, h, 1}),
    };
  }
  void SetUp() override { load("packed", "attn_partial"); }
};

TEST_F(PackedGroups, RatioConstraint) {
  attnc_constraint c;
  ASSERT_EQ(attnc_kernel_constraint(kernel, 0, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_RATIO);
  EXPECT_STREQ(c.lhs, "H");
  EXPECT_STREQ(c.rhs, "Hkv");
  EXPECT_EQ(c.value, 4);
  // Any head counts with the group size run: a CTA per K/V head.
  for (auto [h, hkv] : {std::pair<int64_t, int64_t>{32, 8}, {4, 1}, {64, 16}}) {
    heads(h, hkv);
    ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
    int64_t grid[3];
    attnc_plan_grid(plan, grid);
    EXPECT_EQ(grid[1], hkv);
  }
  // Other groups would read past a tile's heads or leave heads unwritten.
  heads(32, 4);
  refused("H (= 32) must be 4 times Hkv (= 4)");
  heads(8, 8);
  refused("H (= 8) must be 4 times Hkv (= 8)");
  heads(6, 1);
  refused("H (= 6) must be 4 times Hkv (= 1)");
  heads(0, 0); // 0 = 4 * 0: empty, nothing to launch
  EXPECT_EQ(create(), ATTNC_OK) << attnc_last_error();
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

/// ragged_fwd: a ragged batch's compact grid, ceil(T / 128) + B query
/// tiles (every sequence ends in at most one partial tile).
class Ragged : public Plans {
protected:
  void SetUp() override { load("ragged", "ragged_fwd"); }
  void shapes(int64_t rows, int64_t sequences) {
    // (Q and O far apart: up to 2^38 rows of 2 KiB.)
    tensors = {
        Tensor(uint64_t(1) << 50, ATTNC_DTYPE_BF16, {rows, 16, 64}), // q
        Tensor(0x100000, ATTNC_DTYPE_I32, {sequences}),              // q_starts
        Tensor(0x200000, ATTNC_DTYPE_I32, {sequences}),              // q_ends
        Tensor(uint64_t(1) << 51, ATTNC_DTYPE_BF16, {rows, 16, 64}), // o
    };
  }
};

TEST_F(Ragged, GridAddsTheSequencesToTheQuotient) {
  attnc_factor f;
  ASSERT_EQ(attnc_kernel_grid_factor(kernel, 0, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_SYMBOL);
  EXPECT_STREQ(f.symbol, "T");
  EXPECT_EQ(f.ceil_div, 128);
  EXPECT_STREQ(f.plus, "B");
  ASSERT_EQ(attnc_kernel_grid_factor(kernel, 1, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.plus, nullptr);

  shapes(20000, 32);
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 189); // ceil(20000 / 128) + 32
  EXPECT_EQ(grid[1], 16);
  EXPECT_EQ(grid[2], 1);
  // An empty batch of rows still has its sequences' (empty) tiles.
  shapes(0, 3);
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 3);
  // The limit names the rule, sum included.
  shapes(int64_t(1) << 38, 5);
  refused("grid.x = 2147483653 (ceil(T/128)+B) exceeds the CUDA limit of "
          "2147483647");
}

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

/// decode_fwd (Inputs/persistent): B=2, H=8, Hkv=2, Sq=1, Skv=1000; grid
/// [num_sms]; k_map and v_map describe k and v; workspaces partial
/// (num_sms*H*128*4 bytes) and counters (B*ceil(H/2)*4, zeroed).
class Decode : public Plans {
protected:
  void SetUp() override {
    load("persistent", "decode_fwd");
    tensors = {
        Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 1, 128}),          // q
        Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 2, 1000, 128}), // k
        Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 2, 1000, 128}), // v
        Tensor(0x300000, ATTNC_DTYPE_BF16, {2, 8, 1, 128}),          // o
        Tensor(0x400000, ATTNC_DTYPE_I8, {132 * 8 * 512}),           // partial
        Tensor(0x600000, ATTNC_DTYPE_I8, {32}),                      // counters
    };
    scalars = {attnc_scalar{1, {0}}};
    scalars[0].value.f = 0.0883883;
    numSMs = 132;
  }
};

TEST_F(Decode, TensorMapsNeedTheDriver) {
  // Everything is valid; encoding the maps is the first thing that needs a
  // GPU, and without a driver the plan says so.
  EXPECT_EQ(create(), ATTNC_ERROR_NO_DRIVER);
  EXPECT_EQ(std::string(attnc_last_error())
                .rfind("decode_fwd: tensormap k_map of k is encoded by the "
                       "CUDA driver when the plan is made: cannot load the "
                       "CUDA driver: dlopen(/nonexistent/libcuda.so.1): ",
                       0),
            0u)
      << attnc_last_error();
}

TEST_F(Decode, NumSMsWithoutDriverOrOption) {
  numSMs = 0;
  EXPECT_EQ(create(), ATTNC_ERROR_NO_DRIVER);
  std::string error = attnc_last_error();
  EXPECT_EQ(error.rfind("decode_fwd: grid.x needs the device's SM count "
                        "({\"device\": \"num_sms\"}) but it cannot be "
                        "queried: cannot load the CUDA driver: ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("(attnc_plan_options.num_sms gives it without a GPU)"),
            std::string::npos)
      << error;
  numSMs = -1;
  EXPECT_EQ(create(), ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(attnc_last_error(),
               "attnc_plan_create: options.num_sms = -1 is negative");
}

TEST_F(Decode, CountsWorkspacesWithTensors) {
  tensors.pop_back();
  refused("expected 6 tensors and workspaces (q, k, v, o, partial, "
          "counters), got 5");
}

TEST_F(Decode, WorkspaceIsAByteVector) {
  tensors[5] = Tensor(0x600000, ATTNC_DTYPE_F32, {8});
  refused("workspace counters must be passed as a 1-D i8 tensor of its size "
          "in bytes, got rank 1 f32");
  tensors[5] = Tensor(0x600000, ATTNC_DTYPE_I8, {4, 8});
  refused("workspace counters must be passed as a 1-D i8 tensor of its size "
          "in bytes, got rank 2 i8");
  tensors[5] = Tensor(0x600000, ATTNC_DTYPE_I8, {-32});
  refused("workspace counters has a negative size (-32 bytes)");
  tensors[5] = Tensor(0x600000, ATTNC_DTYPE_I8, {64});
  tensors[5].strides[0] = 2;
  refused("workspace counters.stride[0] = 2 but a workspace must be "
          "contiguous (stride 1)");
}

TEST_F(Decode, WorkspaceSizeAndPointer) {
  tensors[4].sizes[0] = 1000;
  refused("workspace partial is 1000 bytes but the kernel needs 540672 "
          "(num_sms*H*128*4)");
  SetUp();
  numSMs = 66; // a smaller GPU needs less
  tensors[4].sizes[0] = 66 * 8 * 512;
  tensors[5].sizes[0] = 31;
  refused("workspace counters is 31 bytes but the kernel needs 32 "
          "(B*ceil(H/2)*4)");
  SetUp();
  tensors[5].data = 0;
  refused("workspace counters: data pointer is NULL but the kernel needs 32 "
          "bytes");
  tensors[5].data = 0x600008;
  refused("workspace counters: data pointer 0x600008 is not aligned to 16 "
          "bytes");
}

TEST_F(Decode, WorkspacesMustNotOverlap) {
  tensors[5].data = tensors[1].data;
  refused("workspace counters and input k share the data pointer "
          "0x100000000000: a workspace must not alias another argument");
  SetUp();
  tensors[5].data = 0x300000 + 0x800; // inside o
  refused("output o [0x300000, 0x301000) overlaps workspace counters "
          "[0x300800, 0x300820): an output must not overlap another "
          "argument");
  SetUp();
  tensors[5].data = 0x400000 + 132 * 8 * 512 - 16; // the end of partial
  refused("workspace partial [0x400000, 0x484000) overlaps workspace counters "
          "[0x483ff0, 0x484010): a workspace must not overlap another "
          "argument");
  SetUp();
  // Only the bytes the kernel needs count: a larger buffer may end anywhere.
  tensors[4].sizes[0] = 1 << 30;
  tensors[5].data = 0x500000;
  EXPECT_EQ(create(), ATTNC_ERROR_NO_DRIVER); // valid up to the encoding
}

TEST_F(Decode, MinConstraint) {
  tensors[1] = Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 2, 0, 128});
  tensors[2] = Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 2, 0, 128});
  refused("Skv (= 0) must be at least 1");
}

TEST_F(Decode, TMAStrides) {
  // Rows of 132 bf16: 264 bytes apart, off TMA's 16-byte grid.
  tensors[1].strides = {2 * 1000 * 132, 1000 * 132, 132, 1};
  refused("tensormap k_map: k.stride[2] = 132 elements (264 bytes) is not a "
          "multiple of 16 bytes, as TMA requires");
  SetUp();
  tensors[1].strides[0] = 1ll << 39; // 2^40 bytes between batches
  refused("tensormap k_map: k.stride[0] = 549755813888 elements "
          "(1099511627776 bytes) exceeds TMA's limit of 2^40 bytes");
  SetUp();
  // A one-element dimension is never stepped along: any stride will do.
  tensors[1] = Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 1, 1000, 128});
  tensors[2] = Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 1, 1000, 128});
  tensors[1].strides[1] = 3;
  EXPECT_EQ(create(), ATTNC_ERROR_NO_DRIVER) << attnc_last_error();
}

TEST_F(Decode, TMAExtents) {
  int64_t huge = (1ll << 32) + 1;
  tensors[1] = Tensor(0x100000000000, ATTNC_DTYPE_BF16, {2, 2, huge, 128});
  tensors[2] = Tensor(0x200000000000, ATTNC_DTYPE_BF16, {2, 2, huge, 128});
  refused("tensormap k_map: k.shape[2] = 4294967297 exceeds TMA's limit of "
          "2^32 elements");
  // B = 0: q, k, v and o are empty, but the persistent grid still launches.
  // TMA cannot describe an empty tensor and nothing can be read from one:
  // its map is passed zeroed, without the driver.
  SetUp();
  for (int i = 0; i < 4; ++i) {
    tensors[i].sizes[0] = 0;
    tensors[i].data = 0;
  }
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  std::vector<unsigned char> zero(128, 0);
  for (const char *map : {"k_map", "v_map"}) {
    int64_t index = -1;
    ASSERT_EQ(attnc_kernel_find_param(kernel, map, &index), ATTNC_OK);
    const void *bytes = nullptr;
    size_t size = 0;
    ASSERT_EQ(attnc_plan_param(plan, static_cast<size_t>(index), &bytes, &size),
              ATTNC_OK);
    ASSERT_EQ(size, zero.size());
    EXPECT_EQ(std::memcmp(bytes, zero.data(), size), 0) << map;
  }
}

/// tile_copy: x [M, N] f32 (align 4, no contiguity rule of its own) and y
/// [M2, N2], equal(M, M2), equal(N, N2), each with a tensormap.
class TileCopy : public Plans {
protected:
  void SetUp() override {
    load("persistent", "tile_copy");
    tensors = {Tensor(0x100000, ATTNC_DTYPE_F32, {64, 96}),
               Tensor(0x200000, ATTNC_DTYPE_F32, {64, 96})};
  }
};

TEST_F(TileCopy, EqualConstraint) {
  tensors[1] = Tensor(0x200000, ATTNC_DTYPE_F32, {63, 96});
  refused("M (= 64) must equal M2 (= 63)");
}

TEST_F(TileCopy, TMARulesApplyWhateverTheTensorsOwnRules) {
  tensors[0].data = 0x100004; // fine for x's align of 4
  refused("tensormap x_map: x's data pointer 0x100004 is not aligned to 16 "
          "bytes, as TMA requires");
  SetUp();
  tensors[0].strides = {192, 2}; // fine for x: contiguous_last is false
  refused("tensormap x_map: x.stride[1] = 2 but TMA needs the innermost "
          "dimension contiguous (stride 1)");
}

TEST_F(TileCopy, EmptyPlanPacksTensorMapsWithoutEncoding) {
  // M = 0: grid.y = 0, nothing launches, so nothing is encoded and no
  // driver is needed; the maps keep their ABI size and alignment.
  tensors = {Tensor(0, ATTNC_DTYPE_F32, {0, 96}),
             Tensor(0, ATTNC_DTYPE_F32, {0, 96})};
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(attnc_plan_is_empty(plan), 1);
  ASSERT_EQ(attnc_plan_num_params(plan), 4u);
  const void *first, *bytes;
  size_t size;
  ASSERT_EQ(attnc_plan_param(plan, 0, &first, &size), ATTNC_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 128, 0u);
  for (size_t i : {2, 3}) {
    ASSERT_EQ(attnc_plan_param(plan, i, &bytes, &size), ATTNC_OK);
    EXPECT_EQ(size, 128u);
    // 64 is what the driver needs; 128 is alignof(CUtensorMap) in cuda.h.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes) % 128, 0u);
    std::vector<unsigned char> zero(128, 0);
    EXPECT_EQ(std::memcmp(bytes, zero.data(), 128), 0);
  }
  // x, y at 0 and 8; the maps at 128 and 256.
  ASSERT_EQ(attnc_plan_param(plan, 3, &bytes, &size), ATTNC_OK);
  EXPECT_EQ(static_cast<const char *>(bytes) - static_cast<const char *>(first),
            256);
  EXPECT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_OK);
}

/// row_sum: a persistent kernel with a num_sms grid and a zeroed workspace
/// of num_sms*C*4 bytes, and no tensormap: CPU only with the num_sms option.
class RowSum : public Plans {
protected:
  void SetUp() override {
    load("persistent", "row_sum");
    tensors = {Tensor(0x1000000, ATTNC_DTYPE_F32, {1000, 300}),
               Tensor(0x2000000, ATTNC_DTYPE_F32, {1000}),
               Tensor(0x3000000, ATTNC_DTYPE_I8, {132 * 300 * 4})};
    numSMs = 132;
  }
};

TEST_F(RowSum, NumSMsFromTheOptions) {
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 132);
  EXPECT_EQ(grid[1], 1);
  uint64_t bytes;
  ASSERT_EQ(attnc_plan_workspace_bytes(plan, 2, &bytes), ATTNC_OK);
  EXPECT_EQ(bytes, 132u * 300 * 4);
  EXPECT_EQ(attnc_plan_workspace_bytes(plan, 1, &bytes),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(param<uint64_t>(2), 0x3000000u); // the workspace's pointer
  EXPECT_EQ(param<int64_t>(3), 1000);
  EXPECT_EQ(param<int32_t>(4), 300);
  // The same call planned for a 16-SM device needs less.
  numSMs = 16;
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 16);
  ASSERT_EQ(attnc_plan_workspace_bytes(plan, 2, &bytes), ATTNC_OK);
  EXPECT_EQ(bytes, 16u * 300 * 4);
}

TEST_F(RowSum, WorkspaceOverflow) {
  numSMs = 1ll << 40;
  refused("grid.x = 1099511627776 (num_sms) exceeds the CUDA limit of "
          "2147483647");
}

TEST_F(RowSum, LaunchWithoutDriverFailsCleanly) {
  ASSERT_EQ(create(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(attnc_plan_launch(plan, nullptr), ATTNC_ERROR_NO_DRIVER);
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
  setenv("ATTNC_LIBCUDA", noDriver, 1);
}

} // namespace
