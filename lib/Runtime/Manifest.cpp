//===- Manifest.cpp - Read and check manifest.json ------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Parses the manifest (version 2) written by attnc-compile (docs/abi.md)
// into the Module/Kernel structs and checks every rule a launch later relies
// on, so that argument validation can trust the manifest: known dtypes; size,
// grid, workspace-size and constraint symbols that some tensor shape binds;
// stride and tensormap parameters that name a real tensor and a dimension
// below its rank; TMA boxes and swizzles the hardware accepts; block, grid
// and shared memory within CUDA's limits; a `fallback` that names another
// kernel taking the same arguments; size rules of known kinds whose symbols
// tensors bind. Errors name the JSON path
// ("kernels[0].params[2].dtype") and the rule. Unknown keys are ignored so
// that a newer compiler can add fields without a version bump; unknown
// parameter, factor, constraint and size rule kinds are errors, since
// skipping them would launch with a wrong ABI or an unchecked rule (or leave
// a host without the rule it asks for). Hosts (Python through
// ctypes included) can pass any text, so it is treated as hostile: bounded
// in size and nesting before parsing, every integer range-checked before it
// is stored (ManifestReader.h). The per-parameter readers are in
// ManifestParams.cpp, the links between kernels (fallback, unsplit) in
// ManifestLinks.cpp, size variants in ManifestVariants.cpp, the queries
// over the parsed structs in KernelQueries.cpp.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace attnc::rt;
namespace json = llvm::json;

