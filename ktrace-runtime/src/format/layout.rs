//! The device buffer layout, as declared in `ktrace_layout.h`.
//!
//! Every constant, size and field offset here is checked against the C header
//! by this crate's `layout` test, which compiles a small C program that
//! includes the header and prints what the C compiler sees. Host and device
//! cannot drift apart without that test failing.
//!
//! The buffer is an array of slots, one per traced warp; a slot is 64 bytes of
//! [`SlotMeta`] followed by `cap` 8-byte [`Event`]s. Everything is
//! little-endian.

use std::mem::{offset_of, size_of};

/// `KTRACE_LAYOUT_VERSION`: bumped whenever the layout changes meaning.
pub const LAYOUT_VERSION: u32 = 6;
/// The oldest layout version this build decodes: version 1 buffers have no
/// time anchors and are decoded with the two-point time model.
pub const OLDEST_LAYOUT_VERSION: u32 = 1;

/// `KTRACE_EVENT_BEGIN`: the event type of a region's begin.
pub const EVENT_BEGIN: u16 = 0;
/// `KTRACE_EVENT_END`: the event type of a region's end.
pub const EVENT_END: u16 = 1;
/// `KTRACE_EVENT_MARK`: the event type of an instant mark.
pub const EVENT_MARK: u16 = 2;
/// `KTRACE_EVENT_ANCHOR` (layout version 2): a time anchor, the
/// `%globaltimer` read right after the `%clock` of the entry before it. Its
/// `clock` field holds bits 0..31 of the globaltimer, its `region` field
/// bits 32..47.
pub const EVENT_ANCHOR: u16 = 3;
/// `KTRACE_EVENT_VALUE` (layout version 3): the 32-bit value recorded with
/// the event before it in the ring (time anchors skipped). Its `clock`
/// field holds the value, its `region` field the event's region.
pub const EVENT_VALUE: u16 = 4;
/// `KTRACE_ANCHOR_CYCLES_DEFAULT`: SM cycles between a warp's time anchors
/// unless the kernel chose otherwise.
pub const ANCHOR_CYCLES_DEFAULT: u32 = 2048;

/// `KTRACE_OPEN_MAGIC` ("KTRO"): written to `open_magic` when a warp opens.
pub const OPEN_MAGIC: u32 = 0x4f52_544b;
/// `KTRACE_OPEN_SHARED_MAGIC` ("KTRS", layout version 5): written to
/// `open_magic` instead of [`OPEN_MAGIC`] by a warp that records no time
/// anchors of its own; its clock maps to time through the anchors of the
/// launch's other warps on the same SM.
pub const OPEN_SHARED_MAGIC: u32 = 0x5352_544b;
/// `KTRACE_OPEN_STAMP_MAGIC` ("KTRT", layout version 6): written to
/// `open_magic` instead of [`OPEN_MAGIC`] by a warp built with
/// `KTRACE_ANCHORS_STAMP`. It records no anchor entries: each of its events
/// carries bits [`STAMP_LOW_BIT`].. of `%globaltimer` in the top
/// [`STAMP_BITS`] bits of its `type` field ([`Event::stamp`]).
pub const OPEN_STAMP_MAGIC: u32 = 0x5452_544b;
/// `KTRACE_STAMP_LOW_BIT`: the lowest `%globaltimer` bit an event's stamp
/// holds (the timer moves in 32 ns steps on Hopper).
pub const STAMP_LOW_BIT: u32 = 5;
/// `KTRACE_STAMP_BITS`: the stamp's width; it wraps every
/// 2^([`STAMP_LOW_BIT`] + `STAMP_BITS`) ns (262 us).
pub const STAMP_BITS: u32 = 13;
/// `KTRACE_STAMP_TYPE_BITS`: the low bits of a stamped event's `type`
/// field that hold its type.
pub const STAMP_TYPE_BITS: u32 = 3;
/// `KTRACE_FLUSH_MAGIC` ("KTRF"): written to `flush_magic` when a warp flushes.
pub const FLUSH_MAGIC: u32 = 0x4652_544b;

