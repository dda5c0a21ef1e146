//===- AttncAttrs.cpp - attnc attributes ----------------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Registration, verifiers and the dialect's check of the discardable
// attributes it names: `attnc.flash_config` on the flash form's loop,
// `attnc.launch_contract` on a kernel's gpu.module and `attnc.name` on
// function arguments and results. The launch contract's own syntax and
// verifier live in AttncContractAttrs.cpp.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "attnc/Dialect/Attnc/IR/AttncDialect.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;

// Custom directives of the generated parsers (AttncContractAttrs.cpp).
namespace attnc {
ParseResult parseContractShape(AsmParser &parser,
                               SmallVectorImpl<Attribute> &shape);
void printContractShape(AsmPrinter &printer, ArrayRef<Attribute> shape);
} // namespace attnc

/// The optional end of a #attnc.flash_config: `, key_warps = N` (omitted
/// when 1) then `, fallback = <...>`, each after a comma that alone cannot
/// tell them apart (hence no generated optional groups).
static ParseResult parseFlashConfigTail(AsmParser &parser, int64_t &keyWarps,
                                        bool &interleaveKV, bool &overlapPV,
                                        bool &sharedP, bool &mmaRowSums,
                                        int64_t &l2GroupMib,
                                        FlashConfigAttr &fallback) {
  keyWarps = 1;
  interleaveKV = false;
  overlapPV = false;
  sharedP = false;
  mmaRowSums = false;
  l2GroupMib = 0;
  // Each optional entry at most once, in this order.
  int next = 0;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return failure();
    if (key == "key_warps" && next <= 0) {
      if (parser.parseEqual() || parser.parseInteger(keyWarps))
        return failure();
      next = 1;
    } else if (key == "interleave_kv" && next <= 1) {
      interleaveKV = true;
      next = 2;
    } else if (key == "overlap_pv" && next <= 2) {
      overlapPV = true;
      next = 3;
    } else if (key == "shared_p" && next <= 3) {
      sharedP = true;
      next = 4;
    } else if (key == "mma_row_sums" && next <= 4) {
      mmaRowSums = true;
      next = 5;
    } else if (key == "l2_group_mib" && next <= 5) {
      if (parser.parseEqual() || parser.parseInteger(l2GroupMib))
        return failure();
      next = 6;
    } else if (key == "fallback" && next <= 6) {
      if (parser.parseEqual() ||
          parser.parseCustomAttributeWithFallback(fallback))
        return failure();
      next = 7;
    } else {
      return parser.emitError(at)
             << "expected 'key_warps', 'interleave_kv', 'overlap_pv', "
                "'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' "
                "(each at most once, in that order), got '"
             << key << "'";
    }
  }
  return success();
}

static void printFlashConfigTail(AsmPrinter &printer, int64_t keyWarps,
                                 bool interleaveKV, bool overlapPV,
                                 bool sharedP, bool mmaRowSums,
                                 int64_t l2GroupMib, FlashConfigAttr fallback) {
  if (keyWarps != 1)
    printer << ", key_warps = " << keyWarps;
  if (interleaveKV)
    printer << ", interleave_kv";
  if (overlapPV)
    printer << ", overlap_pv";
  if (sharedP)
    printer << ", shared_p";
  if (mmaRowSums)
    printer << ", mma_row_sums";
  if (l2GroupMib != 0)
    printer << ", l2_group_mib = " << l2GroupMib;
  if (fallback) {
    printer << ", fallback = ";
    printer.printStrippedAttrOrType(fallback);
  }
}

#include "attnc/Dialect/Attnc/IR/AttncAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attnc/IR/AttncAttrs.cpp.inc"

void AttncDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attnc/Dialect/Attnc/IR/AttncAttrs.cpp.inc"
      >();
}

