//===- SizeRuleTest.cpp - Size rules: manifest, queries, evaluation -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the manifest's size rules on the split-KV fixture
// (Inputs/split: a partial kernel whose o_partial and lse_partial have a
// `splits` dimension the caller chooses, and its combine kernel): the
// queries, the kv_splits rule's value for shapes worked out by hand from
// docs/abi.md with an explicit SM count, how the given tensors bind the
// symbols it reads, and one case per manifest rule on size rules. CPU only:
// no driver is ever loaded (ATTNC_LIBCUDA points nowhere).
//
//===----------------------------------------------------------------------===//

#include "TensorArgs.h"

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using attnc_test::descsOf;
using attnc_test::Tensor;

const std::string inputs = ATTNC_TEST_INPUTS;
const int noDriverSet = setenv("ATTNC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);

/// q, k, v, o_partial, lse_partial of a call with SPLITS splits.
std::vector<Tensor> splitArgs(int64_t b, int64_t h, int64_t hkv, int64_t sq,
                              int64_t skv, int64_t splits = 1) {
  return {
      Tensor(0x100000, ATTNC_DTYPE_BF16, {b, h, sq, 128}),
      Tensor(0x10000000, ATTNC_DTYPE_BF16, {b, hkv, skv, 128}),
      Tensor(0x20000000, ATTNC_DTYPE_BF16, {b, hkv, skv, 128}),
      Tensor(0x30000000, ATTNC_DTYPE_F32, {splits, b, h, sq, 128}),
      Tensor(0x40000000, ATTNC_DTYPE_F32, {splits, b, h, sq}),
  };
}

class SizeRules : public ::testing::Test {
protected:
  attnc_module *module = nullptr;
  attnc_kernel *partial = nullptr, *combine = nullptr;

  void SetUp() override {
    ASSERT_EQ(attnc_module_load((inputs + "/split").c_str(), &module), ATTNC_OK)
        << attnc_last_error();
    ASSERT_EQ(attnc_module_get_kernel(module, "attn_partial", &partial),
              ATTNC_OK);
    ASSERT_EQ(attnc_module_get_kernel(module, "attn_combine", &combine),
              ATTNC_OK);
  }
  void TearDown() override { attnc_module_unload(module); }

  /// The rule's value for the first N of TENSORS (all by default), on an
  /// H100's 132 SMs.
  attnc_status splits(const std::vector<Tensor> &tensors, int64_t &value,
                      size_t n = SIZE_MAX, int32_t numSMs = 132) {
    std::vector<attnc_tensor> descs = descsOf(tensors);
    value = -1;
    return attnc_kernel_size_rule(partial, "splits", descs.data(),
                                  std::min(n, descs.size()), numSMs, &value);
  }
  int64_t splitsOf(const std::vector<Tensor> &tensors, size_t n = SIZE_MAX) {
    int64_t value;
    EXPECT_EQ(splits(tensors, value, n), ATTNC_OK) << attnc_last_error();
    return value;
  }
  void refused(const std::vector<Tensor> &tensors, size_t n,
               const std::string &message) {
    int64_t value;
    EXPECT_EQ(splits(tensors, value, n), ATTNC_ERROR_VALIDATION) << message;
    EXPECT_EQ(value, -1);
    EXPECT_EQ(attnc_last_error(), "attn_partial: " + message);
  }
};

TEST_F(SizeRules, Queries) {
  // The combine waits for the partials and is launched programmatically.
  EXPECT_EQ(attnc_kernel_programmatic_launch(combine), 1);
  EXPECT_EQ(attnc_kernel_programmatic_launch(partial), 0);
  EXPECT_EQ(attnc_kernel_programmatic_launch(nullptr), 0);
  // The partial kernel names the function's unsplit twin, which a host runs
  // when the rule gives one split; neither the combine nor the twin has one.
  attnc_kernel *twin = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(module, "attn_unsplit", &twin), ATTNC_OK);
  EXPECT_EQ(attnc_kernel_unsplit(partial), twin);
  EXPECT_EQ(attnc_kernel_unsplit(combine), nullptr);
  EXPECT_EQ(attnc_kernel_unsplit(twin), nullptr);
  EXPECT_EQ(attnc_kernel_unsplit(nullptr), nullptr);
  ASSERT_EQ(attnc_kernel_num_size_rules(partial), 1u);
  EXPECT_EQ(attnc_kernel_num_size_rules(combine), 0u);
  EXPECT_EQ(attnc_kernel_num_size_rules(nullptr), 0u);
  attnc_size_rule r;
  ASSERT_EQ(attnc_kernel_size_rule_info(partial, 0, &r), ATTNC_OK);
  EXPECT_EQ(r.kind, ATTNC_SIZE_RULE_KV_SPLITS);
  EXPECT_STREQ(r.symbol, "splits");
  EXPECT_EQ(r.max, 128);
  EXPECT_EQ(r.ctas_per_sm, 2);
  ASSERT_EQ(r.num_kv_tiles, 1u);
  attnc_factor f;
  ASSERT_EQ(attnc_kernel_size_rule_factor(partial, 0, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_SYMBOL);
  EXPECT_STREQ(f.symbol, "Skv");
  EXPECT_EQ(f.ceil_div, 64);
  EXPECT_EQ(attnc_kernel_size_rule_factor(partial, 0, 1, &f),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(attnc_last_error(),
               "attnc_kernel_size_rule_factor: the size rule of 'splits' has "
               "1 kv_tiles factors, not 2");
  EXPECT_EQ(attnc_kernel_size_rule_info(partial, 1, &r),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_size_rule_info(combine, 0, &r),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_size_rule_factor(partial, 1, 0, &f),
            ATTNC_ERROR_INVALID_ARGUMENT);
}

// ctas = ceil(Sq / 16) * H * B with one split, tiles = ceil(Skv / 64),
// slots = 132 * 2 = 264. The value is the most splits of one wave,
// min(max, floor(264 / ctas), tiles), lowered to the fewest splits with
// the same tiles per split.
TEST_F(SizeRules, KVSplitsValues) {
  // ctas = 32, tiles = 128: 8 splits of 16 tiles fill 256 of 264 slots.
  EXPECT_EQ(splitsOf(splitArgs(1, 32, 8, 1, 8192)), 8);
  // ctas = 128: 2 splits (256 blocks).
  EXPECT_EQ(splitsOf(splitArgs(4, 32, 8, 1, 8192)), 2);
  // ctas = 4096 > 264: the grid alone fills the device.
  EXPECT_EQ(splitsOf(splitArgs(128, 32, 8, 1, 8192)), 1);
  // ctas = 132 is half the slots: 2 splits are one wave; 133 is past half:
  // a second split would start a second wave.
  EXPECT_EQ(splitsOf(splitArgs(132, 1, 1, 1, 8192)), 2);
  EXPECT_EQ(splitsOf(splitArgs(133, 1, 1, 1, 8192)), 1);
  // One K/V tile: nothing to split.
  EXPECT_EQ(splitsOf(splitArgs(1, 32, 8, 1, 64)), 1);
  // No key at all, and no row at all.
  EXPECT_EQ(splitsOf(splitArgs(1, 32, 8, 1, 0)), 1);
  EXPECT_EQ(splitsOf(splitArgs(0, 32, 8, 1, 8192)), 1);
  // A long prompt: ceil(Sq / 16) query tiles fill the device.
  EXPECT_EQ(splitsOf(splitArgs(1, 32, 8, 128, 8192)), 1);
  // ctas = 12, tiles = 100: 22 splits fit one wave, with ceil(100 / 22) =
  // 5 tiles each; 20 splits have 5 tiles each too, in fewer blocks.
  EXPECT_EQ(splitsOf(splitArgs(1, 12, 4, 1, 6400)), 20);
  // ctas = 1, tiles = 16384: max = 128 bounds it.
  EXPECT_EQ(splitsOf(splitArgs(1, 1, 1, 1, 1 << 20)), 128);
  // Fewer SMs: ctas = 32 of 2 * 16 slots fills the device.
  int64_t value;
  ASSERT_EQ(splits(splitArgs(1, 32, 8, 1, 8192), value, SIZE_MAX, 16),
            ATTNC_OK);
  EXPECT_EQ(value, 1);
}

TEST_F(SizeRules, BindsWhatIsGiven) {
  // The outputs' splits extent is not read: any value, or no outputs.
  std::vector<Tensor> args = splitArgs(1, 32, 8, 1, 8192, 5);
  EXPECT_EQ(splitsOf(args), 8);
  args[4] = Tensor(0x40000000, ATTNC_DTYPE_F32, {9, 1, 32, 1});
  EXPECT_EQ(splitsOf(args), 8);
  EXPECT_EQ(splitsOf(args, 3), 8);
  EXPECT_EQ(splitsOf(args, 4), 8);
  // The rest of a given tensor binds as in a plan.
  args[3] = Tensor(0x30000000, ATTNC_DTYPE_F32, {5, 2, 32, 1, 128});
  refused(args, 4, "o_partial.shape[1] = 2 but B = 1 from q.shape[0]");
  args = splitArgs(1, 32, 8, 1, 8192);
  args[1] = Tensor(0x10000000, ATTNC_DTYPE_BF16, {1, 8, 8192, 64});
  refused(args, 3, "k.shape[3] = 64 but the kernel was compiled for 128");
  args[1] = Tensor(0x10000000, ATTNC_DTYPE_F16, {1, 8, 8192, 128});
  refused(args, 3, "k has dtype f16 but the kernel expects bf16");
  args = splitArgs(1, 32, 8, 1, 8192);
  args[0].sizes[2] = -1;
  refused(args, 3, "q.shape[2] = -1 is negative");
  // Strides and pointers are not looked at.
  args = splitArgs(1, 32, 8, 1, 8192);
  args[0].data = 0;
  args[1].strides = {0, 0, 0, 0};
  args[2].data = 3;
  EXPECT_EQ(splitsOf(args, 3), 8);
  // Constraints are a plan's: the rule only reads symbols.
  args = splitArgs(1, 32, 5, 1, 8192);
  EXPECT_EQ(splitsOf(args, 3), 8);
}

TEST_F(SizeRules, NeedsEverySymbolItReads) {
  std::vector<Tensor> args = splitArgs(1, 32, 8, 1, 8192);
  refused(args, 1,
          "size rule of splits needs Skv, which no tensor given binds (pass "
          "k or v)");
  refused(args, 0,
          "size rule of splits needs Sq, which no tensor given binds (pass q "
          "or o_partial or lse_partial)");
  args.push_back(args.back());
  refused(args, SIZE_MAX,
          "size rule of splits: expected at most 5 tensors (q, k, v, "
          "o_partial, lse_partial), got 6");
}

TEST_F(SizeRules, Errors) {
  std::vector<Tensor> args = splitArgs(1, 32, 8, 1, 8192);
  std::vector<attnc_tensor> descs = descsOf(args);
  int64_t value;
  EXPECT_EQ(attnc_kernel_size_rule(partial, "Sq", descs.data(), 3, 132, &value),
            ATTNC_ERROR_NOT_FOUND);
  EXPECT_STREQ(attnc_last_error(), "attn_partial: no size rule for 'Sq' (the "
                                   "kernel has rules for splits)");
  EXPECT_EQ(attnc_kernel_size_rule(combine, "splits", nullptr, 0, 132, &value),
            ATTNC_ERROR_NOT_FOUND);
  EXPECT_STREQ(attnc_last_error(),
               "attn_combine: no size rule for 'splits' (the kernel has none)");
  EXPECT_EQ(
      attnc_kernel_size_rule(partial, "splits", descs.data(), 3, -1, &value),
      ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      attnc_kernel_size_rule(partial, "splits", descs.data(), 3, 132, nullptr),
      ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      attnc_kernel_size_rule(nullptr, "splits", descs.data(), 3, 132, &value),
      ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_size_rule(partial, "splits", nullptr, 3, 132, &value),
            ATTNC_ERROR_INVALID_ARGUMENT);
  // num_sms = 0 asks the driver, after the tensors are checked.
  EXPECT_EQ(
      attnc_kernel_size_rule(partial, "splits", descs.data(), 1, 0, &value),
      ATTNC_ERROR_VALIDATION);
  EXPECT_EQ(
      attnc_kernel_size_rule(partial, "splits", descs.data(), 3, 0, &value),
      ATTNC_ERROR_NO_DRIVER);
  EXPECT_EQ(std::string(attnc_last_error())
                .rfind("attn_partial: the size rule of splits needs the "
                       "device's SM count but it cannot be queried: ",
                       0),
            0u)
      << attnc_last_error();
}

/// The fixture's manifest with FROM replaced by TO, which must occur.
std::string fixtureWith(const std::string &from, const std::string &to) {
  std::ifstream in(inputs + "/split/manifest.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    s.replace(at, from.size(), to);
  return s;
}

attnc_status parse(const std::string &text, std::string &error) {
  attnc_module *m = nullptr;
  attnc_status st = attnc_manifest_parse(text.data(), text.size(), nullptr, &m);
  error = attnc_last_error();
  attnc_module_unload(m);
  return st;
}

TEST(SizeRuleManifest, EachRuleHasItsMessage) {
  const std::string rule =
      R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": )"
      R"([{"sym": "Skv", "ceil_div": 64}], "max": 128, "ctas_per_sm": 2})";
  struct Case {
    std::string to, message;
  } cases[] = {
      {R"({"kind": "kv_split", "symbol": "splits"})",
       "kernels[0].size_rules[0].kind: unknown size rule kind 'kv_split' "
       "(expected kv_splits)"},
      {R"({"symbol": "splits"})",
       "kernels[0].size_rules[0]: missing required key 'kind'"},
      {R"("splits")",
       "kernels[0].size_rules[0]: expected an object, got a string"},
      {R"({"kind": "kv_splits", "symbol": "S", "kv_tiles": [1], "max": 1, )"
       R"("ctas_per_sm": 1})",
       "kernels[0].size_rules[0].symbol: size rule symbol 'S' is not a "
       "symbol of any tensor shape, so no argument can bind it"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": ["T"], )"
       R"("max": 1, "ctas_per_sm": 1})",
       "kernels[0].size_rules[0].kv_tiles[0]: size rule symbol 'T' is not a "
       "symbol of any tensor shape, so no argument can bind it"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": ["splits"], )"
       R"("max": 1, "ctas_per_sm": 1})",
       "kernels[0].size_rules[0].kv_tiles[0]: the K/V tiles of the size "
       "rule of 'splits' use its own symbol"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": [], )"
       R"("max": 1, "ctas_per_sm": 1})",
       "kernels[0].size_rules[0].kv_tiles: expected at least one factor"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": [1], )"
       R"("max": 129, "ctas_per_sm": 1})",
       "kernels[0].size_rules[0].max: expected an integer <= 128, got 129"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": [1], )"
       R"("max": 0, "ctas_per_sm": 1})",
       "kernels[0].size_rules[0].max: expected an integer >= 1, got 0"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": [1], )"
       R"("max": 1, "ctas_per_sm": 0})",
       "kernels[0].size_rules[0].ctas_per_sm: expected an integer >= 1, got "
       "0"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": [1], )"
       R"("max": 1})",
       "kernels[0].size_rules[0]: missing required key 'ctas_per_sm'"},
      {R"({"kind": "kv_splits", "symbol": "", "kv_tiles": [1], "max": 1, )"
       R"("ctas_per_sm": 1})",
       "kernels[0].size_rules[0].symbol: empty size symbol"},
      {rule + ", " + rule,
       "kernels[0].size_rules[1].symbol: a second size rule for 'splits'"},
  };
  std::string error;
  EXPECT_EQ(parse(fixtureWith(rule, rule), error), ATTNC_OK) << error;
  for (const Case &c : cases) {
    EXPECT_EQ(parse(fixtureWith(rule, c.to), error), ATTNC_ERROR_MANIFEST)
        << c.message;
    EXPECT_EQ(error, "manifest: " + c.message);
  }
  EXPECT_EQ(parse(fixtureWith(R"("size_rules": [)", R"("size_rules": {"x": [)"),
                  error),
            ATTNC_ERROR_MANIFEST);
  // A rule is optional (without an unsplit kernel to choose by it).
  std::string noRule = fixtureWith(rule, "");
  noRule.erase(noRule.find(R"("unsplit": "attn_unsplit",)"),
               std::string(R"("unsplit": "attn_unsplit",)").size());
  EXPECT_EQ(parse(noRule, error), ATTNC_OK) << error;
}

// `unsplit` names another kernel of the module, itself without one, and
// the kernel naming it has the K/V split rule that chooses between them.
TEST(SizeRuleManifest, UnsplitRules) {
  const std::string named = R"("unsplit": "attn_unsplit")";
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {named, R"("unsplit": "attn_partial")",
       "kernels[0].unsplit: kernel 'attn_partial' names itself as its "
       "unsplit kernel"},
      {named, R"("unsplit": "nope")",
       "kernels[0].unsplit: unsplit kernel 'nope' of 'attn_partial' is not a "
       "kernel of this module (it has: attn_partial, attn_combine, "
       "attn_unsplit)"},
      {named, R"("unsplit": "")", "kernels[0].unsplit: empty kernel name"},
      {named, R"("unsplit": 3)",
       "kernels[0].unsplit: expected a string, got a number"},
      {R"("name": "attn_unsplit",)",
       R"("name": "attn_unsplit", "unsplit": "attn_partial",)",
       "kernels[0].unsplit: unsplit kernel 'attn_unsplit' of 'attn_partial' "
       "names an unsplit kernel of its own ('attn_partial')"},
      {R"({"kind": "kv_splits", "symbol": "splits", "kv_tiles": )"
       R"([{"sym": "Skv", "ceil_div": 64}], "max": 128, "ctas_per_sm": 2})",
       "",
       "kernels[0].unsplit: kernel 'attn_partial' names an unsplit kernel but "
       "has no K/V split size rule to choose it by"},
  };
  std::string error;
  for (const Case &c : cases) {
    EXPECT_EQ(parse(fixtureWith(c.from, c.to), error), ATTNC_ERROR_MANIFEST)
        << c.message;
    EXPECT_EQ(error, "manifest: " + c.message);
  }
}

} // namespace
