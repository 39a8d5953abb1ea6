// ktrace device header, part of ktrace.cuh (include that, not this): the
// Context of KTRACE_RECORDER_SMEM, the shared-memory staging recorder (sm_90
// and later): events staged per warp in shared memory, handed to the copy
// engine 16 entries at a time.
#ifndef KTRACE_SMEM_CUH
#define KTRACE_SMEM_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/smem.cuh"
#endif

#include "common.cuh"

namespace ktrace {

/// The staging areas of a block's warps: warp w's area starts at byte
/// w * KTRACE_SMEM_WARP_BYTES and holds, in order, half 0 (16 entries),
/// half 1 (16 entries) and its state {events address (2 words), entries
/// already handed to global memory, cap - 1}.
static __shared__ __align__(1024) uint4 ktrace_smem_area[KTRACE_SMEM_BYTES / 16];
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
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg) : arg_(&arg) {
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
    // A warp that records nothing has nothing to write (3: flushed).
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
    if (arg_->launch & KTRACE_ARG_SITE) {
      // The bulk copies wrote through the async proxy: ordered before the
      // flush's fence (KTRACE_ARG_OVERLAP) and the site's count like the
      // generic stores.
      asm volatile("fence.proxy.async.global;" ::: "memory");
    }
    write_flush(*arg_, slot, done + held, leader);
    skip_ = 3u;
  }

  /// Whether this warp records (it is traced and has not flushed).
  __device__ __forceinline__ bool records() const { return skip_ == 0u; }

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
  const ktrace_arg* arg_;  // the launch's argument (the kernel's parameter)
  uint32_t skip_;        // not 0: this warp records nothing (warp-uniform); 3: flushed
};

}  // namespace ktrace

#endif  // KTRACE_SMEM_CUH
