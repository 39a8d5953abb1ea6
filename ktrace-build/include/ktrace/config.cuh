// ktrace device header, part of ktrace.cuh (include that, not this): the
// recorder a kernel picks (KTRACE_RECORDER) and the settings of each, with
// their checks, the static shared memory the recorder takes
// (KTRACE_SMEM_BYTES) and KTRACE_ASSERT_SMEM_FITS. Read by the traced and
// the untraced build alike.
#ifndef KTRACE_CONFIG_CUH
#define KTRACE_CONFIG_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/config.cuh"
#endif

// Which recorder writes the events (each one's Context: ktrace/store.cuh,
// ring.cuh, smem.cuh, newest.cuh):
//   KTRACE_RECORDER_STORE (0, the default): each event is one 8-byte
//     streaming store to global memory, made by every lane that reaches the
//     marker (the same bytes to the same address: one memory transaction).
//     No shared memory. Markers may be reached by the whole warp or by lane
//     0 alone.
//   KTRACE_RECORDER_RING (1): each lane holds one event of the current
//     group of 32 in registers; every 32 events the whole warp writes the
//     group with one coalesced 256-byte store. Markers must be reached by
//     the whole warp.
//   KTRACE_RECORDER_SMEM (2, sm_90 and later): each event is one 8-byte
//     store into a per-warp staging area in shared memory; every 16 entries
//     one lane hands the filled half of the area to the copy engine
//     (cp.async.bulk, 128 bytes to the global ring) while the warp fills
//     the other half. Takes KTRACE_SMEM_BYTES of static shared memory per
//     block, and fewer registers than the store recorder: for code with a
//     small register budget (a producer warp after setmaxnreg). On the H200
//     it measured dearer per event than the store recorder
//     (docs/performance.md). Markers may be reached by the whole warp or by
//     lane 0 alone.
//   KTRACE_RECORDER_NEWEST (3): each warp keeps its newest
//     KTRACE_NEWEST_ENTRIES events (64 unless defined) in a ring in shared
//     memory and writes them to the global buffer at the flush, as
//     Proton's instrumentation does: no global memory traffic and no check
//     of any kind while recording, and older events are overwritten. An
//     event is the skip branch, the clock read, the tag, the ring address,
//     one 8-byte shared store and the pointer increment. Records no time
//     anchors. Takes KTRACE_SMEM_BYTES of static shared memory per block.
//     Markers may be reached by the whole warp or by lane 0 alone. With
//     KTRACE_NEWEST_BRANCH 0 an event has no skip branch (5 instructions,
//     the cheapest ktrace has), and a warp that records nothing runs it
//     with its store switched off (see KTRACE_NEWEST_BRANCH).
// All four write the same buffer layout (ktrace_layout.h). A kernel picks
// one by defining KTRACE_RECORDER before including ktrace.cuh, e.g.
//   #define KTRACE_RECORDER KTRACE_RECORDER_SMEM
#define KTRACE_RECORDER_STORE 0
#define KTRACE_RECORDER_RING 1
#define KTRACE_RECORDER_SMEM 2
#define KTRACE_RECORDER_NEWEST 3
#ifndef KTRACE_RECORDER
#define KTRACE_RECORDER KTRACE_RECORDER_STORE
#endif
#if KTRACE_RECORDER != KTRACE_RECORDER_STORE && KTRACE_RECORDER != KTRACE_RECORDER_RING && \
    KTRACE_RECORDER != KTRACE_RECORDER_SMEM && KTRACE_RECORDER != KTRACE_RECORDER_NEWEST
#error "ktrace: KTRACE_RECORDER must be KTRACE_RECORDER_STORE, _RING, _SMEM or _NEWEST"
#endif
#if KTRACE_ON && KTRACE_RECORDER == KTRACE_RECORDER_SMEM && defined(__CUDA_ARCH__) && \
    __CUDA_ARCH__ < 900
#error "ktrace: KTRACE_RECORDER_SMEM needs sm_90 or later (cp.async.bulk); use KTRACE_RECORDER_STORE"
#endif