/// `KTRACE_REGION_UNKNOWN`: the region id that no region has.
pub const REGION_UNKNOWN: u16 = 0xffff;

/// `KTRACE_MIN_CAP`: the smallest per-warp event capacity.
pub const MIN_CAP: u32 = 32;
/// `KTRACE_MAX_CAP`: the largest per-warp event capacity.
pub const MAX_CAP: u32 = 1 << 24;

/// Bytes of slot metadata (`sizeof(ktrace_slot_meta)`).
pub const META_BYTES: usize = size_of::<SlotMeta>();
/// Bytes of one event (`sizeof(ktrace_event)`).
pub const EVENT_BYTES: usize = size_of::<Event>();

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// Per-slot metadata (`ktrace_slot_meta`), 64 bytes.
///
/// The first 32 bytes are written when the warp opens its context, the last
/// 32 when it flushes. A slot whose `open_magic` is none of [`OPEN_MAGIC`],
/// [`OPEN_SHARED_MAGIC`] and [`OPEN_STAMP_MAGIC`] was never opened; one without [`FLUSH_MAGIC`] was opened but never flushed.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotMeta {
    /// `%globaltimer` at open, in nanoseconds.
    pub init_globaltimer: u64,
    /// `%clock64` at open, in SM cycles.
    pub init_clock64: u64,
    /// Linear block index `x + y*gx + z*gx*gy`.
    pub block_linear: u32,
    /// Warp index within the block.
    pub warp: u16,
    /// `%smid` of the SM the warp ran on.
    pub smid: u16,
    /// [`OPEN_MAGIC`] once opened.
    pub open_magic: u32,
    /// The launch the warp belonged to (layout version 4; zero before):
    /// the argument's `launch`, or for a launch traced through a site
    /// ([`ARG_SITE`]) the site's launch number, from the warp's ticket.
    pub launch: u32,
    /// `%globaltimer` at flush, in nanoseconds.
    pub final_globaltimer: u64,
    /// `%clock64` at flush.
    pub final_clock64: u64,
    /// Events recorded; may exceed the capacity (the ring kept the newest).
    pub count: u32,
    /// [`FLUSH_MAGIC`] once flushed.
    pub flush_magic: u32,
    /// `%gridid` at flush (layout version 4; zero before): names a plain
    /// launch, or a node of a CUDA graph (every replay of a graph reuses
    /// its nodes' ids).
    pub grid_id: u64,
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

impl SlotMeta {
    /// Reads the metadata from its 64 little-endian bytes.
    pub fn from_bytes(b: &[u8; META_BYTES]) -> Self {
        SlotMeta {
            init_globaltimer: u64_at(b, offset_of!(SlotMeta, init_globaltimer)),
            init_clock64: u64_at(b, offset_of!(SlotMeta, init_clock64)),
            block_linear: u32_at(b, offset_of!(SlotMeta, block_linear)),
            warp: u16_at(b, offset_of!(SlotMeta, warp)),
            smid: u16_at(b, offset_of!(SlotMeta, smid)),
            open_magic: u32_at(b, offset_of!(SlotMeta, open_magic)),
            launch: u32_at(b, offset_of!(SlotMeta, launch)),
            final_globaltimer: u64_at(b, offset_of!(SlotMeta, final_globaltimer)),
            final_clock64: u64_at(b, offset_of!(SlotMeta, final_clock64)),
            count: u32_at(b, offset_of!(SlotMeta, count)),
            flush_magic: u32_at(b, offset_of!(SlotMeta, flush_magic)),
            grid_id: u64_at(b, offset_of!(SlotMeta, grid_id)),
        }
    }

