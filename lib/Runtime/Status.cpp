//===- Status.cpp - Errors and dtypes of the runtime's C API --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The thread-local last-error string behind attnc_last_error(), the dtype
// table (names from docs/abi.md, element sizes) and the text helpers both
// halves use in messages. The error is per thread so
// that two threads launching at once cannot overwrite each other's message
// between a failing call and the read of its message.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <cstdio>
#include <cstring>

using namespace attnc::rt;

namespace {
thread_local std::string lastError;

struct DTypeInfo {
  attnc_dtype dtype;
  const char *name;
  size_t size;
};

// i1 is one byte per element: that is how torch.bool and the kernels store it.
constexpr DTypeInfo dtypeTable[] = {
    {ATTNC_DTYPE_BF16, "bf16", 2}, {ATTNC_DTYPE_F16, "f16", 2},
    {ATTNC_DTYPE_F32, "f32", 4},   {ATTNC_DTYPE_F64, "f64", 8},
    {ATTNC_DTYPE_I1, "i1", 1},     {ATTNC_DTYPE_I8, "i8", 1},
    {ATTNC_DTYPE_I32, "i32", 4},   {ATTNC_DTYPE_I64, "i64", 8},
};
} // namespace

attnc_status attnc::rt::fail(attnc_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

attnc_status attnc::rt::ok() {
  lastError.clear();
  return ATTNC_OK;
}

std::string attnc::rt::formatShape(const std::vector<Dim> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i].symbol.empty() ? std::to_string(shape[i].extent)
                                 : shape[i].symbol;
  }
  return s + "]";
}

std::string attnc::rt::hexText(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char *attnc::rt::dtypeText(attnc_dtype d) {
  const char *name = attnc_dtype_name(d);
  return name ? name : "<invalid>";
}

/// A factor as text, e.g. "ceil(Sq/64)", "num_sms", "512"; a sum in
/// parentheses when `inProduct`.
static std::string formatFactor(const Factor &f, bool inProduct) {
  switch (f.kind) {
  case ATTNC_FACTOR_CONSTANT:
    return std::to_string(f.value);
  case ATTNC_FACTOR_SYMBOL: {
    std::string q = f.ceilDiv == 1 ? f.symbol
                                   : "ceil(" + f.symbol + "/" +
                                         std::to_string(f.ceilDiv) + ")";
    if (f.plus.empty())
      return q;
    return inProduct ? "(" + q + "+" + f.plus + ")" : q + "+" + f.plus;
  }
  case ATTNC_FACTOR_NUM_SMS:
    return "num_sms";
  }
  return "?";
}

std::string attnc::rt::productText(const std::vector<Factor> &factors) {
  std::string rule;
  for (const Factor &f : factors)
    rule += (rule.empty() ? "" : "*") + formatFactor(f, factors.size() > 1);
  return rule;
}

extern "C" {

const char *attnc_last_error(void) { return lastError.c_str(); }

const char *attnc_status_name(attnc_status status) {
  switch (status) {
  case ATTNC_OK:
    return "ATTNC_OK";
  case ATTNC_ERROR_INVALID_ARGUMENT:
    return "ATTNC_ERROR_INVALID_ARGUMENT";
  case ATTNC_ERROR_IO:
    return "ATTNC_ERROR_IO";
  case ATTNC_ERROR_MANIFEST:
    return "ATTNC_ERROR_MANIFEST";
  case ATTNC_ERROR_NOT_FOUND:
    return "ATTNC_ERROR_NOT_FOUND";
  case ATTNC_ERROR_VALIDATION:
    return "ATTNC_ERROR_VALIDATION";
  case ATTNC_ERROR_CUDA:
    return "ATTNC_ERROR_CUDA";
  case ATTNC_ERROR_NO_DRIVER:
    return "ATTNC_ERROR_NO_DRIVER";
  }
  return "ATTNC_ERROR_UNKNOWN";
}

const char *attnc_dtype_name(attnc_dtype dtype) {
  for (const DTypeInfo &info : dtypeTable)
    if (info.dtype == dtype)
      return info.name;
  return nullptr;
}

attnc_dtype attnc_dtype_from_name(const char *name) {
  if (!name)
    return ATTNC_DTYPE_INVALID;
  for (const DTypeInfo &info : dtypeTable)
    if (std::strcmp(info.name, name) == 0)
      return info.dtype;
  return ATTNC_DTYPE_INVALID;
}

size_t attnc_dtype_size(attnc_dtype dtype) {
  for (const DTypeInfo &info : dtypeTable)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

} // extern "C"
