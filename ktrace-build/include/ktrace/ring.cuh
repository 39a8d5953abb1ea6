// ktrace device header, part of ktrace.cuh (include that, not this): the
// PTX of KTRACE_RECORDER_RING's events, the register-ring recorder (each
// lane holds one event of the current group of 32; the whole warp writes a
// full group with one coalesced store). Its Context, shared with the store
// recorder, is in global.cuh.
#ifndef KTRACE_RING_CUH
#define KTRACE_RING_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/ring.cuh"
#endif

#include "common.cuh"

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

// The PTX of the ring recorder's events, for record() and record_value() of
// the Context in global.cuh. AFTER: the label where the event's paths end
// (its anchor, if due, recorded).
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

#include "global.cuh"

#endif  // KTRACE_RING_CUH
