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

// Which recorder writes the events (see Context below):
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
// one by defining KTRACE_RECORDER before including this header, e.g.
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
// KTRACE_RECORDER_SMEM: 272 bytes per warp, 8,704 bytes with the default
// KTRACE_SMEM_WARPS (0 for the untraced build and the other recorders).
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
// shared store to have read them. 0 (the default): temporaries; on the
// H200 microbenchmark both cost the same (docs/performance.md).
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
#if KTRACE_ON && KTRACE_RECORDER == KTRACE_RECORDER_SMEM
#define KTRACE_SMEM_BYTES (KTRACE_SMEM_WARPS * KTRACE_SMEM_WARP_BYTES)
#elif KTRACE_ON && KTRACE_RECORDER == KTRACE_RECORDER_NEWEST
// 528 bytes per warp with the default 64 entries: 16,896 bytes for 32 warps.
#define KTRACE_SMEM_BYTES (KTRACE_SMEM_WARPS * KTRACE_NEWEST_WARP_BYTES)
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

namespace ktrace {

#if KTRACE_ON

/// Raw 32-bit SM cycle counter. `volatile` so reads are never merged or moved.
__device__ __forceinline__ uint32_t clock32() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(r)::"memory");
  return r;
}
__device__ __forceinline__ uint64_t clock64() {
  uint64_t r;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(r)::"memory");
  return r;
}
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t r;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)::"memory");
  return r;
}
__device__ __forceinline__ uint32_t smid() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

/// True in exactly one lane of the calling lanes: `elect.sync` on sm_90+,
/// the lowest active lane before.
__device__ __forceinline__ bool elect_leader() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t is_leader;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "elect.sync _|p, %1;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(is_leader)
      : "r"(__activemask()));
  return is_leader != 0;
#else
  uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane == static_cast<uint32_t>(__ffs(__activemask()) - 1);
#endif
}

