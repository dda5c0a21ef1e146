//===- GlobalWrites.h - a kernel's writes to global memory ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Finds every op of a GPU function that writes (or may write) global
// memory and traces the pointer it writes through back to where it comes
// from: a parameter of the function, on-chip memory, or something the trace
// cannot follow. KernelBuffers.cpp then judges each write against the
// kernel's launch contract.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_GLOBALWRITES_H
#define ATTNC_ANALYSIS_GLOBALWRITES_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <string>

namespace attnc {

/// Where a pointer, memref or tensor map may point.
struct PointerOrigin {
  /// Arguments of the enclosing function (by position) it may come from.
  llvm::SmallSetVector<unsigned, 2> params;
  /// Some path ends in on-chip memory (shared, local): not a global write.
  bool onChip = false;
  /// The first op (or block owner) where the trace stopped, and why; a
  /// write through such a pointer cannot be attributed.
  mlir::Operation *unknownAt = nullptr;
  std::string why;

  bool isUnknown() const { return unknownAt != nullptr; }
  void merge(const PointerOrigin &o);
};

/// Traces `value` (an LLVM pointer, a memref, an nvgpu tensor map, or an
/// integer holding an address) to its origins. It follows, and only
/// follows:
///  - memref views and casts (ViewLikeOpInterface: subview,
///    reinterpret_cast, expand/collapse_shape, extract_strided_metadata...;
///    memref.cast, memref.memory_space_cast);
///  - the memref descriptor: unrealized_conversion_cast of an LLVM struct
///    to a memref means its aligned pointer (field 1), found through the
///    llvm.insertvalue chain that built the struct; llvm.extractvalue of a
///    field likewise;
///  - llvm.getelementptr (its base), llvm.addrspacecast, llvm.bitcast;
///  - llvm.inttoptr of an integer computed from llvm.ptrtoint by
///    add/sub/casts;
///  - llvm.select / arith.select (both sides), block arguments of CFG
///    blocks (every predecessor's branch operand), and region results and
///    arguments of scf.for / scf.while / scf.if and other region-branch ops
///    (every value forwarded to them);
///  - entry block arguments of the function: the parameter's position.
/// It ends on-chip at shared/local pointer or memref types, memref.alloca,
/// llvm.alloca, gpu.dynamic_shared_memory and shared llvm.mlir.global.
/// Anything else (a load of a pointer, a call or inline asm result, a
/// global-memory llvm.mlir.global or memref.get_global, memref.alloc, an
/// undefined descriptor field) stops the trace as unknown.
PointerOrigin tracePointer(mlir::Value value);

/// One write of a GPU function to (possibly) global memory.
struct GlobalWrite {
  mlir::Operation *op;
  /// The written operand: an address, or a tensor map for TMA stores.
  mlir::Value target;
  bool viaTensorMap = false;
  /// What writes, for messages where the op's name does not say it ("a TMA
  /// store", "`st.global.f32` in its PTX"); empty otherwise.
  std::string what;
  /// Non-empty when the op writes global memory somewhere the analysis
  /// cannot even name an operand for (an address computed inside inline
  /// asm, a call into code it cannot see).
  std::string untraceable;
};

/// The writes of `func`'s body that may reach global memory, each with its
/// target. Writes are:
///  - stores, atomics and copies of memref, vector and llvm (memref.store,
///    memref.atomic_rmw, memref.generic_atomic_rmw, memref.copy,
///    vector.store/maskedstore/scatter/compressstore/transfer_write,
///    llvm.store, llvm.atomicrmw, llvm.cmpxchg, llvm.intr.memcpy/memmove/
///    memset);
///  - TMA and bulk copies to global memory: nvvm.cp.async.bulk.tensor.
///    global.shared.cta and nvvm.cp.async.bulk.tensor.reduce (through their
///    tensor map), nvgpu.tma.async.store (tensor map),
///    nvvm.cp.async.bulk.global.shared.cta and nvvm.wmma.store (address);
///  - llvm.inline_asm and nvvm.inline_ptx instructions that PtxWrites.h
///    classifies as global writes (their `$N` destination operand);
///  - any other op that declares a write effect on an operand
///    (MemoryEffectOpInterface);
///  - calls to functions without a body in the module, and ops with
///    unknown effects outside the NVVM dialect, that receive global
///    memory: untraceable, since what they write is not visible.
/// Other NVVM ops write registers, shared or tensor memory only. Targets
/// whose type is on-chip (shared, local) are not listed; generic pointers
/// are, and a trace that ends on chip clears them.
llvm::SmallVector<GlobalWrite>
collectGlobalWrites(mlir::FunctionOpInterface func);

} // namespace attnc

#endif // ATTNC_ANALYSIS_GLOBALWRITES_H
