//===- FlashKernelContract.cpp - a flash kernel's launch contract ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// What a host needs to launch the kernel of a flash form: its parameters
// (Q, K, V, O and the logsumexp, or a split-KV form's f32 partials; sizes,
// strides, tensor maps, the run-time scale), its grid from the forall's
// extents, the attrs users and the cost model read (mask, tiles, strategy
// and its options), the size constraints the runtime checks, and the split
// count's size rule.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

//===----------------------------------------------------------------------===//
// Contract
//===----------------------------------------------------------------------===//

LogicalResult FlashKernelBuilder::planContract(int64_t queryBuffers) {
  FlashConfigAttr config = form.config;
  abi = KernelABI();
  abi.name = name.str();
  abi.kind = isPartial() ? "attention_partial" : "attention";
  planParameters();
  if (failed(planGrid()))
    return failure();
  abi.block[0] = strategy->threadsPerBlock();
  abi.dynamicSharedMemoryBytes = drawExchangeOffset() + drawExchangeBytes();
  char scale[32];
  snprintf(scale, sizeof(scale), "%.9g", form.scale);
  bool causal = llvm::any_of(form.loops, [](FlashKVLoop &l) {
    return l.step.getCausalMask().has_value();
  });
  // What the steps mask, for users and tests: "none", "causal" (top-left),
  // "causal_bottom_right" or "custom".
  std::string mask = "none";
  for (FlashKVLoop &l : form.loops)
    mask = joinMaskKinds(mask, maskKindOf(l.step.getMask()));
  abi.attrs = {{"causal", causal ? "true" : "false"},
               {"mask", mask},
               {"scale", scale},
               {"head_dim", std::to_string(form.headDim)},
               {"block_q", std::to_string(config.getBlockQ())},
               {"block_kv", std::to_string(config.getBlockKV())},
               {"strategy", stringifyTileStrategy(config.getStrategy()).str()}};
  // Warps splitting each tile's keys (absent: 1).
  if (config.getKeyWarps() > 1)
    abi.attrs["key_warps"] = std::to_string(config.getKeyWarps());
  if (config.getInterleaveKV())
    abi.attrs["interleave_kv"] = "1";
  if (config.getOverlapPV())
    abi.attrs["overlap_pv"] = "1";
  if (config.getSharedP())
    abi.attrs["shared_p"] = "1";
  if (config.getMmaRowSums())
    abi.attrs["mma_row_sums"] = "1";
  // Query tiles held at once (absent: 1): with two, a persistent kernel's
  // producer loads the next tile's query during this one (the cost model
  // then charges no wait for it).
  if (queryBuffers > 1)
    abi.attrs["query_buffers"] = std::to_string(queryBuffers);
  // The grid's order (the forall's config: a fallback follows it).
  if (int64_t mib = l2GroupMib())
    abi.attrs["l2_group_mib"] = std::to_string(mib);
  // Query heads packed into one tile (--attnc-pack-gqa), for the cost
  // model's tile count.
  if (form.packedSource)
    abi.attrs["packed_heads"] = std::to_string(form.packedGroup);
  // Query head h reads K/V head h / (H / Hkv): H must be a multiple of Hkv.
  // Static heads are checked by the op's verifier; dynamic ones by the
  // runtime, from this generic rule. A packed form's tiles hold exactly G
  // query heads per K/V head: H = G * Hkv.
  auto qType = cast<RankedTensorType>(
      (form.packedSource ? form.packedSource : form.query).getType());
  auto kType = cast<RankedTensorType>(form.key.getType());
  // (Attention of one tensor with itself names its heads H only.)
  if (form.query != form.key && qType.isDynamicDim(1) && kType.isDynamicDim(1))
    abi.constraints.push_back(
        form.packedSource ? ABIConstraint::ratio("H", "Hkv", form.packedGroup)
                          : ABIConstraint::divisible("H", "Hkv"));
  // One ids tensor read at both positions needs as many queries as keys.
  for (ABIConstraint &c : flash_reads::positionConstraints(
           form.blockTensors, shapeOf(form.query, {2})[0],
           shapeOf(form.key, {2})[0]))
    abi.constraints.push_back(std::move(c));
  // A paged cache has a page per table entry at least: the page lookup of
  // a tile past a sequence still names one.
  if (form.keyPages)
    for (StringRef sym : {kTableSymbols[1], kPoolSymbols[0]})
      if (llvm::any_of(abi.params,
                       [&](const ABIParam &p) { return p.name == sym; }))
        abi.constraints.push_back(ABIConstraint::min(sym.str(), 1));
  // attnc.kv_split_count's range: partials stay linear in their rows.
  if (isPartial()) {
    abi.constraints.push_back(ABIConstraint::min(kSplitSymbol, 1));
    abi.constraints.push_back(ABIConstraint::max(kSplitSymbol, kMaxSplits));
    if (failed(planSplitRule()))
      return failure();
  }
  return success();
}

