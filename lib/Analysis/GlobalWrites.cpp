//===- GlobalWrites.cpp - a kernel's writes to global memory --------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The write finder and pointer trace of GlobalWrites.h. The trace is an
// explicit list of the ops it looks through, so a new way of forming a
// pointer in a kernel builder shows up as an unattributable write (and a
// lit test to extend) instead of passing silently.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/GlobalWrites.h"
#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Analysis/PtxWrites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;

/// NVPTX address spaces that are global memory or may be (generic).
static constexpr unsigned kGenericAddressSpace = 0;
static constexpr unsigned kGlobalAddressSpace = 1;
static constexpr unsigned kSharedAddressSpace = 3;

void PointerOrigin::merge(const PointerOrigin &o) {
  params.insert(o.params.begin(), o.params.end());
  onChip |= o.onChip;
  if (!unknownAt && o.unknownAt) {
    unknownAt = o.unknownAt;
    why = o.why;
  }
}

/// True for types through which a kernel may reach global memory.
static bool mayBeGlobal(Type t) {
  if (auto p = dyn_cast<LLVM::LLVMPointerType>(t))
    return p.getAddressSpace() == kGenericAddressSpace ||
           p.getAddressSpace() == kGlobalAddressSpace;
  if (isa<MemRefType>(t))
    return !isOnChipMemRef(t);
  return isa<nvgpu::TensorMapDescriptorType>(t);
}

/// Pointer and memref types of on-chip memory (shared, local, ...).
static bool isOnChipType(Type t) {
  if (isa<LLVM::LLVMPointerType, MemRefType>(t))
    return !mayBeGlobal(t);
  return false;
}

namespace {
class Tracer {
public:
  PointerOrigin trace(Value v);
  /// The origins of the pointers an integer address is computed from, or
  /// nullopt when it is computed from none.
  std::optional<PointerOrigin> traceInteger(Value v);

private:
  PointerOrigin unknown(Operation *op, const Twine &why) {
    PointerOrigin o;
    o.unknownAt = op;
    o.why = why.str();
    return o;
  }
  PointerOrigin traceAll(ValueRange values) {
    PointerOrigin o;
    for (Value v : values)
      o.merge(trace(v));
    return o;
  }
  PointerOrigin traceBlockArgument(BlockArgument arg);
  PointerOrigin traceRegionBranch(RegionBranchOpInterface op, Value v);
  PointerOrigin traceField(Value aggregate, ArrayRef<int64_t> position);

  DenseSet<Value> visiting;
};
} // namespace

PointerOrigin Tracer::trace(Value v) {
  // A value met again on a cycle (a loop-carried pointer) adds nothing new.
  if (!visiting.insert(v).second)
    return {};
  if (isOnChipType(v.getType())) {
    PointerOrigin o;
    o.onChip = true;
    return o;
  }
  if (auto arg = dyn_cast<BlockArgument>(v))
    return traceBlockArgument(arg);
  Operation *op = v.getDefiningOp();
  if (auto rb = dyn_cast<RegionBranchOpInterface>(op))
    return traceRegionBranch(rb, v);
  return TypeSwitch<Operation *, PointerOrigin>(op)
      .Case([&](UnrealizedConversionCastOp c) {
        if (c.getNumOperands() != 1)
          return unknown(op, "a cast of several values");
        Value src = c.getOperand(0);
        // An LLVM memref descriptor: accesses go through its aligned
        // pointer.
        if (isa<LLVM::LLVMStructType>(src.getType()) &&
            isa<MemRefType>(v.getType()))
          return traceField(src, {1});
        return trace(src);
      })
      .Case(
          [&](ViewLikeOpInterface view) { return trace(view.getViewSource()); })
      .Case<memref::CastOp, memref::MemorySpaceCastOp>(
          [&](Operation *c) { return trace(c->getOperand(0)); })
      .Case([&](LLVM::GEPOp gep) { return trace(gep.getBase()); })
      .Case<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(
          [&](Operation *c) { return trace(c->getOperand(0)); })
      .Case([&](LLVM::ExtractValueOp e) {
        return traceField(e.getContainer(), e.getPosition());
      })
      .Case([&](LLVM::SelectOp s) {
        return traceAll({s.getTrueValue(), s.getFalseValue()});
      })
      .Case([&](arith::SelectOp s) {
        return traceAll({s.getTrueValue(), s.getFalseValue()});
      })
      .Case([&](LLVM::IntToPtrOp i) {
        std::optional<PointerOrigin> o = traceInteger(i.getArg());
        return o ? *o
                 : unknown(op, "an integer that is computed from no pointer");
      })
      .Case<memref::AllocaOp, LLVM::AllocaOp, gpu::DynamicSharedMemoryOp>(
          [&](Operation *) {
            PointerOrigin o;
            o.onChip = true;
            return o;
          })
      .Case([&](LLVM::AddressOfOp a) {
        auto global = dyn_cast_or_null<LLVM::GlobalOp>(
            SymbolTable::lookupNearestSymbolFrom(op, a.getGlobalNameAttr()));
        if (global && global.getAddrSpace() == kSharedAddressSpace) {
          PointerOrigin o;
          o.onChip = true;
          return o;
        }
        return unknown(op, "the module global @" + a.getGlobalName() +
                               ", which no launch contract describes");
      })
      .Case([&](memref::GetGlobalOp g) {
        return unknown(op, "the module global @" + g.getName() +
                               ", which no launch contract describes");
      })
      .Default([&](Operation *) {
        return unknown(op,
                       "the result of '" + op->getName().getStringRef() + "'");
      });
}

