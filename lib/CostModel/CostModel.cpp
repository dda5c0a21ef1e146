//===- CostModel.cpp - Predicted kernel times from the schedule -----------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A kernel is a list of CTAs, each a pipeline fill plus a number of steps
// (K/V tiles for the forward, query tiles for the backward). A step costs
// the sum of its tensor-core time, its softmax time and (mma.sync) its
// ldmatrix time at one SM's share of each calibrated rate: the warps of a
// CTA issue all three, and the measured kernels do not hide one behind
// another. CTAs are list-scheduled onto the SMs in launch order (the
// hardware's block scheduler), co-resident CTAs sharing their SM's rates;
// persistent kernels take their tiles longest first as their one CTA per
// SM frees up. HBM
// traffic and L2 reductions are device-wide: the kernel takes the longest
// of the busiest SM, its bytes at the copy bandwidth and its reductions at
// the reduction bandwidth, plus one launch. docs/cost-model.md has the
// derivation.
//
//===----------------------------------------------------------------------===//

#include "attnc/CostModel/CostModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <queue>

namespace json = llvm::json;
using namespace attnc::cost;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

/// The busy fraction at which a unit counts as the kernel's bound.
constexpr double kSaturated = 0.6;
/// CTAs the model places one by one; past this an even share per SM.
constexpr double kMaxScheduledCtas = double(1 << 22);

/// Datasheet numbers. Tensor rates are the dense bf16 peak for both
/// families (datasheets give one); softmax elements are 16 ex2 per clock
/// per SM at the boost clock; shared memory 128 bytes per clock per SM;
/// reductions at the HBM rate; latencies, launch and CTA starts typical
/// values.
DeviceModel datasheet(const char *name, int64_t sms, double l2, double tflops,
                      double tbps, double ghz) {
  DeviceModel d;
  d.name = name;
  d.source = "datasheet (built in; run python3 -m attnc.calibrate for "
             "measured ceilings)";
  d.numSMs = sms;
  d.l2Bytes = l2;
  d.mmaSyncTflops = tflops;
  d.wgmmaTflops = d.wgmmaN128Tflops = d.wgmmaN64Tflops = tflops;
  d.softmaxGelems = 16.0 * sms * ghz;
  d.sharedTBps = 128.0 * sms * ghz / 1000.0;
  d.dramTBps = tbps;
  d.reduceTBps = tbps;
  d.dramLatencyUs = 0.6;
  d.kernelLatencyUs = 3.0;
  d.launchUs = 5.0;
  // Not on a datasheet: one CTA per SM every 0.5 us, a typical rate.
  d.ctaLaunchGps = sms / 0.5e-6 / 1e9;
  return d;
}

/// The datasheets: SMs of the SXM parts, 132 for H100 and H200 (the same
/// GH100 configuration), 108 for A100. Dense (no 2:4 sparsity) bf16
/// tensor-core peak, TFLOP/s: 989 for H100 and H200 (same die and clocks),
/// 312 for A100 (ridges 295 and 153 FLOP/byte with the HBM numbers). HBM
/// bandwidth, TB/s: H100 SXM HBM3 3.35, H200 HBM3e 4.8, A100 80GB SXM HBM2e
/// 2.04. L2 50 MB (Hopper) and 40 MB (A100). Launch about 5 us (490
/// launches = 2.45 ms of a decode step), inside the usual 3-10 us range.
const std::vector<DeviceModel> &builtins() {
  static const std::vector<DeviceModel> devices = [] {
    std::vector<DeviceModel> v = {
        datasheet("h100", 132, 50.0 * (1 << 20), 989, 3.35, 1.98),
        datasheet("h200", 132, 50.0 * (1 << 20), 989, 4.8, 1.98),
        datasheet("a100", 108, 40.0 * (1 << 20), 312, 2.04, 1.41)};
    // No wgmma before sm_90a.
    v[2].wgmmaTflops = v[2].wgmmaN128Tflops = v[2].wgmmaN64Tflops = 0;
    v[2].sharedBytesPerSM = 167936;
    return v;
  }();
  return devices;
}