/// The calling thread's lane in its warp.
__device__ __forceinline__ uint32_t lane_id() {
  uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// 16-byte streaming store, predicated on `p`.
__device__ __forceinline__ void store_v4_cs(uint64_t addr, uint32_t a, uint32_t b, uint32_t c,
                                            uint32_t d, bool p) {
  asm volatile(
      "{\n\t.reg .pred q;\n\t"
      "setp.ne.b32 q, %5, 0;\n\t"
      "@q st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n\t}" ::"l"(addr),
      "r"(a), "r"(b), "r"(c), "r"(d), "r"((uint32_t)p)
      : "memory");
}

/// 8-byte streaming store of one event, predicated on `p`.
__device__ __forceinline__ void store_event(uint64_t addr, uint32_t clk, uint32_t tag, bool p) {
  asm volatile(
      "{\n\t.reg .pred q;\n\t"
      "setp.ne.b32 q, %3, 0;\n\t"
      "@q st.global.cs.v2.u32 [%0], {%1, %2};\n\t}" ::"l"(addr),
      "r"(clk), "r"(tag), "r"((uint32_t)p));
}

#ifndef KTRACE_ANCHOR_CYCLES
/// SM cycles between time anchors (see ktrace_layout.h), a power of two.
/// After its first event, and after every event whose clock is in another
/// period of this many cycles than its last anchor's, a warp reads
/// %globaltimer and records it as an anchor entry right after the event.
/// 0 records no anchors: each event then costs two instructions less, and
/// the decoder falls back to the open and flush timer pairs.
#define KTRACE_ANCHOR_CYCLES KTRACE_ANCHOR_CYCLES_DEFAULT
#endif
static_assert(KTRACE_ANCHOR_CYCLES == 0 ||
                  (KTRACE_ANCHOR_CYCLES >= 256u && KTRACE_ANCHOR_CYCLES <= (1u << 30) &&
                   (KTRACE_ANCHOR_CYCLES & (KTRACE_ANCHOR_CYCLES - 1u)) == 0),
              "ktrace: KTRACE_ANCHOR_CYCLES must be 0 (no anchors) or a power of two from 256 "
              "to 2^30");

// PTX inside Context::record's asm block: jump to SKIP unless an anchor is
// due, that is unless the clock `clk` is in another period of
// KTRACE_ANCHOR_CYCLES than the last anchor's clock LAST (MASK is
// ~(KTRACE_ANCHOR_CYCLES - 1)). One LOP3 with a predicate output and a
// branch: cheaper per event than a subtraction and a comparison. An event
// that needs no anchor is then less than KTRACE_ANCHOR_CYCLES after the last
// one, and a warp records at most one anchor per period.
#define KTRACE_ANCHOR_DUE_(LAST, MASK, SKIP)       \
  "xor.b32 age, clk, " LAST ";\n\t"               \
  "and.b32 age, age, " MASK ";\n\t"               \
  "setp.eq.u32 fresh, age, 0;\n\t"                \
  "@fresh bra.uni " SKIP ";\n\t"

/// Where the stores below write, derived from ktrace_layout.h and checked
/// against it: each 16-byte metadata store writes four 32-bit words at one
/// of these offsets, and an event is the two words {clock, region | type << 16}.
namespace layout {
constexpr uint32_t kOpenTimers = offsetof(ktrace_slot_meta, init_globaltimer);
constexpr uint32_t kOpenIds = offsetof(ktrace_slot_meta, block_linear);
constexpr uint32_t kFlushTimers = offsetof(ktrace_slot_meta, final_globaltimer);
constexpr uint32_t kFlushCount = offsetof(ktrace_slot_meta, count);
/// `type` sits above `region` in the event's second word.
constexpr uint32_t kTypeShift = 8 * (offsetof(ktrace_event, type) - offsetof(ktrace_event, region));
/// `smid` sits above `warp` in the open store's second word.
constexpr uint32_t kSmidShift = 8 * (offsetof(ktrace_slot_meta, smid) - offsetof(ktrace_slot_meta, warp));
static_assert(sizeof(ktrace_slot_meta) == 64 && kOpenTimers % 16 == 0 && kOpenIds % 16 == 0 &&
                  kFlushTimers % 16 == 0 && kFlushCount % 16 == 0,
              "ktrace: metadata stores are 16-byte aligned");
static_assert(offsetof(ktrace_slot_meta, init_clock64) == kOpenTimers + 8,
              "ktrace: open store writes {globaltimer, clock64}");
static_assert(offsetof(ktrace_slot_meta, warp) == kOpenIds + 4 && kSmidShift == 16 &&
                  offsetof(ktrace_slot_meta, open_magic) == kOpenIds + 8 &&
                  offsetof(ktrace_slot_meta, reserved0) == kOpenIds + 12,
              "ktrace: open store writes {block, warp | smid << 16, magic, 0}");
static_assert(offsetof(ktrace_slot_meta, final_clock64) == kFlushTimers + 8,
              "ktrace: flush store writes {globaltimer, clock64}");
static_assert(offsetof(ktrace_slot_meta, flush_magic) == kFlushCount + 4 &&
                  offsetof(ktrace_slot_meta, reserved1) == kFlushCount + 8,
              "ktrace: flush store writes {count, magic, 0, 0}");
static_assert(sizeof(ktrace_event) == 8 && offsetof(ktrace_event, clock) == 0 &&
                  offsetof(ktrace_event, region) == 4 &&
                  offsetof(ktrace_event, region) + 2 == offsetof(ktrace_event, type),
              "ktrace: an event is {clock, region | type << 16}");
}  // namespace layout

#if KTRACE_RECORDER == KTRACE_RECORDER_RING
// PTX of one ring push inside Context::record's asm block: the entry
// {CLK, TAG} (PTX operands) goes to lane cnt % 32; a full group of 32 is
// written by the whole warp. A one-pass loop: ptxas keeps loops as
// branches, where it would predicate a short block and issue it at every
// event. Operands: %0 cnt, %1/%2 the held entry, %4 ring mask, %5 base,
// %7 lane.
#define KTRACE_RING_PUSH_(L, CLK, TAG)              \
  "xor.b32 idx, %0, %7;\n\t"                        \
  "and.b32 idx, idx, 31;\n\t"                       \
  "setp.eq.u32 mine, idx, 0;\n\t"                   \
  "@mine mov.u32 %1, " CLK ";\n\t"                  \
  "@mine mov.u32 %2, " TAG ";\n\t"                  \
  "add.u32 %0, %0, 1;\n\t"                          \
  "and.b32 idx, %0, 31;\n\t"                        \
  "setp.eq.u32 full, idx, 0;\n\t"                   \
  "@!full bra.uni KTRACE_" L "_HELD_%=;\n\t"          \
  "mov.u32 pass, 1;\n"                               \
  "KTRACE_" L "_GROUP_%=:\n\t"                        \
  "sub.u32 idx, %0, 32;\n\t"                        \
  "add.u32 idx, idx, %7;\n\t"                       \
  "and.b32 idx, idx, %4;\n\t"                       \
  "mad.wide.u32 addr, idx, 8, %5;\n\t"              \
  "st.global.cs.v2.u32 [addr], {%1, %2};\n\t"       \
  "sub.u32 pass, pass, 1;\n\t"                      \
  "setp.ne.u32 again, pass, 0;\n\t"                 \
  "@again bra.uni KTRACE_" L "_GROUP_%=;\n"          \
  "KTRACE_" L "_HELD_%=:\n\t"
#endif

/// Which slot a warp writes, computed once at open from the launch's
/// `ktrace_arg`: whether the warp is traced, its warp index in the block,
/// the block's linear index, and the address of its slot (0 when not
/// traced).
struct Open {
  bool skip;
  uint32_t warp;
  uint32_t block;
  uint64_t slot;
};

__device__ __forceinline__ Open open_slot(const ktrace_arg& arg) {
  Open o;
  const uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  // Read from one lane: the compiler then knows every value derived from
  // it is warp-uniform, so the per-event skip branch needs no
  // reconvergence barrier.
  const uint32_t active = __activemask();
  o.warp = __shfl_sync(active, tid / 32, __ffs(active) - 1);
  o.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const bool warp_on = o.warp < 32 && ((arg.warp_mask >> o.warp) & 1u);
  const uint32_t stride = arg.block_stride ? arg.block_stride : 1u;
  const uint32_t block_slot = o.block / stride;
  const bool block_on = (o.block % stride) == 0 && block_slot < arg.blocks_traced;
  o.skip = arg.buffer == 0 || !warp_on || !block_on;
  o.slot = 0;
  if (!o.skip) {
    const uint32_t warp_slot = __popc(arg.warp_mask & ((1u << o.warp) - 1u));
    const uint64_t slot_bytes = sizeof(ktrace_slot_meta) + (sizeof(ktrace_event) << arg.cap_log2);
    o.slot = arg.buffer +
             (static_cast<uint64_t>(block_slot) * arg.warps_traced + warp_slot) * slot_bytes;
  }
  return o;
}

/// Writes the open half of a slot's metadata (from the lane where `leader`
/// is set): the ids and the open magic, then the timer pair read after
/// them (the clock first, then the globaltimer: the order of every
/// anchor); returns the pair's clock. The ids go first so that their four
/// registers are free again before the timer pair's four are taken (2
/// registers fewer on big_grid and block_sum_256 with the store recorder).
__device__ __forceinline__ uint64_t write_open(const Open& o, bool leader) {
  const uint32_t ids = o.warp | (smid() << layout::kSmidShift);
  store_v4_cs(o.slot + layout::kOpenIds, o.block, ids, KTRACE_OPEN_MAGIC, 0u, leader);
  const uint64_t clk = clock64();
  const uint64_t gt = globaltimer();
  store_v4_cs(o.slot + layout::kOpenTimers, (uint32_t)gt, (uint32_t)(gt >> 32), (uint32_t)clk,
              (uint32_t)(clk >> 32), leader);
  return clk;
}

/// The lanes that reached a flush: the active mask, the lowest active lane
/// (whose recorder state every lane takes), this lane's rank among the
/// active ones (0: the one that writes the metadata) and their number.
struct FlushLanes {
  uint32_t active;
  int src;
  uint32_t rank;
  uint32_t count;
};

__device__ __forceinline__ FlushLanes flush_lanes() {
  FlushLanes l;
  l.active = __activemask();
  l.src = __ffs(l.active) - 1;
  uint32_t lt;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  l.rank = __popc(l.active & lt);
  l.count = __popc(l.active);
  return l;
}

/// Writes the flush half of a slot's metadata (from the lane where
/// `leader` is set): the closing timer pair and the entry count.
__device__ __forceinline__ void write_flush(uint64_t slot, uint32_t count, bool leader) {
  const uint64_t clk = clock64();
  const uint64_t gt = globaltimer();
  store_v4_cs(slot + layout::kFlushTimers, (uint32_t)gt, (uint32_t)(gt >> 32), (uint32_t)clk,
              (uint32_t)(clk >> 32), leader);
  store_v4_cs(slot + layout::kFlushCount, count, KTRACE_FLUSH_MAGIC, 0u, 0u, leader);
}

#if KTRACE_RECORDER == KTRACE_RECORDER_NEWEST

// ---------------------------------------------------------------------------
// KTRACE_RECORDER_NEWEST: the newest KTRACE_NEWEST_ENTRIES events of each
// warp, kept in shared memory, written out at the flush.
// ---------------------------------------------------------------------------

/// Bytes of one warp's ring.
#define KTRACE_NEWEST_RING_BYTES (KTRACE_NEWEST_ENTRIES * 8)
/// The rings of a block's warps, warp w's at entry w * KTRACE_NEWEST_ENTRIES,
/// each aligned to its size, so that an entry's address is one LOP3 of the
/// ring's start and the warp's byte count.
static __shared__ __align__(KTRACE_NEWEST_RING_BYTES) uint2
    ktrace_newest_ring[KTRACE_SMEM_WARPS * KTRACE_NEWEST_ENTRIES];
/// Per warp: the slot's address (2 words) and cap - 1, read at the flush.
static __shared__ __align__(16) uint4 ktrace_newest_state[KTRACE_SMEM_WARPS];

// The PTX of the newest-N recorder's events, in chunks that record() and
// record_value() put together. Operands: %0 the bytes recorded, %1 the
// ring's (or, pinned, the last entry's) shared address, then the skip or
// write flag, the tag and the ring mask (pinned: the held entry before
// them); a value's vtag and value follow those.
#if KTRACE_NEWEST_PIN
#define KTRACE_NEWEST_OUTPUTS_ "+r"(at_), "+r"(entry_), "+l"(held_)
#define KTRACE_NEWEST_INPUTS_(tag) "r"(skip_), "r"(tag), "n"(KTRACE_NEWEST_RING_BYTES - 1)
#define KTRACE_NEWEST_HEAD_ \
  "{\n\t.reg .pred skip;\n\t.reg .u32 clk;\n\t" \
  "setp.ne.u32 skip, %3, 0;\n\t" \
  "@skip bra.uni KTRACE_DONE_%=;\n\t"
#define KTRACE_NEWEST_EVENT_ \
  "mov.u32 clk, %%clock;\n\t" \
  "mov.b64 %2, {clk, %4};\n\t" \
  /* (bytes & (ring bytes - 1)) | (entry & ~(ring bytes - 1)) */ \
  "lop3.b32 %1, %0, %1, %5, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "st.shared.u64 [%1], %2;\n\t"
#define KTRACE_NEWEST_VALUE_ \
  "mov.b64 %2, {%7, %6};\n\t" \
  "lop3.b32 %1, %0, %1, %5, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "st.shared.u64 [%1], %2;\n\t"
#elif !KTRACE_NEWEST_BRANCH
// No branch: the store by lane 0 of a traced warp (%2).
#define KTRACE_NEWEST_OUTPUTS_ "+r"(at_)
#define KTRACE_NEWEST_INPUTS_(tag) \
  "r"(entry_), "r"(write_), "r"(tag), "n"(KTRACE_NEWEST_RING_BYTES - 1)
#define KTRACE_NEWEST_HEAD_ \
  "{\n\t.reg .pred w;\n\t.reg .u32 clk, a;\n\t" \
  "setp.ne.u32 w, %2, 0;\n\t"
#define KTRACE_NEWEST_EVENT_ \
  "mov.u32 clk, %%clock;\n\t" \
  "lop3.b32 a, %0, %1, %4, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "@w st.shared.v2.u32 [a], {clk, %3};\n\t"
#define KTRACE_NEWEST_VALUE_ \
  "lop3.b32 a, %0, %1, %4, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "@w st.shared.v2.u32 [a], {%6, %5};\n\t"
#else
// The address and the entry in temporaries: 3 registers fewer across the
// kernel than pinned; ptxas may then give them to the user's next
// instructions, which wait until the store has read them.
#define KTRACE_NEWEST_OUTPUTS_ "+r"(at_)
#define KTRACE_NEWEST_INPUTS_(tag) \
  "r"(entry_), "r"(skip_), "r"(tag), "n"(KTRACE_NEWEST_RING_BYTES - 1)
#define KTRACE_NEWEST_HEAD_ \
  "{\n\t.reg .pred skip;\n\t.reg .u32 clk, a;\n\t" \
  "setp.ne.u32 skip, %2, 0;\n\t" \
  "@skip bra.uni KTRACE_DONE_%=;\n\t"
#define KTRACE_NEWEST_EVENT_ \
  "mov.u32 clk, %%clock;\n\t" \
  "lop3.b32 a, %0, %1, %4, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "st.shared.v2.u32 [a], {clk, %3};\n\t"
#define KTRACE_NEWEST_VALUE_ \
  "lop3.b32 a, %0, %1, %4, 0xe4;\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "st.shared.v2.u32 [a], {%6, %5};\n\t"
#endif
#if KTRACE_NEWEST_BRANCH
// The never-taken branch to a trap that keeps the event a block of its own.
#define KTRACE_NEWEST_TAIL_ \
  "@skip bra.uni KTRACE_NEVER_%=;\n\t" \
  "bra.uni KTRACE_DONE_%=;\n" \
  "KTRACE_NEVER_%=:\n\t" \
  "trap;\n" \
  "KTRACE_DONE_%=:\n\t" \
  "}"
#else
#define KTRACE_NEWEST_TAIL_ "}"
#endif

/// Per-warp trace context, newest-N shared-memory recorder.
///
/// Live state across a loop: the bytes recorded so far (8 per event), the
/// shared address of the warp's ring (with KTRACE_NEWEST_PIN, of its last
/// entry, and that entry) and the skip flag (held by the compiler as a
/// predicate). Recording never leaves shared memory and tests nothing: an
/// event is the skip branch, the clock read, the tag into the register
/// beside it, the entry's address (`(bytes & (ring bytes - 1)) | ring`, one
/// LOP3), one 8-byte shared store and the byte count's increment: 6 SASS
/// instructions. The event's code is kept a branch over a block (the
/// never-taken branch to a trap stops ptxas from turning it into predicated
/// instructions; ptxas then deletes that branch, except in the first copy
/// of an unrolled loop), so a warp that records nothing runs one
/// instruction per marker and the user's code stays on its side of the
/// clock read. Measured on the H200: docs/performance.md.
///
/// The flush writes the newest min(events, KTRACE_NEWEST_ENTRIES, cap) to
/// the warp's slot: with cap <= KTRACE_NEWEST_ENTRIES at their ring
/// positions, with the count of all events (the decoder then reports the
/// older ones as dropped, as for any full ring); with a larger cap at
/// positions 0, 1, ... with the count of those kept (the older ones are
/// then not reported). No time anchors: times follow the open and flush
/// timer pairs.
class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg) {
    const Open o = open_slot(arg);
#if KTRACE_SMEM_WARPS < 32
    if (!o.skip && o.warp >= KTRACE_SMEM_WARPS) __trap();
#endif
    skip_ = o.skip ? 1u : 0u;
    const bool leader = !o.skip && elect_leader();
    write_open(o, leader);
    const uint32_t w = o.warp % KTRACE_SMEM_WARPS;
    entry_ = static_cast<uint32_t>(__cvta_generic_to_shared(ktrace_newest_ring)) +
             w * KTRACE_NEWEST_RING_BYTES;
    // An event's address is one LOP3 only while the ring is aligned to its
    // size (see KTRACE_NEWEST_ENTRIES): stop rather than write elsewhere.
    if (!o.skip && (entry_ & (KTRACE_NEWEST_RING_BYTES - 1u)) != 0) __trap();
#if !KTRACE_NEWEST_BRANCH
    write_ = (!o.skip && lane_id() == 0) ? 1u : 0u;
#endif
    at_ = 0;
    held_ = 0;
    if (!o.skip) {
      // Written by every lane of a traced warp (the same bytes).
      ktrace_newest_state[w] =
          make_uint4(static_cast<uint32_t>(o.slot), static_cast<uint32_t>(o.slot >> 32),
                     (1u << arg.cap_log2) - 1u, 0u);
    }
  }

  __device__ __forceinline__ ~Context() { flush(); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Writes the events kept, the closing timer pair and the event count.
  /// Called by the destructor; later calls do nothing. Reached by the
  /// warp's lanes that recorded (the whole warp or lane 0), or more: the
  /// byte count is taken from the lowest active lane.
  __device__ __forceinline__ void flush() {
    if (skip_) return;
    const FlushLanes fl = flush_lanes();
    const uint32_t active = fl.active, rank = fl.rank, lanes = fl.count;
    const uint32_t at = __shfl_sync(active, at_, fl.src);
    const uint32_t ring = __shfl_sync(active, entry_, fl.src) & ~(KTRACE_NEWEST_RING_BYTES - 1u);
    const uint64_t held = __shfl_sync(active, held_, fl.src);
    __syncwarp(active);
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ktrace_newest_ring));
    const uint32_t w = (ring - base) / KTRACE_NEWEST_RING_BYTES;
    const uint4 st = ktrace_newest_state[w];
    const uint64_t slot = (static_cast<uint64_t>(st.y) << 32) | st.x;
    const uint64_t events = slot + sizeof(ktrace_slot_meta);
    const uint32_t mask = st.z;
    const uint32_t count = at / 8u;
    const bool small_cap = mask < KTRACE_NEWEST_ENTRIES;
    uint32_t kept = count < KTRACE_NEWEST_ENTRIES ? count : KTRACE_NEWEST_ENTRIES;
    if (kept > mask + 1u) kept = mask + 1u;
    const uint32_t first = count - kept;
    for (uint32_t j = rank; j < kept; j += lanes) {
      const uint32_t i = first + j;
      // The newest entry is also in registers (what keeps them the
      // events' own).
      const uint2 e =
          KTRACE_NEWEST_PIN && i + 1u == count
              ? make_uint2(static_cast<uint32_t>(held), static_cast<uint32_t>(held >> 32))
              : ktrace_newest_ring[w * KTRACE_NEWEST_ENTRIES + (i & (KTRACE_NEWEST_ENTRIES - 1u))];
      const uint32_t pos = small_cap ? (i & mask) : j;
      store_event(events + static_cast<uint64_t>(pos) * sizeof(ktrace_event), e.x, e.y, true);
    }
    write_flush(slot, small_cap ? count : kept, rank == 0);
    skip_ = 1u;
  }

  /// Records one event: `tag` is `region | type << 16`.
  __device__ __forceinline__ void record(uint32_t tag) {
    // One asm block: the skip branch, then the event. Every lane that
    // reaches the marker stores the same entry to the same address. The
    // entry's address and its two words are outputs kept until the flush,
    // so ptxas gives their registers to no other value: the user's code
    // after the event then never waits for the store to have read them.
    // The branch to KTRACE_NEVER is never taken (the skip predicate is
    // false there); ptxas drops it, but its trap block keeps the event a
    // block of its own.
    asm volatile(KTRACE_NEWEST_HEAD_ KTRACE_NEWEST_EVENT_ KTRACE_NEWEST_TAIL_
                 : KTRACE_NEWEST_OUTPUTS_
                 : KTRACE_NEWEST_INPUTS_(tag)
                 : "memory");
  }

  /// Records one event, `tag`, and a value entry {value, vtag} after it,
  /// in one asm block: a warp that records nothing branches over both.
  __device__ __forceinline__ void record_value(uint32_t tag, uint32_t vtag, uint32_t value) {
    asm volatile(KTRACE_NEWEST_HEAD_ KTRACE_NEWEST_EVENT_ KTRACE_NEWEST_VALUE_ KTRACE_NEWEST_TAIL_
                 : KTRACE_NEWEST_OUTPUTS_
                 : KTRACE_NEWEST_INPUTS_(tag), "r"(vtag), "r"(value)
                 : "memory");
  }

 private:
  uint32_t at_;     // bytes recorded: 8 per event
  uint32_t entry_;  // shared address of the last entry written (the ring's start before)
  uint64_t held_;   // the last entry written {clock, tag}
  uint32_t skip_;   // 1: this warp records nothing (warp-uniform)
