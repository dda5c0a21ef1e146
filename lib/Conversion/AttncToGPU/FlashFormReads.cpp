//===- FlashFormReads.cpp - tensors a flash form reads per block ----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A flash form reads some tensors one element per block, where the element
// is the same for every score of the block: the K/V length of its sequence,
// a ragged batch's sequence bounds, and what the mask and score regions read
// at the block's batch or query head (an ALiBi slope per head, a length per
// sequence), which --attnc-online-softmax hoists out of the steps. Each is a
// kernel parameter the kernel loads once; any other read is refused here
// with the rule it breaks.
//
//===----------------------------------------------------------------------===//

#include "FlashForm.h"

#include "attnc/Conversion/AttncToGPU/KernelUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace attnc;

const BlockTensor *attnc::findBlockTensor(ArrayRef<BlockTensor> tensors,
                                          Value tensor) {
  for (const BlockTensor &t : tensors)
    if (t.tensor == tensor)
      return &t;
  return nullptr;
}

const BlockTensor *FlashForm::blockTensorOf(Value tensor) const {
  return findBlockTensor(blockTensors, tensor);
}

/// True when `read` is one element per block of a per-sequence i32 tensor
/// [B] defined above `forall`, at its batch index.
static bool isBatchRead(scf::ForallOp forall, tensor::ExtractOp read) {
  auto type = cast<RankedTensorType>(read.getTensor().getType());
  return type.getRank() == 1 && type.getElementType().isInteger(32) &&
         !forall.getRegion().isAncestor(read.getTensor().getParentRegion()) &&
         read.getIndices()[0] == forall.getInductionVars()[0];
}

