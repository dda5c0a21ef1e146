//===- FuseAttention.cpp - --attnc-fuse-attention -------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Recognises attention written as a graph, matmul(Q, K^T) -> scale ->
// (causal mask) -> softmax -> (cast, dropout) -> matmul(P, V), and replaces
// it by one attnc.attention: splat constant scales fold into its `scale`
// attribute, run-time scalars into its `runtime_scale` operand, and a causal
// iota mask (top-left, or bottom-right: the row iota shifted by Skv - Sq)
// becomes its mask region. The pattern is rooted at the second matmul and walks
// up the use-def chain with the matchers of AttentionMatchers.h; it fires only
// when every op that touches the S x S scores is part of the chain, so that
// the fused op really removes the score matrix. The pass is a greedy driver
// over populateFuseAttentionPatterns.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatchers.h"
#include "ScoreRegions.h"
#include "attnc/Analysis/DimIndices.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "attnc-fuse-attention"

namespace attnc {
#define GEN_PASS_DEF_ATTNCFUSEATTENTION
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {

/// Rank of attnc.attention's operands: [batch, heads, seq, head_dim].
constexpr int64_t kAttentionRank = 4;

/// Everything the rewrite needs, found by walking up from P V.
struct AttentionChain {
  Value query, key, value;
  double scale = 1.0;
  /// Run-time scalars multiplying the scores, in the order found.
  SmallVector<Value> runtimeScales;
  bool causal = false;
  /// A causal mask's shift: key j visible to query i iff j <= i + offset.
  std::optional<IndexOffset> maskOffset;
  /// Any other mask of positions (a window, chunks, a prefix...).
  std::optional<GeneralMask> mask;
  /// The score modifier, innermost step first.
  SmallVector<ScoreModStep> mods;
  /// attnc.dropout of the probabilities, before P V.
  DropoutOp dropout;
  /// The Q K^T matmul: all of its transitive users up to the root must be in
  /// `ops`.
  MatmulOp scores;
  /// Ops of the chain, erased once dead after the rewrite.
  MatchedOps ops;
};

/// Strips `attnc.repeat_interleave {dimension = 1}` from K and V when both
/// carry one with the same factor: attnc.attention reads the shared K/V head
/// itself (grouped-query and multi-query attention).
static void stripHeadRepeats(AttentionChain &chain) {
  auto k = chain.key.getDefiningOp<RepeatInterleaveOp>();
  auto v = chain.value.getDefiningOp<RepeatInterleaveOp>();
  if (!k || !v || k.getDimension() != 1 || v.getDimension() != 1 ||
      k.getRepeats() != v.getRepeats())
    return;
  chain.key = k.getInput();
  chain.value = v.getInput();
  chain.ops.insert(k);
  chain.ops.insert(v);
}

/// True when every transitive user of the scores up to `root` belongs to the
/// chain, i.e. the S x S matrix dies with the rewrite.
static bool scoresOnlyFeedChain(const AttentionChain &chain, Operation *root) {
  SmallVector<Operation *> worklist{chain.scores};
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers()) {
      if (user == root || !seen.insert(user).second)
        continue;
      if (!chain.ops.contains(user)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "  score value has an outside user: " << *user << "\n");
        return false;
      }
      worklist.push_back(user);
    }
  }
  return true;
}

/// Rank-4 operand types that attnc.attention accepts, with a result of the
/// root's type.
static LogicalResult checkTypes(const AttentionChain &chain, MatmulOp root) {
  auto q = cast<RankedTensorType>(chain.query.getType());
  auto k = cast<RankedTensorType>(chain.key.getType());
  auto v = cast<RankedTensorType>(chain.value.getType());
  RankedTensorType o = root.getType();
  for (RankedTensorType t : {q, k, v, o})
    if (t.getRank() != kAttentionRank)
      return failure();
  // attnc.attention computes in Q's element type and returns it. A final
  // matmul that widens (bf16 x bf16 -> f32) would need the fused result cast
  // back up, which silently drops the precision the graph asked for.
  Type elt = q.getElementType();
  if (k.getElementType() != elt || v.getElementType() != elt ||
      o.getElementType() != elt)
    return failure();
  int64_t d = q.getDimSize(3);
  if (ShapedType::isDynamic(d) || k.getDimSize(3) != d ||
      ShapedType::isDynamic(v.getDimSize(3)))
    return failure();
  return success();
}

