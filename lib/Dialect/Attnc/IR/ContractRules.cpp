//===- ContractRules.cpp - rules on the size symbols of a contract --------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Syntax and verifiers of the rules a launch contract states on its size
// symbols: #attnc.constraint, which a host checks before every launch,
// #attnc.size_rule, which a host evaluates to choose a symbol that the
// caller picks (the split count of split-KV attention), and
// #attnc.kernel_variant, the sizes another kernel runs for instead. Inside a
// contract both are written without their `#attnc.` prefix; the contract's
// verifier (AttncContractAttrs.cpp) checks that their symbols are bound.
//
//===----------------------------------------------------------------------===//

#include "ContractAsm.h"

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncDialect.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::contract_asm;

//===----------------------------------------------------------------------===//
// ConstraintAttr
//===----------------------------------------------------------------------===//

/// min and max compare a symbol with a value; the others two symbols.
static bool isBound(ConstraintKind kind) {
  return kind == ConstraintKind::min || kind == ConstraintKind::max;
}
/// ratio and at_most compare a symbol with a factor (>= 1) of another.
static bool hasFactor(ConstraintKind kind) {
  return kind == ConstraintKind::ratio || kind == ConstraintKind::at_most;
}

LogicalResult
ConstraintAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ConstraintKind kind, StringRef lhs, StringRef rhs,
                       int64_t value) {
  if (lhs.empty() || (!isBound(kind) && rhs.empty()))
    return emitError() << "constraint symbols must not be empty";
  if (hasFactor(kind) && value < 1)
    return emitError() << stringifyConstraintKind(kind) << " constraint of '"
                       << lhs << "' and '" << rhs << "' has factor " << value
                       << "; it must be at least 1";
  return success();
}

void ConstraintAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyConstraintKind(getKind()) << '(';
  printSymbol(printer, getLhs());
  printer << ", ";
  if (isBound(getKind()))
    printer << getValue();
  else
    printSymbol(printer, getRhs());
  if (hasFactor(getKind()))
    printer << ", " << getValue();
  printer << ')';
}

ConstraintAttr ConstraintAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string word, lhs, rhs;
  int64_t value = 0;
  if (parser.parseKeywordOrString(&word))
    return {};
  std::optional<ConstraintKind> kind = symbolizeConstraintKind(word);
  if (!kind) {
    parser.emitError(loc)
        << "unknown constraint kind '" << word
        << "' (known: divisible, equal, min, max, ratio, at_most)";
    return {};
  }
  if (parser.parseLParen() || parser.parseKeywordOrString(&lhs) ||
      parser.parseComma())
    return {};
  if (isBound(*kind) ? parser.parseInteger(value)
                     : parser.parseKeywordOrString(&rhs))
    return {};
  if (hasFactor(*kind) && (parser.parseComma() || parser.parseInteger(value)))
    return {};
  if (parser.parseRParen())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, StringRef(lhs), StringRef(rhs), value);
}

Attribute ConstraintAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  ConstraintAttr c = parseBody(parser);
  if (!c || parser.parseGreater())
    return {};
  return c;
}

void ConstraintAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// SizeRuleAttr
//===----------------------------------------------------------------------===//

/// attnc.kv_split_count's largest split count: partials stay linear in
/// their rows.
static constexpr int64_t kMaxKVSplits = 128;

LogicalResult SizeRuleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   SizeRuleKind, StringRef symbol,
                                   ArrayRef<GridFactorAttr> kvTiles,
                                   int64_t maxValue, int64_t ctasPerSM) {
  if (symbol.empty())
    return emitError() << "size rule symbol must not be empty";
  if (maxValue < 1 || maxValue > kMaxKVSplits)
    return emitError() << "size rule of '" << symbol
                       << "' has max = " << maxValue
                       << "; it must be between 1 and " << kMaxKVSplits;
  if (ctasPerSM < 1)
    return emitError() << "size rule of '" << symbol
                       << "' has per_sm = " << ctasPerSM
                       << "; it must be at least 1";
  if (kvTiles.empty())
    return emitError() << "size rule of '" << symbol
                       << "' has no kv_tiles factor";
  for (GridFactorAttr f : kvTiles)
    if (f.getSymbol() == symbol || f.getPlus() == symbol)
      return emitError() << "size rule of '" << symbol
                         << "' counts its K/V tiles with its own symbol";
  return success();
}

void SizeRuleAttr::printBody(AsmPrinter &printer) const {
  printer << stringifySizeRuleKind(getKind()) << '(';
  printSymbol(printer, getSymbol());
  printer << ", kv_tiles = ";
  printFactorList(printer, getKvTiles());
  printer << ", max = " << getMaxValue() << ", per_sm = " << getCtasPerSM()
          << ')';
}

SizeRuleAttr SizeRuleAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string word, symbol;
  if (parser.parseKeywordOrString(&word))
    return {};
  std::optional<SizeRuleKind> kind = symbolizeSizeRuleKind(word);
  if (!kind) {
    parser.emitError(loc) << "unknown size rule kind '" << word
                          << "' (known: kv_splits)";
    return {};
  }
  SmallVector<GridFactorAttr> kvTiles;
  int64_t maxValue = 0, ctasPerSM = 0;
  if (parser.parseLParen() || parser.parseKeywordOrString(&symbol) ||
      parser.parseComma() || parser.parseKeyword("kv_tiles") ||
      parser.parseEqual() || parseFactorList(parser, kvTiles) ||
      parser.parseComma() || parser.parseKeyword("max") ||
      parser.parseEqual() || parser.parseInteger(maxValue) ||
      parser.parseComma() || parser.parseKeyword("per_sm") ||
      parser.parseEqual() || parser.parseInteger(ctasPerSM) ||
      parser.parseRParen())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, StringRef(symbol), ArrayRef<GridFactorAttr>(kvTiles),
                    maxValue, ctasPerSM);
}

Attribute SizeRuleAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SizeRuleAttr r = parseBody(parser);
  if (!r || parser.parseGreater())
    return {};
  return r;
}

void SizeRuleAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// KernelVariantAttr
//===----------------------------------------------------------------------===//

LogicalResult
KernelVariantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          StringRef kernel, ArrayRef<ConstraintAttr> when) {
  if (!isKernelName(kernel))
    return emitError() << "kernel variant names kernel '" << kernel
                       << "'; a kernel name is a C identifier of at most "
                       << kMaxKernelNameLength << " characters";
  if (when.empty())
    return emitError() << "kernel variant '" << kernel
                       << "' has no condition; a variant that always runs "
                          "would be the kernel";
  return success();
}

void KernelVariantAttr::printBody(AsmPrinter &printer) const {
  printer.printSymbolName(getKernel());
  printer << " when [";
  llvm::interleaveComma(getWhen(), printer,
                        [&](ConstraintAttr c) { c.printBody(printer); });
  printer << ']';
}

KernelVariantAttr KernelVariantAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringAttr kernel;
  SmallVector<ConstraintAttr> when;
  if (parser.parseSymbolName(kernel) || parser.parseKeyword("when") ||
      parseBodyList(parser, when))
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    kernel.getValue(), ArrayRef<ConstraintAttr>(when));
}

Attribute KernelVariantAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  KernelVariantAttr v = parseBody(parser);
  if (!v || parser.parseGreater())
    return {};
  return v;
}

void KernelVariantAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}
