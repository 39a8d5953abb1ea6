// examples/kernels/values.cu with the ring recorder.
#define KTRACE_RECORDER KTRACE_RECORDER_RING
#include "values.cu"
