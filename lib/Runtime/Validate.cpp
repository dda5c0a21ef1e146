//===- Validate.cpp - Check call arguments and build a launch plan --------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Turns a call's tensor descriptors and scalars into a launch plan: checks
// every tensor against its manifest parameter (rank, dtype, static extents,
// one value per size symbol, contiguous innermost dimension, alignment,
// pointer sanity, outputs disjoint from inputs, the GQA head rule), computes
// the grid from the manifest's rule and packs the size/stride/scalar
// parameters with their C types in ABI order. Kernels trust their arguments
// completely, so every refusal here is an out-of-bounds access or a silent
// wrong answer prevented; each message names the parameter, the dimension,
// the rule and the values. CPU only, so all of it is unit-tested without a
// GPU.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace attnc::rt;

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char *dtypeText(attnc_dtype d) {
  const char *name = attnc_dtype_name(d);
  return name ? name : "<invalid>";
}

/// The bytes [begin, end) a tensor argument can touch; empty when it has no
/// elements.
struct Extent {
  uint64_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
};

class PlanBuilder {
public:
  PlanBuilder(const attnc_kernel &k, attnc_plan &plan) : k(k), plan(plan) {}

  attnc_status build(const attnc_tensor *tensors, size_t numTensors,
                     const attnc_scalar *scalars, size_t numScalars);

private:
  const attnc_kernel &k;
  attnc_plan &plan;
  /// Symbol -> (value, where it was bound, e.g. "q.shape[0]").
  std::vector<std::pair<std::string, std::pair<int64_t, std::string>>> bound;
  /// Per parameter index: the tensor argument given for it.
  std::vector<const attnc_tensor *> argOf;

  attnc_status refuse(const std::string &message) {
    return fail(ATTNC_ERROR_VALIDATION, k.name + ": " + message);
  }
  const std::pair<int64_t, std::string> *lookup(const std::string &sym) const {
    for (const auto &b : bound)
      if (b.first == sym)
        return &b.second;
    return nullptr;
  }
  attnc_status checkCounts(size_t numTensors, size_t numScalars);
  attnc_status checkTensor(const Param &p, const attnc_tensor &t);
  attnc_status checkExtents();
  attnc_status checkGQA();
  attnc_status computeGrid();
  attnc_status pack(const attnc_scalar *scalars);
  attnc_status packInt(size_t index, const Param &p, int64_t v,
                       const std::string &what);
};

