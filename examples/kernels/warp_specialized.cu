// A producer/consumer kernel: warp 0 of each block loads tiles from global
// memory into a shared-memory ring, warps 1..WS_CONSUMERS consume them,
// synchronised through mbarriers (full: the producer's 32 lanes arrive;
// empty: every consumer lane arrives). Each consumer warp squares its share
// of the tile and accumulates; the block's sum goes to out[blockIdx.x].
//
// Launch: grid = number of blocks, block = 32 * (1 + WS_CONSUMERS) threads;
// each block reduces tiles_per_block tiles of WS_TILE floats starting at
// x + blockIdx.x * tiles_per_block * WS_TILE.
#include <ktrace.cuh>

#define WS_CONSUMERS 3
#define WS_THREADS (32 * (1 + WS_CONSUMERS))
#define WS_TILE 1024
#define WS_STAGES 4

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)),
               "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(
                   (unsigned)__cvta_generic_to_shared(bar))
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT_%=;\n\t}" ::"r"((unsigned)__cvta_generic_to_shared(bar)),
      "r"(parity)
      : "memory");
}

extern "C" __global__ void __launch_bounds__(WS_THREADS)
    warp_specialized(const float* __restrict__ x, float* __restrict__ out, int tiles_per_block,
                     ktrace_arg trace) {
  __shared__ float ring[WS_STAGES][WS_TILE];
  __shared__ uint64_t full[WS_STAGES], empty[WS_STAGES];
  __shared__ float partial[WS_CONSUMERS];
  KTRACE_OPEN(trace);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < WS_STAGES; ++s) {
      mbar_init(&full[s], 32);
      mbar_init(&empty[s], 32 * WS_CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const float* base = x + (size_t)blockIdx.x * tiles_per_block * WS_TILE;
  if (warp == 0) {
    for (int t = 0; t < tiles_per_block; ++t) {
      const int s = t % WS_STAGES;
      const unsigned round = t / WS_STAGES;
      KTRACE_B("wait_empty");
      if (round > 0) mbar_wait(&empty[s], (round - 1) & 1);
      KTRACE_E("wait_empty");
      KTRACE_B("produce");
      const float4* src = reinterpret_cast<const float4*>(base + (size_t)t * WS_TILE);
      float4* dst = reinterpret_cast<float4*>(ring[s]);
#pragma unroll
      for (int i = lane; i < WS_TILE / 4; i += 32) dst[i] = src[i];
      mbar_arrive(&full[s]);
      KTRACE_E("produce");
    }
  } else {
    const int c = warp - 1;
    float acc = 0.f;
    for (int t = 0; t < tiles_per_block; ++t) {
      const int s = t % WS_STAGES;
      KTRACE_B("wait_full");
      mbar_wait(&full[s], (t / WS_STAGES) & 1);
      KTRACE_E("wait_full");
      KTRACE_B("consume");
      for (int i = c * 32 + lane; i < WS_TILE; i += 32 * WS_CONSUMERS) {
        const float v = ring[s][i];
        acc = fmaf(v, v, acc);
      }
      mbar_arrive(&empty[s]);
      KTRACE_E("consume");
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) partial[c] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int c = 0; c < WS_CONSUMERS; ++c) sum += partial[c];
    out[blockIdx.x] = sum;
  }
}
