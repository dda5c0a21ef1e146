//===- FusionKernel.cpp - row kernel builder for attnc.fusion -------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Emits the kernel of one attnc.fusion. The fusion's iteration space is its
// result shape [R..., N]: each active thread owns `chunks` groups of 8
// consecutive columns (one 16-byte access for 16-bit types); a row of at
// most a warp's threads gets a power of two of lanes and a block packs
// several consecutive rows, a longer row gets a block. Every body value is
// classified by how it broadcasts against a row: Full (one value per element),
// Col (per column, same for every row), Row (one per row, e.g. a reduction) or
// Scalar. Full and Col values live in registers as vector<8xf32> chunks, Row
// and Scalar values as scalars, so the whole chain runs in registers and only
// inputs and results touch global memory. Row reductions combine per-thread
// partials with warp shuffles (a longer row's warps then through a small
// shared-memory array).
//
//===----------------------------------------------------------------------===//

#include "FusionEmitter.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::fusion_kernel;

/// The manifest name of fusion input `i`: the `attnc.name` of the host
/// function's argument it comes from ("seed"), else that argument's
/// position ("arg4"), else the input's position ("in2"). MLIR keeps no SSA
/// names, so the attribute is the only way the source's names survive.
static std::string inputName(unsigned i, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return "in" + std::to_string(i);
  return sourceArgumentName(arg);
}

/// The manifest name of fusion result `j`: the `attnc.name` of the host
/// function's result it is returned as ("y"), else "result<j>".
static std::string resultName(FusionOp fusion, unsigned j) {
  auto fn = fusion->getParentOfType<FunctionOpInterface>();
  for (OpOperand &use : fusion->getResult(j).getUses()) {
    Operation *ret = use.getOwner();
    if (!fn || ret->getParentOp() != fn.getOperation() ||
        !ret->hasTrait<OpTrait::ReturnLike>())
      continue;
    if (auto name = fn.getResultAttrOfType<StringAttr>(use.getOperandNumber(),
                                                       kNameAttrName))
      return name.str();
  }
  return "result" + std::to_string(j);
}

Kind FusionEmitter::classify(RankedTensorType t, std::string &why) {
  ArrayRef<int64_t> s = t.getShape();
  int64_t rank = iter.size();
  auto allOnes = [](ArrayRef<int64_t> d) {
    return llvm::all_of(d, [](int64_t x) { return x == 1; });
  };
  // The iteration shape itself first: with leading extents of 1 (one row),
  // [1, N] is also a broadcast column vector and [1, 1] a scalar, and a
  // result must be classified as what it is, full or one value per row.
  if ((int64_t)s.size() == rank) {
    bool leadMatch = true;
    for (int64_t k = 0; k + 1 < rank; ++k)
      leadMatch &= s[k] == iter[k];
    if (leadMatch && s.back() == n)
      return Kind::Full;
    if (leadMatch && s.back() == 1)
      return Kind::Row;
  }
  if (allOnes(s))
    return Kind::Scalar;
  if (s.back() == n && allOnes(s.drop_back()))
    return Kind::Col;
  why = "it broadcasts against the iteration space in a way the row kernel "
        "does not support (expected the full shape, [..., 1], [N] or a "
        "scalar)";
  return Kind::Full;
}

