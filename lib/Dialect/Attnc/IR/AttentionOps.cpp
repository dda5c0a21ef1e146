//===- AttentionOps.cpp - verifiers of matmul, attention and fusion ops ---===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Rules that relate operands of the contraction ops: matmul's batch and
// contraction dimensions, the heads of attention (GQA), the tile shapes of
// the online form, and the body of attnc.fusion.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncOps.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

/// Two extents that must agree: equal, or at least one dynamic.
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

LogicalResult MatmulOp::verify() {
  RankedTensorType a = getLhs().getType(), b = getRhs().getType();
  RankedTensorType r = getResult().getType();
  int64_t rank = a.getRank();
  if (rank < 2)
    return emitOpError() << "operand 'lhs' must have rank >= 2, got " << rank;
  if (b.getRank() != rank || r.getRank() != rank)
    return emitOpError() << "operands 'lhs', 'rhs' and the result must have "
                            "equal ranks, got "
                         << rank << ", " << b.getRank() << " and "
                         << r.getRank();
  if (a.getElementType() != b.getElementType())
    return emitOpError("operands 'lhs' and 'rhs' must have the same element "
                       "type");
  if (r.getElementType() != a.getElementType() && !r.getElementType().isF32())
    return emitOpError("result element type must be the operands' or f32");
  for (int64_t i = 0; i < rank - 2; ++i)
    if (!compatible(a.getDimSize(i), b.getDimSize(i)) ||
        !compatible(a.getDimSize(i), r.getDimSize(i)))
      return emitOpError() << "batch dimension " << i << " differs: lhs "
                           << dimStr(a.getDimSize(i)) << ", rhs "
                           << dimStr(b.getDimSize(i)) << ", result "
                           << dimStr(r.getDimSize(i));
  int64_t m = a.getDimSize(getTransposeA() ? rank - 1 : rank - 2);
  int64_t ka = a.getDimSize(getTransposeA() ? rank - 2 : rank - 1);
  int64_t kb = b.getDimSize(getTransposeB() ? rank - 1 : rank - 2);
  int64_t n = b.getDimSize(getTransposeB() ? rank - 2 : rank - 1);
  if (!compatible(ka, kb))
    return emitOpError() << "contraction dimension of 'lhs' (" << dimStr(ka)
                         << ") differs from that of 'rhs' (" << dimStr(kb)
                         << ")";
  if (!compatible(m, r.getDimSize(rank - 2)) ||
      !compatible(n, r.getDimSize(rank - 1)))
    return emitOpError() << "result must be [..., " << dimStr(m) << ", "
                         << dimStr(n) << "] (rows of 'lhs', columns of 'rhs')";
  return success();
}

LogicalResult RepeatInterleaveOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  int64_t dim = getDimension();
  if (dim >= in.getRank())
    return emitOpError() << "attribute 'dimension' (" << dim
                         << ") must be less than the rank of 'input' ("
                         << in.getRank() << ")";
  if (in.getRank() != out.getRank() ||
      in.getElementType() != out.getElementType())
    return emitOpError("result must have the rank and element type of "
                       "'input'");
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t want = in.getDimSize(i);
    if (i == dim && !ShapedType::isDynamic(want))
      want *= getRepeats();
    if (!compatible(want, out.getDimSize(i)))
      return emitOpError() << "result dimension " << i << " must be "
                           << dimStr(want) << ", got "
                           << dimStr(out.getDimSize(i));
  }
  return success();
}

/// The softmax scale multiplies every score: it must be a positive, finite
/// number (NaN, infinity or 0 would make every row NaN or uniform).
static LogicalResult verifyScale(Operation *op, APFloat scale) {
  double v = scale.convertToDouble();
  if (!(v > 0.0) || !std::isfinite(v))
    return op->emitOpError()
           << "attribute 'scale' must be positive and finite, got " << v;
  return success();
}