#if !KTRACE_NEWEST_BRANCH
  uint32_t write_;  // 1: lane 0 of a traced warp (the lane that stores)
#endif
};

#elif KTRACE_RECORDER == KTRACE_RECORDER_SMEM

/// The staging areas of a block's warps: warp w's area starts at byte
/// w * KTRACE_SMEM_WARP_BYTES and holds, in order, half 0 (16 entries),
/// half 1 (16 entries) and its state {events address (2 words), entries
/// already handed to global memory, cap - 1}.
static __shared__ __align__(128) uint4 ktrace_smem_area[KTRACE_SMEM_WARPS * KTRACE_SMEM_WARP_BYTES / 16];
static_assert(KTRACE_SMEM_WARP_BYTES % 16 == 0, "ktrace: staging areas are 16-byte aligned");

// The rare path of the shared-memory recorder, shared by events and values:
// PTX inside an asm block whose operand %0 is the next entry and %2 the end
// of the half being filled. Entered with a full half, the head moves to the
// other half once the copy issued from it has read it (an event's anchor, if
// due, goes there next); the tail then hands the full half to the copy
// engine.
#define KTRACE_SMEM_FULL_HEAD_(L) \
        "KTRACE_" L "_FULL_%=:\n\t" \
        /* Few temporaries, in this order. h = 1 when half 1 is full (the */ \
        /* low bits of %2); %2 becomes e, the end of the full half, and %0 */ \
        /* the start of the other half (e, or e - 256). */ \
        "neg.s32 h, %2;\n\t" \
        "and.b32 h, h, 7;\n\t" \
        "add.u32 %2, %2, h;\n\t" \
        "mad.lo.u32 %0, h, -256, %2;\n\t" \
        /* The other half is free once the copy issued from it 16 entries */ \
        /* ago has read it (long done). */ \
        "cp.async.bulk.wait_group.read 0;\n\t"
