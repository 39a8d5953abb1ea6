/* ktrace buffer layout: the single declaration shared by the device header
 * (ktrace.cuh) and the Rust decoder (ktrace-runtime, checked against this file
 * by its `layout` test). Plain C, so C, C++, CUDA and bindgen all read it.
 *
 * The device buffer is an array of slots, one per traced warp:
 *
 *   slot s = [ ktrace_slot_meta (64 B) | ktrace_event[cap] (8 B each) ]
 *
 * Slot index = block_slot * warps_traced + warp_slot, where block_slot counts
 * the traced blocks (linear block index / block_stride) and warp_slot counts
 * the traced warps of a block below this one (popcount of the warp mask).
 * Everything is little-endian, as the device writes it.
 */
#ifndef KTRACE_LAYOUT_H
#define KTRACE_LAYOUT_H

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

/* Bumped whenever anything in this file changes meaning.
 *   1: events and the open/flush timer pairs (globaltimer read first).
 *   2: time anchors in the event ring (KTRACE_EVENT_ANCHOR); the open and
 *      flush pairs read %clock64 first, then %globaltimer, as anchors do.
 *   3: value entries (KTRACE_EVENT_VALUE) after events recorded with a
 *      32-bit value (KTRACE_B_V, KTRACE_E_V, KTRACE_M_V).
 *   4: the slot's `launch` (was reserved0) and `grid_id` (was reserved1);
 *      an argument may point at a ktrace_site (KTRACE_ARG_SITE) instead of
 *      slot 0, for sessions that trace many launches into a persistent
 *      arena. */
#define KTRACE_LAYOUT_VERSION 4u

/* Event types (the 16-bit `type` field of an event). */
#define KTRACE_EVENT_BEGIN 0u
#define KTRACE_EVENT_END 1u
#define KTRACE_EVENT_MARK 2u
/* A time anchor (layout version 2): a %globaltimer reading taken right
 * after the %clock read of the event just before it in the ring. Its
 * `clock` field holds bits 0..31 of %globaltimer and its `region` field
 * bits 32..47; the decoder takes bits 48..63 from the slot's open time.
 * A warp records one after its first event and after every event whose
 * %clock is in another period of KTRACE_ANCHOR_CYCLES cycles than its
 * previous anchor's (so an event without an anchor is less than that many
 * cycles after the last anchor). */
#define KTRACE_EVENT_ANCHOR 3u
/* A value (layout version 3): the 32-bit value recorded with the event
 * before it in the ring (anchors skipped: a value follows its event and
 * that event's anchor, if any). Its `clock` field holds the value and its
 * `region` field the event's region. A value whose event the ring no longer
 * holds (it was overwritten) belongs to no event. */
#define KTRACE_EVENT_VALUE 4u

/* Default period of time anchors in SM cycles, a power of two: about 1 us
 * at 1.6-2 GHz, short enough that a piecewise-linear map through the
 * anchors follows the clock when it moves under load (measured on an H200:
 * docs/accuracy.md). A kernel may define KTRACE_ANCHOR_CYCLES before
 * including ktrace.cuh. */
#define KTRACE_ANCHOR_CYCLES_DEFAULT 2048u

/* Written to `open_magic` when a warp opens its context, and to `flush_magic`
 * when it flushes. A zeroed slot was never opened; an opened slot without the
 * flush magic belongs to a warp that never flushed (trap, early exit). */
#define KTRACE_OPEN_MAGIC 0x4f52544bu  /* "KTRO" */
#define KTRACE_FLUSH_MAGIC 0x4652544bu /* "KTRF" */

/* Region id that no region has: the generated table's "unknown name". */
#define KTRACE_REGION_UNKNOWN 0xffffu

/* Smallest and largest per-warp event capacity (a power of two). */
#define KTRACE_MIN_CAP 32u
#define KTRACE_MAX_CAP (1u << 24)

/* Per-slot metadata, 64 bytes. The first half is written at open, the
 * second half at flush, each with two 16-byte stores (before version 4,
 * `launch` and `grid_id` were zero). Each timer pair is
 * read %clock64 first, then %globaltimer (version 2; version 1 read the
 * globaltimer first). */
typedef struct ktrace_slot_meta {
  uint64_t init_globaltimer;  /*  0: %globaltimer at open (ns)              */
  uint64_t init_clock64;      /*  8: %clock64 at open (SM cycles)           */
  uint32_t block_linear;      /* 16: x + y*gx + z*gx*gy, all 32 bits        */
  uint16_t warp;              /* 20: warp index within the block            */
  uint16_t smid;              /* 22: %smid                                  */
  uint32_t open_magic;        /* 24: KTRACE_OPEN_MAGIC once opened          */
  uint32_t launch;            /* 28: the launch: the argument's `launch`,
                               *     or with KTRACE_ARG_SITE the site's
                               *     `epoch`, written at flush              */
  uint64_t final_globaltimer; /* 32: %globaltimer at flush (ns)             */
  uint64_t final_clock64;     /* 40: %clock64 at flush                      */
  uint32_t count;             /* 48: events recorded, may exceed the cap    */
  uint32_t flush_magic;       /* 52: KTRACE_FLUSH_MAGIC once flushed        */
  uint64_t grid_id;           /* 56: %gridid at flush (names a plain launch,
                               *     or a graph node: every replay of a
                               *     graph reuses its nodes' ids)           */
} ktrace_slot_meta;

