//===- ManifestLinks.cpp - Resolve the kernels a kernel names -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// After every kernel entry is read, the names one kernel gives another (its
// `fallback`, its `unsplit` kernel; `variants` in ManifestVariants.cpp) are
// resolved to kernels of the same module and checked against the rules a
// plan relies on when it switches kernels: the kernel exists, is not the
// naming kernel itself, and chooses no further.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include "llvm/ADT/STLExtras.h"

using namespace attnc::rt;

size_t attnc::rt::findKernel(const attnc_module &m, const std::string &name,
                             std::string &known) {
  size_t at = m.kernels.size();
  for (size_t j = 0; j < m.kernels.size(); ++j) {
    known += (known.empty() ? "" : ", ") + m.kernels[j]->name;
    if (m.kernels[j]->name == name)
      at = j;
  }
  return at;
}

std::optional<size_t> ManifestReader::namedKernel(const attnc_module &m,
                                                  const attnc_kernel &k,
                                                  const std::string &name,
                                                  const std::string &path,
                                                  const char *role) {
  if (name == k.name) {
    failAt(path, "kernel '" + k.name + "' names itself as its " + role);
    return std::nullopt;
  }
  std::string known;
  size_t at = findKernel(m, name, known);
  if (at == m.kernels.size()) {
    failAt(path, std::string(role) + " '" + name + "' of kernel '" + k.name +
                     "' is not a kernel of this module (it has: " + known +
                     ")");
    return std::nullopt;
  }
  return at;
}

/// A plan falls back at most once, to a kernel that any tensor a caller
/// can pass reaches without TMA, and passes it the very arguments it was
/// given: so the fallback is another kernel of the module, has no fallback
/// and no tensormap of its own, and takes the same arguments.
bool ManifestReader::resolveFallbacks(attnc_module &m) {
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    attnc_kernel &k = *m.kernels[i];
    if (k.fallbackName.empty())
      continue;
    std::string path = "kernels[" + std::to_string(i) + "].fallback";
    std::optional<size_t> at =
        namedKernel(m, k, k.fallbackName, path, "fallback");
    if (!at)
      return false;
    const attnc_kernel *f = m.kernels[*at].get();
    std::string of = "fallback kernel '" + f->name + "' of '" + k.name + "'";
    if (!f->fallbackName.empty())
      return failAt(path, of + " has a fallback of its own ('" +
                              f->fallbackName +
                              "'); a plan falls back only once");
    for (size_t j = 0; j < f->params.size(); ++j)
      if (f->params[j].kind == ATTNC_PARAM_TENSORMAP)
        return failAt(path, of + " has tensormap parameter '" +
                                f->params[j].name + "' (kernels[" +
                                std::to_string(*at) + "].params[" +
                                std::to_string(j) +
                                "]); a fallback runs the tensors that TMA "
                                "may refuse, so it must not use TMA");
    if (!checkFallbackParams(path, k, *f))
      return false;
    k.fallback = f;
  }
  return resolveUnsplit(m);
}

/// A kernel's `unsplit` is another kernel of the module, itself not split
/// (no `unsplit` of its own), and the kernel naming it has the `splits`
/// size rule a host evaluates to choose between them.
bool ManifestReader::resolveUnsplit(attnc_module &m) {
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    attnc_kernel &k = *m.kernels[i];
    if (k.unsplitName.empty())
      continue;
    std::string path = "kernels[" + std::to_string(i) + "].unsplit";
    if (k.unsplitName == k.name)
      return failAt(path, "kernel '" + k.name +
                              "' names itself as its unsplit kernel");
    bool hasSplits =
        llvm::any_of(k.sizeRules, [](const attnc::rt::SizeRule &r) {
          return r.kind == ATTNC_SIZE_RULE_KV_SPLITS;
        });
    if (!hasSplits)
      return failAt(path, "kernel '" + k.name +
                              "' names an unsplit kernel but has no K/V "
                              "split size rule to choose it by");
    std::string known;
    size_t at = findKernel(m, k.unsplitName, known);
    if (at == m.kernels.size())
      return failAt(
          path, "unsplit kernel '" + k.unsplitName + "' of '" + k.name +
                    "' is not a kernel of this module (it has: " + known + ")");
    const attnc_kernel *u = m.kernels[at].get();
    if (!u->unsplitName.empty())
      return failAt(path, "unsplit kernel '" + u->name + "' of '" + k.name +
                              "' names an unsplit kernel of its own ('" +
                              u->unsplitName + "')");
    k.unsplit = u;
  }
  return resolveVariants(m);
}
