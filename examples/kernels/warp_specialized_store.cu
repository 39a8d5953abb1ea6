// examples/kernels/warp_specialized.cu with the default store recorder
// (no shared memory), for `warp_specialized --bench`; its producer too
// runs in 24 registers without spilling (tests/registers.rs checks).
#define KTRACE_RECORDER KTRACE_RECORDER_STORE
#include "warp_specialized.cu"
