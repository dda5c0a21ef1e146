//===- AttncContractAttrs.cpp - kernel launch contracts -------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Syntax and verifiers of #attnc.launch_contract and its parts. Inside a
// contract, parameters, factors, constraints and size rules are written
// without their `#attnc.` prefix so that a 30-parameter kernel's contract
// stays readable in lit tests; each also parses on its own with the prefix.
// The rules on size symbols (constraints, size rules) are in
// ContractRules.cpp, the syntax of the contract itself in
// LaunchContractSyntax.cpp.
//
//===----------------------------------------------------------------------===//

#include "ContractAsm.h"

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::contract_asm;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<StringRef> attnc::contractDTypeName(Type t) {
  if (!t)
    return std::nullopt;
  if (t.isBF16())
    return StringRef("bf16");
  if (t.isF16())
    return StringRef("f16");
  if (t.isF32())
    return StringRef("f32");
  if (t.isF64())
    return StringRef("f64");
  if (t.isSignlessInteger(1))
    return StringRef("i1");
  if (t.isSignlessInteger(8))
    return StringRef("i8");
  if (t.isSignlessInteger(32))
    return StringRef("i32");
  if (t.isSignlessInteger(64))
    return StringRef("i64");
  return std::nullopt;
}

Type attnc::parseContractDType(MLIRContext *ctx, StringRef name) {
  Builder b(ctx);
  return llvm::StringSwitch<Type>(name)
      .Case("bf16", b.getBF16Type())
      .Case("f16", b.getF16Type())
      .Case("f32", b.getF32Type())
      .Case("f64", b.getF64Type())
      .Case("i1", b.getI1Type())
      .Case("i8", b.getI8Type())
      .Case("i32", b.getI32Type())
      .Case("i64", b.getI64Type())
      .Default(Type());
}

LaunchContractAttr attnc::getLaunchContract(Operation *op) {
  return op->getAttrOfType<LaunchContractAttr>(kLaunchContractAttrName);
}

/// Symbols print bare when the lexer reads them back as one keyword.
static bool isBareSymbol(StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
  });
}

void attnc::contract_asm::printSymbol(AsmPrinter &printer, StringRef s) {
  if (isBareSymbol(s))
    printer << s;
  else
    printer.printString(s);
}

static std::string render(Type t) {
  if (!t)
    return "no type";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// Element size in bytes as a host stores it (i1 takes a byte).
static int64_t elementBytes(Type t) {
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

namespace attnc {
/// `[B, H, Sq, 128]`: integers are static extents, words are symbols.
ParseResult parseContractShape(AsmParser &parser,
                               SmallVectorImpl<Attribute> &shape) {
  Builder b(parser.getContext());
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v = 0;
        OptionalParseResult r = parser.parseOptionalInteger(v);
        if (r.has_value()) {
          if (failed(*r))
            return failure();
          shape.push_back(b.getI64IntegerAttr(v));
          return success();
        }
        std::string sym;
        if (parser.parseKeywordOrString(&sym))
          return failure();
        shape.push_back(b.getStringAttr(sym));
        return success();
      });
}

void printContractShape(AsmPrinter &printer, ArrayRef<Attribute> shape) {
  printer << '[';
  llvm::interleaveComma(shape, printer, [&](Attribute d) {
    if (auto i = dyn_cast<IntegerAttr>(d))
      printer << i.getInt();
    else if (auto s = dyn_cast<StringAttr>(d))
      printSymbol(printer, s.getValue());
    else
      printer.printAttribute(d);
  });
  printer << ']';
}
} // namespace attnc

//===----------------------------------------------------------------------===//
// GridFactorAttr
//===----------------------------------------------------------------------===//

GridFactorAttr GridFactorAttr::getConstant(MLIRContext *ctx, int64_t v) {
  return get(ctx, FactorKind::constant, StringRef(), v, DeviceValue::num_sms,
             StringRef());
}
GridFactorAttr GridFactorAttr::getSymbol(MLIRContext *ctx, StringRef sym) {
  return get(ctx, FactorKind::symbol, sym, int64_t(1), DeviceValue::num_sms,
             StringRef());
}
GridFactorAttr GridFactorAttr::getCeilDiv(MLIRContext *ctx, StringRef sym,
                                          int64_t divisor, StringRef plus) {
  return get(ctx, FactorKind::ceil_div, sym, divisor, DeviceValue::num_sms,
             plus);
}
GridFactorAttr GridFactorAttr::getDevice(MLIRContext *ctx, DeviceValue d) {
  return get(ctx, FactorKind::device, StringRef(), int64_t(1), d, StringRef());
}