    /// Writes the metadata as the device does, 64 little-endian bytes.
    pub fn to_bytes(&self) -> [u8; META_BYTES] {
        let mut b = [0u8; META_BYTES];
        let mut put = |off: usize, v: &[u8]| b[off..off + v.len()].copy_from_slice(v);
        put(
            offset_of!(SlotMeta, init_globaltimer),
            &self.init_globaltimer.to_le_bytes(),
        );
        put(
            offset_of!(SlotMeta, init_clock64),
            &self.init_clock64.to_le_bytes(),
        );
        put(
            offset_of!(SlotMeta, block_linear),
            &self.block_linear.to_le_bytes(),
        );
        put(offset_of!(SlotMeta, warp), &self.warp.to_le_bytes());
        put(offset_of!(SlotMeta, smid), &self.smid.to_le_bytes());
        put(
            offset_of!(SlotMeta, open_magic),
            &self.open_magic.to_le_bytes(),
        );
        put(offset_of!(SlotMeta, launch), &self.launch.to_le_bytes());
        put(
            offset_of!(SlotMeta, final_globaltimer),
            &self.final_globaltimer.to_le_bytes(),
        );
        put(
            offset_of!(SlotMeta, final_clock64),
            &self.final_clock64.to_le_bytes(),
        );
        put(offset_of!(SlotMeta, count), &self.count.to_le_bytes());
        put(
            offset_of!(SlotMeta, flush_magic),
            &self.flush_magic.to_le_bytes(),
        );
        put(offset_of!(SlotMeta, grid_id), &self.grid_id.to_le_bytes());
        b
    }

    /// Whether the warp opened this slot.
    pub fn is_opened(&self) -> bool {
        self.open_magic == OPEN_MAGIC
            || self.open_magic == OPEN_SHARED_MAGIC
            || self.open_magic == OPEN_STAMP_MAGIC
    }

    /// The layout version that introduced the slot's open magic: 1 for
    /// [`OPEN_MAGIC`], 5 for [`OPEN_SHARED_MAGIC`], 6 for
    /// [`OPEN_STAMP_MAGIC`]; `None` for any other value (never opened).
    pub fn open_magic_layout(&self) -> Option<u32> {
        match self.open_magic {
            OPEN_MAGIC => Some(1),
            OPEN_SHARED_MAGIC => Some(5),
            OPEN_STAMP_MAGIC => Some(6),
            _ => None,
        }
    }

    /// Whether the warp stamped every event with `%globaltimer` bits
    /// ([`OPEN_STAMP_MAGIC`]) instead of recording anchor entries.
    pub fn stamps_events(&self) -> bool {
        self.open_magic == OPEN_STAMP_MAGIC
    }

    /// Whether the warp opened this slot without time anchors of its own
    /// ([`OPEN_SHARED_MAGIC`]): its times go through its SM's anchors.
    pub fn shares_anchors(&self) -> bool {
        self.open_magic == OPEN_SHARED_MAGIC
    }

    /// Whether the warp flushed this slot (its count and final timers are set).
    pub fn is_flushed(&self) -> bool {
        self.flush_magic == FLUSH_MAGIC
    }

    /// Whether the warp that opened this slot last has flushed it, for a
    /// site whose launches may overlap ([`ARG_OVERLAP`]): its closing timer
    /// pair, stored after its count and events behind a fence, is not
    /// before its open (a slot opened again still holds the earlier
    /// launch's, older than the new open).
    pub fn finished(&self) -> bool {
        self.is_opened() && self.is_flushed() && self.final_globaltimer >= self.init_globaltimer
    }
}

/// The kind of an event (the `type` field of `ktrace_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// A region begins.
    Begin,
    /// A region ends.
    End,
    /// An instant mark.
    Mark,
}

impl EventKind {
    /// The kind for a raw `type` value, if it is one of the three.
    pub fn from_raw(raw: u16) -> Option<Self> {
        match raw {
            EVENT_BEGIN => Some(EventKind::Begin),
            EVENT_END => Some(EventKind::End),
            EVENT_MARK => Some(EventKind::Mark),
            _ => None,
        }
    }

