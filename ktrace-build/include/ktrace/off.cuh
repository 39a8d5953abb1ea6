// ktrace device header, part of ktrace.cuh (include that, not this): the
// context of the untraced build, an empty object (every marker then
// expands to nothing, see markers.cuh).
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
};

}  // namespace ktrace

#endif  // KTRACE_OFF_CUH
