//===- ManifestTest.cpp - Manifest parsing and kernel queries -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the CPU half of the runtime's C API: loading the fixture
// manifests under Inputs/, querying kernels, parameters, grid and workspace
// factors, tensormaps and constraints, and one test per manifest rule that
// checks the error message names the JSON path and the rule. Malformed
// kernels are made by editing one fragment of a valid kernel, so that each
// case breaks exactly one rule.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <unistd.h>

namespace {

const std::string inputs = ATTNC_TEST_INPUTS;
/// The runtime's limit on manifest.json (docs/abi.md).
constexpr size_t kMaxBytes = size_t(64) << 20;

struct ModuleDeleter {
  void operator()(attnc_module *m) const { attnc_module_unload(m); }
};
using ModulePtr = std::unique_ptr<attnc_module, ModuleDeleter>;

ModulePtr loadOrDie(const std::string &dir) {
  attnc_module *m = nullptr;
  attnc_status st = attnc_module_load(dir.c_str(), &m);
  EXPECT_EQ(st, ATTNC_OK) << attnc_last_error();
  return ModulePtr(m);
}

TEST(Manifest, LoadsAttentionFixture) {
  ModulePtr m = loadOrDie(inputs + "/attention");
  ASSERT_TRUE(m);
  EXPECT_STREQ(attnc_module_name(m.get()), "gqa_attention");
  EXPECT_STREQ(attnc_module_chip(m.get()), "sm_90a");
  ASSERT_EQ(attnc_module_num_kernels(m.get()), 1u);

  attnc_kernel *k = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "attention_fwd", &k), ATTNC_OK);
  EXPECT_EQ(k, attnc_module_kernel_at(m.get(), 0));
  EXPECT_STREQ(attnc_kernel_name(k), "attention_fwd");
  EXPECT_STREQ(attnc_kernel_kind(k), "attention");
  EXPECT_EQ(attnc_kernel_num_params(k), 15u);

  int64_t block[3], smem;
  attnc_kernel_launch_config(k, block, &smem);
  EXPECT_EQ(block[0], 128);
  EXPECT_EQ(block[1], 1);
  EXPECT_EQ(smem, 49152);
  EXPECT_EQ(attnc_kernel_attr(k, "gqa"), nullptr); // a constraint now
  EXPECT_STREQ(attnc_kernel_attr(k, "scale"), "0.125");
  EXPECT_STREQ(attnc_kernel_attr(k, "head_dim"), "128");
  EXPECT_EQ(attnc_kernel_attr(k, "nope"), nullptr);

  attnc_param_info info;
  ASSERT_EQ(attnc_kernel_param(k, 1, &info), ATTNC_OK);
  EXPECT_STREQ(info.name, "k");
  EXPECT_EQ(info.kind, ATTNC_PARAM_TENSOR);
  EXPECT_EQ(info.dtype, ATTNC_DTYPE_BF16);
  EXPECT_EQ(info.role, ATTNC_ROLE_INPUT);
  EXPECT_EQ(info.rank, 4);
  EXPECT_EQ(info.align, 16);
  EXPECT_EQ(info.contiguous_last, 1);

  int64_t extent;
  const char *sym;
  ASSERT_EQ(attnc_kernel_param_dim(k, 1, 1, &extent, &sym), ATTNC_OK);
  EXPECT_STREQ(sym, "Hkv");
  EXPECT_EQ(extent, -1);
  ASSERT_EQ(attnc_kernel_param_dim(k, 1, 3, &extent, &sym), ATTNC_OK);
  EXPECT_EQ(sym, nullptr);
  EXPECT_EQ(extent, 128);
  EXPECT_EQ(attnc_kernel_param_dim(k, 1, 4, &extent, &sym),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_param_dim(k, 5, 0, &extent, &sym),
            ATTNC_ERROR_INVALID_ARGUMENT); // a size, not a tensor

  ASSERT_EQ(attnc_kernel_param(k, 14, &info), ATTNC_OK);
  EXPECT_STREQ(info.name, "lse.stride1");
  EXPECT_EQ(info.kind, ATTNC_PARAM_STRIDE);
  EXPECT_EQ(info.dtype, ATTNC_DTYPE_I32);
  EXPECT_STREQ(info.tensor, "lse");
  EXPECT_EQ(info.dim, 1);
  EXPECT_EQ(info.role, ATTNC_ROLE_NONE);
  EXPECT_EQ(attnc_kernel_param(k, 15, &info), ATTNC_ERROR_INVALID_ARGUMENT);

  int64_t index;
  EXPECT_EQ(attnc_kernel_find_param(k, "Sq", &index), ATTNC_OK);
  EXPECT_EQ(index, 8);
  EXPECT_EQ(attnc_kernel_find_param(k, "S", &index), ATTNC_ERROR_NOT_FOUND);
  EXPECT_EQ(index, -1);

  // grid [[ceil(Sq/64)], [H], [B]] and H a multiple of Hkv.
  attnc_factor f;
  ASSERT_EQ(attnc_kernel_grid_num_factors(k, 0), 1u);
  ASSERT_EQ(attnc_kernel_grid_factor(k, 0, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_SYMBOL);
  EXPECT_STREQ(f.symbol, "Sq");
  EXPECT_EQ(f.ceil_div, 64);
  ASSERT_EQ(attnc_kernel_grid_factor(k, 2, 0, &f), ATTNC_OK);
  EXPECT_STREQ(f.symbol, "B");
  EXPECT_EQ(f.ceil_div, 1);
  EXPECT_EQ(attnc_kernel_grid_factor(k, 2, 1, &f),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_grid_num_factors(k, 3), 0u);
  ASSERT_EQ(attnc_kernel_num_constraints(k), 1u);
  attnc_constraint c;
  ASSERT_EQ(attnc_kernel_constraint(k, 0, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_DIVISIBLE);
  EXPECT_STREQ(c.lhs, "H");
  EXPECT_STREQ(c.rhs, "Hkv");
  EXPECT_EQ(attnc_kernel_constraint(k, 1, &c), ATTNC_ERROR_INVALID_ARGUMENT);
}

TEST(Manifest, LoadsTensorMapsWorkspacesAndConstraints) {
  ModulePtr m = loadOrDie(inputs + "/persistent");
  ASSERT_TRUE(m);
  attnc_kernel *k = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "decode_fwd", &k), ATTNC_OK);
  EXPECT_STREQ(attnc_kernel_kind(k), "decode");

  attnc_factor f;
  ASSERT_EQ(attnc_kernel_grid_factor(k, 0, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_NUM_SMS);
  EXPECT_EQ(f.symbol, nullptr);

  attnc_param_info info;
  ASSERT_EQ(attnc_kernel_param(k, 5, &info), ATTNC_OK);
  EXPECT_STREQ(info.name, "v_map");
  EXPECT_EQ(info.kind, ATTNC_PARAM_TENSORMAP);
  EXPECT_STREQ(info.tensor, "v");
  EXPECT_EQ(info.dtype, ATTNC_DTYPE_BF16); // its tensor's
  EXPECT_EQ(info.rank, 4);
  EXPECT_EQ(info.role, ATTNC_ROLE_NONE);
  attnc_tensormap_info map;
  ASSERT_EQ(attnc_kernel_param_tensormap(k, 5, &map), ATTNC_OK);
  EXPECT_STREQ(map.tensor, "v");
  EXPECT_EQ(map.tensor_index, 2u);
  ASSERT_EQ(map.rank, 4);
  EXPECT_EQ(map.box[0], 1);
  EXPECT_EQ(map.box[2], 64);
  EXPECT_EQ(map.box[3], 64);
  EXPECT_EQ(map.swizzle, 128);
  EXPECT_EQ(map.oob_fill_nan, 1);
  ASSERT_EQ(attnc_kernel_param_tensormap(k, 4, &map), ATTNC_OK);
  EXPECT_EQ(map.oob_fill_nan, 0);
  EXPECT_EQ(attnc_kernel_param_tensormap(k, 6, &map),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(attnc_last_error(), "attnc_kernel_param_tensormap: parameter 6 "
                                   "of kernel 'decode_fwd' is not a "
                                   "tensormap");

  ASSERT_EQ(attnc_kernel_param(k, 7, &info), ATTNC_OK);
  EXPECT_EQ(info.kind, ATTNC_PARAM_WORKSPACE);
  EXPECT_EQ(info.dtype, ATTNC_DTYPE_I8);
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.align, 16);
  attnc_workspace_info ws;
  ASSERT_EQ(attnc_kernel_param_workspace(k, 6, &ws), ATTNC_OK);
  EXPECT_EQ(ws.num_byte_factors, 4u);
  EXPECT_EQ(ws.zero_init, 0);
  ASSERT_EQ(attnc_kernel_param_workspace_factor(k, 6, 0, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_NUM_SMS);
  ASSERT_EQ(attnc_kernel_param_workspace_factor(k, 6, 3, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_CONSTANT);
  EXPECT_EQ(f.value, 4);
  EXPECT_EQ(attnc_kernel_param_workspace_factor(k, 6, 4, &f),
            ATTNC_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(attnc_kernel_param_workspace(k, 7, &ws), ATTNC_OK);
  EXPECT_EQ(ws.zero_init, 1);
  ASSERT_EQ(attnc_kernel_param_workspace_factor(k, 7, 1, &f), ATTNC_OK);
  EXPECT_EQ(f.kind, ATTNC_FACTOR_SYMBOL);
  EXPECT_STREQ(f.symbol, "H");
  EXPECT_EQ(f.ceil_div, 2);
  EXPECT_EQ(attnc_kernel_param_workspace(k, 0, &ws),
            ATTNC_ERROR_INVALID_ARGUMENT);

  ASSERT_EQ(attnc_kernel_num_constraints(k), 2u);
  attnc_constraint c;
  ASSERT_EQ(attnc_kernel_constraint(k, 1, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_MIN);
  EXPECT_STREQ(c.lhs, "Skv");
  EXPECT_EQ(c.rhs, nullptr);
  EXPECT_EQ(c.value, 1);
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "tile_copy", &k), ATTNC_OK);
  ASSERT_EQ(attnc_kernel_constraint(k, 1, &c), ATTNC_OK);
  EXPECT_EQ(c.kind, ATTNC_CONSTRAINT_EQUAL);
  EXPECT_STREQ(c.lhs, "N");
  EXPECT_STREQ(c.rhs, "N2");
}

TEST(Manifest, DefaultsAndEntry) {
  ModulePtr m = loadOrDie(inputs + "/fusion");
  ASSERT_TRUE(m);
  attnc_kernel *k = nullptr;
  ASSERT_EQ(attnc_module_get_kernel(m.get(), "copy", &k), ATTNC_OK);
  EXPECT_STREQ(attnc_kernel_kind(k), "");
  int64_t smem = -1;
  attnc_kernel_launch_config(k, nullptr, &smem);
  EXPECT_EQ(smem, 0);
  attnc_param_info info;
  ASSERT_EQ(attnc_kernel_param(k, 2, &info), ATTNC_OK);
  EXPECT_EQ(info.dtype, ATTNC_DTYPE_I64); // default stride dtype
  ASSERT_EQ(attnc_kernel_param(k, 0, &info), ATTNC_OK);
  EXPECT_EQ(info.contiguous_last, 0);
  EXPECT_EQ(info.align, 1);
}

TEST(Manifest, UnknownKernelListsKnownOnes) {
  ModulePtr m = loadOrDie(inputs + "/fusion");
  attnc_kernel *k = nullptr;
  EXPECT_EQ(attnc_module_get_kernel(m.get(), "attention", &k),
            ATTNC_ERROR_NOT_FOUND);
  EXPECT_EQ(k, nullptr);
  EXPECT_STREQ(attnc_last_error(), "module 'bias_dropout' has no kernel "
                                   "'attention' (it has: bias_dropout_fwd, "
                                   "copy)");
}

TEST(Manifest, MissingDirectory) {
  attnc_module *m = nullptr;
  EXPECT_EQ(attnc_module_load((inputs + "/nope").c_str(), &m), ATTNC_ERROR_IO);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(attnc_last_error()).find("cannot open "),
            std::string::npos);
  EXPECT_NE(std::string(attnc_last_error()).find("nope/manifest.json"),
            std::string::npos);
}

void expectLoadError(const std::string &dir, const std::string &message) {
  attnc_module *m = nullptr;
  std::string path = inputs + "/malformed/" + dir;
  EXPECT_EQ(attnc_module_load(path.c_str(), &m), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(attnc_last_error(), path + "/manifest.json: " + message);
}

TEST(Manifest, MalformedFiles) {
  expectLoadError("not_json",
                  "invalid JSON: [1:58, byte=58]: Invalid JSON value");
  expectLoadError("version1",
                  "attnc_manifest_version: unsupported manifest version 1 "
                  "(this runtime reads version 2); recompile the module with "
                  "this attnc's attnc-compile");
  expectLoadError("no_kernels", "<root>: missing required key 'kernels'");
}

// A valid kernel; each case below replaces one fragment of it.
const std::string validKernel =
    R"({"name": "k1", "kind": "fusion", "cubin": "k1.cubin", )"
    R"("block": [128, 1, 1], "grid": [["N"], [1], [1]], )"
    R"("dynamic_shared_memory_bytes": 0, "attrs": {"causal": false}, )"
    R"("params": [)"
    R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["N", 4], )"
    R"("role": "input", "align": 16, "contiguous_last": true}, )"
    R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 4], )"
    R"("role": "output"}, )"
    R"({"name": "N", "kind": "size", "dtype": "i64"}, )"
    R"({"name": "x.s0", "kind": "stride", "tensor": "x", "dim": 0}, )"
    R"({"name": "seed", "kind": "scalar", "dtype": "i64"}]})";

