//===- ManifestParams.cpp - Read the parameters of manifest.json ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The per-parameter half of the manifest reader (ManifestReader.h): tensors,
// sizes, strides, scalars, tensormaps and workspaces, and the grid and
// workspace-size factors. What a parameter's fields depend on (the tensor a
// stride or a tensormap names) is checked once every parameter is read, so
// that the order of `params` does not matter; those checks are here too.
// Everything a later plan indexes with (a stride's dim, a tensormap's box)
// is bounded here, so that Plan.cpp and Validate.cpp can trust it. So is
// what a kernel's fallback must share with it: the parameters a caller
// supplies, since a plan hands the fallback the kernel's arguments.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

using namespace attnc::rt;
namespace json = llvm::json;

namespace {

constexpr std::initializer_list<attnc_dtype> allDTypes = {
    ATTNC_DTYPE_BF16, ATTNC_DTYPE_F16, ATTNC_DTYPE_F32, ATTNC_DTYPE_F64,
    ATTNC_DTYPE_I1,   ATTNC_DTYPE_I8,  ATTNC_DTYPE_I32, ATTNC_DTYPE_I64};

} // namespace

int64_t attnc::rt::findParam(const attnc_kernel &k, const std::string &name,
                             attnc_param_kind kind) {
  for (size_t j = 0; j < k.params.size(); ++j)
    if (k.params[j].kind == kind && k.params[j].name == name)
      return static_cast<int64_t>(j);
  return -1;
}

bool ManifestReader::parseParam(const json::Value &v, const std::string &path,
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
    return parseTensor(*o, path, p);
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
    // Bounded by the tensor's rank once every parameter is read
    // (checkStride); here only what int32_t holds.
    if (!getString(*o, path, "tensor", p.tensor, true) || !d ||
        !getInt(*d, path + ".dim", dim, 0, std::numeric_limits<int32_t>::max()))
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

bool ManifestReader::parseTensor(const json::Object &o, const std::string &path,
                                 Param &p) {
  std::string role;
  if (!getDType(o, path, allDTypes, ATTNC_DTYPE_INVALID, p.dtype) ||
      !getString(o, path, "role", role, true) ||
      !getOptInt(o, path, "align", p.align, 1) ||
      !getOptInt(o, path, "row_align", p.rowAlign, 0) ||
      !getOptBool(o, path, "contiguous_last", p.contiguousLast))
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
  return parseShape(o, path, p.shape);
}

bool ManifestReader::parseShape(const json::Object &o, const std::string &path,
                                std::vector<Dim> &shape) {
  const json::Array *dims = requireArray(o, path, "shape");
  if (!dims)
    return false;
  if (dims->size() > static_cast<size_t>(kMaxTensorRank))
    return failAt(path + ".shape", "rank " + std::to_string(dims->size()) +
                                       " exceeds the runtime's limit of " +
                                       std::to_string(kMaxTensorRank) +
                                       " dimensions");
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
    shape.push_back(dim);
  }
  return true;
}

