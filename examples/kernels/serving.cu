// The kernels of one decode step of a small model, at decode sizes (a few
// rows against a large weight matrix), for the serving_loop example: a
// matrix-vector product (the gemm at a small M), a reduction over each
// row and an elementwise kernel. Plus the two kernels of the launch
// identity check: one counts launches in device memory, the other records
// the count it reads as a value, so every record says which launch it
// came from.
#include <ktrace.cuh>

#define SERVE_M 4          // rows (tokens) of a decode step
#define SERVE_TILE 128     // columns per block of the matrix-vector product

// y[m][n] += sum_k x[m][k] * w[k][n] over the block's quarter of K (y is
// zeroed before): each block computes SERVE_TILE columns for every row,
// each lane four of them (one float4 a row); its 8 warps split the block's
// rows, each streaming them (512 coalesced bytes a row), add up their
// partial sums in shared memory and the block adds its sums to y.
extern "C" __global__ void __launch_bounds__(256)
    serve_matvec(const float* __restrict__ x, const float4* __restrict__ w, float* __restrict__ y,
                 int K, int N, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  __shared__ float4 part[8][SERVE_M][32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int n4 = blockIdx.x * 32 + lane;  // in float4s
  const int N4 = N / 4;
  const int rows = K / gridDim.y / 8;
  const int k_begin = (blockIdx.y * 8 + warp) * rows;
  float4 acc[SERVE_M];
#pragma unroll
  for (int m = 0; m < SERVE_M; ++m) acc[m] = make_float4(0.f, 0.f, 0.f, 0.f);
  // Chunks of 64 rows, each one region, not unrolled into each other: so
  // that the untraced build has the traced build's loop. Written as one
  // loop over k with the chunks' bounds, the markers' asm kept the chunks
  // apart only in the traced build; without it nvcc fused them into one
  // loop of 8 rows and a remainder, with fewer loads in flight, and the
  // untraced build ran the serving loop's step 24% slower than the traced
  // build with tracing off (66.4 against 53.5 us on the H200).
  constexpr int kChunk = 64;
#pragma unroll 1
  for (int k0 = k_begin; k0 < k_begin + rows; k0 += kChunk) {
    KTRACE_B("stream_w");
#pragma unroll 8
    for (int kk = 0; kk < kChunk; ++kk) {
      const int k = k0 + kk;
      const float4 wv = __ldg(&w[(size_t)k * N4 + n4]);
#pragma unroll
      for (int m = 0; m < SERVE_M; ++m) {
        const float xv = __ldg(&x[m * K + k]);
        acc[m].x += xv * wv.x;
        acc[m].y += xv * wv.y;
        acc[m].z += xv * wv.z;
        acc[m].w += xv * wv.w;
      }
    }
    KTRACE_E("stream_w");
  }
  KTRACE_B("combine");
#pragma unroll
  for (int m = 0; m < SERVE_M; ++m) part[warp][m][lane] = acc[m];
  __syncthreads();
  if (warp < SERVE_M) {
    float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float4 p = part[i][warp][lane];
      t.x += p.x;
      t.y += p.y;
      t.z += p.z;
      t.w += p.w;
    }
    float* out = y + (size_t)warp * N + 4 * n4;
    atomicAdd(out + 0, t.x);
    atomicAdd(out + 1, t.y);
    atomicAdd(out + 2, t.z);
    atomicAdd(out + 3, t.w);
  }
  KTRACE_E("combine");
}

// As fast as a warp can record: `n` marks in a loop, for the drain's
// ceiling.
extern "C" __global__ void record_burst(int n, unsigned* __restrict__ sink, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  unsigned acc = threadIdx.x;
  for (int i = 0; i < n; ++i) {
    KTRACE_M("burst");
    acc = acc * 1664525u + 1013904223u;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// s[m] = sum_n y[m][n]: one block per row.
extern "C" __global__ void __launch_bounds__(256)
    serve_rowsum(const float* __restrict__ y, float* __restrict__ s, int N, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  __shared__ float part[256 / 32];
  const int m = blockIdx.x;
  KTRACE_B("partial");
  float acc = 0.f;
  for (int n = threadIdx.x; n < N; n += blockDim.x) acc += y[m * N + n];
  for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  KTRACE_E("partial");
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
  KTRACE_B("combine");
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int i = 0; i < 256 / 32; ++i) t += part[i];
    s[m] = t;
  }
  KTRACE_E("combine");
}

// y[m][n] = y[m][n] / (1 + |s[m]|) + b[n]: the normalisation after the
// reduction.
extern "C" __global__ void __launch_bounds__(256)
    serve_scale(float* __restrict__ y, const float* __restrict__ s, const float* __restrict__ b,
                int N, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("scale");
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < SERVE_M * N) {
    const int m = i / N, n = i % N;
    y[i] = y[i] / (1.f + fabsf(s[m])) + b[n];
  }
  KTRACE_E("scale");
}

// The launch identity check: `bump` adds one to the launch counter, and
// `launch_probe`, launched after it, records the counter it reads as the
// value of a mark, in every traced warp.
extern "C" __global__ void bump(unsigned* counter) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *counter += 1;
}

extern "C" __global__ void launch_probe(const unsigned* __restrict__ counter, int spin,
                                        unsigned* __restrict__ sink, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  const unsigned seen = *(volatile const unsigned*)counter;
  KTRACE_M_V("launch_index", seen);
  unsigned acc = threadIdx.x;
  KTRACE_B("spin");
  for (int i = 0; i < spin; ++i) acc = acc * 1664525u + 1013904223u;
  KTRACE_E("spin");
  if (acc == 0x12345678u) sink[0] = acc;
}