const char *attnc::rt::describe(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

namespace {

/// V as an int64_t when it is an integer that fits. llvm::json's
/// getAsInteger converts a double of exactly 2^63
/// (e.g. 9.223372036854775808e18) to int64_t, which is undefined behaviour, so
/// doubles that large never reach it.
std::optional<int64_t> integerOf(const json::Value &v) {
  if (std::optional<uint64_t> u = v.getAsUINT64()) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  // Left: negative integers and doubles.
  std::optional<double> d = v.getAsNumber();
  if (!d || !(*d < 9223372036854775808.0))
    return std::nullopt;
  return v.getAsInteger();
}

} // namespace

const json::Value *ManifestReader::require(const json::Object &o,
                                           const std::string &path,
                                           const char *key) {
  const json::Value *v = o.get(key);
  if (!v)
    failAt(path, std::string("missing required key '") + key + "'");
  return v;
}

const json::Array *ManifestReader::requireArray(const json::Object &o,
                                                const std::string &path,
                                                const char *key) {
  const json::Value *v = require(o, path, key);
  if (!v)
    return nullptr;
  const json::Array *a = v->getAsArray();
  if (!a)
    failAt(path + "." + key,
           std::string("expected an array, got ") + describe(*v));
  return a;
}

bool ManifestReader::getString(const json::Object &o, const std::string &path,
                               const char *key, std::string &out,
                               bool required) {
  const json::Value *v = o.get(key);
  if (!v) {
    if (required)
      return failAt(path, std::string("missing required key '") + key + "'");
    return true;
  }
  std::optional<llvm::StringRef> s = v->getAsString();
  if (!s)
    return failAt(path + "." + key,
                  std::string("expected a string, got ") + describe(*v));
  out = s->str();
  return true;
}

bool ManifestReader::getInt(const json::Value &v, const std::string &path,
                            int64_t &out, int64_t min, int64_t max) {
  std::optional<int64_t> i = integerOf(v);
  if (!i)
    return failAt(path, std::string("expected an integer, got ") + describe(v));
  if (*i < min)
    return failAt(path, "expected an integer >= " + std::to_string(min) +
                            ", got " + std::to_string(*i));
  if (*i > max)
    return failAt(path, "expected an integer <= " + std::to_string(max) +
                            ", got " + std::to_string(*i));
  out = *i;
  return true;
}

bool ManifestReader::getOptInt(const json::Object &o, const std::string &path,
                               const char *key, int64_t &out, int64_t min,
                               int64_t max) {
  const json::Value *v = o.get(key);
  return !v || getInt(*v, path + "." + key, out, min, max);
}

bool ManifestReader::getOptBool(const json::Object &o, const std::string &path,
                                const char *key, bool &out) {
  const json::Value *v = o.get(key);
  if (!v)
    return true;
  std::optional<bool> b = v->getAsBoolean();
  if (!b)
    return failAt(path + "." + key,
                  std::string("expected a boolean, got ") + describe(*v));
  out = *b;
  return true;
}

bool ManifestReader::getDType(const json::Object &o, const std::string &path,
                              std::initializer_list<attnc_dtype> allowed,
                              attnc_dtype dflt, attnc_dtype &out) {
  std::string name;
  if (!getString(o, path, "dtype", name, dflt == ATTNC_DTYPE_INVALID))
    return false;
  if (name.empty() && dflt != ATTNC_DTYPE_INVALID) {
    out = dflt;
    return true;
  }
  attnc_dtype d = attnc_dtype_from_name(name.c_str());
  std::string names;
  bool found = false;
  for (attnc_dtype a : allowed) {
    names += std::string(names.empty() ? "" : ", ") + attnc_dtype_name(a);
    found |= a == d;
  }
  if (!found)
    return failAt(path + ".dtype", "unknown or unsupported dtype '" + name +
                                       "' (expected one of " + names + ")");
  out = d;
  return true;
}

bool ManifestReader::getSymbol(const json::Object &o, const std::string &path,
                               const char *key, std::string &out) {
  if (!getString(o, path, key, out, true))
    return false;
  if (out.empty())
    return failAt(path + "." + key, "empty size symbol");
  return true;
}

bool ManifestReader::parseGrid(const json::Value &v, const std::string &path,
                               attnc_kernel &k) {
  const json::Array *axes = v.getAsArray();
  if (!axes || axes->size() != 3)
    return failAt(path, "expected an array of 3 factor lists");
  for (size_t a = 0; a < 3; ++a) {
    std::string apath = path + "[" + std::to_string(a) + "]";
    const json::Array *factors = (*axes)[a].getAsArray();
    if (!factors)
      return failAt(apath, std::string("expected an array of factors, got ") +
                               describe((*axes)[a]));
    for (size_t i = 0; i < factors->size(); ++i) {
      Factor g;
      if (!parseFactor((*factors)[i], apath + "[" + std::to_string(i) + "]", g))
        return false;
      k.grid[a].push_back(g);
    }
    if (!checkConstantProduct(k.grid[a], apath, kMaxGridDim[a],
                              std::string("CUDA's limit on grid.") + "xyz"[a] +
                                  " is " + std::to_string(kMaxGridDim[a])))
      return false;
  }
  return true;
}

/// cuLaunchKernel takes unsigned block extents and shared-memory bytes:
/// values beyond CUDA's limits would be truncated or fail only at launch.
bool ManifestReader::parseBlock(const json::Object &o, const std::string &path,
                                attnc_kernel &k) {
  if (!getOptInt(o, path, "dynamic_shared_memory_bytes", k.sharedMemoryBytes,
                 0))
    return false;
  // Registers per thread as ptxas reported them (the cost model's
  // occupancy); 0 when the manifest does not say.
  if (!getOptInt(o, path, "registers", k.registers, 0))
    return false;
  if (k.registers > 255)
    return failAt(path + ".registers", std::to_string(k.registers) +
                                           " is not a register count (0 to "
                                           "255 per thread)");
  if (k.sharedMemoryBytes > kMaxDynamicSharedMemoryBytes)
    return failAt(path + ".dynamic_shared_memory_bytes",
                  std::to_string(k.sharedMemoryBytes) +
                      " bytes exceeds the limit of " +
                      std::to_string(kMaxDynamicSharedMemoryBytes) +
                      " bytes (227 KiB), the most dynamic shared memory any "
                      "CUDA GPU gives a block");
  const json::Value *block = require(o, path, "block");
  if (!block)
    return false;
  const json::Array *b = block->getAsArray();
  if (!b || b->size() != 3)
    return failAt(path + ".block", "expected an array of 3 integers");
  int64_t threads = 1;
  for (size_t i = 0; i < 3; ++i) {
    std::string bpath = path + ".block[" + std::to_string(i) + "]";
    if (!getInt((*b)[i], bpath, k.block[i], 1))
      return false;
    if (k.block[i] > kMaxBlockDim[i])
      return failAt(bpath, std::string("block.") + "xyz"[i] + " = " +
                               std::to_string(k.block[i]) +
                               " exceeds CUDA's limit of " +
                               std::to_string(kMaxBlockDim[i]));
    // Each factor is at most 1024 here: no overflow.
    threads *= k.block[i];
  }
  if (threads > kMaxBlockThreads)
    return failAt(
        path + ".block",
        "[" + std::to_string(k.block[0]) + ", " + std::to_string(k.block[1]) +
            ", " + std::to_string(k.block[2]) + "] is " +
            std::to_string(threads) + " threads, more than CUDA's limit of " +
            std::to_string(kMaxBlockThreads) + " per block");
  return true;
}

bool ManifestReader::parseConstraint(const json::Value &v,
                                     const std::string &path, Constraint &c) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an object, got ") + describe(v));
  std::string kind;
  if (!getString(*o, path, "kind", kind, true))
    return false;
  if (kind == "divisible" || kind == "equal") {
    c.kind = kind == "divisible" ? ATTNC_CONSTRAINT_DIVISIBLE
                                 : ATTNC_CONSTRAINT_EQUAL;
    return getSymbol(*o, path, "lhs", c.lhs) &&
           getSymbol(*o, path, "rhs", c.rhs);
  }
  if (kind == "min" || kind == "max") {
    c.kind = kind == "min" ? ATTNC_CONSTRAINT_MIN : ATTNC_CONSTRAINT_MAX;
    const json::Value *value = require(*o, path, "value");
    return getSymbol(*o, path, "sym", c.lhs) && value &&
           getInt(*value, path + ".value", c.value,
                  std::numeric_limits<int64_t>::min());
  }
  if (kind == "ratio" || kind == "at_most") {
    c.kind =
        kind == "ratio" ? ATTNC_CONSTRAINT_RATIO : ATTNC_CONSTRAINT_AT_MOST;
    const json::Value *value = require(*o, path, "value");
    return getSymbol(*o, path, "lhs", c.lhs) &&
           getSymbol(*o, path, "rhs", c.rhs) && value &&
           getInt(*value, path + ".value", c.value, 1);
  }
  // A runtime that skipped a rule it does not know would launch calls the
  // kernel cannot handle.
  return failAt(
      path + ".kind",
      "unknown constraint kind '" + kind +
          "' (expected divisible, equal, min, max, ratio or at_most)");
}