/// The tensormap's own fields; what depends on its tensor is checked once
/// every parameter is known (checkTensorMap).
bool ManifestReader::parseTensorMap(const json::Object &o,
                                    const std::string &path, Param &p) {
  if (!getString(o, path, "tensor", p.tensor, true))
    return false;
  const json::Array *dims = requireArray(o, path, "box");
  if (!dims)
    return false;
  for (size_t i = 0; i < dims->size(); ++i) {
    std::string dpath = path + ".box[" + std::to_string(i) + "]";
    int64_t d;
    if (!getInt((*dims)[i], dpath, d, 1))
      return false;
    // Plan.cpp hands the box to the driver as uint32_t.
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

bool ManifestReader::parseWorkspace(const json::Object &o,
                                    const std::string &path, Param &p) {
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
  // A workspace whose constants alone overflow could never be sized.
  if (!checkConstantProduct(p.bytes, path + ".bytes",
                            std::numeric_limits<int64_t>::max(),
                            "a workspace size must fit 63 bits"))
    return false;
  if (!require(o, path, "zero_init") ||
      !getOptBool(o, path, "zero_init", p.zeroInit))
    return false;
  const json::Value *view = o.get("view");
  if (!view)
    return true;
  const json::Object *v = view->getAsObject();
  std::string vpath = path + ".view";
  if (!v)
    return failAt(vpath,
                  std::string("expected an object, got ") + describe(*view));
  if (!getDType(*v, vpath, allDTypes, ATTNC_DTYPE_INVALID, p.viewDtype) ||
      !parseShape(*v, vpath, p.viewShape))
    return false;
  if (p.viewShape.empty())
    return failAt(vpath + ".shape", "a view has at least one dimension");
  return true;
}

bool ManifestReader::parseFactor(const json::Value &f, const std::string &path,
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
  // ceil(sym / ceil_div) + plus: a ragged batch's query tiles.
  if (o->get("plus")) {
    if (!getSymbol(*o, path, "plus", g.plus))
      return false;
    if (g.plus == g.symbol)
      return failAt(path + ".plus", "a factor adds a symbol other than its "
                                    "dividend, got '" +
                                        g.plus + "' for both");
  }
  g.kind = ATTNC_FACTOR_SYMBOL;
  return true;
}

bool ManifestReader::checkConstantProduct(const std::vector<Factor> &factors,
                                          const std::string &path, int64_t max,
                                          const std::string &what) {
  // The other factors (symbols, num_sms) are >= 0: either one is 0 and so
  // is the product, or the product is at least that of the constants. So a
  // kernel whose constants already exceed MAX could only launch empty.
  int64_t product = 1;
  bool overflow = false;
  for (const Factor &f : factors) {
    if (f.kind != ATTNC_FACTOR_CONSTANT)
      continue;
    if (f.value == 0)
      return true;
    overflow |= __builtin_mul_overflow(product, f.value, &product);
  }
  if (!overflow && product <= max)
    return true;
  return failAt(path, (overflow ? std::string("the constant factors overflow "
                                              "64 bits")
                                : "the constant factors multiply to " +
                                      std::to_string(product)) +
                          "; " + what);
}

/// Plan.cpp packs argOf[tensorIndex]->strides[dim]: the tensor must be a
/// tensor parameter and dim below its rank, which the call's tensor then has.
bool ManifestReader::checkStride(const std::string &path, const attnc_kernel &k,
                                 Param &p) {
  p.tensorIndex = findTensor(k, p.tensor);
  if (p.tensorIndex < 0)
    return failAt(path + ".tensor",
                  "'" + p.tensor + "' is not a tensor parameter");
  const Param &t = k.params[p.tensorIndex];
  if (p.dim < 0 || p.dim >= rankOf(t))
    return failAt(path + ".dim", "dim " + std::to_string(p.dim) +
                                     " is out of range for '" + t.name +
                                     "' of rank " + std::to_string(rankOf(t)));
  return true;
}

/// What TMA accepts for the tensor a tensormap names. The box and swizzle
/// rules depend on the manifest only, so a kernel that could never launch is
/// refused when it is loaded, not at its first call.
bool ManifestReader::checkTensorMap(const std::string &path,
                                    const attnc_kernel &k, Param &p) {
  p.tensorIndex = findTensor(k, p.tensor);
  if (p.tensorIndex < 0) {
    p.tensorIndex = findParam(k, p.tensor, ATTNC_PARAM_WORKSPACE);
    if (p.tensorIndex >= 0 &&
        k.params[p.tensorIndex].viewDtype == ATTNC_DTYPE_INVALID)
      return failAt(path + ".tensor", "'" + p.tensor +
                                          "' is a workspace without a "
                                          "view; a tensormap maps a tensor "
                                          "or a workspace's view");
  }
  if (p.tensorIndex < 0)
    return failAt(path + ".tensor",
                  "'" + p.tensor + "' is not a tensor parameter");
  // A workspace's view stands for the tensor.
  Param t = k.params[p.tensorIndex];
  std::string what = "tensor '" + t.name + "'";
  if (t.kind == ATTNC_PARAM_WORKSPACE) {
    t.dtype = t.viewDtype;
    t.shape = t.viewShape;
    what = "the view of workspace '" + t.name + "'";
  }
  p.dtype = t.dtype;
  int32_t rank = rankOf(t);
  if (rank < 1 || rank > 5)
    return failAt(path + ".tensor", "'" + t.name + "' has rank " +
                                        std::to_string(rank) +
                                        "; TMA supports ranks 1 to 5");
  // Plan.cpp reads box[d] for every dimension d of the tensor.
  if (static_cast<int32_t>(p.box.size()) != rank)
    return failAt(path + ".box", "box has " + std::to_string(p.box.size()) +
                                     " dimensions but " + what + " has rank " +
                                     std::to_string(rank));
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

namespace {

/// What a caller passes, in order: one argument per tensor, workspace and
/// scalar parameter (the C API's tensors and scalars arrays).
std::vector<const Param *> suppliedParams(const attnc_kernel &k) {
  std::vector<const Param *> out;
  for (const Param &p : k.params)
    if (p.kind == ATTNC_PARAM_TENSOR || p.kind == ATTNC_PARAM_WORKSPACE ||
        p.kind == ATTNC_PARAM_SCALAR)
      out.push_back(&p);
  return out;
}

const char *kindText(attnc_param_kind kind) {
  return kind == ATTNC_PARAM_TENSOR      ? "a tensor"
         : kind == ATTNC_PARAM_WORKSPACE ? "a workspace"
                                         : "a scalar";
}

std::string factorsText(const std::vector<Factor> &factors) {
  std::string rule = productText(factors);
  return rule.empty() ? "1" : rule;
}

bool sameFactors(const std::vector<Factor> &a, const std::vector<Factor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].value != b[i].value ||
        a[i].symbol != b[i].symbol || a[i].ceilDiv != b[i].ceilDiv ||
        a[i].plus != b[i].plus)
      return false;
  return true;
}

bool sameShape(const std::vector<Dim> &a, const std::vector<Dim> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].extent != b[i].extent || a[i].symbol != b[i].symbol)
      return false;
  return true;
}

} // namespace