std::string manifestWith(const std::string &kernels) {
  return R"({"attnc_manifest_version": 2, "module": "m", "chip": "sm_90a", )"
         R"("kernels": [)" +
         kernels + "]}";
}

attnc_status parse(const std::string &text, std::string &error) {
  attnc_module *m = nullptr;
  attnc_status st = attnc_manifest_parse(text.data(), text.size(), nullptr, &m);
  error = attnc_last_error();
  attnc_module_unload(m);
  return st;
}

TEST(Manifest, ValidKernelParses) {
  std::string error;
  EXPECT_EQ(parse(manifestWith(validKernel), error), ATTNC_OK) << error;
  EXPECT_EQ(error, "");
}

struct Case {
  const char *from, *to, *message;
};

/// Replaces one fragment of KERNEL per case and checks that the manifest is
/// then refused with the case's message.
template <size_t N>
void expectEachCase(const std::string &kernel, const Case (&cases)[N]) {
  for (const Case &c : cases) {
    std::string broken = kernel;
    size_t at = broken.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    broken.replace(at, std::string(c.from).size(), c.to);
    std::string error;
    EXPECT_EQ(parse(manifestWith(broken), error), ATTNC_ERROR_MANIFEST)
        << c.message;
    if (std::string(c.message) == "manifest: invalid JSON")
      EXPECT_EQ(error.rfind("manifest: invalid JSON: ", 0), 0u) << error;
    else
      EXPECT_EQ(error, std::string("manifest: ") + c.message);
  }
}

