// Ground truth for ktrace's timing: regions that busy-wait a known time,
// each measured independently inside the kernel with %globaltimer.
//
// Launch: grid = a multiple of the SM count small enough to be co-resident
// (the kernel holds a grid-wide barrier), block = SPIN_THREADS threads.
// Per warp w (linear over the grid), the kernel writes
//   truth[w * SPIN_LENGTHS * 2 + 2*i + {0,1}] = %globaltimer just after
//     KTRACE_B and just before KTRACE_E of length i,
//   marks[w] = %globaltimer just after the "released" mark that every warp
//     records once the grid-wide barrier opens.
#include <ktrace.cuh>

#define SPIN_THREADS 128
#define SPIN_LENGTHS 4

__device__ __forceinline__ uint64_t spin_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

// Busy-waits `ns` nanoseconds; returns the start and end times.
__device__ __forceinline__ void spin_for(uint64_t ns, uint64_t* out) {
  const uint64_t t0 = spin_now();
  uint64_t t1 = t0;
  while (t1 - t0 < ns) t1 = spin_now();
  t1 = spin_now();
  out[0] = t0;
  out[1] = t1;
}

extern "C" __global__ void __launch_bounds__(SPIN_THREADS)
    spin(const uint64_t* __restrict__ lengths_ns, uint64_t* __restrict__ truth,
         uint64_t* __restrict__ marks, unsigned* barrier, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  const unsigned warps_per_block = SPIN_THREADS / 32;
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  const unsigned gw = blockIdx.x * warps_per_block + warp;

  // Grid-wide barrier: every block is resident, so spinning is safe.
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(barrier, 1u);
    while (atomicAdd(barrier, 0u) < gridDim.x) {
    }
  }
  __syncthreads();
  KTRACE_M("released");
  const uint64_t released = spin_now();
  if (lane == 0) marks[gw] = released;

  uint64_t t[2 * SPIN_LENGTHS];
  KTRACE_B("spin 1us");
  spin_for(lengths_ns[0], &t[0]);
  KTRACE_E("spin 1us");
  KTRACE_B("spin 10us");
  spin_for(lengths_ns[1], &t[2]);
  KTRACE_E("spin 10us");
  KTRACE_B("spin 100us");
  spin_for(lengths_ns[2], &t[4]);
  KTRACE_E("spin 100us");
  KTRACE_B("spin 1000us");
  spin_for(lengths_ns[3], &t[6]);
  KTRACE_E("spin 1000us");
  if (lane == 0) {
    for (int i = 0; i < 2 * SPIN_LENGTHS; ++i) truth[gw * 2 * SPIN_LENGTHS + i] = t[i];
  }
}
