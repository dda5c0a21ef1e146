//===- ManifestTest.cpp - Manifest parsing and kernel queries -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the CPU half of the runtime's C API: loading the fixture
// manifests under Inputs/, querying kernels and parameters, and one test per
// manifest rule that checks the error message names the JSON path and the
// rule. Malformed kernels are made by editing one fragment of a valid
// kernel, so that each case breaks exactly one rule.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

const std::string inputs = ATTNC_TEST_INPUTS;

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
  EXPECT_STREQ(attnc_kernel_attr(k, "gqa"), "true");
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
  expectLoadError("version2", "attnc_manifest_version: unsupported manifest "
                              "version 2 (this runtime reads version 1)");
  expectLoadError("no_kernels", "<root>: missing required key 'kernels'");
}

// A valid kernel; each case below replaces one fragment of it.
const std::string validKernel =
    R"({"name": "k1", "kind": "fusion", "cubin": "k1.cubin", )"
    R"("block": [128, 1, 1], "grid": [["N"], [1], [1]], )"
    R"("dynamic_shared_memory_bytes": 0, "attrs": {"gqa": false}, )"
    R"("params": [)"
    R"({"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["N", 4], )"
    R"("role": "input", "align": 16, "contiguous_last": true}, )"
    R"({"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["N", 4], )"
    R"("role": "output"}, )"
    R"({"name": "N", "kind": "size", "dtype": "i64"}, )"
    R"({"name": "x.s0", "kind": "stride", "tensor": "x", "dim": 0}, )"
    R"({"name": "seed", "kind": "scalar", "dtype": "i64"}]})";

std::string manifestWith(const std::string &kernels) {
  return R"({"attnc_manifest_version": 1, "module": "m", "chip": "sm_90a", )"
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
       "tensor, size, stride or scalar)"},
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
       "kernels[0].grid[0][0]: expected an integer, a symbol or {\"sym\", "
       "\"ceil_div\"}, got null"},
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
      {R"("attrs": {"gqa": false})", R"("attrs": [])",
       "kernels[0].attrs: expected an object, got an array"},
      {R"("params": [)", R"("params": [,)",
       "manifest: invalid JSON"}, // not valid JSON any more; checked below
  };
  for (const Case &c : cases) {
    std::string kernel = validKernel;
    size_t at = kernel.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    kernel.replace(at, std::string(c.from).size(), c.to);
    std::string error;
    EXPECT_EQ(parse(manifestWith(kernel), error), ATTNC_ERROR_MANIFEST)
        << c.message;
    if (std::string(c.message) == "manifest: invalid JSON")
      EXPECT_EQ(error.rfind("manifest: invalid JSON: ", 0), 0u) << error;
    else
      EXPECT_EQ(error, std::string("manifest: ") + c.message);
  }
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
                   "version a string (this runtime reads version 1)");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 1, "kernels": []})", error),
            ATTNC_ERROR_MANIFEST);
  EXPECT_EQ(error, "manifest: <root>: missing required key 'module'");
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 1, "module": "m", )"
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
  EXPECT_EQ(parse(R"({"attnc_manifest_version": 1, "module": "m", )"
                  R"("future": {"x": 1}, "kernels": []})",
                  error),
            ATTNC_OK);
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
