// ktrace example kernel: a warp-specialized bf16 GEMM for Hopper (sm_90a).
//
//   C[M][N] = A[M][K] * B[N][K]^T          ("TN": both operands K-major)
//
//   A  bf16, M x K, row-major (K contiguous), leading dimension K
//   B  bf16, N x K, row-major (K contiguous), leading dimension K
//   C  bf16, M x N, row-major (N contiguous), leading dimension N
//   fp32 accumulation, rounded to bf16 (round-to-nearest-even) on the store.
//
// Shapes: M % GEMM_BM == 0, N % GEMM_BN == 0, K % GEMM_BK == 0, K > 0
// (M % 128, N % 256, K % 64). Nothing is bounds-checked. All indices fit in
// 32 bits per dimension; element offsets are computed in 64 bits.
//
// Design
//   * CTA tile 128 x 256, k-tile 64, GEMM_STAGES (4) shared-memory stages of
//     A 128x64 + B 256x64 bf16 (48 KiB each), loaded by TMA
//     (cp.async.bulk.tensor.2d, 128-byte swizzle) and handed over with
//     mbarriers: full[s] (1 arrival + transaction bytes) and empty[s]
//     (one arrival per consumer warpgroup).
//   * 3 warpgroups (384 threads): warpgroup 0 is the producer (one thread
//     issues the TMA loads; setmaxnreg.dec to 24), warpgroups 1 and 2 are
//     consumers (setmaxnreg.inc to 240), each owning 64 rows x 256 columns
//     of the tile and issuing wgmma.m64n256k16.f32.bf16.bf16 straight from
//     shared memory (4 per k-tile, one wgmma group per k-tile, one group
//     kept in flight). The epilogue stores the fp32 accumulators as bf16
//     pairs directly from registers to global memory.
//   * Persistent: the grid is min(#SMs, #tiles) CTAs, CTA b takes tiles
//     b, b + gridDim.x, ... The tile order walks down GEMM_GROUP_M tile rows
//     before moving one tile column right, so CTAs running together share
//     A and B panels in L2. The ring of stages runs on across tiles, so the
//     producer loads the next tile while the consumers store the last one.
//
// Host contract (mirror these in the host):
//   block            GEMM_THREADS = 384 threads (1-D)
//   grid             min(num_SMs, (M / 128) * (N / 256)) CTAs (1-D); any
//                    grid size >= 1 is correct, one CTA per SM is the design
//   dynamic smem     GEMM_SMEM_BYTES = 197760 bytes; raise the limit first:
//                    cudaFuncSetAttribute / cuFuncSetAttribute
//                    (MAX_DYNAMIC_SHARED_SIZE_BYTES = GEMM_SMEM_BYTES)
//   a_map            cuTensorMapEncodeTiled(
//                      dataType   CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
//                      rank       2,
//                      globalAddress A,
//                      globalDim    {K, M}              (innermost first)
//                      globalStrides{K * 2}             (bytes, of dim 1)
//                      boxDim       {64, 128}           (GEMM_BK, GEMM_BM)
//                      elementStrides {1, 1},
//                      CU_TENSOR_MAP_INTERLEAVE_NONE,
//                      CU_TENSOR_MAP_SWIZZLE_128B,
//                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
//                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
//   b_map            the same for B with globalDim {K, N},
//                    globalStrides {K * 2}, boxDim {64, 256} (GEMM_BK, GEMM_BN)
//   A and B must be 16-byte aligned (TMA), K * 2 a multiple of 16;
//   C 4-byte aligned.
//
// Tracing (ktrace): the trailing `ktrace_arg trace` is the session's
// argument (buffer 0 turns tracing off for the launch). Every warp opens a
// context; the recording warps are
//   warp 0         producer: per k-tile "wait_empty" (empty-barrier wait)
//                  and "load" (expect-tx + the two TMA issues)
//   warps 4..11    consumers: per k-tile "wait_full" (full-barrier wait) and
//                  "mma" (4 wgmma issued, committed, and the previous k-tile's
//                  group waited for); per tile "epilogue" (the C store)
//   warps 1..3     idle producer warps: open and flush only
// GEMM_TRACE_PAIRS sets the region pairs per k-tile: 2 (default) as above,
// 1 keeps only "load" and "mma", 0 keeps none. "epilogue" (one pair per tile)
// is recorded at every level. Events per warp and launch, with T the CTA's
// tile count and KT = K / 64:
//   producer warp 0:  T * KT * 2 * GEMM_TRACE_PAIRS
//   consumer warp:    T * (KT * 2 * GEMM_TRACE_PAIRS + 2)
// Region names: epilogue, load, mma, wait_empty, wait_full.
// Without KTRACE_ENABLED every marker expands to nothing.
//
// Other compile-time knob: GEMM_GROUP_M (default 16), the tile rows a CTA
// group walks before moving to the next tile column.

#include <cuda.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include <ktrace.cuh>

