//===- TargetDescription.cpp - the one description of each GPU ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The built-in targets and where each number comes from. Tiling defaults
// are measured where a device was available and marked where they are not;
// the SM count and roofline ceilings are the cost model's built-in
// datasheet devices (lib/CostModel), which a calibrated device file
// replaces in the report.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/TargetDescription.h"
#include "attnc/CostModel/CostModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace attnc;

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

RooflineModel attnc::rooflineOf(const cost::DeviceModel &d) {
  return RooflineModel{d.name, std::max(d.wgmmaTflops, d.mmaSyncTflops),
                       d.dramTBps, d.launchUs};
}

/// Opt-in shared memory per block: 227 KiB on Hopper (sm_90), 163 KiB on
/// A100 (sm_80), from NVIDIA's CUDA C++ Programming Guide, "Compute
/// Capabilities" table.
static constexpr int64_t kHopperSharedMemoryPerBlock = 227 * 1024;
static constexpr int64_t kAmpereSharedMemoryPerBlock = 163 * 1024;

static constexpr TargetFeature kAmpereFeatures = TargetFeature::MmaSync;
/// sm_90 is forward compatible and has neither wgmma nor setmaxnreg; the
/// arch-specific sm_90a has both.
static constexpr TargetFeature kSm90Features =
    TargetFeature::MmaSync | TargetFeature::Tma | TargetFeature::GridDependency;
static constexpr TargetFeature kSm90aFeatures =
    kSm90Features | TargetFeature::Wgmma | TargetFeature::SetMaxNReg;

/// Hopper attention tiles: 256 query rows per CTA (8 warps of 32 rows, two
/// m16 slabs each) and 64 K/V rows per step for d=128, 128 for d<=64.
/// Measured on an H200 2026-11-30 (bf16, S=4k..16k): 338-346 TFLOP/s for
/// d=128, 1.00x FlashAttention-2, against 235-245 for 64 x 64 tiles with 4
/// warps; fewer shared-memory and L2 bytes per mma is what the larger query
/// tile buys. H100 has the same SMs and shared memory, so the same tiles.
static TargetDescription hopper(StringRef device) {
  TargetDescription t;
  t.device = device.str();
  t.chip = "sm_90a";
  t.features = kSm90aFeatures;
  t.sharedMemoryPerBlock = kHopperSharedMemoryPerBlock;
  t.numSMs = cost::builtinDeviceModel(device.str())->numSMs;
  t.attentionBlockQ = 256;
  t.attentionBlockKV = 64;
  t.attentionBlockKVSmallHead = 128;
  // Warpgroup MMAs from swizzled shared memory: measured on the H200
  // 2026-12-01 (bf16, S = 8192): 469 / 441 TFLOP/s at d = 128 (non-causal /
  // causal) against the mma_sync strategy's 340-349; the whole GPU suite
  // passes on it. The tiles above stay the mma_sync strategy's.
  // The warp-specialised form (a TMA producer warpgroup, an mbarrier ring)
  // at every head dim: measured 2026-12-01, d = 128, S = 2048 / 8192, 465 /
  // 499 TFLOP/s non-causal and 384 / 467 causal against wgmma's 439 / 470
  // and 356 / 441 (with cp.async loads; TMA added 4-13%). At d = 64 with
  // three consumer warpgroups and 192 x 128 tiles (FlashAttention-3's):
  // S = 2k / 4k / 8k / 16k, 419 / 444 / 457 / 450 non-causal and 299 / 364 /
  // 414 / 438 causal against wgmma's 377 / 392 / 397 / 399 and 310 / 358 /
  // 379 / 386.
  t.attentionStrategy = TileStrategy::wgmma_ws;
  t.attentionStrategyLargeHead = TileStrategy::wgmma_ws;
  // The backward on warpgroup MMAs: measured on the H200 2026-12-03 (bf16,
  // B·S = 16k, H·d = 2048, S = 1k / 4k / 16k): 244 / 331 / 363 TFLOP/s
  // non-causal at d = 128 against mma_sync's 175 / 215 / 230, and 159 /
  // 221 / 245 at d = 64 against 147 / 196 / 216; never slower.
  t.backwardStrategy = TileStrategy::wgmma;
  t.wgmmaBackwardLongMinSeqQ = 2048;
  t.wgmmaBackwardLongMinSeqQCausal = 4096;
  t.wgmmaBackwardL2GroupMib = 32;
  // Unmasked d = 128 without overlap_pv, interleaved on the H200: 445 / 495
  // against 428 / 498 TFLOP/s at S = 512 / 1k (2026-12-05 09:52; 450 / 504
  // against 430 / 496 on 2026-12-04). Causal lost there (241 / 334 / 425
  // against 250 / 338 / 437 at 512 / 1000 / 2048), so it has no variant.
  t.wgmmaNoOverlapMaxSeqKV = 1024;
  t.wgmmaNoOverlapMaxSeqKVCausal = 0;
  // Ragged batches of short sequences: 64 x 64 tiles up to a mean of 1024
  // rows causal (measured faster at means 264-1044, slower from 2241, at d
  // = 128 and d = 64 alike), 384 unmasked (d = 128: faster at 264, slower
  // at 630).
  t.raggedShortMaxMeanRows = 1024;
  t.raggedShortMaxMeanRowsUnmasked = 384;
  t.roofline = rooflineOf(*cost::builtinDeviceModel(device.str()));
  return t;
}

