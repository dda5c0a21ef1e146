//===- CostModel.h - Predicted kernel times from the schedule ---*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The cost model: a device described by measured ceilings (DeviceModel,
// written by `python3 -m attnc.calibrate` or built in from datasheets) and
// a kernel described by its schedule (KernelSchedule: tiles, strategy,
// mask, block, occupancy), priced for concrete sizes. Plain C++ with no MLIR:
// the runtime (attnc_plan_estimate) and the intensity report
// (--attnc-report-intensity) share it, so a kernel is priced the same way
// before and after it is compiled. docs/cost-model.md derives each term.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_COSTMODEL_COSTMODEL_H
#define ATTNC_COSTMODEL_COSTMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnc::cost {

/// Ceilings of one GPU. Rates are device-wide; the model divides them by
/// `numSMs` for one SM.
struct DeviceModel {
  std::string name;
  /// Where the numbers come from: "datasheet ..." or "calibrated ...".
  std::string source;
  int64_t numSMs = 0;
  double l2Bytes = 0;
  int64_t maxThreadsPerSM = 2048;
  int64_t registersPerSM = 65536;
  int64_t sharedBytesPerSM = 233472;
  int64_t maxCtasPerSM = 32;
  /// Dense bf16 tensor-core rates, TFLOP/s, per instruction family.
  double mmaSyncTflops = 0;
  /// wgmma at N = 256, 128 and 64 (narrower MMAs move more operand bytes
  /// per FLOP).
  double wgmmaTflops = 0;
  double wgmmaN128Tflops = 0;
  double wgmmaN64Tflops = 0;
  /// Softmax score elements per second, 10^9 (one fma, ex2, add, max each).
  double softmaxGelems = 0;
  /// Shared-memory reads by ldmatrix, TB/s.
  double sharedTBps = 0;
  /// HBM copy bandwidth (bytes read + written), TB/s.
  double dramTBps = 0;
  /// red.global.add.f32 into L2, bytes of operands per second, TB/s.
  double reduceTBps = 0;
  /// One dependent HBM load, microseconds (a CTA's pipeline fill).
  double dramLatencyUs = 0;
  /// A kernel's cold start and drain, microseconds: the wait for its first
  /// loads from HBM and for its last stores, beyond one dependent load.
  double kernelLatencyUs = 0;
  /// One kernel launch back to back with the next, microseconds (on the
  /// GPU's timeline, the host ahead of it).
  double launchUs = 0;
  /// CTAs the device starts per second, 10^9 (a kernel of many small CTAs
  /// waits for the block scheduler).
  double ctaLaunchGps = 0;
};

/// The built-in device `name` (h100, h200, a100): datasheet numbers, with
/// `source` saying so. Null for other names.
const DeviceModel *builtinDeviceModel(const std::string &name);

/// Parses a device file (docs/cost-model.md). On failure returns nullopt and
/// sets `error` to the field and the rule.
std::optional<DeviceModel> parseDeviceModel(const std::string &json,
                                            std::string &error);
std::string deviceModelToJSON(const DeviceModel &device);

enum class KernelKind {
  Attention,         // forward, one CTA per query tile (or persistent)
  AttentionPartial,  // split-KV forward: a CTA per (query tile, split)
  AttentionCombine,  // merges the splits' partials
  AttentionBackward, // K/V-stationary backward
  Fusion,            // elementwise chain or row reduction
  Other,
};

/// Which rows of the score matrix a query row sees: keys j with
/// i + offset - left <= j <= i + offset + right, offset = 0 (top-left) or
/// Skv - Sq (bottom-right); left/right < 0 mean unbounded. None: all keys.
struct MaskBounds {
  bool any = false;
  bool bottomRight = false;
  int64_t left = -1, right = -1;
};

/// What one kernel does per CTA, as its builder chose it.
struct KernelSchedule {
  KernelKind kind = KernelKind::Other;
  /// mma.sync or wgmma tensor cores.
  bool wgmma = false;
  /// One CTA per SM walking the work tiles (grid = SM count).
  bool persistent = false;
  int64_t blockQ = 0, blockKV = 0, headDim = 0, headDimV = 0;
  int64_t elementBytes = 2;
  /// Warps that read K and V from shared memory by ldmatrix (mma.sync),
  /// counted in whole tiles: with key_warps parts, each reads 1/key_warps
  /// of a tile, so warps / key_warps.
  int64_t mmaWarps = 0;
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  /// Registers per thread (ptxas), 0 when not known.
  int64_t registers = 0;
  MaskBounds mask;
  /// Query heads packed into one tile (split-KV decoding with GQA), >= 1.
  int64_t packedHeads = 1;
  /// Query tiles a persistent CTA holds: with two, the next tile's query
  /// is loaded during this one.
  int64_t queryBuffers = 1;
  /// The P V reads P from shared memory (flash_config's shared_p): each
  /// step stores its block_q x block_kv probabilities there.
  bool sharedP = false;
  /// The row sums are taken on the tensor cores (flash_config's
  /// mma_row_sums): a block_q x block_kv x 8 mma.sync product per step.
  bool mmaRowSums = false;
};

/// The sizes a kernel runs at, and the bytes its tensors occupy.
struct Sizes {
  int64_t batch = 1, heads = 1, kvHeads = 1, seqQ = 1, seqKV = 1;
  /// K/V splits of a split-KV kernel (1 otherwise).
  int64_t splits = 1;
  /// CTAs the launch has (its grid), and bytes of its tensors.
  int64_t ctas = 1;
  double bytesRead = 0, bytesWritten = 0;
};

/// A kernel's predicted time and what it is made of. The per-CTA terms are
/// those of the busiest SM; dram and reduce are device-wide.
struct Estimate {
  double timeUs = 0;
  /// The launch gap and the kernel's cold start and drain.
  double launchUs = 0;
  /// Busiest SM: tensor cores, softmax, shared memory, pipeline fills.
  double mmaUs = 0, softmaxUs = 0, sharedUs = 0, fillUs = 0;
  double smUs = 0; // their sum: the busiest SM's time
  double dramUs = 0, reduceUs = 0;
  /// The launch's CTAs at the rate the device starts them.
  double ctaUs = 0;
  int64_t ctasPerSM = 1;
  double waves = 0;
  /// K/V (or query) tiles visited over the whole launch.
  double steps = 0;
  /// "tensor", "exp", "shared", "dram", "reduce", "latency", "ctas" or
  /// "launch":
  /// the term that sets the time.
  std::string limiter;
  /// compute when the tensor cores are busy >= 60% of the time, bandwidth
  /// when HBM is, else latency: the rule ncu's speed of light is read by.
  std::string regime;
};

/// CTAs of `schedule` one SM holds at once: the least of the thread,
/// register, shared-memory and block limits.
int64_t ctasPerSM(const KernelSchedule &schedule, const DeviceModel &device);

Estimate estimate(const KernelSchedule &schedule, const Sizes &sizes,
                  const DeviceModel &device);

} // namespace attnc::cost

#endif // ATTNC_COSTMODEL_COSTMODEL_H
