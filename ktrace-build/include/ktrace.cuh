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

#ifndef KTRACE_RECORDER
/// How events reach the buffer:
///   0  KTRACE_RECORDER_STORE: each event is one 8-byte streaming store,
///      made by every lane that reaches the marker (the same bytes to the
///      same address: one memory transaction). Markers may be reached by the
///      whole warp or by one lane alone (single-thread producer code).
///   1  KTRACE_RECORDER_RING: each lane holds one event of the current group
///      of 32 in registers; every 32 events the whole warp writes the group
///      with one coalesced 256-byte store. Markers must be reached by the
///      whole warp.
#define KTRACE_RECORDER 0
#endif
#define KTRACE_RECORDER_STORE 0

#define KTRACE_RECORDER_RING 1

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

/// Per-warp trace context.
///
/// Live state across a loop: the ring's base address (2 registers), the
/// event counter, the ring mask (0 when this warp is not traced), the
/// clock of the last time anchor (the leader flag is used at open and flush
/// only). The ring recorder
/// adds the lane index and the event this lane holds.
class Context {
 public:
  __device__ __forceinline__ explicit Context(const ktrace_arg& arg)
      : base_(0), cnt_(0), mask_(0), on_(false), leader_(0), anchor_clk_(0) {
    const uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    // Read from one lane: the compiler then knows every value derived from
    // it is warp-uniform, so the per-event skip branch needs no
    // reconvergence barrier.
    const uint32_t active = __activemask();
    const uint32_t warp = __shfl_sync(active, tid / 32, __ffs(active) - 1);
    const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const bool warp_on = warp < 32 && ((arg.warp_mask >> warp) & 1u);
    const uint32_t stride = arg.block_stride ? arg.block_stride : 1u;
    const uint32_t block_slot = block / stride;
    const bool block_on = (block % stride) == 0 && block_slot < arg.blocks_traced;
    on_ = arg.buffer != 0 && warp_on && block_on;
    leader_ = (on_ && elect_leader()) ? 1u : 0u;
    uint64_t slot = 0;
    if (on_) {
      const uint32_t warp_slot = __popc(arg.warp_mask & ((1u << warp) - 1u));
      const uint64_t slot_bytes =
          sizeof(ktrace_slot_meta) + (sizeof(ktrace_event) << arg.cap_log2);
      slot = arg.buffer +
             (static_cast<uint64_t>(block_slot) * arg.warps_traced + warp_slot) * slot_bytes;
      base_ = slot + sizeof(ktrace_slot_meta);
      mask_ = (1u << arg.cap_log2) - 1u;
    }
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
    lane_ = tid % 32;
#endif
    // The clock first, then the globaltimer: the order of every anchor.
    const uint64_t clk = clock64();
    const uint64_t gt = globaltimer();
    // The first event always records an anchor: the clock moves fastest
    // when a kernel's warps start, and a warp's first events then get a
    // measured time rather than one interpolated from its open.
    anchor_clk_ = static_cast<uint32_t>(clk) - KTRACE_ANCHOR_CYCLES;
    const uint32_t ids = warp | (smid() << layout::kSmidShift);
    store_v4_cs(slot + layout::kOpenTimers, (uint32_t)gt, (uint32_t)(gt >> 32), (uint32_t)clk,
                (uint32_t)(clk >> 32), leader_);
    store_v4_cs(slot + layout::kOpenIds, block, ids, KTRACE_OPEN_MAGIC, 0u, leader_);
  }

