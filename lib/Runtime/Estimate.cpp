//===- Estimate.cpp - attnc_plan_estimate: a plan priced by the cost model ===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The runtime half of the cost model: a kernel's schedule read from its
// manifest entry (kind, attrs, block, shared memory, registers) and the
// sizes and tensor bytes of a plan, priced by lib/CostModel on a device
// model. The report prices the same schedule from the IR.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "attnc/CostModel/CostModel.h"

#include <cstring>

struct attnc_device_model {
  attnc::cost::DeviceModel model;
  std::string json;
};

using namespace attnc;
using namespace attnc::rt;

namespace {

int64_t attrInt(const attnc_kernel &k, const char *key, int64_t fallback) {
  auto it = k.attrs.find(key);
  if (it == k.attrs.end())
    return fallback;
  char *end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  return end && *end == '\0' ? int64_t(v) : fallback;
}

std::string attrText(const attnc_kernel &k, const char *key) {
  auto it = k.attrs.find(key);
  return it == k.attrs.end() ? std::string() : it->second;
}

cost::KernelSchedule scheduleOf(const attnc_kernel &k) {
  cost::KernelSchedule s;
  static const std::pair<const char *, cost::KernelKind> kinds[] = {
      {"attention", cost::KernelKind::Attention},
      {"attention_partial", cost::KernelKind::AttentionPartial},
      {"attention_combine", cost::KernelKind::AttentionCombine},
      {"attention_backward", cost::KernelKind::AttentionBackward},
      {"fusion", cost::KernelKind::Fusion}};
  for (const auto &[name, kind] : kinds)
    if (k.kind == name)
      s.kind = kind;
  std::string strategy = attrText(k, "strategy");
  s.wgmma = strategy.rfind("wgmma", 0) == 0;
  s.persistent =
      strategy == "wgmma_ws_persistent" || strategy == "wgmma_persistent";
  s.blockQ = attrInt(k, "block_q", 0);
  s.blockKV = attrInt(k, "block_kv", 0);
  s.headDim = attrInt(k, "head_dim", 0);
  s.headDimV = attrInt(k, "head_dim_v", s.headDim);
  s.threads = k.block[0] * k.block[1] * k.block[2];
  s.mmaWarps =
      s.threads / 32 / std::max<int64_t>(attrInt(k, "key_warps", 1), 1);
  s.sharedBytes = k.sharedMemoryBytes;
  s.registers = k.registers;
  s.packedHeads = std::max<int64_t>(attrInt(k, "packed_heads", 1), 1);
  s.queryBuffers = std::max<int64_t>(attrInt(k, "query_buffers", 1), 1);
  s.sharedP = attrInt(k, "shared_p", 0) != 0;
  s.mmaRowSums = attrInt(k, "mma_row_sums", 0) != 0;
  // Masks the model knows by name; a custom mask (windows, documents, ...)
  // is priced as no mask: an upper bound on its tiles.
  std::string mask = attrText(k, "mask");
  if (mask == "causal" || mask == "causal_bottom_right") {
    s.mask.any = true;
    s.mask.bottomRight = mask == "causal_bottom_right";
    s.mask.right = 0;
  }
  for (const Param &p : k.params)
    if (p.kind == ATTNC_PARAM_TENSOR && p.name == "q")
      s.elementBytes = int64_t(attnc_dtype_size(p.dtype));
  return s;
}

int64_t symbolOr(const attnc_plan &plan, const char *name, int64_t fallback) {
  for (const auto &s : plan.symbols)
    if (s.first == name)
      return s.second;
  return fallback;
}

} // namespace

attnc_status attnc_device_model_parse(const char *json, size_t length,
                                      attnc_device_model **out) {
  if (!json || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_device_model_parse: arguments must not be NULL");
  *out = nullptr;
  std::string error;
  std::optional<cost::DeviceModel> m =
      cost::parseDeviceModel(std::string(json, length), error);
  if (!m)
    return fail(ATTNC_ERROR_MANIFEST, "device file: " + error);
  *out = new attnc_device_model{*m, cost::deviceModelToJSON(*m)};
  return ok();
}

attnc_status attnc_device_model_builtin(const char *name,
                                        attnc_device_model **out) {
  if (!name || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_device_model_builtin: arguments must not be NULL");
  *out = nullptr;
  const cost::DeviceModel *m = cost::builtinDeviceModel(name);
  if (!m)
    return fail(ATTNC_ERROR_NOT_FOUND, std::string("no built-in device '") +
                                           name + "' (h100, h200, a100)");
  *out = new attnc_device_model{*m, cost::deviceModelToJSON(*m)};
  return ok();
}

void attnc_device_model_destroy(attnc_device_model *model) { delete model; }

const char *attnc_device_model_json(const attnc_device_model *model) {
  return model ? model->json.c_str() : nullptr;
}

attnc_status attnc_plan_estimate(const attnc_plan *plan,
                                 const attnc_device_model *model,
                                 attnc_estimate *out) {
  if (!plan || !model || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_plan_estimate: arguments must not be NULL");
  const attnc_kernel &k = *plan->kernel;
  cost::KernelSchedule s = scheduleOf(k);
  cost::Sizes z;
  z.batch = symbolOr(*plan, "B", 1);
  z.heads = symbolOr(*plan, "H", 1);
  z.kvHeads = symbolOr(*plan, "Hkv", z.heads);
  z.seqQ = symbolOr(*plan, "Sq", 1);
  z.seqKV = symbolOr(*plan, "Skv", z.seqQ);
  for (const SizeRule &r : k.sizeRules)
    z.splits = symbolOr(*plan, r.symbol.c_str(), 1);
  z.ctas = plan->grid[0] * plan->grid[1] * plan->grid[2];
  // Tensor bytes from the shapes the plan bound.
  for (const Param &p : k.params) {
    if (p.kind != ATTNC_PARAM_TENSOR)
      continue;
    double elems = 1;
    for (const Dim &d : p.shape)
      elems *= double(d.symbol.empty() ? d.extent
                                       : symbolOr(*plan, d.symbol.c_str(), 0));
    double bytes = elems * double(attnc_dtype_size(p.dtype));
    (p.role == ATTNC_ROLE_OUTPUT ? z.bytesWritten : z.bytesRead) += bytes;
  }
  cost::Estimate e = cost::estimate(s, z, model->model);
  *out = attnc_estimate{};
  out->time_us = e.timeUs;
  out->launch_us = e.launchUs;
  out->mma_us = e.mmaUs;
  out->softmax_us = e.softmaxUs;
  out->shared_us = e.sharedUs;
  out->fill_us = e.fillUs;
  out->sm_us = e.smUs;
  out->dram_us = e.dramUs;
  out->reduce_us = e.reduceUs;
  out->cta_us = e.ctaUs;
  out->waves = e.waves;
  out->steps = e.steps;
  out->ctas_per_sm = e.ctasPerSM;
  std::strncpy(out->limiter, e.limiter.c_str(), sizeof(out->limiter) - 1);
  std::strncpy(out->regime, e.regime.c_str(), sizeof(out->regime) - 1);
  return ok();
}
