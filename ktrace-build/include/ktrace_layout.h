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
 *      arena.
 *   5: a warp may open with KTRACE_OPEN_SHARED_MAGIC: its clock maps to
 *      time through the anchors of every warp of the same launch on its SM
 *      (its own, if it records any, among them).
 *   6: a warp may open with KTRACE_OPEN_STAMP_MAGIC: each of its events
 *      carries bits of %globaltimer in the top bits of its `type` field
 *      (KTRACE_STAMP_BITS below), and it records no anchor entries. */
#define KTRACE_LAYOUT_VERSION 6u

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
/* Written to `open_magic` instead of KTRACE_OPEN_MAGIC by a warp whose
 * times go through the anchors that all the warps of the launch on the
 * same SM recorded (layout version 5): built with KTRACE_ANCHORS_COUNT, it
 * records an anchor every KTRACE_ANCHOR_EVENTS entries. */
#define KTRACE_OPEN_SHARED_MAGIC 0x5352544bu /* "KTRS" */

/* Written to `open_magic` instead of KTRACE_OPEN_MAGIC by a warp built with
 * KTRACE_ANCHORS_STAMP (layout version 6): every event of its ring (not its
 * value entries) is stamped with bits KTRACE_STAMP_LOW_BIT ..
 * KTRACE_STAMP_LOW_BIT + KTRACE_STAMP_BITS - 1 of the %globaltimer read
 * right after the event's %clock, stored in the top KTRACE_STAMP_BITS bits
 * of the event's `type` field; the type itself is in the field's low
 * KTRACE_STAMP_TYPE_BITS bits. The stamp wraps every 2^(5+13) ns (262 us);
 * the decoder unwraps it against the slot's open time and the clock. */
#define KTRACE_OPEN_STAMP_MAGIC 0x5452544bu /* "KTRT" */
#define KTRACE_STAMP_LOW_BIT 5u
#define KTRACE_STAMP_BITS 13u
#define KTRACE_STAMP_TYPE_BITS 3u

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
                               *     launch number (its ticket at open)     */
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
/* Set in ktrace_arg.launch with KTRACE_ARG_SITE when the site's launches may
 * overlap (programmatic dependent launch of a kernel after itself): a
 * recording warp's flush then stores its count, waits for its warp's stores
 * to be visible to the whole GPU (fence.acq_rel.gpu), and only then stores
 * its closing timer pair. A slot whose `final_globaltimer` is not before its
 * `init_globaltimer` has flushed, and its events and count are whole: the
 * host sees from a slab alone which warps of a launch have finished. */
#define KTRACE_ARG_OVERLAP 0x40000000u
/* The slab of a launch that records nothing: the keep rule did not choose
 * it, or its slab was still waiting to be drained. */
#define KTRACE_SLAB_NONE 0xffffffffu
/* Set in a site's `slab_count` when the site keeps the newest launches once
 * its ring is full: a kept launch then always writes slab (kept number) %
 * slab_count, over a launch the host may not have drained yet (the bit
 * makes `kept - drained < slab_count` hold, and the slab index masks it
 * off). The host counts the launches so lost. */
#define KTRACE_SLAB_NEWEST 0x80000000u

/* Which launches of a site are kept (layout version 4): launch n is kept
 * when from <= n < until and (n - from) % every == 0, as the site's kept
 * launch number base + (n - from) / every. 16 bytes, read as one. */
typedef struct ktrace_keep {
  uint32_t from;  /*  0: the first launch kept                      */
  uint32_t until; /*  4: the launch after the last one kept          */
  uint32_t base;  /*  8: kept launches before `from`                 */
  uint32_t every; /* 12: keep every N-th launch from `from` (>= 1)   */
} ktrace_keep;