struct Field {
  const char *key;
  double DeviceModel::*real;
  int64_t DeviceModel::*integer;
};

const Field kFields[] = {
    {"sm_count", nullptr, &DeviceModel::numSMs},
    {"l2_bytes", &DeviceModel::l2Bytes, nullptr},
    {"max_threads_per_sm", nullptr, &DeviceModel::maxThreadsPerSM},
    {"registers_per_sm", nullptr, &DeviceModel::registersPerSM},
    {"shared_memory_per_sm", nullptr, &DeviceModel::sharedBytesPerSM},
    {"max_ctas_per_sm", nullptr, &DeviceModel::maxCtasPerSM},
    {"mma_sync_tflops", &DeviceModel::mmaSyncTflops, nullptr},
    {"wgmma_tflops", &DeviceModel::wgmmaTflops, nullptr},
    {"wgmma_n128_tflops", &DeviceModel::wgmmaN128Tflops, nullptr},
    {"wgmma_n64_tflops", &DeviceModel::wgmmaN64Tflops, nullptr},
    {"softmax_gelems", &DeviceModel::softmaxGelems, nullptr},
    {"shared_tbps", &DeviceModel::sharedTBps, nullptr},
    {"dram_tbps", &DeviceModel::dramTBps, nullptr},
    {"reduce_tbps", &DeviceModel::reduceTBps, nullptr},
    {"dram_latency_us", &DeviceModel::dramLatencyUs, nullptr},
    {"kernel_latency_us", &DeviceModel::kernelLatencyUs, nullptr},
    {"launch_us", &DeviceModel::launchUs, nullptr},
    {"cta_launch_gps", &DeviceModel::ctaLaunchGps, nullptr},
};

/// The K/V range [lo, hi) query rows [r0, r1) see under `m`.
std::pair<int64_t, int64_t> keyRange(const MaskBounds &m, int64_t r0,
                                     int64_t r1, int64_t sq, int64_t skv) {
  if (!m.any)
    return {0, skv};
  int64_t off = m.bottomRight ? skv - sq : 0;
  int64_t lo = m.left < 0 ? 0 : std::max<int64_t>(0, r0 + off - m.left);
  int64_t hi =
      m.right < 0 ? skv : std::min<int64_t>(skv, r1 - 1 + off + m.right + 1);
  return {lo, std::max(lo, hi)};
}

/// The query range [lo, hi) keys [k0, k1) are seen by: the mirror image.
std::pair<int64_t, int64_t> queryRange(const MaskBounds &m, int64_t k0,
                                       int64_t k1, int64_t sq, int64_t skv) {
  if (!m.any)
    return {0, sq};
  int64_t off = m.bottomRight ? skv - sq : 0;
  // j <= i + off + right  <=>  i >= j - off - right.
  int64_t lo = m.right < 0 ? 0 : std::max<int64_t>(0, k0 - off - m.right);
  int64_t hi =
      m.left < 0 ? sq : std::min<int64_t>(sq, k1 - 1 - off + m.left + 1);
  return {lo, std::max(lo, hi)};
}

int64_t tilesOf(std::pair<int64_t, int64_t> range, int64_t tile) {
  if (range.second <= range.first)
    return 0;
  return ceilDiv(range.second, tile) - range.first / tile;
}

} // namespace

const DeviceModel *attnc::cost::builtinDeviceModel(const std::string &name) {
  std::string lower;
  for (char c : name)
    lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  for (const DeviceModel &d : builtins())
    if (d.name == lower)
      return &d;
  return nullptr;
}

