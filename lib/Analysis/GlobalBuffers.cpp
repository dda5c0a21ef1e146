//===- GlobalBuffers.cpp - buffers in global memory and the S x S rule ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Finds the buffers of a function that live in global memory, at the graph
// and fused levels (kernel results of top-level ops) and at the GPU level
// (allocations and gpu.launch_func operands), and checks each against the
// symbolic S_q x S_kv rule. Nothing here trusts markers or op names beyond
// "this op is a kernel": sizes come from ShapeAnalysis.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/GlobalBuffers.h"
#include "attnc/Analysis/KernelVersions.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace attnc;

/// NVVM's numeric address spaces for shared (3) and local (5) memory, from
/// the NVPTX backend's address-space table (NVPTXBaseInfo.h).
static constexpr unsigned kNVVMSharedAddressSpace = 3;
static constexpr unsigned kNVVMLocalAddressSpace = 5;

/// The rank of [B, H, S, d] attention operands (AttncFusedOps.td) and the
/// position of their sequence extent.
static constexpr unsigned kAttentionRank = 4;
static constexpr unsigned kSequenceDim = 2;

bool attnc::isKernelOp(Operation *op) {
  if (isa<scf::ForallOp>(op) || isVersionedKernel(op))
    return true;
  if (isa<YieldOp>(op))
    return false;
  return isa<AttncDialect>(op->getDialect());
}

bool attnc::isOnChipMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getMemorySpace())
    return false;
  if (auto space = dyn_cast<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return space.getValue() != gpu::AddressSpace::Global;
  if (auto space = dyn_cast<IntegerAttr>(memref.getMemorySpace()))
    return space.getInt() == kNVVMSharedAddressSpace ||
           space.getInt() == kNVVMLocalAddressSpace;
  return false;
}

static bool isShaped(Value v) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  return shaped && shaped.hasRank();
}

SmallVector<GlobalBuffer>
attnc::collectGlobalBuffers(FunctionOpInterface func,
                            const ShapeAnalysis &shapes) {
  SmallVector<GlobalBuffer> buffers;
  llvm::SmallPtrSet<Value, 16> seen;
  auto add = [&](Value v, GlobalBuffer::Kind kind) {
    if (isShaped(v) && !isOnChipMemRef(v.getType()) && seen.insert(v).second)
      buffers.push_back({v, kind});
  };
  if (func.isExternal())
    return buffers;
  Block &entry = func.getFunctionBody().front();
  for (Value arg : entry.getArguments())
    add(arg, GlobalBuffer::Kind::Boundary);
  if (Operation *term = entry.getTerminator())
    if (term->hasTrait<OpTrait::ReturnLike>())
      for (Value v : term->getOperands())
        add(v, GlobalBuffer::Kind::Boundary);

  // Graph and fused level: the results of top-level kernels cross a kernel
  // boundary through HBM; top-level tensor.empty is a kernel's destination.
  // The versions of a kernel (KernelVersions.h) are kernels of their own.
  std::function<void(Block &)> addKernels = [&](Block &block) {
    for (Operation &op : block) {
      if (isKernelOp(&op))
        for (Value r : op.getResults())
          add(r, GlobalBuffer::Kind::KernelResult);
      if (isa<tensor::EmptyOp>(op))
        add(op.getResult(0), GlobalBuffer::Kind::Allocation);
      if (isVersionedKernel(&op))
        for (Region &r : op.getRegions())
          if (!r.empty())
            addKernels(r.front());
    }
  };
  addKernels(entry);

  // GPU level: allocations anywhere on the host side (not inside a kernel
  // body) and what is handed to kernels.
  func->walk([&](Operation *op) {
    if (op->getParentOfType<gpu::LaunchOp>())
      return;
    if (isa<memref::AllocOp, gpu::AllocOp>(op))
      add(op->getResult(0), GlobalBuffer::Kind::Allocation);
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      for (Value operand : launch.getKernelOperands())
        add(operand, GlobalBuffer::Kind::LaunchOperand);
  });
  return buffers;
}

//===----------------------------------------------------------------------===//
// ScoreBufferRule
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> staticShape(Value v) {
  return llvm::to_vector(cast<ShapedType>(v.getType()).getShape());
}

