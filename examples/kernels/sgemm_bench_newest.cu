// fp32 SGEMM of examples/kernels/sgemm_bench.cu with the newest-N
// shared-memory recorder (8 warps per block), beside the default build,
// for recorder_bench.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 8
#include "sgemm_bench.cu"