#define KTRACE_SMEM_FULL_TAIL_ \
        /* The state sits 256 bytes past the area's start, at t + 128: */ \
        /* {slot address, entries retired, cap - 1}. Every lane */ \
        /* counts the half as retired (the same store); lane 0 (it records */ \
        /* in every warp that records) copies it to events[retired & */ \
        /* (cap - 1)], unless the ring is 32 entries, the size of the */ \
        /* staging area: then the area itself keeps the newest 32 entries and */ \
        /* flush() copies them. Only the copy is predicated: no */ \
        /* lane-dependent branch, so the event needs no reconvergence */ \
        /* barrier. */ \
        /* (From %0, after the anchor: the loads then stay after it, and */ \
        /* their registers do not add to the anchor's.) */ \
        "and.b32 t, %0, -16;\n\t" \
        "shl.b32 s, h, 7;\n\t" \
        "add.u32 t, t, s;\n\t" \
        "ld.shared.v2.u32 {lo, hi}, [t+136];\n\t" \
        "setp.ne.u32 lead, hi, 31;\n\t" \
        "and.b32 hi, hi, lo;\n\t" \
        "add.u32 lo, lo, 16;\n\t" \
        "st.shared.u32 [t+136], lo;\n\t" \
        "shl.b32 s, hi, 3;\n\t" \
        /* The slot's address after the first load: hi >> 31 is 0 (cap - 1 */ \
        /* < 2^24), but it keeps the two loads, and their registers, apart. */ \
        "shr.u32 hi, hi, 31;\n\t" \
        "add.u32 t, t, hi;\n\t" \
        "ld.shared.v2.u32 {lo, hi}, [t+128];\n\t" \
        "add.cc.u32 lo, lo, s;\n\t" \
        "addc.u32 hi, hi, 0;\n\t" \
        "mov.b64 g, {lo, hi};\n\t" \
        "mov.u32 t, %%laneid;\n\t" \
        "setp.eq.and.u32 lead, t, 0, lead;\n\t" \
        "sub.u32 s, %2, 128;\n\t" \
        "fence.proxy.async.shared::cta;\n\t" \
        "@lead cp.async.bulk.global.shared::cta.bulk_group [g+64], [s], 128;\n\t" \
        "cp.async.bulk.commit_group;\n\t" \
        /* The other half's end, minus 1 for half 1: e + 127 or e - 128. */ \
        "mad.lo.u32 %2, h, -255, %2;\n\t" \
        "add.u32 %2, %2, 127;\n"