#ifndef KTRACE_SMEM_WARPS
// Warps per block the shared-memory recorders (KTRACE_RECORDER_SMEM and
// KTRACE_RECORDER_NEWEST) reserve an area for.
// 32 covers every block; a kernel whose blocks have fewer warps may define
// it lower to take less shared memory (a traced warp whose index is not
// below it stops the kernel with a trap).
#define KTRACE_SMEM_WARPS 32
#endif
#if KTRACE_SMEM_WARPS < 1 || KTRACE_SMEM_WARPS > 32
#error "ktrace: KTRACE_SMEM_WARPS must be 1 to 32"
#endif
// Entries in each half of a warp's staging area, and the bytes a warp's
// area takes: two halves of 16 entries and 16 bytes of state (where the
// warp's events go in the global buffer).
#define KTRACE_STAGE_HALF 16
#define KTRACE_SMEM_WARP_BYTES (2 * KTRACE_STAGE_HALF * 8 + 16)
// Static shared memory a block of the traced build takes for recording with
// KTRACE_RECORDER_SMEM: 272 bytes per warp, rounded up to a multiple of
// 1,024 (KTRACE_SMEM_BYTES below; 0 for the untraced build and the other
// recorders).
#ifndef KTRACE_NEWEST_ENTRIES
// Events each warp keeps with KTRACE_RECORDER_NEWEST: a power of two from
// 32 to 128 (64: 512 bytes of shared memory per warp). A ring's address must
// be a multiple of its size, and a block's shared memory starts at a
// multiple of 1,024 bytes (on sm_90 at 0x400 past the CTA's window), so a
// ring may take at most 1,024 bytes.
#define KTRACE_NEWEST_ENTRIES 64
#endif
#ifndef KTRACE_NEWEST_PIN
// 1: KTRACE_RECORDER_NEWEST keeps an event's entry and its address in
// registers of their own until the next event (3 more registers across the
// kernel), so that the user's code after an event never waits for the
// shared store to have read them. 0 (the default): temporaries. On the
// H200 microbenchmark both cost the same with the build of 2026-12-01; with
// layout version 4 the pinned build is 0.5-1.1 ns an event faster at one
// block per SM, but 1.6 points dearer on a third-party SGEMM and no
// better on a third-party Hopper GEMM (docs/lab/performance-notes.md).
#define KTRACE_NEWEST_PIN 0
#endif
#ifndef KTRACE_NEWEST_BRANCH
// 1 (the default): each event of KTRACE_RECORDER_NEWEST branches over
// itself in a warp that records nothing (tracing off at run time, or the
// warp or its block not sampled): one instruction per marker there. 0: no
// branch; an event is the clock read, the tag, the entry's address, its
// increment and one shared store predicated on "lane 0 of a traced warp",
// which ptxas may schedule among the user's instructions. A warp that
// records nothing then runs the same instructions with its store off:
// tracing off costs what tracing costs. Markers must then be reached by
// lane 0 (the whole warp, or lane 0 alone).
#define KTRACE_NEWEST_BRANCH 1
#endif
#if KTRACE_NEWEST_BRANCH != 0 && KTRACE_NEWEST_BRANCH != 1
#error "ktrace: KTRACE_NEWEST_BRANCH must be 0 or 1"
#endif
#ifndef KTRACE_STORE_BRANCH
// 1 (the default): each stamped event of KTRACE_RECORDER_STORE branches
// over itself in a warp that records nothing (ptxas may if-convert the
// branch). 0: no branch; every warp runs the event's instructions and a
// warp that records nothing has its store predicated off, so that ptxas
// may schedule the event among the user's instructions. Stamped events
// only (KTRACE_ANCHORS_STAMP, the store recorder's default).
#define KTRACE_STORE_BRANCH 1
#endif
#if KTRACE_STORE_BRANCH != 0 && KTRACE_STORE_BRANCH != 1
#error "ktrace: KTRACE_STORE_BRANCH must be 0 or 1"
#endif
#ifndef KTRACE_NULL_EARLY_OUT
// 1: every warp of a launch with the null argument (tracing off at run
// time) tests the argument once at KTRACE_OPEN and skips the rest of the
// open: the block-sampling arithmetic (a division by a block stride above 1), a
// vote, a shuffle and two timer reads; and with the global-memory
// recorders a warp that records nothing reads no timer at its open. For
// kernels of many short-lived warps (elementwise, a block or a warp per
// row): on three llm.c kernels replayed as a CUDA graph (an H100) the
// traced build with tracing off cost 1.3-1.5% instead of 4.3-4.5%, and
// tracing cost the same. 0 (the default): the open is one stretch of code
// without that branch, which long kernels' schedules keep better: on
// siboehm's SGEMM the early out cost 2.7 points traced and 3.6 off (the
// kernel took 3 more registers), and 0.2-0.4 us a step off on the serving
// example (docs/lab/performance-notes.md). Measure your kernel both ways.
#define KTRACE_NULL_EARLY_OUT 0
#endif
#if KTRACE_NULL_EARLY_OUT != 0 && KTRACE_NULL_EARLY_OUT != 1
#error "ktrace: KTRACE_NULL_EARLY_OUT must be 0 or 1"
#endif
#if KTRACE_NEWEST_PIN && !KTRACE_NEWEST_BRANCH
#error "ktrace: KTRACE_NEWEST_PIN needs KTRACE_NEWEST_BRANCH 1"
#endif
#if KTRACE_NEWEST_ENTRIES < 32 || KTRACE_NEWEST_ENTRIES > 128 || \
    (KTRACE_NEWEST_ENTRIES & (KTRACE_NEWEST_ENTRIES - 1)) != 0
