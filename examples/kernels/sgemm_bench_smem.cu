// fp32 SGEMM of examples/kernels/sgemm_bench.cu with the shared-memory
// recorder, beside the default (store recorder) build, for recorder_bench.
#define KTRACE_RECORDER KTRACE_RECORDER_SMEM
#include "sgemm_bench.cu"
