// examples/kernels/values.cu with the newest-N shared-memory recorder
// without the skip branch (KTRACE_NEWEST_BRANCH 0), 128 entries per warp.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 4
#define KTRACE_NEWEST_ENTRIES 128
#include "values.cu"
