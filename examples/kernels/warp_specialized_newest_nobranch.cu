// examples/kernels/warp_specialized.cu with the newest-N shared-memory
// recorder without the skip branch (KTRACE_NEWEST_BRANCH 0), for
// `warp_specialized --bench`; its producer too runs in 24 registers.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 8
#include "warp_specialized.cu"
