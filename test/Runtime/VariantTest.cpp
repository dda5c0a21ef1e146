//===- VariantTest.cpp - A kernel's size variants: manifest rules, plans --===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A kernel entry may list `variants` (docs/abi.md "Variants"): other kernels
// of the module taking the same arguments, each with the sizes (`when`) it
// runs. Tested without a driver: the loader's rules with their messages, the
// C API's view of them, and which kernel a plan picks: the first variant
// whose conditions the sizes meet and that accepts the arguments, else the
// kernel.
//
//===----------------------------------------------------------------------===//

#include "TensorArgs.h"

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using attnc_test::ModulePtr;
using attnc_test::parse;
using attnc_test::Tensor;

// Before any test: whatever libcuda the machine has is never loaded.
const int noDriverSet = setenv("ATTNC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);

using PlanPtr = std::unique_ptr<attnc_plan, void (*)(attnc_plan *)>;

/// A kernel `NAME` of x [N, 64] -> y [N, 64] (f32) with block BLOCK, rows
/// aligned to ALIGN bytes, and EXTRA keys (variants) before its params.
std::string kernel(const std::string &name, int block, int align,
                   const std::string &extra = "") {
  std::string a = std::to_string(align);
  return R"({"name": ")" + name + R"(", "cubin": ")" + name + R"(.cubin", )" +
         extra + R"("block": [)" + std::to_string(block) +
         R"(, 1, 1], "grid": [[{"sym": "N", "ceil_div": )" +
         std::to_string(block) + R"(}], [1], [1]], "params": [)" +
         R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )" +
         R"("role": "input", "align": )" + a + R"(, "row_align": )" + a +
         "}, " +
         R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )" +
         R"("role": "output", "align": )" + a + "}, " +
         R"({"name": "N", "kind": "size", "dtype": "i64"}]})";
}

/// `k_huge` runs N in [65536, 131072], `k_long` (16-byte rows; k takes
/// 4-byte ones) the rest from N = 4096 on, `k` the rest and what the
/// variants refuse.
const std::string variantsKey =
    R"("variants": [)"
    R"({"kernel": "k_huge", "when": [{"kind": "min", "sym": "N", "value": 65536}, )"
    R"({"kind": "max", "sym": "N", "value": 131072}]}, )"
    R"({"kernel": "k_long", "when": [{"kind": "min", "sym": "N", "value": 4096}]}], )";

std::string moduleOf(const std::string &kernels) {
  return R"({"attnc_manifest_version": 2, "module": "m", "kernels": [)" +
         kernels + "]}";
}

const std::string threeKernels = kernel("k", 64, 4, variantsKey) + ", " +
                                 kernel("k_long", 128, 16) + ", " +
                                 kernel("k_huge", 256, 4);

struct Kernels {
  ModulePtr m;
  attnc_kernel *k = nullptr, *kLong = nullptr, *kHuge = nullptr;
};

void load(Kernels &ks) {
  std::string error;
  ASSERT_EQ(parse(moduleOf(threeKernels), error, &ks.m), ATTNC_OK) << error;
  ASSERT_EQ(attnc_module_get_kernel(ks.m.get(), "k", &ks.k), ATTNC_OK);
  ASSERT_EQ(attnc_module_get_kernel(ks.m.get(), "k_long", &ks.kLong), ATTNC_OK);
  ASSERT_EQ(attnc_module_get_kernel(ks.m.get(), "k_huge", &ks.kHuge), ATTNC_OK);
}