PointerOrigin Tracer::traceBlockArgument(BlockArgument arg) {
  Block *block = arg.getOwner();
  Operation *parent = block->getParentOp();
  if (block->isEntryBlock()) {
    if (isa<FunctionOpInterface>(parent)) {
      PointerOrigin o;
      o.params.insert(arg.getArgNumber());
      return o;
    }
    if (auto rb = dyn_cast<RegionBranchOpInterface>(parent))
      return traceRegionBranch(rb, arg);
    return unknown(parent, "an argument of a '" +
                               parent->getName().getStringRef() + "' region");
  }
  // A CFG block: whatever each predecessor branches with.
  PointerOrigin o;
  for (auto it = block->pred_begin(); it != block->pred_end(); ++it) {
    auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
    if (!branch)
      return unknown(*it ? (*it)->getTerminator() : parent,
                     "a branch whose operands are not known");
    SuccessorOperands ops = branch.getSuccessorOperands(it.getSuccessorIndex());
    Value in = ops[arg.getArgNumber()];
    if (!in)
      return unknown(branch, "a value the branch produces itself");
    o.merge(trace(in));
  }
  return o;
}

PointerOrigin Tracer::traceRegionBranch(RegionBranchOpInterface op, Value v) {
  // Every successor (a region or the op's results) and, among its inputs,
  // `v`: the values forwarded into it from every predecessor.
  SmallVector<RegionSuccessor> successors;
  op.getSuccessorRegions(RegionBranchPoint::parent(), successors);
  for (Region &r : op->getRegions())
    op.getSuccessorRegions(r, successors);
  for (RegionSuccessor &s : successors) {
    auto inputs = s.getSuccessorInputs();
    auto it = llvm::find(inputs, v);
    if (it == inputs.end())
      continue;
    SmallVector<Value> forwarded;
    op.getPredecessorValues(s, std::distance(inputs.begin(), it), forwarded);
    return traceAll(forwarded);
  }
  return unknown(op, "a value of '" + op->getName().getStringRef() +
                         "' that no region forwards");
}

PointerOrigin Tracer::traceField(Value aggregate, ArrayRef<int64_t> position) {
  while (auto insert = aggregate.getDefiningOp<LLVM::InsertValueOp>()) {
    ArrayRef<int64_t> at = insert.getPosition();
    if (at == position)
      return trace(insert.getValue());
    // A whole sub-aggregate holding the field.
    if (at.size() < position.size() && position.take_front(at.size()) == at)
      return traceField(insert.getValue(), position.drop_front(at.size()));
    aggregate = insert.getContainer();
  }
  if (auto extract = aggregate.getDefiningOp<LLVM::ExtractValueOp>()) {
    SmallVector<int64_t> outer(extract.getPosition());
    outer.append(position.begin(), position.end());
    return traceField(extract.getContainer(), outer);
  }
  Operation *at = aggregate.getDefiningOp();
  if (!at)
    return unknown(aggregate.getParentBlock()->getParentOp(),
                   "a field of an aggregate argument");
  return unknown(at, "a field of an aggregate that no llvm.insertvalue set");
}

