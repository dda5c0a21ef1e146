//===- ManifestVariants.cpp - Read a kernel's size variants ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A kernel entry may list `variants` (docs/abi.md "Variants"): other kernels
// of the module that compute the same thing with other tiles, each with the
// sizes (`when`, constraints on size symbols) where it measured faster. A
// plan of the kernel runs the first variant whose `when` the call meets and
// that accepts the call, else the kernel itself. The reader checks what the
// plan relies on: the variant exists, takes the kernel's arguments (as a
// fallback must) and chooses no further (no variants of its own); that
// every symbol of `when` is one the kernel's tensors bind is checked with
// the kernel's other symbols (ManifestReader::checkSymbols).
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

using namespace attnc::rt;
namespace json = llvm::json;

bool ManifestReader::parseVariants(const json::Value &v,
                                   const std::string &path, attnc_kernel &k) {
  const json::Array *vs = v.getAsArray();
  if (!vs)
    return failAt(path, std::string("expected an array, got ") + describe(v));
  for (size_t i = 0; i < vs->size(); ++i) {
    std::string vpath = path + "[" + std::to_string(i) + "]";
    const json::Object *o = (*vs)[i].getAsObject();
    if (!o)
      return failAt(vpath, std::string("expected an object, got ") +
                               describe((*vs)[i]));
    Variant variant;
    if (!getString(*o, vpath, "kernel", variant.kernelName, true))
      return false;
    if (variant.kernelName.empty())
      return failAt(vpath + ".kernel", "empty kernel name");
    const json::Array *when = requireArray(*o, vpath, "when");
    if (!when)
      return false;
    // A variant without a condition would take every call: it would be the
    // kernel, under another name.
    if (when->empty())
      return failAt(vpath + ".when",
                    "expected at least one constraint (a variant with none "
                    "would run every call)");
    if (!parseConstraints(*when, vpath + ".when", variant.when))
      return false;
    k.variants.push_back(std::move(variant));
  }
  return true;
}

/// A plan chooses once, among kernels that take the arguments it was given:
/// a variant is another kernel of the module, takes the kernel's arguments
/// and has no variants of its own.
bool ManifestReader::resolveVariants(attnc_module &m) {
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    attnc_kernel &k = *m.kernels[i];
    for (size_t j = 0; j < k.variants.size(); ++j) {
      Variant &v = k.variants[j];
      std::string path = "kernels[" + std::to_string(i) + "].variants[" +
                         std::to_string(j) + "].kernel";
      std::optional<size_t> at =
          namedKernel(m, k, v.kernelName, path, "variant");
      if (!at)
        return false;
      const attnc_kernel *found = m.kernels[*at].get();
      if (!found->variants.empty())
        return failAt(path, "variant kernel '" + found->name + "' of '" +
                                k.name + "' has variants of its own ('" +
                                found->variants[0].kernelName +
                                "'); a plan chooses only once");
      if (!checkFallbackParams(path, k, *found, "variant"))
        return false;
      v.kernel = found;
    }
  }
  return true;
}