LogicalResult FusionEmitter::plan() {
  // The rows are the results' or, for a fusion that only reduces them (a
  // row sum), the inputs'.
  SmallVector<Type> candidates(fusion.getResultTypes());
  llvm::append_range(candidates, fusion.getInputs().getTypes());
  for (Type t : candidates) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (rt && rt.getRank() > 0 && rt.getShape().back() != 1) {
      iter.assign(rt.getShape().begin(), rt.getShape().end());
      break;
    }
  }
  if (iter.empty())
    return fusion.emitOpError("cannot be lowered to a row kernel: no result "
                              "or input has a row dimension");
  n = iter.back();
  if (ShapedType::isDynamic(n) || n % kVec != 0)
    return fusion.emitOpError()
           << "cannot be lowered to a row kernel: the last dimension must be "
              "static and a multiple of "
           << kVec << " (16-byte accesses), got "
           << (ShapedType::isDynamic(n) ? std::string("?") : std::to_string(n));
  if (n == 0)
    return fusion.emitOpError("cannot be lowered to a row kernel: its rows "
                              "are empty (last dimension 0)");
  int64_t groups = n / kVec;
  // As many accesses per thread as asked, while a row still fills a warp;
  // then as few as the 1024-thread limit allows.
  chunks =
      std::max<int64_t>(1, std::min(accessesPerThread, groups / kWarpSize));
  while (chunks > 1 && groups % chunks != 0)
    --chunks;
  // A thread holds its chunks of the row in registers. Without a bound, a
  // long row (or one whose 16-byte groups are a prime above the thread
  // limit, 8 x 1031 columns) would unroll thousands of chunks per thread:
  // an enormous, slow kernel and a compile that does not end for 1e11.
  int64_t fewest = llvm::divideCeil(groups, kMaxThreads);
  if (fewest > kMaxChunks)
    return fusion.emitOpError()
           << "cannot be lowered to a row kernel: a row of " << n
           << " elements needs at least " << fewest
           << " 16-byte accesses per thread at " << kMaxThreads
           << " threads; the row kernel holds a row in registers and allows "
           << kMaxChunks;
  chunks = std::max(chunks, fewest);
  while (chunks <= kMaxChunks && groups % chunks != 0)
    ++chunks;
  if (chunks > kMaxChunks)
    return fusion.emitOpError()
           << "cannot be lowered to a row kernel: a row of " << n
           << " elements (" << groups
           << " 16-byte groups) does not split evenly into at most "
           << kMaxThreads << " threads of at most " << kMaxChunks
           << " accesses each";
  activeThreads = groups / chunks;
  threads = llvm::alignTo(activeThreads, kWarpSize);
  rowLanes = threads;
  // A row of at most a warp's threads gets the next power of two of lanes
  // and a block packs kPackedThreads / rowLanes consecutive rows of the
  // last leading dimension. One block per row would leave most of a
  // 32-thread block idle (rows of 128 bf16 use 16 threads) and launch a
  // block per row: the backward's delta and dQ conversion, [B, H, S, 128]
  // rows, ran at 2.5x (5x at 64 columns) the time of reading their bytes.
  if (iter.size() > 1 && activeThreads <= kWarpSize) {
    rowLanes = llvm::PowerOf2Ceil(activeThreads);
    rowsPerBlock = kPackedThreads / rowLanes;
    threads = kPackedThreads;
  }

  auto dimOf = [&](int64_t k) -> ABIDim {
    if (ShapedType::isDynamic(iter[k]))
      return "D" + std::to_string(k);
    return iter[k];
  };
  auto addTensor = [&](std::string name, RankedTensorType t, Kind kind,
                       StringRef role) {
    ABIParam p;
    p.kind = ABIParam::Kind::Tensor;
    p.name = name;
    p.dtype = mlirTypeToDType(t.getElementType());
    p.role = role.str();
    if (kind == Kind::Full || kind == Kind::Row) {
      for (int64_t k = 0; k + 1 < (int64_t)iter.size(); ++k)
        p.shape.push_back(dimOf(k));
      p.shape.push_back(kind == Kind::Full ? n : 1);
      // Full rows move with 16-byte vector accesses.
      if (kind == Kind::Full)
        p.rowAlign = kAccessAlign;
    } else {
      for (int64_t d : t.getShape())
        p.shape.push_back(d);
      // Scalars are read at element 0: no vector alignment needed.
      if (kind == Kind::Scalar)
        p.align = t.getElementTypeBitWidth() / 8;
    }
    abi.params.push_back(p);
    int64_t index = abi.params.size() - 1;
    tensorParams.push_back({index, kind, t.getElementType()});
    return index;
  };

  for (auto [i, v] : llvm::enumerate(fusion.getInputs())) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    std::string name = inputName(i, v);
    if (!t) {
      if (!v.getType().isInteger(64) && !v.getType().isF32())
        return fusion.emitOpError()
               << "input #" << i << " has type " << v.getType()
               << "; the row kernel takes tensors, i64 and f32 scalars";
      // Scalar parameters go last; they are appended below.
      inputKind.push_back(Kind::Scalar);
      inputParam.push_back(-1);
      continue;
    }
    if (!isSupportedDType(t.getElementType()))
      return fusion.emitOpError()
             << "input #" << i << " has element type " << t.getElementType()
             << "; the row kernel reads bf16, f16, f32";
    std::string why;
    Kind k = classify(t, why);
    if (!why.empty())
      return fusion.emitOpError() << "input #" << i << " of type " << t
                                  << " cannot be lowered: " << why;
    inputKind.push_back(k);
    inputParam.push_back(addTensor(name, t, k, "input"));
  }
  for (auto [j, t] : llvm::enumerate(fusion.getResultTypes())) {
    auto rt = cast<RankedTensorType>(t);
    std::string why;
    Kind k = classify(rt, why);
    if (k != Kind::Full && k != Kind::Row)
      return fusion.emitOpError()
             << "result #" << j << " of type " << rt
             << " cannot be lowered: results must have the iteration shape "
                "or the iteration shape with the last dimension 1";
    if (!isSupportedDType(rt.getElementType()))
      return fusion.emitOpError()
             << "result #" << j << " has element type " << rt.getElementType()
             << "; the row kernel writes bf16, f16, f32";
    resultParam.push_back(addTensor(resultName(fusion, j), rt, k, "output"));
  }
  for (int64_t k = 0; k + 1 < (int64_t)iter.size(); ++k) {
    if (!ShapedType::isDynamic(iter[k])) {
      sizeParam.push_back(-1);
      continue;
    }
    ABIParam p;
    p.kind = ABIParam::Kind::Size;
    p.name = "D" + std::to_string(k);
    p.dtype = "i64";
    abi.params.push_back(p);
    sizeParam.push_back(abi.params.size() - 1);
  }
  // Leading strides of every per-row tensor, so views need not be
  // contiguous beyond the last dimension.
  for (const TensorParam &tp : tensorParams) {
    int64_t t = tp.index;
    if ((tp.kind != Kind::Full && tp.kind != Kind::Row) || iter.size() < 2)
      continue;
    for (int64_t d = 0; d + 1 < (int64_t)iter.size(); ++d) {
      ABIParam p;
      p.kind = ABIParam::Kind::Stride;
      p.name = abi.params[t].name + ".stride" + std::to_string(d);
      p.dtype = "i64";
      p.tensor = abi.params[t].name;
      p.dim = d;
      abi.params.push_back(p);
      strideParams[t].push_back(abi.params.size() - 1);
    }
  }
  for (auto [i, v] : llvm::enumerate(fusion.getInputs())) {
    if (isa<RankedTensorType>(v.getType()))
      continue;
    ABIParam p;
    p.kind = ABIParam::Kind::Scalar;
    p.name = inputName(i, v);
    p.dtype = mlirTypeToDType(v.getType());
    abi.params.push_back(p);
    inputParam[i] = abi.params.size() - 1;
  }

  // One shared-memory slot of 32 floats per block reduction (a packed
  // row reduces within its warp).
  if (packed())
    return success();
  fusion.getBody().walk([&](Operation *op) {
    if (isa<ReduceMaxOp, ReduceSumOp, RmsNormOp>(op))
      slots += 1;
    else if (isa<SoftmaxOp, LayerNormOp>(op))
      slots += 2;
  });
  return success();
}