TEST(Manifest, EachRuleHasItsMessage) {
  const Case cases[] = {
      {R"("dtype": "f32", "shape": ["N", 4], "role": "input")",
       R"("dtype": "bf17", "shape": ["N", 4], "role": "input")",
       "kernels[0].params[0].dtype: unknown or unsupported dtype 'bf17' "
       "(expected one of bf16, f16, f32, f64, i1, i8, i32, i64)"},
      {R"("role": "input")", R"("role": "inout")",
       "kernels[0].params[0].role: unknown role 'inout' (expected input or "
       "output)"},
      {R"("role": "input", )", "",
       "kernels[0].params[0]: missing required key 'role'"},
      {R"("align": 16)", R"("align": 12)",
       "kernels[0].params[0].align: alignment 12 is not a power of two"},
      {R"("contiguous_last": true)", R"("contiguous_last": "yes")",
       "kernels[0].params[0].contiguous_last: expected a boolean, got a "
       "string"},
      {R"("cubin": "k1.cubin", )",
       R"("cubin": "k1.cubin", "programmatic_launch": 1, )",
       "kernels[0].programmatic_launch: expected a boolean, got a number"},
      {R"("shape": ["N", 4], "role": "input")",
       R"("shape": ["N", -1], "role": "input")",
       "kernels[0].params[0].shape[1]: expected an integer >= 0, got -1"},
      {R"("shape": ["N", 4], "role": "input")",
       R"("shape": ["N", 1.5], "role": "input")",
       "kernels[0].params[0].shape[1]: expected an integer, got a number"},
      {R"("shape": ["N", 4], "role": "input")",
       R"("shape": ["N", true], "role": "input")",
       "kernels[0].params[0].shape[1]: expected an integer or a symbol name, "
       "got a boolean"},
      {R"("shape": ["N", 4], "role": "input")",
       R"("shape": "N", "role": "input")",
       "kernels[0].params[0].shape: expected an array, got a string"},
      {R"("name": "y")", R"("name": "x")",
       "kernels[0].params: duplicate parameter name 'x'"},
      {R"("kind": "size")", R"("kind": "pointer")",
       "kernels[0].params[2].kind: unknown parameter kind 'pointer' (expected "
       "tensor, size, stride, scalar, tensormap or workspace)"},
      {R"("name": "N", "kind": "size")", R"("name": "M", "kind": "size")",
       "kernels[0].params[2]: size parameter 'M' is not a symbol of any "
       "tensor shape, so no argument can bind it"},
      {R"("kind": "size", "dtype": "i64")", R"("kind": "size", "dtype": "f32")",
       "kernels[0].params[2].dtype: unknown or unsupported dtype 'f32' "
       "(expected one of i64, i32)"},
      {R"("tensor": "x")", R"("tensor": "z")",
       "kernels[0].params[3].tensor: 'z' is not a tensor parameter"},
      {R"("tensor": "x")", R"("tensor": "N")",
       "kernels[0].params[3].tensor: 'N' is not a tensor parameter"},
      {R"("dim": 0)", R"("dim": 2)",
       "kernels[0].params[3].dim: dim 2 is out of range for 'x' of rank 2"},
      {R"("dim": 0)", R"("dim": -1)",
       "kernels[0].params[3].dim: expected an integer >= 0, got -1"},
      {R"("kind": "scalar", "dtype": "i64")", R"("kind": "scalar")",
       "kernels[0].params[4]: missing required key 'dtype'"},
      {R"("kind": "scalar", "dtype": "i64")",
       R"("kind": "scalar", "dtype": "bf16")",
       "kernels[0].params[4].dtype: unknown or unsupported dtype 'bf16' "
       "(expected one of i64, i32, f32, f64)"},
      {R"("block": [128, 1, 1])", R"("block": [128, 1])",
       "kernels[0].block: expected an array of 3 integers"},
      {R"("block": [128, 1, 1])", R"("block": [128, 0, 1])",
       "kernels[0].block[1]: expected an integer >= 1, got 0"},
      {R"("block": [128, 1, 1], )", "",
       "kernels[0]: missing required key 'block'"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [["N"], [1]])",
       "kernels[0].grid: expected an array of 3 factor lists"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [["M"], [1], [1]])",
       "kernels[0].grid[0][0]: grid symbol 'M' is not a symbol of any tensor "
       "shape"},
      {R"("grid": [["N"], [1], [1]])",
       R"("grid": [[{"sym": "N", "ceil_div": 0}], [1], [1]])",
       "kernels[0].grid[0][0].ceil_div: expected an integer >= 1, got 0"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [[{"sym": "N"}], [1], [1]])",
       "kernels[0].grid[0][0]: missing required key 'ceil_div'"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [[null], [1], [1]])",
       "kernels[0].grid[0][0]: expected an integer, a symbol, {\"sym\", "
       "\"ceil_div\"} or {\"device\": \"num_sms\"}, got null"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [["N"], 1, [1]])",
       "kernels[0].grid[1]: expected an array of factors, got a number"},
      {R"("cubin": "k1.cubin", )", "",
       "kernels[0]: missing required key 'cubin'"},
      {R"("cubin": "k1.cubin")", R"("cubin": "../k1.cubin")",
       "kernels[0].cubin: '../k1.cubin' is not a file name inside the module "
       "directory"},
      {R"("cubin": "k1.cubin")", R"("cubin": "/tmp/k1.cubin")",
       "kernels[0].cubin: '/tmp/k1.cubin' is not a file name inside the "
       "module directory"},
      {R"("name": "k1")", R"("name": 7)",
       "kernels[0].name: expected a string, got a number"},
      {R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": -4)",
       "kernels[0].dynamic_shared_memory_bytes: expected an integer >= 0, got "
       "-4"},
      {R"("attrs": {"causal": false})", R"("attrs": [])",
       "kernels[0].attrs: expected an object, got an array"},
      {R"("params": [)", R"("params": [,)",
       "manifest: invalid JSON"}, // not valid JSON any more; checked below
  };
  expectEachCase(validKernel, cases);
}

