// Reference for the gemm example: C = A * B^T in fp32 from the same bf16
// inputs (A M x K, B N x K, row-major), 32 x 32 tiles through shared memory.
// Launch: grid (N / 32, M / 32), block (32, 32).
#include <cuda_bf16.h>

extern "C" __global__ void gemm_reference(const __nv_bfloat16* __restrict__ a,
                                          const __nv_bfloat16* __restrict__ b,
                                          float* __restrict__ c, int M, int N, int K) {
  __shared__ float ta[32][33], tb[32][33];
  const int row = blockIdx.y * 32 + threadIdx.y;
  const int col = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 32) {
    ta[threadIdx.y][threadIdx.x] = __bfloat162float(a[(size_t)row * K + k0 + threadIdx.x]);
    tb[threadIdx.y][threadIdx.x] =
        __bfloat162float(b[(size_t)(blockIdx.x * 32 + threadIdx.y) * K + k0 + threadIdx.x]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 32; ++k) acc = fmaf(ta[threadIdx.y][k], tb[threadIdx.x][k], acc);
    __syncthreads();
  }
  if (row < M && col < N) c[(size_t)row * N + col] = acc;
}