#ifndef GEMM_TRACE_PAIRS
#define GEMM_TRACE_PAIRS 2
#endif
#if GEMM_TRACE_PAIRS < 0 || GEMM_TRACE_PAIRS > 2
#error "GEMM_TRACE_PAIRS must be 0, 1 or 2"
#endif

#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 16
#endif

#define GEMM_BM 128
#define GEMM_BN 256
#define GEMM_BK 64
#define GEMM_STAGES 4
#define GEMM_THREADS 384
#define GEMM_CONSUMERS 2
#define GEMM_A_STAGE_BYTES (GEMM_BM * GEMM_BK * 2)                     // 16384
#define GEMM_B_STAGE_BYTES (GEMM_BN * GEMM_BK * 2)                     // 32768
#define GEMM_STAGE_BYTES (GEMM_A_STAGE_BYTES + GEMM_B_STAGE_BYTES)     // 49152
// Stages, 1024 bytes of slack to align the ring to the 1024-byte swizzle
// atom, and 128 bytes for the 2 * GEMM_STAGES mbarriers.
#define GEMM_SMEM_BYTES (GEMM_STAGES * GEMM_STAGE_BYTES + 1024 + 128)  // 197760
// Registers per thread after setmaxnreg: the producer warpgroup gives its
// registers back down to 24 (the least the instruction allows), the two
// consumer warpgroups take them (24 * 128 + 240 * 256 = 64,512 of the SM's
// 65,536). The gemm_p40 variant (examples/kernels/variants.rs) builds the
// producer at 40 / 232 instead, for the benchmark's comparison.
#ifndef GEMM_PRODUCER_REGS
#define GEMM_PRODUCER_REGS 24
#endif
#ifndef GEMM_CONSUMER_REGS
#define GEMM_CONSUMER_REGS 240
#endif
// Were the kernel switched to the shared-memory recorder, its
// KTRACE_SMEM_BYTES of static shared memory would add to the dynamic
// GEMM_SMEM_BYTES: checked here, at compile time, rather than by a failed
// launch (0 bytes with the default store recorder).
KTRACE_ASSERT_SMEM_FITS(GEMM_SMEM_BYTES);

namespace gemm_sm90 {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "GEMM_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@p bra GEMM_DONE;\n\t"
      "bra GEMM_WAIT;\n\t"
      "GEMM_DONE:\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_prefetch_desc(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Shared-memory matrix descriptor of a K-major operand in the 128-byte
// swizzle layout TMA writes: rows of 128 bytes, 8-row atoms 1024 bytes apart.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t saddr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((saddr & 0x3FFFF) >> 4);  // start address
  d |= static_cast<uint64_t>(1) << 16;                  // leading offset (unused)
  d |= static_cast<uint64_t>(1024 >> 4) << 32;          // stride offset
  d |= static_cast<uint64_t>(1) << 62;                  // 128-byte swizzle
  return d;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator accesses across wgmma
// fences and waits.
__device__ __forceinline__ void acc_fence(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d[64x256] (+)= A[64x16] * B[256x16]^T, both from shared memory.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db,
                                                 uint32_t accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %130, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, "
      "%88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, "
      "%104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, "
      "%120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
        "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
        "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),
        "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]),
        "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),
        "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
        "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Tile t -> (tile row, tile column): GEMM_GROUP_M tile rows at a time,
// rows fastest.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GEMM_GROUP_M * tiles_n;
  const int group = t / per_group;
  const int first_m = group * GEMM_GROUP_M;
  const int rows = min(tiles_m - first_m, GEMM_GROUP_M);
  const int r = t - group * per_group;
  tm = first_m + r % rows;
  tn = r / rows;
}

}  // namespace gemm_sm90