// A valid kernel with every kind of version 2; each case below breaks one of
// its rules.
const std::string v2Kernel =
    R"({"name": "k2", "cubin": "k2.cubin", "block": [128, 1, 1], )"
    R"("grid": [[{"device": "num_sms"}], [{"sym": "M", "ceil_div": 64}], )"
    R"([1]], "params": [)"
    R"({"name": "a", "kind": "tensor", "dtype": "bf16", "shape": ["M", "K"], )"
    R"("role": "input"}, )"
    R"({"name": "b", "kind": "tensor", "dtype": "bf16", "shape": ["K2", 64], )"
    R"("role": "output"}, )"
    R"({"name": "a_map", "kind": "tensormap", "tensor": "a", )"
    R"("box": [64, 64], "swizzle": 128, "oob_fill": "zero"}, )"
    R"({"name": "ws", "kind": "workspace", )"
    R"("bytes": [{"device": "num_sms"}, "M", 4], "zero_init": true, )"
    R"("view": {"dtype": "f32", "shape": ["M", 16]}}, )"
    R"({"name": "seed", "kind": "scalar", "dtype": "i64"}, )"
    R"({"name": "ws_map", "kind": "tensormap", "tensor": "ws", )"
    R"("box": [64, 16], "swizzle": 64, "oob_fill": "zero"}], )"
    R"("constraints": [{"kind": "divisible", "lhs": "K", "rhs": "M"}, )"
    R"({"kind": "equal", "lhs": "K", "rhs": "K2"}, )"
    R"({"kind": "min", "sym": "M", "value": 1}]})";

