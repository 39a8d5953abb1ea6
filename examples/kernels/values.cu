// Values recorded with events, for the `values` example: every warp runs
// `iters` steps; step i records KTRACE_B_V("step", i), a short busy wait,
// and KTRACE_E_V("step", 2i + 1), and every fourth step a mark with i / 4.
// Lane 0 alone records "lane0 step" around the same wait, with the warp's
// linear index as the value (not with the ring recorder, whose markers the
// whole warp must reach). Built with the store recorder (the default); its
// values_ring and values_smem variants (variants.rs) build it with the
// other two.
#include <ktrace.cuh>

extern "C" __global__ void values_probe(int iters, unsigned* __restrict__ sink, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  unsigned acc = threadIdx.x;
  for (int i = 0; i < iters; ++i) {
    KTRACE_B_V("step", i);
    for (int k = 0; k < 32; ++k) acc = acc * 1664525u + 1013904223u;
    KTRACE_E_V("step", 2 * i + 1);
    if (i % 4 == 0) KTRACE_M_V("quarter", i / 4);
  }
#if KTRACE_RECORDER != KTRACE_RECORDER_RING  // the ring needs the whole warp
  if (threadIdx.x % 32 == 0) {
    KTRACE_B_V("lane0 step", warp);
    for (int k = 0; k < 32; ++k) acc = acc * 1664525u + 1013904223u;
    KTRACE_E("lane0 step");
  }
#endif
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
