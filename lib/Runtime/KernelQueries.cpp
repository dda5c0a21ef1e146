//===- KernelQueries.cpp - Module, kernel and parameter queries -----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The CPU-only queries of the C API over a parsed manifest (Manifest.cpp):
// modules, kernels, parameters, grid and workspace-size factors, tensormaps,
// constraints and size rules (SizeRule.cpp evaluates them). A host needs them
// to build the arguments of a call (which tensors, which workspaces of what
// size) without reading manifest.json itself. Every returned string is owned by
// the module.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

using namespace attnc::rt;

namespace {

void toPublic(const Factor &f, attnc_factor &out) {
  out.kind = f.kind;
  out.value = f.kind == ATTNC_FACTOR_CONSTANT ? f.value : 0;
  out.symbol = f.kind == ATTNC_FACTOR_SYMBOL ? f.symbol.c_str() : nullptr;
  out.ceil_div = f.kind == ATTNC_FACTOR_SYMBOL ? f.ceilDiv : 1;
  out.plus = f.kind == ATTNC_FACTOR_SYMBOL && !f.plus.empty() ? f.plus.c_str()
                                                              : nullptr;
}

void toPublic(const Constraint &c, attnc_constraint *out) {
  out->kind = c.kind;
  out->lhs = c.lhs.c_str();
  bool bound = c.kind == ATTNC_CONSTRAINT_MIN || c.kind == ATTNC_CONSTRAINT_MAX;
  out->rhs = bound ? nullptr : c.rhs.c_str();
  out->value = bound || c.kind == ATTNC_CONSTRAINT_RATIO ||
                       c.kind == ATTNC_CONSTRAINT_AT_MOST
                   ? c.value
                   : 0;
}

/// Parameter INDEX of K when it has KIND, else an error naming FN.
const Param *paramOfKind(const attnc_kernel *k, size_t index,
                         attnc_param_kind kind, const void *out, const char *fn,
                         const char *kindName) {
  if (!k || !out) {
    fail(ATTNC_ERROR_INVALID_ARGUMENT,
         std::string(fn) + ": kernel and out must not be NULL");
    return nullptr;
  }
  if (index >= k->params.size() || k->params[index].kind != kind) {
    fail(ATTNC_ERROR_INVALID_ARGUMENT,
         std::string(fn) + ": parameter " + std::to_string(index) +
             " of kernel '" + k->name + "' is not a " + kindName);
    return nullptr;
  }
  return &k->params[index];
}

} // namespace

