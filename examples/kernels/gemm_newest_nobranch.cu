// The bf16 GEMM of examples/kernels/gemm.cu with the newest-N shared-memory
// recorder without the skip branch (KTRACE_NEWEST_BRANCH 0), for
// `gemm --bench`.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 12
#include "gemm.cu"
