// Kernels that go wrong on purpose, for the `faults` example: a trap
// part-way through a traced kernel, and warps that exit without flushing.
#include <ktrace.cuh>

// Every warp records "before"; block `bad_block` then writes through a bad
// pointer (an illegal address), the others record "after".
extern "C" __global__ void fault_illegal_address(int* bad, int bad_block, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_M("before");
  if ((int)blockIdx.x == bad_block && threadIdx.x == 0) *(volatile int*)bad = 1;
  __syncthreads();
  KTRACE_M("after");
}

// Warp 1 of each block leaves with `exit` after its first event, so its
// context is never flushed; the others finish normally.
extern "C" __global__ void fault_no_flush(float* out, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("work");
  const unsigned warp = threadIdx.x / 32;
  if (warp == 1) asm volatile("exit;");
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
  KTRACE_E("work");
}

// Busy-waits `ns` nanoseconds on %globaltimer.
__device__ __forceinline__ void fault_spin(unsigned long long ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < ns);
}

// Two small kernels for two sessions on two streams at once: each warp
// spins `ns` nanoseconds inside a region named after its stream.
extern "C" __global__ void fault_stream_a(unsigned long long ns, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("stream a");
  fault_spin(ns);
  KTRACE_E("stream a");
}
extern "C" __global__ void fault_stream_b(unsigned long long ns, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("stream b");
  fault_spin(ns);
  KTRACE_E("stream b");
}
