//===- FlashKernelRaggedGrid.cpp - a ragged batch's compact grid ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A ragged batch's flash form runs over (sequence, head, query tile) with
// as many query tiles per sequence as all the packed rows make: ceil(T /
// block_q). A sequence of L rows has ceil(L / block_q) of them; the rest
// are empty iterations. With many short sequences nearly all are (32
// sequences of a 20k-row batch: 81k blocks for 2.5k tiles with work, and
// the empty blocks' launch and exit is what the batch then costs).
//
// Q's sequences do not overlap (attnc.ragged_pack's contract), so each
// ends in at most one partial tile and their tiles number at most
// ceil(T / block_q) + B. The kernel's grid counts the tiles of the
// sequences one after another on the query-tile axis (the manifest factor
// `ceil_div(T, block_q) + B`), the batch axis is 1, and each block finds
// its (sequence, tile) by a prefix sum of the sequences' tile counts.
// Blocks past the last tile are empty iterations and leave at once. This
// orders the forall's iterations and skips empty ones; which iteration
// computes what is the flash form's.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::flash_kernel;

namespace {
constexpr int64_t kLanes = 32;
/// Sequences each lane counts per round of the search: 128 a round, their
/// 256 loads in flight together. (8 a lane, H100 2026-12-07: 4% faster at
/// 1024 sequences of 65-1023 rows, 1-2% slower at 4 to 16 long ones; 16 a
/// lane with a branch per sequence: 15-30% slower everywhere.)
constexpr int64_t kSeqsPerLane = 4;

/// The tensor the form reads per block under kernel parameter `name`.
const BlockTensor *blockTensorNamed(const FlashForm &form, StringRef name) {
  auto it = llvm::find_if(form.blockTensors,
                          [&](const BlockTensor &t) { return t.name == name; });
  return it == form.blockTensors.end() ? nullptr : &*it;
}
} // namespace

void FlashKernelBuilder::planRaggedGrid() {
  // (Forall dimensions: sequence, head, query tile.)
  unsigned batchAxis = gridDims[0], tileAxis = gridDims[2];
  std::vector<GridFactor> &tiles = abi.grid[tileAxis];
  std::vector<GridFactor> &batch = abi.grid[batchAxis];
  // The search counts each sequence's rows from its start and end, as the
  // flash form does; a form whose rows are not read from both keeps the
  // full grid (so does one whose count no factor can write: B static
  // with T dynamic, or the reverse).
  if (!blockTensorNamed(form, "q_starts") ||
      !blockTensorNamed(form, "q_ends") || tiles.size() != 1 ||
      batch.size() != 1)
    return;
  const GridFactor &t = tiles.front(), &n = batch.front();
  bool symbols = !t.sym.empty() && !n.sym.empty() && n.ceilDiv == 1 &&
                 n.plus.empty() && t.plus.empty();
  bool constants = t.sym.empty() && n.sym.empty() &&
                   t.device == GridFactor::Device::None &&
                   n.device == GridFactor::Device::None;
  if (!symbols && !constants)
    return;
  tiles = {symbols ? GridFactor::ceilDivPlus(t.sym, t.ceilDiv, n.sym)
                   : GridFactor::constant(t.value + n.value)};
  batch = {GridFactor::constant(1)};
  compactRaggedGrid = true;
}

