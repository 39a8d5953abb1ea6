// ktrace device header, part of ktrace.cuh (include that, not this): the
// Context of the two global-memory recorders, KTRACE_RECORDER_STORE and
// KTRACE_RECORDER_RING. Included by store.cuh and ring.cuh, after the PTX of
// their events (KTRACE_GLOBAL_HEAD_, KTRACE_GLOBAL_EVENT_ ...).
#ifndef KTRACE_GLOBAL_CUH
#define KTRACE_GLOBAL_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/global.cuh"
#endif
#ifndef KTRACE_GLOBAL_HEAD_
#error "ktrace: ktrace/global.cuh is included by ktrace/store.cuh or ktrace/ring.cuh"
#endif

#include "common.cuh"

namespace ktrace {

/// Per-warp trace context, global-memory recorders.
///
/// Live state across a loop: the ring's base address (2 registers), the
/// event counter, the ring mask (0 in a warp that records nothing, or has
/// flushed), with time anchors by the clock the clock of the last anchor,
/// and the skip flag (held by the compiler as a predicate). The ring
/// recorder adds the lane index and the event this lane holds.
class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg)
      : arg_(&arg), base_(0), cnt_(0), mask_(0), skip_(1), anchor_clk_(0) {
    Open o = open_slot(arg);
    // Only the store recorder takes anchors by the count
    // (KTRACE_ANCHORS_COUNT); its warps' times go through their SM's
    // anchors.
    constexpr bool kBySm = KTRACE_ANCHOR_CYCLES != 0 &&
                           KTRACE_RECORDER == KTRACE_RECORDER_STORE &&
                           KTRACE_ANCHORS == KTRACE_ANCHORS_COUNT;
    skip_ = o.skip ? 1u : 0u;
    const bool leader = !o.skip && elect_leader();
    // The mask is held in a register, not read from the kernel's
    // parameters at each event: a parameter read between an event's clock
    // and the instructions after it waits on the constant cache, which
    // under memory load delayed the code after a marker by up to 0.58 us
    // (measured on the H200 with the dvfs example). It stays 0 in a warp
    // that records nothing (a ring holds at least 32 entries), which is
    // what the flush tests: the events' skip flag is a predicate, but a
    // flush that tested it kept the open's facts word live across the
    // kernel (fast.cu's 24-register producer spilled it).
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
#if KTRACE_NULL_EARLY_OUT
    // A warp that records nothing reads no timer.
    if (!o.skip)
#endif
    {
      constexpr uint32_t kMagic =
          KTRACE_RECORDER == KTRACE_RECORDER_STORE && KTRACE_ANCHORS == KTRACE_ANCHORS_STAMP
              ? KTRACE_OPEN_STAMP_MAGIC
              : (kBySm ? KTRACE_OPEN_SHARED_MAGIC : KTRACE_OPEN_MAGIC);
      const uint64_t clk = write_open(o, leader, kMagic);
      // The first event always records an anchor: the clock moves fastest
      // when a kernel's warps start, and a warp's first events then get a
      // measured time rather than one interpolated from its open.
      anchor_clk_ = static_cast<uint32_t>(clk) - KTRACE_ANCHOR_CYCLES;
    }
  }

  __device__ __forceinline__ ~Context() { flush(); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Writes any events still held, the closing timer pair and the event
  /// count, and counts the warp at its site (KTRACE_ARG_SITE). Called by
  /// the destructor; later calls do nothing.
  __device__ __forceinline__ void flush() {
    // A warp that records nothing, or has flushed, has nothing to write.
    if (mask_ == 0) return;
    // The metadata from the lowest lane that reached the flush (not a lane
    // chosen at the open and held in a register across the kernel).
    const bool leader = flush_lanes().rank == 0;
    {
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
      const uint32_t held = cnt_ & 31u;
      if (lane_ < held) {
        store_event(base_ + (uint64_t)(((cnt_ & ~31u) + lane_) & mask_) * sizeof(ktrace_event),
                    held_clk_, held_tag_, true);
      }
#endif
      // The argument is read again here, from the kernel's parameters:
      // the site costs no register across the kernel.
      write_flush(*arg_, base_ - sizeof(ktrace_slot_meta), cnt_, leader);
    }
    mask_ = 0u;
    skip_ = 1u;
  }

  /// Whether this warp records (it is traced and has not flushed).
  __device__ __forceinline__ bool records() const { return mask_ != 0u; }

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
  const ktrace_arg* arg_;  // the launch's argument (the kernel's parameter)
  uint64_t base_;  // first event of this warp's slot
  uint32_t cnt_;   // entries recorded so far (events and anchors)
  // cap - 1; 0: this warp records nothing (warp-uniform), or has flushed
  uint32_t mask_;
  uint32_t skip_;  // not 0: this warp records nothing (warp-uniform), or has flushed
  // Low 32 bits of %clock at the last anchor (or open); with
  // KTRACE_ANCHORS_COUNT written by the anchors and read nowhere.
  uint32_t anchor_clk_;
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
  uint32_t lane_;
  uint32_t held_clk_ = 0;
  uint32_t held_tag_ = 0;
#endif
};

}  // namespace ktrace

#endif  // KTRACE_GLOBAL_CUH
