//===- KernelBuffers.cpp - the no-S x S rule on GPU kernels ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Kernels take bare pointers, so their buffers' sizes are only known through
// the launch contract the host allocates by (docs/abi.md). This file checks
// the kernel body against that contract: what the body stores to global
// memory must be one of the contract's outputs, and the contract's outputs
// must not be score-sized. Together with the graph-level check
// (GlobalBuffers.cpp) this covers kernel arguments, global allocations and
// global stores.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/KernelBuffers.h"
#include "attnc/Analysis/GlobalBuffers.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace attnc;
namespace json = llvm::json;

/// The kernel parameter a global memref is built from: through views, the
/// descriptor cast and the insertvalue of its aligned pointer (position 1),
/// as KernelUtils.cpp's wrapGlobalPointer builds it. Null when the memref
/// comes from anywhere else.
static BlockArgument pointerParameter(Value memref) {
  Value v = memref;
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  auto cast = v.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1)
    return {};
  for (Value d = cast.getOperand(0);;) {
    auto insert = d.getDefiningOp<LLVM::InsertValueOp>();
    if (!insert)
      return {};
    if (insert.getPosition() == ArrayRef<int64_t>{1})
      return dyn_cast<BlockArgument>(insert.getValue());
    d = insert.getContainer();
  }
}

namespace {
/// A tensor parameter of the contract: role and symbolic element count
/// (the multiset of its size symbols; static extents do not grow).
struct ContractTensor {
  std::string name;
  bool output = false;
  llvm::StringMap<int> symbols;
  /// The symbols in shape order, for messages.
  std::vector<std::string> order;
};
} // namespace

/// True when `a`'s symbols are a sub-multiset of `b`'s: a grows no faster.
static bool boundedBy(const ContractTensor &a, const ContractTensor &b) {
  for (const auto &[sym, n] : a.symbols) {
    auto it = b.symbols.find(sym);
    if (it == b.symbols.end() || it->second < n)
      return false;
  }
  return true;
}

static std::string render(const ContractTensor &t) {
  return t.order.empty() ? "a static number of" : llvm::join(t.order, " x ");
}

/// Tensor parameters by index, from the gpu.module's `attnc.abi`.
static FailureOr<DenseMap<unsigned, ContractTensor>>
readContract(gpu::GPUModuleOp module) {
  auto text = module->getAttrOfType<StringAttr>("attnc.abi");
  if (!text)
    return module.emitError("kernel module has no attnc.abi launch contract: "
                            "the sizes of its pointer parameters are unknown");
  llvm::Expected<json::Value> abi = json::parse(text.getValue());
  const json::Array *params =
      abi ? abi->getAsObject()->getArray("params") : nullptr;
  if (!abi || !params) {
    if (!abi)
      llvm::consumeError(abi.takeError());
    return module.emitError("attnc.abi is not a launch contract "
                            "(docs/abi.md)");
  }
  DenseMap<unsigned, ContractTensor> tensors;
  for (auto [i, p] : llvm::enumerate(*params)) {
    const json::Object *o = p.getAsObject();
    if (!o || o->getString("kind") != "tensor")
      continue;
    ContractTensor t;
    t.name = o->getString("name").value_or("?").str();
    t.output = o->getString("role") == "output";
    if (const json::Array *shape = o->getArray("shape"))
      for (const json::Value &d : *shape)
        if (std::optional<llvm::StringRef> sym = d.getAsString()) {
          ++t.symbols[*sym];
          t.order.push_back(sym->str());
        }
    tensors[i] = std::move(t);
  }
  return tensors;
}

static LogicalResult checkKernel(gpu::GPUFuncOp kernel,
                                 const DenseMap<unsigned, ContractTensor> &c) {
  bool ok = true;
  // Outputs no larger than some input. A kernel without inputs (a fill)
  // has nothing to be compared with and is not judged here.
  bool hasInputs =
      llvm::any_of(c, [](const auto &t) { return !t.second.output; });
  for (const auto &[index, out] : c) {
    if (!out.output || !hasInputs)
      continue;
    bool bounded = llvm::any_of(c, [&](const auto &in) {
      return !in.second.output && boundedBy(out, in.second);
    });
    if (!bounded) {
      kernel.emitError() << "kernel @" << kernel.getName() << " writes '"
                         << out.name << "' of " << render(out)
                         << " elements, which grows faster than every input "
                            "of the kernel: a score matrix in global memory";
      ok = false;
    }
  }
  kernel.walk([&](Operation *op) {
    // No global or run-time-sized allocation inside a kernel.
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      op->emitError("allocates memory inside a kernel: kernels get their "
                    "global buffers from the host's launch contract");
      ok = false;
    } else if (auto alloca = dyn_cast<memref::AllocaOp>(op);
               alloca && !alloca.getType().hasStaticShape()) {
      op->emitError("allocates on-chip memory whose size depends on run-time "
                    "values; kernel buffers must be tile-sized");
      ok = false;
    }
    // Every global store goes to an output parameter.
    Value target;
    if (auto s = dyn_cast<vector::StoreOp>(op))
      target = s.getBase();
    else if (auto s = dyn_cast<memref::StoreOp>(op))
      target = s.getMemRef();
    else if (isa<LLVM::StoreOp>(op))
      target = cast<LLVM::StoreOp>(op).getAddr();
    if (!target)
      return;
    if (isOnChipMemRef(target.getType()))
      return;
    if (auto p = dyn_cast<LLVM::LLVMPointerType>(target.getType());
        p && p.getAddressSpace() != 1 && p.getAddressSpace() != 0)
      return;
    BlockArgument param = isa<MemRefType>(target.getType())
                              ? pointerParameter(target)
                              : dyn_cast<BlockArgument>(target);
    auto it = param ? c.find(param.getArgNumber()) : c.end();
    if (it == c.end()) {
      op->emitError("stores to global memory that is not a tensor parameter "
                    "of the kernel's launch contract");
      ok = false;
    } else if (!it->second.output) {
      op->emitError() << "stores to '" << it->second.name
                      << "', an input of the kernel's launch contract";
      ok = false;
    }
  });
  return success(ok);
}

LogicalResult attnc::verifyKernelBuffers(ModuleOp module) {
  bool ok = true;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    auto kernels = llvm::to_vector(gpuModule.getOps<gpu::GPUFuncOp>());
    if (kernels.empty())
      continue;
    // Kernels with memref parameters carry their sizes in the descriptors
    // and are judged at their launch sites (GlobalBuffers.cpp); bare
    // pointers need the contract.
    bool barePointers = llvm::any_of(kernels, [](gpu::GPUFuncOp k) {
      return llvm::any_of(k.getArgumentTypes(),
                          llvm::IsaPred<LLVM::LLVMPointerType>);
    });
    if (!barePointers && !gpuModule->hasAttr("attnc.abi"))
      continue;
    FailureOr<DenseMap<unsigned, ContractTensor>> contract =
        readContract(gpuModule);
    if (failed(contract)) {
      ok = false;
      continue;
    }
    for (gpu::GPUFuncOp kernel : kernels)
      if (kernel.isKernel() && failed(checkKernel(kernel, *contract)))
        ok = false;
  }
  return success(ok);
}
