//===- manifest_fuzzer.cpp - libFuzzer target over the manifest reader ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// One input is the text of a manifest.json, handed to the host runtime's
// loader through attnc_manifest_parse exactly as a host (or Python through
// ctypes) could hand it any bytes. The loader must refuse bad input with a
// message, never crash, abort, leak or trip a sanitizer. When the input
// loads, everything the runtime does with a manifest on the CPU alone runs
// on it too: every kernel, parameter, dimension, factor, tensormap,
// workspace, constraint and size rule query, and a launch plan and the size
// rules for a call built from the manifest's own shapes (all symbols bound
// to one small value), so that the indices the manifest controls (a
// stride's dim, a tensormap's tensor, grid factors) are used the way a real
// call uses them. Kernels with a
// tensormap are planned only when they have a fallback, with misaligned
// tensors (encoding a map needs the CUDA driver; the fallback does not), and
// num_sms is given in the plan options so that no plan needs a GPU.
// Corpus: fuzz/corpus/manifest/. docs/fuzzing.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

/// Folds V into SINK, so that every answer is read (and the sanitizers see
/// each stored value used) without signed overflow in the fuzzer itself.
volatile uint64_t sink;
void use(int64_t v) { sink = sink + static_cast<uint64_t>(v); }
void use(const void *p) {
  use(static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)));
}

/// Every query the C API answers about a kernel.
void queryKernel(const attnc_kernel *k) {
  int64_t block[3], smem;
  attnc_kernel_launch_config(k, block, &smem);
  for (int64_t b : block)
    use(b);
  use(smem);
  use(attnc_kernel_kind(k));
  use(attnc_kernel_attr(k, "head_dim"));
  for (int32_t axis = 0; axis < 3; ++axis)
    for (size_t i = 0; i < attnc_kernel_grid_num_factors(k, axis); ++i) {
      attnc_factor f;
      if (attnc_kernel_grid_factor(k, axis, i, &f) == ATTNC_OK)
        use(f.value), use(f.ceil_div), use(f.symbol);
    }
  for (size_t i = 0; i < attnc_kernel_num_constraints(k); ++i) {
    attnc_constraint c;
    if (attnc_kernel_constraint(k, i, &c) == ATTNC_OK)
      use(c.value), use(c.lhs), use(c.rhs);
  }
  for (size_t i = 0; i < attnc_kernel_num_variants(k); ++i) {
    use(attnc_kernel_name(attnc_kernel_variant(k, i)));
    for (size_t j = 0; j < attnc_kernel_variant_num_conditions(k, i); ++j) {
      attnc_constraint c;
      if (attnc_kernel_variant_condition(k, i, j, &c) == ATTNC_OK)
        use(c.value), use(c.lhs), use(c.rhs);
    }
  }
  for (size_t i = 0; i < attnc_kernel_num_size_rules(k); ++i) {
    attnc_size_rule r;
    if (attnc_kernel_size_rule_info(k, i, &r) != ATTNC_OK)
      continue;
    use(r.symbol), use(r.max), use(r.ctas_per_sm);
    for (size_t f = 0; f < r.num_kv_tiles; ++f) {
      attnc_factor factor;
      if (attnc_kernel_size_rule_factor(k, i, f, &factor) == ATTNC_OK)
        use(factor.value), use(factor.symbol);
    }
  }
  for (size_t i = 0; i < attnc_kernel_num_params(k); ++i) {
    attnc_param_info info;
    if (attnc_kernel_param(k, i, &info) != ATTNC_OK)
      continue;
    int64_t index;
    attnc_kernel_find_param(k, info.name, &index);
    use(index), use(info.rank), use(info.dim), use(info.tensor);
    for (int32_t d = 0; info.kind == ATTNC_PARAM_TENSOR && d < info.rank; ++d) {
      int64_t extent;
      const char *symbol;
      if (attnc_kernel_param_dim(k, i, d, &extent, &symbol) == ATTNC_OK)
        use(extent), use(symbol);
    }
    attnc_tensormap_info map;
    if (attnc_kernel_param_tensormap(k, i, &map) == ATTNC_OK)
      for (int32_t d = 0; d < map.rank; ++d)
        use(map.box[d]), use(static_cast<int64_t>(map.tensor_index));
    attnc_workspace_info ws;
    if (attnc_kernel_param_workspace(k, i, &ws) == ATTNC_OK)
      for (size_t f = 0; f < ws.num_byte_factors; ++f) {
        attnc_factor factor;
        if (attnc_kernel_param_workspace_factor(k, i, f, &factor) == ATTNC_OK)
          use(factor.value), use(factor.symbol);
      }
  }
}