LogicalResult FlashConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockQ,
    int64_t blockKV, int64_t warps, int64_t stages, TileStrategy strategy,
    int64_t keyWarps, bool interleaveKV, bool overlapPV, bool sharedP,
    bool mmaRowSums, int64_t l2GroupMib, FlashConfigAttr fallback) {
  if (blockQ <= 0 || blockKV <= 0)
    return emitError() << "block_q and block_kv must be positive, got "
                       << blockQ << " and " << blockKV;
  if (warps <= 0 || (keyWarps == 1 && blockQ % warps != 0))
    return emitError() << "warps (" << warps
                       << ") must be positive and divide block_q (" << blockQ
                       << ")";
  if (keyWarps <= 0 || warps % keyWarps != 0 || blockKV % keyWarps != 0)
    return emitError() << "key_warps (" << keyWarps
                       << ") must be positive and divide warps (" << warps
                       << ") and block_kv (" << blockKV << ")";
  // The warps that share a row split its keys: warps / key_warps own rows.
  if (blockQ % (warps / keyWarps) != 0)
    return emitError() << "warps / key_warps (" << warps / keyWarps
                       << ") must divide block_q (" << blockQ << ")";
  if (stages < 1)
    return emitError() << "stages must be at least 1, got " << stages;
  if (interleaveKV && (strategy != TileStrategy::mma_sync &&
                       strategy != TileStrategy::mma_sync_unaligned))
    return emitError() << "interleave_kv needs an mma_sync strategy (its "
                          "cp.async pipeline), got "
                       << stringifyTileStrategy(strategy);
  // One buffer computed while the others load.
  if (interleaveKV && stages < 2)
    return emitError() << "interleave_kv needs stages >= 2 (a ring of "
                          "single K/V tile buffers, one computed while the "
                          "others load), got "
                       << stages;
  if (overlapPV && !usesWarpgroups(strategy))
    return emitError() << "overlap_pv needs a wgmma strategy (asynchronous "
                          "warpgroup MMAs), got "
                       << stringifyTileStrategy(strategy);
  // Without a producer's barriers, a step's V stays in its stage one step
  // longer while the next tile loads.
  if (overlapPV && strategy == TileStrategy::wgmma && stages < 3)
    return emitError() << "overlap_pv with strategy wgmma needs stages >= 3 "
                          "(a step's V stays in use during the next step), got "
                       << stages;
  // P's buffers take the place of the registers an overlapped P V reads;
  // the producer's ring is what lets a step's stores run ahead of the
  // previous P V's wait.
  if (sharedP && !overlapPV)
    return emitError() << "shared_p needs overlap_pv (P goes through shared "
                          "memory so that a step's softmax runs before the "
                          "previous step's P V is waited for)";
  if (sharedP && !isWarpSpecialised(strategy))
    return emitError() << "shared_p needs strategy wgmma_ws or "
                          "wgmma_ws_persistent, got "
                       << stringifyTileStrategy(strategy);
  // The sums are taken from the registers a warpgroup P V reads.
  if (mmaRowSums && !usesWarpgroups(strategy))
    return emitError() << "mma_row_sums needs a wgmma strategy (the sums are "
                          "taken from the packed probabilities a warpgroup "
                          "P V reads from registers), got "
                       << stringifyTileStrategy(strategy);
  if (mmaRowSums && sharedP)
    return emitError() << "mma_row_sums needs P in registers (the mma.sync "
                          "operands), not shared_p";
  // (A budget of 1 TiB exceeds every L2, and its bytes fit an int64.)
  if (l2GroupMib < 0 || l2GroupMib > kMaxL2GroupMib)
    return emitError() << "l2_group_mib must be in [0, " << kMaxL2GroupMib
                       << "] (MiB; 0: no groups), got " << l2GroupMib;
  if (l2GroupMib > 0 && strategy == TileStrategy::wgmma_persistent)
    return emitError() << "l2_group_mib orders a forward grid's heads; "
                          "wgmma_persistent is a backward strategy";
  if (!fallback)
    return success();
  if (fallback.getL2GroupMib() != 0)
    return emitError() << "a fallback lowers its config's grid and has no "
                          "l2_group_mib of its own";
  // The fallback lowers the same loops, whose steps are the tiles.
  if (fallback.getBlockQ() != blockQ || fallback.getBlockKV() != blockKV)
    return emitError() << "fallback tiles (block_q = " << fallback.getBlockQ()
                       << ", block_kv = " << fallback.getBlockKV()
                       << ") must be the config's (" << blockQ << ", "
                       << blockKV << "): both kernels lower the same loops";
  if (fallback.getFallback())
    return emitError() << "a fallback has no fallback of its own";
  if (fallback.getStrategy() == strategy)
    return emitError() << "fallback strategy " << stringifyEnum(strategy)
                       << " is the config's own";
  return success();
}