/// Folds a scale step into the chain: its constant into `scale`, its
/// run-time scalar onto `runtimeScales`.
static void addScale(AttentionChain &chain, const ScaleMatch &s) {
  chain.scale *= s.factor;
  chain.ops.insert(s.op);
  if (!s.runtime)
    return;
  chain.runtimeScales.push_back(s.runtime);
  // The one-element tensor goes with the multiplication once unused.
  for (Value operand : s.op->getOperands())
    if (auto t = operand.getDefiningOp<tensor::FromElementsOp>())
      chain.ops.insert(t);
}

namespace {
/// One step between the softmax input and Q K^T, outermost first.
struct ScoreStep {
  enum Kind { Cast, Scale, Mask, Mod } kind;
  std::optional<ScaleMatch> scale;
  /// The step as a score modifier: Mod steps, and constant Scale steps
  /// (which become part of the modifier when one is applied before them).
  std::optional<ScoreModStep> mod;
  bool infiniteFill = false;
};
} // namespace

/// Peels the score-side steps between the softmax input and Q K^T: casts,
/// scales, at most one mask (causal, or any other of positions) and score
/// modifier steps. The scales next to Q K^T are the op's scale; when a
/// modifier follows them, it takes every later step but the mask, which
/// must come last (a modifier of masked scores would change the -inf).
static LogicalResult matchScoreSteps(Value &x, AttentionChain &chain) {
  SmallVector<ScoreStep> steps;
  while (true) {
    if (auto cast = x.getDefiningOp<CastOp>()) {
      chain.ops.insert(cast);
      steps.push_back({ScoreStep::Cast, {}, {}});
      x = cast.getInput();
      continue;
    }
    if (std::optional<ScaleMatch> s = matchScale(x)) {
      Value ignored;
      std::optional<ScoreModStep> asMod;
      if (!s->runtime)
        asMod = matchScoreModStep(x, &ignored);
      steps.push_back({ScoreStep::Scale, s, asMod});
      x = s->input;
      continue;
    }
    bool masked = chain.causal || chain.mask;
    MaskMatch causal = matchMask(x);
    if (causal.kind == MaskKind::Causal) {
      if (masked)
        return failure();
      chain.causal = true;
      chain.maskOffset = causal.offset;
      chain.ops.insert(causal.ops.begin(), causal.ops.end());
      steps.push_back({ScoreStep::Mask, {}, {}, causal.infiniteFill});
      x = causal.input;
      continue;
    }
    if (std::optional<GeneralMask> mask = matchGeneralMask(x)) {
      if (masked)
        return failure();
      chain.ops.insert(mask->ops.begin(), mask->ops.end());
      steps.push_back({ScoreStep::Mask, {}, {}, mask->infiniteFill});
      x = mask->input;
      chain.mask = std::move(mask);
      continue;
    }
    if (causal.kind == MaskKind::Other) {
      LLVM_DEBUG(llvm::dbgs() << "  iota mask attnc cannot represent\n");
      return failure();
    }
    Value input;
    if (std::optional<ScoreModStep> mod = matchScoreModStep(x, &input)) {
      steps.push_back({ScoreStep::Mod, {}, mod});
      chain.ops.insert(mod->op);
      chain.ops.insert(mod->termOps.begin(), mod->termOps.end());
      x = input;
      continue;
    }
    break;
  }
  // The scales next to Q K^T (casts between them are dropped, as before).
  size_t inner = steps.size();
  while (inner > 0 && steps[inner - 1].kind != ScoreStep::Mask &&
         steps[inner - 1].kind != ScoreStep::Mod)
    --inner;
  for (size_t k = inner; k < steps.size(); ++k)
    if (steps[k].kind == ScoreStep::Scale)
      addScale(chain, *steps[k].scale);
  bool modified =
      llvm::any_of(ArrayRef(steps).take_front(inner),
                   [](const ScoreStep &s) { return s.kind == ScoreStep::Mod; });
  // A run-time scale seen so far multiplies the fill of any mask below it.
  bool runtimeScaleOutside = false, maskSeen = false;
  for (size_t k = 0; k < inner; ++k) {
    const ScoreStep &step = steps[k];
    if (step.kind == ScoreStep::Mask) {
      // -1e9 * t is a mask for t = 1 and an ordinary score for t = 1e-9:
      // the fused op masks with -inf whatever t is, so a finite fill under
      // a run-time scale is not provably a mask.
      if (runtimeScaleOutside && !step.infiniteFill) {
        LLVM_DEBUG(llvm::dbgs() << "  finite mask fill scaled at run time\n");
        return failure();
      }
      maskSeen = true;
      continue;
    }
    if (step.kind == ScoreStep::Mod && !maskSeen &&
        (chain.causal || chain.mask))
      return failure(); // a modifier applied to masked scores
    if (step.kind == ScoreStep::Scale) {
      runtimeScaleOutside |= static_cast<bool>(step.scale->runtime);
      if (!modified) {
        addScale(chain, *step.scale);
        continue;
      }
      // Inside a modifier a scale is one of its steps: constant, and
      // positive when the mask comes after it.
      if (!step.mod || (!maskSeen && !(step.scale->factor > 0.0)))
        return failure();
      chain.ops.insert(step.scale->op);
    }
  }
  if (modified)
    for (size_t k = inner; k-- > 0;)
      if (steps[k].kind == ScoreStep::Mod || steps[k].kind == ScoreStep::Scale)
        chain.mods.push_back(*steps[k].mod);
  return success();
}