LogicalResult
GridFactorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       FactorKind kind, StringRef symbol, int64_t value,
                       DeviceValue, StringRef plus) {
  if (kind == FactorKind::constant && value < 1)
    return emitError() << "a constant factor must be positive, got " << value;
  if ((kind == FactorKind::symbol || kind == FactorKind::ceil_div) &&
      symbol.empty())
    return emitError() << "a symbol factor needs a symbol name";
  if (kind == FactorKind::ceil_div && value < 1)
    return emitError() << "ceil_div divisor must be positive, got " << value;
  if (!plus.empty() && kind != FactorKind::ceil_div)
    return emitError() << "only a ceil_div factor adds a symbol ('+ " << plus
                       << "')";
  if (!plus.empty() && plus == symbol)
    return emitError() << "a ceil_div factor adds a symbol other than its "
                          "dividend, got '"
                       << plus << "' for both";
  return success();
}

void GridFactorAttr::printBody(AsmPrinter &printer) const {
  switch (getKind()) {
  case FactorKind::constant:
    printer << getValue();
    return;
  case FactorKind::symbol:
    printSymbol(printer, getSymbol());
    return;
  case FactorKind::ceil_div:
    printer << "ceil_div(";
    printSymbol(printer, getSymbol());
    printer << ", " << getValue() << ")";
    if (!getPlus().empty()) {
      printer << " + ";
      printSymbol(printer, getPlus());
    }
    return;
  case FactorKind::device:
    printer << "device(" << stringifyDeviceValue(getDevice()) << ")";
    return;
  }
}

GridFactorAttr GridFactorAttr::parseBody(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  FactorKind kind = FactorKind::symbol;
  std::string sym;
  int64_t value = 1;
  DeviceValue device = DeviceValue::num_sms;
  OptionalParseResult r = parser.parseOptionalInteger(value);
  if (r.has_value()) {
    if (failed(*r))
      return {};
    kind = FactorKind::constant;
  } else {
    std::string word;
    if (parser.parseKeywordOrString(&word))
      return {};
    if (word == "ceil_div" && succeeded(parser.parseOptionalLParen())) {
      kind = FactorKind::ceil_div;
      if (parser.parseKeywordOrString(&sym) || parser.parseComma() ||
          parser.parseInteger(value) || parser.parseRParen())
        return {};
    } else if (word == "device" && succeeded(parser.parseOptionalLParen())) {
      std::string what;
      if (parser.parseKeywordOrString(&what))
        return {};
      std::optional<DeviceValue> d = symbolizeDeviceValue(what);
      if (!d) {
        parser.emitError(loc)
            << "unknown device property '" << what << "' (known: num_sms)";
        return {};
      }
      if (parser.parseRParen())
        return {};
      kind = FactorKind::device;
      device = *d;
    } else {
      sym = word;
    }
  }
  // Any form parses `+ SYM`; the verifier says which may add one.
  std::string plus;
  if (succeeded(parser.parseOptionalPlus()) &&
      parser.parseKeywordOrString(&plus))
    return {};
  return getChecked([&] { return parser.emitError(loc); }, ctx, kind,
                    StringRef(sym), value, device, StringRef(plus));
}

Attribute GridFactorAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  GridFactorAttr f = parseBody(parser);
  if (!f || parser.parseGreater())
    return {};
  return f;
}

void GridFactorAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}