void FusionEmitter::emitPrologue(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  args.assign(entry.getArguments().begin(),
              entry.getArguments().begin() + abi.params.size());
  smem = slots ? Value(func.getWorkgroupAttributions().front()) : Value();
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  lane = packed() ? arith::RemUIOp::create(b, loc, tid, idx(rowLanes)) : tid;
  rowValid = arith::ConstantIntOp::create(b, loc, 1, 1);
  // Block id -> index of each leading dimension (the last one varies
  // fastest); a packed block covers rowsPerBlock rows of the last one.
  int64_t lead = iter.size() - 1;
  leadIdx.assign(lead, Value());
  SmallVector<Value> sizes(lead);
  Value r = block;
  for (int64_t k = lead - 1; k >= 0; --k) {
    sizes[k] = sizeParam[k] < 0
                   ? idx(iter[k])
                   : arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                args[sizeParam[k]])
                         .getResult();
    if (k + 1 < lead || !packed()) {
      leadIdx[k] = arith::RemUIOp::create(b, loc, r, sizes[k]);
      r = arith::DivUIOp::create(b, loc, r, sizes[k]);
      continue;
    }
    Value tiles =
        arith::CeilDivUIOp::create(b, loc, sizes[k], idx(rowsPerBlock));
    Value row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, r, tiles),
                              idx(rowsPerBlock)),
        arith::DivUIOp::create(b, loc, tid, idx(rowLanes)));
    r = arith::DivUIOp::create(b, loc, r, tiles);
    // Rows past the end read the last row (the grid has a block only when
    // there is one) and store nothing.
    rowValid =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, sizes[k]);
    leadIdx[k] = arith::SelectOp::create(
        b, loc, rowValid, row, arith::SubIOp::create(b, loc, sizes[k], idx(1)));
  }
  rowId = block;
  if (packed()) {
    rowId = idx(0);
    for (int64_t k = 0; k < lead; ++k)
      rowId = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, rowId, sizes[k]), leadIdx[k]);
  }
  active = arith::AndIOp::create(
      b, loc, rowValid,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                            idx(activeThreads)));
  // Inactive threads (padding up to a whole warp or a row's lanes) read
  // column 0 again and are masked out of reductions and stores.
  Value t = arith::SelectOp::create(b, loc, active, lane, idx(0));
  for (int64_t c = 0; c < chunks; ++c)
    colBase.push_back(arith::MulIOp::create(
        b, loc, arith::AddIOp::create(b, loc, t, idx(c * activeThreads)),
        idx(kVec)));
  memrefs.assign(abi.params.size(), Value());
  for (const TensorParam &tp : tensorParams)
    memrefs[tp.index] = wrapGlobalPointer(b, loc, args[tp.index], tp.elem);
}

