// ktrace device header, part of ktrace.cuh (include that, not this): what
// every recorder of the traced build uses. Timer and lane reads, the
// predicated streaming stores, the time-anchor period and its test, the
// buffer offsets checked against ktrace_layout.h, and the warp's slot:
// whether the warp is sampled (open_slot), its open metadata and its flush
// metadata.
#ifndef KTRACE_COMMON_CUH
#define KTRACE_COMMON_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/common.cuh"
#endif

namespace ktrace {

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

// How the store recorder times its events (the ring and shared-memory
// recorders always take time anchors by the clock, the newest-N recorder
// none):
//   KTRACE_ANCHORS_STAMP (3, the default): no anchor entries; every event
//     carries bits 5..17 of %globaltimer in the top 13 bits of its tag
//     (layout version 6), so each event is its own anchor and no event
//     tests whether one is due. Warps open with KTRACE_OPEN_STAMP_MAGIC.
//     Store recorder only. An event is a straight block of instructions,
//     which ptxas may predicate instead of branching over it; ktrace-build
//     warns where it did so inside a loop (docs/performance.md).
//   KTRACE_ANCHORS_CLOCK (0): by the clock, after the first event and
//     after every event in another period of KTRACE_ANCHOR_CYCLES than the
//     last anchor (one register holds the last anchor's clock across the
//     kernel). The default of the other recorders, and of the store
//     recorder built with a KTRACE_ANCHOR_CYCLES other than the default
//     (0: no anchors at all).
//   KTRACE_ANCHORS_COUNT (2): by the event count, after the first event
//     and then after every KTRACE_ANCHOR_EVENTS-th entry (no register of
//     its own); warps open with KTRACE_OPEN_SHARED_MAGIC and the decoder
//     maps each through all the anchors recorded on its SM, its own among
//     them. Cheaper on some kernels, dearer on others (docs/performance.md);
//     a warp whose SM records anchors rarely gets rare anchors.
#define KTRACE_ANCHORS_CLOCK 0
#define KTRACE_ANCHORS_COUNT 2
#define KTRACE_ANCHORS_STAMP 3
#ifndef KTRACE_ANCHORS
#if KTRACE_RECORDER == KTRACE_RECORDER_STORE && KTRACE_ANCHOR_CYCLES == KTRACE_ANCHOR_CYCLES_DEFAULT
#define KTRACE_ANCHORS KTRACE_ANCHORS_STAMP
#else
#define KTRACE_ANCHORS KTRACE_ANCHORS_CLOCK
#endif
#endif
#if KTRACE_ANCHORS != KTRACE_ANCHORS_CLOCK && KTRACE_ANCHORS != KTRACE_ANCHORS_COUNT && \
    KTRACE_ANCHORS != KTRACE_ANCHORS_STAMP
#error "ktrace: KTRACE_ANCHORS must be KTRACE_ANCHORS_CLOCK, KTRACE_ANCHORS_COUNT or KTRACE_ANCHORS_STAMP"
#endif
#if KTRACE_ANCHORS == KTRACE_ANCHORS_STAMP && KTRACE_RECORDER != KTRACE_RECORDER_STORE
#error "ktrace: KTRACE_ANCHORS_STAMP needs the store recorder (KTRACE_RECORDER_STORE)"
#endif
#if !KTRACE_STORE_BRANCH && \
    (KTRACE_RECORDER != KTRACE_RECORDER_STORE || KTRACE_ANCHORS != KTRACE_ANCHORS_STAMP)
#error "ktrace: KTRACE_STORE_BRANCH 0 needs stamped events of the store recorder"
#endif
// Sites of a continuous session (KTRACE_ARG_SITE): 1 (the default), the
// open's ticket and its reads of the site and the flush's count carry an
// L2 evict-last cache policy (sm_80 and later), so that the site's lines
// stay in the L2 between launches of kernels that stream more than the L2
// through it (docs/continuous.md); 0, plain accesses.
#ifndef KTRACE_SITE_EVICT_LAST
#define KTRACE_SITE_EVICT_LAST 1
#endif
#if KTRACE_SITE_EVICT_LAST && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#undef KTRACE_SITE_EVICT_LAST
#define KTRACE_SITE_EVICT_LAST 0
#endif
// The pieces of a site access under that policy, for the asm of
// site_open and close_at_site: the policy's declaration (a 64-bit
// `keep_l2`), the access's qualifier, its policy operand (the operand's
// number, "%N") and the operand's input. Empty with plain accesses.
#if KTRACE_SITE_EVICT_LAST
#define KTRACE_SITE_POLICY_DECL_ \
  uint64_t keep_l2;              \
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep_l2))
#define KTRACE_SITE_HINT_ ".L2::cache_hint"
#define KTRACE_SITE_POLICY_(N) ", " N
#define KTRACE_SITE_POLICY_IN_ , "l"(keep_l2)
#else
#define KTRACE_SITE_POLICY_DECL_ \
  do {                           \
  } while (0)
