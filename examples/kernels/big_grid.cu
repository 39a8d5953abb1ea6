// A memory-bound kernel over a grid of far more than 65,536 blocks, traced
// with block sampling: y = a * x + y on float4 vectors, one per thread.
//
// Launch: grid = n4 / BIG_GRID_THREADS blocks (n4 = number of float4s, a
// multiple of BIG_GRID_THREADS), block = BIG_GRID_THREADS threads.
#include <ktrace.cuh>

#define BIG_GRID_THREADS 256

extern "C" __global__ void __launch_bounds__(BIG_GRID_THREADS)
    big_grid_axpy(float a, const float4* __restrict__ x, float4* __restrict__ y,
                  ktrace_arg trace) {
  KTRACE_OPEN(trace);
  const size_t i = (size_t)blockIdx.x * BIG_GRID_THREADS + threadIdx.x;
  // The store needs the loaded values, so the region's end is read after
  // the loads have arrived: it spans the load latency and the store issue.
  KTRACE_B("axpy");
  const float4 xv = x[i];
  float4 yv = y[i];
  yv.x = fmaf(a, xv.x, yv.x);
  yv.y = fmaf(a, xv.y, yv.y);
  yv.z = fmaf(a, xv.z, yv.z);
  yv.w = fmaf(a, xv.w, yv.w);
  y[i] = yv;
  KTRACE_E("axpy");
}
