// ktrace device header, part of ktrace.cuh (include that, not this): the
// PTX of KTRACE_RECORDER_STORE's events, the per-event store recorder (the
// default: one 8-byte streaming store to global memory per event). Its
// Context, shared with the ring recorder, is in global.cuh.
#ifndef KTRACE_STORE_CUH
#define KTRACE_STORE_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/store.cuh"
#endif

#include "common.cuh"

// The PTX of the store recorder's events, for record() and record_value() of
// the Context in global.cuh. AFTER: the label where the event's paths end
// (its anchor, if due, recorded).
// One asm block, so the compiler cannot move the user's code across the
// clock read. Warps that are not traced jump over the event (a uniform
// branch); in a traced warp every lane that reaches the marker stores the
// same event to the same address, which costs one transaction and saves a
// per-event leader test. When the clock has left the period of
// KTRACE_ANCHOR_CYCLES its last time anchor was in (with
// KTRACE_ANCHORS_COUNT: when the event's count is a multiple of
// KTRACE_ANCHOR_EVENTS), the warp falls through into the anchor: it reads
// %globaltimer and stores it as the next entry, paired with this event's
// clock. (Computing the next address ahead, or
// dropping the skip branch, measured worse on the gemm example: see
// docs/lab/performance-notes.md.) Operands: %0 the count, %1 the clock of the last
// anchor, %2 the ring mask, %3 the slot's events, %4 the tag, %5 the
// anchor period mask, %6 the anchor's type, %7 the skip flag; a value's
// vtag and value follow (%8, %9).
#if KTRACE_ANCHORS == KTRACE_ANCHORS_STAMP
// With KTRACE_ANCHORS_STAMP no anchor is ever due: each event reads
// %globaltimer's low word after its clock and stores its bits 5..17 (32 ns
// steps, 262 us around) in the tag's top 13 bits (layout version 6). %1 is
// written nowhere and read nowhere, so no register holds it. %5 keeps the
// timer's stamp bits where they are, and %6 multiplies them up to the tag's
// top bits while the tag (below them) is added: two instructions (an AND
// and an IMAD) where a shift, a mask and an OR take three.
#define KTRACE_STAMP_TIMER_MASK_ (((1u << KTRACE_STAMP_BITS) - 1u) << KTRACE_STAMP_LOW_BIT)
#define KTRACE_GLOBAL_OUTPUTS_ "+r"(cnt_), "=r"(anchor_clk_)
#define KTRACE_GLOBAL_INPUTS_(tag) \
  "r"(mask_), "l"(base_), "r"(tag), "n"(KTRACE_STAMP_TIMER_MASK_),              \
      "n"(1u << (32u - KTRACE_STAMP_BITS - KTRACE_STAMP_LOW_BIT)), "r"(skip_)
#elif KTRACE_ANCHORS == KTRACE_ANCHORS_COUNT && KTRACE_ANCHOR_CYCLES
// With KTRACE_ANCHORS_COUNT the anchor is due by the event count, not the
// clock: %1 is written on the anchor's path only and read nowhere, so no
// register holds it across the kernel, and %5 is KTRACE_ANCHOR_EVENTS - 1.
#define KTRACE_GLOBAL_OUTPUTS_ "+r"(cnt_), "=r"(anchor_clk_)
#define KTRACE_GLOBAL_INPUTS_(tag)                                                    \
  "r"(mask_), "l"(base_), "r"(tag), "n"(KTRACE_ANCHOR_EVENTS - 1u),                   \
      "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift), "r"(skip_)
// The event's anchor is due when its ring index `idx` (the count before it,
// masked by the ring) is a multiple of KTRACE_ANCHOR_EVENTS: the first
// event, then every KTRACE_ANCHOR_EVENTS-th entry (every cap-th when the
// ring is shorter). One LOP3 with a predicate output and a branch.
#define KTRACE_GLOBAL_DUE_(AFTER) \
  "and.b32 age, idx, %5;\n\t" \
  "setp.ne.u32 fresh, age, 0;\n\t" \
  "@fresh bra.uni " AFTER ";\n\t"
// After record_value()'s event, whose count is now %0: due when the
// event's own count was a multiple of KTRACE_ANCHOR_EVENTS.
#define KTRACE_GLOBAL_DUE_V_(AFTER) \
  "and.b32 age, %0, %5;\n\t" \
  "setp.ne.u32 fresh, age, 1;\n\t" \
  "@fresh bra.uni " AFTER ";\n\t"
#else
#define KTRACE_GLOBAL_OUTPUTS_ "+r"(cnt_), "+r"(anchor_clk_)
#define KTRACE_GLOBAL_INPUTS_(tag)                                                    \
  "r"(mask_), "l"(base_), "r"(tag), "n"(~(KTRACE_ANCHOR_CYCLES - 1u)),                \
      "n"(KTRACE_EVENT_ANCHOR << layout::kTypeShift), "r"(skip_)
