//===- TensorArgs.h - tensor arguments of the runtime's unit tests -*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Tensor arguments for attnc_plan_create and attnc_launch in the runtime's
// unit tests (ValidateTest.cpp, FallbackTest.cpp, VariantTest.cpp,
// DriverTest.cpp): made-up device addresses that no test dereferences, with
// sizes and strides owned next to the descriptor that points at them; and
// the parsing of inline manifests.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_RUNTIME_TENSORARGS_H
#define ATTNC_TEST_RUNTIME_TENSORARGS_H

#include "attnc-c/Runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnc_test {

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

/// The descriptors of `tensors`, in order; valid while `tensors` is.
inline std::vector<attnc_tensor> descsOf(const std::vector<Tensor> &tensors) {
  std::vector<attnc_tensor> out;
  for (const Tensor &t : tensors)
    out.push_back(t.desc());
  return out;
}

/// A call of Inputs/fallback's `attn`: q, k, v, o, lse with B=2, H=8,
/// Hkv=2, Sq=300, Skv=500, head dim 64, all aligned.
inline std::vector<Tensor> fallbackFixtureTensors() {
  return {
      Tensor(0x100000, ATTNC_DTYPE_BF16, {2, 8, 300, 64}),  // q
      Tensor(0x1000000, ATTNC_DTYPE_BF16, {2, 2, 500, 64}), // k
      Tensor(0x2000000, ATTNC_DTYPE_BF16, {2, 2, 500, 64}), // v
      Tensor(0x3000000, ATTNC_DTYPE_BF16, {2, 8, 300, 64}), // o
      Tensor(0x4000000, ATTNC_DTYPE_F32, {2, 8, 300}),      // lse
  };
}

/// Its one scalar: the run-time softmax scale.
inline std::vector<attnc_scalar> fallbackFixtureScalars() {
  std::vector<attnc_scalar> scalars = {attnc_scalar{1, {0}}};
  scalars[0].value.f = 0.125;
  return scalars;
}

struct ModuleDeleter {
  void operator()(attnc_module *m) const { attnc_module_unload(m); }
};
using ModulePtr = std::unique_ptr<attnc_module, ModuleDeleter>;

/// Parses manifest TEXT; ERROR gets the loader's message (empty when it
/// loads), KEEP the module (else it is unloaded).
inline attnc_status parse(const std::string &text, std::string &error,
                          ModulePtr *keep = nullptr) {
  attnc_module *m = nullptr;
  attnc_status st = attnc_manifest_parse(text.data(), text.size(), nullptr, &m);
  error = attnc_last_error();
  if (keep)
    keep->reset(m);
  else
    attnc_module_unload(m);
  return st;
}

} // namespace attnc_test

#endif // ATTNC_TEST_RUNTIME_TENSORARGS_H
