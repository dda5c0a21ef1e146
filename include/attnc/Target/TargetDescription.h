//===- TargetDescription.h - the one description of each GPU ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Everything attnc knows about a GPU, in one place, keyed by device name
// (h100, h200, a100): the chip it compiles for, the hardware features a tile
// strategy may use, the shared memory and SM count, the default attention
// configuration, and the roofline ceilings the intensity report prices
// kernels with. A chip name (sm_80, sm_90, sm_90a) resolves to the chip's
// default device, so `chip=` options and `device=` options read the same
// table. The tiling passes, the pipeline, attnc-compile and the report all
// look targets up here; nothing else holds per-GPU numbers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_TARGETDESCRIPTION_H
#define ATTNC_TARGET_TARGETDESCRIPTION_H

#include "attnc/Dialect/Attnc/IR/AttncAttrs.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitmaskEnum.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace attnc {
namespace cost {
struct DeviceModel;
} // namespace cost

LLVM_ENABLE_BITMASK_ENUMS_IN_NAMESPACE();

/// Hardware features a kernel strategy may rely on. Each is named by the PTX
/// instruction it makes available.
enum class TargetFeature : uint32_t {
  None = 0,
  /// mma.sync tensor-core MMAs and cp.async (sm_80 and later).
  MmaSync = 1u << 0,
  /// Tensor Memory Accelerator bulk copies, cp.async.bulk.tensor (sm_90).
  Tma = 1u << 1,
  /// Warpgroup MMAs, wgmma.mma_async (sm_90a only: not forward compatible).
  Wgmma = 1u << 2,
  /// setmaxnreg, register reallocation between warpgroups (sm_90a only).
  SetMaxNReg = 1u << 3,
  /// griddepcontrol, programmatic dependent launch: a kernel's blocks start
  /// while the previous kernel on the stream finishes (sm_90).
  GridDependency = 1u << 4,
  LLVM_MARK_AS_BITMASK_ENUM(/*LargestValue=*/GridDependency)
};

/// Roofline ceilings of one device: the dense bf16 tensor-core peak, the HBM
/// bandwidth and the cost of one kernel launch. Their ratio, the ridge
/// point, separates compute-bound from bandwidth-bound kernels; the launch
/// cost marks overhead-bound ones.
struct RooflineModel {
  std::string name;
  /// Dense bf16/f16 tensor-core peak, TFLOP/s.
  double peakTflops;
  /// HBM bandwidth, TB/s (10^12 bytes per second).
  double bandwidthTBps;
  /// Fixed cost of one kernel launch, microseconds.
  double launchOverheadUs;

  /// FLOP per byte at which a kernel moves from bandwidth- to compute-bound:
  /// peak / bandwidth (TFLOP/s over TB/s is FLOP/byte).
  double ridge() const { return peakTflops / bandwidthTBps; }
};

/// The roofline of a cost-model device: its faster tensor-core family,
/// its copy bandwidth and its launch.
RooflineModel rooflineOf(const cost::DeviceModel &device);

/// One GPU as attnc targets it.
struct TargetDescription {
  /// The device name the table is keyed by: h100, h200, a100.
  std::string device;
  /// The chip kernels are compiled for (the NVVM target and PTX .target).
  std::string chip;
  TargetFeature features;
  /// Opt-in shared memory one CTA may use, bytes.
  int64_t sharedMemoryPerBlock;
  /// Streaming multiprocessors of the device (persistent grids size by it).
  int64_t numSMs;