/// The causal mask of the fused op: its alignment and, bottom-right, the
/// sequence lengths to reuse. A null length is rebuilt from the fused op's
/// own operands: one read off a value the rewrite removes (a repeated K,
/// say) would keep that value alive.
struct CausalPlan {
  CausalMask::Alignment alignment = CausalMask::Alignment::TopLeft;
  Value seqQ, seqKV;
};

/// `v` with index casts stripped.
static Value stripIndexCasts(Value v) {
  while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  return v;
}

/// True when `v` is `tensor.dim t, d` for one of the (t, d) in `extents`.
static bool isExtentOf(Value v, ArrayRef<std::pair<Value, int64_t>> extents) {
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return false;
  std::optional<int64_t> index = dim.getConstantIndex();
  return llvm::any_of(extents, [&](std::pair<Value, int64_t> e) {
    return dim.getSource() == e.first && index == e.second;
  });
}

/// Decides what the chain's shifted causal mask is. An offset of 0 is
/// top-left; an offset that is Skv - Sq is bottom-right, proven either on
/// the IR (`tensor.dim` of the key side minus `tensor.dim` of the query
/// side, through index casts) or, for a constant offset, on static shapes.
/// Any other shift is not a causal mask attnc.attention can skip work for.
static FailureOr<CausalPlan> planCausalMask(const AttentionChain &chain,
                                            MatmulOp root) {
  CausalPlan plan;
  if (!chain.maskOffset)
    return plan;
  const IndexOffset &offset = *chain.maskOffset;
  int64_t sq = cast<RankedTensorType>(chain.query.getType()).getDimSize(2);
  int64_t skv = cast<RankedTensorType>(chain.key.getType()).getDimSize(2);
  if (!offset.scalar) {
    int64_t delta = offset.sign * offset.constant;
    if (delta == 0)
      return plan;
    if (ShapedType::isDynamic(sq) || ShapedType::isDynamic(skv) ||
        delta != skv - sq)
      return failure();
    plan.alignment = CausalMask::Alignment::BottomRight;
    return plan;
  }
  auto sub = stripIndexCasts(offset.scalar).getDefiningOp<arith::SubIOp>();
  if (!sub)
    return failure();
  // The inputs whose dim 2 is S_q, resp. S_kv, before and after the scale
  // and head repeats the rewrite strips. (Extents of the scores would be
  // users of the scores, which scoresOnlyFeedChain has already refused.)
  MatmulOp qk = chain.scores;
  SmallVector<std::pair<Value, int64_t>> queryExtents = {{chain.query, 2},
                                                         {qk.getLhs(), 2}};
  SmallVector<std::pair<Value, int64_t>> keyExtents = {
      {chain.key, 2}, {chain.value, 2}, {qk.getRhs(), 2}, {root.getRhs(), 2}};
  // sign * (a - b) = Skv - Sq: a is Skv and b Sq, or the other way round
  // for a subtracted offset.
  Value a = stripIndexCasts(sub.getLhs()), b = stripIndexCasts(sub.getRhs());
  if (offset.sign < 0)
    std::swap(a, b);
  if (!isExtentOf(a, keyExtents) || !isExtentOf(b, queryExtents))
    return failure();
  plan.alignment = CausalMask::Alignment::BottomRight;
  if (isExtentOf(a, {{chain.key, 2}, {chain.value, 2}}))
    plan.seqKV = a;
  if (isExtentOf(b, {{chain.query, 2}}))
    plan.seqQ = b;
  return plan;
}