TEST(Manifest, Version2KernelParses) {
  std::string error;
  EXPECT_EQ(parse(manifestWith(v2Kernel), error), ATTNC_OK) << error;
  // Constraints are optional.
  std::string kernel = v2Kernel;
  kernel.replace(kernel.find(R"("constraints")"),
                 kernel.size() - kernel.find(R"("constraints")") - 1,
                 R"("constraints": [])");
  EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_OK) << error;
}

TEST(Manifest, EachVersion2RuleHasItsMessage) {
  const Case cases[] = {
      // Factors.
      {R"([{"device": "num_sms"}], [{"sym")",
       R"([{"device": "num_smz"}], [{"sym")",
       "kernels[0].grid[0][0].device: unknown device attribute 'num_smz' "
       "(expected num_sms)"},
      {R"([{"device": "num_sms"}], [{"sym")", R"([{"device": 1}], [{"sym")",
       "kernels[0].grid[0][0].device: expected a string, got a number"},
      {R"([{"device": "num_sms"}], [{"sym")",
       R"([{"device": "num_sms", "sym": "M"}], [{"sym")",
       "kernels[0].grid[0][0]: a factor is either {\"sym\", \"ceil_div\"} "
       "or {\"device\"}, not both"},
      {R"({"sym": "M", "ceil_div": 64})", R"({"sym": "", "ceil_div": 64})",
       "kernels[0].grid[1][0].sym: empty size symbol"},
      {R"({"sym": "M", "ceil_div": 64})",
       R"({"sym": "M", "ceil_div": 64, "plus": "Z"})",
       "kernels[0].grid[1][0]: grid symbol 'Z' is not a symbol of any tensor "
       "shape"},
      {R"({"sym": "M", "ceil_div": 64})",
       R"({"sym": "M", "ceil_div": 64, "plus": "M"})",
       "kernels[0].grid[1][0].plus: a factor adds a symbol other than its "
       "dividend, got 'M' for both"},
      {R"({"sym": "M", "ceil_div": 64})",
       R"({"sym": "M", "ceil_div": 64, "plus": ""})",
       "kernels[0].grid[1][0].plus: empty size symbol"},
      // Tensormaps.
      {R"("tensor": "a", "box")", R"("tensor": "z", "box")",
       "kernels[0].params[2].tensor: 'z' is not a tensor parameter"},
      {R"("tensor": "a", "box")", R"("tensor": "seed", "box")",
       "kernels[0].params[2].tensor: 'seed' is not a tensor parameter"},
      // A workspace's view stands for the tensor.
      {R"("tensor": "a", "box")", R"("tensor": "ws", "box")",
       "kernels[0].params[2].box[1]: the innermost box row is 256 bytes (64 "
       "f32), more than the 128-byte swizzle span"},
      {R"(, "view": {"dtype": "f32", "shape": ["M", 16]})", "",
       "kernels[0].params[5].tensor: 'ws' is a workspace without a view; a "
       "tensormap maps a tensor or a workspace's view"},
      {R"("box": [64, 16])", R"("box": [16])",
       "kernels[0].params[5].box: box has 1 dimensions but the view of "
       "workspace 'ws' has rank 2"},
      {R"("box": [64, 16])", R"("box": [64, 32])",
       "kernels[0].params[5].box[1]: the innermost box row is 128 bytes (32 "
       "f32), more than the 64-byte swizzle span"},
      {R"("shape": ["M", 16]})", R"("shape": ["Q", 16]})",
       "kernels[0].params[3].view.shape[0]: workspace view symbol 'Q' is not "
       "a symbol of any tensor shape, so no argument can bind it"},
      {R"("shape": ["M", 16]})", R"("shape": []})",
       "kernels[0].params[3].view.shape: a view has at least one dimension"},
      {R"("view": {"dtype": "f32")", R"("view": {"dtype": "f33")",
       "kernels[0].params[3].view.dtype: unknown or unsupported dtype 'f33' "
       "(expected one of bf16, f16, f32, f64, i1, i8, i32, i64)"},
      {R"("view": {"dtype": "f32", )", R"("view": {)",
       "kernels[0].params[3].view: missing required key 'dtype'"},
      {R"("view": {"dtype": "f32", "shape": ["M", 16]})", R"("view": 3)",
       "kernels[0].params[3].view: expected an object, got a number"},
      {R"("tensor": "a", "box")", R"("box")",
       "kernels[0].params[2]: missing required key 'tensor'"},
      {R"("box": [64, 64])", R"("box": [64])",
       "kernels[0].params[2].box: box has 1 dimensions but tensor 'a' has "
       "rank 2"},
      {R"("box": [64, 64])", R"("box": [64, 64, 1])",
       "kernels[0].params[2].box: box has 3 dimensions but tensor 'a' has "
       "rank 2"},
      {R"("box": [64, 64])", R"("box": 64)",
       "kernels[0].params[2].box: expected an array, got a number"},
      {R"("box": [64, 64])", R"("box": [0, 64])",
       "kernels[0].params[2].box[0]: expected an integer >= 1, got 0"},
      {R"("box": [64, 64])", R"("box": [257, 64])",
       "kernels[0].params[2].box[0]: box dimension 257 exceeds TMA's limit "
       "of 256 elements"},
      {R"("box": [64, 64])", R"("box": [64, 4])",
       "kernels[0].params[2].box[1]: the innermost box row is 8 bytes (4 "
       "bf16), not a multiple of 16 bytes as TMA requires"},
      {R"("box": [64, 64])", R"("box": [64, 128])",
       "kernels[0].params[2].box[1]: the innermost box row is 256 bytes (128 "
       "bf16), more than the 128-byte swizzle span"},
      {R"("swizzle": 128)", R"("swizzle": 64)",
       "kernels[0].params[2].box[1]: the innermost box row is 128 bytes (64 "
       "bf16), more than the 64-byte swizzle span"},
      {R"("swizzle": 128)", R"("swizzle": 48)",
       "kernels[0].params[2].swizzle: swizzle 48 is not a TMA swizzle "
       "(expected 0, 32, 64 or 128 bytes)"},
      {R"("swizzle": 128, )", "",
       "kernels[0].params[2]: missing required key 'swizzle'"},
      {R"("oob_fill": "zero")", R"("oob_fill": "ones")",
       "kernels[0].params[2].oob_fill: unknown out-of-bounds fill 'ones' "
       "(expected zero or nan)"},
      {R"(, "oob_fill": "zero")", "",
       "kernels[0].params[2]: missing required key 'oob_fill'"},
      {R"("shape": ["M", "K"], )", R"("shape": ["M", 1, 1, 1, 1, "K"], )",
       "kernels[0].params[2].tensor: 'a' has rank 6; TMA supports ranks 1 to "
       "5"},
      {R"("dtype": "bf16", "shape": ["M", "K"])",
       R"("dtype": "i32", "shape": ["M", "K"])",
       "kernels[0].params[2].box[1]: the innermost box row is 256 bytes (64 "
       "i32), more than the 128-byte swizzle span"},
      // Workspaces.
      {R"("bytes": [{"device": "num_sms"}, "M", 4])",
       R"("bytes": [{"device": "num_sms"}, "N", 4])",
       "kernels[0].params[3].bytes[1]: workspace size symbol 'N' is not a "
       "symbol of any tensor shape, so no argument can bind it"},
      {R"("bytes": [{"device": "num_sms"}, "M", 4])",
       R"("bytes": [{"device": "num_sms"}, "M", -4])",
       "kernels[0].params[3].bytes[2]: expected an integer >= 0, got -4"},
      {R"("bytes": [{"device": "num_sms"}, "M", 4])", R"("bytes": 4)",
       "kernels[0].params[3].bytes: expected an array of factors, got a "
       "number"},
      {R"("bytes": [{"device": "num_sms"}, "M", 4], )", "",
       "kernels[0].params[3]: missing required key 'bytes'"},
      {R"(, "zero_init": true)", "",
       "kernels[0].params[3]: missing required key 'zero_init'"},
      {R"("zero_init": true)", R"("zero_init": 1)",
       "kernels[0].params[3].zero_init: expected a boolean, got a number"},
      // Constraints.
      {R"({"kind": "divisible", "lhs": "K", "rhs": "M"})",
       R"({"kind": "divisible", "lhs": "K", "rhs": "N"})",
       "kernels[0].constraints[0].rhs: constraint symbol 'N' is not a "
       "symbol of any tensor shape, so no argument can bind it"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "equal", "lhs": "D", "rhs": "K2"})",
       "kernels[0].constraints[1].lhs: constraint symbol 'D' is not a symbol "
       "of any tensor shape, so no argument can bind it"},
      {R"({"kind": "min", "sym": "M", "value": 1})",
       R"({"kind": "min", "sym": "S", "value": 1})",
       "kernels[0].constraints[2].sym: constraint symbol 'S' is not a symbol "
       "of any tensor shape, so no argument can bind it"},
      {R"({"kind": "min", "sym": "M", "value": 1})",
       R"({"kind": "min", "sym": "M"})",
       "kernels[0].constraints[2]: missing required key 'value'"},
      {R"({"kind": "min", "sym": "M", "value": 1})",
       R"({"kind": "min", "lhs": "M", "value": 1})",
       "kernels[0].constraints[2]: missing required key 'sym'"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "equal", "lhs": "K"})",
       "kernels[0].constraints[1]: missing required key 'rhs'"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "less", "lhs": "K", "rhs": "K2"})",
       "kernels[0].constraints[1].kind: unknown constraint kind 'less' "
       "(expected divisible, equal, min, max, ratio or at_most)"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "ratio", "lhs": "K", "rhs": "K2"})",
       "kernels[0].constraints[1]: missing required key 'value'"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "ratio", "lhs": "K", "rhs": "K2", "value": 0})",
       "kernels[0].constraints[1].value: expected an integer >= 1, got 0"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "at_most", "lhs": "K", "rhs": "K2", "value": 0})",
       "kernels[0].constraints[1].value: expected an integer >= 1, got 0"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "at_most", "lhs": "K", "value": 2})",
       "kernels[0].constraints[1]: missing required key 'rhs'"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})",
       R"({"kind": "ratio", "lhs": "K", "rhs": "Z", "value": 2})",
       "kernels[0].constraints[1].rhs: constraint symbol 'Z' is not a symbol "
       "of any tensor shape, so no argument can bind it"},
      {R"({"kind": "equal", "lhs": "K", "rhs": "K2"})", R"("K == K2")",
       "kernels[0].constraints[1]: expected an object, got a string"},
      {R"("constraints": [)", R"("constraints": {"x": [)",
       "manifest: invalid JSON"}, // checked below
  };
  expectEachCase(v2Kernel, cases);
  // constraints must be an array.
  std::string kernel = v2Kernel;
  kernel.replace(kernel.find(R"("constraints")"),
                 kernel.size() - kernel.find(R"("constraints")") - 1,
                 R"("constraints": {})");
  std::string error;
  EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: kernels[0].constraints: expected an array, got "
                   "an object");
  // NaN fill only for floating-point tensors (an i8 box row of 64 bytes).
  kernel = v2Kernel;
  kernel.replace(kernel.find(R"("dtype": "bf16", "shape": ["M", "K"])"),
                 std::string(R"("dtype": "bf16")").size(), R"("dtype": "i8")");
  kernel.replace(kernel.find(R"("oob_fill": "zero")"),
                 std::string(R"("oob_fill": "zero")").size(),
                 R"("oob_fill": "nan")");
  EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: kernels[0].params[2].oob_fill: NaN fill needs a "
                   "floating-point tensor; 'a' is i8");
}