std::string FlashKernelBuilder::symbolOf(Value tensor, int64_t dim) const {
  if (const BlockTensor *bt = form.blockTensorOf(tensor)) {
    std::optional<BlockTensor::Extent> e =
        BlockTensor::extentOf(bt->coords[dim]);
    if (!e)
      return "B";
    return e->ofKeys ? kKeySymbols[e->dim] : kQuerySymbols[e->dim];
  }
  if (form.ragged)
    return tensor == form.query ? kRaggedQuerySymbols[dim]
                                : kRaggedKeySymbols[dim];
  if (tensor == form.query || tensor == form.packedSource)
    return kQuerySymbols[dim];
  return kKeySymbols[dim];
}

std::vector<ABIDim> FlashKernelBuilder::shapeOf(Value tensor,
                                                ArrayRef<int64_t> dims) const {
  return abiShapeOf(tensor, dims,
                    [&](int64_t d) { return symbolOf(tensor, d); });
}

/// q, k, v, o, lse, the dynamic sizes, the strides of q/k/v/o (dims 0-2)
/// and, when the program has one, the runtime scale.
void FlashKernelBuilder::planParameters() {
  std::string dtype = mlirTypeToDType(form.elementType);
  int64_t d = form.headDim;
  auto vType = cast<RankedTensorType>(form.value.getType());
  int64_t dv = vType.getDimSize(vType.getRank() - 1);
  // A packed form's tensors are the unpacked [B, H, Sq, ...] ones.
  // A ragged batch's tensors are its packed rows: [T, H] and [Tk, Hkv].
  SmallVector<int64_t> rowDims =
      form.ragged ? SmallVector<int64_t>{0, 1} : SmallVector<int64_t>{0, 1, 2};
  auto qShape =
      shapeOf(form.packedSource ? form.packedSource : form.query, rowDims);
  auto kvShape = shapeOf(form.key, rowDims);
  auto vShape = shapeOf(form.value, rowDims);
  // A paged cache's K and V are its pools [NB, page_size, Hkv], read
  // through the block table [B, MB].
  std::vector<ABIDim> tableShape;
  if (form.keyPages) {
    auto symbolic = [](RankedTensorType t, int64_t dim,
                       const char *symbol) -> ABIDim {
      if (t.isDynamicDim(dim))
        return std::string(symbol);
      return t.getDimSize(dim);
    };
    auto pool = [&](PagedKVOp p) {
      auto t = cast<RankedTensorType>(p.getPool().getType());
      return std::vector<ABIDim>{symbolic(t, 0, kPoolSymbols[0]),
                                 ABIDim(static_cast<int64_t>(p.getPageSize())),
                                 symbolic(t, 2, kPoolSymbols[2])};
    };
    kvShape = pool(form.keyPages);
    vShape = pool(form.valuePages);
    auto table =
        cast<RankedTensorType>(form.keyPages.getBlockTable().getType());
    tableShape = {symbolic(table, 0, kTableSymbols[0]),
                  symbolic(table, 1, kTableSymbols[1])};
  }
  auto push = [&](ABIParam p) {
    paramIndex[p.name] = abi.params.size();
    abi.params.push_back(std::move(p));
  };
  auto tensor = [&](const char *n, std::string dt, std::vector<ABIDim> shape,
                    const char *role, bool rows) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = n;
    p.dtype = std::move(dt);
    p.shape = std::move(shape);
    p.role = role;
    // Q, K, V and O rows move with the strategy's accesses; the logsumexp
    // is written one f32 at a time and may have any stride.
    p.align = rows ? strategy->rowAlignmentBytes()
                   : std::max<int64_t>(strategy->rowAlignmentBytes(), 4);
    if (rows)
      p.rowAlign = strategy->rowAlignmentBytes();
    push(std::move(p));
  };
  auto withDim = [](std::vector<ABIDim> s, int64_t last) {
    s.push_back(last);
    return s;
  };
  tensor("q", dtype, withDim(qShape, d), "input", true);
  tensor("k", dtype, withDim(kvShape, d), "input", true);
  tensor("v", dtype, withDim(vShape, dv), "input", true);
  // The tensors read one element per block (lengths, a ragged batch's
  // starts and ends, a region's per-head or per-sequence values) or per
  // score (a value per query or key position), at an address aligned to
  // their element.
  // A dimension a batch, head or position indexes runs over the query's
  // batches, heads or positions (the keys' for key positions): the runtime
  // checks it has them all.
  std::vector<std::vector<ABIDim>> shapes = {qShape, kvShape, vShape,
                                             tableShape};
  for (const BlockTensor &bt : form.blockTensors) {
    auto type = cast<RankedTensorType>(bt.tensor.getType());
    std::vector<ABIDim> shape;
    for (auto [dim, coord] : llvm::enumerate(bt.coords)) {
      std::optional<BlockTensor::Extent> e = BlockTensor::extentOf(coord);
      if (!e)
        shape.push_back(type.getDimSize(dim));
      else if (e->ofKeys)
        shape.push_back(kvShape[e->dim]);
      else if (form.ragged && e->dim == 0) // (counted by the starts)
        shape.push_back(shapeOf(bt.tensor, {static_cast<int64_t>(dim)})[0]);
      else
        shape.push_back(qShape[e->dim]);
    }
    tensor(bt.name.c_str(), mlirTypeToDType(type.getElementType()), shape,
           "input", false);
    abi.params.back().align = bt.elementBytes();
    shapes.push_back(std::move(shape));
  }
  if (form.keyPages) {
    tensor("block_table", "i32", tableShape, "input", false);
    abi.params.back().align = 4;
  }
  if (!isPartial()) {
    tensor("o", dtype, withDim(qShape, dv), "output", true);
    tensor("lse", "f32", qShape, "output", false);
  } else {
    // f32 partials of each split: [splits, B, H, Sq(, dv)].
    std::vector<ABIDim> rows = {std::string(kSplitSymbol)};
    rows.insert(rows.end(), qShape.begin(), qShape.end());
    tensor("o_partial", "f32", withDim(rows, dv), "output", true);
    tensor("lse_partial", "f32", rows, "output", false);
  }
  for (const char *sym : kSizeSymbols)
    if (mentionsSymbol(shapes, sym))
      push(ABIParam::size(sym));
  if (isPartial())
    push(ABIParam::size(kSplitSymbol));
  for (const char *t : kStridedTensors) {
    if (StringRef(t) == "o" && isPartial())
      continue;
    // (A ragged batch's packed tensors have two: rows and heads.)
    for (int64_t dim = 0; dim < (form.ragged ? 2 : kStridedDims); ++dim)
      push(ABIParam::stride(t, dim));
  }
  for (const BlockTensor &bt : form.blockTensors)
    for (int64_t dim = 0; dim < static_cast<int64_t>(bt.coords.size()); ++dim)
      push(ABIParam::stride(bt.name, dim));
  if (form.keyPages)
    for (int64_t dim = 0; dim < 2; ++dim)
      push(ABIParam::stride("block_table", dim));
  if (isPartial()) {
    for (int64_t dim = 0; dim < 4; ++dim)
      push(ABIParam::stride("o_partial", dim));
    for (int64_t dim = 0; dim < 3; ++dim)
      push(ABIParam::stride("lse_partial", dim));
  }
  // TMA descriptors of the tensors the strategy moves through tensor maps:
  // a box of one matrix's rows and 64 elements (128 bytes, the swizzle's
  // span), the d / 64 boxes of a tile side by side.
  for (const char *t : {"q", "k", "v", "o"}) {
    int64_t rows = strategy->tensorMapRows(t);
    if (rows != 0 && StringRef(t) == "o" && isPartial())
      continue; // refused in build()
    if (rows == 0)
      continue;
    push(rowTileTensorMap(t, rows));
  }
  if (form.runtimeScale)
    push(runtimeScaleParam(form.runtimeScale));
  // Dropout's seed and offset, when the program takes them as arguments
  // (a constant one is built into the kernel).
  if (form.dropout > 0.0) {
    if (isa<BlockArgument>(form.dropoutSeed))
      push(dropoutParam(form.dropoutSeed));
    if (isa<BlockArgument>(form.dropoutOffset) &&
        form.dropoutOffset != form.dropoutSeed)
      push(dropoutParam(form.dropoutOffset));
  }
}

