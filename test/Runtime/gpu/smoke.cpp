//===- smoke.cpp - The runtime's version 2 paths on a real GPU ------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// GPU-only (run.sh builds and runs it; lit never does): loads kernels.cu's
// cubin through manifest.json and checks, on the device, what the fake
// driver tests can only check as arguments: tensormaps the runtime encoded
// move the right tiles (with out-of-bounds handling), num_sms is the
// device's SM count, zero_init workspaces are zeroed before every launch,
// also in a replayed CUDA graph. Prints "N passed, M failed".
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int passed = 0, failed = 0;

void expect(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  (ok ? passed : failed)++;
}

bool attncOk(attnc_status st, const char *what) {
  if (st != ATTNC_OK)
    std::printf("FAIL: %s: %s\n", what, attnc_last_error());
  return st == ATTNC_OK;
}

attnc_tensor tensor(void *data, attnc_dtype dtype, int32_t rank,
                    const int64_t *sizes, const int64_t *strides) {
  return {reinterpret_cast<uint64_t>(data), dtype, rank, sizes, strides};
}

void tileCopy(attnc_module *m, int64_t rows, int64_t cols) {
  attnc_kernel *k;
  attnc_module_get_kernel(m, "tile_copy", &k);
  size_t n = rows * cols;
  std::vector<float> host(n), back(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i) * 0.5f + 1.0f;
  float *x, *y;
  cudaMalloc(&x, n * 4);
  cudaMalloc(&y, n * 4);
  cudaMemcpy(x, host.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(y, 0xff, n * 4); // NaN everywhere
  int64_t sizes[2] = {rows, cols}, strides[2] = {cols, 1};
  attnc_tensor args[2] = {tensor(x, ATTNC_DTYPE_F32, 2, sizes, strides),
                          tensor(y, ATTNC_DTYPE_F32, 2, sizes, strides)};
  attnc_plan *plan = nullptr;
  std::string what = "tile_copy " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " through TMA";
  if (attncOk(attnc_plan_create(k, args, 2, nullptr, 0, &plan), "plan") &&
      attncOk(attnc_plan_launch(plan, nullptr), "launch")) {
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(back.data(), y, n * 4, cudaMemcpyDeviceToHost);
    expect(
        e == cudaSuccess && std::memcmp(back.data(), host.data(), n * 4) == 0,
        what + (e == cudaSuccess ? ""
                                 : std::string(": ") + cudaGetErrorString(e)));
  } else {
    expect(false, what);
  }
  attnc_plan_destroy(plan);
  cudaFree(x);
  cudaFree(y);
}

void countBlocks(attnc_module *m) {
  attnc_kernel *k;
  attnc_module_get_kernel(m, "count_blocks", &k);
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  int *out;
  unsigned *counters, *seen;
  cudaMalloc(&out, 4);
  cudaMalloc(&counters, 256);
  cudaMalloc(&seen, sms * 4);
  cudaMemset(counters, 0xab, 256); // garbage the runtime must zero
  int64_t one = 1, unit = 1, counterBytes = 256, seenBytes = sms * 4;
  attnc_tensor args[3] = {
      tensor(out, ATTNC_DTYPE_I32, 1, &one, &unit),
      tensor(counters, ATTNC_DTYPE_I8, 1, &counterBytes, nullptr),
      tensor(seen, ATTNC_DTYPE_I8, 1, &seenBytes, nullptr)};
  attnc_plan *plan = nullptr;
  if (!attncOk(attnc_plan_create(k, args, 3, nullptr, 0, &plan), "plan")) {
    expect(false, "count_blocks plan");
    return;
  }
  int64_t grid[3];
  attnc_plan_grid(plan, grid);
  expect(grid[0] == sms,
         "num_sms from the driver: grid.x = " + std::to_string(grid[0]) +
             ", device has " + std::to_string(sms));
  for (int launch = 1; launch <= 2; ++launch) {
    int result = -1;
    attncOk(attnc_plan_launch(plan, nullptr), "launch");
    cudaDeviceSynchronize();
    cudaMemcpy(&result, out, 4, cudaMemcpyDeviceToHost);
    expect(result == sms, "launch " + std::to_string(launch) + " counted " +
                              std::to_string(result) +
                              " blocks (zero_init before each launch)");
  }
  std::vector<unsigned> seenHost(sms);
  cudaMemcpy(seenHost.data(), seen, sms * 4, cudaMemcpyDeviceToHost);
  bool all = true;
  for (unsigned s : seenHost)
    all &= s == static_cast<unsigned>(sms);
  expect(all, "every block saw gridDim.x = num_sms");

  // The same in a CUDA graph: the memset is a node, replays zero again.
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  auto s = reinterpret_cast<attnc_stream>(stream);
  attnc_graph *graph = nullptr;
  bool captured = attncOk(attnc_graph_begin(s), "graph begin") &&
                  attncOk(attnc_plan_launch(plan, s), "captured launch") &&
                  attncOk(attnc_graph_end(s, &graph), "graph end");
  expect(captured, "graph capture of memset + launch");
  for (int replay = 1; captured && replay <= 3; ++replay) {
    cudaMemsetAsync(out, 0, 4, stream);
    attncOk(attnc_graph_replay(graph, s), "replay");
    int result = -1;
    cudaMemcpyAsync(&result, out, 4, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    expect(result == sms, "replay " + std::to_string(replay) + " counted " +
                              std::to_string(result) + " blocks");
  }
  attnc_graph_destroy(graph);
  cudaStreamDestroy(stream);
  attnc_plan_destroy(plan);
  cudaFree(out);
  cudaFree(counters);
  cudaFree(seen);
}

} // namespace

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  cudaSetDevice(0);
  cudaFree(nullptr); // the primary context, current for the runtime too
  attnc_module *m = nullptr;
  if (!attncOk(attnc_module_load(dir, &m), "load")) {
    std::printf("0 passed, 1 failed\n");
    return 1;
  }
  tileCopy(m, 64, 64);
  tileCopy(m, 100, 72); // partial tiles: TMA bounds on both sides
  tileCopy(m, 1, 32);
  countBlocks(m);
  attnc_module_unload(m);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