/// Builds a call from K's own parameter list (every size symbol = SYMBOL,
/// contiguous strides, distinct fake device pointers that the CPU never
/// dereferences) and plans it.
void planKernel(const attnc_kernel *k, int64_t symbol) {
  size_t n = attnc_kernel_num_params(k);
  std::vector<attnc_tensor> tensors;
  std::vector<attnc_scalar> scalars;
  // One vector per parameter, filled before a tensor points into it.
  std::vector<std::vector<int64_t>> sizes(n), strides(n);
  bool misaligned = false;
  std::vector<size_t> tensorParams; // indices into `tensors` of tensors
  for (size_t i = 0; i < n; ++i) {
    attnc_param_info info;
    if (attnc_kernel_param(k, i, &info) != ATTNC_OK)
      return;
    // 1 TiB apart and 1 TiB aligned: disjoint for small symbols.
    uint64_t data = uint64_t(i + 1) << 40;
    switch (info.kind) {
    case ATTNC_PARAM_TENSORMAP:
      // Encoding needs the driver; with a fallback, the tensors below are
      // misaligned instead, so the kernel refuses them before encoding and
      // the plan takes the fallback path.
      if (!attnc_kernel_fallback(k))
        return;
      misaligned = true;
      break;
    case ATTNC_PARAM_SCALAR:
      scalars.push_back(attnc_scalar{0, {0}});
      break;
    case ATTNC_PARAM_WORKSPACE:
      sizes[i] = {int64_t(1) << 30};
      strides[i] = {1};
      tensors.push_back(attnc_tensor{data, ATTNC_DTYPE_I8, 1, sizes[i].data(),
                                     strides[i].data()});
      break;
    case ATTNC_PARAM_TENSOR: {
      sizes[i].assign(info.rank, symbol);
      strides[i].assign(info.rank, 1);
      for (int32_t d = 0; d < info.rank; ++d) {
        int64_t extent;
        const char *name;
        if (attnc_kernel_param_dim(k, i, d, &extent, &name) == ATTNC_OK &&
            !name)
          sizes[i][d] = extent;
      }
      // Row-major; a stride that would overflow stays 1 (the plan then
      // refuses the overlap or the extent, which is also worth running).
      for (int32_t d = info.rank - 2; d >= 0; --d)
        if (__builtin_mul_overflow(strides[i][d + 1], sizes[i][d + 1],
                                   &strides[i][d]))
          strides[i][d] = 1;
      tensorParams.push_back(tensors.size());
      tensors.push_back(attnc_tensor{data, info.dtype, info.rank,
                                     sizes[i].data(), strides[i].data()});
      break;
    }
    default:
      break; // sizes and strides come from the tensors
    }
  }
  if (misaligned)
    for (size_t t : tensorParams)
      tensors[t].data += 2;
  // Size rules read the same tensors, all of them or the first few.
  for (size_t i = 0; i < attnc_kernel_num_size_rules(k); ++i) {
    attnc_size_rule r;
    int64_t value;
    if (attnc_kernel_size_rule_info(k, i, &r) != ATTNC_OK)
      continue;
    for (size_t given : {tensors.size(), tensors.size() / 2})
      if (attnc_kernel_size_rule(k, r.symbol, tensors.data(), given, 132,
                                 &value) == ATTNC_OK)
        use(value);
  }
  attnc_plan_options options = {};
  options.num_sms = 132;
  attnc_plan *plan = nullptr;
  if (attnc_plan_create_with_options(k, tensors.data(), tensors.size(),
                                     scalars.data(), scalars.size(), &options,
                                     &plan) != ATTNC_OK)
    return;
  use(attnc_kernel_name(attnc_plan_kernel(plan)));
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  for (int64_t g : grid)
    use(g);
  use(attnc_plan_is_empty(plan));
  for (size_t i = 0; i < attnc_plan_num_params(plan); ++i) {
    const void *bytes;
    size_t size;
    if (attnc_plan_param(plan, i, &bytes, &size) == ATTNC_OK)
      for (size_t b = 0; b < size; ++b)
        use(static_cast<const unsigned char *>(bytes)[b]);
    uint64_t workspace;
    if (attnc_plan_workspace_bytes(plan, i, &workspace) == ATTNC_OK)
      use(static_cast<int64_t>(workspace));
  }
  attnc_plan_destroy(plan);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  attnc_module *m = nullptr;
  // A NULL pointer is refused for any length; libFuzzer passes non-NULL.
  if (attnc_manifest_parse(reinterpret_cast<const char *>(data), size, nullptr,
                           &m) != ATTNC_OK)
    return 0;
  use(attnc_module_name(m));
  use(attnc_module_chip(m));
  for (size_t i = 0; i < attnc_module_num_kernels(m); ++i) {
    const attnc_kernel *k = attnc_module_kernel_at(m, i);
    attnc_kernel *byName = nullptr;
    attnc_module_get_kernel(m, attnc_kernel_name(k), &byName);
    use(byName);
    queryKernel(k);
    // The input's length picks the symbol value: 0 (empty launches) to 4.
    planKernel(k, static_cast<int64_t>(size % 5));
  }
  attnc_module_unload(m);
  return 0;
}
