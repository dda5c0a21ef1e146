//===- AttncAttrs.h - attnc attributes --------------------------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H
#define ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <optional>

// The enums of every attnc .td file are generated once, from AttncOps.td.
#include "attnc/Dialect/Attnc/IR/AttncEnums.h.inc"

#include "attnc/Dialect/Attnc/IR/AttncAttrInterfaces.h.inc"

namespace attnc {
class GridFactorAttr;
class ConstraintAttr;
} // namespace attnc

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h.inc"

namespace attnc {
/// What a TileStrategy's kernels are made of, for the passes that ask
/// (one list per question, not one per caller). Warpgroup MMAs: wgmma and
/// every strategy built on it.
inline bool usesWarpgroups(TileStrategy s) {
  return s != TileStrategy::mma_sync && s != TileStrategy::mma_sync_unaligned;
}
/// A producer warpgroup loading for consumer warpgroups.
inline bool isWarpSpecialised(TileStrategy s) {
  return s == TileStrategy::wgmma_ws || s == TileStrategy::wgmma_ws_persistent;
}
/// A grid of CTAs that each walk many work tiles (forward or backward).
inline bool isPersistent(TileStrategy s) {
  return s == TileStrategy::wgmma_ws_persistent ||
         s == TileStrategy::wgmma_persistent;
}

/// The largest l2_group_mib of a #attnc.flash_config (1 TiB).
inline constexpr int64_t kMaxL2GroupMib = int64_t(1) << 20;

/// The name under which the flash form's `scf.forall` carries its
/// FlashConfigAttr.
inline constexpr llvm::StringLiteral kFlashConfigAttrName =
    "attnc.flash_config";

/// The name under which the partial form of a split flash form
/// (--attnc-split-kv) names, as a FlatSymbolRefAttr, the function that
/// computes the same result in one kernel (its unsplit twin): the partial
/// kernel's launch contract names that kernel as `unsplit`.
inline constexpr llvm::StringLiteral kUnsplitAttrName = "attnc.unsplit";

/// The name under which a kernel's gpu.module carries its
/// LaunchContractAttr.
inline constexpr llvm::StringLiteral kLaunchContractAttrName =
    "attnc.launch_contract";

/// The function argument and result attribute that names a kernel
/// parameter after the source program (`{attnc.name = "seed"}`).
inline constexpr llvm::StringLiteral kNameAttrName = "attnc.name";

/// The launch contract on `op` (a kernel's gpu.module), or null.
LaunchContractAttr getLaunchContract(mlir::Operation *op);

/// True for a name a kernel may have: a C identifier
/// ([A-Za-z_][A-Za-z0-9_]*) of at most kMaxKernelNameLength characters. The
/// name becomes the PTX entry, the file names attnc-compile writes and the
/// key a host looks the kernel up by, so nothing else may reach them (a
/// '../' would write outside the output directory).
bool isKernelName(llvm::StringRef name);
constexpr size_t kMaxKernelNameLength = 200;

/// The manifest's name of a contract dtype (bf16, f16, f32, f64, i1, i8,
/// i32, i64), or nullopt for any other type.
std::optional<llvm::StringRef> contractDTypeName(mlir::Type type);

/// The type of a manifest dtype name, or null.
mlir::Type parseContractDType(mlir::MLIRContext *ctx, llvm::StringRef name);
} // namespace attnc

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_H