/// Ampere is not measured: FlashAttention-2's mma.sync defaults (128 x 64,
/// 4 warps).
static TargetDescription a100() {
  TargetDescription t;
  t.device = "a100";
  t.chip = "sm_80";
  t.features = kAmpereFeatures;
  t.sharedMemoryPerBlock = kAmpereSharedMemoryPerBlock;
  t.numSMs = cost::builtinDeviceModel("a100")->numSMs;
  t.attentionBlockQ = 128;
  t.attentionBlockKV = 64;
  t.attentionBlockKVSmallHead = 64;
  t.roofline = rooflineOf(*cost::builtinDeviceModel("a100"));
  return t;
}

/// A chip and the device it resolves to. sm_90a resolves to H100, the
/// first Hopper part; H200 differs only
/// in HBM (capacity and bandwidth), which changes no compilation decision,
/// so `device=h200` is needed only where the roofline matters.
struct ChipDefault {
  StringRef chip;
  StringRef device;
};
static constexpr ChipDefault kChipDefaults[] = {
    {"sm_80", "a100"}, {"sm_90", "h100"}, {"sm_90a", "h100"}};

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

ArrayRef<TargetDescription> attnc::getTargetDescriptions() {
  static const TargetDescription kTable[] = {hopper("h100"), hopper("h200"),
                                             a100()};
  return kTable;
}

FailureOr<TargetDescription> attnc::lookupTargetDescription(StringRef name) {
  for (const TargetDescription &t : getTargetDescriptions())
    if (name.equals_insensitive(t.device))
      return t;
  for (const ChipDefault &c : kChipDefaults) {
    if (name != c.chip)
      continue;
    TargetDescription t = *lookupTargetDescription(c.device);
    if (t.chip != c.chip) {
      // The forward-compatible sm_90 keeps Hopper's tiles but loses what
      // only the arch-specific sm_90a has.
      t.chip = c.chip.str();
      t.features = kSm90Features;
      t.attentionStrategy = TileStrategy::mma_sync;
      t.attentionStrategyLargeHead = TileStrategy::mma_sync;
      t.backwardStrategy = TileStrategy::mma_sync;
    }
    return t;
  }
  return failure();
}

ArrayRef<StringRef> attnc::getKnownTargetChips() {
  static const SmallVector<StringRef> kChips = llvm::map_to_vector(
      kChipDefaults, [](const ChipDefault &c) { return c.chip; });
  return kChips;
}

SmallVector<StringRef> attnc::getKnownTargetDevices() {
  return llvm::map_to_vector(
      getTargetDescriptions(),
      [](const TargetDescription &t) { return StringRef(t.device); });
}

std::string attnc::getKnownTargetNames() {
  return llvm::join(getKnownTargetDevices(), ", ") + " (devices) or " +
         llvm::join(getKnownTargetChips(), ", ") + " (chips)";
}

//===----------------------------------------------------------------------===//
// Derived
//===----------------------------------------------------------------------===//

SmallVector<StringRef> TargetDescription::getFeatureNames() const {
  static constexpr std::pair<TargetFeature, StringLiteral> kNames[] = {
      {TargetFeature::MmaSync, "mma_sync"},
      {TargetFeature::Tma, "tma"},
      {TargetFeature::Wgmma, "wgmma"},
      {TargetFeature::SetMaxNReg, "setmaxnreg"},
      {TargetFeature::GridDependency, "griddepcontrol"}};
  SmallVector<StringRef> names;
  for (auto [feature, name] : kNames)
    if (hasFeature(feature))
      names.push_back(name);
  return names;
}