/// Named by the argument's `attnc.name`, else by its role (a seed that is
/// also the offset is the seed).
ABIParam FlashKernelBuilder::dropoutParam(Value v) const {
  return scalarArgumentParam(v, v == form.dropoutSeed ? "dropout_seed"
                                                      : "dropout_offset");
}

/// A grid extent as the host computes it: a product of constants, sizes,
/// ceil(size / k) and the split count.
FailureOr<std::vector<GridFactor>>
FlashKernelBuilder::gridFactor(OpFoldResult extent) {
  if (auto v = dyn_cast<Value>(extent))
    if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
      FailureOr<std::vector<GridFactor>> lhs = gridFactor(mul.getLhs());
      FailureOr<std::vector<GridFactor>> rhs = gridFactor(mul.getRhs());
      if (failed(lhs) || failed(rhs))
        return failure();
      lhs->insert(lhs->end(), rhs->begin(), rhs->end());
      return lhs;
    }
  // A packed form's query tiles: ceildiv(G * Sq, k) = ceildiv(Sq, k / G)
  // when G divides k (the packed view's rows are not a symbol).
  if (auto v = dyn_cast<Value>(extent); v && form.packedSource)
    if (auto apply = v.getDefiningOp<affine::AffineApplyOp>();
        apply && apply.getMapOperands().size() == 1)
      if (auto dim = apply.getMapOperands()[0].getDefiningOp<tensor::DimOp>();
          dim && dim.getSource() == form.query && dim.getConstantIndex() == 2) {
        auto bin =
            dyn_cast<AffineBinaryOpExpr>(apply.getAffineMap().getResult(0));
        auto k = bin ? dyn_cast<AffineConstantExpr>(bin.getRHS()) : nullptr;
        auto q = cast<RankedTensorType>(form.packedSource.getType());
        int64_t group = form.packedGroup;
        bool ok = bin && k && bin.getKind() == AffineExprKind::CeilDiv &&
                  isa<AffineSymbolExpr, AffineDimExpr>(bin.getLHS()) &&
                  q.isDynamicDim(2);
        if (ok && k.getValue() % group == 0)
          return std::vector<GridFactor>{
              GridFactor::ceilDivOf("Sq", k.getValue() / group)};
        if (ok && group % k.getValue() == 0)
          return std::vector<GridFactor>{
              GridFactor::symbol("Sq"),
              GridFactor::constant(group / k.getValue())};
        return apply.emitOpError()
               << "counts the query tiles of a packed GQA form; the host can "
                  "compute them only when the group size ("
               << group
               << ") divides block_q or is a multiple of it (ceildiv(Sq, "
                  "block_q / G) or Sq * G / block_q tiles)";
      }
  FailureOr<GridFactor> f =
      gridFactorOf(extent, [&](Value x) -> std::optional<std::string> {
        if (x.getDefiningOp<KVSplitCountOp>())
          return std::string(kSplitSymbol);
        SmallVector<Value> sized = {form.query, form.key, form.value,
                                    form.packedSource};
        for (const BlockTensor &bt : form.blockTensors)
          sized.push_back(bt.tensor);
        auto dim = cast_or_null<tensor::DimOp>(sizeDimOf(x, sized));
        if (!dim)
          return std::nullopt;
        // The packed view [B, Hkv, G * Sq, d]: its heads are K's, its rows
        // G * Sq are not a symbol.
        if (form.packedSource && dim.getSource() == form.query &&
            *dim.getConstantIndex() != 0) {
          if (*dim.getConstantIndex() != 1)
            return std::nullopt;
          return symbolOf(form.key, 1);
        }
        return symbolOf(dim.getSource(), *dim.getConstantIndex());
      });
  if (failed(f))
    return failure();
  return std::vector<GridFactor>{*f};
}

