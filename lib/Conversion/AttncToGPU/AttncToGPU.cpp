//===- AttncToGPU.cpp - --attnc-convert-to-gpu ----------------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Finds the kernel-forming ops of each function (the flash form of attention
// and attnc.fusion), builds one gpu.func per op in its own gpu.module with
// the NVVM target attached, and records the launch contract on the kernel.
// The kernels are built by FlashAttentionKernel.cpp and FusionKernel.cpp;
// this file only decides what becomes a kernel and with which configuration.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/DimIndices.h"
#include "attnc/Analysis/KernelVersions.h"
#include "attnc/Conversion/AttncToGPU/BackwardKernel.h"
#include "attnc/Conversion/AttncToGPU/CombineKernel.h"
#include "attnc/Conversion/AttncToGPU/FlashAttentionKernel.h"
#include "attnc/Conversion/AttncToGPU/FusionKernel.h"
#include "attnc/Conversion/AttncToGPU/KernelUtils.h"
#include "attnc/Conversion/Passes.h"

#include "BackwardForm.h"
#include "attnc/Dialect/Attnc/IR/AttncOps.h"
#include "attnc/Target/TargetDescription.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "attnc-convert-to-gpu"

namespace attnc {
#define GEN_PASS_DEF_ATTNCCONVERTTOGPU
#include "attnc/Conversion/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc;

namespace {
/// cp.async.bulk.tensor into shared::cta.
constexpr int64_t kTmaPtxVersion = 86;

struct AttncConvertToGPUPass
    : attnc::impl::AttncConvertToGPUBase<AttncConvertToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Shape reasoning (the flash form's analysis) reads past a shape on one.
    if (failed(checkDimIndices(module)))
      return signalPassFailure();
    OpBuilder b(module.getContext());
    features =
        ptxFeatures.empty() ? ptxFeaturesForChip(chip) : ptxFeatures.getValue();
    Attribute target = b.getAttr<NVVM::NVVMTargetAttr>(
        /*optLevel=*/3, /*triple=*/"nvptx64-nvidia-cuda", chip, features);
    // A chip without a description is left to the driver at launch.
    FailureOr<TargetDescription> desc = lookupTargetDescription(chip);
    sharedMemoryLimit = dynamicSharedMemoryLimit(chip);
    gridDependency =
        succeeded(desc) && desc->hasFeature(TargetFeature::GridDependency);
    bool failedAny = false;
    llvm::StringSet<> kernelNames;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      SmallVector<Operation *> kernels;
      for (Operation &op : fn.getBody().getOps()) {
        if (isKernelForming(op) || isVersionedKernel(&op)) {
          kernels.push_back(&op);
          continue;
        }
        if (isa<AttentionOp, AttentionGradOp>(op)) {
          op.emitOpError("has no kernel of its own: run --attnc-online-softmax "
                         "to get its flash form first");
          failedAny = true;
        } else if (isa<AttncDialect>(op.getDialect()) &&
                   !isa<KVSplitCountOp>(op) && !isPagedViewOfKernels(op)) {
          // (The split count is host-side: the kernels read it as a size;
          // a paged cache is a view the flash kernels read through.)
          op.emitOpError("cannot be lowered to a GPU kernel: only fused "
                         "attention (--attnc-fuse-attention, "
                         "--attnc-online-softmax) and attnc.fusion "
                         "(--attnc-fuse-elementwise) have kernels");
          failedAny = true;
        }
      }
      if (!kernels.empty() && !isKernelName(fn.getSymName())) {
        fn.emitOpError() << "is named '" << fn.getSymName()
                         << "', which cannot name a kernel: kernel names are "
                            "C identifiers of at most "
                         << kMaxKernelNameLength
                         << " characters (they become the PTX entry and the "
                            "names of the files attnc-compile writes)";
        failedAny = true;
        continue;
      }
      for (auto [i, op] : llvm::enumerate(kernels)) {
        std::string name = fn.getSymName().str();
        if (kernels.size() > 1)
          name += "_" + std::to_string(i);
        // `f` with two kernels and a function named `f_0` would both make
        // `f_0`; a host could then not tell them apart.
        if (failed(claimKernelName(op, name, "would be kernel", kernelNames))) {
          failedAny = true;
          continue;
        }
        KernelABI abi;
        auto ifOp = dyn_cast<scf::IfOp>(op);
        if (ifOp ? failed(buildVersions(b, module, target, name, ifOp,
                                        kernelNames))
                 : failed(buildWithFallback(b, module, target, name, op, abi,
                                            kernelNames)))
          failedAny = true;
      }
    }
    if (failedAny)
      signalPassFailure();
  }

