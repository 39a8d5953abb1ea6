// Recorder microbenchmark, newest-N shared-memory recorder without the skip
// branch (KTRACE_NEWEST_BRANCH 0: every warp records, an event is 5
// instructions). 4 warps per block.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_NEWEST_BRANCH 0
#define KTRACE_SMEM_WARPS 4
#include "../bench/recorder_bench.cuh"
