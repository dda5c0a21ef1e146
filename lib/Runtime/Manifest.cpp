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
// stride and tensormap parameters that name a real tensor; TMA boxes and
// swizzles the hardware accepts; three-element block and grid. Errors name
// the JSON path ("kernels[0].params[2].dtype") and the rule. Unknown keys
// are ignored so that a newer compiler can add fields without a version
// bump; unknown parameter, factor and constraint kinds are errors, since
// skipping them would launch with a wrong ABI or an unchecked rule. The
// queries over the parsed structs are in KernelQueries.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <limits>
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

  bool getSymbol(const json::Object &o, const std::string &path,
                 const char *key, std::string &out) {
    if (!getString(o, path, key, out, true))
      return false;
    if (out.empty())
      return failAt(path + "." + key, "empty size symbol");
    return true;
  }

  bool parseParam(const json::Value &v, const std::string &path, Param &p);
  bool parseTensorMap(const json::Object &o, const std::string &path, Param &p);
  bool parseWorkspace(const json::Object &o, const std::string &path, Param &p);
  bool parseFactor(const json::Value &v, const std::string &path, Factor &f);
  bool parseGrid(const json::Value &v, const std::string &path,
                 attnc_kernel &k);
  bool parseConstraint(const json::Value &v, const std::string &path,
                       Constraint &c);
  bool checkTensorMap(const std::string &path, const attnc_kernel &k, Param &p);
  bool checkSymbols(const std::string &path, const attnc_kernel &k,
                    const std::set<std::string> &symbols);
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
  if (kind == "tensormap") {
    p.kind = ATTNC_PARAM_TENSORMAP;
    return parseTensorMap(*o, path, p);
  }
  if (kind == "workspace") {
    p.kind = ATTNC_PARAM_WORKSPACE;
    p.dtype = ATTNC_DTYPE_I8;
    return parseWorkspace(*o, path, p);
  }
  return failAt(path + ".kind", "unknown parameter kind '" + kind +
                                    "' (expected tensor, size, stride, "
                                    "scalar, tensormap or workspace)");
}

/// The tensormap's own fields; what depends on its tensor is checked once
/// every parameter is known (checkTensorMap).
bool Reader::parseTensorMap(const json::Object &o, const std::string &path,
                            Param &p) {
  if (!getString(o, path, "tensor", p.tensor, true))
    return false;
  const json::Value *box = require(o, path, "box");
  if (!box)
    return false;
  const json::Array *dims = box->getAsArray();
  if (!dims)
    return failAt(path + ".box",
                  std::string("expected an array, got ") + describe(*box));
  for (size_t i = 0; i < dims->size(); ++i) {
    std::string dpath = path + ".box[" + std::to_string(i) + "]";
    int64_t d;
    if (!getInt((*dims)[i], dpath, d, 1))
      return false;
    if (d > 256)
      return failAt(dpath, "box dimension " + std::to_string(d) +
                               " exceeds TMA's limit of 256 elements");
    p.box.push_back(d);
  }
  const json::Value *swizzle = require(o, path, "swizzle");
  int64_t sw;
  if (!swizzle || !getInt(*swizzle, path + ".swizzle", sw, 0))
    return false;
  if (sw != 0 && sw != 32 && sw != 64 && sw != 128)
    return failAt(path + ".swizzle",
                  "swizzle " + std::to_string(sw) +
                      " is not a TMA swizzle (expected 0, 32, 64 or 128 "
                      "bytes)");
  p.swizzle = static_cast<int32_t>(sw);
  std::string fill;
  if (!getString(o, path, "oob_fill", fill, true))
    return false;
  if (fill != "zero" && fill != "nan")
    return failAt(path + ".oob_fill", "unknown out-of-bounds fill '" + fill +
                                          "' (expected zero or nan)");
  p.oobFillNaN = fill == "nan";
  return true;
}