ScoreBufferRule::ScoreBufferRule(const ShapeAnalysis &shapes) : shapes(shapes) {
  FunctionOpInterface func = shapes.getFunction();
  if (func.isExternal())
    return;
  SmallVector<Value> boundary(func.getFunctionBody().getArguments());
  Operation *term = func.getFunctionBody().front().getTerminator();
  if (term && term->hasTrait<OpTrait::ReturnLike>())
    llvm::append_range(boundary, term->getOperands());
  for (Value v : boundary) {
    if (!isShaped(v))
      continue;
    std::optional<Monomial> n = shapes.getNumElements(v);
    if (!n)
      continue;
    bounds.push_back(*n);
    auto type = cast<ShapedType>(v.getType());
    if (!type.hasStaticShape())
      continue;
    largestStaticBound = std::max(largestStaticBound, type.getNumElements());
    staticBoundaryShapes.push_back(staticShape(v));
    if (type.getRank() == kAttentionRank && isa<BlockArgument>(v))
      sequenceExtents.push_back(type.getDimSize(kSequenceDim));
  }
}

/// What the symbolic rule found, in words.
static constexpr const char *kFasterThanBoundary =
    ", faster than every input and output (O(S_q*S_kv) where they are O(S))";

std::optional<std::string> ScoreBufferRule::check(Value value) const {
  const SymbolicShape *shape = shapes.getShape(value);
  if (!shape)
    return std::nullopt;
  Monomial n = getNumElements(*shape);
  // Unknown sizes are not reported: the rule only flags growth it derived.
  if (shapes.isOpaque(n))
    return std::nullopt;

  if (n.isConstant()) {
    // Any dynamic boundary grows without bound and so bounds a constant.
    if (llvm::any_of(bounds, [](const Monomial &b) { return !b.isConstant(); }))
      return std::nullopt;
    if (n.getCoefficient() > largestStaticBound)
      return "has " + std::to_string(n.getCoefficient()) +
             " elements, more than the largest input or output (" +
             std::to_string(largestStaticBound) + ")";
    SmallVector<int64_t> s = staticShape(value);
    if (s.size() == kAttentionRank &&
        llvm::is_contained(sequenceExtents, s[2]) &&
        llvm::is_contained(sequenceExtents, s[3]) &&
        !llvm::is_contained(staticBoundaryShapes, s))
      return "is [B, H, S_q, S_kv] = [" + std::to_string(s[0]) + ", " +
             std::to_string(s[1]) + ", " + std::to_string(s[2]) + ", " +
             std::to_string(s[3]) +
             "], with the sequence extents of the attention inputs";
    return std::nullopt;
  }

  auto covered = [&](const Monomial &m) {
    return llvm::any_of(bounds,
                        [&](const Monomial &b) { return m.symbolsDivide(b); });
  };
  if (covered(n))
    return std::nullopt;
  // Name the growth by the first pair of extents, innermost first, that no
  // input or output has together: for scores that is (S_q, S_kv).
  for (int64_t i = shape->size() - 1; i >= 0; --i) {
    if ((*shape)[i].isConstant())
      continue;
    for (int64_t j = i - 1; j >= 0; --j) {
      Monomial pair = (*shape)[j] * (*shape)[i];
      if (!(*shape)[j].isConstant() && !covered(pair))
        return "grows as " + shapes.render(pair) + kFasterThanBoundary;
    }
  }
  return "grows as " + shapes.render(n) + kFasterThanBoundary;
}

//===----------------------------------------------------------------------===//
// verifyNoGlobalScores
//===----------------------------------------------------------------------===//

/// "'attnc.matmul' result #0", or "argument #2".
static std::string describe(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "argument #" + std::to_string(arg.getArgNumber());
  auto result = cast<OpResult>(v);
  return "'" + result.getOwner()->getName().getStringRef().str() +
         "' result #" + std::to_string(result.getResultNumber());
}

LogicalResult attnc::verifyNoGlobalScores(ModuleOp module) {
  bool failed = false;
  module.walk([&](FunctionOpInterface func) {
    if (func->getParentOfType<gpu::GPUModuleOp>() || func.isExternal())
      return;
    ShapeAnalysis shapes(func);
    ScoreBufferRule rule(shapes);
    for (const GlobalBuffer &buffer : collectGlobalBuffers(func, shapes)) {
      std::optional<std::string> why = rule.check(buffer.value);
      if (!why)
        continue;
      failed = true;
      Operation *at = buffer.value.getDefiningOp();
      InFlightDiagnostic diag = at ? at->emitError() : func->emitError();
      diag << describe(buffer.value) << " is a buffer in global memory of "
           << shapes.render(*shapes.getNumElements(buffer.value))
           << " elements; it " << *why
           << "; the score matrix must stay on chip";
    }
  });
  return failure(failed);
}