std::optional<PointerOrigin> Tracer::traceInteger(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto p = dyn_cast<LLVM::PtrToIntOp>(op))
    return trace(p.getArg());
  if (isa<LLVM::AddOp, LLVM::SubOp, arith::AddIOp, arith::SubIOp>(op)) {
    std::optional<PointerOrigin> out;
    for (Value operand : op->getOperands())
      if (std::optional<PointerOrigin> o = traceInteger(operand)) {
        if (!out)
          out.emplace();
        out->merge(*o);
      }
    return out;
  }
  if (isa<LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp, arith::IndexCastOp,
          arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp,
          arith::TruncIOp>(op))
    return traceInteger(op->getOperand(0));
  return std::nullopt;
}

PointerOrigin attnc::tracePointer(Value value) {
  Tracer t;
  if (isa<IntegerType, IndexType>(value.getType())) {
    std::optional<PointerOrigin> o = t.traceInteger(value);
    if (o)
      return *o;
    PointerOrigin u;
    u.unknownAt = value.getDefiningOp() ? value.getDefiningOp()
                                        : value.getParentBlock()->getParentOp();
    u.why = "an integer that is computed from no pointer";
    return u;
  }
  return t.trace(value);
}

//===----------------------------------------------------------------------===//
// Writes
//===----------------------------------------------------------------------===//

/// Inline PTX: llvm.inline_asm numbers its `$N` over the constraints,
/// outputs first; nvvm.inline_ptx numbers its results first, then its
/// operands in order.
static void collectAsmWrites(Operation *op, StringRef ptx,
                             SmallVectorImpl<GlobalWrite> &out) {
  SmallVector<PtxGlobalWrite> found = findPtxGlobalWrites(ptx);
  if (found.empty())
    return;
  // Placeholder -> operand index, or -1 for a register output.
  SmallVector<int> operandOf;
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    SmallVector<StringRef> constraints;
    asmOp.getConstraints().split(constraints, ',');
    int next = 0;
    for (StringRef c : constraints) {
      c = c.trim();
      if (c.starts_with("~"))
        continue;
      bool directOutput = c.starts_with("=") && !c.starts_with("=*");
      operandOf.push_back(directOutput ? -1 : next++);
    }
  } else {
    operandOf.assign(op->getNumResults(), -1);
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      operandOf.push_back(i);
  }
  for (const PtxGlobalWrite &w : found) {
    GlobalWrite g{op, Value(), w.viaTensorMap,
                  "`" + w.mnemonic + "` in its PTX", ""};
    if (!w.operand || *w.operand >= operandOf.size() ||
        operandOf[*w.operand] < 0 ||
        operandOf[*w.operand] >= (int)op->getNumOperands())
      g.untraceable = "its destination is not an operand of the asm (a "
                      "register or symbol of the asm text)";
    else
      g.target = op->getOperand(operandOf[*w.operand]);
    out.push_back(std::move(g));
  }
}

