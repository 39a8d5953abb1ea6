// Recorder microbenchmark, per-event store recorder (the default).
#define KTRACE_RECORDER 0
#include "../bench/recorder_bench.cuh"