  /// Takes `name` for a kernel built from `op` (`what` says which: "would
  /// be kernel", "would have fallback kernel"), or reports on `op` why it
  /// cannot name one.
  static LogicalResult claimKernelName(Operation *op, StringRef name,
                                       StringRef what,
                                       llvm::StringSet<> &kernelNames) {
    if (isKernelName(name) && kernelNames.insert(name).second)
      return success();
    return op->emitOpError()
           << what << " '" << name
           << "', a name another kernel of this module has or that is not a "
              "C identifier of at most "
           << kMaxKernelNameLength << " characters; rename the function";
  }

  /// The kernel of `op` named `name` and, when its flash config has one,
  /// its fallback: a second kernel of the same flash form, under a name of
  /// its own that the first's contract records.
  LogicalResult buildWithFallback(OpBuilder &b, ModuleOp module,
                                  Attribute target, StringRef name,
                                  Operation *op, KernelABI &primary,
                                  llvm::StringSet<> &kernelNames,
                                  ArrayRef<ABIVariant> variants = {}) {
    FlashConfigAttr fallback;
    if (auto forall = dyn_cast<scf::ForallOp>(op))
      if (auto config =
              forall->getAttrOfType<FlashConfigAttr>(kFlashConfigAttrName))
        fallback = config.getFallback();
    std::string fallbackName = fallback ? (name + "_fallback").str() : "";
    if (fallback &&
        failed(claimKernelName(op, fallbackName, "would have fallback kernel",
                               kernelNames)))
      return failure();
    if (failed(buildKernel(b, module, target, name, op, primary,
                           /*config=*/{}, fallbackName, variants)))
      return failure();
    if (fallback && failed(buildFallback(b, module, target, fallbackName, op,
                                         fallback, primary)))
      return failure();
    return success();
  }