bool Reader::parseWorkspace(const json::Object &o, const std::string &path,
                            Param &p) {
  const json::Value *bytes = require(o, path, "bytes");
  if (!bytes)
    return false;
  const json::Array *factors = bytes->getAsArray();
  if (!factors)
    return failAt(path + ".bytes", std::string("expected an array of factors, "
                                               "got ") +
                                       describe(*bytes));
  for (size_t i = 0; i < factors->size(); ++i) {
    Factor f;
    if (!parseFactor((*factors)[i], path + ".bytes[" + std::to_string(i) + "]",
                     f))
      return false;
    p.bytes.push_back(f);
  }
  if (!require(o, path, "zero_init"))
    return false;
  return getOptBool(o, path, "zero_init", p.zeroInit);
}

bool Reader::parseFactor(const json::Value &f, const std::string &path,
                         Factor &g) {
  if (std::optional<llvm::StringRef> s = f.getAsString()) {
    if (s->empty())
      return failAt(path, "empty size symbol");
    g.kind = ATTNC_FACTOR_SYMBOL;
    g.symbol = s->str();
    return true;
  }
  if (f.kind() == json::Value::Number) {
    g.kind = ATTNC_FACTOR_CONSTANT;
    return getInt(f, path, g.value, 0);
  }
  const json::Object *o = f.getAsObject();
  if (!o)
    return failAt(path, std::string("expected an integer, a symbol, "
                                    "{\"sym\", \"ceil_div\"} or "
                                    "{\"device\": \"num_sms\"}, got ") +
                            describe(f));
  if (o->get("device")) {
    if (o->get("sym"))
      return failAt(path, "a factor is either {\"sym\", \"ceil_div\"} or "
                          "{\"device\"}, not both");
    std::string attribute;
    if (!getString(*o, path, "device", attribute, true))
      return false;
    if (attribute != "num_sms")
      return failAt(path + ".device", "unknown device attribute '" + attribute +
                                          "' (expected num_sms)");
    g.kind = ATTNC_FACTOR_NUM_SMS;
    return true;
  }
  const json::Value *cd = require(*o, path, "ceil_div");
  if (!getSymbol(*o, path, "sym", g.symbol) || !cd ||
      !getInt(*cd, path + ".ceil_div", g.ceilDiv, 1))
    return false;
  g.kind = ATTNC_FACTOR_SYMBOL;
  return true;
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
      Factor g;
      if (!parseFactor((*factors)[i], apath + "[" + std::to_string(i) + "]", g))
        return false;
      k.grid[a].push_back(g);
    }
  }
  return true;
}