/// Per-sequence K/V lengths: the tensor.extract of the forall's body, of an
/// i32 tensor [B] from above at the batch index, cast (unsigned) to an index
/// and clamped at Skv by arith.minui. That minimum is the batch's key count
/// the K/V loops and tails are checked against.
LogicalResult flash_reads::readKVLengths(FlashForm &form, Value key) {
  scf::ForallOp forall = form.forall;
  // (A ragged batch's reads are its sequences' rows: readRaggedRows.)
  if (cast<RankedTensorType>(key.getType()).getRank() == 3)
    return success();
  auto isSkv = [&](Value v) {
    auto dim = v.getDefiningOp<tensor::DimOp>();
    if (dim)
      return dim.getConstantIndex() == 2 && dim.getSource() == key;
    // A static Skv is a constant.
    std::optional<int64_t> c = getConstantIntValue(v);
    return c && *c == cast<RankedTensorType>(key.getType()).getDimSize(2);
  };
  // The keys `read` bounds: minui(index_castui(read), Skv) in the body.
  auto keysOf = [&](tensor::ExtractOp read) -> arith::MinUIOp {
    for (Operation *cast : read->getUsers()) {
      if (!isa<arith::IndexCastUIOp>(cast) ||
          cast->getBlock() != forall.getBody())
        continue;
      for (Operation *user : cast->getUsers())
        if (auto min = dyn_cast<arith::MinUIOp>(user);
            min && (min.getLhs() == cast->getResult(0) ? isSkv(min.getRhs())
                                                       : isSkv(min.getLhs())))
          return min;
    }
    return {};
  };
  tensor::ExtractOp lengthRead;
  arith::MinUIOp keys;
  // (Reads that bound no keys are the regions': readRegionTensors.)
  for (auto read : forall.getBody()->getOps<tensor::ExtractOp>()) {
    arith::MinUIOp min = isBatchRead(forall, read) ? keysOf(read) : nullptr;
    if (!min)
      continue;
    if (lengthRead)
      return read.emitOpError(
          "bounds the keys of a flash form a second time; the kernel reads "
          "one K/V length per sequence (attnc.attention's kv_lengths)");
    lengthRead = read;
    keys = min;
  }
  if (!lengthRead)
    return success();
  form.kvLengths = lengthRead.getTensor();
  form.seqKV = keys.getResult();
  form.blockTensors.push_back(
      {form.kvLengths, "kv_lengths", {BlockTensor::kBatchCoord}});
  form.blockReads.push_back(lengthRead);
  return success();
}
/// A ragged batch: Q's tile starts at arith.addi(first row, q_start), and
/// the tensors read per block are the sequences' starts and ends, named by
/// what they bound: q_starts (Q's first row), q_ends (in Q's rows), and
/// kv_starts, kv_ends when K/V's sequences are other tensors.
LogicalResult flash_reads::readRaggedRows(FlashForm &form,
                                          OnlineAttentionOp first) {
  scf::ForallOp forall = form.forall;
  form.ragged = true;
  auto add = definingOpOf<arith::AddIOp>(form.querySlice.getMixedOffsets()[0]);
  if (!add || add.getRhs() != first.getQStart())
    return form.querySlice.emitOpError(
        "must start the Q tile of a ragged batch at its sequence's first row "
        "plus the tile's q_start: arith.addi(first row, q_start)");
  form.qRowBase = add.getLhs();
  if (!form.kvRowBase || !form.seqKV)
    return first.emitOpError("reads K/V tiles of a ragged batch without a "
                             "first row or keys per sequence");
  // The tensor whose element per block `v` is computed from, if one.
  auto tensorsOf = [&](Value v) {
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.filter = [&](Operation *op) {
      return forall.getBody()->findAncestorOpInBlock(*op) != nullptr;
    };
    (void)getBackwardSlice(v, &slice, options);
    if (Operation *def = v.getDefiningOp())
      slice.insert(def);
    SetVector<Value> tensors;
    for (Operation *op : slice)
      if (auto read = dyn_cast<tensor::ExtractOp>(op))
        tensors.insert(read.getTensor());
    return tensors;
  };
  auto name = [&](Value t, StringRef n) {
    if (!form.blockTensorOf(t))
      form.blockTensors.push_back({t, n.str(), {BlockTensor::kBatchCoord}});
  };
  SetVector<Value> qStarts = tensorsOf(form.qRowBase);
  SetVector<Value> kvStarts = tensorsOf(form.kvRowBase);
  if (qStarts.size() != 1 || kvStarts.size() != 1)
    return form.querySlice.emitOpError(
        "starts the tiles of a ragged batch at rows that are not one "
        "element per block of a starts tensor");
  name(qStarts[0], "q_starts");
  // (The query tile's rows are computed from the sequence's end.)
  if (auto rows = dyn_cast<Value>(form.querySlice.getMixedSizes()[0]))
    for (Value t : tensorsOf(rows))
      name(t, "q_ends");
  name(kvStarts[0], "kv_starts");
  for (Value t : tensorsOf(form.seqKV))
    name(t, "kv_ends");
  // (Reads of other tensors are the regions': readRegionTensors.)
  for (auto read : forall.getBody()->getOps<tensor::ExtractOp>()) {
    if (!form.blockTensorOf(read.getTensor()))
      continue;
    if (!isBatchRead(forall, read))
      return read.emitOpError(
          "cannot be lowered in a ragged flash form: the kernel reads one "
          "element per block of its sequences' starts and ends (i32 tensors "
          "[B] defined above the forall, at the batch index)");
    form.blockReads.push_back(read);
  }
  return success();
}

/// Names a kernel has for its other parameters: a function argument read
/// per block must not take one.
static bool isReservedName(StringRef name) {
  return llvm::is_contained(
      {"q",         "k",           "v",          "o",           "lse",
       "o_partial", "lse_partial", "kv_lengths", "block_table", "q_starts",
       "q_ends",    "kv_starts",   "kv_ends",    "B",           "H",
       "Hkv",       "Sq",          "Skv",        "NB",          "MB",
       "T",         "Tk",          "splits",     "scale"},
      name);
}