/// Rewrites matmul(softmax(mask(scale * Q K^T)), V) into attnc.attention.
struct FuseAttentionPattern : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp root,
                                PatternRewriter &rewriter) const override {
    if (root.getTransposeA() || root.getTransposeB())
      return rewriter.notifyMatchFailure(root, "P V must not be transposed");
    AttentionChain chain;
    chain.value = root.getRhs();

    // P, possibly cast (f32 probabilities rounded to V's type) and dropped
    // out, before or after the cast.
    Value p = root.getLhs();
    auto stripCasts = [&] {
      while (auto cast = p.getDefiningOp<CastOp>()) {
        chain.ops.insert(cast);
        p = cast.getInput();
      }
    };
    stripCasts();
    if ((chain.dropout = p.getDefiningOp<DropoutOp>())) {
      chain.ops.insert(chain.dropout);
      p = chain.dropout.getInput();
      stripCasts();
    }
    std::optional<Value> x = matchSoftmax(p, chain.ops);
    if (!x)
      return rewriter.notifyMatchFailure(root, "lhs is not a softmax");
    Value scores = *x;
    if (failed(matchScoreSteps(scores, chain)))
      return rewriter.notifyMatchFailure(root, "unsupported score step");

    chain.scores = scores.getDefiningOp<MatmulOp>();
    if (!chain.scores || chain.scores.getTransposeA() ||
        !chain.scores.getTransposeB())
      return rewriter.notifyMatchFailure(root, "scores are not Q K^T");
    chain.ops.insert(chain.scores);
    chain.query = chain.scores.getLhs();
    chain.key = chain.scores.getRhs();

    // A scale folded into Q; kept in place when the scaled Q has other uses.
    if (std::optional<ScaleMatch> s = matchScale(chain.query);
        s && chain.query.hasOneUse()) {
      addScale(chain, *s);
      chain.query = s->input;
    }
    stripHeadRepeats(chain);

    if (!(chain.scale > 0.0) || !std::isfinite(chain.scale))
      return rewriter.notifyMatchFailure(root, "scale is not positive");
    if (failed(checkTypes(chain, root)))
      return rewriter.notifyMatchFailure(root, "types attnc.attention rejects");
    if (!scoresOnlyFeedChain(chain, root))
      return rewriter.notifyMatchFailure(root, "scores have other users");
    FailureOr<CausalPlan> causal = planCausalMask(chain, root);
    if (failed(causal))
      return rewriter.notifyMatchFailure(
          root, "shifted mask that is neither top-left nor bottom-right");

    LLVM_DEBUG(llvm::dbgs() << "fusing attention at " << root.getLoc()
                            << " scale=" << chain.scale
                            << " runtime scales=" << chain.runtimeScales.size()
                            << " causal=" << chain.causal << "\n");
    Value runtimeScale =
        buildRuntimeScale(rewriter, root.getLoc(), chain.runtimeScales);
    // Built in front of the op: the mask region reads them from above.
    CausalMask causalMask =
        materialize(rewriter, root.getLoc(), *causal, chain.query, chain.key);
    DropoutOp dropout = chain.dropout;
    auto attention = AttentionOp::create(
        rewriter, root.getLoc(), root.getType(), chain.query, chain.key,
        chain.value, runtimeScale, /*kv_lengths=*/Value(),
        dropout ? dropout.getSeed() : Value(),
        dropout ? dropout.getOffset() : Value(),
        rewriter.getF64FloatAttr(chain.scale),
        dropout ? dropout.getProbabilityAttr() : FloatAttr(),
        /*config=*/nullptr);
    if (chain.causal)
      buildCausalMask(rewriter, root.getLoc(), attention.getMask(), causalMask);
    if (chain.mask)
      buildMaskRegion(rewriter, root.getLoc(), attention.getMask(),
                      chain.mask->keep, chain.mask->negate, chain.mask->scores);
    if (!chain.mods.empty())
      buildScoreRegion(rewriter, root.getLoc(), attention.getScore(),
                       chain.mods, chain.scores.getType());
    rewriter.replaceOp(root, attention.getResult());
    eraseDeadChain(rewriter, chain.ops);
    return success();
  }

