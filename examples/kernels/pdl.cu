// A kernel launched after itself with programmatic dependent launch, for
// the pdl_loop example: each launch lets the next one start as soon as
// every warp of each block has opened its trace context, so consecutive
// launches of the one site run at the same time. Each traced warp records
// `tag` (the launch's number, known to the host) as the value of a mark at
// its start and at its end, so every record says which launch it came
// from.
#include <ktrace.cuh>

// The body after the trigger: two marks with the launch's tag around a
// spin of `spin` iterations.
__device__ __forceinline__ void pdl_body(unsigned tag, int spin, unsigned* sink, KTRACE_CTX_PARAM) {
  KTRACE_M_V("launch_tag", tag);
  unsigned acc = threadIdx.x;
  KTRACE_B("spin");
  for (int i = 0; i < spin; ++i) acc = acc * 1664525u + 1013904223u;
  KTRACE_E("spin");
  KTRACE_M_V("launch_tag", tag);
  if (acc == 0x12345678u) sink[0] = acc;
}

// As it should be: the block's barrier between the opens and the trigger.
// A block lets the next launch start at the first thread that triggers, so
// without it a warp of the next launch could take its ticket before a
// warp of this one that has not opened yet.
extern "C" __global__ void pdl_probe(unsigned tag, int spin, unsigned* __restrict__ sink,
                                     ktrace_arg trace) {
  KTRACE_OPEN(trace);
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  pdl_body(tag, spin, sink, KTRACE_CTX);
}

// The hazard, for the example's --early-trigger: each warp triggers right
// after its own open.
extern "C" __global__ void pdl_probe_early(unsigned tag, int spin, unsigned* __restrict__ sink,
                                           ktrace_arg trace) {
  KTRACE_OPEN(trace);
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  pdl_body(tag, spin, sink, KTRACE_CTX);
}
