// tp_bench's own forms of the block dispatch, for the designs that compare
// them with ktrace's KTRACE_DISPATCH (ktrace/dispatch.cuh): the same
// choice (ktrace::block_sampled), the bodies arranged otherwise. Not part
// of the kernels as their authors wrote them; included after <ktrace.cuh>.
#pragma once

#if KTRACE_ON
namespace tp {

// The recording body out of line, in a call of its own, so that ptxas
// compiles the kernel around the idle body alone (the `outline` design).
// Returns whether it ran the body: through a continuous session's site a
// launch that is not kept runs the kernel's idle body instead.
template <class Body>
__device__ __noinline__ bool record_outlined(const ktrace_arg& arg, Body body) {
  ktrace::Context ctx(arg);
  if ((arg.launch & KTRACE_ARG_SITE) == 0u || __syncthreads_or(ctx.records() ? 1 : 0)) {
    body(ctx);
    return true;
  }
  return false;
}

template <class Body>
__device__ __forceinline__ void dispatch_outlined(const ktrace_arg& arg, Body&& body) {
  if (ktrace::block_sampled(arg) && record_outlined(arg, body)) return;
  ktrace::Idle idle;
  body(idle);
}

}  // namespace tp
#define TP_DISPATCH_OUTLINED(arg, ...) \
  ::tp::dispatch_outlined((arg), [&](auto& ktrace_ctx) { __VA_ARGS__; })
#else
#define TP_DISPATCH_OUTLINED(arg, ...) KTRACE_DISPATCH(arg, __VA_ARGS__)
#endif
