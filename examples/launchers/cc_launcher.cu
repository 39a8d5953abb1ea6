// Host launcher compiled into a static library by ktrace-build (traced and
// untraced), called from Rust through bindgen declarations.
#include <cuda_runtime.h>
#include <ktrace.cuh>

#include "cc_launcher.h"

namespace {

__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, int n,
                             ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("grid-stride loop");
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = fmaf(a, x[i], y[i]);
  }
  KTRACE_E("grid-stride loop");
}

}  // namespace

KTRACE_EXTERN_C int KTRACE_LAUNCHER(cc_saxpy)(float a, const float* x, float* y, int n, int blocks,
                                              int threads, ktrace_arg trace) {
  float *dx = nullptr, *dy = nullptr;
  const size_t bytes = sizeof(float) * (size_t)n;
  cudaError_t e = cudaMalloc(&dx, bytes);
  if (e == cudaSuccess) e = cudaMalloc(&dy, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    saxpy_kernel<<<blocks, threads>>>(a, dx, dy, n, trace);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  return (int)e;
}