#define KTRACE_SITE_HINT_ ""
#define KTRACE_SITE_POLICY_(N) ""
#define KTRACE_SITE_POLICY_IN_
#endif
// KTRACE_ANCHORS_COUNT: entries between a warp's anchors (a power of two).
#ifndef KTRACE_ANCHOR_EVENTS
#define KTRACE_ANCHOR_EVENTS 16u
#endif
static_assert(KTRACE_ANCHOR_EVENTS >= 2u && KTRACE_ANCHOR_EVENTS <= (1u << 20) &&
                  (KTRACE_ANCHOR_EVENTS & (KTRACE_ANCHOR_EVENTS - 1u)) == 0,
              "ktrace: KTRACE_ANCHOR_EVENTS must be a power of two from 2 to 2^20");

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
                  offsetof(ktrace_slot_meta, launch) == kOpenIds + 12,
              "ktrace: open store writes {block, warp | smid << 16, magic, launch}");
static_assert(offsetof(ktrace_slot_meta, final_clock64) == kFlushTimers + 8,
              "ktrace: flush store writes {globaltimer, clock64}");
static_assert(offsetof(ktrace_slot_meta, flush_magic) == kFlushCount + 4 &&
                  offsetof(ktrace_slot_meta, grid_id) == kFlushCount + 8,
              "ktrace: flush store writes {count, magic, grid_id}");
static_assert(sizeof(ktrace_keep) == 16 && sizeof(ktrace_site) == 128 &&
                  offsetof(ktrace_site, flushed) == 0 && offsetof(ktrace_site, dropped) == 4 &&
                  offsetof(ktrace_site, warps) == 8 && offsetof(ktrace_site, keep) == 16 &&
                  offsetof(ktrace_site, step) == 32 &&
                  offsetof(ktrace_site, slab_count) == 48 &&
                  offsetof(ktrace_site, drained) == 52 &&
                  offsetof(ktrace_site, triggers_asked) == 56 &&
                  offsetof(ktrace_site, triggered) == 60 &&
                  offsetof(ktrace_site, done_launch) == 64 &&
                  offsetof(ktrace_site, done_kept) == 68,
              "ktrace: the site's fields are where ktrace_layout.h says");
static_assert(sizeof(ktrace_event) == 8 && offsetof(ktrace_event, clock) == 0 &&
                  offsetof(ktrace_event, region) == 4 &&
                  offsetof(ktrace_event, region) + 2 == offsetof(ktrace_event, type),
              "ktrace: an event is {clock, region | type << 16}");
}  // namespace layout

/// Which slot a warp writes, computed once at open from the launch's
/// `ktrace_arg`: whether the warp is traced, its warp index in the block,
/// the block's linear index, the address of its slot (0 when not traced)
/// and the launch written to it.
struct Open {
  bool skip;
  uint32_t warp;
  uint32_t block;
  uint64_t slot;
  uint32_t launch;
};

