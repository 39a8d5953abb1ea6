// The bf16 GEMM of examples/kernels/gemm.cu with the newest-N shared-memory
// recorder without the skip branch (KTRACE_NEWEST_BRANCH 0), for
// `gemm --bench`.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 12
// Its producer keeps 40 registers (gemm.cu: 24): at 24, ptxas spills the
// tile loop's stride (gridDim.x, 8 bytes) in this build.
#define GEMM_PRODUCER_REGS 40
#define GEMM_CONSUMER_REGS 232
#include "gemm.cu"