attnc_status PlanBuilder::checkCounts(size_t numTensors, size_t numScalars) {
  std::string tensorNames, scalarNames;
  size_t wantTensors = 0, wantScalars = 0;
  for (const Param &p : k.params) {
    std::string &names =
        p.kind == ATTNC_PARAM_TENSOR ? tensorNames : scalarNames;
    if (p.kind == ATTNC_PARAM_TENSOR)
      ++wantTensors;
    else if (p.kind == ATTNC_PARAM_SCALAR)
      ++wantScalars;
    else
      continue;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  if (numTensors != wantTensors)
    return refuse("expected " + std::to_string(wantTensors) + " tensors (" +
                  tensorNames + "), got " + std::to_string(numTensors));
  if (numScalars != wantScalars)
    return refuse("expected " + std::to_string(wantScalars) + " scalars (" +
                  scalarNames + "), got " + std::to_string(numScalars));
  return ATTNC_OK;
}

attnc_status PlanBuilder::checkTensor(const Param &p, const attnc_tensor &t) {
  const std::string &n = p.name;
  if (t.rank != rankOf(p))
    return refuse(n + " has rank " + std::to_string(t.rank) +
                  " but the kernel expects rank " + std::to_string(rankOf(p)) +
                  " " + formatShape(p.shape));
  if (t.dtype != p.dtype)
    return refuse(n + " has dtype " + dtypeText(t.dtype) +
                  " but the kernel expects " + dtypeText(p.dtype));
  if (t.rank > 0 && (!t.sizes || !t.strides))
    return refuse(n + ": sizes and strides must not be NULL");

  bool hasElements = true;
  for (int32_t d = 0; d < t.rank; ++d) {
    std::string at = n + ".shape[" + std::to_string(d) + "]";
    int64_t size = t.sizes[d], stride = t.strides[d];
    if (size < 0)
      return refuse(at + " = " + std::to_string(size) + " is negative");
    if (stride < 0)
      return refuse(n + ".stride[" + std::to_string(d) +
                    "] = " + std::to_string(stride) +
                    " is negative (negative strides are not supported)");
    hasElements &= size != 0;
    const Dim &want = p.shape[d];
    if (want.symbol.empty()) {
      if (size != want.extent)
        return refuse(at + " = " + std::to_string(size) +
                      " but the kernel was compiled for " +
                      std::to_string(want.extent));
    } else if (const auto *b = lookup(want.symbol)) {
      if (b->first != size)
        return refuse(at + " = " + std::to_string(size) + " but " +
                      want.symbol + " = " + std::to_string(b->first) +
                      " from " + b->second);
    } else {
      bound.push_back({want.symbol, {size, at}});
    }
  }
  // A one-element innermost dimension is read at index 0 only, so its stride
  // is irrelevant (torch reports odd strides for such views).
  if (p.contiguousLast && t.rank > 0 && t.sizes[t.rank - 1] > 1 &&
      t.strides[t.rank - 1] != 1)
    return refuse(n + ".stride[" + std::to_string(t.rank - 1) +
                  "] = " + std::to_string(t.strides[t.rank - 1]) +
                  " but the innermost dimension must be contiguous "
                  "(stride 1)");
  if (!hasElements)
    return ATTNC_OK; // nothing is read or written: any pointer will do
  if (t.data == 0)
    return refuse(n + ": data pointer is NULL but the tensor is not empty");
  if (t.data % static_cast<uint64_t>(p.align) != 0)
    return refuse(n + ": data pointer " + hex(t.data) + " is not aligned to " +
                  std::to_string(p.align) + " bytes");
  // Kernels that move whole rows with 16-byte accesses (cp.async, vector
  // loads) need every row, not only the first, to start aligned.
  for (int32_t d = 0; p.rowAlign > 0 && d + 1 < t.rank; ++d) {
    uint64_t bytes =
        static_cast<uint64_t>(t.strides[d]) * attnc_dtype_size(t.dtype);
    if (t.sizes[d] > 1 && bytes % static_cast<uint64_t>(p.rowAlign) != 0)
      return refuse(n + ".stride[" + std::to_string(d) +
                    "] = " + std::to_string(t.strides[d]) + " elements (" +
                    std::to_string(bytes) + " bytes) is not a multiple of " +
                    std::to_string(p.rowAlign) +
                    " bytes: every row must start aligned");
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::checkExtents() {
  std::vector<Extent> extents(k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    const attnc_tensor *t = argOf[i];
    if (!t)
      continue;
    bool empty = false, overflow = false;
    for (int32_t d = 0; d < t->rank; ++d)
      empty |= t->sizes[d] == 0;
    if (empty)
      continue;
    // Offset in elements of the last element, sum of (size - 1) * stride.
    uint64_t sum = 0;
    for (int32_t d = 0; d < t->rank; ++d) {
      uint64_t term;
      overflow |= __builtin_mul_overflow(uint64_t(t->sizes[d] - 1),
                                         uint64_t(t->strides[d]), &term);
      overflow |= __builtin_add_overflow(sum, term, &sum);
    }
    uint64_t bytes;
    overflow |= __builtin_add_overflow(sum, uint64_t(1), &sum);
    overflow |= __builtin_mul_overflow(sum, attnc_dtype_size(t->dtype), &bytes);
    overflow |= __builtin_add_overflow(t->data, bytes, &extents[i].end);
    if (overflow)
      return refuse(k.params[i].name +
                    ": sizes and strides address more than 2^64 bytes");
    extents[i].begin = t->data;
  }
  for (size_t o = 0; o < k.params.size(); ++o) {
    if (!argOf[o] || k.params[o].role != ATTNC_ROLE_OUTPUT ||
        extents[o].empty())
      continue;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (i == o || !argOf[i] || extents[i].empty())
        continue;
      const Param &other = k.params[i];
      const char *role = other.role == ATTNC_ROLE_OUTPUT ? "output" : "input";
      // Report each output/output pair once.
      if (other.role == ATTNC_ROLE_OUTPUT && i < o)
        continue;
      if (extents[o].begin == extents[i].begin)
        return refuse("output " + k.params[o].name + " and " + role + " " +
                      other.name + " share the data pointer " +
                      hex(extents[o].begin) +
                      ": an output must not alias another argument");
      if (extents[o].begin < extents[i].end &&
          extents[i].begin < extents[o].end)
        return refuse("output " + k.params[o].name + " [" +
                      hex(extents[o].begin) + ", " + hex(extents[o].end) +
                      ") overlaps " + role + " " + other.name + " [" +
                      hex(extents[i].begin) + ", " + hex(extents[i].end) +
                      "): an output must not overlap another argument");
    }
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::checkGQA() {
  auto it = k.attrs.find("gqa");
  if (it == k.attrs.end() || it->second != "true")
    return ATTNC_OK;
  const auto *h = lookup("H"), *hkv = lookup("Hkv");
  if (!h || !hkv)
    return ATTNC_OK;
  if (hkv->first == 0 ? h->first != 0 : h->first % hkv->first != 0)
    return refuse("GQA: H = " + std::to_string(h->first) + " (from " +
                  h->second + ") is not a multiple of Hkv = " +
                  std::to_string(hkv->first) + " (from " + hkv->second + ")");
  return ATTNC_OK;
}

attnc_status PlanBuilder::computeGrid() {
  // CUDA's limits on gridDim.
  static const int64_t limits[3] = {2147483647, 65535, 65535};
  static const char axisName[3] = {'x', 'y', 'z'};
  for (int a = 0; a < 3; ++a) {
    int64_t extent = 1;
    std::string rule;
    bool overflow = false;
    for (const GridFactor &f : k.grid[a]) {
      int64_t v = f.value;
      if (!f.symbol.empty()) {
        int64_t s = lookup(f.symbol)->first; // the manifest guarantees it
        v = s / f.ceilDiv + (s % f.ceilDiv != 0);
        rule += std::string(rule.empty() ? "" : "*") +
                (f.ceilDiv == 1 ? f.symbol
                                : "ceil(" + f.symbol + "/" +
                                      std::to_string(f.ceilDiv) + ")");
      } else {
        rule += (rule.empty() ? "" : "*") + std::to_string(v);
      }
      overflow |= __builtin_mul_overflow(extent, v, &extent);
    }
    if (overflow || extent > limits[a])
      return refuse(
          std::string("grid.") + axisName[a] + " = " +
          (overflow ? std::string("overflow") : std::to_string(extent)) + " (" +
          rule + ") exceeds the CUDA limit of " + std::to_string(limits[a]));
    plan.grid[a] = extent;
    plan.empty |= extent == 0;
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::packInt(size_t index, const Param &p, int64_t v,
                                  const std::string &what) {
  uint64_t &slot = plan.storage[index];
  if (p.dtype == ATTNC_DTYPE_I32) {
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return refuse(what + " = " + std::to_string(v) +
                    " does not fit the kernel's i32 parameter " + p.name);
    int32_t narrow = static_cast<int32_t>(v);
    std::memcpy(&slot, &narrow, 4);
    plan.sizes[index] = 4;
  } else {
    std::memcpy(&slot, &v, 8);
    plan.sizes[index] = 8;
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::pack(const attnc_scalar *scalars) {
  size_t n = k.params.size(), nextScalar = 0;
  plan.storage.assign(n, 0);
  plan.sizes.assign(n, 8);
  plan.offsets.resize(n);
  for (size_t i = 0; i < n; ++i) {
    plan.offsets[i] = i * sizeof(uint64_t);
    const Param &p = k.params[i];
    attnc_status st = ATTNC_OK;
    switch (p.kind) {
    case ATTNC_PARAM_TENSOR:
      std::memcpy(&plan.storage[i], &argOf[i]->data, 8);
      break;
    case ATTNC_PARAM_SIZE:
      st = packInt(i, p, lookup(p.name)->first, "size " + p.name);
      break;
    case ATTNC_PARAM_STRIDE:
      st = packInt(i, p, argOf[p.tensorIndex]->strides[p.dim],
                   p.tensor + ".stride[" + std::to_string(p.dim) + "]");
      break;
    case ATTNC_PARAM_SCALAR: {
      const attnc_scalar &s = scalars[nextScalar++];
      if (p.dtype == ATTNC_DTYPE_F32 || p.dtype == ATTNC_DTYPE_F64) {
        double v = s.is_float ? s.value.f : static_cast<double>(s.value.i);
        if (p.dtype == ATTNC_DTYPE_F32) {
          float f = static_cast<float>(v);
          std::memcpy(&plan.storage[i], &f, 4);
          plan.sizes[i] = 4;
        } else {
          std::memcpy(&plan.storage[i], &v, 8);
        }
        break;
      }
      int64_t v = s.value.i;
      if (s.is_float) {
        double f = s.value.f;
        // 2^63 is exact in a double; anything at or beyond it overflows.
        if (!(std::trunc(f) == f && f >= -9223372036854775808.0 &&
              f < 9223372036854775808.0)) {
          char buf[64];
          std::snprintf(buf, sizeof(buf), "%g", f);
          return refuse("scalar " + p.name + " is " + dtypeText(p.dtype) +
                        " but the non-integer value " + buf + " was given");
        }
        v = static_cast<int64_t>(f);
      }
      st = packInt(i, p, v, "scalar " + p.name);
      break;
    }
    }
    if (st != ATTNC_OK)
      return st;
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::build(const attnc_tensor *tensors, size_t numTensors,
                                const attnc_scalar *scalars,
                                size_t numScalars) {
  if (attnc_status st = checkCounts(numTensors, numScalars))
    return st;
  if ((numTensors && !tensors) || (numScalars && !scalars))
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                k.name + ": tensors/scalars array is NULL");
  argOf.assign(k.params.size(), nullptr);
  size_t next = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind != ATTNC_PARAM_TENSOR)
      continue;
    argOf[i] = &tensors[next++];
    if (attnc_status st = checkTensor(k.params[i], *argOf[i]))
      return st;
  }
  if (attnc_status st = checkExtents())
    return st;
  if (attnc_status st = checkGQA())
    return st;
  if (attnc_status st = computeGrid())
    return st;
  if (attnc_status st = pack(scalars))
    return st;
  plan.kernel = &k;
  for (const auto &b : bound)
    plan.symbols.push_back({b.first, b.second.first});
  return ATTNC_OK;
}

} // namespace

extern "C" {

attnc_status attnc_plan_create(const attnc_kernel *kernel,
                               const attnc_tensor *tensors, size_t numTensors,
                               const attnc_scalar *scalars, size_t numScalars,
                               attnc_plan **out) {
  if (!kernel || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_create: kernel and out must not be NULL");
  *out = nullptr;
  auto plan = std::make_unique<attnc_plan>();
  PlanBuilder builder(*kernel, *plan);
  if (attnc_status st = builder.build(tensors, numTensors, scalars, numScalars))
    return st;
  *out = plan.release();
  return ok();
}

void attnc_plan_destroy(attnc_plan *plan) { delete plan; }

void attnc_plan_grid(const attnc_plan *plan, int64_t grid[3]) {
  if (plan && grid)
    for (int i = 0; i < 3; ++i)
      grid[i] = plan->grid[i];
}

int attnc_plan_is_empty(const attnc_plan *plan) {
  return plan && plan->empty ? 1 : 0;
}

attnc_status attnc_plan_symbol(const attnc_plan *plan, const char *symbol,
                               int64_t *value) {
  if (!plan || !symbol || !value)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_symbol: arguments must not be NULL");
  for (const auto &s : plan->symbols)
    if (s.first == symbol) {
      *value = s.second;
      return ok();
    }
  return fail(ATTNC_ERROR_NOT_FOUND,
              std::string("no size symbol '") + symbol + "' in this plan");
}

size_t attnc_plan_num_params(const attnc_plan *plan) {
  return plan ? plan->sizes.size() : 0;
}

attnc_status attnc_plan_param(const attnc_plan *plan, size_t index,
                              const void **bytes, size_t *size) {
  if (!plan || !bytes || !size || index >= plan->sizes.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_param: NULL argument or index out of range");
  *bytes = reinterpret_cast<const char *>(plan->storage.data()) +
           plan->offsets[index];
  *size = plan->sizes[index];
  return ok();
}

} // extern "C"