/// A warp's open at the site at `site` (see ktrace_site in
/// ktrace_layout.h), called by every lane of the warp: if `take`, lane
/// `src` takes the ticket of slot `slot` (its launch) and with the same
/// wait reads the keep rule and the ring's state; slot 0 publishes the
/// launches that have ended and the rule's next window, and copies the
/// host's step into a kept launch's slab step. Returns to every
/// lane in `active` the launch << 32 | the slab the warp writes
/// (KTRACE_SLAB_NONE: none). Not inlined, and lean in registers (the
/// kernel's count includes a callee's): a warp calls it once, at open;
/// every lane calls it, so no caller diverges around the call.
__device__ __noinline__ uint64_t site_open(uint64_t site, uint32_t slot, bool take, uint32_t active,
                                           int src) {
  uint64_t r = 0;
  if (take && lane_id() == static_cast<uint32_t>(src)) {
    uint32_t n;
    uint32_t from, until, base, every, slab_count, drained, triggered;
    KTRACE_SITE_POLICY_DECL_;
    asm volatile("atom.relaxed.gpu.global.add" KTRACE_SITE_HINT_ ".u32 %0, [%1], 1" KTRACE_SITE_POLICY_(
                     "%2") ";"
                 : "=r"(n)
                 : "l"(site + sizeof(ktrace_site) + 4ull * slot) KTRACE_SITE_POLICY_IN_
                 : "memory");
    // Weak loads: what the previous launch wrote is visible to this one,
    // and a late `drained` only drops a launch. They go out with the
    // ticket, so the warp waits for one round trip to the site's line: the
    // keep rule, the ring's state and `triggered` (not `triggers_asked`,
    // which only slot 0 of a triggered site needs: one register fewer in
    // every traced kernel).
    asm volatile("ld.global" KTRACE_SITE_HINT_ ".v4.u32 {%0, %1, %2, %3}, [%4]" KTRACE_SITE_POLICY_(
                     "%5") ";"
                 : "=r"(from), "=r"(until), "=r"(base), "=r"(every)
                 : "l"(site + offsetof(ktrace_site, keep)) KTRACE_SITE_POLICY_IN_
                 : "memory");
    asm volatile("ld.global" KTRACE_SITE_HINT_ ".v2.u32 {%0, %1}, [%2]" KTRACE_SITE_POLICY_("%3") ";"
                 : "=r"(slab_count), "=r"(drained)
                 : "l"(site + offsetof(ktrace_site, slab_count)) KTRACE_SITE_POLICY_IN_
                 : "memory");
    asm volatile("ld.global" KTRACE_SITE_HINT_ ".u32 %0, [%1]" KTRACE_SITE_POLICY_("%2") ";"
                 : "=r"(triggered)
                 : "l"(site + offsetof(ktrace_site, triggered)) KTRACE_SITE_POLICY_IN_
                 : "memory");
    // A held site (the host opens and closes its window between
    // launches): launch n applies an open or a close the host asked for to
    // the rule it read, as slot 0 then stores it, so every warp of launch
    // n agrees whether it read `keep` before that store or after it.
    bool held = false;
    if (triggered == KTRACE_KEEP_HELD_OPEN && until != KTRACE_KEEP_OPEN_END) {
      base += until - from;
      from = n;
      until = KTRACE_KEEP_OPEN_END;
      every = 1u;
      held = true;
    } else if (triggered == KTRACE_KEEP_HELD_CLOSED && until == KTRACE_KEEP_OPEN_END) {
      until = n;
      held = true;
    }
    // Launch n's place in the window: n = from + q * every + rem.
    const bool in = n >= from && n < until;
    const uint32_t off = n - from;
    const uint32_t q = every > 1u ? off / every : off;
    const uint32_t rem = off - q * every;
    if (slot == 0u) {
      // Launches before n have ended: the kept ones among them.
      uint32_t before = base;
      if (in) {
        before += q + (rem != 0u);
      } else if (n >= until && until > from) {
        before += (until - from + every - 1u) / every;
      }
      asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(
                       site + offsetof(ktrace_site, done_launch)),
                   "r"(n), "r"(before)
                   : "memory");
      const uint32_t granted = base + (until - from);
      if (held) {
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(
                         site + offsetof(ktrace_site, keep)),
                     "r"(from), "r"(until), "r"(base), "r"(every)
                     : "memory");
      } else if (triggered == KTRACE_KEEP_TRIGGERED) {
        uint32_t asked;
        asm volatile("ld.global.u32 %0, [%1];"
                     : "=r"(asked)
                     : "l"(site + offsetof(ktrace_site, triggers_asked))
                     : "memory");
        if (asked != granted) {
          // More launches asked for. A window that still holds launch n or
          // a later one grows; one that ended makes way for a new one from
          // n + 1. Either way launch n keeps its place, so warps of this
          // launch that read the rule after this store agree with those
          // that read it before.
          const uint32_t more = asked - granted;
          uint32_t nf = from, nu = until + more, nb = base;
          if (until <= n) {
            nf = n + 1u;
            nu = n + 1u + more;
            nb = granted;
          }
          asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(
                           site + offsetof(ktrace_site, keep)),
                       "r"(nf), "r"(nu), "r"(nb), "r"(1u)
                       : "memory");
        }
      }
    }
    uint32_t slab = KTRACE_SLAB_NONE;
    if (in && rem == 0u) {
      const uint32_t kept = base + q;
      // With KTRACE_SLAB_NEWEST set in slab_count the test always holds
      // and the launch writes over its slab, drained or not.
      if (kept - drained < slab_count) {
        slab = kept & (slab_count - 1u) & ~KTRACE_SLAB_NEWEST;
        if (slot == 0u) {
          // The host's step into the slab's step (below the site). Read
          // here, not with the ticket, so that no register waits for it
          // there (the kernel's count includes this call's); its 32-byte
          // sector is slab_count's and drained's, which the ticket's
          // loads just brought into the L1.
          uint32_t step_lo, step_hi;
          asm volatile("ld.global.v2.u32 {%0, %1}, [%2];"
                       : "=r"(step_lo), "=r"(step_hi)
                       : "l"(site + offsetof(ktrace_site, step))
                       : "memory");
          asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(site - 8ull * (slab + 1u)),
                       "r"(step_lo), "r"(step_hi)
                       : "memory");
        }
      } else {
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(
                         site + offsetof(ktrace_site, dropped))
                     : "memory");
      }
    }
    r = (static_cast<uint64_t>(n) << 32) | slab;
  }
  return __shfl_sync(active, r, src);
}

