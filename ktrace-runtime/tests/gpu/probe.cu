// Kernel for tests/gpu.rs: every warp runs `iters` iterations of an "outer"
// region holding a "spin" region that busy-waits `spin_cycles` SM cycles,
// and a "tick" mark.
//
//   nvcc -cubin -arch=sm_90 -DKTRACE_ENABLED=1 \
//        -I ../../../ktrace-build/include -I . probe.cu -o probe.cubin
#include <ktrace.cuh>

extern "C" __global__ void probe(unsigned spin_cycles, unsigned iters,
                                 unsigned long long* sink, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  unsigned long long acc = 0;
  for (unsigned i = 0; i < iters; ++i) {
    KTRACE_B("outer");
    KTRACE_B("spin");
    const long long t0 = clock64();
    while (clock64() - t0 < (long long)spin_cycles) acc += 1;
    KTRACE_E("spin");
    KTRACE_M("tick");
    KTRACE_E("outer");
  }
  if (acc == 42) sink[0] = acc;
}
