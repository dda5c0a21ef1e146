//===- Plan.cpp - Grid, workspace sizes and packed parameters of a call ---===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The computing half of a launch plan (PlanBuilder.h): the grid and the
// workspace sizes from the manifest's factor rules (the SM count comes from
// the plan options or the driver, only when a rule needs it), then every
// kernel parameter packed with its C type in ABI order, tensormaps encoded
// by the driver from the tensors they name. Also the plan half of the C API,
// which plans a kernel's fallback (docs/abi.md) for the calls it refuses.
// Everything but num_sms and tensormap encoding runs on the CPU only.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace attnc::rt;

attnc_status PlanBuilder::resolveNumSMs(const std::string &what) {
  if (numSMs > 0)
    return ATTNC_OK;
  if (attnc_status st = deviceNumSMs(numSMs)) {
    // Keep the driver's reason and say how to plan without a GPU.
    std::string why = attnc_last_error();
    numSMs = 0;
    return fail(st, k.name + ": " + what +
                        " needs the device's SM count ({\"device\": "
                        "\"num_sms\"}) but it cannot be queried: " +
                        why +
                        " (attnc_plan_options.num_sms gives it without a "
                        "GPU)");
  }
  return ATTNC_OK;
}

/// The product of FACTORS as VALUE and its rule as text, e.g.
/// "num_sms*ceil(Sq/64)"; OVERFLOW when it does not fit 63 bits.
attnc_status PlanBuilder::evaluate(const std::vector<Factor> &factors,
                                   const std::string &what, uint64_t &value,
                                   std::string &rule, bool &overflow) {
  int64_t product = 1;
  overflow = false;
  for (const Factor &f : factors) {
    int64_t v = f.value;
    if (f.kind == ATTNC_FACTOR_SYMBOL) {
      int64_t s = lookup(f.symbol)->first; // the manifest guarantees it
      // Cannot overflow: s >= 0 (checkTensor refuses negative sizes) and
      // ceilDiv >= 1 (the manifest reader), and the quotient is rounded up
      // only when ceilDiv >= 2, so it is at most 2^62.
      v = s / f.ceilDiv + (s % f.ceilDiv != 0);
      // The added symbol is any size: the sum may not fit, reported like
      // the product's overflow.
      if (!f.plus.empty())
        overflow |= __builtin_add_overflow(v, lookup(f.plus)->first, &v);
    } else if (f.kind == ATTNC_FACTOR_NUM_SMS) {
      if (attnc_status st = resolveNumSMs(what))
        return st;
      v = numSMs;
    }
    overflow |= __builtin_mul_overflow(product, v, &product);
  }
  value = static_cast<uint64_t>(product);
  rule = productText(factors);
  return ATTNC_OK;
}

