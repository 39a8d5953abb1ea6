// A plain fp32 SGEMM for measuring what markers cost a compute-bound
// kernel when tracing is on, off at run time (null buffer) and sampled out
// (recorder_bench's SGEMM rows): C = A * B, all row-major, M, N multiples
// of 128 and K a multiple of 8.
//
// 128 x 128 block tile, k-tile of 8, 256 threads, each thread an 8 x 8
// piece of C in registers; A's tile is stored transposed in shared memory.
// Every warp records two region pairs per k-tile: "load" (the tile loads
// and the barrier) and "mma" (the 512 FMAs of each thread and the barrier).
//
// Launch: grid = (N / 128, M / 128), block = 256 threads.
#include <ktrace.cuh>

#define SG_TILE 128
#define SG_BK 8
#define SG_THREADS 256

extern "C" __global__ void __launch_bounds__(SG_THREADS)
    sgemm_bench(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int m, int n, int k, ktrace_arg trace) {
  __shared__ __align__(16) float as[SG_BK][SG_TILE];
  __shared__ __align__(16) float bs[SG_BK][SG_TILE];
  KTRACE_OPEN(trace);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * SG_TILE, col0 = blockIdx.x * SG_TILE;
  // Each thread loads 4 floats of A's tile (row a_r, columns a_c..a_c+3)
  // and 4 of B's (row b_r, columns b_c..b_c+3).
  const int a_r = threadIdx.x / 2, a_c = (threadIdx.x % 2) * 4;
  const int b_r = threadIdx.x / 32, b_c = (threadIdx.x % 32) * 4;
  const float* pa = a + (size_t)(row0 + a_r) * k + a_c;
  const float* pb = b + (size_t)b_r * n + col0 + b_c;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  (void)m;
  for (int k0 = 0; k0 < k; k0 += SG_BK) {
    KTRACE_B("load");
    const float4 va = *reinterpret_cast<const float4*>(pa + k0);
    const float4 vb = *reinterpret_cast<const float4*>(pb + (size_t)k0 * n);
    as[a_c + 0][a_r] = va.x;
    as[a_c + 1][a_r] = va.y;
    as[a_c + 2][a_r] = va.z;
    as[a_c + 3][a_r] = va.w;
    *reinterpret_cast<float4*>(&bs[b_r][b_c]) = vb;
    __syncthreads();
    KTRACE_E("load");
    KTRACE_B("mma");
#pragma unroll
    for (int kk = 0; kk < SG_BK; ++kk) {
      float ar[8], br[8];
      *reinterpret_cast<float4*>(&ar[0]) = *reinterpret_cast<const float4*>(&as[kk][ty * 8]);
      *reinterpret_cast<float4*>(&ar[4]) = *reinterpret_cast<const float4*>(&as[kk][ty * 8 + 4]);
      *reinterpret_cast<float4*>(&br[0]) = *reinterpret_cast<const float4*>(&bs[kk][tx * 8]);
      *reinterpret_cast<float4*>(&br[4]) = *reinterpret_cast<const float4*>(&bs[kk][tx * 8 + 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
    KTRACE_E("mma");
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    float* pc = c + (size_t)(row0 + ty * 8 + i) * n + col0 + tx * 8;
    *reinterpret_cast<float4*>(pc) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(pc + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}
