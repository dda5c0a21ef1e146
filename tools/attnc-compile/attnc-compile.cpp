//===- attnc-compile.cpp - ahead-of-time compiler driver ------------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// attnc-compile IN.mlir -o DIR [--chip sm_90a | --target h200] [--report]
//
// Runs the attnc pipeline (the same builder attnc-opt --attnc-pipeline
// runs), then serializes every kernel to PTX through its #nvvm.target (as
// gpu-module-to-binary's format=isa) and assembles the PTX into a cubin
// with ptxas (the arguments format=bin would give it): each kernel goes
// through LLVM once, and its ptxas runs while the next kernel is in LLVM
// (at most --jobs at a time). Writes one .ptx and one .cubin per kernel and
// a manifest.json (version 2) a host loads them by: each kernel's entry is
// its gpu.module's #attnc.launch_contract (docs/launch-contract.md) plus the
// file names.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/KernelABI.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/Dialect/Attnc/Transforms/Transforms.h"
#include "attnc/InitAll/InitAll.h"
#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Target/TargetDescription.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <deque>

using namespace mlir;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Optional);
static cl::opt<bool> calibration(
    "calibration",
    cl::desc("compile the cost model's microbenchmark kernels "
             "(--attnc-calibration-kernels) instead of an input file: the "
             "module `python3 -m attnc.calibrate` times"));
static cl::opt<std::string> outDir("o", cl::desc("output directory"),
                                   cl::value_desc("DIR"), cl::Required);
static cl::opt<std::string> chip("chip", cl::desc("target chip"),
                                 cl::init("sm_90a"));
static cl::opt<std::string>
    target("target",
           cl::desc("target device (h100, h200, a100) or chip; overrides "
                    "--chip and is the default --report-device"),
           cl::init(""));
// A diagnostic names the source line, the op and the rule; MLIR's dump of
// the op (the lowered form, often hundreds of lines of generic IR) is for
// whoever debugs the compiler, so only on request.
static cl::opt<bool> printOpOnDiagnostic(
    "print-op-on-diagnostic",
    cl::desc("attach the failing operation's IR to each error (for "
             "debugging the compiler)"),
    cl::init(false));
static cl::opt<bool> report("report",
                            cl::desc("print the intensity report (FLOPs, "
                                     "bytes, regime) of the input's kernels"));
static cl::opt<std::string>
    reportDevice("report-device",
                 cl::desc("device whose roofline --report prices kernels "
                          "with (h100, h200, a100; default: the --target "
                          "device, else h200)"),
                 cl::init("h200"));
static cl::opt<std::string> reportDeviceFile(
    "report-device-file",
    cl::desc("a device file of measured ceilings (python3 -m "
             "attnc.calibrate) that --report's cost model prices with"),
    cl::init(""));
static cl::opt<int64_t> blockQ("block-q", cl::desc("attention query tile"),
                               cl::init(0));
static cl::opt<int64_t> blockKV("block-kv", cl::desc("attention K/V tile"),
                                cl::init(0));
static cl::opt<std::string>
    strategy("strategy",
             cl::desc("attention tile strategy: mma_sync, wgmma, wgmma_ws, "
                      "wgmma_ws_persistent or mma_sync_unaligned (sm_90a; "
                      "default: the target's)"),
             cl::init(""));
static cl::opt<int64_t>
    stages("stages",
           cl::desc("attention K/V tiles in flight (default: the target's)"),
           cl::init(0));
static cl::opt<int64_t> keyWarps(
    "key-warps",
    cl::desc("warps splitting each attention K/V tile's keys (mma_sync; "
             "default: the target's)"),
    cl::init(0));
static cl::opt<bool> interleaveKV(
    "interleave-kv",
    cl::desc("mma_sync attention kernels interleave their K and V loads in "
             "one ring of `stages` tile buffers (default: the target's)"),
    cl::init(false));
static cl::opt<std::string> overlapPV(
    "overlap-pv",
    cl::desc("wgmma attention kernels overlap P V of a step with the next "
             "step's softmax: on or off (default: the target's choice)"),
    cl::init(""));