  /// Default attention tiles: query rows per CTA and K/V rows per step,
  /// for head dimensions above 64 and for 64 and below.
  int64_t attentionBlockQ;
  int64_t attentionBlockKV;
  int64_t attentionBlockKVSmallHead;
  /// Query rows one warp owns in a large (>= 128-row) query tile and in a
  /// small one: mma.sync works on 16-row slabs, and two slabs per warp
  /// halve the shared-memory reads of K and V per mma.
  int64_t attentionRowsPerWarpLarge = 32;
  int64_t attentionRowsPerWarpSmall = 16;
  /// K/V tiles in flight in shared memory.
  int64_t attentionStages = 2;
  /// Single-tile buffers of an mma_sync kernel whose K and V loads
  /// interleave (FlashConfigAttr's interleave_kv): three keep two tiles in
  /// flight in 1.5 pairs' memory.
  int64_t interleavedStages = 3;
  /// The tile strategy attention kernels use on this target, for head dims
  /// up to 64 and above.
  TileStrategy attentionStrategy = TileStrategy::mma_sync;
  TileStrategy attentionStrategyLargeHead = TileStrategy::mma_sync;
  /// Tiles of the wgmma strategy: two warpgroups of 64 query rows (256
  /// threads leave each up to 255 registers for the S and O accumulators,
  /// 64 + 64 at d = 128); one m64n128 MMA per k step of Q K^T above d = 64,
  /// m64n64 at d <= 64, where the smaller S and shared memory let two CTAs
  /// share an SM (measured on the H200 2026-12-01, d = 64, S = 8192:
  /// 405 / 385 TFLOP/s non-causal / causal with 64 K/V rows, 324 / 309
  /// with 128; at d = 128, 64 rows lose: 419 / 414 against 467 / 439).
  int64_t wgmmaBlockQ = 128;
  int64_t wgmmaBlockKV = 128;
  int64_t wgmmaBlockKVSmallHead = 64;
  /// wgmma_ws at d > 64 without a mask: 176 K/V rows (an m64n176 S tile),
  /// fewer steps for the same keys (H200 2026-12-01, TMA loads, d = 128,
  /// non-causal, S = 2k/4k/8k/16k: 504/540/584/594 TFLOP/s against
  /// 492/526/556/562 with 128; below 2k and with masks, whose boundary
  /// tiles grow with it, 128 stays ahead).
  int64_t wgmmaBlockKVUnmasked = 176;
  /// Without a mask, wgmma_ws_persistent is the default (H200 2026-12-01,
  /// TMA loads and store, B·S = 16k, TFLOP/s): d = 128 with 128 K/V rows
  /// (its staged output leaves no room for 176) at S = 512 / 1k / 2k / 4k /
  /// 8k / 16k 445 / 505 / 538 / 561 / 575 / 571 against wgmma_ws's 366 /
  /// 452 / 502 / 548 / 577 / 593; d = 64 (192 x 128) 313 / 382 / 475 / 491
  /// at 512 / 1k / 4k / 8k against 275 / 342 / 444 / 455.
  bool wgmmaPersistentUnmasked = true;
  int64_t wgmmaPersistentBlockKV = 128;
  /// wgmma_ws at d <= 64: three consumer warpgroups of 64 rows and 128 K/V
  /// rows (FlashAttention-3's tiles; H200 2026-12-01, S = 4k / 8k / 16k:
  /// 444 / 457 / 450 TFLOP/s non-causal against 386 / 403 / 407 with
  /// 192 x 64 and wgmma's 392 / 397 / 399 with 128 x 64).
  int64_t wgmmaWsBlockQSmallHead = 192;
  int64_t wgmmaWsBlockKVSmallHead = 128;
  /// With a mask, two consumer warpgroups (128 x 128): a causal kernel's
  /// 192-row tiles leave too few CTAs and too much masked fringe at short
  /// sequences (H200 2026-12-04, d = 64 causal, S = 512 / 1k / 2k / 4k / 8k /
  /// 16k: 161 / 244 / 326 / 387 / 412 / 423 TFLOP/s against 192 x 128's
  /// 135 / 202 / 310 / 379 / 425 / 447; the same kernel overlapped, 153 /
  /// 231 / 310 / 372 / 393 / 413, loses too).
  int64_t wgmmaWsBlockQSmallHeadMasked = 128;
  /// K/V stages of the wgmma strategies. Three, with which wgmma runs P V
  /// of one step during the next step's softmax, measured slower on the
  /// H200 (2026-12-01, d = 128, S = 8192: 452 against 468 TFLOP/s).
  int64_t wgmmaStages = 2;
  /// wgmma_ws (persistent or not) above d = 64 overlaps P V of a step with
  /// the next step's softmax (overlap_pv; its ring's K and V barriers
  /// apart). H200 2026-12-04, d = 128, bf16, B·S = 16k, TFLOP/s at S = 512
  /// / 1k / 2k / 4k / 8k / 16k: non-causal (persistent, 128 K/V rows) 430
  /// / 496 / 547 / 577 / 599 / 607 against 450 / 504 / 528 / 557 / 570 /
  /// 580 without; causal (128 x 128) at 1k / 2k / 4k / 8k / 16k 355 / 437
  /// / 491 / 523 / 546 against 357 / 442 / 483 / 515 / 528. At d = 64
  /// (three consumer warpgroups) it loses 2-4%.
  bool wgmmaOverlapLargeHead = true;
  /// A causal wgmma_ws grid above d = 64 takes its heads in groups whose K
  /// and V fit this many MiB of L2 (FlashConfigAttr's l2_group_mib; 0:
  /// none). Without groups the blocks running together read the K/V of
  /// all heads of a batch. H200 2026-12-04, d = 128 causal, B·S = 16k,
  /// H = 16, TFLOP/s at S = 4k / 8k / 16k with groups of 5-9 / 3-8 / 2-5
  /// heads: 500-510 / 543-555 / 573-592 against 500 / 524 / 540. Half L2
  /// (50 MB) rather than a third: GQA 32:8 at S = 8k, whose 8 K/V heads
  /// take 32 MiB, ran 564-566 in groups of 16 MiB against 588 without. At
  /// d = 64 groups measured 1-2% slower.
  int64_t wgmmaL2GroupMib = 32;