TEST(VariantManifest, VariantsAndConditionsAreResolved) {
  Kernels ks;
  ASSERT_NO_FATAL_FAILURE(load(ks));
  ASSERT_EQ(attnc_kernel_num_variants(ks.k), 2u);
  EXPECT_EQ(attnc_kernel_variant(ks.k, 0), ks.kHuge);
  EXPECT_EQ(attnc_kernel_variant(ks.k, 1), ks.kLong);
  EXPECT_EQ(attnc_kernel_variant(ks.k, 2), nullptr);
  EXPECT_EQ(attnc_kernel_num_variants(ks.kLong), 0u);
  EXPECT_EQ(attnc_kernel_num_variants(nullptr), 0u);
  ASSERT_EQ(attnc_kernel_variant_num_conditions(ks.k, 0), 2u);
  EXPECT_EQ(attnc_kernel_variant_num_conditions(ks.k, 1), 1u);
  EXPECT_EQ(attnc_kernel_variant_num_conditions(ks.k, 2), 0u);
  attnc_constraint c;
  ASSERT_EQ(attnc_kernel_variant_condition(ks.k, 1, 0, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_MIN);
  EXPECT_STREQ(c.lhs, "N");
  EXPECT_EQ(c.rhs, nullptr);
  EXPECT_EQ(c.value, 4096);
  ASSERT_EQ(attnc_kernel_variant_condition(ks.k, 0, 1, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_MAX);
  EXPECT_EQ(c.value, 131072);
  EXPECT_EQ(attnc_kernel_variant_condition(ks.k, 1, 1, &c),
            ATTNC_ERROR_INVALID_ARGUMENT);
  // A variant may come before the kernel that names it.
  std::string error;
  ModulePtr m;
  EXPECT_EQ(parse(moduleOf(kernel("k_long", 128, 16) + ", " +
                           kernel("k_huge", 256, 4) + ", " +
                           kernel("k", 64, 4, variantsKey)),
                  error, &m),
            ATTNC_OK)
      << error;
}

struct Case {
  std::string kernels;
  const char *message;
};

TEST(VariantManifest, EachRuleHasItsMessage) {
  auto with = [](const std::string &variants) {
    return kernel("k", 64, 4, variants) + ", " + kernel("k_long", 128, 16);
  };
  const std::string when =
      R"("when": [{"kind": "min", "sym": "N", "value": 4096}])";
  const Case cases[] = {
      {with(R"("variants": {}, )"),
       "kernels[0].variants: expected an array, got an object"},
      {with(R"("variants": ["k_long"], )"),
       "kernels[0].variants[0]: expected an object, got a string"},
      {with(R"("variants": [{)" + when + "}], "),
       "kernels[0].variants[0]: missing required key 'kernel'"},
      {with(R"("variants": [{"kernel": "", )" + when + "}], "),
       "kernels[0].variants[0].kernel: empty kernel name"},
      {with(R"("variants": [{"kernel": "k_long"}], )"),
       "kernels[0].variants[0]: missing required key 'when'"},
      {with(R"("variants": [{"kernel": "k_long", "when": []}], )"),
       "kernels[0].variants[0].when: expected at least one constraint (a "
       "variant with none would run every call)"},
      {with(R"("variants": [{"kernel": "k_long", "when": [{"kind": "above", )"
            R"("sym": "N", "value": 1}]}], )"),
       "kernels[0].variants[0].when[0].kind: unknown constraint kind 'above' "
       "(expected divisible, equal, min, max, ratio or at_most)"},
      {with(R"("variants": [{"kernel": "k_long", "when": [{"kind": "min", )"
            R"("sym": "M", "value": 1}]}], )"),
       "kernels[0].variants[0].when[0].sym: variant condition symbol 'M' is "
       "not a symbol of any tensor shape, so no argument can bind it"},
      {with(R"("variants": [{"kernel": "k_long", "when": [{"kind": )"
            R"("divisible", "lhs": "N", "rhs": "P"}]}], )"),
       "kernels[0].variants[0].when[0].rhs: variant condition symbol 'P' is "
       "not a symbol of any tensor shape, so no argument can bind it"},
      {with(R"("variants": [{"kernel": "k", )" + when + "}], "),
       "kernels[0].variants[0].kernel: kernel 'k' names itself as its "
       "variant"},
      {with(R"("variants": [{"kernel": "nope", )" + when + "}], "),
       "kernels[0].variants[0].kernel: variant 'nope' of kernel 'k' is not a "
       "kernel of this module (it has: k, k_long)"},
      {kernel("k", 64, 4,
              R"("variants": [{"kernel": "k_long", )" + when + "}], ") +
           ", " +
           kernel("k_long", 128, 16,
                  R"("variants": [{"kernel": "k", )" + when + "}], "),
       "kernels[0].variants[0].kernel: variant kernel 'k_long' of 'k' has "
       "variants of its own ('k'); a plan chooses only once"},
      {kernel("k", 64, 4,
              R"("variants": [{"kernel": "k_half", )" + when + "}], ") +
           ", " +
           R"({"name": "k_half", "cubin": "k_half.cubin", "block": [64, 1, 1], )"
           R"("grid": [[1], [1], [1]], "params": [)"
           R"({"name": "x", "kind": "tensor", "dtype": "f16", "shape": ["N", 64], )"
           R"("role": "input"}, )"
           R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 64], )"
           R"("role": "output"}]})",
       "kernels[0].variants[0].kernel: variant kernel 'k_half' must take the "
       "arguments of 'k' (only align and row_align may differ): parameter "
       "'x' has dtype f32 in 'k' but f16 in 'k_half'"},
  };
  for (const Case &c : cases) {
    std::string error;
    EXPECT_EQ(parse(moduleOf(c.kernels), error), ATTNC_ERROR_MANIFEST)
        << c.kernels;
    EXPECT_EQ(error, std::string("manifest: ") + c.message) << c.kernels;
  }
}

