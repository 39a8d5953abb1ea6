// ktrace device header, part of ktrace.cuh (include that, not this): the
// context of the untraced build, an empty object (every marker then
// expands to nothing, see markers.cuh), and its KTRACE_DISPATCH, which runs
// the body once with it.
#ifndef KTRACE_OFF_CUH
#define KTRACE_OFF_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/off.cuh"
#endif

namespace ktrace {

class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg&) {}
  __device__ __forceinline__ void flush() {}
  __device__ __forceinline__ bool records() const { return false; }
};

/// Runs `body(ctx)` with the empty context: the kernel is its body.
template <class Body>
__device__ __forceinline__ void dispatch(const ktrace_arg& arg, Body&& body) {
  Context ctx(arg);
  body(ctx);
}

}  // namespace ktrace

#endif  // KTRACE_OFF_CUH