  /// The kernels of a kernel in versions (KernelVersions.h): the default
  /// under `name`, the one a host calls, whose contract lists the others,
  /// built as `<name>_v<i>`, with the sizes each runs for.
  LogicalResult buildVersions(OpBuilder &b, ModuleOp module, Attribute target,
                              StringRef name, scf::IfOp op,
                              llvm::StringSet<> &kernelNames) {
    FailureOr<SmallVector<KernelVersion>> versions = readKernelVersions(op);
    if (failed(versions))
      return failure();
    for (const KernelVersion &v : *versions)
      if (!isKernelForming(*v.kernel))
        return v.kernel->emitOpError()
               << "is a version of kernel '" << name
               << "', but only flash forms and attnc.fusion have kernels";
    // The variants' names and conditions first: the default's contract
    // lists them, and its kernel comes first in the module.
    ArrayRef<KernelVersion> others = ArrayRef(*versions).drop_back();
    std::vector<ABIVariant> variants;
    for (auto [i, v] : llvm::enumerate(others)) {
      std::string variant = (name + "_v" + Twine(i)).str();
      if (failed(claimKernelName(v.kernel, variant, "would be kernel",
                                 kernelNames)))
        return failure();
      ABIVariant &entry = variants.emplace_back();
      entry.kernel = variant;
      for (const SizeCondition &c : v.when) {
        std::optional<std::string> sym =
            sizeSymbol(versions->back().kernel, c.tensor, c.dim);
        std::optional<std::string> per =
            c.perTensor
                ? sizeSymbol(versions->back().kernel, c.perTensor, c.perDim)
                : std::string();
        if (!sym || !per)
          return op.emitOpError()
                 << "runs version '" << variant << "' by dim "
                 << (sym ? c.perDim : c.dim)
                 << " of a tensor that is not the Q, K or V of the kernel "
                    "(or by the head dimension); a host evaluates a version's "
                    "conditions on the kernel's size symbols";
        entry.when.push_back(!per->empty()
                                 ? ABIConstraint::atMost(*sym, *per, c.value)
                             : c.kind == SizeCondition::Kind::Min
                                 ? ABIConstraint::min(*sym, c.value)
                                 : ABIConstraint::max(*sym, c.value));
      }
    }
    KernelABI primary;
    if (failed(buildWithFallback(b, module, target, name,
                                 versions->back().kernel, primary, kernelNames,
                                 variants)))
      return failure();
    for (auto [v, variant] : llvm::zip(others, variants)) {
      KernelABI abi;
      if (failed(buildWithFallback(b, module, target, variant.kernel, v.kernel,
                                   abi, kernelNames)))
        return failure();
      if (!sameCallerArguments(abi, primary))
        return op.emitOpError()
               << "holds kernel '" << name << "' in versions, but version '"
               << variant.kernel
               << "' takes other arguments than the default; every version "
                  "takes the same tensors, workspaces and scalars";
    }
    return success();
  }