/// The kernel a plan of K launches for TENSORS, or null when planning
/// fails.
const attnc_kernel *plannedFor(const attnc_kernel *k,
                               const std::vector<attnc_tensor> &tensors) {
  attnc_plan *plan = nullptr;
  if (attnc_plan_create(k, tensors.data(), tensors.size(), nullptr, 0, &plan) !=
      ATTNC_OK)
    return nullptr;
  PlanPtr owner(plan, attnc_plan_destroy);
  return attnc_plan_kernel(plan);
}

/// The kernel a plan of K launches for x, y [n, 64] (row stride `stride`
/// floats), or null when planning fails.
const attnc_kernel *planned(const attnc_kernel *k, int64_t n,
                            int64_t stride = 64,
                            attnc_dtype dtype = ATTNC_DTYPE_F32) {
  Tensor x(0x100000, dtype, {n, 64}), y(0x40000000, ATTNC_DTYPE_F32, {n, 64});
  x.strides = {stride, 1};
  return plannedFor(k, {x.desc(), y.desc()});
}

TEST(VariantPlan, TheFirstVariantWhoseConditionsHoldRuns) {
  Kernels ks;
  ASSERT_NO_FATAL_FAILURE(load(ks));
  EXPECT_EQ(planned(ks.k, 1), ks.k);
  EXPECT_EQ(planned(ks.k, 4095), ks.k);
  EXPECT_EQ(planned(ks.k, 4096), ks.kLong);
  EXPECT_EQ(planned(ks.k, 65535), ks.kLong);
  // Both variants' conditions hold: the first listed runs.
  EXPECT_EQ(planned(ks.k, 65536), ks.kHuge);
  EXPECT_EQ(planned(ks.k, 131072), ks.kHuge);
  // Past k_huge's bound: the next variant whose conditions hold.
  EXPECT_EQ(planned(ks.k, 131073), ks.kLong);
  // A kernel without variants runs its calls itself.
  EXPECT_EQ(planned(ks.kLong, 65536), ks.kLong);
  // The plan's grid is the variant's (128-row blocks).
  Tensor x(0x100000, ATTNC_DTYPE_F32, {5000, 64}),
      y(0x40000000, ATTNC_DTYPE_F32, {5000, 64});
  attnc_tensor descs[] = {x.desc(), y.desc()};
  attnc_plan *plan = nullptr;
  ASSERT_EQ(attnc_plan_create(ks.k, descs, 2, nullptr, 0, &plan), ATTNC_OK)
      << attnc_last_error();
  PlanPtr owner(plan, attnc_plan_destroy);
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  EXPECT_EQ(grid[0], 40); // ceil(5000 / 128)
}

TEST(VariantPlan, ARefusingVariantLeavesTheCallToTheKernel) {
  Kernels ks;
  ASSERT_NO_FATAL_FAILURE(load(ks));
  // 260-byte rows: k_long needs 16-byte rows, k takes 4-byte ones.
  EXPECT_EQ(planned(ks.k, 4096, 65), ks.k);
  // k_huge takes them.
  EXPECT_EQ(planned(ks.k, 65536, 65), ks.kHuge);
  // Refused by all: the message and status are the kernel's own.
  EXPECT_EQ(planned(ks.k, 4096, 64, ATTNC_DTYPE_F16), nullptr);
  Tensor x(0x100000, ATTNC_DTYPE_F16, {4096, 64}),
      y(0x40000000, ATTNC_DTYPE_F32, {4096, 64});
  attnc_tensor descs[] = {x.desc(), y.desc()};
  attnc_plan *plan = nullptr;
  EXPECT_EQ(attnc_plan_create(ks.k, descs, 2, nullptr, 0, &plan),
            ATTNC_ERROR_VALIDATION);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(std::string(attnc_last_error()).rfind("k: ", 0), 0u)
      << attnc_last_error();
  // Too few tensors to bind the sizes: no variant, the kernel refuses.
  EXPECT_EQ(attnc_plan_create(ks.k, descs, 1, nullptr, 0, &plan),
            ATTNC_ERROR_VALIDATION);
  EXPECT_EQ(std::string(attnc_last_error()).rfind("k: ", 0), 0u)
      << attnc_last_error();
}

