//===- Manifest.cpp - Read and check manifest.json ------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Parses the manifest written by attnc-compile (docs/abi.md) into the
// Module/Kernel structs and checks every rule a launch later relies on, so
// that argument validation can trust the manifest: known dtypes, size and
// grid symbols that some tensor shape binds, stride parameters that name a
// real tensor dimension, three-element block and grid. Errors name the JSON
// path ("kernels[0].params[2].dtype") and the rule. Also implements the
// CPU-only module and kernel queries of the C API. Unknown keys are ignored
// so that a newer compiler can add fields without breaking older runtimes.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <set>

using namespace attnc::rt;
namespace json = llvm::json;

namespace {

const char *describe(const json::Value &v) {
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

/// Walks the JSON tree, remembering the first error with its path.
class Reader {
public:
  std::string error;

  bool failAt(const std::string &path, const std::string &message) {
    if (error.empty())
      error = path + ": " + message;
    return false;
  }

  const json::Value *require(const json::Object &o, const std::string &path,
                             const char *key) {
    const json::Value *v = o.get(key);
    if (!v)
      failAt(path, std::string("missing required key '") + key + "'");
    return v;
  }

  bool getString(const json::Object &o, const std::string &path,
                 const char *key, std::string &out, bool required) {
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

  bool getInt(const json::Value &v, const std::string &path, int64_t &out,
              int64_t min) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i)
      return failAt(path,
                    std::string("expected an integer, got ") + describe(v));
    if (*i < min)
      return failAt(path, "expected an integer >= " + std::to_string(min) +
                              ", got " + std::to_string(*i));
    out = *i;
    return true;
  }

  bool getOptInt(const json::Object &o, const std::string &path,
                 const char *key, int64_t &out, int64_t min) {
    const json::Value *v = o.get(key);
    return !v || getInt(*v, path + "." + key, out, min);
  }

  bool getOptBool(const json::Object &o, const std::string &path,
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

  bool getDType(const json::Object &o, const std::string &path,
                std::initializer_list<attnc_dtype> allowed, attnc_dtype dflt,
                attnc_dtype &out) {
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

  bool parseParam(const json::Value &v, const std::string &path, Param &p);
  bool parseGrid(const json::Value &v, const std::string &path,
                 attnc_kernel &k);
  bool parseKernel(const json::Value &v, const std::string &path,
                   attnc_kernel &k);
  bool checkKernel(const std::string &path, attnc_kernel &k);
  bool parseModule(const json::Value &v, attnc_module &m);
};

constexpr std::initializer_list<attnc_dtype> allDTypes = {
    ATTNC_DTYPE_BF16, ATTNC_DTYPE_F16, ATTNC_DTYPE_F32, ATTNC_DTYPE_F64,
    ATTNC_DTYPE_I1,   ATTNC_DTYPE_I8,  ATTNC_DTYPE_I32, ATTNC_DTYPE_I64};

bool Reader::parseParam(const json::Value &v, const std::string &path,
                        Param &p) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an object, got ") + describe(v));
  std::string kind;
  if (!getString(*o, path, "name", p.name, true) ||
      !getString(*o, path, "kind", kind, true))
    return false;
  if (p.name.empty())
    return failAt(path + ".name", "empty parameter name");

  if (kind == "tensor") {
    p.kind = ATTNC_PARAM_TENSOR;
    std::string role;
    if (!getDType(*o, path, allDTypes, ATTNC_DTYPE_INVALID, p.dtype) ||
        !getString(*o, path, "role", role, true) ||
        !getOptInt(*o, path, "align", p.align, 1) ||
        !getOptInt(*o, path, "row_align", p.rowAlign, 0) ||
        !getOptBool(*o, path, "contiguous_last", p.contiguousLast))
      return false;
    if (role == "input")
      p.role = ATTNC_ROLE_INPUT;
    else if (role == "output")
      p.role = ATTNC_ROLE_OUTPUT;
    else
      return failAt(path + ".role",
                    "unknown role '" + role + "' (expected input or output)");
    if (p.align & (p.align - 1))
      return failAt(path + ".align", "alignment " + std::to_string(p.align) +
                                         " is not a power of two");
    const json::Value *shape = require(*o, path, "shape");
    if (!shape)
      return false;
    const json::Array *dims = shape->getAsArray();
    if (!dims)
      return failAt(path + ".shape",
                    std::string("expected an array, got ") + describe(*shape));
    for (size_t i = 0; i < dims->size(); ++i) {
      std::string dpath = path + ".shape[" + std::to_string(i) + "]";
      const json::Value &d = (*dims)[i];
      Dim dim;
      if (std::optional<llvm::StringRef> s = d.getAsString()) {
        if (s->empty())
          return failAt(dpath, "empty size symbol");
        dim.symbol = s->str();
      } else if (d.kind() == json::Value::Number) {
        if (!getInt(d, dpath, dim.extent, 0))
          return false;
      } else {
        return failAt(dpath, std::string("expected an integer or a symbol "
                                         "name, got ") +
                                 describe(d));
      }
      p.shape.push_back(dim);
    }
    return true;
  }
  if (kind == "size") {
    p.kind = ATTNC_PARAM_SIZE;
    return getDType(*o, path, {ATTNC_DTYPE_I64, ATTNC_DTYPE_I32},
                    ATTNC_DTYPE_I64, p.dtype);
  }
  if (kind == "stride") {
    p.kind = ATTNC_PARAM_STRIDE;
    int64_t dim = 0;
    const json::Value *d = require(*o, path, "dim");
    if (!getString(*o, path, "tensor", p.tensor, true) || !d ||
        !getInt(*d, path + ".dim", dim, 0))
      return false;
    p.dim = static_cast<int32_t>(dim);
    return getDType(*o, path, {ATTNC_DTYPE_I64, ATTNC_DTYPE_I32},
                    ATTNC_DTYPE_I64, p.dtype);
  }
  if (kind == "scalar") {
    p.kind = ATTNC_PARAM_SCALAR;
    return getDType(
        *o, path,
        {ATTNC_DTYPE_I64, ATTNC_DTYPE_I32, ATTNC_DTYPE_F32, ATTNC_DTYPE_F64},
        ATTNC_DTYPE_INVALID, p.dtype);
  }
  return failAt(path + ".kind", "unknown parameter kind '" + kind +
                                    "' (expected tensor, size, stride or "
                                    "scalar)");
}

bool Reader::parseGrid(const json::Value &v, const std::string &path,
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
      std::string fpath = apath + "[" + std::to_string(i) + "]";
      const json::Value &f = (*factors)[i];
      GridFactor g;
      if (std::optional<llvm::StringRef> s = f.getAsString()) {
        g.symbol = s->str();
      } else if (const json::Object *o = f.getAsObject()) {
        const json::Value *cd = require(*o, fpath, "ceil_div");
        if (!getString(*o, fpath, "sym", g.symbol, true) || !cd ||
            !getInt(*cd, fpath + ".ceil_div", g.ceilDiv, 1))
          return false;
      } else if (f.kind() == json::Value::Number) {
        if (!getInt(f, fpath, g.value, 0))
          return false;
      } else {
        return failAt(fpath, std::string("expected an integer, a symbol or "
                                         "{\"sym\", \"ceil_div\"}, got ") +
                                 describe(f));
      }
      k.grid[a].push_back(g);
    }
  }
  return true;
}