void attnc::contract_asm::printFactorList(AsmPrinter &printer,
                                          ArrayRef<GridFactorAttr> factors) {
  printer << '[';
  llvm::interleaveComma(factors, printer,
                        [&](GridFactorAttr f) { f.printBody(printer); });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

static LogicalResult checkName(function_ref<InFlightDiagnostic()> emitError,
                               StringRef name) {
  if (name.empty())
    return emitError() << "kernel parameter name must not be empty";
  return success();
}

/// Sizes and strides are integers the host computes and range-checks.
static LogicalResult
checkIndexType(function_ref<InFlightDiagnostic()> emitError, StringRef kind,
               StringRef name, Type t) {
  if (t && (t.isSignlessInteger(64) || t.isSignlessInteger(32)))
    return success();
  return emitError() << kind << " parameter '" << name << "' has type "
                     << render(t) << "; sizes and strides are i64 or i32";
}

/// The element type and shape of an array a parameter describes (a
/// tensor, a workspace's view); `subject` begins each message.
static LogicalResult
checkArrayType(function_ref<InFlightDiagnostic()> emitError,
               const Twine &subject, Type dtype, ArrayRef<Attribute> shape) {
  if (!dtype || !contractDTypeName(dtype))
    return emitError() << subject << " element type " << render(dtype)
                       << "; contracts carry bf16, f16, f32, f64, i1, i8, "
                          "i32 and i64";
  for (Attribute d : shape) {
    auto i = dyn_cast<IntegerAttr>(d);
    auto s = dyn_cast<StringAttr>(d);
    if ((i && i.getInt() >= 0) || (s && !s.getValue().empty()))
      continue;
    return emitError() << subject << " shape entry " << d
                       << "; entries are non-negative extents and symbol "
                          "names";
  }
  return success();
}

LogicalResult
TensorParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name, Type dtype, ArrayRef<Attribute> shape,
                        TensorRole, int64_t align, int64_t rowAlign) {
  if (failed(checkName(emitError, name)))
    return failure();
  if (failed(checkArrayType(emitError, "tensor parameter '" + name + "' has",
                            dtype, shape)))
    return failure();
  if (align < 1 || !llvm::isPowerOf2_64(align))
    return emitError() << "tensor parameter '" << name << "' has align "
                       << align << "; it must be a power of two";
  if (rowAlign < 0 || (rowAlign > 0 && !llvm::isPowerOf2_64(rowAlign)))
    return emitError() << "tensor parameter '" << name << "' has row_align "
                       << rowAlign << "; it must be 0 (none) or a power of two";
  return success();
}

LogicalResult
SizeParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef name, Type dtype) {
  if (failed(checkName(emitError, name)))
    return failure();
  return checkIndexType(emitError, "size", name, dtype);
}

LogicalResult
StrideParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name, Type dtype, StringRef, int64_t dim) {
  if (failed(checkName(emitError, name)) ||
      failed(checkIndexType(emitError, "stride", name, dtype)))
    return failure();
  if (dim < 0)
    return emitError() << "stride parameter '" << name << "' has dim " << dim
                       << "; dimensions count from 0";
  return success();
}

LogicalResult
ScalarParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name, Type dtype) {
  if (failed(checkName(emitError, name)))
    return failure();
  if (dtype && (dtype.isSignlessInteger(64) || dtype.isSignlessInteger(32) ||
                dtype.isF32() || dtype.isF64()))
    return success();
  return emitError() << "scalar parameter '" << name << "' has type "
                     << render(dtype) << "; scalars are i64, i32, f32 or f64";
}

/// CUDA's limits on threads per block and on gridDim.x, .y and .z.
static constexpr int64_t kMaxThreads = 1024;
static constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};

/// What cuTensorMapEncodeTiled accepts.
static constexpr int64_t kMaxBoxRank = 5;
static constexpr int64_t kMaxBoxExtent = 256;

LogicalResult
TensorMapParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           StringRef name, StringRef, ArrayRef<int64_t> box,
                           int64_t swizzle, OOBFill) {
  if (failed(checkName(emitError, name)))
    return failure();
  if (box.empty() || (int64_t)box.size() > kMaxBoxRank)
    return emitError() << "tensormap parameter '" << name
                       << "' has a box of rank " << box.size()
                       << "; TMA boxes have 1 to 5 dimensions";
  for (int64_t e : box)
    if (e < 1 || e > kMaxBoxExtent)
      return emitError() << "tensormap parameter '" << name
                         << "' has box extent " << e
                         << "; TMA boxes are 1 to 256 elements per dimension";
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "tensormap parameter '" << name << "' has swizzle "
                       << swizzle << "; it must be 0, 32, 64 or 128 bytes";
  return success();
}