/// 8-byte shared-memory store, predicated on `p`.
__device__ __forceinline__ void st_shared_v2(uint32_t addr, uint32_t a, uint32_t b, bool p) {
  asm volatile(
      "{\n\t.reg .pred q;\n\t"
      "setp.ne.b32 q, %3, 0;\n\t"
      "@q st.shared.v2.u32 [%0], {%1, %2};\n\t}" ::"r"(addr),
      "r"(a), "r"(b), "r"((uint32_t)p)
      : "memory");
}

// The PTX of the shared-memory recorder's event, for record() and
// record_value(). Operands: %0 the next entry's shared address, %1 the
// clock of the last anchor, %2 the end of the half being filled (minus 1
// in half 1), %3 the skip flag, %4 the tag, %5 the anchor period mask, %6
// the anchor's type; a value's vtag and value follow (%7, %8). AFTER: the
// label where the event's paths end.
#define KTRACE_SMEM_OUTPUTS_ "+r"(at_), "+r"(anchor_clk_), "+r"(end_)
#define KTRACE_SMEM_INPUTS_(tag) \
  "r"(skip_), "r"(tag), "n"(~(KTRACE_ANCHOR_CYCLES - 1u)), \
      "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift)
#define KTRACE_SMEM_HEAD_ \
  "{\n\t" \
  ".reg .pred skip, due, full, lead;\n\t" \
  ".reg .u32 clk, t, h, s, lo, hi;\n\t" \
  ".reg .u64 g, gt;\n\t" \
  "setp.ne.u32 skip, %3, 0;\n\t" \
  "@skip bra.uni KTRACE_DONE_%=;\n\t"
#if KTRACE_ANCHOR_CYCLES
// The rare path, entered when the half is full or an anchor is due. Not
// full: the anchor goes after the event, and may fill the half. Full:
// every lane waits until the copy issued from the other half 16 entries
// ago has read it (long done), the anchor if due goes first into the other
// half, lane 0 hands the full half to the copy engine, and the warp goes
// on in the other half. Either way the globaltimer is read first, within a
// few instructions of the event's clock.
#define KTRACE_SMEM_EVENT_(AFTER) \
  "add.u32 %0, %0, 8;\n\t" \
  "mov.u64 g, %%clock64;\n\t" /* only the low half is used: CS2R.32 */ \
  "cvt.u32.u64 clk, g;\n\t" \
  "st.shared.v2.u32 [%0+-8], {clk, %4};\n\t" \
  "xor.b32 t, clk, %1;\n\t" \
  "and.b32 t, t, %5;\n\t" \
  "setp.ne.u32 due, t, 0;\n\t" \
  "setp.ge.or.u32 full, %0, %2, due;\n\t" \
  "@!full bra.uni " AFTER ";\n\t" \
  /* The anchor's %globaltimer first (read whether or not an anchor is */ \
  /* due, so that it is not kept across events), before the half is */ \
  /* handed over. */ \
  "mov.u64 gt, %%globaltimer;\n\t" \
  "setp.ge.u32 full, %0, %2;\n\t" \
  "@full bra.uni KTRACE_EV_FULL_%=;\n\t" \
  /* Not full: the anchor follows the event in this half. */ \
  "mov.b64 {lo, hi}, gt;\n\t" \
  "and.b32 hi, hi, 0xffff;\n\t" \
  "or.b32 hi, hi, %6;\n\t" \
  "st.shared.v2.u32 [%0], {lo, hi};\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "mov.u32 %1, clk;\n\t" \
  "setp.ne.u32 due, %0, %0;\n\t" \
  "setp.ge.u32 full, %0, %2;\n\t" \
  "@!full bra.uni " AFTER ";\n" \
  KTRACE_SMEM_FULL_HEAD_("EV") \
  /* The anchor, if due, goes first into the other half. */ \
  "@!due bra.uni KTRACE_COPY_%=;\n\t" \
  "mov.b64 {lo, hi}, gt;\n\t" \
  "and.b32 hi, hi, 0xffff;\n\t" \
  "or.b32 hi, hi, %6;\n\t" \
  "st.shared.v2.u32 [%0], {lo, hi};\n\t" \
  "add.u32 %0, %0, 8;\n\t" \
  "mov.u32 %1, clk;\n" \
  "KTRACE_COPY_%=:\n\t" \
  KTRACE_SMEM_FULL_TAIL_
#else
#define KTRACE_SMEM_EVENT_(AFTER) \
  "add.u32 %0, %0, 8;\n\t" \
  "mov.u64 g, %%clock64;\n\t" \
  "cvt.u32.u64 clk, g;\n\t" \
  "st.shared.v2.u32 [%0+-8], {clk, %4};\n\t" \
  "setp.lt.u32 full, %0, %2;\n\t" \
  "@full bra.uni " AFTER ";\n" \
  KTRACE_SMEM_FULL_HEAD_("EV") \
  KTRACE_SMEM_FULL_TAIL_
#endif