bool Reader::parseKernel(const json::Value &v, const std::string &path,
                         attnc_kernel &k) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an object, got ") + describe(v));
  if (!getString(*o, path, "name", k.name, true) ||
      !getString(*o, path, "kind", k.kind, false) ||
      !getString(*o, path, "cubin", k.cubin, true) ||
      !getString(*o, path, "entry", k.entry, false) ||
      !getOptInt(*o, path, "dynamic_shared_memory_bytes", k.sharedMemoryBytes,
                 0))
    return false;
  if (k.name.empty())
    return failAt(path + ".name", "empty kernel name");
  if (k.entry.empty())
    k.entry = k.name;
  // The cubin must stay inside the module directory.
  if (k.cubin.empty() || k.cubin[0] == '/' ||
      k.cubin.find("..") != std::string::npos)
    return failAt(path + ".cubin", "'" + k.cubin +
                                       "' is not a file name inside the "
                                       "module directory");

  const json::Value *block = require(*o, path, "block");
  if (!block)
    return false;
  const json::Array *b = block->getAsArray();
  if (!b || b->size() != 3)
    return failAt(path + ".block", "expected an array of 3 integers");
  for (size_t i = 0; i < 3; ++i)
    if (!getInt((*b)[i], path + ".block[" + std::to_string(i) + "]", k.block[i],
                1))
      return false;

  const json::Value *grid = require(*o, path, "grid");
  if (!grid || !parseGrid(*grid, path + ".grid", k))
    return false;

  const json::Value *params = require(*o, path, "params");
  if (!params)
    return false;
  const json::Array *ps = params->getAsArray();
  if (!ps)
    return failAt(path + ".params",
                  std::string("expected an array, got ") + describe(*params));
  for (size_t i = 0; i < ps->size(); ++i) {
    Param p;
    if (!parseParam((*ps)[i], path + ".params[" + std::to_string(i) + "]", p))
      return false;
    k.params.push_back(std::move(p));
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

/// The cross-references: what validation and grid computation assume.
bool Reader::checkKernel(const std::string &path, attnc_kernel &k) {
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
    if (p.kind == ATTNC_PARAM_STRIDE) {
      for (size_t j = 0; j < k.params.size(); ++j)
        if (k.params[j].kind == ATTNC_PARAM_TENSOR &&
            k.params[j].name == p.tensor)
          p.tensorIndex = static_cast<int64_t>(j);
      if (p.tensorIndex < 0)
        return failAt(ppath + ".tensor",
                      "'" + p.tensor + "' is not a tensor parameter");
      const Param &t = k.params[p.tensorIndex];
      if (p.dim >= rankOf(t))
        return failAt(ppath + ".dim", "dim " + std::to_string(p.dim) +
                                          " is out of range for '" + t.name +
                                          "' of rank " +
                                          std::to_string(rankOf(t)));
    }
  }
  for (int a = 0; a < 3; ++a)
    for (size_t i = 0; i < k.grid[a].size(); ++i)
      if (!k.grid[a][i].symbol.empty() && !symbols.count(k.grid[a][i].symbol))
        return failAt(path + ".grid[" + std::to_string(a) + "][" +
                          std::to_string(i) + "]",
                      "grid symbol '" + k.grid[a][i].symbol +
                          "' is not a symbol of any tensor shape");
  return true;
}