LogicalResult
WorkspaceParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           StringRef name, ArrayRef<GridFactorAttr> bytes, bool,
                           Type viewType, ArrayRef<Attribute> viewShape) {
  if (failed(checkName(emitError, name)))
    return failure();
  if (bytes.empty())
    return emitError() << "workspace parameter '" << name
                       << "' has no byte rule";
  if (!viewType && viewShape.empty())
    return success();
  if (viewType && viewShape.empty())
    return emitError() << "workspace parameter '" << name
                       << "' has a view of rank 0";
  return checkArrayType(emitError,
                        "workspace parameter '" + name + "' has a view with",
                        viewType, viewShape);
}

Attribute WorkspaceParamAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  SmallVector<GridFactorAttr> bytes;
  if (parser.parseLess() || parser.parseString(&name) || parser.parseComma() ||
      parser.parseKeyword("bytes") || parser.parseEqual() ||
      parseFactorList(parser, bytes))
    return {};
  bool zeroInit = false;
  Type viewType;
  SmallVector<Attribute> viewShape;
  // `, zero_init` and `, view = <type> [shape]`, in that order.
  while (succeeded(parser.parseOptionalComma())) {
    if (!zeroInit && !viewType &&
        succeeded(parser.parseOptionalKeyword("zero_init"))) {
      zeroInit = true;
      continue;
    }
    if (viewType || parser.parseKeyword("view") || parser.parseEqual() ||
        parser.parseType(viewType) || parseContractShape(parser, viewShape))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    StringRef(name), ArrayRef<GridFactorAttr>(bytes), zeroInit,
                    viewType, ArrayRef<Attribute>(viewShape));
}

void WorkspaceParamAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printString(getName());
  printer << ", bytes = ";
  printFactorList(printer, getBytes());
  if (getZeroInit())
    printer << ", zero_init";
  if (getViewType()) {
    printer << ", view = " << getViewType() << ' ';
    printContractShape(printer, getViewShape());
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// LaunchContractAttr
//===----------------------------------------------------------------------===//

ArrayRef<GridFactorAttr> LaunchContractAttr::getGrid(unsigned dim) const {
  return dim == 0 ? getGridX() : dim == 1 ? getGridY() : getGridZ();
}

KernelParamAttrInterface LaunchContractAttr::lookupParam(StringRef name) const {
  for (Attribute a : getParams())
    if (auto p = dyn_cast<KernelParamAttrInterface>(a);
        p && p.getName() == name)
      return p;
  return {};
}

TensorParamAttr LaunchContractAttr::lookupTensor(StringRef name) const {
  return dyn_cast_or_null<TensorParamAttr>(lookupParam(name));
}

/// Checks a tensor map against the array it maps (`what` names it, of
/// `rank` and element type `dtype`): rank and the TMA rules on the
/// innermost box row.
static LogicalResult
verifyTensorMap(function_ref<InFlightDiagnostic()> emitError,
                TensorMapParamAttr m, const Twine &what, int64_t rank,
                Type dtype) {
  if ((int64_t)m.getBox().size() != rank)
    return emitError() << "tensormap parameter '" << m.getName()
                       << "' has a box of rank " << m.getBox().size() << " but "
                       << what << " has rank " << rank;
  int64_t rowBytes = m.getBox().back() * elementBytes(dtype);
  if (rowBytes % 16 != 0)
    return emitError() << "tensormap parameter '" << m.getName()
                       << "' has an innermost box row of " << rowBytes
                       << " bytes; TMA needs a multiple of 16";
  if (m.getSwizzle() != 0 && rowBytes > m.getSwizzle())
    return emitError() << "tensormap parameter '" << m.getName()
                       << "' has an innermost box row of " << rowBytes
                       << " bytes, wider than its swizzle span of "
                       << m.getSwizzle() << " bytes";
  return success();
}

bool attnc::isKernelName(StringRef name) {
  if (name.empty() || name.size() > kMaxKernelNameLength ||
      llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The size symbols a factor reads: its dividend and the one it adds.
static SmallVector<StringRef, 2> symbolsOf(GridFactorAttr f) {
  SmallVector<StringRef, 2> out;
  for (StringRef s : {f.getSymbol(), f.getPlus()})
    if (!s.empty())
      out.push_back(s);
  return out;
}

LogicalResult LaunchContractAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef kernel,
    StringRef kind, ArrayRef<Attribute> params, ArrayRef<GridFactorAttr> gridX,
    ArrayRef<GridFactorAttr> gridY, ArrayRef<GridFactorAttr> gridZ,
    ArrayRef<int64_t> block, int64_t sharedMemory,
    ArrayRef<ConstraintAttr> constraints, ArrayRef<SizeRuleAttr> sizeRules,
    DictionaryAttr attrs, StringRef fallback, StringRef unsplit,
    ArrayRef<KernelVariantAttr> variants, bool programmaticLaunch) {
  if (kernel.empty() || kind.empty())
    return emitError() << "launch contract needs a kernel and a kind";
  if (!isKernelName(kernel))
    return emitError() << "launch contract names kernel '" << kernel
                       << "'; a kernel name is a C identifier of at most "
                       << kMaxKernelNameLength << " characters";
  if (!fallback.empty() && (!isKernelName(fallback) || fallback == kernel))
    return emitError() << "launch contract of '" << kernel
                       << "' names fallback '" << fallback
                       << "', which must be another kernel's name";
  if (!unsplit.empty() &&
      (!isKernelName(unsplit) || unsplit == kernel || unsplit == fallback))
    return emitError() << "launch contract of '" << kernel
                       << "' names unsplit kernel '" << unsplit
                       << "', which must be another kernel's name (not its "
                          "fallback's)";
  llvm::StringSet<> variantNames;
  for (KernelVariantAttr v : variants)
    if (v.getKernel() == kernel || v.getKernel() == fallback ||
        v.getKernel() == unsplit || !variantNames.insert(v.getKernel()).second)
      return emitError() << "launch contract of '" << kernel
                         << "' names variant '" << v.getKernel()
                         << "', which must be another kernel's name (not its "
                            "fallback's, its unsplit kernel's or another "
                            "variant's)";
  llvm::StringSet<> names, bound;
  llvm::StringMap<TensorParamAttr> tensors;
  llvm::StringMap<WorkspaceParamAttr> workspaces;
  for (auto [i, a] : llvm::enumerate(params)) {
    auto p = dyn_cast<KernelParamAttrInterface>(a);
    if (!p)
      return emitError() << "params[" << i
                         << "] is not a kernel parameter: " << a;
    if (!names.insert(p.getName()).second)
      return emitError() << "parameter name '" << p.getName()
                         << "' is used twice";
    if (auto w = dyn_cast<WorkspaceParamAttr>(a))
      workspaces[w.getName()] = w;
    if (auto t = dyn_cast<TensorParamAttr>(a)) {
      tensors[t.getName()] = t;
      for (Attribute d : t.getShape())
        if (auto s = dyn_cast<StringAttr>(d))
          bound.insert(s.getValue());
    }
  }
  // Every symbol must be computable from the tensor arguments of a call.
  for (Attribute a : params) {
    auto mapped = [&](StringRef tensor) -> TensorParamAttr {
      auto it = tensors.find(tensor);
      if (it == tensors.end()) {
        emitError() << cast<KernelParamAttrInterface>(a).getKindName()
                    << " parameter '"
                    << cast<KernelParamAttrInterface>(a).getName()
                    << "' names '" << tensor
                    << "', which is not a tensor parameter";
        return {};
      }
      return it->second;
    };
    if (auto s = dyn_cast<SizeParamAttr>(a); s && !bound.contains(s.getName()))
      return emitError() << "size parameter '" << s.getName()
                         << "' occurs in no tensor's shape, so no call can "
                            "bind it";
    if (auto s = dyn_cast<StrideParamAttr>(a)) {
      TensorParamAttr t = mapped(s.getTensor());
      if (!t)
        return failure();
      if (s.getDim() >= t.getRank())
        return emitError() << "stride parameter '" << s.getName()
                           << "' has dim " << s.getDim() << " but tensor '"
                           << t.getName() << "' has rank " << t.getRank();
    }
    if (auto m = dyn_cast<TensorMapParamAttr>(a)) {
      WorkspaceParamAttr w = workspaces.lookup(m.getTensor());
      if (w && !w.getViewType())
        return emitError() << "tensormap parameter '" << m.getName()
                           << "' maps workspace '" << w.getName()
                           << "', which has no typed view";
      if (w && failed(verifyTensorMap(
                   emitError, m, "the view of workspace '" + w.getName() + "'",
                   w.getViewShape().size(), w.getViewType())))
        return failure();
      if (w)
        continue;
      TensorParamAttr t = mapped(m.getTensor());
      if (!t ||
          failed(verifyTensorMap(emitError, m, "tensor '" + t.getName() + "'",
                                 t.getRank(), t.getDtype())))
        return failure();
    }
    if (auto w = dyn_cast<WorkspaceParamAttr>(a)) {
      for (GridFactorAttr f : w.getBytes())
        for (StringRef sym : symbolsOf(f))
          if (!bound.contains(sym))
            return emitError() << "workspace parameter '" << w.getName()
                               << "' uses symbol '" << sym
                               << "', which occurs in no tensor's shape";
      for (Attribute d : w.getViewShape())
        if (auto s = dyn_cast<StringAttr>(d); s && !bound.contains(s))
          return emitError() << "workspace parameter '" << w.getName()
                             << "' has a view with symbol '" << s.getValue()
                             << "', which occurs in no tensor's shape";
    }
  }
  // What is known at compile time must be launchable: the constant factors
  // of a grid extent alone may not exceed CUDA's limit on that dimension
  // (the runtime checks the rest when the sizes are known).
  const ArrayRef<GridFactorAttr> grid[3] = {gridX, gridY, gridZ};
  for (auto [axis, dim] : llvm::enumerate(grid)) {
    int64_t constant = 1;
    for (GridFactorAttr f : dim) {
      for (StringRef sym : symbolsOf(f))
        if (!bound.contains(sym))
          return emitError()
                 << "grid symbol '" << sym << "' occurs in no tensor's shape";
      if (f.getKind() == FactorKind::constant &&
          (llvm::MulOverflow(constant, f.getValue(), constant) ||
           constant > kMaxGridDim[axis]))
        return emitError() << "grid."
                           << "xyz"[axis]
                           << " has constant factors beyond CUDA's limit of "
                           << kMaxGridDim[axis] << " blocks";
    }
  }
  for (ConstraintAttr c : constraints)
    for (StringRef s : {c.getLhs(), c.getRhs()})
      if (!s.empty() && !bound.contains(s))
        return emitError() << "constraint symbol '" << s
                           << "' occurs in no tensor's shape";
  for (KernelVariantAttr v : variants)
    for (ConstraintAttr c : v.getWhen())
      for (StringRef s : {c.getLhs(), c.getRhs()})
        if (!s.empty() && !bound.contains(s))
          return emitError()
                 << "variant '" << v.getKernel() << "' runs when symbol '" << s
                 << "' meets a condition, but '" << s
                 << "' occurs in no tensor's shape";
  llvm::StringSet<> ruled;
  for (SizeRuleAttr r : sizeRules) {
    if (!bound.contains(r.getSymbol()))
      return emitError() << "size rule symbol '" << r.getSymbol()
                         << "' occurs in no tensor's shape";
    if (!ruled.insert(r.getSymbol()).second)
      return emitError() << "size symbol '" << r.getSymbol()
                         << "' has two size rules";
    for (GridFactorAttr f : r.getKvTiles())
      for (StringRef sym : symbolsOf(f))
        if (!bound.contains(sym))
          return emitError() << "size rule of '" << r.getSymbol()
                             << "' uses symbol '" << sym
                             << "' in kv_tiles, which occurs in no tensor's "
                                "shape";
  }
  if (block.size() != 3 || llvm::any_of(block, [](int64_t e) { return e < 1; }))
    return emitError() << "block must be three positive extents";
  // Each extent first, so that the product cannot overflow.
  if (llvm::any_of(block, [](int64_t e) { return e > kMaxThreads; }) ||
      block[0] * block[1] * block[2] > kMaxThreads)
    return emitError() << "block has " << block[0] << " x " << block[1] << " x "
                       << block[2] << " threads; CUDA allows at most "
                       << kMaxThreads;
  if (sharedMemory < 0)
    return emitError() << "shared_memory must be non-negative, got "
                       << sharedMemory;
  if (attrs)
    for (NamedAttribute n : attrs)
      if (!isa<BoolAttr, IntegerAttr, FloatAttr, StringAttr>(n.getValue()))
        return emitError() << "attrs entry '" << n.getName().getValue()
                           << "' is not a bool, integer, float or string";
  return success();
}
