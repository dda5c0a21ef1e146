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
// its (sequence, tile) by a prefix sum of the sequences' tile counts, in
// rounds of 128 sequences; with more than one round its warps first count
// a group of rounds at once, one each, meeting in shared memory.
// Blocks past the last tile are empty iterations and leave at once. This
// orders the forall's iterations and skips empty ones; which iteration
// computes what is the flash form's.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The search's i32 arithmetic, built at one location.
struct I32Ops {
  OpBuilder &b;
  Location loc;
  Value c32(int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulIOp::create(b, loc, x, y);
  }
  Value ult(Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value ule(Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};
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

int64_t FlashKernelBuilder::raggedSearchBytes() const {
  // Two slots a warp: a round's tiles, by the parity of its group.
  return compactRaggedGrid ? 2 * (strategy->threadsPerBlock() / kLanes) * 4 : 0;
}

std::pair<Value, Value>
FlashKernelBuilder::skipRounds(Value sequences, Value c, int64_t perRound,
                               function_ref<Value(Value)> roundTiles) {
  Type i32 = b.getI32Type();
  I32Ops o{b, loc};
  int64_t warps = strategy->threadsPerBlock() / kLanes;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::IndexCastUIOp::create(
      b, loc, i32,
      arith::DivUIOp::create(b, loc, tid,
                             arith::ConstantIndexOp::create(b, loc, kLanes)));
  Value words = sharedWords(raggedSearchOffset(), raggedSearchBytes());
  // More than one round: the warps count a group of rounds at once, one
  // each, until the group holding tile c. (The condition is the block's:
  // every warp takes the same branch and meets at the same barriers.)
  auto many = scf::IfOp::create(b, loc, TypeRange{i32, i32},
                                o.ult(o.c32(perRound), sequences),
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(many.elseBlock());
  scf::YieldOp::create(b, loc, ValueRange{o.c32(0), o.c32(0)});
  b.setInsertionPointToStart(many.thenBlock());
  // Carried: the group's first sequence, the tiles before it, the parity
  // of its slots. When it stops: also the round to search from and the
  // tiles before that round.
  SmallVector<Type> carried(3, i32), stopped(5, i32);
  auto groups = scf::WhileOp::create(b, loc, stopped,
                                     ValueRange{o.c32(0), o.c32(0), o.c32(0)});
  // (The loop's results are the condition's operands: `stopped`.)
  {
    OpBuilder::InsertionGuard g(b);
    Block *before = b.createBlock(&groups.getBefore(), {}, carried,
                                  SmallVector<Location>(3, loc));
    Value base = before->getArgument(0), offset = before->getArgument(1),
          parity = before->getArgument(2);
    Value mine = roundTiles(o.add(base, o.mul(warp, o.c32(perRound))));
    auto slot = [&](Value w) -> Value {
      return arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(), o.add(o.mul(parity, o.c32(warps)), w));
    };
    Value lane = gpu::LaneIdOp::create(b, loc, IntegerAttr());
    auto leader = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              arith::ConstantIndexOp::create(b, loc, 0)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(leader.thenBlock());
      memref::StoreOp::create(b, loc, mine, words, ValueRange{slot(warp)});
    }
    // Slots alternate between groups: a warp writing the next group's
    // never overwrites what a slower one still reads of this one.
    gpu::BarrierOp::create(b, loc);
    // The group's rounds that end at or before tile c, among all but its
    // last existing one: the search goes on from the round after them.
    Value lastRound = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, sequences, o.add(base, o.c32(1))),
        o.c32(perRound));
    Value end = offset, skipped = o.c32(0), roundOffset = offset;
    for (int64_t w = 0; w < warps; ++w) {
      end = o.add(end, memref::LoadOp::create(b, loc, words,
                                              ValueRange{slot(o.c32(w))}));
      Value past = arith::AndIOp::create(b, loc, o.ule(end, c),
                                         o.ult(o.c32(w), lastRound));
      skipped = o.add(skipped, arith::ExtUIOp::create(b, loc, i32, past));
      roundOffset = arith::SelectOp::create(b, loc, past, end, roundOffset);
    }
    Value next = o.add(base, o.c32(warps * perRound));
    Value more =
        arith::AndIOp::create(b, loc, o.ule(end, c), o.ult(next, sequences));
    Value round = o.add(base, o.mul(skipped, o.c32(perRound)));
    scf::ConditionOp::create(b, loc, more,
                             ValueRange{next, end, parity, round, roundOffset});
    Block *after = b.createBlock(&groups.getAfter(), {}, stopped,
                                 SmallVector<Location>(5, loc));
    scf::YieldOp::create(
        b, loc,
        ValueRange{
            after->getArgument(0), after->getArgument(1),
            arith::SubIOp::create(b, loc, o.c32(1), after->getArgument(2))});
  }
  scf::YieldOp::create(b, loc,
                       ValueRange{groups.getResult(3), groups.getResult(4)});
  return {many.getResult(0), many.getResult(1)};
}

