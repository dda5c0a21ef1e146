//===- SplitKV.cpp - --attnc-split-kv -------------------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// FlashDecoding as a rewrite of the flash form: the K/V tiles of each row
// are cut into `splits` consecutive parts that run as parallel iterations
// of a partial form, each writing a normalized f32 output and logsumexp;
// a combine form merges them with the online softmax's own update rule
// (attnc.online_attention_merge). The split count is attnc.kv_split_count,
// which the host evaluates for its device. Everything stays in the IR the
// back-end lowers: the clamped loop bounds, the split index, the partials
// and the merge loop.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"

#include "FlashTiling.h"

#include "attnc/Target/TargetDescription.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace attnc {
#define GEN_PASS_DEF_ATTNCSPLITKV
#include "attnc/Dialect/Attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {

/// The parts of a forward flash form the rewrite reads.
struct ForwardForm {
  scf::ForallOp forall;
  FlashConfigAttr config;
  SmallVector<scf::ForOp> loops;
  OnlineAttentionFinalizeOp finalize;
  tensor::ParallelInsertSliceOp outInsert, lseInsert;
  Value key;
  /// Q as the steps read it (a packed form's packed view of it).
  Value query;
  /// The views that unpack O of a packed form (--attnc-pack-gqa):
  /// [B, Hkv, G * Sq, dv] -> [B, Hkv, G, Sq, dv] -> [B, H, Sq, dv].
  struct {
    tensor::ExpandShapeOp expand;
    tensor::CollapseShapeOp collapse;
  } unpack;
};

/// A forward flash form not split yet, or nothing: anything else (backward
/// forms, forms already split, partly written forms) is left alone.
std::optional<ForwardForm> readForwardForm(scf::ForallOp forall) {
  ForwardForm f;
  f.forall = forall;
  f.config = forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
  if (!f.config || forall.getNumResults() < 1 || forall.getNumResults() > 2 ||
      forall.getRank() != 3)
    return std::nullopt;
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (auto fin = dyn_cast<OnlineAttentionFinalizeOp>(op))
      f.finalize = fin;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto steps = loop.getBody()->getOps<OnlineAttentionOp>();
      if (steps.empty())
        return std::nullopt;
      f.loops.push_back(loop);
      if (!f.key) {
        f.key = (*steps.begin()).getKey();
        f.query = (*steps.begin()).getQuery();
      }
    }
  }
  if (!f.finalize || f.loops.empty() || !f.key)
    return std::nullopt;
  auto keySlice = f.key.getDefiningOp<tensor::ExtractSliceOp>();
  if (!keySlice)
    return std::nullopt;
  f.key = keySlice.getSource();
  if (auto querySlice = f.query.getDefiningOp<tensor::ExtractSliceOp>())
    f.query = querySlice.getSource();
  for (Operation &op : forall.getTerminator().getYieldingOps()) {
    auto ins = dyn_cast<tensor::ParallelInsertSliceOp>(op);
    if (!ins)
      return std::nullopt;
    if (ins.getSource() == f.finalize.getResult())
      f.outInsert = ins;
    else if (ins.getSource() == f.finalize.getLogsumexp())
      f.lseInsert = ins;
    else
      return std::nullopt;
  }
  // A split form's partial output has a split dimension in front.
  if (!f.outInsert || f.outInsert.getDestType().getRank() != 4)
    return std::nullopt;
  // A packed form's O is read through its unpacking views only (and its
  // logsumexp not at all: nothing unpacks it).
  Value out = forall.getResult(0);
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(
          out.hasOneUse() ? *out.getUsers().begin() : nullptr)) {
    auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(
        expand->hasOneUse() ? *expand->getUsers().begin() : nullptr);
    if (!collapse || expand.getResultType().getRank() != 5 ||
        (forall.getNumResults() == 2 && !forall.getResult(1).use_empty()))
      return std::nullopt;
    f.unpack.expand = expand;
    f.unpack.collapse = collapse;
  }
  return f;
}

Value indexValue(OpBuilder &b, Location loc, OpFoldResult v) {
  return getValueOrCreateConstantIndexOp(b, loc, v);
}