bool ManifestReader::parseConstraints(const json::Array &cs,
                                      const std::string &path,
                                      std::vector<Constraint> &out) {
  for (size_t i = 0; i < cs.size(); ++i) {
    Constraint c;
    if (!parseConstraint(cs[i], path + "[" + std::to_string(i) + "]", c))
      return false;
    out.push_back(std::move(c));
  }
  return true;
}

bool ManifestReader::parseSizeRule(const json::Value &v,
                                   const std::string &path, SizeRule &r) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an object, got ") + describe(v));
  std::string kind;
  if (!getString(*o, path, "kind", kind, true))
    return false;
  if (kind != "kv_splits")
    return failAt(path + ".kind",
                  "unknown size rule kind '" + kind + "' (expected kv_splits)");
  r.kind = ATTNC_SIZE_RULE_KV_SPLITS;
  if (!getSymbol(*o, path, "symbol", r.symbol))
    return false;
  const json::Array *tiles = requireArray(*o, path, "kv_tiles");
  if (!tiles)
    return false;
  if (tiles->empty())
    return failAt(path + ".kv_tiles", "expected at least one factor");
  for (size_t i = 0; i < tiles->size(); ++i) {
    Factor f;
    if (!parseFactor((*tiles)[i], path + ".kv_tiles[" + std::to_string(i) + "]",
                     f))
      return false;
    r.kvTiles.push_back(f);
  }
  const json::Value *max = require(*o, path, "max");
  const json::Value *perSM = max ? require(*o, path, "ctas_per_sm") : nullptr;
  return perSM && getInt(*max, path + ".max", r.max, 1, kMaxKVSplits) &&
         getInt(*perSM, path + ".ctas_per_sm", r.ctasPerSM, 1);
}

