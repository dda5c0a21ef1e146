// Kernels of the runtime's GPU smoke test (smoke.cpp): a 2-D TMA tile copy
// through two tensormaps the runtime encodes, and a persistent kernel that
// counts its blocks in a zero_init workspace. Written by hand (not by
// attnc-compile) so that the runtime's version 2 paths are checked on a GPU
// independently of the compiler.
#include <cuda.h>
#include <cstdint>

namespace {
__device__ uint32_t smem(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
} // namespace

// One 32x32 f32 tile per block: TMA load (out-of-bounds reads give zero),
// TMA store (out-of-bounds writes are dropped).
extern "C" __global__ void tile_copy(const float *x, float *y,
                                     const __grid_constant__ CUtensorMap x_map,
                                     const __grid_constant__ CUtensorMap y_map) {
  __shared__ alignas(1024) float tile[32 * 32];
  __shared__ alignas(8) uint64_t bar;
  int c0 = blockIdx.x * 32, c1 = blockIdx.y * 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
            smem(&bar)),
        "r"(32 * 32 * 4)
        : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                     smem(tile)),
                 "l"(&x_map), "r"(c0), "r"(c1), "r"(smem(&bar))
                 : "memory");
  }
  asm volatile("{\n .reg .pred p;\n wait:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
               " @!p bra wait;\n}" ::"r"(smem(&bar))
               : "memory");
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
                 "[%0, {%1, %2}], [%3];" ::"l"(&y_map),
                 "r"(c0), "r"(c1), "r"(smem(tile))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// Grid [num_sms]: every block counts itself in COUNTERS (zeroed by the
// runtime before each launch) and records gridDim.x in SEEN; the last block
// writes the count to OUT.
extern "C" __global__ void count_blocks(int *out, unsigned *counters,
                                        unsigned *seen) {
  if (threadIdx.x != 0)
    return;
  seen[blockIdx.x] = gridDim.x;
  __threadfence();
  unsigned before = atomicAdd(counters, 1u);
  if (before == gridDim.x - 1) {
    __threadfence();
    out[0] = static_cast<int>(atomicAdd(counters, 0u));
  }
}