static cl::opt<bool> sharedP(
    "shared-p",
    cl::desc("overlapped wgmma_ws attention kernels read P V's P from two "
             "shared-memory buffers instead of registers (flash_config's "
             "shared_p)"),
    cl::init(false));
static cl::opt<bool> mmaRowSums(
    "mma-row-sums",
    cl::desc("wgmma attention kernels take the softmax's row sums on the "
             "tensor cores, P against ones (flash_config's mma_row_sums)"),
    cl::init(false));
static cl::opt<int64_t> l2GroupMib(
    "l2-group-mib",
    cl::desc("attention grids that run longest first (causal) take their "
             "heads in groups whose K and V (a backward: Q, dO and dQ) fit "
             "this many MiB (0: a batch's heads together; default: the "
             "target's choice)"),
    cl::init(-1));
static cl::opt<bool> fallback(
    "fallback",
    cl::desc("give attention kernels that load by TMA an mma_sync_unaligned "
             "fallback kernel for tensors TMA cannot address (default: on)"),
    cl::init(true));
static cl::opt<bool> oneMaskedLoop(
    "one-masked-loop",
    cl::desc("attention under a mask visits every tile that tests scores "
             "(masked tiles on both sides of the fully visible ones, as "
             "under a sliding window or document ids, and a short tail "
             "tile) in one loop: one loop body that tests scores per kernel "
             "(default: on)"),
    cl::init(true));
static cl::opt<int64_t> splitKV(
    "split-kv",
    cl::desc("split the K/V loops of forward attention into at most N "
             "parallel parts and a combine kernel (decoding; 0: no split)"),
    cl::init(0));
static cl::opt<bool> unsplit(
    "unsplit",
    cl::desc("with --split-kv: also compile each split function's unsplit "
             "twin <name>_unsplit, one kernel that hosts run when the split "
             "rule gives one split (default: on)"),
    cl::init(true));
static cl::opt<int64_t> gqaGroup(
    "gqa-group",
    cl::desc("with --split-kv: pack query heads known only at run time in "
             "GQA groups of G (the kernels require H = G * Hkv; 0: none)"),
    cl::init(0));
static cl::opt<bool> backward(
    "backward",
    cl::desc("also compile the backward of each attention function "
             "(f_backward, --attnc-derive-backward) into the same manifest"),
    cl::init(false));
static cl::opt<std::string> backwardStrategy(
    "backward-strategy",
    cl::desc("with --backward: the backward kernels' tile strategy, mma_sync, "
             "wgmma or wgmma_persistent (sm_90a; default: the target's)"),
    cl::init(""));
static cl::opt<bool> sizeVariants(
    "size-variants",
    cl::desc("compile kernels the target runs faster with another "
             "configuration at some sizes (sm_90a: the d <= 64 backward's "
             "128 x 128 tiles from Sq = 4096, the d = 128 forward without "
             "overlap_pv up to 1024 keys) also in that configuration, as size "
             "variants in the manifest that the runtime chooses by size "
             "(default: on)"),
    cl::init(true));
static cl::opt<int64_t> fusionAccesses(
    "fusion-accesses-per-thread",
    cl::desc("16-byte accesses per thread in the row kernels of fusions"),
    cl::init(4));
static cl::opt<std::string>
    cudaRoot("cuda-root", cl::desc("CUDA toolkit directory"), cl::init(""));
static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("kernels serialized by LLVM at once, and ptxas processes "
                  "run at once (default: the hardware threads)"),
         cl::init(0));

static int fail(const Twine &msg) {
  llvm::errs() << "attnc-compile: error: " << msg << "\n";
  return 1;
}

static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

static LogicalResult writeFile(StringRef path, StringRef bytes) {
  std::string err;
  auto file = openOutputFile(path, &err);
  if (!file) {
    llvm::errs() << "attnc-compile: error: cannot write " << path << ": " << err
                 << "\n";
    return failure();
  }
  file->os() << bytes;
  file->keep();
  return success();
}

namespace {
/// One kernel's ptxas run: its files (removed when done) and process.
struct PtxasRun {
  std::string module, kernel; // gpu.module symbol, kernel name
  SmallString<128> ptx, cubin, log;
  std::optional<llvm::FileRemover> removers[3];
  std::vector<std::string> args;
  llvm::sys::ProcessInfo process;
};
} // namespace

