// The bf16 GEMM of examples/kernels/gemm.cu with its producer warpgroup at
// 40 registers and its consumers at 232 (gemm.cu: 24 and 240), for
// `gemm --bench`: what the 24-register producer costs or saves untraced.
#define GEMM_PRODUCER_REGS 40
#define GEMM_CONSUMER_REGS 232
#include "gemm.cu"