    /// The raw `type` value.
    pub fn raw(self) -> u16 {
        match self {
            EventKind::Begin => EVENT_BEGIN,
            EventKind::End => EVENT_END,
            EventKind::Mark => EVENT_MARK,
        }
    }

    /// Order of events at the same instant: begin, then mark, then end.
    pub fn tie_rank(self) -> u8 {
        match self {
            EventKind::Begin => 0,
            EventKind::Mark => 1,
            EventKind::End => 2,
        }
    }
}

/// One raw event (`ktrace_event`), 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The low 32 bits of `%clock` when the event was recorded.
    pub clock: u32,
    /// The region id, from the generated region table.
    pub region: u16,
    /// The event type (`type` in C): see [`EventKind`].
    pub kind: u16,
}

impl Event {
    /// Reads an event from its 8 little-endian bytes.
    pub fn from_bytes(b: &[u8; EVENT_BYTES]) -> Self {
        Event {
            clock: u32_at(b, offset_of!(Event, clock)),
            region: u16_at(b, offset_of!(Event, region)),
            kind: u16_at(b, offset_of!(Event, kind)),
        }
    }

    /// A stamped event's (layout version 6, [`OPEN_STAMP_MAGIC`]) stamp:
    /// bits [`STAMP_LOW_BIT`].. of the `%globaltimer` read after its clock.
    pub fn stamp(&self) -> u16 {
        self.kind >> STAMP_TYPE_BITS
    }

    /// The event with its stamp taken out of the `type` field (for an
    /// entry of a warp that stamps its events), leaving the type.
    pub fn without_stamp(&self) -> Self {
        Event {
            kind: self.kind & ((1 << STAMP_TYPE_BITS) - 1),
            ..*self
        }
    }

    /// The event's 8 little-endian bytes, as the device stores them.
    pub fn to_bytes(&self) -> [u8; EVENT_BYTES] {
        let mut b = [0u8; EVENT_BYTES];
        b[offset_of!(Event, clock)..][..4].copy_from_slice(&self.clock.to_le_bytes());
        b[offset_of!(Event, region)..][..2].copy_from_slice(&self.region.to_le_bytes());
        b[offset_of!(Event, kind)..][..2].copy_from_slice(&self.kind.to_le_bytes());
        b
    }
}

/// The kernel parameter that carries tracing into a kernel (`ktrace_arg`),
/// passed by value. `buffer == 0` means tracing is off for the launch.
/// With the `cuda` feature it is a cudarc `DeviceRepr`, so it can be pushed
/// as a kernel argument.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KtraceArg {
    /// Device address of slot 0, or 0.
    pub buffer: u64,
    /// Bit `w` set: warp `w` of a traced block is traced.
    pub warp_mask: u32,
    /// Number of traced warps per block (popcount of the mask).
    pub warps_traced: u32,
    /// Blocks whose linear index is a multiple of this are traced (at least 1).
    pub block_stride: u32,
    /// Traced blocks that have a slot; later ones are skipped.
    pub blocks_traced: u32,
    /// The per-warp capacity is `1 << cap_log2`.
    pub cap_log2: u32,
    /// Launch index within the session.
    pub launch: u32,
}

impl KtraceArg {
    /// The argument that turns tracing off: a null buffer.
    pub const OFF: KtraceArg = KtraceArg {
        buffer: 0,
        warp_mask: 0,
        warps_traced: 0,
        block_stride: 1,
        blocks_traced: 0,
        cap_log2: 0,
        launch: 0,
    };

    /// Whether the launch given this argument is traced: its buffer is not
    /// null (the device's own test at `KTRACE_OPEN`).
    pub fn traces(&self) -> bool {
        self.buffer != 0
    }
}