  /// The size symbol a flash form's kernel binds from dim `dim` of
  /// `tensor`: the batch, heads and rows of its Q (B, H, Sq) or of its K
  /// and V (B, Hkv, Skv), the names its contract gives them; of a ragged
  /// batch's packed [rows, heads, d] tensors T, H (Q) and Tk, Hkv (K and
  /// V), and the sequences B of the per-sequence tables (starts, ends) the
  /// form reads one element of per block.
  static std::optional<std::string> sizeSymbol(Operation *kernel, Value tensor,
                                               int64_t dim) {
    auto forall = dyn_cast<scf::ForallOp>(kernel);
    if (!forall || dim < 0 || dim > 2)
      return std::nullopt;
    auto source = [](Value v) {
      while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>())
        v = slice.getSource();
      return v;
    };
    Value q, k, v;
    forall.getBody()->walk([&](Operation *op) {
      if (auto step = dyn_cast<OnlineAttentionOp>(op))
        q = step.getQuery(), k = step.getKey(), v = step.getValue();
      else if (auto grad = dyn_cast<OnlineAttentionGradOp>(op))
        q = grad.getQuery(), k = grad.getKey(), v = grad.getValue();
      else
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (!q)
      return std::nullopt;
    bool ofQuery = source(q) == tensor;
    bool packed = cast<ShapedType>(source(q).getType()).getRank() == 3;
    if (!ofQuery && source(k) != tensor && source(v) != tensor) {
      // A ragged form's sequence table: a 1-D tensor it extracts from.
      bool table =
          packed && dim == 0 &&
          cast<ShapedType>(tensor.getType()).getRank() == 1 &&
          llvm::any_of(tensor.getUsers(), [&](Operation *u) {
            return isa<tensor::ExtractOp>(u) && forall->isProperAncestor(u);
          });
      return table ? std::optional<std::string>("B") : std::nullopt;
    }
    if (packed) {
      static constexpr const char *kRaggedQuery[] = {"T", "H"};
      static constexpr const char *kRaggedKey[] = {"Tk", "Hkv"};
      if (dim > 1)
        return std::nullopt;
      return std::string(ofQuery ? kRaggedQuery[dim] : kRaggedKey[dim]);
    }
    return std::string(ofQuery ? kQuerySymbols[dim] : kKeySymbols[dim]);
  }

  /// True when `a` and `b` take the same caller-supplied parameters
  /// (tensors, scalars, workspaces: names, kinds, types, shapes and roles)
  /// in the same order, so a host may call either with one set of
  /// arguments.
  static bool sameCallerArguments(const KernelABI &a, const KernelABI &b) {
    auto callerSupplied = [](const KernelABI &k) {
      SmallVector<const ABIParam *> ps;
      for (const ABIParam &p : k.params)
        if (p.kind == ABIParam::Kind::Tensor ||
            p.kind == ABIParam::Kind::Scalar ||
            p.kind == ABIParam::Kind::Workspace)
          ps.push_back(&p);
      return ps;
    };
    auto mine = callerSupplied(a), theirs = callerSupplied(b);
    if (mine.size() != theirs.size())
      return false;
    for (size_t i = 0; i < mine.size(); ++i)
      if (mine[i]->name != theirs[i]->name ||
          mine[i]->kind != theirs[i]->kind ||
          mine[i]->dtype != theirs[i]->dtype ||
          mine[i]->shape != theirs[i]->shape ||
          mine[i]->role != theirs[i]->role)
        return false;
    return true;
  }

  /// A paged K/V view read only by flash forms (whose kernels read the
  /// pool through the table) and by the host's shape arithmetic: it has no
  /// kernel of its own.
  static bool isPagedViewOfKernels(Operation &op) {
    return isa<PagedKVOp>(op) && llvm::all_of(op.getUsers(), [](Operation *u) {
             return isa<tensor::DimOp>(u) ||
                    u->getParentOfType<scf::ForallOp>() != nullptr;
           });
  }

  /// True for the ops that become kernels: attnc.fusion and flash forms.
  static bool isKernelForming(Operation &op) {
    return isa<FusionOp>(op) ||
           (isa<scf::ForallOp>(op) &&
            op.walk([](Operation *inner) {
                return isa<OnlineAttentionOp, OnlineAttentionGradOp,
                           OnlineAttentionMergeOp>(inner)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              }).wasInterrupted());
  }

  /// The kernel of `twin`, the function a split form names as its unsplit
  /// twin: a function of the module with exactly one kernel, which is named
  /// after it.
  static FailureOr<std::string> unsplitKernelName(Operation *op,
                                                  FlatSymbolRefAttr twin) {
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, twin);
    if (!fn || fn.isExternal() ||
        llvm::count_if(fn.getBody().getOps(), isKernelForming) != 1 ||
        llvm::any_of(fn.getBody().getOps(),
                     [](Operation &o) { return o.hasAttr(kUnsplitAttrName); }))
      return op->emitOpError()
             << "names " << twin
             << " as its unsplit twin, which must be a function of the "
                "module with exactly one kernel, itself not split";
    return fn.getSymName().str();
  }

  /// Dynamic shared memory one block of the target chip may use, when the
  /// chip has a target description.
  std::optional<int64_t> sharedMemoryLimit;
  /// The chip has griddepcontrol (programmatic dependent launch).
  bool gridDependency = false;
  /// The PTX features of the kernels' target.
  std::string features;

  /// The fallback kernel of flash form `op`, whose `primary` kernel is
  /// built. A host calls it with the primary's arguments, so the two must
  /// take the same tensors, workspaces and scalars; and it exists for
  /// tensors TMA cannot address, so it must not read through tensor maps.
  LogicalResult buildFallback(OpBuilder &b, ModuleOp module, Attribute target,
                              StringRef name, Operation *op,
                              FlashConfigAttr config,
                              const KernelABI &primary) {
    KernelABI abi;
    if (failed(buildKernel(b, module, target, name, op, abi, config, "", {})))
      return failure();
    bool same = sameCallerArguments(abi, primary);
    bool tma = llvm::any_of(abi.params, [](const ABIParam &p) {
      return p.kind == ABIParam::Kind::TensorMap;
    });
    if (same && !tma)
      return success();
    return op->emitOpError()
           << "has a fallback (strategy "
           << stringifyTileStrategy(config.getStrategy()) << ") whose kernel "
           << (tma ? "reads through tensor maps"
                   : "takes other arguments than the first")
           << "; a fallback must take the same tensors and scalars and "
              "address them by pointer";
  }

