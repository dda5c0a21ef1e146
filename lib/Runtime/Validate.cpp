//===- Validate.cpp - Check a call's arguments against the manifest -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The checking half of a launch plan (PlanBuilder.h): every tensor against
// its manifest parameter (rank, dtype, static extents, one value per size
// symbol, contiguous innermost dimension, alignment, pointer sanity), every
// workspace against its byte rule, the TMA rules on tensors that tensormaps
// describe, outputs and workspaces disjoint from every other argument, and
// the manifest's constraints on size symbols, which the runtime applies
// without knowing what they mean. Kernels trust their arguments completely,
// so every refusal here is an out-of-bounds access, a hardware fault or a
// silent wrong answer prevented; each message names the parameter, the
// dimension, the rule and the values. CPU only, so all of it is unit-tested
// without a GPU.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

#include "llvm/Support/MathExtras.h"

using namespace attnc::rt;

namespace {

/// The bytes [begin, end) an argument can touch; empty when it has no
/// elements.
struct Extent {
  uint64_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
};

} // namespace

attnc_status PlanBuilder::checkCounts(size_t numTensors, size_t numScalars) {
  std::string tensorNames, scalarNames;
  size_t wantTensors = 0, wantScalars = 0;
  bool workspaces = false;
  for (const Param &p : k.params) {
    bool tensorLike =
        p.kind == ATTNC_PARAM_TENSOR || p.kind == ATTNC_PARAM_WORKSPACE;
    std::string &names = tensorLike ? tensorNames : scalarNames;
    workspaces |= p.kind == ATTNC_PARAM_WORKSPACE;
    if (tensorLike)
      ++wantTensors;
    else if (p.kind == ATTNC_PARAM_SCALAR)
      ++wantScalars;
    else
      continue;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  if (numTensors != wantTensors)
    return refuse("expected " + std::to_string(wantTensors) +
                  (workspaces ? " tensors and workspaces (" : " tensors (") +
                  tensorNames + "), got " + std::to_string(numTensors));
  if (numScalars != wantScalars)
    return refuse("expected " + std::to_string(wantScalars) + " scalars (" +
                  scalarNames + "), got " + std::to_string(numScalars));
  return ATTNC_OK;
}

/// Rank, dtype and extents of T against P, binding P's size symbols to T's
/// sizes, but for UNBOUND (a size rule's own symbol, which the caller has
/// not chosen yet: its extent may be anything).
attnc_status PlanBuilder::bindShape(const Param &p, const attnc_tensor &t,
                                    const std::string &unbound) {
  const std::string &n = p.name;
  if (t.rank != rankOf(p))
    return refuse(n + " has rank " + std::to_string(t.rank) +
                  " but the kernel expects rank " + std::to_string(rankOf(p)) +
                  " " + formatShape(p.shape));
  if (t.dtype != p.dtype)
    return refuse(n + " has dtype " + dtypeText(t.dtype) +
                  " but the kernel expects " + dtypeText(p.dtype));
  if (t.rank > 0 && !t.sizes)
    return refuse(n + ": sizes must not be NULL");
  for (int32_t d = 0; d < t.rank; ++d) {
    std::string at = n + ".shape[" + std::to_string(d) + "]";
    int64_t size = t.sizes[d];
    if (size < 0)
      return refuse(at + " = " + std::to_string(size) + " is negative");
    const Dim &want = p.shape[d];
    if (want.symbol.empty()) {
      if (size != want.extent)
        return refuse(at + " = " + std::to_string(size) +
                      " but the kernel was compiled for " +
                      std::to_string(want.extent));
    } else if (want.symbol == unbound) {
      continue;
    } else if (const auto *b = lookup(want.symbol)) {
      if (b->first != size)
        return refuse(at + " = " + std::to_string(size) + " but " +
                      want.symbol + " = " + std::to_string(b->first) +
                      " from " + b->second);
    } else {
      bound.push_back({want.symbol, {size, at}});
    }
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::checkTensor(const Param &p, const attnc_tensor &t) {
  if (attnc_status st = bindShape(p, t, std::string()))
    return st;
  const std::string &n = p.name;
  if (t.rank > 0 && !t.strides)
    return refuse(n + ": strides must not be NULL");
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.strides[d] < 0)
      return refuse(n + ".stride[" + std::to_string(d) +
                    "] = " + std::to_string(t.strides[d]) +
                    " is negative (negative strides are not supported)");
  // A one-element innermost dimension is read at index 0 only, so its stride
  // is irrelevant (torch reports odd strides for such views).
  if (p.contiguousLast && t.rank > 0 && t.sizes[t.rank - 1] > 1 &&
      t.strides[t.rank - 1] != 1)
    return refuse(n + ".stride[" + std::to_string(t.rank - 1) +
                  "] = " + std::to_string(t.strides[t.rank - 1]) +
                  " but the innermost dimension must be contiguous "
                  "(stride 1)");
  if (hasNoElements(t))
    return ATTNC_OK; // nothing is read or written: any pointer will do
  if (t.data == 0)
    return refuse(n + ": data pointer is NULL but the tensor is not empty");
  if (t.data % static_cast<uint64_t>(p.align) != 0)
    return refuse(n + ": data pointer " + hexText(t.data) +
                  " is not aligned to " + std::to_string(p.align) + " bytes");
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
    // A workspace is written up to the bytes its rule asks for, whatever
    // the caller allocated beyond.
    if (k.params[i].kind == ATTNC_PARAM_WORKSPACE) {
      extents[i].begin = t->data;
      if (__builtin_add_overflow(t->data, plan.workspaceBytes[i],
                                 &extents[i].end))
        return refuse("workspace " + k.params[i].name +
                      " ends beyond 2^64 bytes");
      continue;
    }
    if (hasNoElements(*t))
      continue;
    bool overflow = false;
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
  // Outputs and workspaces are written: neither may share a byte with any
  // other argument. Inputs may share memory with each other.
  auto written = [&](size_t i) {
    return k.params[i].role == ATTNC_ROLE_OUTPUT ||
           k.params[i].kind == ATTNC_PARAM_WORKSPACE;
  };
  auto roleOf = [&](size_t i) {
    return k.params[i].kind == ATTNC_PARAM_WORKSPACE ? "workspace"
           : k.params[i].role == ATTNC_ROLE_OUTPUT   ? "output"
                                                     : "input";
  };
  for (size_t o = 0; o < k.params.size(); ++o) {
    if (!argOf[o] || !written(o) || extents[o].empty())
      continue;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (i == o || !argOf[i] || extents[i].empty())
        continue;
      // Report each pair of written arguments once.
      if (written(i) && i < o)
        continue;
      std::string self = std::string(roleOf(o)) + " " + k.params[o].name;
      std::string other = std::string(roleOf(i)) + " " + k.params[i].name;
      std::string rule = k.params[o].kind == ATTNC_PARAM_WORKSPACE
                             ? ": a workspace"
                             : ": an output";
      if (extents[o].begin == extents[i].begin)
        return refuse(self + " and " + other + " share the data pointer " +
                      hexText(extents[o].begin) + rule +
                      " must not alias another argument");
      if (extents[o].begin < extents[i].end &&
          extents[i].begin < extents[o].end)
        return refuse(self + " [" + hexText(extents[o].begin) + ", " +
                      hexText(extents[o].end) + ") overlaps " + other + " [" +
                      hexText(extents[i].begin) + ", " +
                      hexText(extents[i].end) + ")" + rule +
                      " must not overlap another argument");
    }
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::checkWorkspaceShape(const Param &p,
                                              const attnc_tensor &t) {
  // One calling convention for all memory arguments keeps the C API and the
  // bindings small: a workspace is a byte vector.
  if (t.rank != 1 || t.dtype != ATTNC_DTYPE_I8)
    return refuse("workspace " + p.name +
                  " must be passed as a 1-D i8 tensor of its size in bytes, "
                  "got rank " +
                  std::to_string(t.rank) + " " + dtypeText(t.dtype));
  if (!t.sizes)
    return refuse("workspace " + p.name + ": sizes must not be NULL");
  if (t.sizes[0] < 0)
    return refuse("workspace " + p.name + " has a negative size (" +
                  std::to_string(t.sizes[0]) + " bytes)");
  if (t.strides && t.sizes[0] > 1 && t.strides[0] != 1)
    return refuse("workspace " + p.name +
                  ".stride[0] = " + std::to_string(t.strides[0]) +
                  " but a workspace must be contiguous (stride 1)");
  return ATTNC_OK;
}

/// Runs after computeWorkspaceSizes: the byte rule may need num_sms.
attnc_status PlanBuilder::checkWorkspaces() {
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    if (p.kind != ATTNC_PARAM_WORKSPACE)
      continue;
    const attnc_tensor &t = *argOf[i];
    uint64_t need = plan.workspaceBytes[i];
    std::string rule = productText(p.bytes);
    if (static_cast<uint64_t>(t.sizes[0]) < need)
      return refuse("workspace " + p.name + " is " +
                    std::to_string(t.sizes[0]) +
                    " bytes but the kernel needs " + std::to_string(need) +
                    " (" + rule + ")");
    if (need == 0)
      continue; // nothing is touched: any pointer will do
    if (t.data == 0)
      return refuse("workspace " + p.name +
                    ": data pointer is NULL but the kernel needs " +
                    std::to_string(need) + " bytes");
    if (t.data % 16 != 0)
      return refuse("workspace " + p.name + ": data pointer " +
                    hexText(t.data) + " is not aligned to 16 bytes");
  }
  return checkWorkspaceViews();
}

/// A view's extents come from bound symbols; its bytes must lie inside
/// the workspace given (they may not, if the byte rule says less).
attnc_status PlanBuilder::checkWorkspaceViews() {
  views.clear();
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    if (p.kind != ATTNC_PARAM_WORKSPACE || p.viewDtype == ATTNC_DTYPE_INVALID)
      continue;
    // Sized on the first view only: most kernels have none, and a plan is
    // built per call.
    if (views.empty())
      views.resize(k.params.size());
    View &v = views[i];
    int64_t bytes = static_cast<int64_t>(attnc_dtype_size(p.viewDtype));
    bool overflow = false;
    for (const Dim &d : p.viewShape) {
      int64_t e = d.symbol.empty() ? d.extent : lookup(d.symbol)->first;
      v.sizes.push_back(e);
      overflow |= llvm::MulOverflow(bytes, e, bytes);
    }
    v.strides.assign(v.sizes.size(), 1);
    for (size_t d = v.sizes.size() - 1; d > 0; --d)
      v.strides[d - 1] = v.strides[d] * std::max<int64_t>(v.sizes[d], 1);
    const attnc_tensor &w = *argOf[i];
    if (overflow || bytes > w.sizes[0])
      return refuse("workspace " + p.name + " is " +
                    std::to_string(w.sizes[0]) + " bytes but its view " +
                    attnc_dtype_name(p.viewDtype) + formatShape(p.viewShape) +
                    (overflow ? " overflows 64 bits"
                              : " needs " + std::to_string(bytes)));
    v.t = {w.data, p.viewDtype, static_cast<int32_t>(v.sizes.size()),
           v.sizes.data(), v.strides.data()};
  }
  return ATTNC_OK;
}

/// The manifest's rules on size symbols, applied blindly: the runtime does
/// not know why a kernel needs them (e.g. H a multiple of Hkv for grouped
/// heads), only that it cannot run without.
attnc_status PlanBuilder::checkConstraints() {
  for (const Constraint &c : k.constraints)
    if (std::string why = violation(c); !why.empty())
      return refuse(why);
  return ATTNC_OK;
}

std::string PlanBuilder::violation(const Constraint &c) const {
  // The manifest guarantees that some tensor binds every symbol.
  int64_t lhs = lookup(c.lhs)->first;
  std::string l = c.lhs + " (= " + std::to_string(lhs) + ")";
  if (c.kind == ATTNC_CONSTRAINT_MIN)
    return lhs < c.value ? l + " must be at least " + std::to_string(c.value)
                         : "";
  if (c.kind == ATTNC_CONSTRAINT_MAX)
    return lhs > c.value ? l + " must be at most " + std::to_string(c.value)
                         : "";
  int64_t rhs = lookup(c.rhs)->first;
  std::string r = c.rhs + " (= " + std::to_string(rhs) + ")";
  if (c.kind == ATTNC_CONSTRAINT_EQUAL && lhs != rhs)
    return l + " must equal " + r;
  // (A factor times a size can overflow; an overflowing product is no
  // size's.)
  int64_t scaled;
  if (c.kind == ATTNC_CONSTRAINT_RATIO &&
      (llvm::MulOverflow(c.value, rhs, scaled) || lhs != scaled))
    return l + " must be " + std::to_string(c.value) + " times " + r;
  // (Past int64, value * rhs bounds every size.)
  if (c.kind == ATTNC_CONSTRAINT_AT_MOST &&
      !llvm::MulOverflow(c.value, rhs, scaled) && lhs > scaled)
    return l + " must be at most " + std::to_string(c.value) + " times " + r;
  if (c.kind == ATTNC_CONSTRAINT_DIVISIBLE && (rhs <= 0 || lhs % rhs != 0))
    return l + " must be a multiple of " + r +
           (rhs <= 0 ? std::string(", which must be positive") : std::string());
  return "";
}

/// What cuTensorMapEncodeTiled accepts of a tensor, checked here so that
/// the message names the argument and the rule instead of the driver's
/// CUDA_ERROR_INVALID_VALUE. The box and swizzle rules depend on the
/// manifest alone and were checked when it was loaded.
attnc_status PlanBuilder::checkTensorMaps() {
  if (plan.empty)
    return ATTNC_OK; // nothing launches, so nothing is encoded
  for (const Param &p : k.params) {
    if (p.kind != ATTNC_PARAM_TENSORMAP)
      continue;
    const Param &tp = k.params[p.tensorIndex];
    const attnc_tensor &t = mappedBy(p);
    const std::string &n = tp.name;
    std::string at = "tensormap " + p.name + ": ";
    uint64_t elem = attnc_dtype_size(t.dtype);
    // TMA cannot describe an empty tensor, and nothing can be read from
    // one: its map is passed zeroed (pack), like the pointer of any empty
    // tensor, which may be anything.
    if (hasNoElements(t))
      continue;
    for (int32_t d = 0; d < t.rank; ++d) {
      if (static_cast<uint64_t>(t.sizes[d]) > (uint64_t(1) << 32))
        return refuse(at + n + ".shape[" + std::to_string(d) +
                      "] = " + std::to_string(t.sizes[d]) +
                      " exceeds TMA's limit of 2^32 elements");
    }
    int32_t inner = t.rank - 1;
    if (t.sizes[inner] > 1 && t.strides[inner] != 1)
      return refuse(at + n + ".stride[" + std::to_string(inner) +
                    "] = " + std::to_string(t.strides[inner]) +
                    " but TMA needs the innermost dimension contiguous "
                    "(stride 1)");
    if (t.data % 16 != 0)
      return refuse(at + n + "'s data pointer " + hexText(t.data) +
                    " is not aligned to 16 bytes, as TMA requires");
    // A one-element dimension is never stepped along: its stride is not
    // given to the driver (Plan.cpp substitutes a valid one).
    for (int32_t d = 0; d < inner; ++d) {
      if (t.sizes[d] == 1)
        continue;
      uint64_t bytes = static_cast<uint64_t>(t.strides[d]) * elem;
      std::string stride = n + ".stride[" + std::to_string(d) +
                           "] = " + std::to_string(t.strides[d]) +
                           " elements (" + std::to_string(bytes) + " bytes)";
      if (bytes % 16 != 0)
        return refuse(at + stride +
                      " is not a multiple of 16 bytes, as TMA requires");
      if (bytes >= (uint64_t(1) << 40))
        return refuse(at + stride + " exceeds TMA's limit of 2^40 bytes");
    }
  }
  return ATTNC_OK;
}