/* A site (layout version 4): one kernel launched from one place (a stream,
 * or a node of a CUDA graph) whose launches never overlap, traced into a
 * ring of `slab_count` slabs that a host thread drains while the program
 * runs. A slab is one launch's buffer: blocks_traced * warps_traced slots
 * of the argument's shape. The site is 128 bytes, 16-byte aligned; after
 * it come the launch counters, one u32 per slot (slot index as in a
 * buffer), padded to a multiple of 128 bytes (KTRACE_SITE_COUNTER_BYTES),
 * then the slabs: slab k is at the site's address + 128 + the counters'
 * bytes + k * (slab bytes). Before the site, in the 8 * slab_count bytes
 * below its address rounded up to 128 (KTRACE_SITE_STEP_BYTES), are the
 * slabs' steps: slab k's at the site's address - 8 * (k + 1).
 *
 * At open, one lane of each sampled warp (the argument samples the warp)
 * takes a ticket: an atomic add of 1 to its slot's counter, whose old value
 * is the warp's launch n (each slot is opened once per launch, and the
 * site's launches cannot overlap, so every warp of a launch reads the same
 * n, with no help from the host and no two warps on one address). With the
 * same wait it reads `keep`, the ring's state and `triggered`, and records into slab
 * (kept number) % slab_count if launch n is kept and that slab is drained
 * (kept number - drained < slab_count); a kept launch whose slab still
 * waits is dropped by that warp, which adds 1 to `dropped`, unless the
 * site keeps the newest launches (KTRACE_SLAB_NEWEST). Its slot's
 * `launch` is n. The warp of slot 0 writes `done` = {n, kept launches
 * before n}: every launch before n has ended, so their slabs are complete
 * (with KTRACE_ARG_OVERLAP, only opened: the host then waits for each slot's
 * closing timer pair). If launch n is kept, it also copies `step` into its
 * slab's step: the host writes `step` on the launches' stream at each of
 * its steps, so a launch's step is the last one begun before it was
 * enqueued, whatever the host's time when it runs.
 * With `triggered` and triggers_asked beyond the launches granted so far
 * (base + until - from), it also rewrites `keep`: a window that still
 * holds launch n or a later one grows; one that ended makes way for a new
 * window from n + 1. Either way launch n keeps its place, so the warps of
 * launch n agree whether they read `keep` before that store or after. At
 * flush, a warp that recorded adds 1 to `flushed` (relaxed, gpu scope: it
 * can land before the warp's stores), without waiting; nothing else
 * happens at a launch's end. Launches before `done` have completed, their
 * stores landed; when no launch runs, every kept launch has ended once
 * flushed + dropped = kept * warps, and its stores have landed a poll
 * after the host first saw that. The host copies the slabs of kept
 * launches [drained, complete) and then raises `drained`; it sets `keep`
 * before the first launch, and raises triggers_asked. */
typedef struct ktrace_site {
  uint32_t flushed;        /*   0: recording warps that flushed (device)   */
  uint32_t dropped;        /*   4: warps of kept launches that found their
                            *       slab waiting (device)                  */
  uint32_t warps;          /*   8: sampled warps per launch (host)         */
  uint32_t reserved0;      /*  12: zero                                    */
  ktrace_keep keep;        /*  16: the keep rule (host before the first
                            *       launch; slot 0 of a triggered or
                            *       held site)                             */
  uint64_t step;           /*  32: the host's current step + 1, 0 before
                            *       the first (host, in stream order)      */
  uint32_t reserved1[2];   /*  40: zero                                    */
  uint32_t slab_count;     /*  48: slabs in the ring, a power of two, |
                            *       KTRACE_SLAB_NEWEST (host)              */
  uint32_t drained;        /*  52: kept launches copied out (host)         */
  uint32_t triggers_asked; /*  56: launches asked for (host)               */
  uint32_t triggered;      /*  60: KTRACE_KEEP_* below (host), 0: neither  */
  uint32_t done_launch;    /*  64: launches before this one have ended     */
  uint32_t done_kept;      /*  68: kept launches among them (device)       */
  uint32_t reserved[14];   /*  72: zero                                    */
} ktrace_site;

/* A site's `triggered`: 1, keep the launches asked for (triggers_asked);
 * 2 and 3, a held window that the host opens and closes between launches.
 * The first launch n to see 2 while the rule's window is not open-ended
 * makes it {from: n, until: KTRACE_KEEP_OPEN_END, base: kept so far,
 * every: 1}, launch n included; the first to see 3 while it is open-ended
 * ends it before n (until = n). Slot 0 stores the rule so changed. */
#define KTRACE_KEEP_TRIGGERED 1u
#define KTRACE_KEEP_HELD_OPEN 2u
#define KTRACE_KEEP_HELD_CLOSED 3u
/* The `until` of a held window that is open. */
#define KTRACE_KEEP_OPEN_END 0xffffffffu

/* Bytes of a site's launch counters for `warps` slots: 4 each, padded to a
 * multiple of 128. */
#define KTRACE_SITE_COUNTER_BYTES(warps) ((((uint64_t)(warps) * 4u + 127u) / 128u) * 128u)

/* Bytes below a site that hold its slabs' steps: 8 per slab, padded to a
 * multiple of 128. */
#define KTRACE_SITE_STEP_BYTES(slabs) ((((uint64_t)(slabs) * 8u + 127u) / 128u) * 128u)

#endif /* KTRACE_LAYOUT_H */
