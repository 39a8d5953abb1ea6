// Four regions of known character, for checking that ktrace's stall
// attribution (KTRACE_STALLS, `ktrace stalls`) names each region's cause:
//   chase           a chain of dependent global loads (each load's address
//                   is the value before it, out of L2): long_scoreboard
//   fma_chain       a chain of dependent FMAs: wait (the fixed latency)
//   barrier         __syncthreads behind one slow warp: barrier
//   bank_conflicts  shared memory read and written 32-way conflicted:
//                   short_scoreboard / mio_throttle
// and `slow_warp`, the work of the one warp the barrier waits for.
//
// Launch: one block of STALLS_THREADS threads per SM (one warp per
// scheduler, so a dependent chain stalls rather than hides behind others).
#include <ktrace.cuh>

#define STALLS_THREADS 128

extern "C" __global__ void __launch_bounds__(STALLS_THREADS)
    planted(const unsigned* __restrict__ chain, unsigned n, unsigned* __restrict__ out,
            int rounds, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  __shared__ float tile[32 * 32];
  volatile float* vtile = tile;
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  unsigned p = (blockIdx.x * STALLS_THREADS + threadIdx.x) * 977u % n;
  float a = 1.0f + lane, b = 0.999f, slow = 0.0f;
  tile[threadIdx.x] = 0.0f;
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    KTRACE_B("chase");
    for (int i = 0; i < 64; ++i) p = __ldcg(chain + p);
    KTRACE_E("chase");

    KTRACE_B("fma_chain");
#pragma unroll 16
    for (int i = 0; i < 4096; ++i) a = fmaf(a, b, 0.25f);
    KTRACE_E("fma_chain");

    if (warp == 0) {
      KTRACE_B("slow_warp");
#pragma unroll 16
      for (int i = 0; i < 8192; ++i) slow = fmaf(slow, b, 1.0f);
      KTRACE_E("slow_warp");
    }
    KTRACE_B("barrier");
    __syncthreads();
    KTRACE_E("barrier");

    KTRACE_B("bank_conflicts");
    // Every lane of a warp on one bank: a stride of 32 words.
    for (int i = 0; i < 512; ++i) vtile[lane * 32 + (i & 31)] += a;
    KTRACE_E("bank_conflicts");
  }
  const unsigned t = blockIdx.x * STALLS_THREADS + threadIdx.x;
  out[2 * t] = p;
  out[2 * t + 1] = __float_as_uint(a + slow + tile[threadIdx.x]);
}