bool ManifestReader::parseKernel(const json::Value &v, const std::string &path,
                                 attnc_kernel &k) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an object, got ") + describe(v));
  if (!getString(*o, path, "name", k.name, true) ||
      !getString(*o, path, "kind", k.kind, false) ||
      !getString(*o, path, "cubin", k.cubin, true) ||
      !getString(*o, path, "entry", k.entry, false))
    return false;
  if (k.name.empty())
    return failAt(path + ".name", "empty kernel name");
  if (k.entry.empty())
    k.entry = k.name;
  if (o->get("fallback")) {
    // Resolved once every kernel is read (resolveFallbacks): it may come
    // later in the list.
    if (!getString(*o, path, "fallback", k.fallbackName, true))
      return false;
    if (k.fallbackName.empty())
      return failAt(path + ".fallback", "empty kernel name");
  }
  if (o->get("unsplit")) {
    if (!getString(*o, path, "unsplit", k.unsplitName, true))
      return false;
    if (k.unsplitName.empty())
      return failAt(path + ".unsplit", "empty kernel name");
  }
  if (!getOptBool(*o, path, "programmatic_launch", k.programmaticLaunch))
    return false;
  if (const json::Value *variants = o->get("variants"))
    if (!parseVariants(*variants, path + ".variants", k))
      return false;
  // The cubin must stay inside the module directory.
  if (k.cubin.empty() || k.cubin[0] == '/' ||
      k.cubin.find("..") != std::string::npos)
    return failAt(path + ".cubin", "'" + k.cubin +
                                       "' is not a file name inside the "
                                       "module directory");

  if (!parseBlock(*o, path, k))
    return false;

  const json::Value *grid = require(*o, path, "grid");
  if (!grid || !parseGrid(*grid, path + ".grid", k))
    return false;

  const json::Array *ps = requireArray(*o, path, "params");
  if (!ps)
    return false;
  for (size_t i = 0; i < ps->size(); ++i) {
    Param p;
    if (!parseParam((*ps)[i], path + ".params[" + std::to_string(i) + "]", p))
      return false;
    k.params.push_back(std::move(p));
  }

  if (const json::Value *constraints = o->get("constraints")) {
    const json::Array *cs = constraints->getAsArray();
    if (!cs)
      return failAt(path + ".constraints", std::string("expected an array, "
                                                       "got ") +
                                               describe(*constraints));
    if (!parseConstraints(*cs, path + ".constraints", k.constraints))
      return false;
  }

  if (const json::Value *rules = o->get("size_rules")) {
    const json::Array *rs = rules->getAsArray();
    if (!rs)
      return failAt(path + ".size_rules",
                    std::string("expected an array, got ") + describe(*rules));
    for (size_t i = 0; i < rs->size(); ++i) {
      SizeRule r;
      if (!parseSizeRule((*rs)[i],
                         path + ".size_rules[" + std::to_string(i) + "]", r))
        return false;
      k.sizeRules.push_back(std::move(r));
    }
  }

  if (const json::Value *attrs = o->get("attrs")) {
    const json::Object *ao = attrs->getAsObject();
    if (!ao)
      return failAt(path + ".attrs",
                    std::string("expected an object, got ") + describe(*attrs));
    for (const auto &kv : *ao) {
      std::string text;
      if (std::optional<llvm::StringRef> s = kv.second.getAsString()) {
        text = s->str();
      } else {
        llvm::raw_string_ostream os(text);
        os << kv.second;
      }
      k.attrs[kv.first.str()] = text;
    }
  }
  return checkKernel(path, k);
}

