//===- ContractAsm.h - Syntax helpers of the contract attributes -*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pieces of #attnc.launch_contract syntax that its parts share:
// symbols (bare when they lex as one keyword, quoted otherwise) and lists
// of bare attributes (factors: `[B, ceil_div(Sq, 128)]`). Defined in
// AttncContractAttrs.cpp, used there, by the rules on size symbols
// (ContractRules.cpp) and by the contract's own syntax
// (LaunchContractSyntax.cpp). Internal to the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTNC_IR_CONTRACTASM_H
#define ATTNC_LIB_DIALECT_ATTNC_IR_CONTRACTASM_H

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"

#include "mlir/IR/OpImplementation.h"

namespace attnc::contract_asm {

/// `s` as it reads back: bare when the lexer reads it as one keyword,
/// else a string literal.
void printSymbol(mlir::AsmPrinter &printer, llvm::StringRef s);

/// `[x, x, ...]`: attributes of one kind in their bare form
/// (`AttrT::parseBody`), appended to `out`.
template <typename AttrT>
mlir::ParseResult parseBodyList(mlir::AsmParser &parser,
                                llvm::SmallVectorImpl<AttrT> &out) {
  return parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Square,
                                        [&]() -> mlir::ParseResult {
                                          AttrT a = AttrT::parseBody(parser);
                                          if (!a)
                                            return mlir::failure();
                                          out.push_back(a);
                                          return mlir::success();
                                        });
}

/// `[f, f, ...]`: factors in their bare form (GridFactorAttr::parseBody).
inline mlir::ParseResult
parseFactorList(mlir::AsmParser &parser,
                llvm::SmallVectorImpl<GridFactorAttr> &factors) {
  return parseBodyList(parser, factors);
}
void printFactorList(mlir::AsmPrinter &printer,
                     llvm::ArrayRef<GridFactorAttr> factors);

} // namespace attnc::contract_asm

#endif // ATTNC_LIB_DIALECT_ATTNC_IR_CONTRACTASM_H