/// The rules Q [B, H, Sq, d], K [B, Hkv, Skv, d] and V [B, Hkv, Skv, dv]
/// share in the forward and the backward: static head dims, K's equal to
/// Q's, one batch, K and V alike, H a multiple of Hkv.
static LogicalResult verifyAttentionHeads(Operation *op, RankedTensorType q,
                                          RankedTensorType k,
                                          RankedTensorType v) {
  auto emitOpError = [&](const Twine &msg = {}) {
    return op->emitOpError(msg);
  };
  if (ShapedType::isDynamic(q.getDimSize(3)) ||
      ShapedType::isDynamic(v.getDimSize(3)))
    return emitOpError("head dimensions of 'query' and 'value' must be static");
  if (k.getDimSize(3) != q.getDimSize(3))
    return emitOpError() << "head dimension of 'key' ("
                         << dimStr(k.getDimSize(3))
                         << ") must equal that of 'query' (" << q.getDimSize(3)
                         << ")";
  if (!compatible(k.getDimSize(0), q.getDimSize(0)) ||
      !compatible(v.getDimSize(0), q.getDimSize(0)))
    return emitOpError("batch dimension of 'key' and 'value' must equal "
                       "that of 'query'");
  if (!compatible(k.getDimSize(1), v.getDimSize(1)) ||
      !compatible(k.getDimSize(2), v.getDimSize(2)))
    return emitOpError("'key' and 'value' must have the same heads and "
                       "sequence length");
  int64_t h = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || h % hkv != 0))
    return emitOpError() << "query heads (" << h
                         << ") must be a multiple of key/value heads (" << hkv
                         << ")";
  return success();
}

/// Dropout's operands come together with its probability, in (0, 1): p = 0
/// is no dropout (the fusion drops the op), p = 1 keeps nothing.
static LogicalResult verifyDropout(Operation *op, ValueRange operands,
                                   ArrayRef<StringRef> names,
                                   std::optional<APFloat> probability) {
  bool any = llvm::any_of(operands, [](Value v) { return bool(v); });
  for (auto [v, name] : llvm::zip(operands, names))
    if (any && !v)
      return op->emitOpError() << "has dropout operands without '" << name
                               << "'; dropout takes all of them ("
                               << llvm::join(names, ", ") << ")";
  if (any != probability.has_value())
    return op->emitOpError(
        any ? "has dropout operands but no 'dropout_probability'"
            : "has 'dropout_probability' but no dropout operands");
  if (probability) {
    double p = probability->convertToDouble();
    if (!(p > 0.0 && p < 1.0))
      return op->emitOpError()
             << "attribute 'dropout_probability' must be in (0, 1), got " << p;
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), o = getResult().getType();
  StringRef names[] = {"query", "key", "value"};
  RankedTensorType types[] = {q, k, v};
  for (auto [name, t] : llvm::zip(names, types))
    if (t.getRank() != 4)
      return emitOpError() << "operand '" << name
                           << "' must have rank 4 [batch, heads, seq, head_dim]"
                              ", got rank "
                           << t.getRank();
  if (o.getRank() != 4)
    return emitOpError("result must have rank 4 [batch, heads, seq, head_dim]");
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType() ||
      o.getElementType() != q.getElementType())
    return emitOpError("operands 'query', 'key', 'value' and the result must "
                       "have the same element type");
  if (failed(verifyAttentionHeads(*this, q, k, v)))
    return failure();
  int64_t h = q.getDimSize(1);
  if (!compatible(o.getDimSize(0), q.getDimSize(0)) ||
      !compatible(o.getDimSize(1), h) ||
      !compatible(o.getDimSize(2), q.getDimSize(2)) ||
      o.getDimSize(3) != v.getDimSize(3))
    return emitOpError("result must be [batch, query heads, query seq, value "
                       "head_dim]");
  auto kRagged = getKey().getDefiningOp<RaggedViewOp>();
  auto vRagged = getValue().getDefiningOp<RaggedViewOp>();
  if ((kRagged || vRagged) &&
      (!kRagged || !vRagged || kRagged.getStarts() != vRagged.getStarts() ||
       kRagged.getEnds() != vRagged.getEnds()))
    return emitOpError("operands 'key' and 'value' must both be ragged "
                       "views of the same sequences ('attnc.ragged_view' "
                       "with the same starts and ends) or neither");
  if (getKvLengths() && kRagged)
    return emitOpError("operand 'kv_lengths' bounds the keys of a padded "
                       "cache; a ragged K ('attnc.ragged_view') has its "
                       "sequences' lengths already");
  if (Value lengths = getKvLengths()) {
    auto t = cast<RankedTensorType>(lengths.getType());
    if (t.getRank() != 1 || !compatible(t.getDimSize(0), q.getDimSize(0)))
      return emitOpError("operand 'kv_lengths' must be [batch], one K/V "
                         "length per sequence of 'query'");
  }
  if (failed(verifyDropout(*this, {getDropoutSeed(), getDropoutOffset()},
                           {"seed", "offset"}, getDropoutProbability())))
    return failure();
  return verifyScale(getOperation(), getScale());
}