LogicalResult FlashKernelBuilder::planGrid() {
  if (failed(planForallGrid(
          form.forall, [&](OpFoldResult e) { return gridFactor(e); }, abi.grid,
          gridDims)))
    return failure();
  // A persistent kernel: one CTA per SM, which walks the forall's
  // iterations itself (emitPersistentBody).
  if (strategy->persistent()) {
    abi.grid[0] = {GridFactor::numSMs()};
    abi.grid[1] = abi.grid[2] = {GridFactor::constant(1)};
  }
  if (form.ragged && !strategy->persistent())
    planRaggedGrid();
  // Groups order the heads of a longest-first grid, one block per tile or
  // persistent.
  if (l2GroupMib() && !runsLongestFirst())
    return form.forall.emitOpError()
           << "has l2_group_mib = " << l2GroupMib()
           << " in its flash config but its grid does not run longest first "
              "(batch on z, heads on x, query tiles on y), the grid whose "
              "heads the groups order";
  // A group's bytes count each head's K/V rows, which a ragged batch's
  // sequences set on the device only.
  if (l2GroupMib() && form.ragged)
    return form.forall.emitOpError()
           << "reads a ragged batch with l2_group_mib = " << l2GroupMib()
           << " in its flash config; heads are grouped by the bytes of their "
              "K/V rows, which a ragged batch's lengths do not give";
  // A persistent kernel draws its tiles from a counter: one u32, zeroed
  // before every launch (a CUDA graph records the zeroing with the
  // launch). A fallback is called with its primary's arguments: it takes
  // the counter too, and leaves it alone.
  auto top = form.forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName);
  if (top && isPersistent(top.getStrategy())) {
    paramIndex[kTileCounterName] = abi.params.size();
    abi.params.push_back(tileCounterParam());
  }
  return success();
}

