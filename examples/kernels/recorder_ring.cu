// Recorder microbenchmark, register-ring recorder.
#define KTRACE_RECORDER 1
#include "../bench/recorder_bench.cuh"