/* One event, 8 bytes, written as one v2.u32 store: {clock, region | type<<16}
 * (the device header checks these offsets against the shift). */
typedef struct ktrace_event {
  uint32_t clock;  /* raw 32-bit %clock */
  uint16_t region; /* id from the generated region table */
  uint16_t type;   /* KTRACE_EVENT_* */
} ktrace_event;

/* The one kernel parameter that carries tracing into a kernel, passed by
 * value. `buffer == 0` means tracing is off for this launch. Built by the
 * host (ktrace-runtime's TraceSession::arg). */
typedef struct ktrace_arg {
  uint64_t buffer;       /* device address of slot 0, or 0                     */
  uint32_t warp_mask;    /* bit w set: warp w of a traced block is traced      */
  uint32_t warps_traced; /* popcount(warp_mask) over the block's warps         */
  uint32_t block_stride; /* trace blocks whose linear index % stride == 0 (>=1)*/
  uint32_t blocks_traced;/* traced blocks with a slot; later ones are skipped  */
  uint32_t cap_log2;     /* per-warp capacity is 1 << cap_log2                 */
  uint32_t launch;       /* launch index within the session, written to each
                          * slot's `launch`; or KTRACE_ARG_SITE | site index  */
} ktrace_arg;

/* Set in ktrace_arg.launch (layout version 4; the low bits then hold the
 * site's index in its session): `buffer` is the device address of a
 * ktrace_site, and each launch writes the slab the site names instead of
 * one buffer that the host copies back after every launch. */
#define KTRACE_ARG_SITE 0x80000000u
/* ktrace_site.slab of a launch that records nothing: the keep rule did not
 * choose it, or every slab was still waiting to be drained. */
#define KTRACE_SLAB_NONE 0xffffffffu

/* A site (layout version 4): one kernel launched from one place (a stream,
 * or a node of a CUDA graph) whose launches never overlap, traced into a
 * ring of `slab_count` slabs that a host thread drains while the program
 * runs. A slab is one launch's buffer: blocks_traced * warps_traced slots
 * of the argument's shape. 64 bytes, 16-byte aligned.
 *
 * The slabs follow the site: slab k is at the site's address + 64 + k *
 * (slab bytes). Each sampled warp reads `slab` at open, writes the slab's
 * slot unless it is KTRACE_SLAB_NONE and at flush stamps its slot's
 * `launch` with `epoch` (which only the launch's last warp advances), then
 * adds 1 to `flushed` (acq_rel, gpu scope, after its slot's stores). The warp that brings `flushed` to `warps`, the
 * last of its launch, resets it and chooses the next launch's slab:
 *   kept += (slab != NONE); epoch += 1;
 *   chosen = (keep_from <= epoch < keep_until && (epoch - keep_from) %
 *             every == 0) || triggers_used < triggers_asked (then used += 1);
 *   slab = chosen ? (kept - drained < slab_count ? kept % slab_count :
 *                    NONE, dropped += 1) : NONE.
 * So a launch's warps all agree on its epoch and slab without the host,
 * and a slab is complete when `kept` has passed it. The host copies slabs
 * [drained, kept) and then raises `drained`; it also writes `keep_*`,
 * `every` and `triggers_asked`, and sets the first launch's slab. */
typedef struct ktrace_site {
  uint32_t epoch;          /*  0: launches of this site before the running one */
  uint32_t slab;           /*  4: slab the running launch writes, or NONE    */
  uint64_t slabs;          /*  8: zero (the slabs follow the site)           */
  uint32_t flushed;        /* 16: sampled warps of the running launch flushed */
  uint32_t kept;           /* 20: launches written to a slab so far          */
  uint32_t dropped;        /* 24: launches chosen that found no free slab    */
  uint32_t triggers_used;  /* 28: launches kept by triggers_asked            */
  uint32_t warps;          /* 32: sampled warps per launch                   */
  uint32_t slab_count;     /* 36: slabs in the ring                          */
  uint32_t drained;        /* 40: slabs the host has copied out (host)       */
  uint32_t every;          /* 44: keep every N-th launch of the window (>=1) */
  uint32_t keep_from;      /* 48: first launch of the window (host)          */
  uint32_t keep_until;     /* 52: launch after the window's last (host)      */
  uint32_t triggers_asked; /* 56: launches asked for by the host (host)      */
  uint32_t reserved;       /* 60: zero                                       */
} ktrace_site;

#endif /* KTRACE_LAYOUT_H */