/// Every symbol a launch reads (grid, workspace sizes, constraints, the
/// variants' conditions) must be bound by some tensor argument, or no call
/// could give it a value.
bool ManifestReader::checkSymbols(const std::string &path,
                                  const attnc_kernel &k,
                                  const std::set<std::string> &symbols) {
  auto unbound = [&](const std::string &s) { return !symbols.count(s); };
  auto message = [](const char *what, const std::string &s) {
    return std::string(what) + " '" + s +
           "' is not a symbol of any tensor shape, so no argument can bind "
           "it";
  };
  for (int a = 0; a < 3; ++a)
    for (size_t i = 0; i < k.grid[a].size(); ++i)
      for (const std::string *s : k.grid[a][i].symbols())
        if (unbound(*s))
          return failAt(path + ".grid[" + std::to_string(a) + "][" +
                            std::to_string(i) + "]",
                        "grid symbol '" + *s +
                            "' is not a symbol of any tensor shape");
  for (size_t j = 0; j < k.params.size(); ++j) {
    const Param &p = k.params[j];
    for (size_t i = 0; i < p.bytes.size(); ++i)
      for (const std::string *s : p.bytes[i].symbols())
        if (unbound(*s))
          return failAt(path + ".params[" + std::to_string(j) + "].bytes[" +
                            std::to_string(i) + "]",
                        message("workspace size symbol", *s));
    for (size_t i = 0; i < p.viewShape.size(); ++i)
      if (!p.viewShape[i].symbol.empty() && unbound(p.viewShape[i].symbol))
        return failAt(path + ".params[" + std::to_string(j) + "].view.shape[" +
                          std::to_string(i) + "]",
                      message("workspace view symbol", p.viewShape[i].symbol));
  }
  auto checkConstraint = [&](const Constraint &c, const std::string &cpath,
                             const char *what) {
    bool min = c.kind == ATTNC_CONSTRAINT_MIN || c.kind == ATTNC_CONSTRAINT_MAX;
    if (unbound(c.lhs))
      return failAt(cpath + (min ? ".sym" : ".lhs"), message(what, c.lhs));
    if (!min && unbound(c.rhs))
      return failAt(cpath + ".rhs", message(what, c.rhs));
    return true;
  };
  for (size_t i = 0; i < k.constraints.size(); ++i)
    if (!checkConstraint(k.constraints[i],
                         path + ".constraints[" + std::to_string(i) + "]",
                         "constraint symbol"))
      return false;
  // A variant's conditions are read on the symbols the kernel's own tensors
  // bind (the variant takes the same ones).
  for (size_t i = 0; i < k.variants.size(); ++i)
    for (size_t j = 0; j < k.variants[i].when.size(); ++j)
      if (!checkConstraint(k.variants[i].when[j],
                           path + ".variants[" + std::to_string(i) + "].when[" +
                               std::to_string(j) + "]",
                           "variant condition symbol"))
        return false;
  // A size rule reads the grid and its K/V tiles with its own symbol unset.
  std::set<std::string> ruled;
  for (size_t i = 0; i < k.sizeRules.size(); ++i) {
    const SizeRule &r = k.sizeRules[i];
    std::string rpath = path + ".size_rules[" + std::to_string(i) + "]";
    if (unbound(r.symbol))
      return failAt(rpath + ".symbol", message("size rule symbol", r.symbol));
    if (!ruled.insert(r.symbol).second)
      return failAt(rpath + ".symbol",
                    "a second size rule for '" + r.symbol + "'");
    for (size_t j = 0; j < r.kvTiles.size(); ++j) {
      const Factor &f = r.kvTiles[j];
      std::string fpath = rpath + ".kv_tiles[" + std::to_string(j) + "]";
      if (f.kind != ATTNC_FACTOR_SYMBOL)
        continue;
      if (f.symbol == r.symbol || f.plus == r.symbol)
        return failAt(fpath, "the K/V tiles of the size rule of '" + r.symbol +
                                 "' use its own symbol");
      for (const std::string *s : f.symbols())
        if (unbound(*s))
          return failAt(fpath, message("size rule symbol", *s));
    }
  }
  return true;
}

/// The cross-references: what validation and grid computation assume.
bool ManifestReader::checkKernel(const std::string &path, attnc_kernel &k) {
  std::set<std::string> names, symbols, sizeParams;
  for (const Param &p : k.params) {
    if (!names.insert(p.name).second)
      return failAt(path + ".params",
                    "duplicate parameter name '" + p.name + "'");
    for (const Dim &d : p.shape)
      if (!d.symbol.empty())
        symbols.insert(d.symbol);
  }
  for (size_t i = 0; i < k.params.size(); ++i) {
    Param &p = k.params[i];
    std::string ppath = path + ".params[" + std::to_string(i) + "]";
    if (p.kind == ATTNC_PARAM_SIZE) {
      if (!symbols.count(p.name))
        return failAt(ppath, "size parameter '" + p.name +
                                 "' is not a symbol of any tensor shape, so "
                                 "no argument can bind it");
      if (!sizeParams.insert(p.name).second)
        return failAt(ppath, "duplicate size parameter '" + p.name + "'");
    }
    if (p.kind == ATTNC_PARAM_STRIDE && !checkStride(ppath, k, p))
      return false;
    if (p.kind == ATTNC_PARAM_TENSORMAP && !checkTensorMap(ppath, k, p))
      return false;
  }
  return checkSymbols(path, k, symbols);
}