attnc_status PlanBuilder::computeGrid() {
  static const char *axisName[3] = {"grid.x", "grid.y", "grid.z"};
  for (int a = 0; a < 3; ++a) {
    uint64_t extent;
    std::string rule;
    bool overflow;
    if (attnc_status st =
            evaluate(k.grid[a], axisName[a], extent, rule, overflow))
      return st;
    uint64_t limit = static_cast<uint64_t>(kMaxGridDim[a]);
    if (overflow || extent > limit)
      return refuse(
          std::string(axisName[a]) + " = " +
          (overflow ? std::string("overflow") : std::to_string(extent)) + " (" +
          rule + ") exceeds the CUDA limit of " + std::to_string(limit));
    plan.grid[a] = static_cast<int64_t>(extent);
    plan.empty |= extent == 0;
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::computeWorkspaceSizes() {
  plan.workspaceBytes.assign(k.params.size(), 0);
  plan.workspaceData.assign(k.params.size(), 0);
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    if (p.kind != ATTNC_PARAM_WORKSPACE)
      continue;
    std::string rule;
    bool overflow;
    if (attnc_status st = evaluate(p.bytes, "workspace " + p.name,
                                   plan.workspaceBytes[i], rule, overflow))
      return st;
    if (overflow)
      return refuse("workspace " + p.name + ": its size (" + rule +
                    ") overflows 64 bits");
    plan.workspaceData[i] = argOf[i]->data;
  }
  return ATTNC_OK;
}

/// Offsets of the packed parameters: every value at a multiple of its
/// alignment, a CUtensorMap at a multiple of kTensorMapAlign (the driver
/// copies each kernel parameter from where args[i] points, and a tensor map
/// must be 64-byte aligned there; its C++ type asks for 128).
attnc_status PlanBuilder::layout() {
  size_t n = k.params.size(), end = 0;
  plan.offsets.resize(n);
  plan.sizes.assign(n, 8);
  for (size_t i = 0; i < n; ++i) {
    size_t align = 8;
    if (k.params[i].kind == ATTNC_PARAM_TENSORMAP) {
      align = kTensorMapAlign;
      plan.sizes[i] = kTensorMapBytes;
    }
    end = (end + align - 1) / align * align;
    plan.offsets[i] = end;
    end += plan.sizes[i];
  }
  plan.storage.assign((end + kTensorMapAlign - 1) / kTensorMapAlign,
                      attnc_plan::Chunk{});
  return ATTNC_OK;
}

attnc_status PlanBuilder::packInt(size_t index, const Param &p, int64_t v,
                                  const std::string &what) {
  unsigned char *slot = plan.param(index);
  if (p.dtype == ATTNC_DTYPE_I32) {
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return refuse(what + " = " + std::to_string(v) +
                    " does not fit the kernel's i32 parameter " + p.name);
    int32_t narrow = static_cast<int32_t>(v);
    std::memcpy(slot, &narrow, 4);
    plan.sizes[index] = 4;
  } else {
    std::memcpy(slot, &v, 8);
    plan.sizes[index] = 8;
  }
  return ATTNC_OK;
}

/// The driver's view of the tensor: dimension 0 innermost, strides in
/// bytes for dimensions 1 and up. Validation checked what TMA requires.
attnc_status PlanBuilder::encodeTensorMap(size_t index, const Param &p) {
  const attnc_tensor &t = mappedBy(p);
  uint64_t elem = attnc_dtype_size(t.dtype);
  TensorMapRequest r;
  r.dtype = t.dtype;
  r.address = t.data;
  r.swizzle = p.swizzle;
  r.oobFillNaN = p.oobFillNaN;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    r.dims.push_back(static_cast<uint64_t>(t.sizes[d]));
    r.box.push_back(static_cast<uint32_t>(p.box[d]));
    if (d == t.rank - 1)
      continue;
    uint64_t stride = static_cast<uint64_t>(t.strides[d]) * elem;
    if (t.sizes[d] == 1) {
      // Never stepped along, but the driver still wants a multiple of 16:
      // use the packed stride, the next inner dimension's span.
      uint64_t inner = r.strides.empty()
                           ? r.dims[0] * elem
                           : r.strides.back() * r.dims[r.dims.size() - 2];
      stride = (inner + 15) / 16 * 16;
    }
    r.strides.push_back(stride);
  }
  return attnc::rt::encodeTensorMap(r, plan.param(index),
                                    k.name + ": tensormap " + p.name + " of " +
                                        p.tensor);
}

