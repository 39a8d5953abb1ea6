// Every marker form in one kernel, for the zero-cost check: compiled
// untraced, it must give the same SASS as with the markers deleted.
#include <ktrace.cuh>

extern "C" __global__ void all_markers(const float* __restrict__ x, float* __restrict__ y, int n,
                                       int iters, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("all");
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = i < n ? x[i] : 0.f;
  for (int k = 0; k < iters; ++k) {
    KTRACE_B_IF(k % 16 == 0, "sampled");
    acc = fmaf(acc, 1.0001f, 0.5f);
    KTRACE_E_IF(k % 16 == 0, "sampled");
    KTRACE_M_IF(k == iters / 2, "halfway");
  }
  {
    KTRACE_SCOPE("store");
    if (i < n) y[i] = acc;
  }
  KTRACE_M("done");
  KTRACE_E("all");
  KTRACE_FLUSH();
}
