// Recorder microbenchmark, newest-N shared-memory recorder built with
// KTRACE_NEWEST_PIN 1: an event's entry and address in registers of their
// own until the next event.
#define KTRACE_RECORDER KTRACE_RECORDER_NEWEST
#define KTRACE_SMEM_WARPS 4
#define KTRACE_NEWEST_PIN 1
#include "../bench/recorder_bench.cuh"