FlashConfigAttr TargetDescription::attentionConfig(
    MLIRContext *ctx, int64_t headDim, int64_t blockQ, int64_t blockKV,
    std::optional<TileStrategy> strategy, int64_t stages, bool masked,
    int64_t keyWarps, bool interleaveKV, std::optional<bool> overlapPV) const {
  TileStrategy kind = strategy.value_or(
      headDim > 64 ? attentionStrategyLargeHead : attentionStrategy);
  // Without a mask every work tile costs the same, and the persistent grid
  // (the next tile's loads and the previous one's TMA store overlapping
  // the current one) wins; with one, its static order loses to the
  // hardware's scheduling of longest-first tiles.
  bool persistentDefault = !strategy && !masked && wgmmaPersistentUnmasked &&
                           kind == TileStrategy::wgmma_ws;
  if (persistentDefault)
    kind = TileStrategy::wgmma_ws_persistent;
  auto [defaultQ, defaultKV] = attentionTiles(headDim);
  bool warpgroups = usesWarpgroups(kind);
  bool specialised = isWarpSpecialised(kind);
  if (warpgroups) {
    defaultQ = wgmmaBlockQ;
    defaultKV = headDim <= 64 ? wgmmaBlockKVSmallHead : wgmmaBlockKV;
    if (headDim <= 64 && specialised) {
      defaultQ = masked ? wgmmaWsBlockQSmallHeadMasked : wgmmaWsBlockQSmallHead;
      defaultKV = wgmmaWsBlockKVSmallHead;
    }
    if (headDim > 64 && !masked && specialised)
      defaultKV =
          persistentDefault ? wgmmaPersistentBlockKV : wgmmaBlockKVUnmasked;
  }
  int64_t q = blockQ ? blockQ : defaultQ, kv = blockKV ? blockKV : defaultKV;
  // mma.sync: tiles of 128 rows and more give each warp two 16-row slabs,
  // smaller ones one. wgmma: a warp owns the 16 rows of its quarter of a
  // warpgroup's m64 MMA. Never fewer than one warp.
  int64_t rowsPerWarp = warpgroups ? 16
                                   : (q >= 128 ? attentionRowsPerWarpLarge
                                               : attentionRowsPerWarpSmall);
  int64_t warps = std::max<int64_t>(1, q / rowsPerWarp) * keyWarps;
  if (!stages)
    stages = warpgroups     ? wgmmaStages
             : interleaveKV ? interleavedStages
                            : attentionStages;
  bool overlap =
      overlapPV.value_or(specialised && headDim > 64 && wgmmaOverlapLargeHead);
  return FlashConfigAttr::get(ctx, q, kv, warps, stages, kind,
                              /*fallback=*/{}, keyWarps, interleaveKV, overlap);
}

FlashConfigAttr
TargetDescription::attentionBackwardConfig(MLIRContext *ctx, int64_t headDim,
                                           int64_t blockQ, int64_t blockKV,
                                           TileStrategy strategy) const {
  // (The backward's strategies: mma_sync, wgmma, wgmma_persistent.)
  if (usesWarpgroups(strategy)) {
    // A warpgroup (four warps) per 64 rows of the K/V tile. Measured on the
    // H200 2026-12-03 (bf16, S = 1k / 4k / 16k, non-causal): d = 64 with
    // one warpgroup 170 / 243 / 270 TFLOP/s against two's 157 / 217 / 241;
    // d = 128 with one 196 / 245 / 261 against 239 / 320 / 353 (its dQ
    // product then has all 128 columns: 64 more accumulator registers).
    int64_t kv = blockKV         ? blockKV
                 : headDim <= 64 ? wgmmaBackwardBlockKVSmallHead
                                 : wgmmaBackwardBlockKV;
    return FlashConfigAttr::get(ctx, blockQ ? blockQ : wgmmaBackwardBlockQ, kv,
                                kv / 16, backwardStages, strategy);
  }
  // One 16-row mma.sync slab of the K/V tile per warp.
  int64_t kv = blockKV ? blockKV : backwardWarps * 16;
  return FlashConfigAttr::get(ctx, blockQ ? blockQ : backwardBlockQ, kv,
                              kv / 16, backwardStages, TileStrategy::mma_sync);
}