bool Reader::parseModule(const json::Value &v, attnc_module &m) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return failAt("<root>",
                  std::string("expected an object, got ") + describe(v));
  const json::Value *version = require(*o, "<root>", "attnc_manifest_version");
  if (!version)
    return false;
  std::optional<int64_t> ver = version->getAsInteger();
  if (!ver || *ver != 1)
    return failAt(
        "attnc_manifest_version",
        "unsupported manifest version " +
            (ver ? std::to_string(*ver) : std::string(describe(*version))) +
            " (this runtime reads version 1)");
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
  return true;
}

attnc_status parseInto(llvm::StringRef text, const char *dir,
                       const std::string &what, attnc_module **out) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return fail(ATTNC_ERROR_MANIFEST,
                what + ": invalid JSON: " + llvm::toString(value.takeError()));
  auto m = std::make_unique<attnc_module>();
  m->dir = dir ? dir : "";
  Reader reader;
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
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    text.append(buf, n);
  bool readError = std::ferror(f);
  std::fclose(f);
  if (readError)
    return fail(ATTNC_ERROR_IO, "cannot read " + path);
  return parseInto(text, dir, path, out);
}

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
  out->name = p.name.c_str();
  out->kind = p.kind;
  out->dtype = p.dtype;
  out->role = p.role;
  out->rank = rankOf(p);
  out->align = p.kind == ATTNC_PARAM_TENSOR ? p.align : 0;
  out->contiguous_last = p.kind == ATTNC_PARAM_TENSOR && p.contiguousLast;
  out->tensor = p.kind == ATTNC_PARAM_STRIDE ? p.tensor.c_str() : nullptr;
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

} // extern "C"