  __device__ __forceinline__ ~Context() { flush(); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Writes any events still held, the closing timer pair and the event
  /// count. Called by the destructor; later calls do nothing.
  __device__ __forceinline__ void flush() {
    if (!on_) return;
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
    const uint32_t held = cnt_ & 31u;
    if (lane_ < held) {
      store_event(base_ + (uint64_t)(((cnt_ & ~31u) + lane_) & mask_) * sizeof(ktrace_event),
                  held_clk_, held_tag_, true);
    }
#endif
    const uint64_t clk = clock64();
    const uint64_t gt = globaltimer();
    const uint64_t meta = base_ - sizeof(ktrace_slot_meta);
    store_v4_cs(meta + layout::kFlushTimers, (uint32_t)gt, (uint32_t)(gt >> 32), (uint32_t)clk,
                (uint32_t)(clk >> 32), leader_);
    store_v4_cs(meta + layout::kFlushCount, cnt_, KTRACE_FLUSH_MAGIC, 0u, 0u, leader_);
    on_ = false;
  }

  /// Records one event: `tag` is `region | type << 16`.
  __device__ __forceinline__ void record(uint32_t tag) {
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
    // One asm block: C++ branches here let the compiler move the user's code
    // across the clock read. Lane (cnt % 32) keeps each entry; when a group
    // of 32 is complete every lane of a traced warp writes its entry: one
    // coalesced 256-byte store. An anchor entry follows the event when the
    // last one is KTRACE_ANCHOR_CYCLES old.
    asm volatile(
        "{\n\t"
        ".reg .pred off, mine, full, again, fresh;\n\t"
        ".reg .u32 idx, pass, clk, age, glo, ghi;\n\t"
        ".reg .u64 addr, gt;\n\t"
        "setp.eq.u32 off, %8, 0;\n\t"
        "@off bra.uni KTRACE_DONE_%=;\n\t"
        "mov.u32 clk, %%clock;\n\t"
        KTRACE_RING_PUSH_("EV", "clk", "%6")
#if KTRACE_ANCHOR_CYCLES
        KTRACE_ANCHOR_DUE_("%3", "%9", "KTRACE_DONE_%=")
        "mov.u64 gt, %%globaltimer;\n\t"
        "mov.b64 {glo, ghi}, gt;\n\t"
        "and.b32 ghi, ghi, 0xffff;\n\t"
        "or.b32 ghi, ghi, %10;\n\t"
        "mov.u32 %3, clk;\n\t"
        KTRACE_RING_PUSH_("AN", "glo", "ghi")
#endif
        "KTRACE_DONE_%=:\n\t"
        "}"
        : "+r"(cnt_), "+r"(held_clk_), "+r"(held_tag_), "+r"(anchor_clk_)
        : "r"(mask_), "l"(base_), "r"(tag), "r"(lane_), "r"((uint32_t)on_),
          "n"(~(KTRACE_ANCHOR_CYCLES - 1u)), "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift)
        : "memory");
#else
    // One asm block, so the compiler cannot move the user's code across the
    // clock read. Warps that are not traced jump over the event (a uniform
    // branch); in a traced warp every lane that reaches the marker stores
    // the same event to the same address, which costs one transaction and
    // saves a per-event leader test. When the clock has left the period of
    // KTRACE_ANCHOR_CYCLES its last time anchor was in, the warp falls
    // through into the anchor: it reads %globaltimer and stores it as the
    // next entry, paired with this event's clock. (Computing the next
    // address ahead, or dropping the skip branch, measured worse on the gemm
    // example: see docs/performance.md.)
    asm volatile(
        "{\n\t"
        ".reg .pred off, fresh;\n\t"
        ".reg .u32 clk, idx, age, glo, ghi;\n\t"
        ".reg .u64 addr, gt;\n\t"
        "setp.eq.u32 off, %2, 0;\n\t"
        "@off bra.uni KTRACE_SKIP_%=;\n\t"
        "mov.u32 clk, %%clock;\n\t"
        "and.b32 idx, %0, %2;\n\t"
        "mad.wide.u32 addr, idx, 8, %3;\n\t"
        "st.global.cs.v2.u32 [addr], {clk, %4};\n\t"
        "add.u32 %0, %0, 1;\n\t"
#if KTRACE_ANCHOR_CYCLES
        KTRACE_ANCHOR_DUE_("%1", "%5", "KTRACE_SKIP_%=")
        "mov.u64 gt, %%globaltimer;\n\t"
        "mov.b64 {glo, ghi}, gt;\n\t"
        "and.b32 ghi, ghi, 0xffff;\n\t"
        "or.b32 ghi, ghi, %6;\n\t"
        "and.b32 idx, %0, %2;\n\t"
        "mad.wide.u32 addr, idx, 8, %3;\n\t"
        "st.global.cs.v2.u32 [addr], {glo, ghi};\n\t"
        "add.u32 %0, %0, 1;\n\t"
        "mov.u32 %1, clk;\n"
#endif
        "KTRACE_SKIP_%=:\n\t"
        "}"
        : "+r"(cnt_), "+r"(anchor_clk_)
        : "r"(mask_), "l"(base_), "r"(tag), "n"(~(KTRACE_ANCHOR_CYCLES - 1u)),
          "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift)
        : "memory");
#endif
  }

 private:
  uint64_t base_;  // first event of this warp's slot
  uint32_t cnt_;   // entries recorded so far (events and anchors)
  uint32_t mask_;  // cap - 1
  bool on_;        // this warp is traced (warp-uniform)
  uint32_t leader_;  // 1: this lane writes the metadata
  uint32_t anchor_clk_;  // low 32 bits of %clock at the last anchor (or open)
#if KTRACE_RECORDER == KTRACE_RECORDER_RING
  uint32_t lane_;
  uint32_t held_clk_ = 0;
  uint32_t held_tag_ = 0;
#endif
};

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