TEST(Manifest, RootRules) {
  std::string error;
  EXPECT_EQ(parse("[]", error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: <root>: expected an object, got an array");
  EXPECT_EQ(parse(R"({"module": "m", "kernels": []})", error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error,
            "manifest: <root>: missing required key 'attnc_manifest_version'");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": "1", "module": "m", )"
                  R"("kernels": []})",
                  error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: attnc_manifest_version: unsupported manifest "
                   "version a string (this runtime reads version 2); "
                   "recompile the module with this attnc's attnc-compile");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 3, "module": "m", )"
                  R"("kernels": []})",
                  error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: attnc_manifest_version: unsupported manifest "
                   "version 3 (this runtime reads version 2); recompile the "
                   "module with this attnc's attnc-compile");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 2, "kernels": []})", error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: <root>: missing required key 'module'");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 2, "module": "m", )"
                  R"("kernels": {}})",
                  error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: kernels: expected an array, got an object");
  EXPECT_EQ(parse(manifestWith(validKernel + ", " + validKernel), error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: kernels[1].name: duplicate kernel name 'k1'");
  EXPECT_EQ(parse(manifestWith("3"), error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: kernels[0]: expected an object, got a number");
  // Unknown keys are ignored: newer compilers may add fields.
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 2, "module": "m", )"
                  R"("future": {"x": 1}, "kernels": []})",
                  error),
            ATTNC_OK);
}