/// Per-warp trace context, shared-memory staging recorder.
///
/// Live state across a loop, all warp-uniform: the shared-memory address of
/// the next entry, the end of the half being filled (minus 1 in half 1),
/// the clock of the last time anchor, and the skip flag (held by the
/// compiler as a predicate). Where the events go in global memory is kept
/// in the staging area's state and read only when a half is full.
///
/// An event: the uniform skip branch, the pointer increment, the clock
/// read, the tag into the register beside it, one 8-byte shared store, and
/// one test for "an anchor is due or the half is full" (a `LOP3` and an
/// `ISETP` with a predicate input) with its branch: 8 SASS instructions,
/// no global memory operation. The pointer is advanced before the store,
/// which then writes at pointer - 8: advanced after it, the increment
/// waited for the store to read its address register (measured on the
/// H200: 65 cycles per event at one warp per scheduler, 50 this way). Every
/// 16 entries lane 0 hands the full half (128 bytes) to cp.async.bulk
/// after a proxy fence, and the warp waits only for the copy of the other
/// half, issued 16 entries earlier, to have been read.
class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg) {
    const Open o = open_slot(arg);
#if KTRACE_SMEM_WARPS < 32
    if (!o.skip && o.warp >= KTRACE_SMEM_WARPS) __trap();
#endif
    skip_ = o.skip ? 1u : 0u;
    const bool leader = !o.skip && elect_leader();
    write_open(o, leader);
    // The first event always records an anchor: the clock moves fastest
    // when a kernel's warps start, and a warp's first events then get a
    // measured time rather than one interpolated from its open.
    anchor_clk_ = clock32() - KTRACE_ANCHOR_CYCLES;
    const uint32_t area = static_cast<uint32_t>(__cvta_generic_to_shared(ktrace_smem_area)) +
                          (o.warp % KTRACE_SMEM_WARPS) * KTRACE_SMEM_WARP_BYTES;
    // State: the slot's address, entries retired so far, cap - 1, written
    // by every lane of a traced warp (the same bytes), so that any lane
    // reads back what it wrote itself.
    st_shared_v2(area + 2 * KTRACE_STAGE_HALF * 8, (uint32_t)o.slot, (uint32_t)(o.slot >> 32),
                 !o.skip);
    st_shared_v2(area + 2 * KTRACE_STAGE_HALF * 8 + 8, 0u, (1u << arg.cap_log2) - 1u, !o.skip);
    at_ = area;
    end_ = area + KTRACE_STAGE_HALF * 8;  // half 0: the low bits stay clear
  }

  __device__ __forceinline__ ~Context() { flush(); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Writes the entries still staged, the closing timer pair and the entry
  /// count. Called by the destructor; later calls do nothing. Reached by
  /// the warp's lanes that recorded (the whole warp or lane 0), or more:
  /// the staging pointers are taken from the lowest active lane.
  __device__ __forceinline__ void flush() {
    if (skip_) return;
    const FlushLanes fl = flush_lanes();
    const uint32_t active = fl.active, rank = fl.rank, lanes = fl.count;
    const uint32_t at = __shfl_sync(active, at_, fl.src);
    const uint32_t endq = __shfl_sync(active, end_, fl.src);
    const uint32_t end = (endq + 7u) & ~7u;
    const uint32_t second = end - endq;  // 1 in half 1
    const uint32_t start = end - KTRACE_STAGE_HALF * 8;
    const uint32_t state = end + (1u - second) * KTRACE_STAGE_HALF * 8;
    const bool leader = rank == 0;
    // The copies issued (by lane 0) are complete before the metadata says
    // the warp is done; a lane without copies does not wait.
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    __syncwarp(active);
    uint32_t lo, hi, done, mask;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(lo), "=r"(hi), "=r"(done), "=r"(mask)
                 : "r"(state)
                 : "memory");
    const uint64_t slot = (static_cast<uint64_t>(hi) << 32) | lo;
    const uint64_t events = slot + sizeof(ktrace_slot_meta);
    const uint32_t held = (at - start) / 8u;
    for (uint32_t j = rank; j < held; j += lanes) {
      uint32_t c, t;
      asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(c), "=r"(t) : "r"(start + 8u * j) : "memory");
      store_event(events + static_cast<uint64_t>((done + j) & mask) * sizeof(ktrace_event), c, t,
                  true);
    }
    if (mask == 2 * KTRACE_STAGE_HALF - 1u) {
      // A 32-entry ring: nothing was copied before, and entry i sits at
      // index i % 32 of both the area and the ring, so the area is copied
      // as it is (the entries just written included).
      const uint32_t area = state - 2 * KTRACE_STAGE_HALF * 8;
      const uint32_t kept = done + held < 32u ? done + held : 32u;
      for (uint32_t k = rank; k < kept; k += lanes) {
        uint32_t c, t;
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(c), "=r"(t) : "r"(area + 8u * k) : "memory");
        store_event(events + static_cast<uint64_t>(k) * sizeof(ktrace_event), c, t, true);
      }
    }
    write_flush(slot, done + held, leader);
    skip_ = 1u;
  }

  /// Records one event: `tag` is `region | type << 16`.
  __device__ __forceinline__ void record(uint32_t tag) {
    // One asm block, so the compiler cannot move the user's code across the
    // clock read. Warps that are not traced jump over the event (a uniform
    // branch on a predicate the compiler keeps across loops). Every lane
    // that reaches the marker stores the same entry to the same address.
    //
    // The rare path, entered when the half is full or an anchor is due.
    // Not full: the anchor goes after the event, and may fill the half.
    // Full: every lane waits until the copy issued from the other half 16
    // entries ago has read it (long done), the anchor if due goes first
    // into the other half, lane 0 hands the full half to the copy engine,
    // and the warp goes on in the other half. Either way the globaltimer
    // is read first, within a few instructions of the event's clock.
    asm volatile(KTRACE_SMEM_HEAD_ KTRACE_SMEM_EVENT_("KTRACE_DONE_%=") "KTRACE_DONE_%=:\n\t}"
                 : KTRACE_SMEM_OUTPUTS_
                 : KTRACE_SMEM_INPUTS_(tag)
                 : "memory");
  }

  /// Records one event, `tag`, and stages a value entry {value, vtag}
  /// after it (and after its anchor), in one asm block: a warp that
  /// records nothing branches over both. A full half is handed over as
  /// after an event.
  __device__ __forceinline__ void record_value(uint32_t tag, uint32_t vtag, uint32_t value) {
    asm volatile(KTRACE_SMEM_HEAD_ KTRACE_SMEM_EVENT_("KTRACE_VALUE_%=")
                 "KTRACE_VALUE_%=:\n\t"
                 "add.u32 %0, %0, 8;\n\t"
                 "st.shared.v2.u32 [%0+-8], {%8, %7};\n\t"
                 "setp.lt.u32 full, %0, %2;\n\t"
                 "@full bra.uni KTRACE_DONE_%=;\n"
                 KTRACE_SMEM_FULL_HEAD_("VA")
                 KTRACE_SMEM_FULL_TAIL_
                 "KTRACE_DONE_%=:\n\t}"
                 : KTRACE_SMEM_OUTPUTS_
                 : KTRACE_SMEM_INPUTS_(tag), "r"(vtag), "r"(value)
                 : "memory");
  }

 private:
  uint32_t at_;          // shared address of the next entry
  uint32_t end_;         // end of the half being filled, minus 1 in half 1
  uint32_t anchor_clk_;  // low 32 bits of %clock at the last anchor (or open)
  uint32_t skip_;        // 1: this warp records nothing (warp-uniform)
};

#else  // KTRACE_RECORDER_STORE or KTRACE_RECORDER_RING

// The PTX of the global-memory recorders' events, for record() and
// record_value(). AFTER: the label where the event's paths end (its
// anchor, if due, recorded).
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
// One asm block: C++ branches here let the compiler move the user's code
// across the clock read. Lane (cnt % 32) keeps each entry; when a group of
// 32 is complete every lane of a traced warp writes its entry: one
// coalesced 256-byte store. An anchor entry follows the event when the
// last one is KTRACE_ANCHOR_CYCLES old. Operands: %0 the count, %1/%2 the
// entry this lane holds, %3 the clock of the last anchor, %4 the ring
// mask, %5 the slot's events, %6 the tag, %7 the lane, %8 the skip flag,
// %9 the anchor period mask, %10 the anchor's type; a value's vtag and
// value follow (%11, %12).
#define KTRACE_GLOBAL_OUTPUTS_ "+r"(cnt_), "+r"(held_clk_), "+r"(held_tag_), "+r"(anchor_clk_)
#define KTRACE_GLOBAL_INPUTS_(tag)                                               \
  "r"(mask_), "l"(base_), "r"(tag), "r"(lane_), "r"(skip_),                      \
      "n"(~(KTRACE_ANCHOR_CYCLES - 1u)), "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift)
#define KTRACE_GLOBAL_HEAD_ \
  "{\n\t" \
  ".reg .pred off, mine, full, again, fresh;\n\t" \
  ".reg .u32 idx, pass, clk, age, glo, ghi;\n\t" \
  ".reg .u64 addr, gt;\n\t" \
  "setp.ne.u32 off, %8, 0;\n\t" \
  "@off bra.uni KTRACE_SKIP_%=;\n\t"
#if KTRACE_ANCHOR_CYCLES
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  "mov.u32 clk, %%clock;\n\t" \
  KTRACE_RING_PUSH_("EV", "clk", "%6") \
  KTRACE_ANCHOR_DUE_("%3", "%9", AFTER) \
  "mov.u64 gt, %%globaltimer;\n\t" \
  "mov.b64 {glo, ghi}, gt;\n\t" \
  "and.b32 ghi, ghi, 0xffff;\n\t" \
  "or.b32 ghi, ghi, %10;\n\t" \
  "mov.u32 %3, clk;\n\t" \
  KTRACE_RING_PUSH_("AN", "glo", "ghi")