  /// The attention backward (K/V stationary, mma.sync): each of
  /// `backwardWarps` warps owns 16 rows of the K/V tile, and query tiles of
  /// `backwardBlockQ` rows stream past it through `backwardStages` buffers
  /// (FlashAttention-2's 64 x 128 with 8 warps at d = 128).
  int64_t backwardBlockQ = 64;
  int64_t backwardWarps = 8;
  int64_t backwardStages = 2;
  /// The backward's strategy where no option picks one.
  TileStrategy backwardStrategy = TileStrategy::mma_sync;
  /// With warpgroup MMAs (strategy wgmma): warpgroups each owning 64 rows
  /// of the K/V tile, query tiles of 64 rows (one m64 MMA); two warpgroups
  /// (128 K/V rows) per CTA for d > 64, one for d <= 64, whose CTAs fit
  /// two per SM.
  int64_t wgmmaBackwardBlockQ = 64;
  int64_t wgmmaBackwardBlockKV = 128;
  int64_t wgmmaBackwardBlockKVSmallHead = 64;
  /// From this many query rows on (0: never), unmasked / causal, a d <= 64
  /// wgmma backward runs 128-row query tiles and two warpgroups of 128 K/V
  /// rows, as a size variant of the default kernel
  /// (attentionBackwardVariant). H200 2026-12-05, bf16, TFLOP/s at S = 1k
  /// / 2k / 4k / 16k, full: 291 / 342 / 372 / 400 against the default's
  /// 298 / 318 / 347 / 359; causal: 202 / 272 / 327 / 381 against 234 /
  /// 281 / 313 / 338. H100 the same day at S = 1k / 1.5k / 2k / 3k, full:
  /// 280 / 317 / 341 / 362 against 287 / 305 / 324 / 341; causal: 187 /
  /// 229 / 257 / 296 against 217 / 256 / 271 / 296. Each query tile serves
  /// twice the products but each CTA has half the query tiles to amortise
  /// its K/V loads and dK/dV stores over, which short sequences lose on,
  /// and causal ones more (their CTAs' query loops are shorter).
  int64_t wgmmaBackwardLongMinSeqQ = 0;
  int64_t wgmmaBackwardLongMinSeqQCausal = 0;
  /// A causal wgmma backward (one CTA per K/V tile) takes its K/V heads in
  /// groups whose query rows (Q, dO, dQ's f32 workspace: 8d bytes a row at
  /// bf16) fit this many MiB (l2_group_mib; 0: a
  /// batch's heads together). H100 2026-12-06, B·S = 16k, TFLOP/s at S =
  /// 2k / 4k / 8k / 16k, heads together against groups of 4 and of 8: d =
  /// 64 (32 heads) 297 / 332 / 359 / 385 against 290 / 343 / 388 / 411 and
  /// 291 / 345 / 389 / 401; d = 128 (16 heads) 336 / 408 / 432 / 456
  /// against 333 / 411 / 464 / 487 and 338 / 402 / 453 / 479. 32 MiB gives
  /// groups of 8 / 4 / 2 heads at d = 128, S = 4k / 8k / 16k, 16 / 8 / 4 at
  /// d = 64, and none up to 2k, each group at least 256 CTAs (a tail of
  /// short tiles).
  int64_t wgmmaBackwardL2GroupMib = 0;
  /// Up to these many keys (0: never), unmasked / causal, a d > 64
  /// warp-specialised forward runs without overlap_pv, as a size variant of
  /// the default kernel (attentionVariant): the overlap pays once the K/V
  /// loop is long enough to hide its prologue. Measured on the H200
  /// (unmasked, 2026-12-04 and 12-05): 450 / 504 and 445 / 495 TFLOP/s
  /// without against 430 / 496 and 428 / 498 with at S = 512 / 1k, 528
  /// against 547 at 2k. Causal won 0.5-1% on 12-04 at 1k / 2k and lost
  /// 1-4% on 12-05 at 512-2048: no causal variant on Hopper.
  int64_t wgmmaNoOverlapMaxSeqKV = 0;
  int64_t wgmmaNoOverlapMaxSeqKVCausal = 0;
  /// A ragged batch (attnc.ragged_view) of T rows in B sequences whose mean
  /// length T / B is at most this (0: never), causal / unmasked, runs a d =
  /// 128 (or causal d = 64) wgmma forward of raggedShortTile x
  /// raggedShortTile tiles as a size variant (raggedAttentionVariant): short
  /// sequences waste most of a 128-row tile, and the smaller tiles' 83 KB let
  /// two blocks share an SM. H100 2026-12-07, bf16, H = 16, against 128 x 128:
  /// causal 318 / 402 us at 128 sequences of 16-506 rows (mean 264), 255 / 290
  /// at 32 of 93-1021 (630), 159 / 167 at 8 of 322-1767 (1044), 1177 / 1079 at
  /// 16 of 643-4054 (2241) and 1225 / 1068 at 4 of 2744-7141 (4954); unmasked
  /// 422 / 479 at a mean of 264, 417 / 404 at 630 (a causal tile's masked half
  /// is what short tiles save most). At d = 64, causal, against the default
  /// 128 x 64 (H100 2026-12-07, bench/varlen.py with --head-dim 64): 159 / 197
  /// us at a mean of 264, 138 / 155 at 630, 277 / 312 at 674, 87 / 95 at 1044,
  /// 631 / 599 at 2241, 664 / 622 at 4954: the same causal threshold (the
  /// unmasked d = 64 kernel keeps one version).
  int64_t raggedShortMaxMeanRows = 0;
  int64_t raggedShortMaxMeanRowsUnmasked = 0;
  int64_t raggedShortTile = 64;