std::optional<TargetDescription::SizeVariant>
TargetDescription::attentionBackwardVariant(FlashConfigAttr config,
                                            int64_t headDim,
                                            bool causal) const {
  TileStrategy kind = config.getStrategy();
  int64_t minRows =
      causal ? wgmmaBackwardLongMinSeqQCausal : wgmmaBackwardLongMinSeqQ;
  if (minRows <= 0 || headDim > 64 || !usesWarpgroups(kind) ||
      config.getBlockQ() >= 128)
    return std::nullopt;
  constexpr int64_t kLongTile = 128;
  return SizeVariant{attentionBackwardConfig(config.getContext(), headDim,
                                             kLongTile, kLongTile, kind),
                     /*keys=*/false, minRows, 0};
}

std::optional<TargetDescription::SizeVariant>
TargetDescription::attentionVariant(FlashConfigAttr config, int64_t headDim,
                                    bool causal) const {
  TileStrategy kind = config.getStrategy();
  int64_t maxKeys =
      causal ? wgmmaNoOverlapMaxSeqKVCausal : wgmmaNoOverlapMaxSeqKV;
  if (maxKeys <= 0 || headDim <= 64 || !config.getOverlapPV() ||
      !isWarpSpecialised(kind))
    return std::nullopt;
  return SizeVariant{config.withOverlapPV(false), /*keys=*/true, 0, maxKeys};
}

std::optional<TargetDescription::SizeVariant>
TargetDescription::raggedAttentionVariant(FlashConfigAttr config,
                                          int64_t headDim, bool causal) const {
  int64_t maxMean =
      causal ? raggedShortMaxMeanRows : raggedShortMaxMeanRowsUnmasked;
  // Measured for the wgmma kernel (the strategy ragged batches take on
  // sm_90a: cp.async loads that stop at each sequence's end) at d = 128,
  // and at d = 64 under a causal mask only (its unmasked kernel was not
  // measured against the smaller tiles).
  bool measured = headDim == 128 || (headDim == 64 && causal);
  if (maxMean <= 0 || !measured ||
      config.getStrategy() != TileStrategy::wgmma ||
      config.getBlockQ() <= raggedShortTile)
    return std::nullopt;
  FlashConfigAttr small = attentionConfig(
      config.getContext(), headDim, raggedShortTile, raggedShortTile,
      TileStrategy::wgmma, /*stages=*/0, /*masked=*/causal);
  SizeVariant v{small, /*keys=*/false, 0, maxMean};
  v.perBatch = true;
  return v;
}

FlashConfigAttr TargetDescription::withFallback(FlashConfigAttr config,
                                                int64_t headDim,
                                                int64_t elementBits) const {
  TileStrategy kind = config.getStrategy();
  if (config.getFallback() || !isWarpSpecialised(kind))
    return config;
  // mma.sync's pipeline is two stages deep; with the warps of the TMA
  // kernel's consumers each owns one 16-row slab of the query tile.
  constexpr int64_t kFallbackStages = 2;
  if (mmaSyncSharedMemoryBytes(config.getBlockQ(), config.getBlockKV(), headDim,
                               elementBits,
                               kFallbackStages) > sharedMemoryPerBlock)
    return config;
  auto fallback = FlashConfigAttr::get(
      config.getContext(), config.getBlockQ(), config.getBlockKV(),
      config.getWarps(), kFallbackStages, TileStrategy::mma_sync_unaligned);
  return config.withFallback(fallback);
}

int64_t TargetDescription::attentionL2GroupMib(int64_t headDim,
                                               TileStrategy strategy) const {
  // The persistent grid draws its tiles in the groups' order at every
  // head dimension (d = 64 causal, S = 16k on the H200: 434 TFLOP/s in
  // groups against 413 without); one block per tile gained nothing at
  // d = 64.
  if (strategy == TileStrategy::wgmma_ws_persistent)
    return wgmmaL2GroupMib;
  return strategy == TileStrategy::wgmma_ws && headDim > 64 ? wgmmaL2GroupMib
                                                            : 0;
}

int64_t
TargetDescription::attentionBackwardL2GroupMib(TileStrategy strategy) const {
  // The persistent backward walks its drawn tiles in the grid's order and
  // has no groups.
  return strategy == TileStrategy::wgmma ? wgmmaBackwardL2GroupMib : 0;
}

std::string attnc::ptxFeaturesForChip(StringRef chip) {
  return chip == "sm_90a" ? "+ptx86" : "+ptx80";
}

int64_t attnc::ptxVersionOf(StringRef features) {
  SmallVector<StringRef> parts;
  features.split(parts, ',');
  int64_t version = 0;
  for (StringRef f : parts) {
    f = f.trim();
    int64_t v = 0;
    if (f.consume_front("+ptx") && !f.getAsInteger(10, v))
      version = std::max(version, v);
  }
  return version;
}
