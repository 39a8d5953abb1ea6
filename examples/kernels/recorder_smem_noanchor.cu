// Recorder microbenchmark, shared-memory staging recorder without time
// anchors: what the recorder costs without the per-event anchor test (like
// Proton, which records none).
#define KTRACE_RECORDER 2
#define KTRACE_ANCHOR_CYCLES 0
#include "../bench/recorder_bench.cuh"
