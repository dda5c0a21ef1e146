//===- KernelBuffers.cpp - the no-S x S rule on GPU kernels ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Kernels take bare pointers, so their buffers' sizes are only known through
// the launch contract the host allocates by (#attnc.launch_contract on the
// kernel's gpu.module). This file checks the kernel body against that
// contract: every write to global memory (GlobalWrites.h) must land in an
// output tensor or a workspace of the contract, and no output or workspace
// may be score-sized. Together with the graph-level check
// (GlobalBuffers.cpp) this covers kernel arguments, global allocations and
// global writes.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/KernelBuffers.h"
#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Analysis/GlobalWrites.h"
#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace attnc;

//===----------------------------------------------------------------------===//
// Sizes: no output or workspace grows faster than every input
//===----------------------------------------------------------------------===//

namespace {
/// The symbolic size of a tensor (elements) or workspace (bytes): the
/// multiset of its size symbols. Static extents, tile divisors and device
/// properties do not grow with the problem.
struct SymbolicSize {
  llvm::StringMap<int> symbols;
  std::vector<std::string> order; // for messages

  void add(StringRef sym) {
    ++symbols[sym];
    order.push_back(sym.str());
  }
  /// True when this grows no faster than `o` (a sub-multiset).
  bool boundedBy(const SymbolicSize &o) const {
    return llvm::all_of(symbols, [&](const auto &entry) {
      auto it = o.symbols.find(entry.getKey());
      return it != o.symbols.end() && it->second >= entry.getValue();
    });
  }
  std::string render() const {
    return order.empty() ? "a static number of" : llvm::join(order, " x ");
  }
};
} // namespace

/// Symbols with a `max` constraint are bounded by a constant: they do not
/// make a buffer grow.
using Bounded = llvm::StringSet<>;

static SymbolicSize sizeOf(TensorParamAttr t, const Bounded &bounded) {
  SymbolicSize s;
  for (Attribute d : t.getShape())
    if (auto sym = dyn_cast<StringAttr>(d); sym && !bounded.contains(sym))
      s.add(sym.getValue());
  return s;
}

static SymbolicSize sizeOf(WorkspaceParamAttr w, const Bounded &bounded) {
  SymbolicSize s;
  for (GridFactorAttr f : w.getBytes())
    if (!f.getSymbol().empty() && !bounded.contains(f.getSymbol()))
      s.add(f.getSymbol());
  return s;
}

static LogicalResult checkSizes(FunctionOpInterface kernel,
                                LaunchContractAttr contract) {
  Bounded constant;
  for (ConstraintAttr c : contract.getConstraints())
    if (c.getKind() == ConstraintKind::max)
      constant.insert(c.getLhs());
  SmallVector<SymbolicSize> inputs;
  for (Attribute a : contract.getParams())
    if (auto t = dyn_cast<TensorParamAttr>(a);
        t && t.getRole() == TensorRole::input)
      inputs.push_back(sizeOf(t, constant));
  // A kernel without inputs (a fill) has nothing to be compared with.
  if (inputs.empty())
    return success();
  auto bounded = [&](const SymbolicSize &s) {
    return llvm::any_of(
        inputs, [&](const SymbolicSize &in) { return s.boundedBy(in); });
  };
  bool ok = true;
  for (Attribute a : contract.getParams()) {
    if (auto t = dyn_cast<TensorParamAttr>(a);
        t && t.getRole() == TensorRole::output &&
        !bounded(sizeOf(t, constant))) {
      kernel.emitError() << "kernel @" << contract.getKernel() << " writes '"
                         << t.getName() << "' of "
                         << sizeOf(t, constant).render()
                         << " elements, which grows faster than every input "
                            "of the kernel: a score matrix in global memory";
      ok = false;
    }
    if (auto w = dyn_cast<WorkspaceParamAttr>(a);
        w && !bounded(sizeOf(w, constant))) {
      kernel.emitError() << "kernel @" << contract.getKernel()
                         << " takes workspace '" << w.getName() << "' of "
                         << sizeOf(w, constant).render()
                         << " bytes, which grows faster than every input of "
                            "the kernel: a score matrix in global memory";
      ok = false;
    }
  }
  return success(ok);
}

//===----------------------------------------------------------------------===//
// Writes: each lands in an output tensor or a workspace
//===----------------------------------------------------------------------===//

/// The op's own name says what it does, except for inline PTX and TMA:
/// "`st.global.f32` in its PTX ".
static std::string subject(const GlobalWrite &w) {
  return w.what.empty() ? std::string() : w.what + " ";
}