/// `tensor.parallel_insert_slice` of `tile` into `dest` at `prefix`
/// followed by the insert `like`'s offsets (sizes 1 for the prefix).
void insertWithPrefix(OpBuilder &b, Location loc, Value tile, Value dest,
                      ArrayRef<OpFoldResult> prefix,
                      tensor::ParallelInsertSliceOp like, IRMapping &map) {
  OpFoldResult unit = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets(prefix), sizes(prefix.size(), unit);
  auto mapped = [&](OpFoldResult v) -> OpFoldResult {
    if (auto value = dyn_cast<Value>(v))
      return map.lookupOrDefault(value);
    return v;
  };
  for (OpFoldResult o : like.getMixedOffsets())
    offsets.push_back(mapped(o));
  for (OpFoldResult s : like.getMixedSizes())
    sizes.push_back(mapped(s));
  tensor::ParallelInsertSliceOp::create(
      b, loc, tile, dest, offsets, sizes,
      SmallVector<OpFoldResult>(offsets.size(), unit));
}

struct AttncSplitKVPass : attnc::impl::AttncSplitKVBase<AttncSplitKVPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetDescription> target = lookupTargetDescription(chip);
    if (failed(target)) {
      getOperation()->emitError()
          << "unknown chip '" << chip << "' for --attnc-split-kv";
      return signalPassFailure();
    }
    sharedMemoryPerSM = target->sharedMemoryPerBlock;
    bytesInFlightPerSM = target->decodeBytesInFlightPerSM;
    if (maxSplits < 1 || maxSplits > 128 || ctasPerSM < 0 || combineRows < 1) {
      getOperation()->emitError()
          << "--attnc-split-kv needs 1 <= max-splits <= 128, ctas-per-sm >= 0 "
             "and combine-rows >= 1; got max-splits="
          << maxSplits.getValue() << ", ctas-per-sm=" << ctasPerSM.getValue()
          << ", combine-rows=" << combineRows.getValue();
      return signalPassFailure();
    }
    SmallVector<ForwardForm> forms;
    getOperation()->walk([&](scf::ForallOp forall) {
      if (std::optional<ForwardForm> f = readForwardForm(forall))
        forms.push_back(*f);
    });
    for (ForwardForm &f : forms) {
      FlatSymbolRefAttr twin = unsplit ? cloneUnsplit(f) : nullptr;
      scf::ForallOp partial = split(f);
      if (twin)
        partial->setAttr(kUnsplitAttrName, twin);
    }
  }

  /// `f`'s function cloned before the rewrite as `@<name>_unsplit` (a free
  /// name), when the form is the function's only kernel: the twin is then
  /// exactly one kernel whose inputs are the partial kernel's and whose
  /// outputs are the function's. Null when there is no twin to make.
  FlatSymbolRefAttr cloneUnsplit(ForwardForm &f) {
    auto fn = f.forall->getParentOfType<func::FuncOp>();
    if (!fn || f.forall->getParentOp() != fn)
      return nullptr;
    auto kernelForming = [](Operation &op) {
      return isa<FusionOp, scf::ForallOp, AttentionOp, AttentionGradOp>(op);
    };
    if (llvm::count_if(fn.getBody().getOps(), kernelForming) != 1)
      return nullptr;
    // A twin is a new function: only a pass over the module (not one
    // nested on the function) may add it.
    Operation *tableOp = SymbolTable::getNearestSymbolTable(fn);
    if (!tableOp || !getOperation()->isAncestor(tableOp))
      return nullptr;
    SymbolTable table(tableOp);
    std::string name = (fn.getSymName() + "_unsplit").str();
    if (!isKernelName(name) || table.lookup(name))
      return nullptr;
    func::FuncOp twin = fn.clone();
    twin.setSymName(name);
    table.insert(twin, std::next(Block::iterator(fn)));
    return FlatSymbolRefAttr::get(twin.getSymNameAttr());
  }

  int64_t sharedMemoryPerSM = 0;
  int64_t bytesInFlightPerSM = 0;

  /// The option, or the blocks of `f`'s config whose mma_sync tiles fit in
  /// one SM's shared memory, at most 2048 threads' worth, and no more than
  /// keep the target's K/V bytes in flight per SM: past that, more blocks
  /// only add their prologues, epilogues and partials.
  int64_t blocksPerSM(ForwardForm &f) {
    if (ctasPerSM > 0)
      return ctasPerSM;
    auto key = cast<RankedTensorType>(f.key.getType());
    int64_t d = key.getDimSize(3), bits = key.getElementTypeBitWidth();
    FlashConfigAttr c = f.config;
    int64_t bytes =
        mmaSyncSharedMemoryBytes(c.getBlockQ(), c.getBlockKV(), d, bits,
                                 c.getStages(), c.getInterleaveKV());
    int64_t byThreads = 2048 / (32 * c.getWarps());
    // The loads ahead of the tile a block computes: stages - 1 pairs, or
    // interleaved stages - 1 single tiles.
    int64_t tileBytes = c.getBlockKV() * d * bits / 8;
    int64_t inFlight = std::max<int64_t>(
        1, (c.getStages() - 1) * mmaSyncTilesPerStage(c.getInterleaveKV()) *
               tileBytes);
    int64_t byBandwidth = bytesInFlightPerSM > 0
                              ? llvm::divideCeil(bytesInFlightPerSM, inFlight)
                              : byThreads;
    return std::max<int64_t>(
        1, std::min({sharedMemoryPerSM / std::max<int64_t>(bytes, 1), byThreads,
                     byBandwidth}));
  }

  /// Rewrites `f` into its partial and combine forms; returns the partial.
  scf::ForallOp split(ForwardForm &f) {
    scf::ForallOp forall = f.forall;
    Location loc = forall.getLoc();
    OpBuilder b(forall);
    Type f32 = b.getF32Type();
    int64_t blockKV = f.config.getBlockKV();

    // splits = kv_split_count(grid blocks, K/V tiles); per = ceildiv(tiles,
    // splits) tiles in each part.
    OpFoldResult skv = tiling::getExtent(b, loc, f.key, 2);
    Value tiles = indexValue(b, loc, tiling::getNumTiles(b, loc, skv, blockKV));
    SmallVector<Value> ubs;
    for (OpFoldResult ub : forall.getMixedUpperBound())
      ubs.push_back(indexValue(b, loc, ub));
    Value ctas = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, ubs[0], ubs[1]), ubs[2]);
    Value splits =
        KVSplitCountOp::create(b, loc, ctas, tiles, maxSplits, blocksPerSM(f));
    Value per = arith::CeilDivUIOp::create(b, loc, tiles, splits);

    // Partials: [splits, B, H, Sq(, dv)] in f32.
    Value oInit = forall.getOutputs()[0];
    auto oType = cast<RankedTensorType>(oInit.getType());
    SmallVector<OpFoldResult> rowSizes = {splits};
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    for (int64_t d = 0; d < 3; ++d) {
      rowSizes.push_back(tiling::getExtent(b, loc, oInit, d));
      shape.push_back(oType.getDimSize(d));
    }
    int64_t dv = oType.getDimSize(3);
    auto lsePartType = RankedTensorType::get(shape, f32);
    SmallVector<OpFoldResult> outSizes(rowSizes);
    outSizes.push_back(b.getIndexAttr(dv));
    shape.push_back(dv);
    auto oPartType = RankedTensorType::get(shape, f32);
    Value oPart0 = tiling::createEmpty(b, loc, oPartType, outSizes);
    Value lsePart0 = tiling::createEmpty(b, loc, lsePartType, rowSizes);

    auto partial = buildPartial(b, f, ubs, splits, per, oPart0, lsePart0);
    if (!f.unpack.collapse) {
      buildCombine(b, f, partial.getResult(0), partial.getResult(1), splits, dv,
                   rowSizes, forall.getOutputs(), forall.getResults());
      forall.erase();
      return partial;
    }
    // A packed form (--attnc-pack-gqa): the combine runs on the unpacked
    // views [splits, B, H, Sq(, dv)] of the partials and writes O
    // [B, H, Sq, dv] itself, in place of the view of the packed O.
    // Where the unpacking was: its extents are defined by then.
    b.setInsertionPoint(f.unpack.expand);
    SmallVector<OpFoldResult> unpackedShape =
        f.unpack.expand.getMixedOutputShape(); // [B, Hkv, G, Sq, dv]
    auto view = [&](Value part, bool rowsOnly) {
      auto type = cast<RankedTensorType>(part.getType());
      SmallVector<OpFoldResult> shape = {splits};
      for (int64_t d = 0; d < 4; ++d)
        shape.push_back(unpackedShape[d]);
      SmallVector<ReassociationIndices> split = {{0}, {1}, {2}, {3, 4}};
      SmallVector<ReassociationIndices> merge = {{0}, {1}, {2, 3}, {4}};
      if (!rowsOnly) {
        shape.push_back(b.getIndexAttr(type.getDimSize(4)));
        split.push_back({5});
        merge.push_back({5});
      }
      return tiling::reshape(b, loc, part, shape, split, merge);
    };
    Value oParts = view(partial.getResult(0), false);
    Value lseParts = view(partial.getResult(1), true);
    // H = Hkv * G, a constant when both are, else Q's head extent (the
    // kernel's grid reads it, and the combine kernel binds H, not Hkv).
    OpFoldResult heads;
    std::optional<int64_t> kvHeads = getConstantIntValue(unpackedShape[1]);
    std::optional<int64_t> group = getConstantIntValue(unpackedShape[2]);
    auto packedQ = f.query ? f.query.getDefiningOp<tensor::CollapseShapeOp>()
                           : tensor::CollapseShapeOp();
    auto unpackedQ =
        packedQ ? packedQ.getSrc().getDefiningOp<tensor::ExpandShapeOp>()
                : tensor::ExpandShapeOp();
    if (kvHeads && group)
      heads = b.getIndexAttr(*kvHeads * *group);
    else if (unpackedQ)
      heads = tiling::getExtent(b, loc, unpackedQ.getSrc(), 1);
    else
      heads =
          arith::MulIOp::create(b, loc, indexValue(b, loc, unpackedShape[1]),
                                indexValue(b, loc, unpackedShape[2]))
              .getResult();
    SmallVector<OpFoldResult> unpackedRows = {splits, unpackedShape[0], heads,
                                              unpackedShape[3]};
    auto outType = f.unpack.collapse.getResultType();
    Value out0 = tiling::createEmpty(b, loc, outType,
                                     {unpackedRows[1], unpackedRows[2],
                                      unpackedRows[3], b.getIndexAttr(dv)});
    buildCombine(b, f, oParts, lseParts, splits, dv, unpackedRows,
                 ValueRange{out0}, f.unpack.collapse.getResult());
    f.unpack.collapse.erase();
    f.unpack.expand.erase();
    forall.erase();
    return partial;
  }

  /// The original nest with split index s = t mod splits on the last
  /// dimension, loops clamped to the split's tiles, f32 partials out.
  scf::ForallOp buildPartial(OpBuilder &b, ForwardForm &f, ArrayRef<Value> ubs,
                             Value splits, Value per, Value oPart0,
                             Value lsePart0) {
    scf::ForallOp forall = f.forall;
    Location loc = forall.getLoc();
    SmallVector<OpFoldResult> extents = {
        ubs[0], ubs[1],
        arith::MulIOp::create(b, loc, ubs[2], splits).getResult()};
    auto partial = scf::ForallOp::create(
        b, loc, extents, ValueRange{oPart0, lsePart0}, forall.getMapping());
    partial->setAttr(kFlashConfigAttrName, f.config);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(partial.getBody());
    SmallVector<Value> ivs(partial.getInductionVars());
    Value qt = arith::DivUIOp::create(b, loc, ivs[2], splits);
    Value s = arith::RemUIOp::create(b, loc, ivs[2], splits);
    Value lo = arith::MulIOp::create(b, loc, s, per);
    Value hi = arith::AddIOp::create(b, loc, lo, per);
    IRMapping map;
    SmallVector<Value> oldIvs(forall.getInductionVars());
    map.map(oldIvs[0], ivs[0]);
    map.map(oldIvs[1], ivs[1]);
    map.map(oldIvs[2], qt);
    llvm::SmallDenseMap<Value, Value> clamped;
    auto clamp = [&](Value bound) {
      Value &c = clamped[bound];
      if (!c)
        c = arith::MinUIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, bound, lo), hi);
      return c;
    };
    Value oPartial, lsePartial;
    for (Operation &op : forall.getBody()->without_terminator()) {
      if (auto fin = dyn_cast<OnlineAttentionFinalizeOp>(op)) {
        auto tileType = fin.getResult().getType().clone(b.getF32Type());
        auto partialFin = OnlineAttentionFinalizeOp::create(
            b, fin.getLoc(), tileType, fin.getLogsumexp().getType(),
            map.lookup(fin.getAcc()), map.lookup(fin.getMax()),
            map.lookup(fin.getSum()));
        oPartial = partialFin.getResult();
        lsePartial = partialFin.getLogsumexp();
        continue;
      }
      Operation *clone = b.clone(op, map);
      if (auto loop = dyn_cast<scf::ForOp>(clone);
          loop && llvm::is_contained(f.loops, cast<scf::ForOp>(op))) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(loop);
        Value lb = clamp(loop.getLowerBound()),
              ub = clamp(loop.getUpperBound());
        loop.setLowerBound(lb);
        loop.setUpperBound(ub);
      }
    }
    auto args = partial.getRegionIterArgs();
    b.setInsertionPointToStart(partial.getTerminator().getBody());
    insertWithPrefix(b, loc, oPartial, args[0], {s}, f.outInsert, map);
    if (f.lseInsert) {
      insertWithPrefix(b, loc, lsePartial, args[1], {s}, f.lseInsert, map);
    } else {
      // The O insert's rows, without the columns.
      auto ins = cast<tensor::ParallelInsertSliceOp>(
          partial.getTerminator().getBody()->back());
      SmallVector<OpFoldResult> offsets = ins.getMixedOffsets();
      SmallVector<OpFoldResult> sizes = ins.getMixedSizes();
      offsets.pop_back();
      sizes.pop_back();
      tensor::ParallelInsertSliceOp::create(
          b, loc, lsePartial, args[1], offsets, sizes,
          SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1)));
    }
    return partial;
  }

  /// forall (b, h, row tile): merge the splits' partials of the tile's rows,
  /// finalize, write O (and the logsumexp).
  void buildCombine(OpBuilder &b, ForwardForm &f, Value oPart, Value lsePart,
                    Value splits, int64_t dv, ArrayRef<OpFoldResult> rowSizes,
                    ValueRange outputs, ValueRange replaced) {
    scf::ForallOp forall = f.forall;
    Location loc = forall.getLoc();
    Type f32 = b.getF32Type();
    int64_t rows = combineRows;
    OpFoldResult seqQ = rowSizes[3];
    SmallVector<OpFoldResult> extents = {
        rowSizes[1], rowSizes[2], tiling::getNumTiles(b, loc, seqQ, rows)};
    MLIRContext *ctx = b.getContext();
    auto mapping = b.getArrayAttr(
        {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ),
         gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
         gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX)});
    auto combine = scf::ForallOp::create(b, loc, extents, outputs, mapping);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(combine.getBody());
    SmallVector<Value> ivs(combine.getInductionVars());
    AffineExpr d0;
    bindDims(ctx, d0);
    Value q0 = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, d0 * rows), ValueRange{ivs[2]});
    OpFoldResult mq = tiling::getTileExtent(b, loc, q0, rows, seqQ);
    RankedTensorType accType = tiling::getTileType(mq, dv, f32);
    auto rowType = RankedTensorType::get({accType.getDimSize(0)}, f32);
    auto splat = [&](SmallVector<OpFoldResult> sizes, double v) {
      Value c = arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(static_cast<float>(v)));
      return tensor::SplatOp::create(b, loc, c, sizes).getResult();
    };
    Value acc0 = splat({mq, b.getIndexAttr(dv)}, 0.0);
    Value max0 = splat({mq}, -std::numeric_limits<double>::infinity());
    Value sum0 = splat({mq}, 0.0);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    OpFoldResult unit = b.getIndexAttr(1);
    auto loop = scf::ForOp::create(
        b, loc, zero, splits, one, ValueRange{acc0, max0, sum0},
        [&](OpBuilder &nb, Location l, Value s, ValueRange state) {
          SmallVector<OpFoldResult> off = {s, ivs[0], ivs[1], q0};
          SmallVector<OpFoldResult> sz = {unit, unit, unit, mq};
          Value lseS = tensor::ExtractSliceOp::create(
              nb, l, rowType, lsePart, off, sz,
              SmallVector<OpFoldResult>(4, unit));
          off.push_back(nb.getIndexAttr(0));
          sz.push_back(nb.getIndexAttr(dv));
          Value oS = tensor::ExtractSliceOp::create(
              nb, l, accType, oPart, off, sz,
              SmallVector<OpFoldResult>(5, unit));
          auto merge = OnlineAttentionMergeOp::create(nb, l, state[0], state[1],
                                                      state[2], oS, lseS);
          scf::YieldOp::create(nb, l, merge.getResults());
        });
    auto oType = cast<RankedTensorType>(outputs[0].getType());
    auto fin = OnlineAttentionFinalizeOp::create(
        b, loc, accType.clone(oType.getElementType()), rowType,
        loop.getResult(0), loop.getResult(1), loop.getResult(2));
    auto args = combine.getRegionIterArgs();
    b.setInsertionPointToStart(combine.getTerminator().getBody());
    tiling::insertTile(b, loc, fin.getResult(), args[0], ivs[0], ivs[1], q0,
                       mq);
    if (args.size() > 1)
      tensor::ParallelInsertSliceOp::create(
          b, loc, fin.getLogsumexp(), args[1],
          SmallVector<OpFoldResult>{ivs[0], ivs[1], q0},
          SmallVector<OpFoldResult>{unit, unit, mq},
          SmallVector<OpFoldResult>(3, unit));
    for (auto [old, now] : llvm::zip(replaced, combine.getResults()))
      old.replaceAllUsesWith(now);
  }
};

} // namespace