/// `KTRACE_ARG_SITE`, set in [`KtraceArg::launch`] (layout version 4; the
/// low bits then hold the site's index): the argument's `buffer` is the
/// address of a [`Site`], whose slabs follow it, not of slot 0.
pub const ARG_SITE: u32 = 0x8000_0000;
/// `KTRACE_ARG_OVERLAP`, set in [`KtraceArg::launch`] with [`ARG_SITE`]
/// for a site whose launches may overlap (programmatic dependent launch):
/// a recording warp's flush stores its closing timer pair last, after a
/// fence, so a slot whose `final_globaltimer` is not before its
/// `init_globaltimer` is whole ([`SlotMeta::finished`]).
pub const ARG_OVERLAP: u32 = 0x4000_0000;
/// `KTRACE_SLAB_NONE`: the slab of a launch that records nothing.
pub const SLAB_NONE: u32 = 0xffff_ffff;
/// `KTRACE_SLAB_NEWEST`, set in a site's `slab_count` when the site keeps
/// the newest launches once its ring is full (see [`Site::ring`]).
pub const SLAB_NEWEST: u32 = 0x8000_0000;
/// `KTRACE_KEEP_TRIGGERED`: a site's `triggered` when it keeps the
/// launches the host asks for.
pub const KEEP_TRIGGERED: u32 = 1;
/// `KTRACE_KEEP_HELD_OPEN`: a held site's `triggered` while the host holds
/// its window open.
pub const KEEP_HELD_OPEN: u32 = 2;
/// `KTRACE_KEEP_HELD_CLOSED`: a held site's `triggered` while its window is
/// closed.
pub const KEEP_HELD_CLOSED: u32 = 3;
/// `KTRACE_KEEP_OPEN_END`: the `until` of a held window that is open.
pub const KEEP_OPEN_END: u32 = 0xffff_ffff;
/// Bytes of a site (`sizeof(ktrace_site)`).
pub const SITE_BYTES: usize = size_of::<Site>();

/// A keep rule as the device reads it (`ktrace_keep`, layout version 4):
/// launch `n` is kept when `from <= n < until` and `(n - from) % every ==
/// 0`, as the site's kept launch `base + (n - from) / every`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteKeep {
    /// The first launch kept.
    pub from: u32,
    /// The launch after the last one kept.
    pub until: u32,
    /// Kept launches before `from`.
    pub base: u32,
    /// Keep every `every`-th launch from `from` (at least 1).
    pub every: u32,
}

/// A site (`ktrace_site`, layout version 4): one kernel launched from one
/// place whose launches never overlap, traced into a ring of slabs in a
/// persistent arena. Each sampled warp takes a ticket from its slot's
/// launch counter at open, which names its launch and slab; the host
/// drains the slabs of kept launches that have ended and sets the keep
/// rule. The counters ([`site_counter_bytes`]) and then the slabs follow
/// it. See `ktrace_layout.h` for the protocol.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Site {
    /// Recording warps that flushed, over all launches.
    pub flushed: u32,
    /// Warps of kept launches that found their slab still waiting.
    pub dropped: u32,
    /// Sampled warps per launch.
    pub warps: u32,
    /// Zero.
    pub reserved0: u32,
    /// The keep rule (a triggered site's slot 0 rewrites it).
    pub keep: SiteKeep,
    /// The host's current step + 1 (0 before its first step), written in
    /// the order of the site's stream; a kept launch's slot 0 copies it
    /// into its slab's step ([`site_step_bytes`]).
    pub step: u64,
    /// Zero.
    pub reserved1: [u32; 2],
    /// Slabs in the ring, a power of two, with [`SLAB_NEWEST`] set when a
    /// kept launch writes over a slab not yet drained ([`Site::ring`],
    /// [`Site::keeps_newest`]).
    pub slab_count: u32,
    /// Kept launches the host has copied out.
    pub drained: u32,
    /// Launches asked for by the host (`capture_next`).
    pub triggers_asked: u32,
    /// 1: the site keeps the launches asked for (`Keep::Triggered`).
    pub triggered: u32,
    /// A launch whose earlier launches have all ended.
    pub done_launch: u32,
    /// Kept launches before `done_launch`.
    pub done_kept: u32,
    /// Zero.
    pub reserved: [u32; 14],
}

