//===- SizeRule.cpp - Evaluate the size rules of a kernel -----------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// attnc_kernel_size_rule: the value the manifest's rule gives a size symbol
// that the caller picks (the split count of split-KV attention), for the
// symbols the tensors the caller already has bind. The tensors are bound as
// a plan binds them (PlanBuilder::bindShape), the rule's own symbol aside;
// the rule reads the grid with that symbol set to 1 and its K/V tile count
// (PlanBuilder::evaluate), then the device's SM count. CPU only when the
// caller gives the SM count. Also here: the choice of a kernel's size
// variant (chooseVariant), from the same binding of a call's sizes.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

#include <algorithm>

using namespace attnc::rt;

int64_t attnc::rt::kvSplits(uint64_t ctas, uint64_t tiles, uint64_t slots,
                            int64_t max) {
  // One wave: the most splits whose blocks the device runs at once. More
  // (FlashAttention-2's heuristic fills later waves to 85%) measured slower
  // on the H200: a grid already over half the slots ran 1.22x slower in 4
  // splits (3 waves) than unsplit (B = 12, Skv = 1k), and a partly filled
  // wave costs less than each split's fixed cost and its share of the merge.
  if (ctas == 0 || slots == 0)
    return 1;
  uint64_t most = std::min<uint64_t>(
      {static_cast<uint64_t>(std::max<int64_t>(max, 1)), slots / ctas, tiles});
  if (most <= 1)
    return 1;
  // The fewest splits with the tiles per split of `most`: more only add
  // blocks.
  uint64_t per = (tiles + most - 1) / most;
  return static_cast<int64_t>((tiles + per - 1) / per);
}

attnc_status PlanBuilder::evaluateSizeRule(const SizeRule &r,
                                           const attnc_tensor *tensors,
                                           size_t numTensors, int64_t &value) {
  std::string what = "size rule of " + r.symbol;
  size_t most = 0;
  std::string names;
  for (const Param &p : k.params)
    if (p.kind == ATTNC_PARAM_TENSOR || p.kind == ATTNC_PARAM_WORKSPACE) {
      ++most;
      names += (names.empty() ? "" : ", ") + p.name;
    }
  if (numTensors > most)
    return refuse(what + ": expected at most " + std::to_string(most) +
                  " tensors (" + names + "), got " +
                  std::to_string(numTensors));
  if (numTensors && !tensors)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                k.name + ": " + what + ": tensors array is NULL");
  if (attnc_status st = bindArguments(tensors, numTensors, r.symbol))
    return st;
  // Refusals first, then what may need the driver.
  const std::vector<Factor> *reads[] = {&k.grid[0], &k.grid[1], &k.grid[2],
                                        &r.kvTiles};
  for (const std::vector<Factor> *factors : reads)
    for (const Factor &f : *factors)
      for (const std::string *sym : f.symbols()) {
        if (*sym == r.symbol || lookup(*sym))
          continue;
        std::string holders;
        for (const Param &p : k.params)
          for (const Dim &d : p.shape)
            if (d.symbol == *sym) {
              holders += (holders.empty() ? "" : " or ") + p.name;
              break;
            }
        return refuse(what + " needs " + *sym +
                      ", which no tensor given binds (pass " + holders + ")");
      }
  if (numSMs == 0) {
    if (attnc_status st = deviceNumSMs(numSMs)) {
      std::string why = attnc_last_error();
      numSMs = 0;
      return fail(st, k.name + ": the " + what +
                          " needs the device's SM count but it cannot be "
                          "queried: " +
                          why + " (pass num_sms to evaluate it without a GPU)");
    }
  }
  // The grid with one split.
  bound.push_back({r.symbol, {1, what}});
  uint64_t ctas = 1, tiles;
  std::string rule;
  bool overflow, saturated = false;
  for (const std::vector<Factor> &axis : k.grid) {
    uint64_t extent;
    if (attnc_status st = evaluate(axis, what, extent, rule, overflow))
      return st;
    saturated |= overflow || __builtin_mul_overflow(ctas, extent, &ctas);
  }
  if (saturated)
    ctas = UINT64_MAX;
  if (attnc_status st = evaluate(r.kvTiles, what, tiles, rule, overflow))
    return st;
  if (overflow)
    tiles = UINT64_MAX;
  uint64_t slots = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numSMs),
                             static_cast<uint64_t>(r.ctasPerSM), &slots))
    slots = UINT64_MAX;
  value = kvSplits(ctas, tiles, slots, r.max);
  return ATTNC_OK;
}

attnc_status PlanBuilder::bindArguments(const attnc_tensor *tensors,
                                        size_t count,
                                        const std::string &unbound) {
  size_t next = 0;
  for (const Param &p : k.params) {
    if (next == count)
      break;
    if (p.kind != ATTNC_PARAM_TENSOR && p.kind != ATTNC_PARAM_WORKSPACE)
      continue;
    const attnc_tensor &t = tensors[next++];
    attnc_status st = p.kind == ATTNC_PARAM_TENSOR ? bindShape(p, t, unbound)
                                                   : checkWorkspaceShape(p, t);
    if (st)
      return st;
  }
  return ATTNC_OK;
}

attnc_status PlanBuilder::bindSizes(const attnc_tensor *tensors,
                                    size_t numTensors) {
  size_t want = 0;
  for (const Param &p : k.params)
    want += p.kind == ATTNC_PARAM_TENSOR || p.kind == ATTNC_PARAM_WORKSPACE;
  if (numTensors != want || (numTensors && !tensors))
    return refuse("expected " + std::to_string(want) +
                  " tensors and workspaces, got " + std::to_string(numTensors));
  return bindArguments(tensors, numTensors, "");
}

bool PlanBuilder::meets(const std::vector<Constraint> &when) const {
  return std::all_of(when.begin(), when.end(),
                     [&](const Constraint &c) { return violation(c).empty(); });
}

const attnc_kernel *attnc::rt::chooseVariant(const attnc_kernel &k,
                                             const attnc_tensor *tensors,
                                             size_t numTensors) {
  if (k.variants.empty())
    return nullptr;
  attnc_plan scratch;
  PlanBuilder sizes(k, scratch, 0);
  if (sizes.bindSizes(tensors, numTensors) != ATTNC_OK)
    return nullptr;
  for (const Variant &v : k.variants)
    if (sizes.meets(v.when))
      return v.kernel;
  return nullptr;
}

extern "C" {

attnc_status attnc_kernel_size_rule(const attnc_kernel *k, const char *symbol,
                                    const attnc_tensor *tensors,
                                    size_t numTensors, int32_t numSMs,
                                    int64_t *out) {
  if (!k || !symbol || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_size_rule: kernel, symbol and out must not be "
                "NULL");
  if (numSMs < 0)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_kernel_size_rule: num_sms = " + std::to_string(numSMs) +
                    " is negative");
  const SizeRule *rule = nullptr;
  std::string known;
  for (const SizeRule &r : k->sizeRules) {
    known += (known.empty() ? "" : ", ") + r.symbol;
    if (r.symbol == symbol)
      rule = &r;
  }
  if (!rule)
    return fail(ATTNC_ERROR_NOT_FOUND,
                k->name + ": no size rule for '" + symbol + "' (" +
                    (known.empty() ? "the kernel has none"
                                   : "the kernel has rules for " + known) +
                    ")");
  attnc_plan scratch;
  PlanBuilder builder(*k, scratch, numSMs);
  int64_t value = 0;
  if (attnc_status st =
          builder.evaluateSizeRule(*rule, tensors, numTensors, value))
    return st;
  *out = value;
  return ok();
}

} // extern "C"
