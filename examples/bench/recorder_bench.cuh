// The recorder microbenchmark, in the shape of Proton's: a loop of 8
// dependent fp32 FMAs per iteration, 4 warps per block, and 0, 1 (a mark),
// 2 (one region pair) or 4 (two nested pairs) events per iteration; and
// bench_v1, one mark per iteration that records a value (KTRACE_M_V).
// Included by one .cu file per recorder design (KTRACE_RECORDER).
//
// Launch: grid = blocks, block = 128 threads; out has one float per thread.
#include <ktrace.cuh>

#define BENCH_FMA4(a)       \
  a = fmaf(a, 1.0001f, 0.5f); \
  a = fmaf(a, 0.9999f, -0.5f); \
  a = fmaf(a, 1.0001f, 0.5f); \
  a = fmaf(a, 0.9999f, -0.5f)

template <int EVENTS, bool VALUE = false>
__device__ __forceinline__ void bench_body(float* __restrict__ out, int iters, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  float a = threadIdx.x * 1e-3f;
  for (int i = 0; i < iters; ++i) {
    if (EVENTS >= 2) KTRACE_B("outer");
    if (EVENTS == 1 && !VALUE) KTRACE_M("tick");
    if (EVENTS == 1 && VALUE) KTRACE_M_V("tick", i);
    BENCH_FMA4(a);
    if (EVENTS >= 4) KTRACE_B("inner");
    BENCH_FMA4(a);
    if (EVENTS >= 4) KTRACE_E("inner");
    if (EVENTS >= 2) KTRACE_E("outer");
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

extern "C" __global__ void __launch_bounds__(128) bench_e0(float* out, int iters, ktrace_arg t) {
  bench_body<0>(out, iters, t);
}
extern "C" __global__ void __launch_bounds__(128) bench_e1(float* out, int iters, ktrace_arg t) {
  bench_body<1>(out, iters, t);
}
extern "C" __global__ void __launch_bounds__(128) bench_e2(float* out, int iters, ktrace_arg t) {
  bench_body<2>(out, iters, t);
}
extern "C" __global__ void __launch_bounds__(128) bench_e4(float* out, int iters, ktrace_arg t) {
  bench_body<4>(out, iters, t);
}
extern "C" __global__ void __launch_bounds__(128) bench_v1(float* out, int iters, ktrace_arg t) {
  bench_body<1, true>(out, iters, t);
}
