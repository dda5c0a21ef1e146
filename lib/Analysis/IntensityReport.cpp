//===- IntensityReport.cpp - the intensity report as a table or JSON ------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Prints the kernels counted by countFunctionCost on a device's roofline:
// one row per kernel, a total per function, and for attention the score
// matrix it keeps on chip and the sequence length past which it is
// compute-bound on each built-in target. The same numbers go to both
// formats; lit tests pin the reference values of docs/design.md on them.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/Intensity.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace mlir;
using namespace attnc;

static constexpr double kGiga = 1e9;

namespace {
/// Sums over a function's kernels.
struct Totals {
  double matmulFlops = 0, flops = 0, bytes = 0, scoreBytes = 0, timeUs = 0;

  Totals(const FunctionCost &function, const RooflineModel &device) {
    for (const KernelCost &k : function.kernels) {
      matmulFlops += k.matmulFlops;
      flops += k.flops();
      bytes += k.bytes;
      scoreBytes += k.scoreBytes;
      timeUs += estimateKernel(k, device).timeUs;
    }
  }
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  /// Unfused attention's intensity (512S^2 FLOP over 8S^2 bytes at d = 128):
  /// matmul FLOPs over the bytes of the S x S traffic, the term that does not
  /// shrink relative to the FLOPs as S grows (the exact intensity tends to
  /// it from below).
  double scoreIntensity() const {
    return scoreBytes > 0 ? matmulFlops / scoreBytes : 0;
  }
};
} // namespace

