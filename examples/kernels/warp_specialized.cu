// A producer/consumer kernel in two warpgroups. Warpgroup 0 is the
// producer: it gives its registers back with `setmaxnreg.dec` down to
// WS_PRODUCER_REGS (24, the least the instruction allows), and its thread 0
// copies tiles from global memory into a shared-memory ring with
// cp.async.bulk, each copy completing on the stage's `full` mbarrier.
// Warpgroup 1 (WS_CONSUMERS warps) consumes the tiles: each consumer warp
// squares its share of a tile and accumulates, then releases the stage on
// its `empty` mbarrier. The block's sum goes to out[blockIdx.x].
//
// The producer's markers are reached by thread 0 alone (lane 0 of warp 0),
// the consumers' by whole warps; the traced build must run the producer in
// its 24 registers without spilling (tests/registers.rs checks). It
// records with the shared-memory recorder, staging areas for the block's 8
// warps only (2,176 bytes); its warp_specialized_store variant (variants.rs)
// builds it with the default store recorder, which no longer spills there
// either (it spilled 8 bytes in the producer while its context held a
// leader lane).
//
// Launch: grid = number of blocks, block = WS_THREADS (256) threads; each
// block reduces tiles_per_block tiles of WS_TILE floats starting at
// x + blockIdx.x * tiles_per_block * WS_TILE (16-byte aligned).
#ifndef KTRACE_RECORDER
#define KTRACE_RECORDER KTRACE_RECORDER_SMEM
#endif
#ifndef KTRACE_SMEM_WARPS
#define KTRACE_SMEM_WARPS 8
#endif
#include <ktrace.cuh>

#define WS_CONSUMERS 4
#define WS_THREADS (128 + 32 * WS_CONSUMERS)
#define WS_TILE 1024
#define WS_TILE_BYTES (WS_TILE * 4)
#define WS_STAGES 4
#define WS_PRODUCER_REGS 24

__device__ __forceinline__ uint32_t ws_smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ws_smem(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(ws_smem(bar))
               : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(ws_smem(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT_%=;\n\t}" ::"r"(ws_smem(bar)),
      "r"(parity)
      : "memory");
}
// One tile from global to shared memory, completing on `bar` with its bytes.
__device__ __forceinline__ void bulk_load(float* dst, const float* src, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(ws_smem(dst)),
      "l"(src), "n"(WS_TILE_BYTES), "r"(ws_smem(bar))
      : "memory");
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 2)
    warp_specialized(const float* __restrict__ x, float* __restrict__ out, int tiles_per_block,
                     ktrace_arg trace) {
  __shared__ __align__(128) float ring[WS_STAGES][WS_TILE];
  __shared__ uint64_t full[WS_STAGES], empty[WS_STAGES];
  __shared__ float partial[WS_CONSUMERS];
  KTRACE_OPEN(trace);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < WS_STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 32 * WS_CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const float* base = x + (size_t)blockIdx.x * tiles_per_block * WS_TILE;
  if (warp < 4) {
    // Producer warpgroup: every warp of it gives registers back.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(WS_PRODUCER_REGS));
    if (threadIdx.x == 0) {
      for (int t = 0; t < tiles_per_block; ++t) {
        const int s = t % WS_STAGES;
        const unsigned round = t / WS_STAGES;
        KTRACE_B("wait_empty");
        if (round > 0) mbar_wait(&empty[s], (round - 1) & 1);
        KTRACE_E("wait_empty");
        KTRACE_B("produce");
        mbar_expect_tx(&full[s], WS_TILE_BYTES);
        bulk_load(ring[s], base + (size_t)t * WS_TILE, &full[s]);
        KTRACE_E("produce");
      }
    }
  } else {
    const int c = warp - 4;
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
