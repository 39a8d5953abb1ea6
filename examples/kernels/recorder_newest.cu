// Recorder microbenchmark, newest-N shared-memory recorder
// (KTRACE_RECORDER_NEWEST: each warp keeps its newest 64 events in shared
// memory, like Proton's instrumentation). 4 warps per block.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 4
#include "../bench/recorder_bench.cuh"