std::optional<DeviceModel>
attnc::cost::parseDeviceModel(const std::string &text, std::string &error) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    error = "not JSON: " + llvm::toString(value.takeError());
    return std::nullopt;
  }
  const json::Object *o = value->getAsObject();
  if (!o) {
    error = "the device file is not a JSON object";
    return std::nullopt;
  }
  if (o->getInteger("attnc_device_version") != 1) {
    error = "attnc_device_version: expected 1";
    return std::nullopt;
  }
  DeviceModel d;
  if (std::optional<llvm::StringRef> s = o->getString("name"))
    d.name = s->str();
  if (std::optional<llvm::StringRef> s = o->getString("source"))
    d.source = s->str();
  for (const Field &f : kFields) {
    std::optional<double> v = o->getNumber(f.key);
    if (!v) {
      error = std::string(f.key) + ": missing or not a number";
      return std::nullopt;
    }
    // Every ceiling divides: zero or negative would give infinite or
    // negative times. wgmma may be 0 (a chip without it).
    bool mayBeZero = llvm::StringRef(f.key).starts_with("wgmma");
    if (!std::isfinite(*v) || *v < 0 || (*v == 0 && !mayBeZero)) {
      error = std::string(f.key) + ": must be a positive number";
      return std::nullopt;
    }
    if (f.real) {
      d.*f.real = *v;
      continue;
    }
    if (*v != std::floor(*v) || *v > double(INT32_MAX)) {
      error = std::string(f.key) + ": must be a whole number below 2^31";
      return std::nullopt;
    }
    d.*f.integer = int64_t(*v);
  }
  return d;
}

std::string attnc::cost::deviceModelToJSON(const DeviceModel &d) {
  json::Object o{
      {"attnc_device_version", 1}, {"name", d.name}, {"source", d.source}};
  for (const Field &f : kFields) {
    if (f.real)
      o[f.key] = d.*f.real;
    else
      o[f.key] = d.*f.integer;
  }
  return llvm::formatv("{0:2}", json::Value(std::move(o))).str();
}

int64_t attnc::cost::ctasPerSM(const KernelSchedule &s,
                               const DeviceModel &device) {
  int64_t threads = std::max<int64_t>(s.threads, 32);
  int64_t n = std::min(device.maxCtasPerSM, device.maxThreadsPerSM / threads);
  if (s.sharedBytes > 0)
    // The driver reserves 1 KB of shared memory per block.
    n = std::min(n, device.sharedBytesPerSM / (s.sharedBytes + 1024));
  // Unknown registers: attention kernels are built to fill the register
  // file (one CTA per SM), other kernels to use few.
  bool attention = s.kind != KernelKind::Fusion &&
                   s.kind != KernelKind::Other &&
                   s.kind != KernelKind::AttentionCombine;
  int64_t regs = s.registers > 0
                     ? s.registers
                     : (attention ? device.registersPerSM / threads : 32);
  // Registers are allocated per warp in units of 256.
  int64_t perWarp = ceilDiv(regs * 32, 256) * 256;
  n = std::min(n, device.registersPerSM / (perWarp * ceilDiv(threads, 32)));
  return std::max<int64_t>(n, 1);
}