/// A kernel `NAME` over a ragged batch: x, y [T, 64] (f32) hold the rows of
/// the B sequences s [B] counts, with EXTRA keys (variants, constraints).
std::string raggedKernel(const std::string &name, const std::string &extra) {
  return R"({"name": ")" + name + R"(", "cubin": ")" + name + R"(.cubin", )" +
         extra +
         R"("block": [64, 1, 1], "grid": [[{"sym": "T", "ceil_div": 64}], )"
         R"([1], [1]], "params": [)"
         R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["T", 64], )"
         R"("role": "input"}, )"
         R"({"name": "s", "kind": "tensor", "dtype": "i32", "shape": ["B"], )"
         R"("role": "input"}, )"
         R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["T", 64], )"
         R"("role": "output"}]})";
}

/// The kernel a plan of K launches for T rows in B sequences, or null.
const attnc_kernel *plannedRagged(const attnc_kernel *k, int64_t t, int64_t b) {
  Tensor x(0x100000, ATTNC_DTYPE_F32, {t, 64}),
      s(int64_t(1) << 60, ATTNC_DTYPE_I32, {b}),
      y(0x40000000, ATTNC_DTYPE_F32, {t, 64});
  return plannedFor(k, {x.desc(), s.desc(), y.desc()});
}

// A ragged batch's kernel for short sequences runs where the mean length
// T / B is at most 16 rows: at_most(T, B, 16), T <= 16 * B.
TEST(VariantPlan, AtMostBoundsARowsPerSequenceMean) {
  const std::string atMost =
      R"({"kind": "at_most", "lhs": "T", "rhs": "B", "value": 16})";
  std::string error;
  ModulePtr m;
  ASSERT_EQ(parse(moduleOf(raggedKernel("r", R"("variants": [{"kernel": )"
                                             R"("r_short", "when": [)" +
                                                 atMost + "]}], ") +
                           ", " + raggedKernel("r_short", "")),
                  error, &m),
            ATTNC_OK)
      << error;
  attnc_kernel *r = nullptr, *rShort = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "r", &r), ATTNC_OK);
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "r_short", &rShort), ATTNC_OK);
  attnc_constraint c;
  ASSERT_EQ(attnc_kernel_variant_condition(r, 0, 0, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_AT_MOST);
  EXPECT_STREQ(c.lhs, "T");
  EXPECT_STREQ(c.rhs, "B");
  EXPECT_EQ(c.value, 16);
  EXPECT_EQ(plannedRagged(r, 160, 10), rShort);
  EXPECT_EQ(plannedRagged(r, 161, 10), r);
  EXPECT_EQ(plannedRagged(r, 1, 1), rShort);
  EXPECT_EQ(plannedRagged(r, 17, 1), r);
  // No sequence: only an empty batch is short.
  EXPECT_EQ(plannedRagged(r, 0, 0), rShort);
  EXPECT_EQ(plannedRagged(r, 5, 0), r);
  // 16 * B past int64 bounds every T.
  EXPECT_EQ(plannedRagged(r, 1 << 20, (int64_t(1) << 59) + 1), rShort)
      << attnc_last_error();

  // As a kernel's own constraint, with the rule in its refusal.
  ASSERT_EQ(
      parse(moduleOf(raggedKernel("r", R"("constraints": [)" + atMost + "], ")),
            error, &m),
      ATTNC_OK)
      << error;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "r", &r), ATTNC_OK);
  EXPECT_EQ(plannedRagged(r, 160, 10), r);
  EXPECT_EQ(plannedRagged(r, 161, 10), nullptr);
  EXPECT_EQ(std::string(attnc_last_error()),
            "r: T (= 161) must be at most 16 times B (= 10)");
}

} // namespace