#define KTRACE_GLOBAL_DUE_(AFTER) KTRACE_ANCHOR_DUE_("%1", "%5", AFTER)
#define KTRACE_GLOBAL_DUE_V_(AFTER) KTRACE_ANCHOR_DUE_("%1", "%5", AFTER)
#endif
#define KTRACE_GLOBAL_REGS_ \
  "{\n\t" \
  ".reg .pred off, fresh;\n\t" \
  ".reg .u32 clk, idx, age, glo, ghi;\n\t" \
  ".reg .u64 addr, gt, vaddr;\n\t" \
  "setp.ne.u32 off, %7, 0;\n\t"
#if KTRACE_STORE_BRANCH
// A warp that records nothing branches over the event.
#define KTRACE_GLOBAL_HEAD_ KTRACE_GLOBAL_REGS_ "@off bra.uni KTRACE_SKIP_%=;\n\t"
#define KTRACE_GLOBAL_ST_ "st.global.cs.v2.u32"
#else
// No branch (KTRACE_STORE_BRANCH 0): every warp runs the event, and the
// stores of a warp that records nothing are predicated off.
#define KTRACE_GLOBAL_HEAD_ KTRACE_GLOBAL_REGS_
#define KTRACE_GLOBAL_ST_ "@!off st.global.cs.v2.u32"
#endif
#define KTRACE_GLOBAL_STORE_(A, B) \
  "and.b32 idx, %0, %2;\n\t" \
  "mad.wide.u32 addr, idx, 8, %3;\n\t" \
  KTRACE_GLOBAL_ST_ " [addr], {" A ", " B "};\n\t" \
  "add.u32 %0, %0, 1;\n\t"
// The event's clock read and the tag it stores beside it: with
// KTRACE_ANCHORS_STAMP the clock, then %globaltimer's low word, whose stamp
// bits go into the tag (`glo`); otherwise the clock and the tag as given.
#if KTRACE_ANCHORS == KTRACE_ANCHORS_STAMP
#define KTRACE_GLOBAL_CLOCK_ \
  "mov.u32 clk, %%clock;\n\t" \
  "mov.u32 glo, %%globaltimer_lo;\n\t" \
  "and.b32 glo, glo, %5;\n\t" \
  "mad.lo.u32 glo, glo, %6, %4;\n\t"
#define KTRACE_GLOBAL_TAG_ "glo"
#else
#define KTRACE_GLOBAL_CLOCK_ "mov.u32 clk, %%clock;\n\t"
#define KTRACE_GLOBAL_TAG_ "%4"
#endif
#if KTRACE_ANCHOR_CYCLES && KTRACE_ANCHORS != KTRACE_ANCHORS_STAMP
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  KTRACE_GLOBAL_CLOCK_ \
  KTRACE_GLOBAL_STORE_("clk", KTRACE_GLOBAL_TAG_) \
  KTRACE_GLOBAL_DUE_(AFTER) \
  "mov.u64 gt, %%globaltimer;\n\t" \
  "mov.b64 {glo, ghi}, gt;\n\t" \
  "and.b32 ghi, ghi, 0xffff;\n\t" \
  "or.b32 ghi, ghi, %6;\n\t" \
  KTRACE_GLOBAL_STORE_("glo", "ghi") \
  "mov.u32 %1, clk;\n"
#else
#define KTRACE_GLOBAL_EVENT_(AFTER) \
  KTRACE_GLOBAL_CLOCK_ \
  KTRACE_GLOBAL_STORE_("clk", KTRACE_GLOBAL_TAG_)
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
  KTRACE_GLOBAL_CLOCK_ \
  "and.b32 idx, %0, %2;\n\t" \
  "mad.wide.u32 addr, idx, 8, %3;\n\t" \
  "add.u32 %0, %0, 1;\n\t" \
  KTRACE_GLOBAL_VADDR_ \
  KTRACE_GLOBAL_ST_ " [addr], {clk, " KTRACE_GLOBAL_TAG_ "};\n\t" \
  KTRACE_GLOBAL_ANCHOR_V_(AFTER)
#if KTRACE_ANCHOR_CYCLES && KTRACE_ANCHORS != KTRACE_ANCHORS_STAMP
#define KTRACE_GLOBAL_ANCHOR_V_(AFTER) \
  KTRACE_GLOBAL_DUE_V_(AFTER) \
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
  KTRACE_GLOBAL_ST_ " [vaddr], {%9, %8};\n\t" \
  "add.u32 %0, %0, 1;\n\t"

#include "global.cuh"

#endif  // KTRACE_STORE_CUH