/// Enters the tensor `read` reads at `coords` into `tensors` (or checks it
/// against its entry), with the rules a kernel parameter keeps: the
/// extents its coordinates run over are those of `q` (batch, heads,
/// queries) and `k` (keys); a ragged batch counts its sequences elsewhere.
static LogicalResult registerTensor(SmallVectorImpl<BlockTensor> &tensors,
                                    RankedTensorType q, RankedTensorType k,
                                    bool ragged, Operation *read, Value t,
                                    SmallVector<int64_t> coords) {
  auto type = cast<RankedTensorType>(t.getType());
  auto known = llvm::find_if(
      tensors, [&](const BlockTensor &bt) { return bt.tensor == t; });
  if (known != tensors.end()) {
    // One tensor read at the query position and at the key position in
    // one dimension (a self-attention's ids): that dimension runs over
    // both, Sq = Skv.
    bool merges = known->coords.size() == coords.size();
    for (auto [a, c] : llvm::zip(known->coords, coords))
      merges &=
          a == c || (BlockTensor::isPosition(a) && BlockTensor::isPosition(c));
    if (!merges)
      return read->emitOpError(
          "reads a tensor at other coordinates than another read of it; the "
          "kernel indexes each dimension of a tensor it reads by one "
          "coordinate (the query and the key position count as one)");
    for (auto [a, c] : llvm::zip(known->coords, coords))
      if (a != c)
        a = BlockTensor::kPositionCoord;
    if (known->readsBothPositions() && !q.isDynamicDim(2) &&
        !k.isDynamicDim(2) && q.getDimSize(2) != k.getDimSize(2))
      return read->emitOpError()
             << "reads one tensor at the query and at the key position, "
                "which needs as many queries as keys; Sq = "
             << q.getDimSize(2) << ", Skv = " << k.getDimSize(2);
    return success();
  }
  auto arg = dyn_cast<BlockArgument>(t);
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return read->emitOpError(
        "reads a tensor that is not an argument of the function; the kernel "
        "reads the tensors mask and score regions use as its parameters");
  std::string name = sourceArgumentName(arg);
  if (isReservedName(name) || llvm::any_of(tensors, [&](const BlockTensor &b) {
        return b.name == name;
      }))
    return read->emitOpError()
           << "reads function argument '" << name
           << "', whose name is another parameter's of the kernel; give it "
              "another with {attnc.name = \"...\"}";
  for (auto [d, coord] : llvm::enumerate(coords)) {
    std::optional<BlockTensor::Extent> e = BlockTensor::extentOf(coord);
    if (!e)
      continue;
    RankedTensorType of = e->ofKeys ? k : q;
    int64_t dim = e->dim;
    if ((ragged && dim == 0) || type.isDynamicDim(d) || of.isDynamicDim(dim) ||
        type.getDimSize(d) == of.getDimSize(dim))
      continue;
    static const char *what[] = {"batch", "query head", "position"};
    return read->emitOpError()
           << "reads dimension " << d << " (" << type.getDimSize(d)
           << " elements) at the " << what[dim] << ", which runs over "
           << of.getDimSize(dim);
  }
  tensors.push_back({t, name, coords});
  return success();
}

/// The coordinates `user` indexes `tensor` by, its `indices` for every
/// dimension but `position` (when set: the dimension a position of the
/// score indexes, `positionCoord`): `coordOf` maps an index to a
/// coordinate or nullopt; constants within a static extent are theirs.
static FailureOr<SmallVector<int64_t>>
readCoords(Operation *user, Value tensor, ValueRange indices,
           function_ref<std::optional<int64_t>(Value)> coordOf, StringRef rule,
           std::optional<unsigned> position = std::nullopt,
           int64_t positionCoord = 0) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> coords;
  for (Value index : indices) {
    if (position && coords.size() == *position)
      coords.push_back(positionCoord);
    unsigned d = coords.size();
    std::optional<int64_t> c = getConstantIntValue(index);
    if (std::optional<int64_t> coord = coordOf(index))
      coords.push_back(*coord);
    else if (c && !type.isDynamicDim(d) && *c >= 0 && *c < type.getDimSize(d))
      coords.push_back(*c);
    else
      return user->emitOpError() << "cannot be lowered in a flash form: index "
                                 << d << " must be " << rule;
  }
  if (position && coords.size() == *position)
    coords.push_back(positionCoord);
  return coords;
}