__device__ __forceinline__ Open open_slot(const ktrace_arg& arg) {
  Open o;
#if KTRACE_NULL_EARLY_OUT
  o.skip = true;
  o.warp = 0;
  o.block = 0;
  o.slot = 0;
  o.launch = 0;
  // A launch that traces nothing: one test of the parameter, uniform
  // across the grid, and none of what follows (KTRACE_NULL_EARLY_OUT).
  if (arg.buffer == 0) return o;
#endif
  const uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  // Read from one lane: the compiler then knows every value derived from
  // it is warp-uniform, so the per-event skip branch needs no
  // reconvergence barrier.
  const uint32_t active = __activemask();
  const int src = __ffs(active) - 1;
  o.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  // The division by the block stride only where blocks are sampled: a
  // launch that traces every block (stride 1, or 0) skips it, one uniform
  // branch on the parameter.
  uint32_t block_slot = o.block;
  bool block_on = o.block < arg.blocks_traced;
  if (arg.block_stride > 1u) {
    block_slot = o.block / arg.block_stride;
    block_on = (o.block % arg.block_stride) == 0 && block_slot < arg.blocks_traced;
  }
  const bool site = (arg.launch & KTRACE_ARG_SITE) != 0;
  const uint32_t warp = tid / 32;
  const bool warp_on = warp < 32 && ((arg.warp_mask >> warp) & 1u);
  const bool sampled = arg.buffer != 0 && warp_on && block_on;
  const uint32_t warp_slot = __popc(arg.warp_mask & ((1u << warp) - 1u));
  const uint32_t slot = block_slot * arg.warps_traced + warp_slot;
  // Traced through a site (KTRACE_ARG_SITE): a sampled warp takes its
  // slot's ticket, {launch, slab}. A warp that is not sampled never
  // touches the site.
  const uint32_t warps = arg.warps_traced * arg.blocks_traced;
  const uint64_t ticket =
      site && arg.buffer != 0 ? site_open(arg.buffer, slot, sampled, active, src) : 0ull;
  const uint32_t records =
      sampled && !(site && static_cast<uint32_t>(ticket) == KTRACE_SLAB_NONE);
  // One shuffle of the facts the markers branch on, from one lane.
  const uint32_t facts = __shfl_sync(active, warp | (records << 8), src);
  o.warp = facts & 0xffu;
  o.skip = !((facts >> 8) & 1u);
  o.launch = arg.launch;
  o.slot = 0;
  if (!o.skip) {
    const uint64_t slot_bytes = sizeof(ktrace_slot_meta) + (sizeof(ktrace_event) << arg.cap_log2);
    uint64_t base = arg.buffer;
    if (site) {
      // The site's counters and slabs follow it; the slot's launch is the
      // ticket's.
      o.launch = static_cast<uint32_t>(ticket >> 32);
      base = arg.buffer + sizeof(ktrace_site) + KTRACE_SITE_COUNTER_BYTES(warps) +
             static_cast<uint32_t>(ticket) * slot_bytes * warps;
    }
    // The slot again from the shuffled warp index, which the compiler
    // knows is warp-uniform.
    const uint32_t uniform_slot =
        block_slot * arg.warps_traced + __popc(arg.warp_mask & ((1u << o.warp) - 1u));
    o.slot = base + static_cast<uint64_t>(uniform_slot) * slot_bytes;
  }
  return o;
}

