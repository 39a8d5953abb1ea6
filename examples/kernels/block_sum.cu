// A templated kernel, a marker inside a __device__ helper, and a third-party
// header (CUB, from the CUDA toolkit's CCCL). The README shows this file.
#include <ktrace.cuh>
#include <cub/block/block_reduce.cuh>

// Markers in a helper: it takes the caller's context.
__device__ float load_one(const float* x, int i, int n, KTRACE_CTX_PARAM) {
  KTRACE_B("load one");
  float v = i < n ? x[i] : 0.0f;
  KTRACE_E("load one");
  return v;
}

template <int BLOCK>
__device__ void block_sum(const float* x, float* out, int n, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  using Reduce = cub::BlockReduce<float, BLOCK>;
  __shared__ typename Reduce::TempStorage tmp;
  float v = load_one(x, blockIdx.x * BLOCK + threadIdx.x, n, KTRACE_CTX);
  KTRACE_B("reduce");
  float s = Reduce(tmp).Sum(v);
  KTRACE_E("reduce");
  if (threadIdx.x == 0) atomicAdd(out, s);
}

// One extern "C" kernel per instantiation: its name is what the host loads
// (a template's own symbol is C++-mangled).
extern "C" __global__ void block_sum_256(const float* x, float* out, int n, ktrace_arg trace) {
  block_sum<256>(x, out, n, trace);
}
extern "C" __global__ void block_sum_512(const float* x, float* out, int n, ktrace_arg trace) {
  block_sum<512>(x, out, n, trace);
}