/// Decimal units: 33.55 MB, 68.72 GB.
static std::string humanBytes(double bytes) {
  static const char *const kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  unsigned unit = 0;
  while (bytes >= 1000 && unit + 1 < std::size(kUnits)) {
    bytes /= 1000;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.2f ", bytes) << kUnits[unit];
  return s;
}

static std::string kernelName(const KernelCost &k) {
  return k.op->getName().getStringRef().str();
}

/// Kernels the report has no schedule for (unfused ops, fusions) are
/// priced as memory-bound: their traffic at the copy bandwidth, one CTA per
/// 16 KiB of it waiting for HBM once.
static constexpr double kBytesPerMemoryCta = 16384;

static cost::Estimate modelEstimate(const KernelCost &k,
                                    const cost::DeviceModel &model) {
  if (k.schedule.kind != cost::KernelKind::Other)
    return cost::estimate(k.schedule, k.sizes, model);
  cost::KernelSchedule s;
  s.threads = 128;
  cost::Sizes z;
  z.bytesRead = k.bytes;
  z.ctas = std::max<int64_t>(1, int64_t(k.bytes / kBytesPerMemoryCta));
  return cost::estimate(s, z, model);
}

static void printModelLines(llvm::raw_ostream &os, const FunctionCost &function,
                            const cost::DeviceModel &model) {
  for (auto [i, k] : llvm::enumerate(function.kernels)) {
    cost::Estimate e = modelEstimate(k, model);
    os << llvm::format("  model #%u: %.2f us, %s-bound (%s); busiest SM %.2f "
                       "us = tensor %.2f + exp %.2f + shared %.2f + fill "
                       "%.2f; dram %.2f, reduce %.2f, CTA starts %.2f, launch "
                       "%.2f us; %lld CTA/SM, %.2f waves\n",
                       (unsigned)i, e.timeUs, e.regime.c_str(),
                       e.limiter.c_str(), e.smUs, e.mmaUs, e.softmaxUs,
                       e.sharedUs, e.fillUs, e.dramUs, e.reduceUs, e.ctaUs,
                       e.launchUs, (long long)e.ctasPerSM, e.waves);
  }
}

//===----------------------------------------------------------------------===//
// Table
//===----------------------------------------------------------------------===//

static void printAttentionLines(llvm::raw_ostream &os, unsigned index,
                                const KernelCost &k) {
  const AttentionInfo &a = *k.attention;
  double heads = (double)a.batch * a.heads;
  os << "  attention #" << index << ": score matrix kept on chip "
     << humanBytes(k.avoidedScoreBytes()) << " (B*H*S_q*S_kv*" << a.elementBytes
     << " B; " << humanBytes(k.avoidedScoreBytes() / heads) << " per head)\n";
  os << "  attention #" << index << ": compute-bound past S =";
  for (const TargetDescription &t : getTargetDescriptions())
    os << " " << (int64_t)std::lround(attentionCrossoverSeqLen(k, t.roofline))
       << " (" << t.device << ")";
  os << "\n";
}

static void printTable(llvm::raw_ostream &os, const FunctionCost &function,
                       const RooflineModel &device,
                       const cost::DeviceModel &model) {
  os << "func @" << function.name << "\n";
  os << llvm::format("  %-3s %-34s %12s %12s %10s %-16s %12s\n", "#", "kernel",
                     "GFLOP", "MB", "FLOP/B", "regime", "time(us)");
  for (auto [i, k] : llvm::enumerate(function.kernels)) {
    KernelEstimate e = estimateKernel(k, device);
    os << llvm::format("  %-3u %-34s %12.3f %12.3f %10.1f %-16s %12.2f\n",
                       (unsigned)i, kernelName(k).c_str(), k.flops() / kGiga,
                       k.bytes / 1e6, e.intensity,
                       stringifyRegime(e.regime).str().c_str(), e.timeUs);
  }
  Totals t(function, device);
  os << llvm::format("  total: %u kernel%s, %.3f GFLOP, %s, intensity %.1f "
                     "FLOP/B, time %.2f us\n",
                     (unsigned)function.kernels.size(),
                     function.kernels.size() == 1 ? "" : "s", t.flops / kGiga,
                     humanBytes(t.bytes).c_str(), t.intensity(), t.timeUs);
  if (function.largestBoundaryBytes > 0)
    os << llvm::format("  total bytes: %.2fx the largest argument or result "
                       "(%s)\n",
                       t.bytes / function.largestBoundaryBytes,
                       humanBytes(function.largestBoundaryBytes).c_str());
  if (t.scoreBytes > 0)
    os << llvm::format("  score-matrix traffic: %s; unfused-attention "
                       "intensity (matmul FLOP / S x S bytes) %.1f FLOP/B\n",
                       humanBytes(t.scoreBytes).c_str(), t.scoreIntensity());
  for (auto [i, k] : llvm::enumerate(function.kernels))
    if (k.attention)
      printAttentionLines(os, i, k);
  printModelLines(os, function, model);
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static void printJsonKernel(llvm::json::OStream &j, unsigned index,
                            const KernelCost &k, const RooflineModel &device,
                            const cost::DeviceModel &model) {
  KernelEstimate e = estimateKernel(k, device);
  j.object([&] {
    j.attribute("index", index);
    j.attribute("op", kernelName(k));
    j.attribute("matmul_flops", k.matmulFlops);
    j.attribute("vector_flops", k.vectorFlops);
    j.attribute("flops", k.flops());
    j.attribute("bytes", k.bytes);
    j.attribute("score_bytes", k.scoreBytes);
    j.attribute("intensity", e.intensity);
    j.attribute("regime", stringifyRegime(e.regime));
    j.attribute("compute_us", e.computeUs);
    j.attribute("memory_us", e.memoryUs);
    j.attribute("time_us", e.timeUs);
    cost::Estimate m = modelEstimate(k, model);
    j.attributeObject("model", [&] {
      j.attribute("time_us", m.timeUs);
      j.attribute("regime", m.regime);
      j.attribute("limiter", m.limiter);
      j.attribute("sm_us", m.smUs);
      j.attribute("tensor_us", m.mmaUs);
      j.attribute("exp_us", m.softmaxUs);
      j.attribute("shared_us", m.sharedUs);
      j.attribute("fill_us", m.fillUs);
      j.attribute("dram_us", m.dramUs);
      j.attribute("reduce_us", m.reduceUs);
      j.attribute("cta_us", m.ctaUs);
      j.attribute("launch_us", m.launchUs);
      j.attribute("ctas_per_sm", m.ctasPerSM);
      j.attribute("waves", m.waves);
    });
    if (!k.attention)
      return;
    const AttentionInfo &a = *k.attention;
    j.attributeObject("attention", [&] {
      j.attribute("batch", a.batch);
      j.attribute("heads", a.heads);
      j.attribute("seq_len_q", a.seqLenQ);
      j.attribute("seq_len_kv", a.seqLenKV);
      j.attribute("causal", a.causal);
      j.attribute("avoided_score_bytes", k.avoidedScoreBytes());
      j.attribute("avoided_score_bytes_per_head",
                  k.avoidedScoreBytes() / ((double)a.batch * a.heads));
      j.attributeObject("crossover_seq_len", [&] {
        for (const TargetDescription &t : getTargetDescriptions())
          j.attribute(t.device,
                      std::lround(attentionCrossoverSeqLen(k, t.roofline)));
      });
    });
  });
}

static void printJson(llvm::raw_ostream &os, ArrayRef<FunctionCost> functions,
                      const RooflineModel &device,
                      const cost::DeviceModel &model,
                      const SizeBindings &sizes) {
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attributeObject("device", [&] {
      j.attribute("name", device.name);
      j.attribute("peak_tflops", device.peakTflops);
      j.attribute("bandwidth_tbps", device.bandwidthTBps);
      j.attribute("launch_overhead_us", device.launchOverheadUs);
      j.attribute("ridge", device.ridge());
    });
    j.attributeObject("model", [&] {
      j.attribute("name", model.name);
      j.attribute("source", model.source);
    });
    j.attributeObject("sizes", [&] {
      j.attribute("batch", sizes.batch);
      j.attribute("heads", sizes.heads);
      j.attribute("seq_len_q", sizes.seqLenQ);
      j.attribute("seq_len_kv", sizes.seqLenKV);
    });
    j.attributeArray("functions", [&] {
      for (const FunctionCost &f : functions)
        j.object([&] {
          j.attribute("name", f.name);
          j.attributeArray("kernels", [&] {
            for (auto [i, k] : llvm::enumerate(f.kernels))
              printJsonKernel(j, i, k, device, model);
          });
          Totals t(f, device);
          j.attributeObject("total", [&] {
            j.attribute("kernels", (int64_t)f.kernels.size());
            j.attribute("flops", t.flops);
            j.attribute("bytes", t.bytes);
            j.attribute("intensity", t.intensity());
            j.attribute("time_us", t.timeUs);
            j.attribute("score_bytes", t.scoreBytes);
            j.attribute("score_intensity", t.scoreIntensity());
            j.attribute("bytes_over_largest_boundary",
                        f.largestBoundaryBytes > 0
                            ? t.bytes / f.largestBoundaryBytes
                            : 0.0);
          });
        });
    });
  });
  os << "\n";
}

void attnc::printIntensityReport(llvm::raw_ostream &os,
                                 ArrayRef<FunctionCost> functions,
                                 const RooflineModel &device,
                                 const cost::DeviceModel &model,
                                 const SizeBindings &sizes, bool json) {
  if (json)
    return printJson(os, functions, device, model, sizes);
  os << llvm::format("attnc intensity report: device %s, peak %.1f TFLOP/s, "
                     "bandwidth %.2f TB/s, ridge %.1f FLOP/B, launch %.1f us\n",
                     device.name.c_str(), device.peakTflops,
                     device.bandwidthTBps, device.ridge(),
                     device.launchOverheadUs);
  os << "cost model: " << model.name << ", " << model.source << "\n";
  os << "sizes: batch=" << sizes.batch << " heads=" << sizes.heads
     << " seq-len-q=" << sizes.seqLenQ << " seq-len-kv=" << sizes.seqLenKV
     << "\n";
  for (const FunctionCost &f : functions)
    printTable(os, f, device, model);
}