attnc_status PlanBuilder::pack(const attnc_scalar *scalars) {
  size_t n = k.params.size(), nextScalar = 0;
  for (size_t i = 0; i < n; ++i) {
    const Param &p = k.params[i];
    unsigned char *slot = plan.param(i);
    attnc_status st = ATTNC_OK;
    switch (p.kind) {
    case ATTNC_PARAM_TENSOR:
    case ATTNC_PARAM_WORKSPACE:
      std::memcpy(slot, &argOf[i]->data, 8);
      break;
    case ATTNC_PARAM_TENSORMAP:
      // An empty plan never launches, and an empty tensor has nothing to
      // read (TMA cannot describe it): the map stays zero, and needs no
      // driver.
      if (!plan.empty && !hasNoElements(mappedBy(p)))
        st = encodeTensorMap(i, p);
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
          std::memcpy(slot, &f, 4);
          plan.sizes[i] = 4;
        } else {
          std::memcpy(slot, &v, 8);
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
    const Param &p = k.params[i];
    if (p.kind != ATTNC_PARAM_TENSOR && p.kind != ATTNC_PARAM_WORKSPACE)
      continue;
    argOf[i] = &tensors[next++];
    attnc_status st = p.kind == ATTNC_PARAM_TENSOR
                          ? checkTensor(p, *argOf[i])
                          : checkWorkspaceShape(p, *argOf[i]);
    if (st)
      return st;
  }
  // Every symbol is bound now. What needs the driver (num_sms, tensormap
  // encoding) comes last, so that refusals never depend on having a GPU.
  if (attnc_status st = checkConstraints())
    return st;
  if (attnc_status st = computeGrid())
    return st;
  if (attnc_status st = computeWorkspaceSizes())
    return st;
  if (attnc_status st = checkWorkspaces())
    return st;
  if (attnc_status st = checkExtents())
    return st;
  if (attnc_status st = checkTensorMaps())
    return st;
  if (attnc_status st = layout())
    return st;
  if (attnc_status st = pack(scalars))
    return st;
  plan.kernel = &k;
  for (const auto &b : bound)
    plan.symbols.push_back({b.first, b.second.first});
  return ATTNC_OK;
}

namespace {

/// A plan of K for the call, or of K's fallback when K refuses the
/// arguments and the fallback accepts them.
attnc_status planOrFallBack(const attnc_kernel &k, const attnc_tensor *tensors,
                            size_t numTensors, const attnc_scalar *scalars,
                            size_t numScalars, int64_t numSMs,
                            std::unique_ptr<attnc_plan> &plan) {
  plan = std::make_unique<attnc_plan>();
  PlanBuilder builder(k, *plan, numSMs);
  attnc_status st = builder.build(tensors, numTensors, scalars, numScalars);
  // Only a refusal of the arguments falls back: a driver or CUDA error
  // would be the same for the fallback, and misuse of the API is the
  // caller's to fix.
  if (st == ATTNC_ERROR_VALIDATION && k.fallback) {
    const attnc_kernel &f = *k.fallback;
    std::string refusal = attnc_last_error();
    plan = std::make_unique<attnc_plan>();
    // One SM count per call, whichever kernel runs it.
    PlanBuilder fallback(f, *plan, builder.usedNumSMs());
    attnc_status fst = fallback.build(tensors, numTensors, scalars, numScalars);
    if (fst == ATTNC_ERROR_VALIDATION)
      return fail(st, refusal + "; its fallback kernel " + f.name +
                          " refuses them too: " + attnc_last_error());
    if (fst != ATTNC_OK)
      return fail(fst, refusal + "; planning its fallback kernel " + f.name +
                           " failed: " + attnc_last_error());
    st = ATTNC_OK;
  }
  if (st != ATTNC_OK)
    plan.reset();
  return st;
}

} // namespace

extern "C" {

attnc_status attnc_plan_create_with_options(
    const attnc_kernel *kernel, const attnc_tensor *tensors, size_t numTensors,
    const attnc_scalar *scalars, size_t numScalars,
    const attnc_plan_options *options, attnc_plan **out) {
  if (!kernel || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_create: kernel and out must not be NULL");
  *out = nullptr;
  int64_t numSMs = options ? options->num_sms : 0;
  if (numSMs < 0)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_create: options.num_sms = " +
                    std::to_string(numSMs) + " is negative");
  std::unique_ptr<attnc_plan> plan;
  attnc_status st = ATTNC_ERROR_VALIDATION;
  // A variant whose sizes the call meets runs it, unless it refuses the
  // arguments (say, for its own alignment rules): then the kernel does.
  if (const attnc_kernel *variant = chooseVariant(*kernel, tensors, numTensors))
    st = planOrFallBack(*variant, tensors, numTensors, scalars, numScalars,
                        numSMs, plan);
  if (st == ATTNC_ERROR_VALIDATION)
    st = planOrFallBack(*kernel, tensors, numTensors, scalars, numScalars,
                        numSMs, plan);
  if (st != ATTNC_OK)
    return st;
  *out = plan.release();
  return ok();
}

attnc_status attnc_plan_create(const attnc_kernel *kernel,
                               const attnc_tensor *tensors, size_t numTensors,
                               const attnc_scalar *scalars, size_t numScalars,
                               attnc_plan **out) {
  return attnc_plan_create_with_options(kernel, tensors, numTensors, scalars,
                                        numScalars, nullptr, out);
}

void attnc_plan_destroy(attnc_plan *plan) { delete plan; }

const attnc_kernel *attnc_plan_kernel(const attnc_plan *plan) {
  return plan ? plan->kernel : nullptr;
}

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

attnc_status attnc_plan_workspace_bytes(const attnc_plan *plan, size_t index,
                                        uint64_t *bytes) {
  if (!plan || !bytes || index >= plan->kernel->params.size() ||
      plan->kernel->params[index].kind != ATTNC_PARAM_WORKSPACE)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_workspace_bytes: NULL argument or parameter " +
                    std::to_string(index) + " is not a workspace");
  *bytes = plan->workspaceBytes[index];
  return ok();
}

size_t attnc_plan_num_params(const attnc_plan *plan) {
  return plan ? plan->sizes.size() : 0;
}

attnc_status attnc_plan_param(const attnc_plan *plan, size_t index,
                              const void **bytes, size_t *size) {
  if (!plan || !bytes || !size || index >= plan->sizes.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_param: NULL argument or index out of range");
  *bytes = plan->param(index);
  *size = plan->sizes[index];
  return ok();
}

} // extern "C"