/// A plan that falls back hands F the tensors and scalars arrays made for
/// K, so F must read them as K does; and F may only accept more tensors
/// than K through its weaker alignment, or a plan would run F for calls K
/// refuses for other reasons (shape, dtype, layout). Workspace byte rules
/// must agree because the caller sized the workspaces for K. Sizes, strides
/// and tensormaps are not the caller's business, and zero_init is the
/// runtime's, so they may differ.
bool ManifestReader::checkFallbackParams(const std::string &path,
                                         const attnc_kernel &k,
                                         const attnc_kernel &f,
                                         const char *role) {
  std::vector<const Param *> mine = suppliedParams(k),
                             theirs = suppliedParams(f);
  std::string head = std::string(role) + " kernel '" + f.name +
                     "' must take the arguments of '" + k.name +
                     "' (only align and row_align may differ): ";
  std::string here = " in '" + k.name + "' but ",
              there = " in '" + f.name + "'";
  for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
    const Param &a = *mine[i], &b = *theirs[i];
    std::string param = "parameter '" + a.name + "' ";
    if (a.name != b.name)
      return failAt(path, head + "argument " + std::to_string(i) + " is '" +
                              a.name + "'" + here + "'" + b.name + "'" + there);
    if (a.kind != b.kind)
      return failAt(path, head + param + "is " + kindText(a.kind) + here +
                              kindText(b.kind) + there);
    if (a.dtype != b.dtype)
      return failAt(path, head + param + "has dtype " + dtypeText(a.dtype) +
                              here + dtypeText(b.dtype) + there);
    if (a.kind == ATTNC_PARAM_WORKSPACE && !sameFactors(a.bytes, b.bytes))
      return failAt(path, head + "workspace '" + a.name + "' needs " +
                              factorsText(a.bytes) + " bytes" + here +
                              factorsText(b.bytes) + there);
    if (a.kind != ATTNC_PARAM_TENSOR)
      continue;
    if (!sameShape(a.shape, b.shape))
      return failAt(path, head + param + "has shape " + formatShape(a.shape) +
                              here + formatShape(b.shape) + there);
    if (a.role != b.role)
      return failAt(
          path, head + param + "is an " +
                    (a.role == ATTNC_ROLE_INPUT ? "input" : "output") + here +
                    (b.role == ATTNC_ROLE_INPUT ? "an input" : "an output") +
                    there);
    if (a.contiguousLast != b.contiguousLast)
      return failAt(path, head + param + "has contiguous_last " +
                              (a.contiguousLast ? "true" : "false") + here +
                              (b.contiguousLast ? "true" : "false") + there);
  }
  if (mine.size() != theirs.size()) {
    auto names = [](const std::vector<const Param *> &ps) {
      std::string out;
      for (const Param *p : ps)
        out += (out.empty() ? "" : ", ") + p->name;
      return out;
    };
    return failAt(path, head + "'" + k.name + "' takes " +
                            std::to_string(mine.size()) + " arguments (" +
                            names(mine) + ") but '" + f.name + "' takes " +
                            std::to_string(theirs.size()) + " (" +
                            names(theirs) + ")");
  }
  return true;
}