  /// Split-KV decoding (--attnc-split-kv with --attnc-pack-gqa): a query
  /// tile holds the packed rows of a K/V group (a few), so its tile is
  /// small. 16 x 128 with four warps splitting each tile's keys (32 each)
  /// and K and V loads interleaved through three 128-row buffers (100 KiB,
  /// two 32 KiB tiles in flight), cuDNN's decode shape: on the H200
  /// (2026-12-03, bench/results/decode-interleave.md) 1-17% faster than the
  /// 32 x 64 paired tile of two warps that was the default before, at the
  /// split counts the bytes-in-flight rule below gives.
  int64_t decodeBlockQ = 16;
  int64_t decodeBlockKV = 128;
  int64_t decodeKeyWarps = 4;
  bool decodeInterleaveKV = true;
  /// K/V bytes in flight per SM that keep HBM busy, for the split rule's
  /// blocks per SM (Little's law: ~4.8 TB/s x ~1.8 us loaded latency / 132
  /// SMs ~ 64 KiB on the H200). Measured there (2026-12-03,
  /// bench/results/decode-interleave.md): the 16 x 128 interleaved tile,
  /// which keeps two 32 KiB tiles in flight, decodes fastest at one block
  /// per SM though two fit; the 32 x 64 paired tile (32 KiB) at two.
  int64_t decodeBytesInFlightPerSM = 64 * 1024;

  /// Ceilings the intensity report prices kernels with.
  RooflineModel roofline;

  bool hasFeature(TargetFeature f) const {
    return (features & f) == f && f != TargetFeature::None;
  }
  /// The names of the features the target has, in declaration order.
  llvm::SmallVector<llvm::StringRef> getFeatureNames() const;

