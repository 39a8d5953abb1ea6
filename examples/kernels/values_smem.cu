// examples/kernels/values.cu with the shared-memory recorder.
#define KTRACE_RECORDER KTRACE_RECORDER_SMEM
#include "values.cu"