Value FlashKernelBuilder::mapRaggedBlockIndices() {
  Type i32 = b.getI32Type();
  Type index = b.getIndexType();
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto cIdx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i32, v);
  };
  auto toIndex = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, index, v);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubIOp::create(b, loc, x, y);
  };
  auto ult = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  };
  auto ule = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  };
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, c, x, y);
  };
  auto shuffle = [&](Value v, Value lane) -> Value {
    return gpu::ShuffleOp::create(b, loc, v, lane, c32(kLanes),
                                  gpu::ShuffleMode::IDX)
        .getShuffleResult();
  };
  // (planRaggedGrid found both.)
  const BlockTensor &starts = *blockTensorNamed(form, "q_starts");
  const BlockTensor &ends = *blockTensorNamed(form, "q_ends");

  SmallVector<Value> ivs = form.forall.getInductionVars();
  auto blockId = [&](unsigned axis) -> Value {
    return gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(axis));
  };
  prologue.map(ivs[1], blockId(gridDims[1]));
  int64_t blockQ = form.config.getBlockQ();
  Value sequences = toI32(extentOf(starts.tensor, 0));
  Value rows = extentOf(form.query, 0);
  Value c = toI32(blockId(gridDims[2]));
  Value lane = toI32(gpu::LaneIdOp::create(b, loc, IntegerAttr()));
  Value laneFirst = arith::MulIOp::create(b, loc, lane, c32(kSeqsPerLane));

  // Query tiles of the kSeqsPerLane sequences from `first` (i32), 0 past
  // the batch: their rows as the flash form counts them, the range [start,
  // min(end, T)) read unsigned. The loads have no branch of their own (an
  // index past the batch reads the last sequence's, whose count is then
  // dropped), so that they are in flight together; one branch skips them
  // all in an empty batch, which has nothing to read.
  auto tilesFrom = [&](Value first) -> SmallVector<Value> {
    SmallVector<Type> types(2 * kSeqsPerLane, index);
    auto any = scf::IfOp::create(b, loc, types, ult(c32(0), sequences),
                                 /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(any.thenBlock());
      Value lastSeq = sub(sequences, c32(1));
      SmallVector<Value> bounds;
      for (int64_t j = 0; j < kSeqsPerLane; ++j) {
        Value at = toIndex(
            arith::MinUIOp::create(b, loc, add(first, c32(j)), lastSeq));
        bounds.push_back(toIndex(loadElement(starts, {at})));
        bounds.push_back(toIndex(loadElement(ends, {at})));
      }
      scf::YieldOp::create(b, loc, bounds);
      b.setInsertionPointToStart(any.elseBlock());
      scf::YieldOp::create(b, loc,
                           SmallVector<Value>(2 * kSeqsPerLane, cIdx(0)));
    }
    SmallVector<Value> n;
    for (int64_t j = 0; j < kSeqsPerLane; ++j) {
      Value start = any.getResult(2 * j), end = any.getResult(2 * j + 1);
      Value last = arith::MinUIOp::create(b, loc, end, rows);
      Value count = sub(arith::MaxUIOp::create(b, loc, last, start), start);
      Value tiles =
          toI32(arith::CeilDivUIOp::create(b, loc, count, cIdx(blockQ)));
      n.push_back(select(ult(add(first, c32(j)), sequences), tiles, c32(0)));
    }
    return n;
  };

  // Rounds of kLanes * kSeqsPerLane sequences from `base`, whose tiles
  // begin at `offset`, until the round holding tile c (or the last). A
  // lane counts kSeqsPerLane consecutive sequences; the round's results:
  // base, offset, the round's tiles, the lane's first tile in the round,
  // the lane's counts.
  int64_t perRound = kLanes * kSeqsPerLane;
  SmallVector<Type> results(4 + kSeqsPerLane, i32);
  auto loop = scf::WhileOp::create(b, loc, TypeRange(results),
                                   ValueRange{c32(0), c32(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before =
        b.createBlock(&loop.getBefore(), {}, {i32, i32}, {loc, loc});
    Value base = before->getArgument(0), offset = before->getArgument(1);
    SmallVector<Value> n = tilesFrom(add(base, laneFirst));
    Value own = c32(0);
    for (Value v : n)
      own = add(own, v);
    // The lanes' inclusive prefix sum (Hillis and Steele's scan).
    Value inclusive = own;
    for (int64_t d = 1; d < kLanes; d *= 2) {
      auto up = gpu::ShuffleOp::create(b, loc, inclusive, int32_t(d),
                                       int32_t(kLanes), gpu::ShuffleMode::UP);
      inclusive =
          add(inclusive, select(up.getValid(), up.getShuffleResult(), c32(0)));
    }
    Value total = shuffle(inclusive, c32(kLanes - 1));
    Value more =
        arith::AndIOp::create(b, loc, ule(add(offset, total), c),
                              ult(add(base, c32(perRound)), sequences));
    SmallVector<Value> out = {base, offset, total, sub(inclusive, own)};
    out.append(n);
    scf::ConditionOp::create(b, loc, more, out);
    Block *after = b.createBlock(&loop.getAfter(), {}, results,
                                 SmallVector<Location>(results.size(), loc));
    scf::YieldOp::create(
        b, loc,
        ValueRange{add(after->getArgument(0), c32(perRound)),
                   add(after->getArgument(1), after->getArgument(2))});
  }
  Value base = loop.getResult(0), offset = loop.getResult(1);
  Value exclusive = loop.getResult(3);
  ValueRange n = loop.getResults().drop_front(4);

  // The lane whose sequences hold tile c: the last whose first tile is at
  // most c (the lanes' first tiles do not decrease), among lanes with a
  // sequence.
  Value mine =
      arith::AndIOp::create(b, loc, ult(add(base, laneFirst), sequences),
                            ule(add(offset, exclusive), c));
  Value lanes = NVVM::ReduxOp::create(b, loc, i32,
                                      arith::ExtUIOp::create(b, loc, i32, mine),
                                      NVVM::ReduxKind::ADD, c32(-1));
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, lanes, c32(0));
  Value holder = select(any, sub(lanes, c32(1)), c32(0));
  // Within that lane, the last of its sequences whose first tile is at
  // most c (every lane evaluates the holder's).
  Value holderFirst =
      add(base, arith::MulIOp::create(b, loc, holder, c32(kSeqsPerLane)));
  Value tileStart = add(offset, shuffle(exclusive, holder));
  Value seq = holderFirst, seqStart = tileStart;
  Value count = shuffle(n[0], holder);
  for (int64_t j = 1; j < kSeqsPerLane; ++j) {
    tileStart = add(tileStart, shuffle(n[j - 1], holder));
    Value candidate = add(holderFirst, c32(j));
    Value take = arith::AndIOp::create(b, loc, ult(candidate, sequences),
                                       ule(tileStart, c));
    seq = select(take, candidate, seq);
    seqStart = select(take, tileStart, seqStart);
    count = select(take, shuffle(n[j], holder), count);
  }
  Value tile = sub(c, seqStart);
  Value valid = arith::AndIOp::create(b, loc, any, ult(tile, count));
  // The forall's query-tile iteration of that tile: under a causal mask
  // a sequence's tiles run longest first (the form counts its iterations
  // down from the last query tile of all the rows).
  if (runsLongestFirst()) {
    tile = sub(sub(count, c32(1)), tile);
    FailureOr<Value> extent =
        materialize(form.forall.getMixedUpperBound()[2], prologue);
    if (failed(extent))
      return {};
    tile = sub(sub(toI32(*extent), c32(1)), tile);
  }
  prologue.map(ivs[0], toIndex(select(valid, seq, c32(0))));
  prologue.map(ivs[2], toIndex(select(valid, tile, c32(0))));
  return valid;
}
