//===- AttncAttrInterfaces.td - attnc attribute interfaces -*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Interfaces shared by attnc attributes. Its own TableGen target: the
// interface generators only emit what the main file defines.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCATTRINTERFACES_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCATTRINTERFACES_TD

include "mlir/IR/Interfaces.td"

def Attnc_KernelParamAttrInterface
    : AttrInterface<"KernelParamAttrInterface"> {
  let cppNamespace = "::attnc";
  let description = [{
    One kernel parameter of a launch contract. Every kind has a name, unique
    within its contract, by which a host passes or derives its value.
  }];
  let methods = [
    InterfaceMethod<"The parameter's name.", "::llvm::StringRef", "getName">,
    InterfaceMethod<"The manifest's `kind` of the parameter (`tensor`, "
                    "`size`, ...), also its keyword in a contract's "
                    "parameter list.", "::llvm::StringRef", "getKindName",
                    (ins), [{}], [{ return $_attr.getMnemonic().drop_back(
                                        ::llvm::StringRef("_param").size()); }]>,
  ];
}

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCATTRINTERFACES_TD