/// The written operand of the ops the analysis knows by name.
static std::optional<GlobalWrite> knownWrite(Operation *op) {
  auto addr = [&](Value v, const char *what) {
    return GlobalWrite{op, v, false, what, ""};
  };
  auto map = [&](Value v, const char *what) {
    return GlobalWrite{op, v, true, what, ""};
  };
  return TypeSwitch<Operation *, std::optional<GlobalWrite>>(op)
      .Case([&](memref::StoreOp s) { return addr(s.getMemRef(), ""); })
      .Case([&](memref::AtomicRMWOp s) { return addr(s.getMemref(), ""); })
      .Case(
          [&](memref::GenericAtomicRMWOp s) { return addr(s.getMemref(), ""); })
      .Case([&](memref::CopyOp s) { return addr(s.getTarget(), ""); })
      .Case([&](vector::StoreOp s) { return addr(s.getBase(), ""); })
      .Case([&](vector::MaskedStoreOp s) { return addr(s.getBase(), ""); })
      .Case([&](vector::ScatterOp s) { return addr(s.getBase(), ""); })
      .Case([&](vector::CompressStoreOp s) { return addr(s.getBase(), ""); })
      .Case([&](vector::TransferWriteOp s) -> std::optional<GlobalWrite> {
        if (!isa<MemRefType>(s.getBase().getType()))
          return std::nullopt;
        return addr(s.getBase(), "");
      })
      .Case([&](LLVM::StoreOp s) { return addr(s.getAddr(), ""); })
      .Case([&](LLVM::AtomicRMWOp s) { return addr(s.getPtr(), ""); })
      .Case([&](LLVM::AtomicCmpXchgOp s) { return addr(s.getPtr(), ""); })
      .Case<LLVM::MemcpyOp, LLVM::MemmoveOp, LLVM::MemsetOp,
            LLVM::MemcpyInlineOp, LLVM::MemsetInlineOp>(
          [&](Operation *) { return addr(op->getOperand(0), ""); })
      .Case([&](NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp s) {
        return map(s.getTmaDescriptor(), "a TMA store");
      })
      .Case([&](NVVM::CpAsyncBulkTensorReduceOp s) {
        return map(s.getTmaDescriptor(), "a TMA reduction");
      })
      .Case([&](NVVM::CpAsyncBulkSharedCTAToGlobalOp s) {
        return addr(s.getDstMem(), "a bulk copy");
      })
      .Case([&](NVVM::WMMAStoreOp s) { return addr(s.getPtr(), ""); })
      .Case([&](nvgpu::TmaAsyncStoreOp s) {
        return map(s.getTensorMapDescriptor(), "a TMA store");
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// True when `v` may reach global memory: its type says so and its trace
/// does not end on chip only.
static bool reachesGlobal(Value v) {
  if (!mayBeGlobal(v.getType()))
    return false;
  PointerOrigin o = tracePointer(v);
  return o.isUnknown() || !o.params.empty() || !o.onChip;
}

/// Writes of ops the analysis does not know by name: declared write
/// effects, and global memory handed to code it cannot see.
static void collectOtherWrites(Operation *op,
                               SmallVectorImpl<GlobalWrite> &out) {
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(nullptr));
    // A callee with a body in the module is checked on its own.
    if (callee && !callee.isExternal())
      return;
    for (Value v : call.getArgOperands())
      if (reachesGlobal(v)) {
        out.push_back({op, v, false, "",
                       "it passes global memory to a function without a "
                       "body in this module, whose writes are not visible"});
        return;
      }
    return;
  }
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      Value v = e.getValue();
      if (!isa<MemoryEffects::Write>(e.getEffect()) || !v ||
          !llvm::is_contained(op->getOperands(), v) || !reachesGlobal(v))
        continue;
      out.push_back(
          {op, v, isa<nvgpu::TensorMapDescriptorType>(v.getType()), "", ""});
    }
    return;
  }
  // NVVM ops that write global memory are known by name above; the rest
  // write registers, shared or tensor memory.
  if (isa<NVVM::NVVMDialect>(op->getDialect()) ||
      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
      op->hasTrait<OpTrait::IsTerminator>())
    return;
  for (Value v : op->getOperands())
    if (reachesGlobal(v)) {
      out.push_back({op, v, false, "",
                     "it receives global memory and declares no memory "
                     "effects, so what it writes is not known"});
      return;
    }
}

SmallVector<GlobalWrite> attnc::collectGlobalWrites(FunctionOpInterface func) {
  SmallVector<GlobalWrite> writes;
  func.getFunctionBody().walk([&](Operation *op) {
    if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
      collectAsmWrites(op, asmOp.getAsmString(), writes);
      return;
    }
    if (auto ptx = dyn_cast<NVVM::InlinePtxOp>(op)) {
      collectAsmWrites(op, ptx.getPtxCode(), writes);
      return;
    }
    if (std::optional<GlobalWrite> w = knownWrite(op)) {
      if (mayBeGlobal(w->target.getType()) ||
          isa<IntegerType>(w->target.getType()))
        writes.push_back(std::move(*w));
      return;
    }
    collectOtherWrites(op, writes);
  });
  // Asm operands may be integers holding addresses; everything else was
  // filtered by type. A trace that ends on chip only is no global write.
  llvm::erase_if(writes, [](const GlobalWrite &w) {
    if (!w.untraceable.empty() || !w.target)
      return false;
    if (!mayBeGlobal(w.target.getType()) &&
        !isa<IntegerType, IndexType>(w.target.getType()))
      return true;
    PointerOrigin o = tracePointer(w.target);
    return !o.isUnknown() && o.params.empty() && o.onChip;
  });
  return writes;
}
