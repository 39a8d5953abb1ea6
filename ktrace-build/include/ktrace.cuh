// ktrace device header: per-warp intra-kernel tracing.
//
// Compiled with -DKTRACE_ENABLED=1 (ktrace-build's traced variant), the
// markers below record events into the buffer that the host's TraceSession
// passes as a `ktrace_arg` kernel parameter. Compiled any other way, every
// macro expands to nothing and the context is an empty object: the kernel
// that runs is the kernel without markers.
//
//   #include <ktrace.cuh>
//   __global__ void k(float* x, ktrace_arg trace) {
//     KTRACE_OPEN(trace);                // per-warp context `ktrace_ctx`
//     KTRACE_B("load"); ... KTRACE_E("load");
//     { KTRACE_SCOPE("math"); ... }      // ends when the scope closes
//     KTRACE_M_IF(i % 64 == 0, "tick");  // only when the warp-uniform
//                                        // condition holds
//     KTRACE_B_V("tile", t); ...         // with a 32-bit value
//   }                                    // flushed when ktrace_ctx dies
//
// Or, so that a block that records nothing runs no marker code at all, a
// body that takes the context, dispatched once per block:
//
//   template <class Trace>
//   __device__ __forceinline__ void body(float* x, Trace& ktrace_ctx) {
//     for (...) { KTRACE_B("load"); ... KTRACE_E("load"); }
//   }
//   __global__ void k(float* x, ktrace_arg trace) {
//     KTRACE_DISPATCH(trace, body(x, ktrace_ctx));
//   }
//
// Region names are string literals; ktrace-build scans the sources and
// generates `ktrace_regions.h`, which maps every name to its id at compile
// time. A name missing from that table fails to compile, naming the name.
//
// Rules: markers are executed warp-uniformly (by the whole warp, or at least
// by lane 0 of it, as in `if (lane == 0) { ... }` producer code); the
// conditions of the *_IF forms must be warp-uniform and free of side effects.
#ifndef KTRACE_CUH
#define KTRACE_CUH

#include <cstddef>

#include "ktrace_layout.h"

#if defined(KTRACE_ENABLED) && KTRACE_ENABLED
#define KTRACE_ON 1
#include "ktrace_regions.h"
#else
#define KTRACE_ON 0
#endif

// The header's parts, in ktrace/: the recorder a kernel picks and its
// settings (config.cuh); in the traced build, what every recorder uses
// (common.cuh) and the chosen recorder's per-warp Context, one file each
// (store.cuh and ring.cuh share global.cuh); in the untraced build an empty
// Context (off.cuh); the block dispatch between a recording and an idle
// body (dispatch.cuh, or off.cuh untraced); then the markers (markers.cuh).
#include "ktrace/config.cuh"

#if KTRACE_ON
#include "ktrace/common.cuh"
#if KTRACE_RECORDER == KTRACE_RECORDER_NEWEST
#include "ktrace/newest.cuh"
#elif KTRACE_RECORDER == KTRACE_RECORDER_SMEM
#include "ktrace/smem.cuh"
#elif KTRACE_RECORDER == KTRACE_RECORDER_RING
#include "ktrace/ring.cuh"
#else
#include "ktrace/store.cuh"
#endif
#include "ktrace/dispatch.cuh"
#else
#include "ktrace/off.cuh"
#endif

#include "ktrace/markers.cuh"

#endif  // KTRACE_CUH