static LogicalResult makeTemp(StringRef kernel, StringRef suffix,
                              SmallString<128> &path,
                              std::optional<llvm::FileRemover> &remover) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attnc-" + kernel, suffix, path)) {
    llvm::errs() << "attnc-compile: error: cannot create a temporary file: "
                 << ec.message() << "\n";
    return failure();
  }
  remover.emplace(path.str());
  return success();
}

/// The one #nvvm.target a kernel's gpu.module carries (the pipeline's
/// attnc-convert-to-gpu attaches it), or an error on the module.
static FailureOr<NVVM::NVVMTargetAttr> nvvmTarget(gpu::GPUModuleOp km) {
  ArrayAttr targets = km.getTargetsAttr();
  auto nvvm = targets && targets.size() == 1
                  ? dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                  : NVVM::NVVMTargetAttr();
  if (!nvvm)
    return km.emitError("attnc-compile compiles kernels with one "
                        "#nvvm.target");
  return nvvm;
}

/// ptxas's arguments for one kernel, as gpu-module-to-binary's format=bin
/// builds them from the kernel's #nvvm.target: -arch, --opt-level and the
/// target's own ptxas options.
static std::vector<std::string> ptxasArgs(NVVM::NVVMTargetAttr nvvm,
                                          const PtxasRun &run) {
  std::vector<std::string> args = {
      "ptxas", "-arch", nvvm.getChip().str(), run.ptx.str().str(), "-o",
      run.cubin.str().str(), "--opt-level", std::to_string(nvvm.getO()),
      // Registers per thread for the manifest
      // (the cost model's occupancy).
      "-v"};
  // (getCmdOptions reads the flags without checking there are any.)
  if (nvvm.getFlags() && nvvm.hasCmdOptions())
    for (Attribute a : cast<ArrayAttr>(nvvm.getCmdOptions()->getValue()))
      if (auto str = dyn_cast<StringAttr>(a))
        args.push_back(str.str());
  return args;
}

/// The PTX of one kernel: its gpu.module serialized by its target (LLVM
/// NVPTX), as gpu-module-to-binary's format=isa does, without changing the
/// module.
static FailureOr<std::string> serializeToPtx(gpu::GPUModuleOp km,
                                             NVVM::NVVMTargetAttr nvvm,
                                             StringRef toolkit,
                                             SymbolTable &symbols) {
  auto target = cast<gpu::TargetAttrInterface>(Attribute(nvvm));
  gpu::TargetOptions options(toolkit, /*librariesToLink=*/{},
                             /*cmdOptions=*/"", /*elfSection=*/"",
                             gpu::CompilationTarget::Assembly,
                             [&]() { return &symbols; });
  std::optional<SmallVector<char, 0>> object =
      target.serializeToObject(km, options);
  if (!object) {
    km.emitError("serializing the kernel to PTX failed");
    return failure();
  }
  return std::string(object->begin(), object->end());
}