bool Reader::parseConstraint(const json::Value &v, const std::string &path,
                             Constraint &c) {
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
  if (kind == "min") {
    c.kind = ATTNC_CONSTRAINT_MIN;
    const json::Value *value = require(*o, path, "value");
    return getSymbol(*o, path, "sym", c.lhs) && value &&
           getInt(*value, path + ".value", c.value,
                  std::numeric_limits<int64_t>::min());
  }
  // A runtime that skipped a rule it does not know would launch calls the
  // kernel cannot handle.
  return failAt(path + ".kind", "unknown constraint kind '" + kind +
                                    "' (expected divisible, equal or min)");
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

  if (const json::Value *constraints = o->get("constraints")) {
    const json::Array *cs = constraints->getAsArray();
    if (!cs)
      return failAt(path + ".constraints", std::string("expected an array, "
                                                       "got ") +
                                               describe(*constraints));
    for (size_t i = 0; i < cs->size(); ++i) {
      Constraint c;
      if (!parseConstraint((*cs)[i],
                           path + ".constraints[" + std::to_string(i) + "]", c))
        return false;
      k.constraints.push_back(std::move(c));
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

/// The index of tensor parameter NAME, or -1.
int64_t findTensor(const attnc_kernel &k, const std::string &name) {
  for (size_t j = 0; j < k.params.size(); ++j)
    if (k.params[j].kind == ATTNC_PARAM_TENSOR && k.params[j].name == name)
      return static_cast<int64_t>(j);
  return -1;
}

/// What TMA accepts for the tensor a tensormap names. The box and swizzle
/// rules depend on the manifest only, so a kernel that could never launch is
/// refused when it is loaded, not at its first call.
bool Reader::checkTensorMap(const std::string &path, const attnc_kernel &k,
                            Param &p) {
  p.tensorIndex = findTensor(k, p.tensor);
  if (p.tensorIndex < 0)
    return failAt(path + ".tensor",
                  "'" + p.tensor + "' is not a tensor parameter");
  const Param &t = k.params[p.tensorIndex];
  p.dtype = t.dtype;
  int32_t rank = rankOf(t);
  if (rank < 1 || rank > 5)
    return failAt(path + ".tensor", "'" + t.name + "' has rank " +
                                        std::to_string(rank) +
                                        "; TMA supports ranks 1 to 5");
  if (static_cast<int32_t>(p.box.size()) != rank)
    return failAt(path + ".box", "box has " + std::to_string(p.box.size()) +
                                     " dimensions but tensor '" + t.name +
                                     "' has rank " + std::to_string(rank));
  std::string inner = path + ".box[" + std::to_string(rank - 1) + "]";
  int64_t rowBytes =
      p.box.back() * static_cast<int64_t>(attnc_dtype_size(t.dtype));
  std::string row = "the innermost box row is " + std::to_string(rowBytes) +
                    " bytes (" + std::to_string(p.box.back()) + " " +
                    attnc_dtype_name(t.dtype) + ")";
  if (rowBytes % 16 != 0)
    return failAt(inner, row + ", not a multiple of 16 bytes as TMA requires");
  if (p.swizzle != 0 && rowBytes > p.swizzle)
    return failAt(inner, row + ", more than the " + std::to_string(p.swizzle) +
                             "-byte swizzle span");
  bool isFloat = t.dtype == ATTNC_DTYPE_BF16 || t.dtype == ATTNC_DTYPE_F16 ||
                 t.dtype == ATTNC_DTYPE_F32 || t.dtype == ATTNC_DTYPE_F64;
  if (p.oobFillNaN && !isFloat)
    return failAt(path + ".oob_fill", std::string("NaN fill needs a "
                                                  "floating-point tensor; '") +
                                          t.name + "' is " +
                                          attnc_dtype_name(t.dtype));
  return true;
}

/// Every symbol a launch reads (grid, workspace sizes, constraints) must be
/// bound by some tensor argument, or no call could give it a value.
bool Reader::checkSymbols(const std::string &path, const attnc_kernel &k,
                          const std::set<std::string> &symbols) {
  auto unbound = [&](const std::string &s) { return !symbols.count(s); };
  auto message = [](const char *what, const std::string &s) {
    return std::string(what) + " '" + s +
           "' is not a symbol of any tensor shape, so no argument can bind "
           "it";
  };
  for (int a = 0; a < 3; ++a)
    for (size_t i = 0; i < k.grid[a].size(); ++i)
      if (k.grid[a][i].kind == ATTNC_FACTOR_SYMBOL &&
          unbound(k.grid[a][i].symbol))
        return failAt(path + ".grid[" + std::to_string(a) + "][" +
                          std::to_string(i) + "]",
                      "grid symbol '" + k.grid[a][i].symbol +
                          "' is not a symbol of any tensor shape");
  for (size_t j = 0; j < k.params.size(); ++j) {
    const Param &p = k.params[j];
    for (size_t i = 0; i < p.bytes.size(); ++i)
      if (p.bytes[i].kind == ATTNC_FACTOR_SYMBOL && unbound(p.bytes[i].symbol))
        return failAt(path + ".params[" + std::to_string(j) + "].bytes[" +
                          std::to_string(i) + "]",
                      message("workspace size symbol", p.bytes[i].symbol));
  }
  for (size_t i = 0; i < k.constraints.size(); ++i) {
    const Constraint &c = k.constraints[i];
    std::string cpath = path + ".constraints[" + std::to_string(i) + "]";
    bool min = c.kind == ATTNC_CONSTRAINT_MIN;
    if (unbound(c.lhs))
      return failAt(cpath + (min ? ".sym" : ".lhs"),
                    message("constraint symbol", c.lhs));
    if (!min && unbound(c.rhs))
      return failAt(cpath + ".rhs", message("constraint symbol", c.rhs));
  }
  return true;
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
      p.tensorIndex = findTensor(k, p.tensor);
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
    if (p.kind == ATTNC_PARAM_TENSORMAP && !checkTensorMap(ppath, k, p))
      return false;
  }
  return checkSymbols(path, k, symbols);
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

} // extern "C"