Estimate attnc::cost::estimate(const KernelSchedule &s, const Sizes &z,
                               const DeviceModel &dev) {
  Estimate e;
  double sms = double(std::max<int64_t>(dev.numSMs, 1));
  // µs for `amount` of work at one SM's share of a device-wide rate of
  // `perSecond` units.
  auto atSM = [&](double amount, double perSecond) {
    return perSecond > 0 ? amount / (perSecond / sms) * 1e6 : 0.0;
  };
  e.ctasPerSM = ctasPerSM(s, dev);
  double eb = double(s.elementBytes);
  double d = double(s.headDim),
         dv = double(s.headDimV ? s.headDimV : s.headDim);
  double bq = double(s.blockQ), bkv = double(s.blockKV);
  double tensorRate = (s.wgmma ? dev.wgmmaTflops : dev.mmaSyncTflops) * 1e12;
  // wgmma's rate at width N: measured at 64, 128 and 256, linear between.
  auto wgmmaRate = [&](double n) {
    double lo = n <= 128 ? 64 : 128, hi = n <= 128 ? 128 : 256;
    double rlo = n <= 128 ? dev.wgmmaN64Tflops : dev.wgmmaN128Tflops;
    double rhi = n <= 128 ? dev.wgmmaN128Tflops : dev.wgmmaTflops;
    double t = std::clamp((n - lo) / (hi - lo), 0.0, 1.0);
    return (rlo + t * (rhi - rlo)) * 1e12;
  };
  double perSMBytes = dev.dramTBps * 1e12;

  // Per step, at a whole SM.
  double mmaStep = 0, softmaxStep = 0, sharedStep = 0, reduceBytesStep = 0;
  // Per CTA: the first tiles' HBM latency and transfer, and the epilogue.
  double fill = dev.dramLatencyUs, tileIO = 0;
  std::vector<int64_t> ctaSteps;
  int64_t groups = 1;
  // The forward's grid is (heads, query tiles, batch): the heads of one
  // query tile launch one after another. 1: ctaSteps repeats per group.
  int64_t headsInner = 1;
  switch (s.kind) {
  case KernelKind::Attention:
  case KernelKind::AttentionPartial: {
    // S = Q K^T is N = block_kv wide, P V is N = dv wide.
    mmaStep = s.wgmma ? atSM(2 * bq * bkv * d, wgmmaRate(bkv)) +
                            atSM(2 * bq * bkv * dv, wgmmaRate(dv))
                      : atSM(2 * bq * bkv * (d + dv), tensorRate);
    // The row sums by mma.sync (P against 8 columns of ones); the f32 adds
    // they replace are not priced (the softmax's time is its exponentials).
    if (s.mmaRowSums)
      mmaStep += atSM(2 * bq * bkv * 8, dev.mmaSyncTflops * 1e12);
    softmaxStep = atSM(bq * bkv, dev.softmaxGelems * 1e9);
    if (!s.wgmma)
      sharedStep =
          atSM(double(s.mmaWarps) * bkv * (d + dv) * eb, dev.sharedTBps * 1e12);
    // P stored by the consumers each step (shared_p; the MMA's reads of it,
    // as of K and V, are in its rate).
    else if (s.sharedP)
      sharedStep = atSM(double(bq) * bkv * eb, dev.sharedTBps * 1e12);
    fill += atSM((bq * d + bkv * (d + dv) + bq * dv) * eb, perSMBytes);
    // A persistent CTA's later tiles: with one query buffer the consumers
    // load the next tile's Q while they store this one's O (posted stores
    // the SM does not wait for), so a tile waits for one HBM latency and
    // its Q at the SM's share of the bandwidth; with two the producer
    // loaded it during the previous tile, and it waits for nothing.
    if (s.queryBuffers < 2)
      tileIO = dev.dramLatencyUs + atSM(bq * d * eb, perSMBytes);
    int64_t packed = std::max<int64_t>(s.packedHeads, 1);
    int64_t rows = z.seqQ * packed;
    int64_t tiles = ceilDiv(rows, s.blockQ);
    int64_t splits = s.kind == KernelKind::AttentionPartial
                         ? std::max<int64_t>(z.splits, 1)
                         : 1;
    groups = z.batch * ceilDiv(z.heads, packed);
    headsInner = ceilDiv(z.heads, packed);
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t r0 = t * s.blockQ / packed,
              r1 = std::min(rows, (t + 1) * s.blockQ);
      r1 = ceilDiv(r1, packed);
      int64_t steps =
          tilesOf(keyRange(s.mask, r0, r1, z.seqQ, z.seqKV), s.blockKV);
      if (splits == 1) {
        ctaSteps.push_back(steps);
        continue;
      }
      int64_t kvTiles = ceilDiv(z.seqKV, s.blockKV);
      int64_t perSplit = ceilDiv(kvTiles, splits);
      for (int64_t k = 0; k < splits; ++k)
        ctaSteps.push_back(std::clamp<int64_t>(
            std::min(steps, kvTiles) - k * perSplit, 0, perSplit));
    }
    // Masked kernels launch their query tiles longest first.
    if (s.mask.any)
      std::stable_sort(ctaSteps.begin(), ctaSteps.end(),
                       std::greater<int64_t>());
    break;
  }
  case KernelKind::AttentionBackward: {
    // Five GEMMs (S, dP, dV, dK, dQ); exp and dS = P (dP - delta) per
    // score; each warp reads Q and dO twice by ldmatrix, dS goes through
    // shared memory once; dQ is reduced into L2 in f32.
    mmaStep = atSM(2 * bq * bkv * (3 * d + 2 * dv), tensorRate);
    softmaxStep = atSM(2 * bq * bkv, dev.softmaxGelems * 1e9);
    if (!s.wgmma)
      sharedStep =
          atSM((double(s.mmaWarps) * bq * (2 * d + 2 * dv) + 2 * bq * bkv) * eb,
               dev.sharedTBps * 1e12);
    reduceBytesStep = bq * d * 4;
    fill += atSM((bkv * (d + dv) * 2 + bq * (d + dv)) * eb, perSMBytes);
    int64_t kvTiles = ceilDiv(z.seqKV, s.blockKV);
    groups = z.batch * z.heads;
    for (int64_t t = 0; t < kvTiles; ++t)
      ctaSteps.push_back(tilesOf(
          queryRange(s.mask, t * s.blockKV,
                     std::min(z.seqKV, (t + 1) * s.blockKV), z.seqQ, z.seqKV),
          s.blockQ));
    break;
  }
  default:
    // A memory-bound kernel: each CTA waits for its loads once. As `groups`
    // copies of one step-less CTA, so that a grid past kMaxScheduledCtas
    // (a report's default sizes can make billions) is never materialized.
    groups = std::max<int64_t>(z.ctas, 1);
    ctaSteps.assign(1, 0);
    break;
  }

  // Schedule the CTAs (`groups` copies of ctaSteps) onto the SMs. An SM
  // runs its CTAs' steps at its full rates one after another, whichever CTA
  // issues them; the CTAs it holds at once wait for HBM together, so a fill
  // is paid once per ctasPerSM CTAs it runs. Non-persistent CTAs go to the SM
  // that frees first, in launch order (the block scheduler); a persistent grid
  // takes its tiles longest first, each on the SM that frees first (drawn
  // from a counter), one fill per SM (the producer loads the next tile's K
  // and V during the current one) and per later tile its Q and O at the
  // SM's share of the bandwidth.
  struct Slot {
    double busy = 0;
    double mma = 0, softmax = 0, shared = 0, fill = 0;
    int64_t ctas = 0;
  };
  std::vector<Slot> slot(size_t(std::max<int64_t>(dev.numSMs, 1)));
  double totalSteps = 0;
  auto add = [&](Slot &sl, int64_t steps, bool persistent) {
    double st = double(steps);
    sl.mma += st * mmaStep;
    sl.softmax += st * softmaxStep;
    sl.shared += st * sharedStep;
    if (persistent ? sl.ctas == 0 : sl.ctas % e.ctasPerSM == 0)
      sl.fill += fill;
    else if (persistent)
      sl.fill += tileIO;
    ++sl.ctas;
    sl.busy = sl.mma + sl.softmax + sl.shared + sl.fill;
    totalSteps += st;
  };
  int64_t ctas = 0;
  double scheduled = double(groups) * double(ctaSteps.size());
  if (scheduled > kMaxScheduledCtas) {
    // Too many CTAs to place one by one: each SM gets an even share of the
    // steps and fills.
    double steps = 0;
    for (int64_t st : ctaSteps)
      steps += double(st);
    steps *= double(groups);
    double perSM = scheduled / double(slot.size());
    Slot &sl = slot.front();
    double stepsPerSM = steps / double(slot.size());
    sl.mma = stepsPerSM * mmaStep;
    sl.softmax = stepsPerSM * softmaxStep;
    sl.shared = stepsPerSM * sharedStep;
    sl.fill = std::ceil(perSM / double(e.ctasPerSM)) * fill;
    sl.busy = sl.mma + sl.softmax + sl.shared + sl.fill;
    std::fill(slot.begin() + 1, slot.end(), sl);
    totalSteps = steps;
    ctas = int64_t(scheduled);
  } else {
    // Each CTA (or persistent tile) goes to the SM that frees first.
    using Entry = std::pair<double, size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> free;
    for (size_t i = 0; i < slot.size(); ++i)
      free.push({0.0, i});
    auto place = [&](int64_t steps) {
      size_t i = free.top().second;
      free.pop();
      add(slot[i], steps, s.persistent);
      free.push({slot[i].busy, i});
      ++ctas;
    };
    if (s.persistent) {
      // Each SM's first tile is its CTA's; the next ones are drawn as the
      // CTAs free up, longest first.
      std::vector<int64_t> order;
      for (int64_t g = 0; g < groups; ++g)
        order.insert(order.end(), ctaSteps.begin(), ctaSteps.end());
      std::stable_sort(order.begin(), order.end(), std::greater<int64_t>());
      for (int64_t steps : order)
        place(steps);
    } else {
      for (int64_t g = 0; g < groups / headsInner; ++g)
        for (int64_t steps : ctaSteps)
          for (int64_t h = 0; h < headsInner; ++h)
            place(steps);
    }
  }
  const Slot &busiest = *std::max_element(
      slot.begin(), slot.end(),
      [](const Slot &a, const Slot &b) { return a.busy < b.busy; });
  e.mmaUs = busiest.mma;
  e.softmaxUs = busiest.softmax;
  e.sharedUs = busiest.shared;
  e.fillUs = busiest.fill;
  e.smUs = busiest.busy;
  e.steps = totalSteps;
  e.waves =
      double(ctas) / double(dev.numSMs * (s.persistent ? 1 : e.ctasPerSM));
  e.dramUs = (z.bytesRead + z.bytesWritten) / (dev.dramTBps * 1e12) * 1e6;
  if (dev.reduceTBps > 0)
    e.reduceUs = totalSteps * reduceBytesStep / (dev.reduceTBps * 1e12) * 1e6;
  e.launchUs = dev.launchUs + dev.kernelLatencyUs;
  if (dev.ctaLaunchGps > 0)
    e.ctaUs = double(ctas) / (dev.ctaLaunchGps * 1e9) * 1e6;
  double body = std::max({e.smUs, e.dramUs, e.reduceUs, e.ctaUs});
  e.timeUs = body + e.launchUs;

  // The limiter: the largest term of whatever sets `body`.
  // The busiest SM's terms.
  std::pair<double, const char *> smTerms[] = {{e.mmaUs, "tensor"},
                                               {e.softmaxUs, "exp"},
                                               {e.sharedUs, "shared"},
                                               {e.fillUs, "latency"}};
  if (e.dramUs >= e.smUs && e.dramUs >= e.reduceUs && e.dramUs > e.launchUs)
    e.limiter = "dram";
  else if (e.reduceUs >= e.smUs && e.reduceUs > e.launchUs)
    e.limiter = "reduce";
  else
    e.limiter =
        std::max_element(std::begin(smTerms), std::end(smTerms),
                         [](auto &a, auto &b) { return a.first < b.first; })
            ->second;
  if (e.ctaUs > std::max({e.smUs, e.dramUs, e.reduceUs}))
    e.limiter = "ctas";
  if (e.launchUs > body)
    e.limiter = "launch";
  // As ncu's speed of light names it: the tensor pipe (at the calibrated
  // rate) or HBM (at the copy bandwidth) busy at least 60% of the kernel's
  // time on the GPU, else latency (nothing saturated). ncu's tensor figure
  // (sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed)
  // is the mean over SMs of the pipe's busy cycles over the kernel's elapsed
  // cycles, so the share is the mean SM's tensor time, not the busiest's,
  // over the time from the kernel's start (the host's launch excluded).
  double meanMma = 0;
  for (const Slot &sl : slot)
    meanMma += sl.mma;
  meanMma /= double(slot.size());
  double onGpu = std::max(e.timeUs - dev.launchUs, 1e-9);
  if (meanMma >= kSaturated * onGpu)
    e.regime = "compute";
  else if (e.dramUs >= kSaturated * onGpu)
    e.regime = "bandwidth";
  else
    e.regime = "latency";
  return e;
}