#else
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  "mov.u32 clk, %%clock;\n\t" \
  KTRACE_RING_PUSH_("EV", "clk", "%6")
#endif
#define KTRACE_GLOBAL_EVENT_V_(AFTER) KTRACE_GLOBAL_EVENT_(AFTER)
#define KTRACE_GLOBAL_VALUE_ KTRACE_RING_PUSH_("VA", "%12", "%11")
#else
// One asm block, so the compiler cannot move the user's code across the
// clock read. Warps that are not traced jump over the event (a uniform
// branch); in a traced warp every lane that reaches the marker stores the
// same event to the same address, which costs one transaction and saves a
// per-event leader test. When the clock has left the period of
// KTRACE_ANCHOR_CYCLES its last time anchor was in, the warp falls through
// into the anchor: it reads %globaltimer and stores it as the next entry,
// paired with this event's clock. (Computing the next address ahead, or
// dropping the skip branch, measured worse on the gemm example: see
// docs/performance.md.) Operands: %0 the count, %1 the clock of the last
// anchor, %2 the ring mask, %3 the slot's events, %4 the tag, %5 the
// anchor period mask, %6 the anchor's type, %7 the skip flag; a value's
// vtag and value follow (%8, %9).
#define KTRACE_GLOBAL_OUTPUTS_ "+r"(cnt_), "+r"(anchor_clk_)
#define KTRACE_GLOBAL_INPUTS_(tag)                                                    \
  "r"(mask_), "l"(base_), "r"(tag), "n"(~(KTRACE_ANCHOR_CYCLES - 1u)),                \
      "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift), "r"(skip_)
#define KTRACE_GLOBAL_HEAD_ \
  "{\n\t" \
  ".reg .pred off, fresh;\n\t" \
  ".reg .u32 clk, idx, age, glo, ghi;\n\t" \
  ".reg .u64 addr, gt, vaddr;\n\t" \
  "setp.ne.u32 off, %7, 0;\n\t" \
  "@off bra.uni KTRACE_SKIP_%=;\n\t"
#define KTRACE_GLOBAL_STORE_(A, B) \
  "and.b32 idx, %0, %2;\n\t" \
  "mad.wide.u32 addr, idx, 8, %3;\n\t" \
  "st.global.cs.v2.u32 [addr], {" A ", " B "};\n\t" \
  "add.u32 %0, %0, 1;\n\t"
#if KTRACE_ANCHOR_CYCLES
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  "mov.u32 clk, %%clock;\n\t" \
  KTRACE_GLOBAL_STORE_("clk", "%4") \
  KTRACE_ANCHOR_DUE_("%1", "%5", AFTER) \
  "mov.u64 gt, %%globaltimer;\n\t" \
  "mov.b64 {glo, ghi}, gt;\n\t" \
  "and.b32 ghi, ghi, 0xffff;\n\t" \
  "or.b32 ghi, ghi, %6;\n\t" \
  KTRACE_GLOBAL_STORE_("glo", "ghi") \
  "mov.u32 %1, clk;\n"
#else
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  "mov.u32 clk, %%clock;\n\t" \
  KTRACE_GLOBAL_STORE_("clk", "%4")
#endif
// The event of record_value(): the value entry's address is computed
// before the event's store, so that ptxas does not put it in the
// registers that store still has to read (measured on the H200: 51.5
// cycles per value mark at one warp per scheduler, 70.5 with the address
// computed after the store); after an anchor the value entry is written
// on the anchor's path, so that no address is merged across the two paths.
#define KTRACE_GLOBAL_VADDR_ \
  "and.b32 idx, %0, %2;\n\t" \
  "mad.wide.u32 vaddr, idx, 8, %3;\n\t"
#define KTRACE_GLOBAL_EVENT_V_(AFTER) \
  "mov.u32 clk, %%clock;\n\t" \
  "and.b32 idx, %0, %2;\n\t" \
  "mad.wide.u32 addr, idx, 8, %3;\n\t" \
  "add.u32 %0, %0, 1;\n\t" \
  KTRACE_GLOBAL_VADDR_ \
  "st.global.cs.v2.u32 [addr], {clk, %4};\n\t" \
  KTRACE_GLOBAL_ANCHOR_V_(AFTER)
#if KTRACE_ANCHOR_CYCLES
#define KTRACE_GLOBAL_ANCHOR_V_(AFTER) \
  KTRACE_ANCHOR_DUE_("%1", "%5", AFTER) \
  "mov.u64 gt, %%globaltimer;\n\t" \
  "mov.b64 {glo, ghi}, gt;\n\t" \
  "and.b32 ghi, ghi, 0xffff;\n\t" \
  "or.b32 ghi, ghi, %6;\n\t" \
  "st.global.cs.v2.u32 [vaddr], {glo, ghi};\n\t" \
  "add.u32 %0, %0, 1;\n\t" \
  "mov.u32 %1, clk;\n\t" \
  KTRACE_GLOBAL_STORE_("%9", "%8") \
  "bra.uni KTRACE_SKIP_%=;\n\t"
#else
#define KTRACE_GLOBAL_ANCHOR_V_(AFTER)
#endif
#define KTRACE_GLOBAL_VALUE_ \
  "st.global.cs.v2.u32 [vaddr], {%9, %8};\n\t" \
  "add.u32 %0, %0, 1;\n\t"
#endif