bool ManifestReader::parseModule(const json::Value &v, attnc_module &m) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt("<root>",
                  std::string("expected an object, got ") + describe(v));
  const json::Value *version = require(*o, "<root>", "attnc_manifest_version");
  if (!version)
    return false;
  std::optional<int64_t> ver = integerOf(*version);
  // Older manifests lack the kinds and rules of version 2 (constraints,
  // workspaces, tensormaps): reading them as version 2 would skip checks.
  if (!ver || *ver != 2)
    return failAt(
        "attnc_manifest_version",
        "unsupported manifest version " +
            (ver ? std::to_string(*ver) : std::string(describe(*version))) +
            " (this runtime reads version 2); recompile the module with "
            "this attnc's attnc-compile");
  if (!getString(*o, "<root>", "module", m.name, true) ||
      !getString(*o, "<root>", "chip", m.chip, false))
    return false;
  const json::Value *kernels = require(*o, "<root>", "kernels");
  if (!kernels)
    return false;
  const json::Array *ks = kernels->getAsArray();
  if (!ks)
    return failAt("kernels",
                  std::string("expected an array, got ") + describe(*kernels));
  std::set<std::string> names;
  for (size_t i = 0; i < ks->size(); ++i) {
    auto k = std::make_unique<attnc_kernel>();
    k->module = &m;
    std::string path = "kernels[" + std::to_string(i) + "]";
    if (!parseKernel((*ks)[i], path, *k))
      return false;
    if (!names.insert(k->name).second)
      return failAt(path + ".name", "duplicate kernel name '" + k->name + "'");
    m.kernels.push_back(std::move(k));
  }
  return resolveFallbacks(m);
}

namespace {

std::string sizeLimitText() {
  return std::to_string(kMaxManifestBytes) + " bytes (" +
         std::to_string(kMaxManifestBytes >> 20) + " MiB)";
}

/// llvm::json::parse recurses once per array or object, so a text of many
/// '[' would overflow the stack: measure the nesting first. Brackets inside
/// strings do not count. Up to its first error the parser reads strings and
/// structure as this scan does, and it stops there, so it never goes deeper
/// than the scan found.
bool checkNesting(llvm::StringRef text, std::string &error) {
  size_t depth = 0, deepest = 0, firstBeyond = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest == kMaxManifestDepth + 1)
          firstBeyond = i;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (deepest <= kMaxManifestDepth)
    return true;
  error = "nests arrays/objects " + std::to_string(deepest) +
          " deep; at most " + std::to_string(kMaxManifestDepth) + " (level " +
          std::to_string(kMaxManifestDepth + 1) + " opens at byte " +
          std::to_string(firstBeyond) + ")";
  return false;
}

attnc_status parseInto(llvm::StringRef text, const char *dir,
                       const std::string &what, attnc_module **out) {
  if (text.size() > kMaxManifestBytes)
    return fail(ATTNC_ERROR_MANIFEST,
                what + ": " + std::to_string(text.size()) +
                    " bytes exceeds the limit of " + sizeLimitText());
  std::string nesting;
  if (!checkNesting(text, nesting))
    return fail(ATTNC_ERROR_MANIFEST, what + ": " + nesting);
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return fail(ATTNC_ERROR_MANIFEST,
                what + ": invalid JSON: " + llvm::toString(value.takeError()));
  auto m = std::make_unique<attnc_module>();
  m->dir = dir ? dir : "";
  ManifestReader reader;
  if (!reader.parseModule(*value, *m))
    return fail(ATTNC_ERROR_MANIFEST, what + ": " + reader.error);
  *out = m.release();
  return ok();
}

} // namespace

extern "C" {

attnc_status attnc_manifest_parse(const char *json, size_t length,
                                  const char *dir, attnc_module **out) {
  if (!json || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_manifest_parse: json and out must not be NULL");
  *out = nullptr;
  return parseInto(llvm::StringRef(json, length), dir, "manifest", out);
}

attnc_status attnc_module_load(const char *dir, attnc_module **out) {
  if (!dir || !out)
    return fail(ATTNC_ERROR_INVALID_ARGUMENT,
                "attnc_module_load: dir and out must not be NULL");
  *out = nullptr;
  std::string path = std::string(dir) + "/manifest.json";
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return fail(ATTNC_ERROR_IO,
                "cannot open " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n;
  // Stops one buffer past the limit: a huge file (or an endless one, such
  // as a FIFO) is never held in memory.
  while (text.size() <= kMaxManifestBytes &&
         (n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    text.append(buf, n);
  bool readError = std::ferror(f);
  std::fclose(f);
  if (readError)
    return fail(ATTNC_ERROR_IO, "cannot read " + path);
  if (text.size() > kMaxManifestBytes)
    return fail(ATTNC_ERROR_MANIFEST,
                path + ": larger than the limit of " + sizeLimitText());
  return parseInto(text, dir, path, out);
}

} // extern "C"