/// The attnc.kv_split_count a grid extent is a multiple of, or null.
static KVSplitCountOp splitCountOf(OpFoldResult extent) {
  auto v = dyn_cast<Value>(extent);
  if (!v)
    return {};
  if (auto split = v.getDefiningOp<KVSplitCountOp>())
    return split;
  if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
    if (KVSplitCountOp split = splitCountOf(mul.getLhs()))
      return split;
    return splitCountOf(mul.getRhs());
  }
  return {};
}

/// The host evaluates the split count with the rule of the
/// attnc.kv_split_count the forall's extents multiply by: its grid with one
/// split is the op's block count, and a row's K/V tiles are
/// ceil(Skv / block_kv).
LogicalResult FlashKernelBuilder::planSplitRule() {
  KVSplitCountOp split;
  for (OpFoldResult ub : form.forall.getMixedUpperBound())
    if ((split = splitCountOf(ub)))
      break;
  if (!split)
    return form.forall.emitOpError()
           << "is a split-KV partial form but no extent of it is a multiple "
              "of an attnc.kv_split_count, whose rule the host would "
              "evaluate";
  ABISizeRule rule;
  rule.symbol = kSplitSymbol;
  int64_t blockKV = form.config.getBlockKV();
  auto key = cast<RankedTensorType>(form.key.getType());
  if (key.isDynamicDim(2))
    rule.kvTiles = {GridFactor::ceilDivOf(symbolOf(form.key, 2), blockKV)};
  else
    rule.kvTiles = {GridFactor::constant(
        std::max<int64_t>(1, llvm::divideCeil(key.getDimSize(2), blockKV)))};
  // A paged cache's rows are MB pages: MB * (page / block_kv) tiles, or
  // ceil(MB / (block_kv / page)) (both powers of two).
  if (form.keyPages && key.isDynamicDim(2)) {
    int64_t page = form.keyPages.getPageSize();
    if (page >= blockKV)
      rule.kvTiles = {GridFactor::symbol(kTableSymbols[1]),
                      GridFactor::constant(page / blockKV)};
    else
      rule.kvTiles = {GridFactor::ceilDivOf(kTableSymbols[1], blockKV / page)};
  }
  rule.max = split.getMaxSplits();
  rule.ctasPerSM = split.getCtasPerSm();
  abi.sizeRules.push_back(std::move(rule));
  return success();
}
