//===- ContractAsm.h - Syntax helpers of the contract attributes -*- C++
//-*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The pieces of #attnc.launch_contract syntax that its parts share:
// symbols (bare when they lex as one keyword, quoted otherwise) and factor
// lists (`[B, ceil_div(Sq, 128)]`). Defined in AttncContractAttrs.cpp, used
// there, by the rules on size symbols (ContractRules.cpp) and by the
// contract's own syntax (LaunchContractSyntax.cpp). Internal to the dialect
// library.
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

/// `[f, f, ...]`: factors in their bare form (GridFactorAttr::parseBody).
mlir::ParseResult
parseFactorList(mlir::AsmParser &parser,
                llvm::SmallVectorImpl<GridFactorAttr> &factors);
void printFactorList(mlir::AsmPrinter &printer,
                     llvm::ArrayRef<GridFactorAttr> factors);

} // namespace attnc::contract_asm

#endif // ATTNC_LIB_DIALECT_ATTNC_IR_CONTRACTASM_H