/// Serializes every kernel to PTX and assembles each into a cubin with
/// ptxas: kernels go through LLVM on up to `parallel` threads at once (each
/// in its own LLVM context; the MLIR context is multithreaded and only
/// read), a kernel's ptxas starts as soon as its PTX exists, at most
/// `parallel` ptxas processes at a time. Fills kernel module name
/// -> PTX and -> cubin; a failed run reports ptxas's log under the
/// kernel's name (its launch contract's).
static LogicalResult compileKernels(
    ModuleOp module, ArrayRef<gpu::GPUModuleOp> kernels, StringRef toolkit,
    StringRef ptxas, unsigned parallel, llvm::StringMap<std::string> &ptx,
    llvm::StringMap<std::string> &cubin, llvm::StringMap<int64_t> &registers) {
  SymbolTable symbols(module);
  // Largest first (by operation count, a proxy for ptxas's time): its
  // ptxas, the longest, starts while the others are still in LLVM.
  SmallVector<std::pair<int64_t, gpu::GPUModuleOp>> order;
  for (gpu::GPUModuleOp km : kernels) {
    int64_t ops = 0;
    km.walk([&](Operation *) { ++ops; });
    order.push_back({-ops, km});
  }
  llvm::stable_sort(order, [](auto &a, auto &b) { return a.first < b.first; });
  // Targets on this thread (a kernel without one is reported here), then
  // every kernel's LLVM at once, largest first.
  SmallVector<NVVM::NVVMTargetAttr> targets;
  for (gpu::GPUModuleOp km : llvm::make_second_range(order)) {
    FailureOr<NVVM::NVVMTargetAttr> nvvm = nvvmTarget(km);
    if (failed(nvvm))
      return failure();
    targets.push_back(*nvvm);
  }
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(parallel));
  std::vector<std::shared_future<FailureOr<std::string>>> texts;
  for (auto [km, nvvm] :
       llvm::zip_equal(llvm::make_second_range(order), targets))
    texts.push_back(pool.async([&, km = km, nvvm = nvvm]() {
      return serializeToPtx(km, nvvm, toolkit, symbols);
    }));
  std::deque<PtxasRun> runs;
  bool ok = true;
  auto finish = [&](PtxasRun &run) {
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(run.process, /*SecondsToWait=*/std::nullopt, &error);
    if (done.ReturnCode == 0) {
      // ptxas -v: "ptxas info    : Used 168 registers, ...".
      if (auto log = llvm::MemoryBuffer::getFile(run.log)) {
        StringRef text = (*log)->getBuffer();
        size_t at = text.find("Used ");
        int64_t n = 0;
        if (at != StringRef::npos &&
            !text.substr(at + 5).take_while(llvm::isDigit).getAsInteger(10, n))
          registers[run.module] = n;
      }
      return;
    }
    ok = false;
    auto log = llvm::MemoryBuffer::getFile(run.log);
    llvm::errs() << "attnc-compile: error: ptxas failed on kernel "
                 << run.kernel << " (exit code " << done.ReturnCode << ")"
                 << (error.empty() ? "" : ": " + error) << "\n"
                 << (log ? (*log)->getBuffer() : "") << "\n";
  };
  size_t next = 0, running = 0;
  for (auto [i, km] : llvm::enumerate(llvm::make_second_range(order))) {
    FailureOr<std::string> text = texts[i].get();
    if (failed(text))
      return failure();
    PtxasRun &run = runs.emplace_back();
    run.module = km.getSymName().str();
    attnc::LaunchContractAttr contract = attnc::getLaunchContract(km);
    run.kernel = contract ? contract.getKernel().str() : run.module;
    ptx[run.module] = std::move(*text);
    if (failed(makeTemp(run.kernel, "ptx", run.ptx, run.removers[0])) ||
        failed(makeTemp(run.kernel, "cubin", run.cubin, run.removers[1])) ||
        failed(makeTemp(run.kernel, "log", run.log, run.removers[2])) ||
        failed(writeFile(run.ptx, ptx[run.module])))
      return failure();
    run.args = ptxasArgs(targets[i], run);
    if (running == parallel) {
      finish(runs[next++]);
      --running;
    }
    SmallVector<StringRef> argRefs(run.args.begin(), run.args.end());
    std::optional<StringRef> redirects[] = {std::nullopt, run.log.str(),
                                            run.log.str()};
    std::string error;
    bool launchFailed = false;
    run.process = llvm::sys::ExecuteNoWait(ptxas, argRefs, std::nullopt,
                                           redirects, 0, &error, &launchFailed);
    if (launchFailed) {
      llvm::errs() << "attnc-compile: error: cannot run " << ptxas << ": "
                   << error << "\n";
      return failure();
    }
    ++running;
  }
  for (; next < runs.size(); ++next)
    finish(runs[next]);
  if (!ok)
    return failure();
  for (PtxasRun &run : runs) {
    auto bytes = llvm::MemoryBuffer::getFile(run.cubin, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    if (!bytes) {
      llvm::errs() << "attnc-compile: error: ptxas wrote no cubin for "
                   << run.kernel << "\n";
      return failure();
    }
    cubin[run.module] = (*bytes)->getBuffer().str();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "attnc ahead-of-time compiler\n");
  if (calibration == !inputFile.empty())
    return fail(calibration ? "--calibration takes no input file"
                            : "no input file (give <input.mlir>, or "
                              "--calibration for the microbenchmarks)");
  // Packing is part of the decoding pipeline: alone it would do nothing.
  if (gqaGroup != 0 && (splitKV <= 0 || gqaGroup < 0))
    return fail("--gqa-group=" + Twine(gqaGroup.getValue()) +
                " needs --split-kv and a group size of at least 1");

  std::string targetName = target.empty() ? chip.getValue() : target.getValue();
  FailureOr<attnc::TargetDescription> description =
      attnc::lookupTargetDescription(targetName);
  if (failed(description))
    return fail(
        Twine(target.empty() ? "unsupported chip '" : "unsupported target '") +
        targetName + "': attnc targets " + attnc::getKnownTargetNames());
  // The manifest and the log name the chip the kernels were built for.
  std::string builtChip = description->chip;
  // A device named by --target prices the report unless --report-device
  // says otherwise; a chip alone does not pick a roofline.
  std::string reportOn = reportDevice;
  if (!reportDevice.getNumOccurrences() &&
      llvm::is_contained(attnc::getKnownTargetDevices(),
                         StringRef(target).lower()))
    reportOn = description->device;
  std::string toolkit = attnc::findCudaRoot(cudaRoot);
  std::string ptxas = toolkit + "/bin/ptxas";
  std::string libdevice = toolkit + "/nvvm/libdevice/libdevice.10.bc";
  if (!llvm::sys::fs::can_execute(ptxas) || !llvm::sys::fs::exists(libdevice))
    return fail("the CUDA toolkit was not found: looked for " + ptxas +
                " and " + libdevice +
                " (from --cuda-root, CUDA_ROOT, CUDA_HOME, CUDA_PATH, else "
                "/usr/local/cuda); install CUDA 13 or pass --cuda-root");
  // gpu-module-to-binary finds libdevice through these variables only.
  setenv("CUDA_ROOT", toolkit.c_str(), 1);

  DialectRegistry registry;
  attnc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(printOpOnDiagnostic);

  auto t0 = std::chrono::steady_clock::now();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      calibration
          ? OwningOpRef<ModuleOp>(ModuleOp::create(UnknownLoc::get(&context)))
          : parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);

  // Pass options cannot be copied: fill each instance from the flags.
  auto setOptions = [&](attnc::AttncPipelineOptions &o) {
    o.chip = builtChip;
    o.target = targetName;
    o.blockQ = blockQ;
    o.blockKV = blockKV;
    o.strategy = strategy;
    o.stages = stages;
    o.keyWarps = keyWarps;
    if (interleaveKV.getNumOccurrences())
      o.interleaveKV = interleaveKV;
    o.overlapPV = overlapPV;
    o.sharedP = sharedP;
    o.mmaRowSums = mmaRowSums;
    o.l2GroupMib = l2GroupMib;
    o.fallback = fallback;
    o.oneMaskedLoop = oneMaskedLoop;
    o.backward = backward;
    o.backwardStrategy = backwardStrategy;
    o.sizeVariants = sizeVariants;
    o.splitKV = splitKV;
    o.unsplit = unsplit;
    o.gqaGroup = gqaGroup;
    o.cudaRoot = toolkit;
    o.fusionAccessesPerThread = fusionAccesses;
  };
  attnc::AttncPipelineOptions options;
  setOptions(options);

  if (report && !calibration) {
    // The graph as written (each op its own kernel, as eager execution
    // runs it), then as attnc compiles it (fused and tiled).
    attnc::AttncReportIntensityOptions ro;
    ro.device = reportOn;
    ro.deviceFile = reportDeviceFile;
    attnc::AttncPipelineOptions fusedOnly;
    setOptions(fusedOnly);
    fusedOnly.toGPU = false;
    fusedOnly.verifyNoGlobalScores = false;
    for (bool fused : {false, true}) {
      llvm::outs() << (fused
                           ? "\n== as compiled (fused) ==\n"
                           : "== as written (unfused, one kernel per op) ==\n");
      PassManager rpm(&context);
      if (fused)
        attnc::buildAttncPipeline(rpm, fusedOnly);
      rpm.addPass(attnc::createAttncReportIntensity(ro));
      OwningOpRef<ModuleOp> copy = module->clone();
      if (failed(rpm.run(*copy)))
        return fail("the intensity report failed");
    }
    llvm::outs() << "\n";
  }

  PassManager pm(&context);
  if (calibration) {
    attnc::AttncCalibrationKernelsOptions co;
    co.chip = builtChip;
    pm.addPass(attnc::createAttncCalibrationKernels(co));
    attnc::buildKernelToNVVMPipeline(pm);
  } else {
    attnc::buildAttncPipeline(pm, options);
  }
  if (failed(pm.run(*module)))
    return fail("the pipeline failed on " + inputFile +
                " (the diagnostics above name the op and the reason)");
  double lowerSeconds = secondsSince(t0);

  SmallVector<gpu::GPUModuleOp> kernels(module->getOps<gpu::GPUModuleOp>());
  if (kernels.empty())
    return fail(inputFile + " produced no kernel");

  auto t1 = std::chrono::steady_clock::now();
  unsigned parallel =
      jobs ? jobs : llvm::hardware_concurrency().compute_thread_count();
  llvm::StringMap<std::string> ptxOf, cubinOf;
  llvm::StringMap<int64_t> registersOf;
  if (failed(compileKernels(*module, kernels, toolkit, ptxas,
                            std::max(parallel, 1u), ptxOf, cubinOf,
                            registersOf)))
    return fail("compiling the kernels failed (LLVM NVPTX or ptxas; see "
                "above)");
  double serializeSeconds = secondsSince(t1);

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create " + outDir + ": " + ec.message());
  json::Array entries;
  llvm::StringSet<> written;
  for (gpu::GPUModuleOp km : kernels) {
    attnc::LaunchContractAttr contract = attnc::getLaunchContract(km);
    if (!contract)
      return fail("gpu.module @" + km.getSymName() +
                  " has no attnc.launch_contract");
    json::Object entry = attnc::launchContractToJSONObject(contract);
    std::string name = contract.getKernel().str();
    // The contract's verifier already holds names to C identifiers; the
    // file system is checked again here, where a bad name would do harm.
    if (!attnc::isKernelName(name) || !written.insert(name).second)
      return fail("kernel name '" + name +
                  "' is not a C identifier or is used twice; no file is "
                  "written for it");
    SmallString<128> ptxPath(outDir), cubinPath(outDir);
    llvm::sys::path::append(ptxPath, name + ".ptx");
    llvm::sys::path::append(cubinPath, name + ".cubin");
    if (failed(writeFile(ptxPath, ptxOf[km.getSymName()])) ||
        failed(writeFile(cubinPath, cubinOf[km.getSymName()])))
      return 1;
    entry["ptx"] = name + ".ptx";
    entry["cubin"] = name + ".cubin";
    if (auto it = registersOf.find(km.getSymName()); it != registersOf.end())
      entry["registers"] = it->second;
    entries.push_back(std::move(entry));
  }
  // A fallback the manifest names but does not hold would be refused by
  // every host at load time.
  for (const json::Value &e : entries) {
    const json::Object *o = e.getAsObject();
    std::optional<StringRef> fb = o ? o->getString("fallback") : std::nullopt;
    if (fb && !written.contains(*fb))
      return fail("kernel '" + *o->getString("name") + "' names fallback '" +
                  *fb + "', which the module does not have");
  }
  json::Object manifest{
      {"attnc_manifest_version", 2},
      {"module", calibration ? std::string("calibration")
                             : llvm::sys::path::stem(inputFile).str()},
      {"chip", builtChip},
      {"kernels", std::move(entries)}};
  SmallString<128> manifestPath(outDir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  if (failed(writeFile(manifestPath, text)))
    return 1;
  llvm::outs() << llvm::formatv(
      "attnc-compile: {0} kernel(s) for {1} in {2}: pipeline {3:f3} s, PTX + "
      "cubin {4:f3} s, total {5:f3} s ({6:f3} s per kernel)\n",
      kernels.size(), builtChip, outDir.getValue(), lowerSeconds,
      serializeSeconds, lowerSeconds + serializeSeconds,
      (lowerSeconds + serializeSeconds) / kernels.size());
  return 0;
}