static LogicalResult verifyLaunchContractOwner(Operation *op, Attribute a);

LogicalResult AttncDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kFlashConfigAttrName) {
    if (!isa<FlashConfigAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kFlashConfigAttrName
             << "' must be a #attnc.flash_config, got " << attr.getValue();
    if (!isa<scf::ForallOp>(op))
      return op->emitError() << "'" << kFlashConfigAttrName
                             << "' belongs on the scf.forall of a flash form";
    return success();
  }
  if (attr.getName() == kUnsplitAttrName) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    if (!ref)
      return op->emitError() << "'" << kUnsplitAttrName
                             << "' must be a flat symbol reference to a "
                                "function, got "
                             << attr.getValue();
    if (!isa<scf::ForallOp>(op) || !op->hasAttr(kFlashConfigAttrName))
      return op->emitError() << "'" << kUnsplitAttrName
                             << "' belongs on the scf.forall of a flash form";
    return success();
  }
  if (attr.getName() == kLaunchContractAttrName)
    return verifyLaunchContractOwner(op, attr.getValue());
  return success();
}

/// A contract describes the kernel of its gpu.module: one parameter per
/// argument of that kernel, in order (the no-S x S analysis maps arguments
/// to parameters by position).
static LogicalResult verifyLaunchContractOwner(Operation *op, Attribute a) {
  auto contract = dyn_cast<LaunchContractAttr>(a);
  if (!contract)
    return op->emitError() << "'" << kLaunchContractAttrName
                           << "' must be a #attnc.launch_contract, got " << a;
  if (!isa<gpu::GPUModuleOp>(op))
    return op->emitError() << "'" << kLaunchContractAttrName
                           << "' belongs on a kernel's gpu.module";
  auto kernel = dyn_cast_or_null<FunctionOpInterface>(
      SymbolTable::lookupSymbolIn(op, contract.getKernel()));
  if (!kernel)
    return op->emitError() << "launch contract names kernel @"
                           << contract.getKernel()
                           << ", which is not a function of this gpu.module";
  if (kernel.getNumArguments() != contract.getParams().size())
    return op->emitError() << "launch contract has "
                           << contract.getParams().size()
                           << " parameters but kernel @" << contract.getKernel()
                           << " takes " << kernel.getNumArguments()
                           << " arguments";
  return success();
}

/// `attnc.name` is the only attnc argument and result attribute: the name a
/// kernel parameter takes from the source program. Names are unique across
/// a function's arguments and results, since both become parameters of one
/// manifest entry; each clash is reported once, on its later occurrence.
static LogicalResult verifyName(Operation *op, NamedAttribute attr,
                                bool isResult, unsigned index) {
  if (attr.getName() != kNameAttrName)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is not an attnc argument or result "
                              "attribute (only '"
                           << kNameAttrName << "' is)";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << kNameAttrName
                           << "' must be a non-empty string, got "
                           << attr.getValue();
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return success();
  auto clash = [&](bool otherIsResult, unsigned other) {
    auto n = otherIsResult
                 ? fn.getResultAttrOfType<StringAttr>(other, kNameAttrName)
                 : fn.getArgAttrOfType<StringAttr>(other, kNameAttrName);
    return n && n == name;
  };
  auto where = [](bool r, unsigned i) {
    return (r ? "result #" : "argument #") + std::to_string(i);
  };
  for (unsigned i = 0, e = isResult ? fn.getNumArguments() : index; i < e; ++i)
    if (clash(false, i))
      return op->emitError()
             << "'" << kNameAttrName << "' of " << where(isResult, index)
             << " repeats '" << name.getValue() << "', the name of "
             << where(false, i);
  for (unsigned i = 0; isResult && i < index; ++i)
    if (clash(true, i))
      return op->emitError()
             << "'" << kNameAttrName << "' of " << where(isResult, index)
             << " repeats '" << name.getValue() << "', the name of "
             << where(true, i);
  return success();
}

LogicalResult AttncDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  return verifyName(op, attr, /*isResult=*/false, argIndex);
}

LogicalResult AttncDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  return verifyName(op, attr, /*isResult=*/true, resultIndex);
}