/// Per-warp trace context, global-memory recorders.
///
/// Live state across a loop: the ring's base address (2 registers), the
/// event counter, the ring mask, the clock of the last time anchor and the
/// skip flag (held by the compiler as a predicate). The ring recorder adds
/// the lane index and the event this lane holds.
class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg)
      : base_(0), cnt_(0), mask_(0), skip_(1), anchor_clk_(0) {
    Open o = open_slot(arg);
    skip_ = o.skip ? 1u : 0u;
    const bool leader = !o.skip && elect_leader();
    // The mask is held in a register, not read from the kernel's
    // parameters at each event: a parameter read between an event's clock
    // and the instructions after it waits on the constant cache, which
    // under memory load delayed the code after a marker by up to 0.58 us
    // (measured on the H200 with the dvfs example).
    if (!o.skip) {
      base_ = o.slot + sizeof(ktrace_slot_meta);
      mask_ = (1u << arg.cap_log2) - 1u;
    }
    // The metadata stores address the slot from the events' base, so that
    // one 64-bit address is live at the open, not two (2 registers fewer
    // on the small kernels).
    o.slot = base_ - sizeof(ktrace_slot_meta);
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
    lane_ = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
#endif
    const uint64_t clk = write_open(o, leader);
    // The first event always records an anchor: the clock moves fastest
    // when a kernel's warps start, and a warp's first events then get a
    // measured time rather than one interpolated from its open.
    anchor_clk_ = static_cast<uint32_t>(clk) - KTRACE_ANCHOR_CYCLES;
  }

  __device__ __forceinline__ ~Context() { flush(); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Writes any events still held, the closing timer pair and the event
  /// count. Called by the destructor; later calls do nothing.
  __device__ __forceinline__ void flush() {
    if (skip_) return;
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
    const uint32_t held = cnt_ & 31u;
    if (lane_ < held) {
      store_event(base_ + (uint64_t)(((cnt_ & ~31u) + lane_) & mask_) * sizeof(ktrace_event),
                  held_clk_, held_tag_, true);
    }
#endif
    // The metadata from the lowest lane that reached the flush (not a lane
    // chosen at the open and held in a register across the kernel).
    write_flush(base_ - sizeof(ktrace_slot_meta), cnt_, flush_lanes().rank == 0);
    skip_ = 1u;
  }

  /// Records one event: `tag` is `region | type << 16`.
  __device__ __forceinline__ void record(uint32_t tag) {
    asm volatile(KTRACE_GLOBAL_HEAD_ KTRACE_GLOBAL_EVENT_("KTRACE_SKIP_%=") "KTRACE_SKIP_%=:\n\t}"
                 : KTRACE_GLOBAL_OUTPUTS_
                 : KTRACE_GLOBAL_INPUTS_(tag)
                 : "memory");
  }

  /// Records one event, `tag`, and a value entry {value, vtag} after it
  /// (and after its anchor), in one asm block: a warp that records
  /// nothing branches over both.
  __device__ __forceinline__ void record_value(uint32_t tag, uint32_t vtag, uint32_t value) {
    asm volatile(KTRACE_GLOBAL_HEAD_ KTRACE_GLOBAL_EVENT_V_("KTRACE_VALUE_%=")
                 "KTRACE_VALUE_%=:\n\t" KTRACE_GLOBAL_VALUE_ "KTRACE_SKIP_%=:\n\t}"
                 : KTRACE_GLOBAL_OUTPUTS_
                 : KTRACE_GLOBAL_INPUTS_(tag), "r"(vtag), "r"(value)
                 : "memory");
  }

 private:
  uint64_t base_;  // first event of this warp's slot
  uint32_t cnt_;   // entries recorded so far (events and anchors)
  uint32_t mask_;  // cap - 1
  uint32_t skip_;  // 1: this warp records nothing (warp-uniform)
  uint32_t anchor_clk_;  // low 32 bits of %clock at the last anchor (or open)
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
  uint32_t lane_;
  uint32_t held_clk_ = 0;
  uint32_t held_tag_ = 0;
#endif
};

#endif  // KTRACE_RECORDER

/// Records one event, `tag` (`region | type << 16`), with a 32-bit value,
/// with any recorder: the event, then a value entry (KTRACE_EVENT_VALUE)
/// holding the value and the event's region, in one asm block with one
/// skip branch: a value site of a warp that records nothing runs one
/// instruction, as any other marker.
__device__ __forceinline__ void record_value(Context& ctx, uint32_t tag, uint32_t value) {
  ctx.record_value(tag, (tag & 0xffffu) | (KTRACE_EVENT_VALUE << layout::kTypeShift), value);
}

/// Ends a region when it goes out of scope (KTRACE_SCOPE).
class Scope {
 public:
  __device__ __forceinline__ Scope(Context& ctx, uint32_t region) : ctx_(ctx), region_(region) {
    ctx_.record(region_ | (KTRACE_EVENT_BEGIN << layout::kTypeShift));
  }
  __device__ __forceinline__ ~Scope() { ctx_.record(region_ | (KTRACE_EVENT_END << layout::kTypeShift)); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Context& ctx_;
  uint32_t region_;
};

#else  // tracing off: nothing at all

class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg&) {}
  __device__ __forceinline__ void flush() {}
};

#endif  // KTRACE_ON

}  // namespace ktrace

#if KTRACE_ON

// The region id of a string literal, checked at compile time.
#define KTRACE_ID_(var, name)                                                      \
  constexpr uint32_t var = ::ktrace_regions::lookup(name);                         \
  static_assert(var != KTRACE_REGION_UNKNOWN,                                      \
                "ktrace: region " #name " is not in the region table; "            \
                "ktrace-build scans the sources given to Build::kernel_dir/kernel "  \
                "and found no marker with this name")

#define KTRACE_REC_(name, type)                          \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    ktrace_ctx.record(ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift)); \
  } while (0)
#define KTRACE_REC_IF_(cond, name, type)                 \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    if (cond) ktrace_ctx.record(ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift)); \
  } while (0)

#define KTRACE_REC_V_(name, type, value)                 \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    ::ktrace::record_value(ktrace_ctx, ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift), \
                            static_cast<uint32_t>(value));                          \
  } while (0)

/// Opens the calling warp's context, named `ktrace_ctx`, from a `ktrace_arg`.
#define KTRACE_OPEN(arg) ::ktrace::Context ktrace_ctx(arg)
/// Writes the closing timers and count now (the destructor does it otherwise).
#define KTRACE_FLUSH() ktrace_ctx.flush()
/// Begin, end and mark (instant) events of the region `name`.
#define KTRACE_B(name) KTRACE_REC_(name, KTRACE_EVENT_BEGIN)
#define KTRACE_E(name) KTRACE_REC_(name, KTRACE_EVENT_END)
#define KTRACE_M(name) KTRACE_REC_(name, KTRACE_EVENT_MARK)
/// The same, recorded only when the warp-uniform `cond` holds.
#define KTRACE_B_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_BEGIN)
#define KTRACE_E_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_END)
#define KTRACE_M_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_MARK)
/// Begins `name` now and ends it when the enclosing scope closes.
/// Begin, end and mark events of `name` that record a 32-bit value with
/// the event (a tile index, a stage, a queue depth; converted to uint32_t).
/// The value must be warp-uniform, as the markers are; it is not evaluated
/// when tracing is compiled out.
#define KTRACE_B_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_BEGIN, value)
#define KTRACE_E_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_END, value)
#define KTRACE_M_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_MARK, value)
#define KTRACE_SCOPE(name)                                          \
  KTRACE_ID_(KTRACE_CAT(ktrace_scope_id_, __LINE__), name);         \
  ::ktrace::Scope KTRACE_CAT(ktrace_scope_, __LINE__)(ktrace_ctx,   \
                                                      KTRACE_CAT(ktrace_scope_id_, __LINE__))

#else

#define KTRACE_OPEN(arg) ::ktrace::Context ktrace_ctx(arg)
#define KTRACE_FLUSH() ((void)0)
#define KTRACE_B(name) ((void)0)
#define KTRACE_E(name) ((void)0)
#define KTRACE_M(name) ((void)0)
#define KTRACE_B_IF(cond, name) ((void)0)
#define KTRACE_E_IF(cond, name) ((void)0)
#define KTRACE_M_IF(cond, name) ((void)0)
#define KTRACE_B_V(name, value) ((void)0)
#define KTRACE_E_V(name, value) ((void)0)
#define KTRACE_M_V(name, value) ((void)0)
#define KTRACE_SCOPE(name) ((void)0)

#endif  // KTRACE_ON

/// Markers in a `__device__` helper: the helper takes the caller's context
/// as a parameter, `KTRACE_CTX_PARAM`, and the caller passes `KTRACE_CTX`:
///
///   __device__ void load(float* x, KTRACE_CTX_PARAM) { KTRACE_B("load"); ... }
///   ... KTRACE_OPEN(trace); load(x, KTRACE_CTX); ...
///
/// The context is an empty object when tracing is off.
#define KTRACE_CTX_PARAM ::ktrace::Context& ktrace_ctx
#define KTRACE_CTX ktrace_ctx

#endif  // KTRACE_CUH
