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

/// Runs `body(ctx)` once in every thread of the block: with the block's
/// recorder Context when any warp of the block records, else with an Idle
/// context. Every thread of the block calls it, at the same point, before
/// any thread leaves the kernel (it holds a barrier: __syncthreads_or),
/// which the kernel's top level is. With the null argument (tracing off at
/// run time) the choice is one test of the parameter and no barrier.
///
/// With a traced launch every warp opens its Context (the slot
/// arithmetic, a vote, a shuffle) and the block meets at the barrier
/// before choosing, so a block that sampling leaves out still pays its
/// open and the barrier once, then runs no marker code. Inside a recording
/// block, a warp that is not sampled runs the body with its Context,
/// whose events it branches over (or issues predicated off, where ptxas
/// if-converted them).
template <class Body>
__device__ __forceinline__ void dispatch(const ktrace_arg& arg, Body&& body) {
  if (arg.buffer != 0) {
    Context ctx(arg);
    if (__syncthreads_or(ctx.records() ? 1 : 0)) {
      body(ctx);
      return;  // ctx's destructor flushes it
    }
  }
  Idle idle;
  body(idle);
}

}  // namespace ktrace

#endif  // KTRACE_DISPATCH_CUH
