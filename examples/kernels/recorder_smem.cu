// Recorder microbenchmark, shared-memory staging recorder
// (KTRACE_RECORDER_SMEM, sm_90 and later).
#define KTRACE_RECORDER 2
#include "../bench/recorder_bench.cuh"
