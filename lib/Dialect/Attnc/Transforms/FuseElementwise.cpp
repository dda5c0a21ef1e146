//===- FuseElementwise.cpp - --attnc-fuse-elementwise ---------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Groups connected elementwise, broadcast and row ops (those for which
// attnc::isFusibleElementwiseOp holds) into attnc.fusion ops, one kernel
// each. Groups grow in program order within a block: an op joins the groups
// of the fusible ops it reads unless a non-fusible op has already read one
// of their values, which keeps every group free of cycles through the rest
// of the graph and lets the fusion take the place of its last op without
// moving anything else. Splat and scalar constants are cloned into the body;
// other outside values become inputs. The pass is a thin driver over
// fuseElementwiseChains.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attnc-fuse-elementwise"

namespace attnc {
#define GEN_PASS_DEF_ATTNCFUSEELEMENTWISE
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

/// Constants cheap enough to rematerialise inside every fusion that reads
/// them: scalars and splats. A dense non-splat constant is a real tensor and
/// becomes an input instead.
static bool isClonableConstant(Operation *op) {
  auto constant = dyn_cast_or_null<arith::ConstantOp>(op);
  if (!constant)
    return false;
  if (auto elements = dyn_cast<ElementsAttr>(constant.getValue()))
    return elements.isSplat();
  return true;
}

/// Partitions the fusible ops of `block` into groups, each in program order.
/// A group is sealed once an op outside it (a matmul, the terminator, an op
/// with a region reading it) uses one of its values: later fusible ops then
/// start a new group, since joining would need the fusion both before and
/// after that op.
static SmallVector<SmallVector<Operation *>> groupFusibleOps(Block &block) {
  llvm::EquivalenceClasses<Operation *> classes;
  DenseSet<Operation *> sealed; // Leaders of sealed classes.
  auto isOpenGroupMember = [&](Operation *def) {
    return def && classes.contains(def) &&
           !sealed.contains(classes.getLeaderValue(def));
  };

  for (Operation &op : block) {
    if (isFusibleElementwiseOp(&op)) {
      classes.insert(&op);
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp(); isOpenGroupMember(def))
          classes.unionSets(&op, def);
      continue;
    }
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == &block && classes.contains(def))
          sealed.insert(classes.getLeaderValue(def));
    });
  }

  // Collect the classes in program order of their first op.
  SmallVector<SmallVector<Operation *>> groups;
  DenseMap<Operation *, unsigned> indexOfLeader;
  for (Operation &op : block) {
    if (!classes.contains(&op))
      continue;
    Operation *leader = classes.getLeaderValue(&op);
    auto [it, inserted] = indexOfLeader.try_emplace(leader, groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].push_back(&op);
  }
  return groups;
}

namespace {
/// What crosses the boundary of one group.
struct GroupInterface {
  /// Outside values read by the group, in first-use order.
  SetVector<Value> inputs;
  /// Constants cloned into the body.
  SetVector<Operation *> constants;
  /// Float tensors used outside: the fusion's results.
  SetVector<Value> results;
  /// Members whose non-float result (an iota or a cmp) is used outside; a
  /// fusion cannot return it, so the op is recomputed after the fusion.
  SetVector<Operation *> recomputed;
};
} // namespace

static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Records that member value `v` is needed outside the group.
static void requireOutside(Value v, const DenseSet<Operation *> &members,
                           GroupInterface &iface) {
  if (isFloatTensor(v.getType())) {
    iface.results.insert(v);
    return;
  }
  Operation *def = v.getDefiningOp();
  if (!iface.recomputed.insert(def))
    return;
  for (Value operand : def->getOperands())
    if (members.contains(operand.getDefiningOp()))
      requireOutside(operand, members, iface);
}