/// Checks one write whose target comes from parameter `index`.
static LogicalResult checkTarget(const GlobalWrite &w, unsigned index,
                                 LaunchContractAttr contract) {
  ArrayRef<Attribute> params = contract.getParams();
  auto fail = [&] { return w.op->emitOpError(); };
  if (index >= params.size())
    return fail() << "writes through argument #" << index << " of kernel @"
                  << contract.getKernel()
                  << ", which its launch contract does not describe";
  auto p = cast<KernelParamAttrInterface>(params[index]);
  if (auto t = dyn_cast<TensorParamAttr>(p)) {
    if (w.viaTensorMap)
      return fail() << subject(w) << "takes its tensor map from '"
                    << t.getName()
                    << "', a tensor parameter, not a tensormap parameter";
    if (t.getRole() != TensorRole::output)
      return fail() << subject(w) << "writes '" << t.getName()
                    << "', an input of the launch contract of kernel @"
                    << contract.getKernel();
    return success();
  }
  if (auto m = dyn_cast<TensorMapParamAttr>(p)) {
    if (!w.viaTensorMap)
      return fail() << subject(w) << "writes into tensor map '" << m.getName()
                    << "' itself";
    TensorParamAttr t = contract.lookupTensor(m.getTensor());
    if (t && t.getRole() != TensorRole::output)
      return fail() << subject(w) << "writes '" << t.getName()
                    << "' through tensor map '" << m.getName()
                    << "', an input of the launch contract of kernel @"
                    << contract.getKernel();
    return success();
  }
  if (isa<WorkspaceParamAttr>(p)) {
    if (w.viaTensorMap)
      return fail() << subject(w) << "takes its tensor map from '"
                    << p.getName() << "', a workspace";
    return success();
  }
  return fail() << subject(w) << "writes through '" << p.getName() << "', a "
                << p.getKindName() << " parameter, which is no memory";
}

static LogicalResult checkWrites(FunctionOpInterface func,
                                 LaunchContractAttr contract) {
  bool ok = true;
  for (const GlobalWrite &w : collectGlobalWrites(func)) {
    if (!contract) {
      w.op->emitOpError() << subject(w) << "may write global memory in @"
                          << func.getName()
                          << ", a device function: writes are only "
                             "attributed inside kernels, to their launch "
                             "contract";
      ok = false;
      continue;
    }
    if (!w.untraceable.empty()) {
      w.op->emitOpError() << subject(w)
                          << "writes global memory the analysis cannot "
                             "attribute to the launch contract of kernel @"
                          << contract.getKernel() << ": " << w.untraceable;
      ok = false;
      continue;
    }
    PointerOrigin origin = tracePointer(w.target);
    if (origin.isUnknown() || origin.params.empty()) {
      InFlightDiagnostic d =
          w.op->emitOpError()
          << subject(w)
          << "writes global memory through a pointer "
             "that is no parameter of kernel @"
          << contract.getKernel() << ": it comes from "
          << (origin.isUnknown() ? origin.why : std::string("a cycle"));
      if (origin.unknownAt && origin.unknownAt != w.op)
        d.attachNote(origin.unknownAt->getLoc()) << "the trace stops here";
      ok = false;
      continue;
    }
    for (unsigned index : origin.params)
      if (failed(checkTarget(w, index, contract)))
        ok = false;
  }
  return success(ok);
}

//===----------------------------------------------------------------------===//
// Allocations and the driver
//===----------------------------------------------------------------------===//

static LogicalResult checkAllocations(FunctionOpInterface func) {
  bool ok = true;
  func.getFunctionBody().walk([&](Operation *op) {
    if (isa<memref::AllocOp>(op)) {
      op->emitError("allocates memory inside a kernel: kernels get their "
                    "global buffers from the host's launch contract");
      ok = false;
    } else if (auto alloca = dyn_cast<memref::AllocaOp>(op);
               alloca && !alloca.getType().hasStaticShape()) {
      op->emitError("allocates on-chip memory whose size depends on run-time "
                    "values; kernel buffers must be tile-sized");
      ok = false;
    }
  });
  return success(ok);
}

/// Kernels are gpu.func with `kernel` and, once lowered or when built
/// directly as LLVM (grid-constant tensor maps), llvm.func with
/// `nvvm.kernel`.
static bool isKernel(Operation *op) {
  if (auto f = dyn_cast<gpu::GPUFuncOp>(op))
    return f.isKernel();
  return isa<LLVM::LLVMFuncOp>(op) &&
         op->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName());
}

/// Bare pointers and tensor maps carry no sizes: such a kernel needs a
/// contract. Kernels with memref parameters carry their sizes in the
/// descriptors and are judged at their launch sites (GlobalBuffers.cpp).
static bool needsContract(FunctionOpInterface f) {
  return llvm::any_of(f.getArgumentTypes(), [](Type t) {
    return isa<LLVM::LLVMPointerType, nvgpu::TensorMapDescriptorType>(t);
  });
}

LogicalResult attnc::verifyKernelBuffers(ModuleOp module) {
  bool ok = true;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    LaunchContractAttr contract = getLaunchContract(gpuModule);
    for (auto func : gpuModule.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      if (!isKernel(func)) {
        // Device functions: any global write is one no contract covers.
        ok &= succeeded(checkWrites(func, nullptr));
        continue;
      }
      bool described = contract && contract.getKernel() == func.getName();
      if (!described) {
        if (!needsContract(func) && !contract)
          continue;
        func.emitError() << "kernel @" << func.getName()
                         << " has no launch contract: the gpu.module's "
                            "attnc.launch_contract "
                         << (contract
                                 ? "describes @" + contract.getKernel().str()
                                 : std::string("is missing"))
                         << ", so the sizes of its pointer parameters are "
                            "unknown";
        ok = false;
        continue;
      }
      ok &= succeeded(checkSizes(func, contract));
      ok &= succeeded(checkAllocations(func));
      ok &= succeeded(checkWrites(func, contract));
    }
  }
  return success(ok);
}
