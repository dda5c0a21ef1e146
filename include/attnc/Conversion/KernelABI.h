//===- KernelABI.h - What a host needs to launch a kernel -------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The launch contract of one generated kernel as a plain C++ struct that
// kernel builders fill while they emit the kernel: its parameters in order,
// the grid and block rule, its dynamic shared memory and the rules on its
// size symbols. buildLaunchContract turns it into the typed
// #attnc.launch_contract the IR carries (docs/launch-contract.md);
// attnc-compile writes that attribute as the manifest with
// launchContractToJSON.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_KERNELABI_H
#define ATTNC_CONVERSION_KERNELABI_H

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace attnc {

/// One entry of a tensor's shape: a static extent or a size symbol.
using ABIDim = std::variant<int64_t, std::string>;

/// One factor of a grid extent or of a workspace's byte count: `value`
/// when `sym` is empty and `device` is None, ceil(sym / ceilDiv) when `sym`
/// is set, the device property when `device` is set. Brace-initialised as
/// {value, sym, ceilDiv}; the named constructors say which kind is meant.
struct GridFactor {
  enum class Device { None, NumSMs };
  int64_t value = 1;
  std::string sym;
  int64_t ceilDiv = 1;
  Device device = Device::None;
  /// A symbol added to ceil(sym / ceilDiv) (a ragged batch's query tiles:
  /// ceil(T / block_q) + B); empty for none.
  std::string plus = "";

  static GridFactor constant(int64_t v) { return {v, "", 1, Device::None}; }
  static GridFactor symbol(std::string s) {
    return {1, std::move(s), 1, Device::None};
  }
  static GridFactor ceilDivOf(std::string s, int64_t k) {
    return {1, std::move(s), k, Device::None};
  }
  static GridFactor ceilDivPlus(std::string s, int64_t k, std::string plus) {
    return {1, std::move(s), k, Device::None, std::move(plus)};
  }
  static GridFactor numSMs() { return {1, "", 1, Device::NumSMs}; }
};

/// One kernel parameter, in launch order (docs/launch-contract.md).
struct ABIParam {
  enum class Kind { Tensor, Size, Stride, Scalar, TensorMap, Workspace };
  Kind kind;
  std::string name;
  /// Element type for tensors; value type for sizes, strides and scalars
  /// (manifest names: bf16, f16, f32, f64, i1, i8, i32, i64).
  std::string dtype;
  /// Tensor only.
  std::vector<ABIDim> shape;
  std::string role; // "input" or "output"
  int64_t align = 16;
  /// Alignment every outer stride must have, bytes (0: none).
  int64_t rowAlign = 0;
  /// Stride and TensorMap: which tensor parameter; Stride: which dimension.
  std::string tensor;
  int64_t dim = 0;
  /// TensorMap only: the TMA box in elements per dimension (innermost
  /// last, one per dimension of `tensor`), swizzle bytes (0, 32, 64, 128)
  /// and the fill of out-of-bounds elements ("zero" or "nan").
  std::vector<int64_t> box;
  int64_t swizzle = 0;
  std::string oobFill = "zero";
  /// Workspace only: its minimum size in bytes as a product of factors,
  /// and whether the host zeroes it before each launch.
  std::vector<GridFactor> bytes;
  bool zeroInit = false;
  /// Workspace only, optional: its typed view (element type, row-major
  /// shape), which a tensormap may map.
  std::string viewDtype;
  std::vector<ABIDim> viewShape;

  /// Size parameter `sym` (i64).
  static ABIParam size(std::string sym) {
    ABIParam p;
    p.kind = Kind::Size;
    p.name = std::move(sym);
    p.dtype = "i64";
    return p;
  }
  /// Stride parameter "<tensor>.stride<dim>" (i64, in elements).
  static ABIParam stride(const std::string &tensor, int64_t dim) {
    ABIParam p;
    p.kind = Kind::Stride;
    p.name = tensor + ".stride" + std::to_string(dim);
    p.dtype = "i64";
    p.tensor = tensor;
    p.dim = dim;
    return p;
  }
};

/// True when one of `shapes` names size symbol `sym`.
inline bool mentionsSymbol(llvm::ArrayRef<std::vector<ABIDim>> shapes,
                           llvm::StringRef sym) {
  for (const std::vector<ABIDim> &shape : shapes)
    for (const ABIDim &dim : shape)
      if (std::holds_alternative<std::string>(dim) &&
          std::get<std::string>(dim) == sym)
        return true;
  return false;
}

/// A rule on size symbols the host checks before launching.
struct ABIConstraint {
  enum class Kind { Divisible, Equal, Min, Max, Ratio, AtMost };
  Kind kind;
  /// Divisible, Equal: lhs % rhs == 0 / lhs == rhs. Min, Max: lhs >= value
  /// / lhs <= value. Ratio, AtMost: lhs == / <= value * rhs.
  std::string lhs, rhs;
  int64_t value = 0;

  static ABIConstraint divisible(std::string l, std::string r) {
    return {Kind::Divisible, std::move(l), std::move(r), 0};
  }
  static ABIConstraint equal(std::string l, std::string r) {
    return {Kind::Equal, std::move(l), std::move(r), 0};
  }
  static ABIConstraint min(std::string sym, int64_t v) {
    return {Kind::Min, std::move(sym), "", v};
  }
  static ABIConstraint max(std::string sym, int64_t v) {
    return {Kind::Max, std::move(sym), "", v};
  }
  static ABIConstraint ratio(std::string l, std::string r, int64_t v) {
    return {Kind::Ratio, std::move(l), std::move(r), v};
  }
  static ABIConstraint atMost(std::string l, std::string r, int64_t v) {
    return {Kind::AtMost, std::move(l), std::move(r), v};
  }
};

/// How a host chooses size symbol `symbol`, which the caller picks
/// (#attnc.size_rule; the only kind is kv_splits, the split count of
/// split-KV attention): from the grid with the symbol set to 1, the K/V
/// tiles of a row (the product of `kvTiles`), `max` and the blocks one SM
/// runs at once (docs/abi.md).
struct ABISizeRule {
  std::string symbol;
  std::vector<GridFactor> kvTiles;
  int64_t max = 128;
  int64_t ctasPerSM = 1;
};

/// A size variant of a kernel (LaunchContractAttr's `variants`): another
/// kernel with the same caller-supplied parameters and the sizes it runs
/// for.
struct ABIVariant {
  std::string kernel;
  std::vector<ABIConstraint> when;
};

/// Everything a host needs to launch one kernel.
struct KernelABI {
  std::string name;
  std::string kind; // "attention" or "fusion"
  std::vector<ABIParam> params;
  std::vector<GridFactor> grid[3];
  int64_t block[3] = {1, 1, 1};
  int64_t dynamicSharedMemoryBytes = 0;
  std::vector<ABIConstraint> constraints;
  std::vector<ABISizeRule> sizeRules;
  /// What was compiled in (causal, scale, tile sizes, ...), as JSON scalars
  /// rendered to text: "true"/"false", integers and floats become typed
  /// attributes, anything else a string.
  std::map<std::string, std::string> attrs;
  /// The kernel a host runs instead on tensors this one refuses and that
  /// one accepts (LaunchContractAttr's `fallback`), or empty.
  std::string fallback;
  /// On a split-KV partial kernel, the kernel that computes its function's
  /// result in one launch when the split rule gives one split
  /// (LaunchContractAttr's `unsplit`), or empty.
  std::string unsplit;
  /// Size variants, in the order a host tries them.
  std::vector<ABIVariant> variants;
  /// The kernel waits for the grids before it (griddepcontrol.wait) before
  /// it touches global memory (LaunchContractAttr's `programmatic_launch`).
  bool programmaticLaunch = false;
};

/// The typed contract of `abi`. Returns null after reporting through
/// `emitError` (default: an error at an unknown location) when `abi`
/// breaks a rule of #attnc.launch_contract (an unknown dtype, a stride of a
/// missing tensor, a symbol no tensor binds, ...).
LaunchContractAttr buildLaunchContract(
    mlir::MLIRContext *ctx, const KernelABI &abi,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError = nullptr);

/// The contract's entry of the manifest (version 2) without the file
/// names: name, kind, block, grid, dynamic_shared_memory_bytes, params,
/// constraints, size_rules (when there are any), attrs.
llvm::json::Object launchContractToJSONObject(LaunchContractAttr contract);

/// launchContractToJSONObject as JSON text.
std::string launchContractToJSON(LaunchContractAttr contract);

} // namespace attnc

#endif // ATTNC_CONVERSION_KERNELABI_H