/// i32, i64 and f32 elements: what the kernel loads.
static LogicalResult checkElementType(tensor::ExtractOp read, bool perElement) {
  Type elt =
      cast<RankedTensorType>(read.getTensor().getType()).getElementType();
  if (elt.isF32() || elt.isInteger(32) || elt.isInteger(64))
    return success();
  return read.emitOpError() << "reads an element of type " << elt << " per "
                            << (perElement ? "score" : "block")
                            << "; the kernel reads i32, i64 and f32 tensors";
}

LogicalResult
flash_reads::readRegionElements(Region &r, unsigned lead, RankedTensorType q,
                                RankedTensorType k, StringRef unaddressable,
                                SmallVectorImpl<BlockTensor> &tensors,
                                SmallVectorImpl<tensor::ExtractOp> &reads) {
  if (r.empty())
    return success();
  SmallVector<tensor::ExtractOp> found;
  r.walk([&](tensor::ExtractOp x) { found.push_back(x); });
  for (tensor::ExtractOp read : found) {
    if (r.isAncestor(read.getTensor().getParentRegion()))
      continue; // (checkPerScoreOps names it)
    auto coordOf = [&](Value v) -> std::optional<int64_t> {
      static const int64_t coords[] = {
          BlockTensor::kBatchCoord, BlockTensor::kHeadCoord,
          BlockTensor::kRowCoord, BlockTensor::kColCoord};
      for (unsigned a = 0; a < 4; ++a)
        if (v == r.getArgument(lead + a))
          return coords[a];
      return std::nullopt;
    };
    FailureOr<SmallVector<int64_t>> coords = readCoords(
        read, read.getTensor(), read.getIndices(), coordOf,
        "the score's batch, head, query or key position, or a constant "
        "within a static extent; the kernel reads tensors per block or per "
        "position");
    if (failed(coords) || failed(checkElementType(read, true)))
      return failure();
    bool row = llvm::is_contained(*coords, BlockTensor::kRowCoord);
    bool col = llvm::is_contained(*coords, BlockTensor::kColCoord);
    if (row && col)
      return read.emitOpError(
          "reads a tensor per (query, key) pair; the kernel reads tensors "
          "per query or per key position, never a score-sized one");
    if ((row || col) && !unaddressable.empty())
      return read.emitOpError()
             << "reads a tensor per position of " << unaddressable
             << ", whose positions the kernel does not address that way";
    if (failed(registerTensor(tensors, q, k, /*ragged=*/false, read,
                              read.getTensor(), *coords)))
      return failure();
    reads.push_back(read);
  }
  return checkPerScoreOps(r, [&](Operation *op) {
    return llvm::is_contained(reads, dyn_cast<tensor::ExtractOp>(op));
  });
}