// Hostile manifests: every integer is range-checked before it is stored in a
// narrower type or handed to the driver, so none wraps into an index or a
// launch value.
TEST(Manifest, IntegersAreRangeChecked) {
  const Case cases[] = {
      // Once stored as int32_t -2^31, which passed "dim < rank" and indexed
      // strides[] out of bounds at plan time.
      {R"("dim": 0)", R"("dim": 2147483648)",
       "kernels[0].params[3].dim: expected an integer <= 2147483647, got "
       "2147483648"},
      {R"("dim": 0)", R"("dim": 4294967296)",
       "kernels[0].params[3].dim: expected an integer <= 2147483647, got "
       "4294967296"},
      // 2^63 as a double: llvm::json would convert it to int64_t (UB).
      {R"("dim": 0)", R"("dim": 9.223372036854775808e18)",
       "kernels[0].params[3].dim: expected an integer, got a number"},
      {R"("dim": 0)", R"("dim": 9223372036854775808)",
       "kernels[0].params[3].dim: expected an integer, got a number"},
      {R"("shape": ["N", 4], "role": "input")",
       R"("shape": ["N", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, )"
       R"(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, )"
       R"(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, )"
       R"(1, 1, 4], "role": "input")",
       "kernels[0].params[0].shape: rank 65 exceeds the runtime's limit of 64 "
       "dimensions"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [["N"], [256, 256], [1]])",
       "kernels[0].grid[1]: the constant factors multiply to 65536; CUDA's "
       "limit on grid.y is 65535"},
      {R"("grid": [["N"], [1], [1]])",
       R"("grid": [["N", 4294967296, 4294967296], [1], [1]])",
       "kernels[0].grid[0]: the constant factors overflow 64 bits; CUDA's "
       "limit on grid.x is 2147483647"},
      {R"("grid": [["N"], [1], [1]])", R"("grid": [["N"], [1], [65536]])",
       "kernels[0].grid[2]: the constant factors multiply to 65536; CUDA's "
       "limit on grid.z is 65535"},
  };
  expectEachCase(validKernel, cases);
  const Case workspace[] = {
      {R"("M", 4])", R"("M", 4294967296, 4294967296])",
       "kernels[0].params[3].bytes: the constant factors overflow 64 bits; a "
       "workspace size must fit 63 bits"},
  };
  expectEachCase(v2Kernel, workspace);
  std::string error;
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 9.223372036854775808e18, )"
                  R"("module": "m", "kernels": []})",
                  error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: attnc_manifest_version: unsupported manifest "
                   "version a number (this runtime reads version 2); "
                   "recompile the module with this attnc's attnc-compile");
}

// cuLaunchKernel takes unsigned values: nothing may be truncated on the way.
TEST(Manifest, LaunchConfigWithinCudaLimits) {
  const Case cases[] = {
      {R"("block": [128, 1, 1])", R"("block": [2048, 1, 1])",
       "kernels[0].block[0]: block.x = 2048 exceeds CUDA's limit of 1024"},
      {R"("block": [128, 1, 1])", R"("block": [1, 4294967297, 1])",
       "kernels[0].block[1]: block.y = 4294967297 exceeds CUDA's limit of "
       "1024"},
      {R"("block": [128, 1, 1])", R"("block": [1, 1, 65])",
       "kernels[0].block[2]: block.z = 65 exceeds CUDA's limit of 64"},
      {R"("block": [128, 1, 1])", R"("block": [64, 32, 1])",
       "kernels[0].block: [64, 32, 1] is 2048 threads, more than CUDA's "
       "limit of 1024 per block"},
      {R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": 232449)",
       "kernels[0].dynamic_shared_memory_bytes: 232449 bytes exceeds the "
       "limit of 232448 bytes (227 KiB), the most dynamic shared memory any "
       "CUDA GPU gives a block"},
      {R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": 4294967296)",
       "kernels[0].dynamic_shared_memory_bytes: 4294967296 bytes exceeds the "
       "limit of 232448 bytes (227 KiB), the most dynamic shared memory any "
       "CUDA GPU gives a block"},
      // ptxas's register count, which only the cost model reads.
      {R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": 0, "registers": 256)",
       "kernels[0].registers: 256 is not a register count (0 to 255 per "
       "thread)"},
      {R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": 0, "registers": -1)",
       "kernels[0].registers: expected an integer >= 0, got -1"},
  };
  expectEachCase(validKernel, cases);
}