  /// The default (blockQ, blockKV) for a head dimension.
  std::pair<int64_t, int64_t> attentionTiles(int64_t headDim) const {
    return {attentionBlockQ,
            headDim <= 64 ? attentionBlockKVSmallHead : attentionBlockKV};
  }

  /// The kernel configuration for `headDim`, with the tiles, the strategy
  /// and the stages given (0 and none: the target's default); `masked`
  /// when the attention has a mask; `keyWarps` warps splitting each K/V
  /// tile's keys (FlashConfigAttr's key_warps) for each warp's rows;
  /// `overlapPV` as given, else the target's choice for the strategy.
  FlashConfigAttr
  attentionConfig(mlir::MLIRContext *ctx, int64_t headDim, int64_t blockQ = 0,
                  int64_t blockKV = 0,
                  std::optional<TileStrategy> strategy = std::nullopt,
                  int64_t stages = 0, bool masked = true, int64_t keyWarps = 1,
                  bool interleaveKV = false,
                  std::optional<bool> overlapPV = std::nullopt) const;

  /// The l2_group_mib of a longest-first grid of `strategy` at `headDim`.
  int64_t attentionL2GroupMib(int64_t headDim, TileStrategy strategy) const;
  /// The l2_group_mib of a causal backward of `strategy`.
  int64_t attentionBackwardL2GroupMib(TileStrategy strategy) const;

  /// The configuration of an attention backward kernel, with the tiles
  /// given (0: the target's default).
  FlashConfigAttr
  attentionBackwardConfig(mlir::MLIRContext *ctx, int64_t headDim,
                          int64_t blockQ = 0, int64_t blockKV = 0,
                          TileStrategy strategy = TileStrategy::mma_sync) const;

  /// A size variant of a kernel: another configuration and the sizes it
  /// runs for, the query rows (Q's dim 2) or the keys (K's dim 2) at least
  /// `min` and at most `max` (0: unbounded). `perBatch`: the bounds are per
  /// sequence of the batch (Q's or K's dim 0), rows <= max * batch (a
  /// ragged batch's mean length).
  struct SizeVariant {
    FlashConfigAttr config;
    bool keys = false;
    int64_t min = 0, max = 0;
    bool perBatch = false;
    bool holds(int64_t extent, int64_t batch = 1) const {
      int64_t n = perBatch ? batch : 1;
      return (min <= 0 || extent >= min * n) && (max <= 0 || extent <= max * n);
    }
  };
  /// The size variant of the backward of `config` (attentionBackwardConfig's
  /// default for `headDim`; `causal`: under a causal mask), or none.
  std::optional<SizeVariant> attentionBackwardVariant(FlashConfigAttr config,
                                                      int64_t headDim,
                                                      bool causal) const;
  /// The size variant of the forward of `config` (the default of an
  /// attention without a mask, or `causal`), or none.
  std::optional<SizeVariant>
  attentionVariant(FlashConfigAttr config, int64_t headDim, bool causal) const;
  /// The size variant of the forward of `config` over a ragged batch (the
  /// default of an unmasked or, with `causal`, causal attention whose rows
  /// are attnc.ragged_view's), or none.
  std::optional<SizeVariant> raggedAttentionVariant(FlashConfigAttr config,
                                                    int64_t headDim,
                                                    bool causal) const;

  /// `config` with a fallback (FlashConfigAttr's `fallback`) when it reads
  /// by TMA: an mma_sync_unaligned kernel of the same tiles and warps, two
  /// stages, if its shared memory fits a block; `config` unchanged
  /// otherwise (then tensors TMA cannot address are refused at launch).
  FlashConfigAttr withFallback(FlashConfigAttr config, int64_t headDim,
                               int64_t elementBits) const;
};

/// Padding after each shared-memory row of an mma_sync kernel whose rows
/// are not swizzled (and of the backward kernel): one 16-byte access. The
/// eight row addresses of an ldmatrix phase then fall in eight different
/// 16-byte bank groups.
inline constexpr int64_t kMmaSyncRowPadBytes = 16;

/// The line both global memory and the swizzled shared-memory rows are
/// cut into: a cp.async request of one such line lands in one line.
inline constexpr int64_t kMmaSyncSwizzleLineBytes = 128;

/// Query tiles of at most this many rows get swizzled rows.
inline constexpr int64_t kMmaSyncSwizzleMaxBlockQ = 64;