LogicalResult PagedKVOp::verify() {
  auto pool = cast<RankedTensorType>(getPool().getType());
  auto table = cast<RankedTensorType>(getBlockTable().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t page = getPageSize();
  if (page < 16 || page > 256 || !llvm::isPowerOf2_64(page))
    return emitOpError() << "page_size must be a power of two from 16 to "
                            "256, got "
                         << page;
  if (pool.getRank() != 4 || !compatible(pool.getDimSize(1), page))
    return emitOpError() << "operand 'pool' must be [num_blocks, page_size = "
                         << page << ", heads, head_dim]";
  if (table.getRank() != 2)
    return emitOpError("operand 'block_table' must be [batch, max_blocks]");
  int64_t blocks = table.getDimSize(1);
  int64_t rows =
      ShapedType::isDynamic(blocks) ? ShapedType::kDynamic : blocks * page;
  if (result.getRank() != 4 ||
      result.getElementType() != pool.getElementType() ||
      !compatible(result.getDimSize(0), table.getDimSize(0)) ||
      !compatible(result.getDimSize(1), pool.getDimSize(2)) ||
      result.getDimSize(2) != rows ||
      result.getDimSize(3) != pool.getDimSize(3) ||
      ShapedType::isDynamic(pool.getDimSize(3)))
    return emitOpError("result must be [batch, heads, max_blocks * "
                       "page_size, head_dim] of the pool's element type, "
                       "the head dimension static");
  return success();
}

/// `starts` and `ends` of a ragged batch: [B] each.
static LogicalResult verifyRaggedBounds(Operation *op, Value starts, Value ends,
                                        int64_t batch) {
  auto s = cast<RankedTensorType>(starts.getType());
  auto e = cast<RankedTensorType>(ends.getType());
  if (s.getRank() != 1 || e.getRank() != 1 ||
      !compatible(s.getDimSize(0), e.getDimSize(0)) ||
      !compatible(s.getDimSize(0), batch))
    return op->emitOpError("operands 'starts' and 'ends' must be [batch], "
                           "one row range per sequence");
  return success();
}

LogicalResult RaggedViewOp::verify() {
  auto packed = cast<RankedTensorType>(getPacked().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (packed.getRank() != 3)
    return emitOpError("operand 'packed' must be [rows, heads, head_dim]");
  if (result.getRank() != 4 ||
      result.getElementType() != packed.getElementType() ||
      !compatible(result.getDimSize(1), packed.getDimSize(1)) ||
      !compatible(result.getDimSize(2), packed.getDimSize(0)) ||
      result.getDimSize(3) != packed.getDimSize(2) ||
      ShapedType::isDynamic(packed.getDimSize(2)))
    return emitOpError("result must be [batch, heads, rows, head_dim] of "
                       "the packed rows' element type, the head dimension "
                       "static");
  return verifyRaggedBounds(*this, getStarts(), getEnds(),
                            result.getDimSize(0));
}

LogicalResult RaggedPackOp::verify() {
  auto batch = cast<RankedTensorType>(getBatch().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (batch.getRank() != 4)
    return emitOpError("operand 'batch' must be [batch, heads, rows, "
                       "head_dim]");
  if (result.getRank() != 3 ||
      result.getElementType() != batch.getElementType() ||
      !compatible(result.getDimSize(0), batch.getDimSize(2)) ||
      !compatible(result.getDimSize(1), batch.getDimSize(1)) ||
      result.getDimSize(2) != batch.getDimSize(3))
    return emitOpError("result must be [rows, heads, head_dim] of the "
                       "batch's element type");
  return verifyRaggedBounds(*this, getStarts(), getEnds(), batch.getDimSize(0));
}

LogicalResult OnlineAttentionOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), acc = getAcc().getType(),
                   m = getMax().getType(), l = getSum().getType();
  if (q.getRank() != 2 || k.getRank() != 2 || v.getRank() != 2 ||
      acc.getRank() != 2)
    return emitOpError("operands 'query', 'key', 'value' and 'acc' must be "
                       "rank-2 tiles");
  if (m.getRank() != 1 || l.getRank() != 1)
    return emitOpError("operands 'max' and 'sum' must be rank-1 row vectors");
  if (q.getDimSize(1) != k.getDimSize(1) ||
      ShapedType::isDynamic(q.getDimSize(1)))
    return emitOpError("head dimension of 'query' and 'key' must be equal and "
                       "static");
  if (!compatible(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError("'key' and 'value' tiles must have the same rows");
  if (!compatible(acc.getDimSize(0), q.getDimSize(0)) ||
      acc.getDimSize(1) != v.getDimSize(1) ||
      !compatible(m.getDimSize(0), q.getDimSize(0)) ||
      !compatible(l.getDimSize(0), q.getDimSize(0)))
    return emitOpError("'acc' must be [query rows, value head_dim] and "
                       "'max', 'sum' [query rows]");
  if (!acc.getElementType().isF32() || !m.getElementType().isF32() ||
      !l.getElementType().isF32())
    return emitOpError("'acc', 'max' and 'sum' must be f32: the recurrence "
                       "runs in f32");
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError("'query', 'key' and 'value' must have the same element "
                       "type");
  if (failed(verifyDropout(*this,
                           {getDropoutSeed(), getDropoutOffset(),
                            getDropoutRow(), getDropoutRowWords()},
                           {"seed", "offset", "row", "row_words"},
                           getDropoutProbability())))
    return failure();
  return verifyScale(getOperation(), getScale());
}

LogicalResult OnlineAttentionFinalizeOp::verify() {
  RankedTensorType acc = getAcc().getType(), m = getMax().getType(),
                   l = getSum().getType(), o = getResult().getType(),
                   lse = getLogsumexp().getType();
  if (acc.getRank() != 2 || m.getRank() != 1 || l.getRank() != 1)
    return emitOpError("'acc' must be rank 2, 'max' and 'sum' rank 1");
  if (o.getShape() != acc.getShape())
    return emitOpError("result must have the shape of 'acc'");
  if (lse != m || l != m)
    return emitOpError("'sum' and the logsumexp result must have the type of "
                       "'max'");
  if (!compatible(m.getDimSize(0), acc.getDimSize(0)))
    return emitOpError("'max' must have one entry per row of 'acc'");
  return success();
}

LogicalResult OnlineAttentionMergeOp::verify() {
  RankedTensorType acc = getAcc().getType(), m = getMax().getType(),
                   l = getSum().getType(), o = getPartial().getType(),
                   lse = getPartialLse().getType();
  if (acc.getRank() != 2 || m.getRank() != 1 || l.getRank() != 1)
    return emitOpError("'acc' must be rank 2, 'max' and 'sum' rank 1");
  if (!acc.getElementType().isF32() || !o.getElementType().isF32() || m != l ||
      lse != m || !m.getElementType().isF32())
    return emitOpError("'acc', 'partial' and the row vectors 'max', 'sum' "
                       "and 'partial_lse' must be f32, the row vectors of "
                       "one type");
  if (o.getRank() != 2 || !compatible(o.getDimSize(0), acc.getDimSize(0)) ||
      !compatible(o.getDimSize(1), acc.getDimSize(1)))
    return emitOpError("'partial' must have the shape of 'acc' (the same "
                       "rows and value columns)");
  if (!compatible(m.getDimSize(0), acc.getDimSize(0)))
    return emitOpError("'max' must have one entry per row of 'acc'");
  return success();
}

LogicalResult IdTileBoundsOp::verify() {
  auto q = cast<RankedTensorType>(getQueryIds().getType());
  auto k = cast<RankedTensorType>(getKeyIds().getType());
  if (q.getElementType() != k.getElementType())
    return emitOpError() << "operands 'query_ids' and 'key_ids' must hold ids "
                            "of one type, got "
                         << q.getElementType() << " and " << k.getElementType();
  struct Side {
    StringRef ids, indices, dim;
    RankedTensorType type;
    size_t numIndices;
    int64_t at;
  } sides[] = {{"query_ids", "query_indices", "query_dim", q,
                getQueryIndices().size(), static_cast<int64_t>(getQueryDim())},
               {"key_ids", "key_indices", "key_dim", k, getKeyIndices().size(),
                static_cast<int64_t>(getKeyDim())}};
  for (const Side &s : sides) {
    if (s.at >= s.type.getRank())
      return emitOpError() << "'" << s.dim << "' (" << s.at
                           << ") must name a dimension of '" << s.ids
                           << "' (rank " << s.type.getRank() << ")";
    if (static_cast<int64_t>(s.numIndices) + 1 != s.type.getRank())
      return emitOpError() << "'" << s.indices << "' must index every "
                           << "dimension of '" << s.ids << "' but '" << s.dim
                           << "': expected " << s.type.getRank() - 1 << ", got "
                           << s.numIndices;
  }
  return success();
}

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body must have one argument per input ("
                         << getInputs().size() << "), got "
                         << body.getNumArguments();
  for (auto [i, in, arg] :
       llvm::enumerate(getInputs().getTypes(), body.getArgumentTypes()))
    if (in != arg)
      return emitOpError() << "body argument " << i << " has type " << arg
                           << " but input " << i << " has type " << in;
  // The terminator is an attnc.yield: YieldOp's HasParent and the generic
  // region checks that run before this one guarantee it.
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("attnc.yield operand types must equal the fusion's "
                       "result types");
  for (Operation &op : body.without_terminator())
    if (!isFusibleElementwiseOp(&op) && !isa<arith::ConstantOp>(op))
      return op.emitOpError("is not an elementwise, broadcast or row op and "
                            "cannot be inside attnc.fusion");
  return success();
}

/// The mask and score regions of the attention ops: the block signatures of
/// AttentionOp's description, one attnc.yield of an i1 (mask) or an f32
/// (score), and no side effects: the back-end evaluates them once per score
/// element, in any order.
static LogicalResult verifyAttentionRegions(Operation *op, Region &mask,
                                            Region &score) {
  auto checkRegion = [&](Region &r, StringRef name, ArrayRef<Type> args,
                         Type yielded) -> LogicalResult {
    if (r.empty())
      return success();
    Block &body = r.front();
    if (body.getArgumentTypes() != TypeRange(args)) {
      std::string want;
      llvm::raw_string_ostream os(want);
      llvm::interleaveComma(args, os);
      return op->emitOpError()
             << "region '" << name << "' must take (" << want << ")";
    }
    auto yield = dyn_cast<YieldOp>(body.getTerminator());
    if (!yield || yield.getValues().getTypes() != TypeRange(yielded))
      return op->emitOpError()
             << "region '" << name << "' must end in attnc.yield of one "
             << yielded;
    for (Operation &inner : body.without_terminator())
      if (!isMemoryEffectFree(&inner))
        return inner.emitOpError() << "has side effects and cannot be in the "
                                   << name << " region of an attention op";
    return success();
  };
  Builder b(op->getContext());
  Type index = b.getIndexType(), f32 = b.getF32Type();
  SmallVector<Type> maskArgs(kMaskRegionArgs, index);
  SmallVector<Type> scoreArgs(kScoreRegionArgs, index);
  scoreArgs[0] = f32;
  if (failed(checkRegion(mask, "mask", maskArgs, b.getI1Type())) ||
      failed(checkRegion(score, "score", scoreArgs, f32)))
    return failure();
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  return verifyAttentionRegions(*this, getMask(), getScore());
}

LogicalResult OnlineAttentionOp::verifyRegions() {
  return verifyAttentionRegions(*this, getMask(), getScore());
}

//===----------------------------------------------------------------------===//
// Attention backward
//===----------------------------------------------------------------------===//

/// The gradient ops' regions: the forward's mask and score regions, and
/// the score's derivative with the score's signature, present with it.
static LogicalResult verifyGradRegions(Operation *op, Region &mask,
                                       Region &score, Region &scoreGrad) {
  if (score.empty() != scoreGrad.empty())
    return op->emitOpError("regions 'score' and 'score_grad' must both be "
                           "present or both absent: the backward of a score "
                           "modifier needs its derivative");
  Region noScore;
  if (failed(verifyAttentionRegions(op, mask, score)) ||
      failed(verifyAttentionRegions(op, noScore, scoreGrad)))
    return failure();
  return success();
}

LogicalResult AttentionGradOp::verifyRegions() {
  return verifyGradRegions(*this, getMask(), getScore(), getScoreGrad());
}

LogicalResult OnlineAttentionGradOp::verifyRegions() {
  return verifyGradRegions(*this, getMask(), getScore(), getScoreGrad());
}

LogicalResult AttentionGradOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), dO = getOutGrad().getType(),
                   lse = getLogsumexp().getType(), dl = getDelta().getType(),
                   dq = getQueryGrad().getType(), dk = getKeyGrad().getType(),
                   dv = getValueGrad().getType();
  StringRef names[] = {"query", "key", "value", "out_grad"};
  RankedTensorType types[] = {q, k, v, dO};
  for (auto [name, t] : llvm::zip(names, types))
    if (t.getRank() != 4)
      return emitOpError() << "operand '" << name
                           << "' must have rank 4 [batch, heads, seq, head_dim]"
                              ", got rank "
                           << t.getRank();
  Type elem = q.getElementType();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      dO.getElementType() != elem)
    return emitOpError("operands 'query', 'key', 'value' and 'out_grad' must "
                       "have the same element type");
  if (failed(verifyAttentionHeads(*this, q, k, v)))
    return failure();
  int64_t h = q.getDimSize(1);
  auto sameRows = [&](RankedTensorType t) {
    return compatible(t.getDimSize(0), q.getDimSize(0)) &&
           compatible(t.getDimSize(1), h) &&
           compatible(t.getDimSize(2), q.getDimSize(2));
  };
  if (!sameRows(dO) || dO.getDimSize(3) != v.getDimSize(3))
    return emitOpError("operand 'out_grad' must be [batch, query heads, query "
                       "seq, value head_dim] like the forward's result");
  if (lse.getRank() != 3 || !sameRows(lse) || !lse.getElementType().isF32())
    return emitOpError("operand 'logsumexp' must be f32 [batch, query heads, "
                       "query seq]");
  if (dl.getRank() != 4 || !sameRows(dl) || dl.getDimSize(3) != 1 ||
      !dl.getElementType().isF32())
    return emitOpError("operand 'delta' must be f32 [batch, query heads, query "
                       "seq, 1] (attnc.reduce_sum of out_grad * result)");
  if (dq.getShape() != q.getShape() || !dq.getElementType().isF32())
    return emitOpError("result 'query_grad' must be f32 with the shape of "
                       "'query'");
  if (dk != k || dv != v)
    return emitOpError("results 'key_grad' and 'value_grad' must have the "
                       "types of 'key' and 'value'");
  return verifyScale(getOperation(), getScale());
}