#error "ktrace: KTRACE_NEWEST_ENTRIES must be 32, 64 or 128"
#endif
// Shared memory per warp of KTRACE_RECORDER_NEWEST: the ring and 16 bytes
// of state (where the warp's events go in the global buffer).
#define KTRACE_NEWEST_WARP_BYTES (KTRACE_NEWEST_ENTRIES * 8 + 16)
// The shared-memory recorders' static shared memory is one block aligned
// to 1,024 bytes and rounded up to a multiple of them, so that the
// kernel's dynamic shared memory, which follows it, keeps the 1,024-byte
// alignment it has without the recorder.
#define KTRACE_SMEM_ROUND_(bytes) (((bytes) + 1023u) / 1024u * 1024u)
#if KTRACE_ON && KTRACE_RECORDER == KTRACE_RECORDER_SMEM
// 272 bytes per warp, rounded up: 9,216 bytes for 32 warps.
#define KTRACE_SMEM_BYTES KTRACE_SMEM_ROUND_(KTRACE_SMEM_WARPS * KTRACE_SMEM_WARP_BYTES)
#elif KTRACE_ON && KTRACE_RECORDER == KTRACE_RECORDER_NEWEST
// 528 bytes per warp with the default 64 entries, rounded up: 17,408 bytes
// for 32 warps, 7,168 for 12.
#define KTRACE_SMEM_BYTES KTRACE_SMEM_ROUND_(KTRACE_SMEM_WARPS * KTRACE_NEWEST_WARP_BYTES)
#else
#define KTRACE_SMEM_BYTES 0
#endif
// The most shared memory (static and dynamic) one block may have on the
// architecture being compiled for, opted in: KTRACE_ASSERT_SMEM_FITS
// checks a kernel's own bytes against it at compile time.
// (The host pass, which compiles no device code, gets the largest.)
#if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1200)
#define KTRACE_SMEM_BLOCK_LIMIT (227 * 1024)
#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
#define KTRACE_SMEM_BLOCK_LIMIT (163 * 1024)
#elif __CUDA_ARCH__ == 700 || __CUDA_ARCH__ == 720
#define KTRACE_SMEM_BLOCK_LIMIT (96 * 1024)
#elif __CUDA_ARCH__ == 750
#define KTRACE_SMEM_BLOCK_LIMIT (64 * 1024)
#else
#define KTRACE_SMEM_BLOCK_LIMIT (99 * 1024)
#endif
/// Fails the build, with a message naming the way out, when `bytes` of the
/// kernel's own shared memory (its dynamic shared memory, say) and the
/// recorder's KTRACE_SMEM_BYTES exceed what one block may have. Use it in
/// kernels that size their shared memory with a compile-time constant.
#define KTRACE_ASSERT_SMEM_FITS(bytes)                                                   \
  static_assert((bytes) + KTRACE_SMEM_BYTES <= KTRACE_SMEM_BLOCK_LIMIT,                  \
                "ktrace: this kernel's shared memory and the KTRACE_SMEM_BYTES the "     \
                "shared-memory recorder adds exceed a block's limit; use the store "     \
                "recorder (the default, no shared memory) or define a lower "            \
                "KTRACE_SMEM_WARPS (or KTRACE_NEWEST_ENTRIES) before including "         \
                "ktrace.cuh")

#define KTRACE_CAT_(a, b) a##b
#define KTRACE_CAT(a, b) KTRACE_CAT_(a, b)

#endif  // KTRACE_CONFIG_CUH