extern "C" __global__ void __launch_bounds__(GEMM_THREADS, 1)
    ktrace_gemm_bf16_tn(const __grid_constant__ CUtensorMap a_map,
                        const __grid_constant__ CUtensorMap b_map,
                        __nv_bfloat16* __restrict__ c, int M, int N, int K, ktrace_arg trace) {
  using namespace gemm_sm90;
  KTRACE_OPEN(trace);

  extern __shared__ uint8_t gemm_smem[];
  const uint32_t ring = (smem_u32(gemm_smem) + 1023u) & ~1023u;
  const uint32_t bars = ring + GEMM_STAGES * GEMM_STAGE_BYTES;
  // full[s] at bars + 8 s, empty[s] at bars + 8 (GEMM_STAGES + s).
#define GEMM_FULL(s) (bars + 8u * (s))
#define GEMM_EMPTY(s) (bars + 8u * (GEMM_STAGES + (s)))

  if (threadIdx.x == 0) {
    for (int s = 0; s < GEMM_STAGES; ++s) {
      mbar_init(GEMM_FULL(s), 1);
      mbar_init(GEMM_EMPTY(s), GEMM_CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();

  const int tiles_m = M / GEMM_BM;
  const int tiles_n = N / GEMM_BN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = K / GEMM_BK;
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);

  if (wg == 0) {
    // Producer warpgroup.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(GEMM_PRODUCER_REGS));
    if (threadIdx.x == 0) {
      tma_prefetch_desc(&a_map);
      tma_prefetch_desc(&b_map);
      int s = 0;
      uint32_t phase = 0;
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        tile_coords(t, tiles_m, tiles_n, tm, tn);
        const int m0 = tm * GEMM_BM;
        const int n0 = tn * GEMM_BN;
        // Not unrolled: one thread waits and issues two copies per k-tile,
        // and an unrolled loop does not fit the traced producer in 24
        // registers (ptxas spilled its trip counts, 16 bytes).
#pragma unroll 1
        for (int kt = 0; kt < k_tiles; ++kt) {
#if GEMM_TRACE_PAIRS >= 2
          KTRACE_B("wait_empty");
#endif
          mbar_wait(GEMM_EMPTY(s), phase ^ 1u);
#if GEMM_TRACE_PAIRS >= 2
          KTRACE_E("wait_empty");
#endif
#if GEMM_TRACE_PAIRS >= 1
          KTRACE_B("load");
#endif
          const uint32_t sa = ring + s * GEMM_STAGE_BYTES;
          mbar_arrive_expect_tx(GEMM_FULL(s), GEMM_STAGE_BYTES);
          tma_load_2d(sa, &a_map, GEMM_FULL(s), kt * GEMM_BK, m0);
          tma_load_2d(sa + GEMM_A_STAGE_BYTES, &b_map, GEMM_FULL(s), kt * GEMM_BK, n0);
#if GEMM_TRACE_PAIRS >= 1
          KTRACE_E("load");
#endif
          if (++s == GEMM_STAGES) {
            s = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // Consumer warpgroups: consumer `cw` owns rows cw * 64 .. cw * 64 + 63.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(GEMM_CONSUMER_REGS));
    const int cw = wg - 1;
    const int wtid = threadIdx.x % 128;
    const bool releaser = wtid == 0;
    const int warp = wtid / 32;
    const int lane = wtid % 32;
    const uint32_t a_off = static_cast<uint32_t>(cw) * 64u * 128u;

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

    int s = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      int prev = 0;
      for (int kt = 0; kt < k_tiles; ++kt) {
#if GEMM_TRACE_PAIRS >= 2
        KTRACE_B("wait_full");
#endif
        mbar_wait(GEMM_FULL(s), phase);
#if GEMM_TRACE_PAIRS >= 2
        KTRACE_E("wait_full");
#endif
#if GEMM_TRACE_PAIRS >= 1
        KTRACE_B("mma");
#endif
        const uint32_t sa = ring + s * GEMM_STAGE_BYTES;
        const uint64_t da = sw128_desc(sa + a_off);
        const uint64_t db = sw128_desc(sa + GEMM_A_STAGE_BYTES);
        acc_fence(acc);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < GEMM_BK / 16; ++k) {
          // +32 bytes along K inside the swizzle atom: +2 in descriptor units.
          wgmma_m64n256k16(acc, da + 2 * k, db + 2 * k, (kt | k) != 0);
        }
        wgmma_commit();
        wgmma_wait<1>();
        acc_fence(acc);
#if GEMM_TRACE_PAIRS >= 1
        KTRACE_E("mma");
#endif
        if (kt > 0 && releaser) mbar_arrive(GEMM_EMPTY(prev));
        prev = s;
        if (++s == GEMM_STAGES) {
          s = 0;
          phase ^= 1u;
        }
      }
      wgmma_wait<0>();
      acc_fence(acc);
      if (releaser) mbar_arrive(GEMM_EMPTY(prev));

      // (tests/data/h200_gemm2048_v3.ktrace was recorded with
      // KTRACE_B_V("epilogue", t), the tile index as a value; on the H200 that
      // cost this kernel about 0.5 points traced and 0.3 with tracing off at
      // 8192^3, docs/performance.md, so the benchmark build records none.)
      KTRACE_B("epilogue");
      // Accumulator fragment: register 4j + {0,1} is row warp*16 + lane/4,
      // columns 8j + 2(lane%4) + {0,1}; 4j + {2,3} the same 8 rows further.
      const int row = tm * GEMM_BM + cw * 64 + warp * 16 + lane / 4;
      const int col = tn * GEMM_BN + (lane % 4) * 2;
      __nv_bfloat16* c0 = c + static_cast<size_t>(row) * N + col;
      __nv_bfloat16* c1 = c0 + static_cast<size_t>(8) * N;
#pragma unroll
      for (int j = 0; j < GEMM_BN / 8; ++j) {
        *reinterpret_cast<uint32_t*>(c0 + 8 * j) = pack_bf16x2(acc[4 * j + 0], acc[4 * j + 1]);
        *reinterpret_cast<uint32_t*>(c1 + 8 * j) = pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
      }
      KTRACE_E("epilogue");
    }
  }
#undef GEMM_FULL
#undef GEMM_EMPTY
}