Value FlashKernelBuilder::mapRaggedBlockIndices() {
  Type i32 = b.getI32Type();
  I32Ops o{b, loc};
  Type index = b.getIndexType();
  auto cIdx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i32, v);
  };
  auto toIndex = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, index, v);
  };
  auto shuffle = [&](Value v, Value lane) -> Value {
    return gpu::ShuffleOp::create(b, loc, v, lane, o.c32(kLanes),
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
  Value laneFirst = arith::MulIOp::create(b, loc, lane, o.c32(kSeqsPerLane));

  // Query tiles of the kSeqsPerLane sequences from `first` (i32), 0 past
  // the batch: their rows as the flash form counts them, the range [start,
  // min(end, T)) read unsigned. The loads have no branch of their own (an
  // index past the batch reads the last sequence's, whose count is then
  // dropped), so that they are in flight together; one branch skips them
  // all in an empty batch, which has nothing to read.
  auto tilesFrom = [&](Value first) -> SmallVector<Value> {
    SmallVector<Type> types(2 * kSeqsPerLane, index);
    auto any = scf::IfOp::create(b, loc, types, o.ult(o.c32(0), sequences),
                                 /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(any.thenBlock());
      Value lastSeq = o.sub(sequences, o.c32(1));
      SmallVector<Value> bounds;
      for (int64_t j = 0; j < kSeqsPerLane; ++j) {
        Value at = toIndex(
            arith::MinUIOp::create(b, loc, o.add(first, o.c32(j)), lastSeq));
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
      Value count = o.sub(arith::MaxUIOp::create(b, loc, last, start), start);
      Value tiles =
          toI32(arith::CeilDivUIOp::create(b, loc, count, cIdx(blockQ)));
      n.push_back(
          o.select(o.ult(o.add(first, o.c32(j)), sequences), tiles, o.c32(0)));
    }
    return n;
  };

  // The tiles of the round of sequences from `base`, in every lane.
  int64_t perRound = kLanes * kSeqsPerLane;
  auto roundTiles = [&](Value base) -> Value {
    Value own = o.c32(0);
    for (Value v : tilesFrom(o.add(base, laneFirst)))
      own = o.add(own, v);
    return NVVM::ReduxOp::create(b, loc, i32, own, NVVM::ReduxKind::ADD,
                                 o.c32(-1));
  };
  auto [start, startOffset] = skipRounds(sequences, c, perRound, roundTiles);

  // Rounds of kLanes * kSeqsPerLane sequences from `base`, whose tiles
  // begin at `offset`, until the round holding tile c (or the last). A
  // lane counts kSeqsPerLane consecutive sequences; the round's results:
  // base, offset, the round's tiles, the lane's first tile in the round,
  // the lane's counts.
  SmallVector<Type> results(4 + kSeqsPerLane, i32);
  auto loop = scf::WhileOp::create(b, loc, TypeRange(results),
                                   ValueRange{start, startOffset});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before =
        b.createBlock(&loop.getBefore(), {}, {i32, i32}, {loc, loc});
    Value base = before->getArgument(0), offset = before->getArgument(1);
    SmallVector<Value> n = tilesFrom(o.add(base, laneFirst));
    Value own = o.c32(0);
    for (Value v : n)
      own = o.add(own, v);
    // The lanes' inclusive prefix sum (Hillis and Steele's scan).
    Value inclusive = own;
    for (int64_t d = 1; d < kLanes; d *= 2) {
      auto up = gpu::ShuffleOp::create(b, loc, inclusive, int32_t(d),
                                       int32_t(kLanes), gpu::ShuffleMode::UP);
      inclusive = o.add(
          inclusive, o.select(up.getValid(), up.getShuffleResult(), o.c32(0)));
    }
    Value total = shuffle(inclusive, o.c32(kLanes - 1));
    Value more =
        arith::AndIOp::create(b, loc, o.ule(o.add(offset, total), c),
                              o.ult(o.add(base, o.c32(perRound)), sequences));
    SmallVector<Value> out = {base, offset, total, o.sub(inclusive, own)};
    out.append(n);
    scf::ConditionOp::create(b, loc, more, out);
    Block *after = b.createBlock(&loop.getAfter(), {}, results,
                                 SmallVector<Location>(results.size(), loc));
    scf::YieldOp::create(
        b, loc,
        ValueRange{o.add(after->getArgument(0), o.c32(perRound)),
                   o.add(after->getArgument(1), after->getArgument(2))});
  }
  Value base = loop.getResult(0), offset = loop.getResult(1);
  Value exclusive = loop.getResult(3);
  ValueRange n = loop.getResults().drop_front(4);

  // The lane whose sequences hold tile c: the last whose first tile is at
  // most c (the lanes' first tiles do not decrease), among lanes with a
  // sequence.
  Value mine =
      arith::AndIOp::create(b, loc, o.ult(o.add(base, laneFirst), sequences),
                            o.ule(o.add(offset, exclusive), c));
  Value lanes = NVVM::ReduxOp::create(b, loc, i32,
                                      arith::ExtUIOp::create(b, loc, i32, mine),
                                      NVVM::ReduxKind::ADD, o.c32(-1));
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, lanes, o.c32(0));
  Value holder = o.select(any, o.sub(lanes, o.c32(1)), o.c32(0));
  // Within that lane, the last of its sequences whose first tile is at
  // most c (every lane evaluates the holder's).
  Value holderFirst =
      o.add(base, arith::MulIOp::create(b, loc, holder, o.c32(kSeqsPerLane)));
  Value tileStart = o.add(offset, shuffle(exclusive, holder));
  Value seq = holderFirst, seqStart = tileStart;
  Value count = shuffle(n[0], holder);
  for (int64_t j = 1; j < kSeqsPerLane; ++j) {
    tileStart = o.add(tileStart, shuffle(n[j - 1], holder));
    Value candidate = o.add(holderFirst, o.c32(j));
    Value take = arith::AndIOp::create(b, loc, o.ult(candidate, sequences),
                                       o.ule(tileStart, c));
    seq = o.select(take, candidate, seq);
    seqStart = o.select(take, tileStart, seqStart);
    count = o.select(take, shuffle(n[j], holder), count);
  }
  Value tile = o.sub(c, seqStart);
  Value valid = arith::AndIOp::create(b, loc, any, o.ult(tile, count));
  // The forall's query-tile iteration of that tile: under a causal mask
  // a sequence's tiles run longest first (the form counts its iterations
  // down from the last query tile of all the rows).
  if (runsLongestFirst()) {
    tile = o.sub(o.sub(count, o.c32(1)), tile);
    FailureOr<Value> extent =
        materialize(form.forall.getMixedUpperBound()[2], prologue);
    if (failed(extent))
      return {};
    tile = o.sub(o.sub(toI32(*extent), o.c32(1)), tile);
  }
  prologue.map(ivs[0], toIndex(o.select(valid, seq, o.c32(0))));
  prologue.map(ivs[2], toIndex(o.select(valid, tile, o.c32(0))));
  return valid;
}
