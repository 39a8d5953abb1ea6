// fp32 SGEMM of examples/kernels/sgemm_bench.cu with the newest-N
// shared-memory recorder without the skip branch (KTRACE_NEWEST_BRANCH 0),
// for recorder_bench.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 8
#include "sgemm_bench.cu"
