// ktrace device header, part of ktrace.cuh (include that, not this): the
// Context of KTRACE_RECORDER_NEWEST, the newest KTRACE_NEWEST_ENTRIES events
// of each warp, kept in shared memory, written out at the flush.
#ifndef KTRACE_NEWEST_CUH
#define KTRACE_NEWEST_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/newest.cuh"
#endif

#include "common.cuh"

namespace ktrace {

/// Bytes of one warp's ring.
#define KTRACE_NEWEST_RING_BYTES (KTRACE_NEWEST_ENTRIES * 8)
/// The recorder's shared memory, one block of KTRACE_SMEM_BYTES: the rings of
/// a block's warps, warp w's at entry w * KTRACE_NEWEST_ENTRIES, each aligned
/// to its size, so that an entry's address is one LOP3 of the ring's start
/// and the warp's byte count; then per warp the slot's address (2 words)
/// and cap - 1, read at the flush. Aligned to 1,024 bytes and a multiple of
/// them in size, so that it leaves the kernel's dynamic shared memory at the
/// 1,024-byte alignment it has without the recorder (128-byte-swizzled TMA
/// and wgmma tiles need it).
struct __align__(1024) NewestSmem {
  uint2 ring[KTRACE_SMEM_WARPS * KTRACE_NEWEST_ENTRIES];
  uint4 state[KTRACE_SMEM_WARPS];
};
static_assert(sizeof(NewestSmem) == KTRACE_SMEM_BYTES,
              "ktrace: KTRACE_SMEM_BYTES is the newest-N recorder's shared memory");
static __shared__ NewestSmem ktrace_newest_smem;

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
/// clock read. Measured on the H200: docs/lab/performance-notes.md.
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
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg) : arg_(&arg) {
    const Open o = open_slot(arg);
#if KTRACE_SMEM_WARPS < 32
    if (!o.skip && o.warp >= KTRACE_SMEM_WARPS) __trap();
#endif
    skip_ = o.skip ? 1u : 0u;
    const bool leader = !o.skip && elect_leader();
    write_open(o, leader);
    const uint32_t w = o.warp % KTRACE_SMEM_WARPS;
    entry_ = static_cast<uint32_t>(__cvta_generic_to_shared(ktrace_newest_smem.ring)) +
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
      ktrace_newest_smem.state[w] =
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
    // A warp that records nothing has nothing to write (3: flushed).
    if (skip_) return;
    const FlushLanes fl = flush_lanes();
    const uint32_t active = fl.active, rank = fl.rank, lanes = fl.count;
    const uint32_t at = __shfl_sync(active, at_, fl.src);
    const uint32_t ring = __shfl_sync(active, entry_, fl.src) & ~(KTRACE_NEWEST_RING_BYTES - 1u);
    const uint64_t held = __shfl_sync(active, held_, fl.src);
    __syncwarp(active);
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ktrace_newest_smem.ring));
    const uint32_t w = (ring - base) / KTRACE_NEWEST_RING_BYTES;
    const uint4 st = ktrace_newest_smem.state[w];
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
              : ktrace_newest_smem.ring[w * KTRACE_NEWEST_ENTRIES + (i & (KTRACE_NEWEST_ENTRIES - 1u))];
      const uint32_t pos = small_cap ? (i & mask) : j;
      store_event(events + static_cast<uint64_t>(pos) * sizeof(ktrace_event), e.x, e.y, true);
    }
    write_flush(*arg_, slot, small_cap ? count : kept, rank == 0);
    skip_ = 3u;
  }

  /// Whether this warp records (it is traced and has not flushed).
  __device__ __forceinline__ bool records() const { return skip_ == 0u; }

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
  const ktrace_arg* arg_;  // the launch's argument (the kernel's parameter)
  uint32_t skip_;   // not 0: this warp records nothing (warp-uniform); 3: flushed
#if !KTRACE_NEWEST_BRANCH
  uint32_t write_;  // 1: lane 0 of a traced warp (the lane that stores)
#endif
};

}  // namespace ktrace

#endif  // KTRACE_NEWEST_CUH