Value FusionEmitter::rowOffset(unsigned param) {
  Value off = idx(0);
  auto it = strideParams.find(param);
  if (it == strideParams.end())
    return off;
  for (auto [k, sp] : llvm::enumerate(it->second)) {
    Value stride =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), args[sp]);
    off = arith::AddIOp::create(
        b, loc, off, arith::MulIOp::create(b, loc, leadIdx[k], stride));
  }
  return off;
}

/// Extends to f32 (the compute type) unless already f32.
static Value toF32(OpBuilder &b, Location loc, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (elem.isF32())
    return v;
  Type target = b.getF32Type();
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = VectorType::get(vt.getShape(), target);
  return arith::ExtFOp::create(b, loc, target, v);
}

Val FusionEmitter::loadInput(BlockArgument arg) {
  unsigned i = arg.getArgNumber();
  Val v;
  v.kind = inputKind[i];
  int64_t p = inputParam[i];
  auto t = dyn_cast<RankedTensorType>(arg.getType());
  if (!t) {
    v.scalar = args[p];
    return v;
  }
  Type elem = t.getElementType();
  Value base = rowOffset(p);
  if (v.perElement()) {
    for (int64_t c = 0; c < chunks; ++c) {
      Value at =
          v.kind == Kind::Full
              ? arith::AddIOp::create(b, loc, base, colBase[c]).getResult()
              : colBase[c];
      Value x = vector::LoadOp::create(
          b, loc, VectorType::get({kVec}, elem), memrefs[p], ValueRange{at},
          /*nontemporal=*/false, llvm::Align(kAccessAlign));
      v.chunks.push_back(toF32(b, loc, x));
    }
  } else {
    Value x = memref::LoadOp::create(b, loc, memrefs[p], ValueRange{base});
    v.scalar = toF32(b, loc, x);
  }
  return v;
}

Val FusionEmitter::value(Value v) {
  auto it = vals.find(v);
  if (it != vals.end())
    return it->second;
  // Column, row and scalar inputs (bias, gamma, ...) are loaded where they
  // are first used: they come from L2, and holding them from the start would
  // cost the registers that keep more rows in flight.
  Val loaded = loadInput(cast<BlockArgument>(v));
  vals[v] = loaded;
  return loaded;
}