static GroupInterface analyzeGroup(ArrayRef<Operation *> group,
                                   const DenseSet<Operation *> &members) {
  GroupInterface iface;
  for (Operation *op : group) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (members.contains(def))
        continue;
      if (isClonableConstant(def))
        iface.constants.insert(def);
      else
        iface.inputs.insert(operand);
    }
  }
  for (Operation *op : group)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        requireOutside(result, members, iface);
  // Recompute in program order so that operands come first.
  SmallVector<Operation *> recomputed = iface.recomputed.takeVector();
  llvm::sort(recomputed,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  iface.recomputed.insert(recomputed.begin(), recomputed.end());
  return iface;
}

/// Replaces `group` (fusible ops of one block, in program order) by one
/// attnc.fusion placed where its last op was. Returns false when the group
/// has no float value used outside and is left alone.
static bool buildFusion(RewriterBase &rewriter, ArrayRef<Operation *> group) {
  DenseSet<Operation *> members(group.begin(), group.end());
  GroupInterface iface = analyzeGroup(group, members);
  if (iface.results.empty())
    return false;

  SmallVector<Location> locs;
  for (Operation *op : group)
    locs.push_back(op->getLoc());
  Location loc = rewriter.getFusedLoc(locs);
  SmallVector<Type> resultTypes;
  for (Value v : iface.results)
    resultTypes.push_back(v.getType());

  rewriter.setInsertionPoint(group.back());
  auto fusion =
      FusionOp::create(rewriter, loc, resultTypes, iface.inputs.getArrayRef());
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value v : iface.inputs) {
    argTypes.push_back(v.getType());
    argLocs.push_back(v.getLoc());
  }
  Block *body = rewriter.createBlock(&fusion.getBody(), {}, argTypes, argLocs);

  IRMapping inside;
  inside.map(iface.inputs.getArrayRef(), body->getArguments());
  for (Operation *constant : iface.constants)
    rewriter.clone(*constant, inside);
  for (Operation *op : group)
    rewriter.clone(*op, inside);
  SmallVector<Value> yielded;
  for (Value v : iface.results)
    yielded.push_back(inside.lookup(v));
  YieldOp::create(rewriter, loc, yielded);

  // Outside users: float values come from the fusion, iotas and masks are
  // recomputed right after it.
  rewriter.setInsertionPointAfter(fusion);
  IRMapping outside;
  outside.map(iface.results.getArrayRef(), fusion.getResults());
  for (Operation *op : iface.recomputed)
    rewriter.clone(*op, outside);
  auto isOutsideUse = [&](OpOperand &use) {
    return !members.contains(use.getOwner());
  };
  for (Value v : iface.results)
    rewriter.replaceUsesWithIf(v, outside.lookup(v), isOutsideUse);
  for (Operation *op : iface.recomputed)
    for (Value v : op->getResults())
      rewriter.replaceUsesWithIf(v, outside.lookup(v), isOutsideUse);

  for (Operation *op : llvm::reverse(group))
    rewriter.eraseOp(op);
  for (Operation *constant : iface.constants)
    if (constant->use_empty())
      rewriter.eraseOp(constant);
  LLVM_DEBUG(llvm::dbgs() << "fused " << group.size() << " ops, "
                          << iface.inputs.size() << " inputs, "
                          << iface.results.size() << " results\n");
  return true;
}

int64_t attnc::fuseElementwiseChains(RewriterBase &rewriter, Operation *root) {
  // Blocks first: fusion bodies are already kernels and are not entered.
  SmallVector<Block *> blocks;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<FusionOp>(op))
      return WalkResult::skip();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        blocks.push_back(&block);
    return WalkResult::advance();
  });

  int64_t count = 0;
  for (Block *block : blocks)
    for (ArrayRef<Operation *> group : groupFusibleOps(*block))
      count += buildFusion(rewriter, group);
  return count;
}

namespace {
struct AttncFuseElementwisePass
    : attnc::impl::AttncFuseElementwiseBase<AttncFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    int64_t count = fuseElementwiseChains(rewriter, getOperation());
    (void)count;
    LLVM_DEBUG(llvm::dbgs() << "created " << count << " fusions\n");
  }
};
} // namespace
