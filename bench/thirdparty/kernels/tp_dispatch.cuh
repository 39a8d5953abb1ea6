// tp_bench's own form of the block dispatch, for the designs that compare
// it with ktrace's KTRACE_DISPATCH (ktrace/dispatch.cuh): the block's
// choice made from the argument alone (tp::block_sampled). Not part of the
// kernels as their authors wrote them; included after <ktrace.cuh>.
#pragma once

#if KTRACE_ON
namespace tp {

// Whether the calling thread's block is one the launch samples, from the
// argument alone (block-uniform): a traced launch, a block whose linear
// index the stride keeps and that has a slot, and a warp mask. The
// division by the stride is only made when the stride is not 1. Where
// ktrace's KTRACE_DISPATCH opens every block's context and chooses with a
// block barrier, these designs choose before any open, without one.
__device__ __forceinline__ bool block_sampled(const ktrace_arg& arg) {
  const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (arg.buffer == 0 || arg.warp_mask == 0) return false;
  const uint32_t stride = arg.block_stride;
  if (stride <= 1u) return block < arg.blocks_traced;
  return block % stride == 0u && block / stride < arg.blocks_traced;
}

// Both bodies inline, the block's choice from the argument alone, the body
// that records nothing first (the `sampled` design). A block of a launch
// that a continuous session's site does not keep runs the recording body,
// whose events it branches over.
template <class Body>
__device__ __forceinline__ void dispatch_sampled(const ktrace_arg& arg, Body&& body) {
  if (!block_sampled(arg)) {
    ktrace::Idle idle;
    body(idle);
    return;
  }
  ktrace::Context ctx(arg);
  body(ctx);
}

}  // namespace tp
#define TP_DISPATCH_BENCH(arg, ...) \
  ::tp::dispatch_sampled((arg), [&](auto& ktrace_ctx) { __VA_ARGS__; })
#else
#define TP_DISPATCH_BENCH(arg, ...) KTRACE_DISPATCH(arg, __VA_ARGS__)
#endif