LogicalResult FusionEmitter::loadInputs(gpu::GPUFuncOp) {
  // Full-shape inputs are the HBM traffic: issue all their loads first so
  // they are in flight together.
  for (BlockArgument arg : fusion.getBody().front().getArguments())
    if (inputKind[arg.getArgNumber()] == Kind::Full ||
        !isa<RankedTensorType>(arg.getType()))
      vals[arg] = loadInput(arg);
  return success();
}

void FusionEmitter::storeResults(gpu::GPUFuncOp) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [j, v] : llvm::enumerate(yield.getValues())) {
    int64_t p = resultParam[j];
    Type elem = cast<RankedTensorType>(v.getType()).getElementType();
    Val val = value(v);
    Value base = rowOffset(p);
    if (abi.params[p].shape.back() == ABIDim(int64_t(1))) {
      Value s =
          val.perElement()
              ? vector::ExtractOp::create(b, loc, val.chunks[0], 0).getResult()
              : val.scalar;
      if (!elem.isF32())
        s = arith::TruncFOp::create(b, loc, elem, s);
      Value first = arith::AndIOp::create(
          b, loc, rowValid,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                idx(0)));
      scf::IfOp::create(b, loc, first, [&](OpBuilder &nb, Location l) {
        memref::StoreOp::create(nb, l, s, memrefs[p], ValueRange{base});
        scf::YieldOp::create(nb, l);
      });
      continue;
    }
    SmallVector<Value> cs = perElementChunks(val);
    scf::IfOp::create(b, loc, active, [&](OpBuilder &nb, Location l) {
      for (int64_t c = 0; c < chunks; ++c) {
        Value x = cs[c];
        if (!elem.isF32())
          x = arith::TruncFOp::create(nb, l, VectorType::get({kVec}, elem), x);
        Value at = arith::AddIOp::create(nb, l, base, colBase[c]);
        vector::StoreOp::create(nb, l, x, memrefs[p], ValueRange{at},
                                /*nontemporal=*/false,
                                llvm::Align(kAccessAlign));
      }
      scf::YieldOp::create(nb, l);
    });
  }
}

FailureOr<gpu::GPUFuncOp> FusionEmitter::emit(gpu::GPUModuleOp module,
                                              StringRef name) {
  if (failed(plan()))
    return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  for (const ABIParam &p : abi.params)
    argTypes.push_back(p.kind == ABIParam::Kind::Tensor ? Type(ptr)
                       : p.dtype == "f32"               ? Type(b.getF32Type())
                                                        : Type(b.getI64Type()));
  SmallVector<Type> workgroup;
  if (slots)
    workgroup.push_back(MemRefType::get(
        {slots * kWarpSize}, b.getF32Type(), MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  auto func = gpu::GPUFuncOp::create(
      b, loc, name, b.getFunctionType(argTypes, {}), workgroup, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  emitPrologue(func);
  if (failed(loadInputs(func)))
    return failure();
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  storeResults(func);
  gpu::ReturnOp::create(b, loc);

  abi.name = name.str();
  abi.kind = "fusion";
  abi.block[0] = threads;
  int64_t lead = iter.size() - 1;
  for (int64_t k = 0; k < lead; ++k) {
    int64_t per = k + 1 == lead ? rowsPerBlock : 1;
    abi.grid[0].push_back(
        ShapedType::isDynamic(iter[k])
            ? GridFactor::ceilDivOf("D" + std::to_string(k), per)
            : GridFactor::constant(llvm::divideCeil(iter[k], per)));
  }
  if (abi.grid[0].empty())
    abi.grid[0].push_back(GridFactor{1, "", 1});
  abi.grid[1] = {GridFactor{1, "", 1}};
  abi.grid[2] = {GridFactor{1, "", 1}};
  abi.attrs = {{"row_length", std::to_string(n)},
               {"chunks_per_thread", std::to_string(chunks)},
               {"rows_per_block", std::to_string(rowsPerBlock)}};
  return func;
}

FailureOr<gpu::GPUFuncOp>
attnc::buildFusionKernel(OpBuilder &b, gpu::GPUModuleOp module, StringRef name,
                         FusionOp fusion, KernelABI &abi,
                         int64_t accessesPerThread) {
  FusionEmitter emitter(b, fusion, abi);
  emitter.accessesPerThread = accessesPerThread;
  return emitter.emit(module, name);
}