LogicalResult OnlineAttentionGradOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), dO = getOutGrad().getType(),
                   lse = getLogsumexp().getType(), dl = getDelta().getType(),
                   dk = getKeyAcc().getType(), dv = getValueAcc().getType(),
                   dq = getQueryGrad().getType();
  if (q.getRank() != 2 || k.getRank() != 2 || v.getRank() != 2 ||
      dO.getRank() != 2 || dk.getRank() != 2 || dv.getRank() != 2 ||
      dq.getRank() != 2)
    return emitOpError("operands 'query', 'key', 'value', 'out_grad', "
                       "'key_acc', 'value_acc' and the result 'query_grad' "
                       "must be rank-2 tiles");
  if (lse.getRank() != 1 || dl.getRank() != 1)
    return emitOpError("operands 'logsumexp' and 'delta' must be rank-1 row "
                       "vectors");
  if (q.getDimSize(1) != k.getDimSize(1) ||
      ShapedType::isDynamic(q.getDimSize(1)) ||
      ShapedType::isDynamic(v.getDimSize(1)))
    return emitOpError("head dimension of 'query' and 'key' must be equal and "
                       "static, and that of 'value' static");
  Type elem = q.getElementType();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      dO.getElementType() != elem)
    return emitOpError("'query', 'key', 'value' and 'out_grad' must have the "
                       "same element type");
  if (!compatible(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError("'key' and 'value' tiles must have the same rows");
  int64_t rows = q.getDimSize(0);
  if (!compatible(dO.getDimSize(0), rows) ||
      dO.getDimSize(1) != v.getDimSize(1) ||
      !compatible(lse.getDimSize(0), rows) ||
      !compatible(dl.getDimSize(0), rows))
    return emitOpError("'out_grad' must be [query rows, value head_dim] and "
                       "'logsumexp', 'delta' [query rows]");
  if (!compatible(dk.getDimSize(0), k.getDimSize(0)) ||
      dk.getDimSize(1) != k.getDimSize(1) ||
      !compatible(dv.getDimSize(0), v.getDimSize(0)) ||
      dv.getDimSize(1) != v.getDimSize(1))
    return emitOpError("'key_acc' and 'value_acc' must have the shapes of the "
                       "'key' and 'value' tiles");
  if (!compatible(dq.getDimSize(0), rows) ||
      dq.getDimSize(1) != q.getDimSize(1))
    return emitOpError("result 'query_grad' must have the shape of 'query'");
  for (RankedTensorType t : {lse, dl, dk, dv, dq})
    if (!t.getElementType().isF32())
      return emitOpError("'logsumexp', 'delta', the accumulators and "
                         "'query_grad' must be f32");
  return verifyScale(getOperation(), getScale());
}

/// The slice `offsets` select in `dest` for a tile of type `tile`: one
/// offset per dimension of `dest`, the tile filling its trailing dimensions.
static LogicalResult verifyAccumulateSlice(Operation *op, RankedTensorType tile,
                                           RankedTensorType dest,
                                           size_t numOffsets) {
  if (tile.getElementType() != dest.getElementType() ||
      !tile.getElementType().isF32())
    return op->emitOpError("the tile and the destination must be f32: sums "
                           "are accumulated in f32");
  if (tile.getRank() > dest.getRank())
    return op->emitOpError() << "the tile (rank " << tile.getRank()
                             << ") must not have a higher rank than the "
                                "destination (rank "
                             << dest.getRank() << ")";
  if (static_cast<int64_t>(numOffsets) != dest.getRank())
    return op->emitOpError() << "needs one offset per dimension of the "
                                "destination ("
                             << dest.getRank() << "), got " << numOffsets;
  int64_t lead = dest.getRank() - tile.getRank();
  for (int64_t i = 0; i < tile.getRank(); ++i) {
    int64_t t = tile.getDimSize(i), d = dest.getDimSize(lead + i);
    if (!ShapedType::isDynamic(t) && !ShapedType::isDynamic(d) && t > d)
      return op->emitOpError() << "tile dimension " << i << " (" << t
                               << ") is larger than destination dimension "
                               << lead + i << " (" << d << ")";
  }
  return success();
}

LogicalResult AccumulateOp::verify() {
  return verifyAccumulateSlice(*this, getTile().getType(), getDest().getType(),
                               getOffsets().size());
}

LogicalResult ParallelAccumulateOp::verify() {
  if (!isa_and_nonnull<InParallelOpInterface>(getOperation()->getParentOp()))
    return emitOpError("must be in the terminator of a parallel loop "
                       "(scf.forall.in_parallel)");
  // scf.forall.in_parallel checks that `dest` is a shared output.
  return verifyAccumulateSlice(*this, getSource().getType(),
                               getDest().getType(), getOffsets().size());
}

MutableOperandRange ParallelAccumulateOp::getUpdatedDestinations() {
  return getDestMutable();
}

Operation *ParallelAccumulateOp::getIteratingParent() {
  // scf.forall.in_parallel sits in the loop it terminates.
  if (Operation *combining = getOperation()->getParentOp())
    return combining->getParentOp();
  return nullptr;
}