LogicalResult flash_reads::readRegionTensors(FlashForm &form) {
  scf::ForallOp forall = form.forall;
  SmallVector<Value> ivs = forall.getInductionVars();
  // Reads per score, left in the steps' regions: a value per query or per
  // key position (a document id), at the region's arguments.
  auto q = cast<RankedTensorType>(
      (form.packedSource ? form.packedSource : form.query).getType());
  auto k = cast<RankedTensorType>(form.key.getType());
  StringRef unaddressable = form.ragged || form.packedSource || form.keyPages
                                ? "a ragged, packed GQA or paged flash form"
                                : "";
  for (FlashKVLoop &l : form.loops)
    for (auto [r, lead] :
         {std::pair(&l.step.getMask(), 0u), std::pair(&l.step.getScore(), 1u)})
      if (failed(readRegionElements(*r, lead, q, k, unaddressable,
                                    form.blockTensors, form.elementReads)))
        return failure();
  // Reads per block, hoisted out of the steps by --attnc-online-softmax,
  // and the ids attnc.id_tile_bounds reads besides its positions.
  auto blockCoordOf = [&](Value v) -> std::optional<int64_t> {
    if (v == ivs[0])
      return BlockTensor::kBatchCoord;
    if (v == ivs[1] && !form.packedSource)
      return BlockTensor::kHeadCoord;
    return std::nullopt;
  };
  StringRef blockRule =
      "the block's batch, its query head (not in a packed GQA form, whose "
      "blocks are K/V heads) or a constant within a static extent; the "
      "kernel reads one element per block";
  for (auto read : forall.getBody()->getOps<tensor::ExtractOp>()) {
    if (llvm::is_contained(form.blockReads, read))
      continue;
    if (forall.getRegion().isAncestor(read.getTensor().getParentRegion()))
      return read.emitOpError(
          "reads a tensor computed in the flash form; the kernel reads "
          "elements of tensors defined above it");
    FailureOr<SmallVector<int64_t>> coords = readCoords(
        read, read.getTensor(), read.getIndices(), blockCoordOf, blockRule);
    if (failed(coords) || failed(checkElementType(read, false)) ||
        failed(registerTensor(form.blockTensors, q, k, form.ragged, read,
                              read.getTensor(), *coords)))
      return failure();
    form.blockReads.push_back(read);
  }
  // Ids per position that bound the K/V tiles (attnc.id_tile_bounds): the
  // kernel reads them like the regions' per-score reads.
  for (auto ids : forall.getBody()->getOps<IdTileBoundsOp>()) {
    if (!unaddressable.empty())
      return ids.emitOpError()
             << "bounds the tiles of " << unaddressable
             << " by ids per position, which the kernel does not address "
                "that way";
    struct Side {
      Value tensor;
      ValueRange indices;
      uint64_t dim;
      int64_t position;
    } sides[] = {{ids.getQueryIds(), ids.getQueryIndices(), ids.getQueryDim(),
                  BlockTensor::kRowCoord},
                 {ids.getKeyIds(), ids.getKeyIndices(), ids.getKeyDim(),
                  BlockTensor::kColCoord}};
    for (Side &side : sides) {
      if (forall.getRegion().isAncestor(side.tensor.getParentRegion()))
        return ids.emitOpError(
            "reads ids computed in the flash form; the kernel reads elements "
            "of tensors defined above it");
      FailureOr<SmallVector<int64_t>> coords =
          readCoords(ids, side.tensor, side.indices, blockCoordOf, blockRule,
                     side.dim, side.position);
      if (failed(coords))
        return failure();
      if (failed(registerTensor(form.blockTensors, q, k, form.ragged, ids,
                                side.tensor, *coords)))
        return failure();
    }
    form.idBounds.push_back(ids);
  }
  return success();
}

Value flash_reads::loadElement(OpBuilder &b, Location loc,
                               const BlockTensor &bt, Value mem,
                               ArrayRef<Value> indices,
                               function_ref<Value(const std::string &)> param,
                               Value seqQ, Value seqKV) {
  Value at = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [dim, index] : llvm::enumerate(indices)) {
    Value i = index;
    // A position is clamped into its extent: a tile's padding rows and
    // columns are evaluated too (then masked), never read out of bounds.
    int64_t coord = bt.coords[dim];
    // (Both positions: Sq = Skv, which the runtime checks.)
    if (BlockTensor::isPosition(coord)) {
      Value extent = coord == BlockTensor::kColCoord ? seqKV : seqQ;
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      i = arith::MinUIOp::create(b, loc, i,
                                 arith::SubIOp::create(b, loc, extent, one));
    }
    Value stride = param((bt.name + ".stride" + Twine(dim)).str());
    at = arith::AddIOp::create(b, loc, at,
                               arith::MulIOp::create(b, loc, i, stride));
  }
  return memref::LoadOp::create(b, loc, mem, at, /*nontemporal=*/false,
                                llvm::Align(bt.elementBytes()))
      .getResult();
}

std::vector<ABIConstraint>
flash_reads::positionConstraints(ArrayRef<BlockTensor> tensors, const ABIDim &q,
                                 const ABIDim &k) {
  if (q == k || llvm::none_of(tensors, [](const BlockTensor &t) {
        return t.readsBothPositions();
      }))
    return {};
  auto *qs = std::get_if<std::string>(&q), *ks = std::get_if<std::string>(&k);
  if (qs && ks)
    return {ABIConstraint::equal(*qs, *ks)};
  // (Both static and different: registerTensor refused them.)
  const std::string &sym = qs ? *qs : *ks;
  int64_t c = std::get<int64_t>(qs ? k : q);
  return {ABIConstraint::min(sym, c), ABIConstraint::max(sym, c)};
}
