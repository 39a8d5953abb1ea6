// The bf16 GEMM of examples/kernels/gemm.cu with the newest-N shared-memory
// recorder (12 warps per block: 6,336 bytes of static shared memory beside
// the kernel's 197,760 dynamic ones), for `gemm --bench`.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 12
#include "gemm.cu"