/// Words of a site.
const SITE_WORDS: usize = SITE_BYTES / 4;

/// `KTRACE_SITE_COUNTER_BYTES`: bytes of a site's launch counters for
/// `warps` slots, 4 each, padded to a multiple of 128.
pub fn site_counter_bytes(warps: u32) -> u64 {
    (u64::from(warps) * 4).div_ceil(128) * 128
}

/// `KTRACE_SITE_STEP_BYTES`: bytes below a site that hold the steps of
/// its `slabs` slabs, 8 each (slab `k`'s at the site's address − 8·(k+1)),
/// padded to a multiple of 128.
pub fn site_step_bytes(slabs: u32) -> u64 {
    (u64::from(slabs) * 8).div_ceil(128) * 128
}

/// Byte offset of the site's `step` word.
pub const SITE_STEP_OFFSET: u64 = std::mem::offset_of!(Site, step) as u64;

impl Site {
    /// Slabs in the ring: `slab_count` without [`SLAB_NEWEST`].
    pub fn ring(&self) -> u32 {
        self.slab_count & !SLAB_NEWEST
    }

    /// Whether a kept launch writes its slab even when the host has not
    /// drained it yet (the site keeps the newest launches).
    pub fn keeps_newest(&self) -> bool {
        self.slab_count & SLAB_NEWEST != 0
    }

    /// Reads a site from its 128 little-endian bytes.
    pub fn from_bytes(b: &[u8; SITE_BYTES]) -> Self {
        let w = |i: usize| u32_at(b, 4 * i);
        let keep = SiteKeep {
            from: w(4),
            until: w(5),
            base: w(6),
            every: w(7),
        };
        let mut reserved = [0u32; 14];
        for (i, r) in reserved.iter_mut().enumerate() {
            *r = w(18 + i);
        }
        Site {
            flushed: w(0),
            dropped: w(1),
            warps: w(2),
            reserved0: w(3),
            keep,
            step: u64::from(w(8)) | u64::from(w(9)) << 32,
            reserved1: [w(10), w(11)],
            slab_count: w(12),
            drained: w(13),
            triggers_asked: w(14),
            triggered: w(15),
            done_launch: w(16),
            done_kept: w(17),
            reserved,
        }
    }

    /// The site's 128 little-endian bytes, as the device reads them.
    pub fn to_bytes(&self) -> [u8; SITE_BYTES] {
        let mut words = [0u32; SITE_WORDS];
        words[..4].copy_from_slice(&[self.flushed, self.dropped, self.warps, self.reserved0]);
        let k = &self.keep;
        words[4..8].copy_from_slice(&[k.from, k.until, k.base, k.every]);
        words[8..12].copy_from_slice(&[
            self.step as u32,
            (self.step >> 32) as u32,
            self.reserved1[0],
            self.reserved1[1],
        ]);
        words[12..18].copy_from_slice(&[
            self.slab_count,
            self.drained,
            self.triggers_asked,
            self.triggered,
            self.done_launch,
            self.done_kept,
        ]);
        words[18..].copy_from_slice(&self.reserved);
        let mut b = [0u8; SITE_BYTES];
        for (i, w) in words.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// Bytes of one slot for a per-warp capacity of `1 << cap_log2` events.
pub fn slot_bytes(cap_log2: u32) -> u64 {
    META_BYTES as u64 + ((EVENT_BYTES as u64) << cap_log2)
}

#[cfg(test)]
mod tests {
    use super::KtraceArg;

    #[test]
    fn an_argument_traces_its_launch_exactly_when_its_buffer_is_not_null() {
        assert!(!KtraceArg::OFF.traces());
        let on = KtraceArg {
            buffer: 0x7f00_0000_0000,
            ..KtraceArg::OFF
        };
        assert!(on.traces());
        // Sampling fields do not decide it: a null buffer traces nothing.
        let sampled_off = KtraceArg { buffer: 0, ..on };
        assert!(!sampled_off.traces());
    }
}
