//===- LaunchContractSyntax.cpp - #attnc.launch_contract syntax ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The custom syntax of #attnc.launch_contract: its fixed head (kernel,
// kind, params, grid, block, shared_memory), then the optional parts in any
// order (constraints, size_rules, attrs, fallback, unsplit, variants,
// programmatic_launch), each printed only when set. Parameters, factors,
// constraints and size rules appear without their `#attnc.` prefix; their
// own syntax and the contract's verifier are in AttncContractAttrs.cpp and
// ContractRules.cpp.
//
//===----------------------------------------------------------------------===//

#include "ContractAsm.h"

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::contract_asm;

/// One parameter of a contract's list: `tensor<...>` and the other kinds,
/// or any attribute (which the verifier then refuses).
static ParseResult parseParam(AsmParser &parser,
                              SmallVectorImpl<Attribute> &params) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kind;
  if (failed(parser.parseOptionalKeyword(&kind))) {
    Attribute any;
    if (parser.parseAttribute(any))
      return failure();
    params.push_back(any);
    return success();
  }
  using ParseFn = Attribute (*)(AsmParser &, Type);
  ParseFn parse = llvm::StringSwitch<ParseFn>(kind)
                      .Case("tensor", &TensorParamAttr::parse)
                      .Case("size", &SizeParamAttr::parse)
                      .Case("stride", &StrideParamAttr::parse)
                      .Case("scalar", &ScalarParamAttr::parse)
                      .Case("tensormap", &TensorMapParamAttr::parse)
                      .Case("workspace", &WorkspaceParamAttr::parse)
                      .Default(nullptr);
  if (!parse)
    return parser.emitError(loc)
           << "unknown kernel parameter kind '" << kind
           << "' (known: tensor, size, stride, scalar, tensormap, workspace)";
  Attribute p = parse(parser, Type());
  if (!p)
    return failure();
  params.push_back(p);
  return success();
}

static void printParam(AsmPrinter &printer, Attribute a) {
  auto p = dyn_cast<KernelParamAttrInterface>(a);
  if (!p) {
    printer.printAttribute(a);
    return;
  }
  printer << p.getKindName();
  llvm::TypeSwitch<Attribute>(a)
      .Case<TensorParamAttr, SizeParamAttr, StrideParamAttr, ScalarParamAttr,
            TensorMapParamAttr, WorkspaceParamAttr>(
          [&](auto concrete) { concrete.print(printer); });
}

Attribute LaunchContractAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringAttr kernel;
  std::string kind;
  SmallVector<Attribute> params;
  SmallVector<SmallVector<GridFactorAttr>> grid;
  SmallVector<int64_t> block;
  int64_t sharedMemory = 0;
  SmallVector<ConstraintAttr> constraints;
  SmallVector<SizeRuleAttr> sizeRules;
  SmallVector<KernelVariantAttr> variants;
  DictionaryAttr attrs = DictionaryAttr::get(parser.getContext());
  StringAttr fallback, unsplit;
  bool programmaticLaunch = false;
  if (parser.parseLess() || parser.parseKeyword("kernel") ||
      parser.parseEqual() || parser.parseSymbolName(kernel) ||
      parser.parseComma() || parser.parseKeyword("kind") ||
      parser.parseEqual() || parser.parseString(&kind) || parser.parseComma() ||
      parser.parseKeyword("params") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parseParam(parser, params);
      }))
    return {};
  SMLoc gridLoc;
  if (parser.parseComma() || parser.parseKeyword("grid") ||
      parser.parseEqual() || parser.getCurrentLocation(&gridLoc) ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parseFactorList(parser, grid.emplace_back());
      }))
    return {};
  if (grid.size() != 3) {
    parser.emitError(gridLoc)
        << "grid must have three dimensions, got " << grid.size();
    return {};
  }
  if (parser.parseComma() || parser.parseKeyword("block") ||
      parser.parseEqual() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square,
          [&] { return parser.parseInteger(block.emplace_back()); }) ||
      parser.parseComma() || parser.parseKeyword("shared_memory") ||
      parser.parseEqual() || parser.parseInteger(sharedMemory))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("constraints"))) {
      if (parser.parseEqual() || parseBodyList(parser, constraints))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("size_rules"))) {
      if (parser.parseEqual() || parseBodyList(parser, sizeRules))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("fallback"))) {
      if (parser.parseEqual() || parser.parseSymbolName(fallback))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("unsplit"))) {
      if (parser.parseEqual() || parser.parseSymbolName(unsplit))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("variants"))) {
      if (parser.parseEqual() || parseBodyList(parser, variants))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("programmatic_launch"))) {
      programmaticLaunch = true;
      continue;
    }
    if (parser.parseKeyword("attrs") || parser.parseEqual() ||
        parser.parseAttribute(attrs))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(),
      kernel.getValue(), StringRef(kind), ArrayRef<Attribute>(params),
      ArrayRef<GridFactorAttr>(grid[0]), ArrayRef<GridFactorAttr>(grid[1]),
      ArrayRef<GridFactorAttr>(grid[2]), ArrayRef<int64_t>(block), sharedMemory,
      ArrayRef<ConstraintAttr>(constraints), ArrayRef<SizeRuleAttr>(sizeRules),
      attrs, fallback ? fallback.getValue() : StringRef(),
      unsplit ? unsplit.getValue() : StringRef(),
      ArrayRef<KernelVariantAttr>(variants), programmaticLaunch);
}

void LaunchContractAttr::print(AsmPrinter &printer) const {
  printer << "<kernel = ";
  printer.printSymbolName(getKernel());
  printer << ", kind = ";
  printer.printString(getKind());
  printer << ", params = [";
  llvm::interleaveComma(getParams(), printer,
                        [&](Attribute a) { printParam(printer, a); });
  printer << "], grid = [";
  llvm::interleaveComma(llvm::seq(0u, 3u), printer, [&](unsigned d) {
    printFactorList(printer, getGrid(d));
  });
  printer << "], block = [";
  llvm::interleaveComma(getBlock(), printer);
  printer << "], shared_memory = " << getSharedMemory();
  if (!getConstraints().empty()) {
    printer << ", constraints = [";
    llvm::interleaveComma(getConstraints(), printer,
                          [&](ConstraintAttr c) { c.printBody(printer); });
    printer << ']';
  }
  if (!getSizeRules().empty()) {
    printer << ", size_rules = [";
    llvm::interleaveComma(getSizeRules(), printer,
                          [&](SizeRuleAttr r) { r.printBody(printer); });
    printer << ']';
  }
  if (getAttrs() && !getAttrs().empty()) {
    printer << ", attrs = ";
    printer.printAttribute(getAttrs());
  }
  if (!getFallback().empty()) {
    printer << ", fallback = ";
    printer.printSymbolName(getFallback());
  }
  if (!getUnsplit().empty()) {
    printer << ", unsplit = ";
    printer.printSymbolName(getUnsplit());
  }
  if (!getVariants().empty()) {
    printer << ", variants = [";
    llvm::interleaveComma(getVariants(), printer,
                          [&](KernelVariantAttr v) { v.printBody(printer); });
    printer << ']';
  }
  if (getProgrammaticLaunch())
    printer << ", programmatic_launch";
  printer << '>';
}