/// Writes the open half of a slot's metadata (from the lane where `leader`
/// is set): the ids and the open magic (KTRACE_OPEN_SHARED_MAGIC for a warp
/// whose times go through its SM's anchors), then the timer pair read after
/// them (the clock first, then the globaltimer: the order of every
/// anchor); returns the pair's clock. The ids go first so that their four
/// registers are free again before the timer pair's four are taken (2
/// registers fewer on big_grid and block_sum_256 with the store recorder).
__device__ __forceinline__ uint64_t write_open(const Open& o, bool leader,
                                               uint32_t magic = KTRACE_OPEN_MAGIC) {
  const uint32_t ids = o.warp | (smid() << layout::kSmidShift);
  store_v4_cs(o.slot + layout::kOpenIds, o.block, ids, magic, o.launch, leader);
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

/// %gridid: which grid the warp belongs to (a plain launch, or a node of a
/// CUDA graph, whose every replay reads the same id).
__device__ __forceinline__ uint64_t grid_id() {
  uint64_t r;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(r));
  return r;
}

/// The closing timer pair of a slot's flush half, from the lane where
/// `leader` is set.
__device__ __forceinline__ void store_flush_timers(uint64_t slot, uint64_t gt, uint64_t clk,
                                                   bool leader) {
  store_v4_cs(slot + layout::kFlushTimers, (uint32_t)gt, (uint32_t)(gt >> 32), (uint32_t)clk,
              (uint32_t)(clk >> 32), leader);
}

/// The entry count, the flush magic and `grid` (%gridid) of a slot's flush
/// half, from the lane where `leader` is set.
__device__ __forceinline__ void store_flush_count(uint64_t slot, uint32_t count, uint64_t grid,
                                                  bool leader) {
  store_v4_cs(slot + layout::kFlushCount, count, KTRACE_FLUSH_MAGIC, (uint32_t)grid,
              (uint32_t)(grid >> 32), leader);
}

/// The flush half of a slot's metadata of a launch traced through a site
/// (KTRACE_ARG_SITE), and the warp's count at the site, from the lane
/// where `leader` is set; `gt` and `clk` are the closing timer pair.
///
/// On a site whose launches may overlap (KTRACE_ARG_OVERLAP) the count
/// goes first, then, once every lane's stores are visible to the GPU, the
/// closing timer pair, which tells the host that the slot is whole.
/// Otherwise the pair first, as write_flush does.
///
/// Then it adds 1 to the site's `flushed` (relaxed) and does not wait for
/// it. No release: the host learns that a launch's stores have landed from
/// the next launch of the site (its kernel started after this one
/// completed), or from each slot's closing pair on an overlapping site,
/// and a site's newest launch only once the site has been quiet for a poll
/// (ktrace_layout.h). The count carries the open's L2 policy too: a kernel
/// completes once its reductions have, and one whose line was evicted
/// waits for DRAM.
///
/// Out of line, as site_open: a kernel carries a call here, not this code,
/// in its register allocation.
__device__ __noinline__ void close_at_site(uint64_t site, uint32_t launch, uint64_t slot,
                                           uint32_t count, bool leader, uint64_t gt,
                                           uint64_t clk) {
  const uint64_t grid = grid_id();
  if (launch & KTRACE_ARG_OVERLAP) {
    // The lanes' events are ordered before the leader's fence by the warp
    // barrier; the fence is cumulative.
    __syncwarp(__activemask());
    store_flush_count(slot, count, grid, leader);
    if (leader) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    store_flush_timers(slot, gt, clk, leader);
  } else {
    store_flush_timers(slot, gt, clk, leader);
    store_flush_count(slot, count, grid, leader);
  }
  if (leader) {
    KTRACE_SITE_POLICY_DECL_;
    asm volatile("red.relaxed.gpu.global.add" KTRACE_SITE_HINT_ ".u32 [%0], 1" KTRACE_SITE_POLICY_(
                     "%1") ";" ::"l"(site + offsetof(ktrace_site, flushed)) KTRACE_SITE_POLICY_IN_
                 : "memory");
  }
}

/// A recording warp's close (from the lane where `leader` is set): the
/// flush half of its slot's metadata (the closing timer pair, the entry
/// count and %gridid), and for a launch traced through a site, its count
/// there (close_at_site). The argument is read from the kernel's
/// parameters: it costs no register across the kernel.
__device__ __forceinline__ void write_flush(const ktrace_arg& arg, uint64_t slot, uint32_t count,
                                            bool leader) {
  const uint64_t clk = clock64();
  const uint64_t gt = globaltimer();
  if (arg.launch & KTRACE_ARG_SITE) {
    close_at_site(arg.buffer, arg.launch, slot, count, leader, gt, clk);
    return;
  }
  store_flush_timers(slot, gt, clk, leader);
  store_flush_count(slot, count, grid_id(), leader);
}

}  // namespace ktrace

#endif  // KTRACE_COMMON_CUH
