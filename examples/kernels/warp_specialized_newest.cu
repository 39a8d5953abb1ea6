// examples/kernels/warp_specialized.cu with the newest-N shared-memory
// recorder (64 events kept per warp, 8 warps: 4,224 bytes), for
// `warp_specialized --newest` and `--bench`; its producer too runs in 24
// registers (tests/registers.rs checks).
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 8
#include "warp_specialized.cu"
