// Ground truth for ktrace's timing under load: the SM clock moves while a
// traced warp records markers, and the warp reads %globaltimer beside every
// marker into a separate buffer.
//
// Launch: grid = blocks (at most one per SM is intended), block =
// DVFS_THREADS threads, dynamic shared memory none. Warp 0 of each block is
// the timeline warp: for i in 0..markers it busy-waits gaps[block][i] SM
// cycles, then records marker i — a begin of "dvfs step" when i % 3 == 0,
// its end when i % 3 == 1, a "dvfs tick" mark when i % 3 == 2 — and writes
//   truth[block * markers + i] = %globaltimer read right after the marker.
// The other warps load the tensor cores with dependent bf16 mma.sync until
// the timeline warp is done (when `load` is non-zero), and record a
// "dvfs load" region around every 4096 mma instructions.
#include <ktrace.cuh>

#define DVFS_THREADS 256

__device__ __forceinline__ uint64_t dvfs_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ uint64_t dvfs_clock() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

extern "C" __global__ void __launch_bounds__(DVFS_THREADS)
    dvfs(const uint32_t* __restrict__ gaps, uint32_t markers, uint64_t* __restrict__ truth,
         uint32_t load, float* __restrict__ sink, ktrace_arg trace) {
  __shared__ volatile uint32_t done;
  if (threadIdx.x == 0) done = 0;
  __syncthreads();
  KTRACE_OPEN(trace);
  const uint32_t warp = threadIdx.x / 32;
  const uint32_t lane = threadIdx.x % 32;
  if (warp == 0) {
    const uint32_t* g = gaps + (size_t)blockIdx.x * markers;
    uint64_t* tr = truth + (size_t)blockIdx.x * markers;
    for (uint32_t i = 0; i < markers; ++i) {
      const uint64_t t0 = dvfs_clock();
      while (dvfs_clock() - t0 < g[i]) {
      }
      const uint32_t kind = i % 3;
      if (kind == 0) {
        KTRACE_B("dvfs step");
      } else if (kind == 1) {
        KTRACE_E("dvfs step");
      } else {
        KTRACE_M("dvfs tick");
      }
      const uint64_t t = dvfs_now();
      if (lane == 0) tr[i] = t;
    }
    __syncwarp();
    if (lane == 0) done = 1;
    return;
  }
  if (load == 0) return;
  // Tensor-core load: bf16 m16n8k16 with dependent accumulators.
  uint32_t a0 = 0x3f803f80u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  const uint32_t b0 = 0x3f803f80u, b1 = b0 + 7;
  float d[4][4] = {};
  while (!done) {
    KTRACE_B("dvfs load");
    for (int i = 0; i < 1024; ++i) {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    KTRACE_E("dvfs load");
  }
  float s = 0;
  for (int k = 0; k < 4; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  if (s == 12345.f) sink[0] = s;
}