  LogicalResult buildKernel(OpBuilder &b, ModuleOp module, Attribute target,
                            StringRef name, Operation *op, KernelABI &abi,
                            FlashConfigAttr config, StringRef fallback,
                            ArrayRef<ABIVariant> variants = {}) {
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(
        b, op->getLoc(), (name + "_module").str(), b.getArrayAttr({target}));
    FailureOr<gpu::GPUFuncOp> kernel = failure();
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      kernel = buildFusionKernel(b, gpuModule, name, fusion, abi,
                                 fusionAccessesPerThread);
    } else if (isCombineForm(cast<scf::ForallOp>(op))) {
      kernel = buildCombineKernel(b, gpuModule, name, cast<scf::ForallOp>(op),
                                  gridDependency, abi);
    } else if (isBackwardForm(cast<scf::ForallOp>(op))) {
      kernel = buildAttentionBackwardKernel(b, gpuModule, name,
                                            cast<scf::ForallOp>(op), chip, abi);
    } else {
      kernel =
          buildFlashAttentionKernel(b, gpuModule, name, cast<scf::ForallOp>(op),
                                    chip, gridDependency, abi, config);
    }
    if (failed(kernel)) {
      gpuModule.erase();
      return failure();
    }
    abi.name = name.str();
    abi.fallback = fallback.str();
    abi.variants.assign(variants.begin(), variants.end());
    // The partial kernel of a split form names its unsplit twin (a fallback
    // runs in its kernel's place, so only the primary does).
    if (auto twin = op->getAttrOfType<FlatSymbolRefAttr>(kUnsplitAttrName);
        twin && !config) {
      FailureOr<std::string> kernel = unsplitKernelName(op, twin);
      if (failed(kernel)) {
        gpuModule.erase();
        return failure();
      }
      abi.unsplit = *kernel;
    }
    // Tile options can ask for more shared memory than the chip gives a
    // block (block-kv = 1024 at d = 128 is 1.13 MB): refused here, not at
    // launch.
    if (sharedMemoryLimit &&
        abi.dynamicSharedMemoryBytes > *sharedMemoryLimit) {
      op->emitOpError() << "needs " << abi.dynamicSharedMemoryBytes
                        << " bytes of dynamic shared memory per block; " << chip
                        << " gives a block at most " << *sharedMemoryLimit
                        << " (choose smaller tiles)";
      gpuModule.erase();
      return failure();
    }
    // TMA into CTA shared memory needs PTX 8.6: with less LLVM aborts in
    // instruction selection, so it is refused here.
    bool tma = llvm::any_of(abi.params, [](const ABIParam &p) {
      return p.kind == ABIParam::Kind::TensorMap;
    });
    if (tma && ptxVersionOf(features) < kTmaPtxVersion) {
      op->emitOpError() << "is lowered to a kernel that loads by TMA, which "
                           "needs PTX ISA 8.6 (features = \"+ptx86\"); the "
                           "target has features = \""
                        << features << "\"";
      gpuModule.erase();
      return failure();
    }
    LaunchContractAttr contract = buildLaunchContract(
        b.getContext(), abi, [&] { return op->emitOpError(); });
    if (!contract) {
      gpuModule.erase();
      return failure();
    }
    // On the gpu.module, not the gpu.func: the module op survives the
    // lowering to NVVM unchanged, so attnc-compile finds it there.
    gpuModule->setAttr(kLaunchContractAttrName, contract);
    return success();
  }
};
} // namespace