extern "C" {

const char *attnc_module_name(const attnc_module *m) {
  return m ? m->name.c_str() : "";
}

const char *attnc_module_chip(const attnc_module *m) {
  return m ? m->chip.c_str() : "";
}

size_t attnc_module_num_kernels(const attnc_module *m) {
  return m ? m->kernels.size() : 0;
}

attnc_kernel *attnc_module_kernel_at(const attnc_module *m, size_t index) {
  if (!m || index >= m->kernels.size())
    return nullptr;
  return m->kernels[index].get();
}

attnc_status attnc_module_get_kernel(const attnc_module *m, const char *name,
                                     attnc_kernel **out) {
  if (!m || !name || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_module_get_kernel: module, name and out must not be "
                "NULL");
  *out = nullptr;
  std::string known;
  for (const auto &k : m->kernels) {
    if (k->name == name) {
      *out = k.get();
      return ok();
    }
    known += (known.empty() ? "" : ", ") + k->name;
  }
  return fail(ATTNC_ERROR_NOT_FOUND, "module '" + m->name +
                                         "' has no kernel '" + name +
                                         "' (it has: " + known + ")");
}

const char *attnc_kernel_name(const attnc_kernel *k) {
  return k ? k->name.c_str() : "";
}

const char *attnc_kernel_kind(const attnc_kernel *k) {
  return k ? k->kind.c_str() : "";
}

const attnc_kernel *attnc_kernel_fallback(const attnc_kernel *k) {
  return k ? k->fallback : nullptr;
}

const attnc_kernel *attnc_kernel_unsplit(const attnc_kernel *k) {
  return k ? k->unsplit : nullptr;
}

int attnc_kernel_programmatic_launch(const attnc_kernel *k) {
  return k && k->programmaticLaunch ? 1 : 0;
}

size_t attnc_kernel_num_params(const attnc_kernel *k) {
  return k ? k->params.size() : 0;
}

attnc_status attnc_kernel_param(const attnc_kernel *k, size_t index,
                                attnc_param_info *out) {
  if (!k || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_param: kernel and out must not be NULL");
  if (index >= k->params.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_param: index " + std::to_string(index) +
                    " out of range; kernel '" + k->name + "' has " +
                    std::to_string(k->params.size()) + " parameters");
  const Param &p = k->params[index];
  bool tensor = p.kind == ATTNC_PARAM_TENSOR;
  bool names = p.kind == ATTNC_PARAM_STRIDE || p.kind == ATTNC_PARAM_TENSORMAP;
  out->name = p.name.c_str();
  out->kind = p.kind;
  out->dtype = p.dtype;
  out->role = p.role;
  out->rank = p.kind == ATTNC_PARAM_TENSORMAP
                  ? static_cast<int32_t>(p.box.size())
              : p.kind == ATTNC_PARAM_WORKSPACE ? 1
                                                : rankOf(p);
  out->align = tensor ? p.align : p.kind == ATTNC_PARAM_WORKSPACE ? 16 : 0;
  out->contiguous_last = tensor && p.contiguousLast;
  out->tensor = names ? p.tensor.c_str() : nullptr;
  out->dim = p.kind == ATTNC_PARAM_STRIDE ? p.dim : 0;
  return ok();
}

attnc_status attnc_kernel_find_param(const attnc_kernel *k, const char *name,
                                     int64_t *index) {
  if (!k || !name || !index)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_find_param: arguments must not be NULL");
  for (size_t i = 0; i < k->params.size(); ++i)
    if (k->params[i].name == name) {
      *index = static_cast<int64_t>(i);
      return ok();
    }
  *index = -1;
  return fail(ATTNC_ERROR_NOT_FOUND,
              "kernel '" + k->name + "' has no parameter '" + name + "'");
}

attnc_status attnc_kernel_param_dim(const attnc_kernel *k, size_t index,
                                    int32_t dim, int64_t *extent,
                                    const char **symbol) {
  if (!k || !extent || !symbol)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_param_dim: arguments must not be NULL");
  if (index >= k->params.size() ||
      k->params[index].kind != ATTNC_PARAM_TENSOR || dim < 0 ||
      dim >= rankOf(k->params[index]))
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_param_dim: no dimension " + std::to_string(dim) +
                    " of a tensor parameter " + std::to_string(index) +
                    " in kernel '" + k->name + "'");
  const Dim &d = k->params[index].shape[dim];
  *extent = d.symbol.empty() ? d.extent : -1;
  *symbol = d.symbol.empty() ? nullptr : d.symbol.c_str();
  return ok();
}

void attnc_kernel_launch_config(const attnc_kernel *k, int64_t block[3],
                                int64_t *sharedMemoryBytes) {
  if (!k)
    return;
  if (block)
    for (int i = 0; i < 3; ++i)
      block[i] = k->block[i];
  if (sharedMemoryBytes)
    *sharedMemoryBytes = k->sharedMemoryBytes;
}

const char *attnc_kernel_attr(const attnc_kernel *k, const char *key) {
  if (!k || !key)
    return nullptr;
  auto it = k->attrs.find(key);
  return it == k->attrs.end() ? nullptr : it->second.c_str();
}

size_t attnc_kernel_grid_num_factors(const attnc_kernel *k, int32_t axis) {
  return k && axis >= 0 && axis < 3 ? k->grid[axis].size() : 0;
}

attnc_status attnc_kernel_grid_factor(const attnc_kernel *k, int32_t axis,
                                      size_t index, attnc_factor *out) {
  if (!k || !out || axis < 0 || axis >= 3 || index >= k->grid[axis].size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_grid_factor: NULL argument or no factor " +
                    std::to_string(index) + " on grid axis " +
                    std::to_string(axis));
  toPublic(k->grid[axis][index], *out);
  return ok();
}

attnc_status attnc_kernel_param_tensormap(const attnc_kernel *k, size_t index,
                                          attnc_tensormap_info *out) {
  const Param *p = paramOfKind(k, index, ATTNC_PARAM_TENSORMAP, out,
                               "attnc_kernel_param_tensormap", "tensormap");
  if (!p)
    return ATTNC_ERROR_INVALID_ARGUMENT;
  out->tensor = p->tensor.c_str();
  out->tensor_index = static_cast<size_t>(p->tensorIndex);
  out->rank = static_cast<int32_t>(p->box.size());
  out->box = p->box.data();
  out->swizzle = p->swizzle;
  out->oob_fill_nan = p->oobFillNaN;
  return ok();
}

attnc_status attnc_kernel_param_workspace(const attnc_kernel *k, size_t index,
                                          attnc_workspace_info *out) {
  const Param *p = paramOfKind(k, index, ATTNC_PARAM_WORKSPACE, out,
                               "attnc_kernel_param_workspace", "workspace");
  if (!p)
    return ATTNC_ERROR_INVALID_ARGUMENT;
  out->num_byte_factors = p->bytes.size();
  out->zero_init = p->zeroInit;
  return ok();
}

attnc_status attnc_kernel_param_workspace_factor(const attnc_kernel *k,
                                                 size_t index, size_t factor,
                                                 attnc_factor *out) {
  const Param *p =
      paramOfKind(k, index, ATTNC_PARAM_WORKSPACE, out,
                  "attnc_kernel_param_workspace_factor", "workspace");
  if (!p)
    return ATTNC_ERROR_INVALID_ARGUMENT;
  if (factor >= p->bytes.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_param_workspace_factor: workspace '" + p->name +
                    "' has " + std::to_string(p->bytes.size()) +
                    " byte factors, not " + std::to_string(factor + 1));
  toPublic(p->bytes[factor], *out);
  return ok();
}

size_t attnc_kernel_num_constraints(const attnc_kernel *k) {
  return k ? k->constraints.size() : 0;
}

attnc_status attnc_kernel_constraint(const attnc_kernel *k, size_t index,
                                     attnc_constraint *out) {
  if (!k || !out || index >= k->constraints.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_constraint: NULL argument or index out of "
                "range");
  toPublic(k->constraints[index], out);
  return ok();
}

size_t attnc_kernel_num_variants(const attnc_kernel *k) {
  return k ? k->variants.size() : 0;
}

const attnc_kernel *attnc_kernel_variant(const attnc_kernel *k, size_t index) {
  return k && index < k->variants.size() ? k->variants[index].kernel : nullptr;
}

size_t attnc_kernel_variant_num_conditions(const attnc_kernel *k,
                                           size_t index) {
  return k && index < k->variants.size() ? k->variants[index].when.size() : 0;
}

attnc_status attnc_kernel_variant_condition(const attnc_kernel *k, size_t index,
                                            size_t condition,
                                            attnc_constraint *out) {
  if (!k || !out || index >= k->variants.size() ||
      condition >= k->variants[index].when.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_variant_condition: NULL argument or index out "
                "of range");
  toPublic(k->variants[index].when[condition], out);
  return ok();
}

size_t attnc_kernel_num_size_rules(const attnc_kernel *k) {
  return k ? k->sizeRules.size() : 0;
}

attnc_status attnc_kernel_size_rule_info(const attnc_kernel *k, size_t index,
                                         attnc_size_rule *out) {
  if (!k || !out || index >= k->sizeRules.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_size_rule_info: NULL argument or index out of "
                "range");
  const SizeRule &r = k->sizeRules[index];
  out->kind = r.kind;
  out->symbol = r.symbol.c_str();
  out->max = r.max;
  out->ctas_per_sm = r.ctasPerSM;
  out->num_kv_tiles = r.kvTiles.size();
  return ok();
}

attnc_status attnc_kernel_size_rule_factor(const attnc_kernel *k, size_t index,
                                           size_t factor, attnc_factor *out) {
  if (!k || !out || index >= k->sizeRules.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_size_rule_factor: NULL argument or index out "
                "of range");
  const SizeRule &r = k->sizeRules[index];
  if (factor >= r.kvTiles.size())
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_size_rule_factor: the size rule of '" + r.symbol +
                    "' has " + std::to_string(r.kvTiles.size()) +
                    " kv_tiles factors, not " + std::to_string(factor + 1));
  toPublic(r.kvTiles[factor], *out);
  return ok();
}

} // extern "C"
