// ktrace device header, part of ktrace.cuh (include that, not this): the
// block dispatch of the traced build (KTRACE_DISPATCH). A kernel whose body
// takes its context as a parameter is compiled twice in one kernel: once
// with the recorder's Context, once with Idle, whose markers are empty.
// Each block chooses one at its start, so a block that records nothing
// (tracing off at run time, the block not sampled, a launch a continuous
// session does not keep) runs the body without a single marker instruction
// in its loops: no skip branch, no predicated event.
#ifndef KTRACE_DISPATCH_CUH
#define KTRACE_DISPATCH_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/dispatch.cuh"
#endif

namespace ktrace {

/// The context of a body run by a block that records nothing: every
/// marker on it is empty, and so is its flush.
class Idle {
 public:
  __device__ __forceinline__ void record(uint32_t) {}
  __device__ __forceinline__ void record_value(uint32_t, uint32_t, uint32_t) {}
  __device__ __forceinline__ void flush() {}
  __device__ __forceinline__ bool records() const { return false; }
};

/// Whether the calling thread's block is one the launch samples, from
/// the argument alone (block-uniform): a traced launch, a block whose
/// linear index the stride keeps and that has a slot, and a warp mask.
/// The division by the stride is only made when the stride is not 1.
__device__ __forceinline__ bool block_sampled(const ktrace_arg& arg) {
  const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (arg.buffer == 0 || arg.warp_mask == 0) return false;
  const uint32_t stride = arg.block_stride;
  if (stride <= 1u) return block < arg.blocks_traced;
  return block % stride == 0u && block / stride < arg.blocks_traced;
}

/// Runs `body(ctx)` once in every thread of the block: with the block's
/// recorder Context when any warp of the block records, else with an Idle
/// context. Every thread of the block calls it, at the same point, before
/// any thread leaves the kernel, which the kernel's top level is.
///
/// The choice is the argument's (block_sampled): no barrier, and with the
/// null argument (tracing off at run time) one test of the parameter.
/// Through a continuous session's site, whether the launch is kept is
/// known only once the sampled warps have taken their tickets: a sampled
/// block then opens its Context and chooses with one block barrier
/// (__syncthreads_or).
///
/// Inside a recording block, a warp that is not sampled runs the body with
/// its Context, whose events it branches over (or issues predicated off,
/// where ptxas if-converted them): sampling whole blocks is free, sampling
/// warps within a block is not.
template <class Body>
__device__ __forceinline__ void dispatch(const ktrace_arg& arg, Body&& body) {
  if (block_sampled(arg)) {
    Context ctx(arg);
    if ((arg.launch & KTRACE_ARG_SITE) == 0u || __syncthreads_or(ctx.records() ? 1 : 0)) {
      body(ctx);
      return;  // ctx's destructor flushes it
    }
  }
  Idle idle;
  body(idle);
}

}  // namespace ktrace

#endif  // KTRACE_DISPATCH_CUH