/// Whether an mma_sync kernel's Q/K/V rows of `headDim` elements are
/// swizzled rather than padded: each 128-byte line of a row keeps its
/// eight 16-byte chunks, chunk c of row r at c ^ (r mod 8). Rows then stay
/// aligned to global memory's lines, so a warp's cp.async of a row's line
/// is one L2 request; padded rows shift every line by 16 bytes per row and
/// split it (measured on the H200: 1.5x the L2 sectors of the data read).
/// That sets the pace of a kernel that streams K and V for few query rows
/// (decode: 16- and 32-row tiles, 5-7% faster swizzled); tiles of more
/// rows are compute-bound, and there padded rows measured 5-7% faster
/// (d = 128, 256-row tiles: the swizzled ldmatrix addresses cost
/// registers), so only query tiles of up to kMmaSyncSwizzleMaxBlockQ rows
/// whose rows are whole lines are swizzled.
inline bool mmaSyncSwizzledRows(int64_t blockQ, int64_t headDim,
                                int64_t elementBits) {
  return blockQ <= kMmaSyncSwizzleMaxBlockQ &&
         headDim * elementBits / 8 % kMmaSyncSwizzleLineBytes == 0;
}

/// Bytes of one shared-memory row of an mma_sync kernel's Q/K/V tiles.
inline int64_t mmaSyncRowBytes(int64_t blockQ, int64_t headDim,
                               int64_t elementBits) {
  int64_t bytes = headDim * elementBits / 8;
  return mmaSyncSwizzledRows(blockQ, headDim, elementBits)
             ? bytes
             : bytes + kMmaSyncRowPadBytes;
}

/// K/V tiles in one pipeline stage of an mma_sync kernel: a (K, V) pair, or
/// with interleaved loads a single tile (K and V take turns in one ring).
inline int64_t mmaSyncTilesPerStage(bool interleaveKV) {
  return interleaveKV ? 1 : 2;
}

/// Dynamic shared memory of an mma_sync attention kernel: the query tile
/// and `stages` K and V tiles, or with interleaved K/V loads `stages`
/// single tiles; swizzled rows add the slack that aligns them to a line.
inline int64_t mmaSyncSharedMemoryBytes(int64_t blockQ, int64_t blockKV,
                                        int64_t headDim, int64_t elementBits,
                                        int64_t stages,
                                        bool interleaveKV = false) {
  bool swizzled = mmaSyncSwizzledRows(blockQ, headDim, elementBits);
  return mmaSyncRowBytes(blockQ, headDim, elementBits) *
             (blockQ + mmaSyncTilesPerStage(interleaveKV) * stages * blockKV) +
         (swizzled ? kMmaSyncSwizzleLineBytes : 0);
}

/// The built-in devices, in the order reports list them: h100, h200, a100.
llvm::ArrayRef<TargetDescription> getTargetDescriptions();

/// The description of `name`: a device (h100, h200, a100, any case) or a
/// chip (sm_80 -> a100, sm_90 and sm_90a -> h100; sm_90 without the
/// sm_90a-only features). Failure for anything else.
mlir::FailureOr<TargetDescription>
lookupTargetDescription(llvm::StringRef name);

/// The chips lookupTargetDescription knows, for diagnostics.
llvm::ArrayRef<llvm::StringRef> getKnownTargetChips();

/// The devices lookupTargetDescription knows, for diagnostics.
llvm::SmallVector<llvm::StringRef> getKnownTargetDevices();

/// "h100, h200, a100 (devices) or sm_80, sm_90, sm_90a (chips)": every name
/// lookupTargetDescription accepts, for diagnostics.
std::string getKnownTargetNames();

/// PTX ISA features of the NVVM target for `chip`: PTX 8.6 on sm_90a, whose
/// TMA loads name CTA shared memory (cp.async.bulk.tensor ... shared::cta;
/// LLVM aborts selecting it for an older PTX), PTX 8.0 elsewhere (the
/// first to know sm_90a; MLIR's default, +ptx60, aborts in LLVM for it).
std::string ptxFeaturesForChip(llvm::StringRef chip);

/// The PTX ISA version a features string names (+ptx86 -> 86), or 0.
int64_t ptxVersionOf(llvm::StringRef features);

} // namespace attnc

#endif // ATTNC_TARGET_TARGETDESCRIPTION_H
