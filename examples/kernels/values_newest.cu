// examples/kernels/values.cu with the newest-N shared-memory recorder,
// keeping 128 entries per warp (every entry of a 20-step probe).
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 4
#define KTRACE_NEWEST_ENTRIES 128
#include "values.cu"