/// An attrs value nested DEPTH - 4 levels deep, so that the manifest nests
/// DEPTH levels (root, kernels, kernel, attrs).
std::string nestedAttrs(size_t depth) {
  std::string kernel = validKernel;
  std::string value = std::string(depth - 4, '[') + std::string(depth - 4, ']');
  kernel.replace(kernel.find(R"("causal": false)"), 15, "\"v\": " + value);
  return manifestWith(kernel);
}

// llvm::json::parse recurses per level: deep text must not reach it.
TEST(Manifest, NestingAndSizeAreBoundedBeforeParsing) {
  std::string error;
  EXPECT_EQ(parse(std::string(100000, '['), error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: nests arrays/objects 100000 deep; at most 64 "
                   "(level 65 opens at byte 64)");
  EXPECT_EQ(parse(nestedAttrs(65), error), ATTNC_ERROR_MANIFEST);
  EXPECT_NE(error.find("nests arrays/objects 65 deep; at most 64"),
            std::string::npos)
      << error;
  // Brackets inside strings, escaped quotes included, do not nest.
  std::string kernel = validKernel;
  kernel.replace(kernel.find(R"("causal": false)"), 15,
                 R"("s": "\"\\)" + std::string(100, '[') + R"(\"")");
  EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_OK) << error;

  std::string huge(kMaxBytes + 1, ' ');
  EXPECT_EQ(parse(huge, error), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: 67108865 bytes exceeds the limit of 67108864 "
                   "bytes (64 MiB)");
  // From a file: refused after reading just past the limit (sparse here).
  std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) /
      ("attnc-huge-manifest-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string file = (dir / "manifest.json").string();
  std::ofstream(file).close();
  std::filesystem::resize_file(file, std::uintmax_t(kMaxBytes) * 2);
  attnc_module *m = nullptr;
  EXPECT_EQ(attnc_module_load(dir.string().c_str(), &m), ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(attnc_last_error(),
            file + ": larger than the limit of 67108864 bytes (64 MiB)");
  std::filesystem::remove_all(dir);
}

// Every limit above is inclusive: a manifest at all of them loads.
TEST(Manifest, ValuesAtTheLimitsLoad) {
  std::string error;
  EXPECT_EQ(parse(nestedAttrs(64), error), ATTNC_OK) << error;
  std::string shape = R"("shape": ["N")";
  for (int i = 1; i < 64; ++i)
    shape += ", 1";
  std::string kernel = validKernel;
  auto edit = [&](const std::string &from, const std::string &to) {
    kernel.replace(kernel.find(from), from.size(), to);
  };
  edit(R"("shape": ["N", 4])", shape + "]");
  edit(R"("dim": 0)", R"("dim": 63)");
  edit(R"("block": [128, 1, 1])", R"("block": [16, 1, 64])");
  edit(R"("dynamic_shared_memory_bytes": 0)",
       R"("dynamic_shared_memory_bytes": 232448)");
  edit(R"("grid": [["N"], [1], [1]])",
       R"("grid": [["N", 2147483647], [65535, "N"], )"
       R"([0, 4294967296, 4294967296]])");
  attnc_module *m = nullptr;
  std::string text = manifestWith(kernel);
  ASSERT_EQ(attnc_manifest_parse(text.data(), text.size(), nullptr, &m),
            ATTNC_OK)
      << attnc_last_error();
  ModulePtr owned(m);
  attnc_kernel *k = attnc_module_kernel_at(m, 0);
  int64_t block[3], smem;
  attnc_kernel_launch_config(k, block, &smem);
  EXPECT_EQ(block[2], 64);
  EXPECT_EQ(smem, 232448);
  attnc_param_info info;
  ASSERT_EQ(attnc_kernel_param(k, 0, &info), ATTNC_OK);
  EXPECT_EQ(info.rank, 64);
  ASSERT_EQ(attnc_kernel_param(k, 3, &info), ATTNC_OK);
  EXPECT_EQ(info.dim, 63);
  // 2^32 * (2^31 - 1) bytes of constants: just below 2^63.
  kernel = v2Kernel;
  edit(R"("M", 4])", R"("M", 4294967296, 2147483647])");
  EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_OK) << error;
}

TEST(Manifest, NullArguments) {
  attnc_module *m = nullptr;
  EXPECT_EQ(attnc_manifest_parse(nullptr, 0, nullptr, &m),
            ATTNC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_module_load(nullptr, &m), ATTNC_ERROR_INVALID_ARGUMENT);
  attnc_module_unload(nullptr); // no-op
}

TEST(DType, Table) {
  EXPECT_EQ(attnc_dtype_from_name("bf16"), ATTNC_DTYPE_BF16);
  EXPECT_EQ(attnc_dtype_from_name("i1"), ATTNC_DTYPE_I1);
  EXPECT_EQ(attnc_dtype_from_name("float"), ATTNC_DTYPE_INVALID);
  EXPECT_EQ(attnc_dtype_size(ATTNC_DTYPE_BF16), 2u);
  EXPECT_EQ(attnc_dtype_size(ATTNC_DTYPE_I1), 1u);
  EXPECT_EQ(attnc_dtype_size(ATTNC_DTYPE_F64), 8u);
  EXPECT_EQ(attnc_dtype_size(ATTNC_DTYPE_INVALID), 0u);
  EXPECT_STREQ(attnc_dtype_name(ATTNC_DTYPE_I32), "i32");
  EXPECT_EQ(attnc_dtype_name(ATTNC_DTYPE_INVALID), nullptr);
  EXPECT_STREQ(attnc_status_name(ATTNC_ERROR_VALIDATION),
               "ATTNC_ERROR_VALIDATION");
}

} // namespace