private:
  /// The CausalMask of `plan`, its missing lengths built in front of the
  /// attention op from `query` and `key`: constants where static.
  static CausalMask materialize(PatternRewriter &rewriter, Location loc,
                                const CausalPlan &plan, Value query,
                                Value key) {
    CausalMask mask{plan.alignment, plan.seqQ, plan.seqKV};
    if (plan.alignment != CausalMask::Alignment::BottomRight)
      return mask;
    auto seqLength = [&](Value t) -> Value {
      int64_t n = cast<RankedTensorType>(t.getType()).getDimSize(2);
      if (!ShapedType::isDynamic(n))
        return arith::ConstantIndexOp::create(rewriter, loc, n);
      return tensor::DimOp::create(rewriter, loc, t, 2);
    };
    if (!mask.seqQ)
      mask.seqQ = seqLength(query);
    if (!mask.seqKV)
      mask.seqKV = seqLength(key);
    return mask;
  }

  /// The product of the run-time scalars as one f32 (null when there are
  /// none). Narrower floats widen exactly; the product rounds once per
  /// factor, as the graph's successive multiplications do.
  static Value buildRuntimeScale(PatternRewriter &rewriter, Location loc,
                                 ArrayRef<Value> scalars) {
    Value product;
    Type f32 = rewriter.getF32Type();
    for (Value s : scalars) {
      if (s.getType() != f32)
        s = arith::ExtFOp::create(rewriter, loc, f32, s);
      product =
          product ? arith::MulFOp::create(rewriter, loc, product, s).getResult()
                  : s;
    }
    return product;
  }

  /// Erases the chain's ops once they have no users, consumers first. Ops
  /// still used elsewhere (a repeated K with another reader, a shared mask)
  /// stay.
  static void eraseDeadChain(PatternRewriter &rewriter, MatchedOps &ops) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *op : ops) {
        if (!op->use_empty())
          continue;
        rewriter.eraseOp(op);
        ops.remove(op);
        changed = true;
        break;
      }
    }
  }
};

struct AttncFuseAttentionPass
    : attnc::impl::AttncFuseAttentionBase<AttncFuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    // A mask may take a run-time offset from a dim query (bottom-right
    // alignment); one past the shape is refused before it reaches a region.
    if (failed(checkDimIndices(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    // Only the fusion: no folding, constant hoisting or region
    // simplification, so that chains left alone stay exactly as written.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void attnc::populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttentionPattern>(patterns.getContext());
}
