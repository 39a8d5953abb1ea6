//! Perfetto's native trace format (`.pftrace`), written warp by warp: the
//! same events as the Chrome trace ([`super::chrome`]) at a fraction of the
//! size, with every launch of a capture in one file.
//!
//! # Tracks
//!
//! Tracks nest device → launch → SM → block → warp ("GPU: NVIDIA H200",
//! "launch 3: …", "SM 012", "Block 0003", "Warp 02"), each parent ordering
//! its children explicitly (`child_ordering = EXPLICIT`,
//! `sibling_order_rank` = launch number, SM id, block index, warp index).
//! A warp's spans are slices (`SLICE_BEGIN`/`SLICE_END`) and its marks
//! instants (`INSTANT`), the events the Chrome writer shows by default:
//! begins and ends that the decoder could not pair are left out of both
//! (the diagnostics count them). Spans are matched per region, so two
//! regions can overlap without nesting (`A` over 0..10, `B` over 5..15);
//! Perfetto's slices must nest on a track, so a span that does not nest
//! where it starts goes on the first of the warp's child tracks ("Overlap
//! 1", "Overlap 2", …) where it does. Every span is shown as recorded and
//! slices nest on every track. A launch given a host span
//! ([`LaunchGroup::host_span_ns`]) gets a "Host" track above its SMs.
//!
//! Warps with no span and no mark get no track, nor do SMs and blocks
//! without such a warp.
//!
//! # Times
//!
//! An event at `t_ps` (picoseconds from the launch origin, see
//! [`Decoder::origin_globaltimer`]) is written at
//! `origin_globaltimer + round(t_ps / 1000) + offset_ns` nanoseconds, the
//! division rounded to the nearest nanosecond with halves rounded up (the
//! origin is a whole number of ns, so this is the absolute time rounded
//! the same way). Rounding never reorders events, so nesting is kept; spans
//! shorter than 0.5 ns may become zero-length. Times are on the
//! `CLOCK_REALTIME` axis (builtin clock 1): `%globaltimer` counts Unix-epoch
//! nanoseconds on Linux drivers, and [`LaunchGroup::offset_ns`] corrects it
//! when the host knows better. Times before the epoch are written as 0.
//!
//! With [`PerfettoOptions::host_clocks`] the file carries a snapshot of the
//! host's realtime, boottime and monotonic clocks and names `BOOTTIME` as
//! the trace clock, so Perfetto converts the events to `BOOTTIME`, the
//! clock of its own Linux traces: `cat host.pftrace ktrace.pftrace >
//! both.pftrace` puts both on one timeline. Without it the trace clock is
//! `REALTIME`.
//!
//! # Encoding
//!
//! Each warp is its own packet sequence (`trusted_packet_sequence_id`
//! 16385 and up, clear of the small ids of Perfetto's own writers; the
//! writer's own packets use 16384). Its first packet clears the sequence's
//! state and carries a clock snapshot that starts an incremental clock
//! (sequence-scoped clock 64) at the warp's first event, and defaults that
//! put every event on that clock and on the warp's track. An event is then
//! a packet holding the nanoseconds since the warp's previous event, the
//! sequence id, the event type and an interned name id: 12 to 15 bytes.
//! Region names are interned per sequence, in the packet of their first
//! use. With [`PerfettoOptions::args`], slice begins and instants also
//! carry `sm`, `block`, `warp` and `region` as debug annotations (interned
//! names, about 25 more bytes each); the tracks hold the same facts.
//!
//! The rare packets (clock snapshots, track descriptors) are built from the
//! `prost` messages of [`proto`]; event packets, one per
//! event, are encoded by hand into a reused buffer, byte for byte what
//! `prost` writes for the same message (a unit test checks it).

//!
//! # Files
//!
//! This file holds the writer's public API, its output buffer and what
//! lets other threads encode its warps (the export's `parallel.rs`);
//! `tracks.rs` names the tracks (uuids, descriptors), `lanes.rs` lays out
//! a warp's spans on its tracks (the lanes of spans that overlap),
//! `encode.rs` encodes the event packets by hand, `host_clocks.rs` reads
//! the host's clocks and [`proto`] declares the messages.

use std::collections::HashSet;
use std::io::{self, Write};

use prost::Message;

mod encode;
mod host_clocks;
mod lanes;
pub mod proto;
#[cfg(test)]
mod tests;
mod tracks;

pub use host_clocks::HostClocks;

pub use super::launch_group::LaunchGroup;
use super::parallel::{ChunkEncoder, ChunkSink, Encoded};
use super::region_slots::RegionSlots;
use crate::decode::{Decoder, WarpTrace};
use crate::format::regions::Regions;
use encode::{push_annotation, push_varint};
use lanes::{Planner, SlotOf};
use proto as pb;
use tracks::{splitmix64, WarpTracks};

/// The sequence-scoped clock that event timestamps are deltas on.
pub const INCREMENTAL_CLOCK_ID: u32 = 64;
/// `BUILTIN_CLOCK_REALTIME`, the clock of the written times.
pub const REALTIME_CLOCK_ID: u32 = 1;
/// The writer's own sequence id; warps get the ids after it.
pub const WRITER_SEQUENCE_ID: u32 = 1 << 14;

/// Output is gathered in a buffer of this size and handed to the writer
/// whenever less than [`SLACK`] bytes are left.
const BUF_LEN: usize = 256 * 1024;
/// Room kept free for one event packet (at most 45 bytes by the fast path).
const SLACK: usize = 64;

/// Interned debug annotation name ids (with [`PerfettoOptions::args`]).
const ARG_NAMES: [(u64, &str); 4] = [(1, "sm"), (2, "block"), (3, "warp"), (4, "region")];

/// Choices for the `.pftrace` file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfettoOptions {
    /// The host's clocks, to convert the trace to `BOOTTIME` (see the
    /// module docs). `None`: the trace clock is `REALTIME`.
    pub host_clocks: Option<HostClocks>,
    /// Debug annotations `sm`, `block`, `warp` and `region` on every slice
    /// begin and instant (about 25 bytes more per such event).
    pub args: bool,
}

/// Slice begin, slice end and instant, as `TrackEvent.type` values.
const SLICE_BEGIN: u8 = 1;
const SLICE_END: u8 = 2;
const INSTANT: u8 = 3;

/// The launch being written.
#[derive(Clone, Copy, Debug)]
struct LaunchState {
    uuid: u64,
    /// `origin + offset_ns`, ns: where `t_ps = 0` goes.
    base_ns: i64,
}

/// Per slot of a region ([`RegionSlots`]), what names it in the trace.
#[derive(Clone, Debug)]
struct SlotTable {
    regions: Regions,
    slots: RegionSlots,
    /// Per slot, once seen: the region's name.
    names: Vec<Option<String>>,
    /// Per slot: the sequence whose state holds the name (0: none).
    interned: Vec<u32>,
    /// Per slot: the `region` debug annotation, encoded.
    region_args: Vec<Vec<u8>>,
}

impl SlotTable {
    /// The table of `regions`, every slot still unseen.
    fn new(regions: &Regions) -> Self {
        SlotTable {
            regions: regions.clone(),
            slots: RegionSlots::new(regions),
            names: Vec::new(),
            interned: Vec::new(),
            region_args: Vec::new(),
        }
    }

    /// The slot of `region`, its name cached.
    #[inline]
    fn slot(&mut self, region: u16) -> u32 {
        let i = usize::from(region);
        if self.names.get(i).is_some_and(|n| n.is_some()) && self.slots.is_direct(region) {
            return i as u32;
        }
        self.new_slot(region)
    }

    /// [`SlotTable::slot`] the first time a region is seen, and for ids
    /// outside the table.
    #[cold]
    fn new_slot(&mut self, region: u16) -> u32 {
        let i = self.slots.index(region);
        if i >= self.names.len() {
            self.names.resize(i + 1, None);
            self.interned.resize(i + 1, 0);
            self.region_args.resize_with(i + 1, Vec::new);
        }
        if self.names[i].is_none() {
            self.names[i] = Some(self.regions.name(region).into_owned());
            let a = &mut self.region_args[i];
            push_annotation(a, 4, u64::from(region));
        }
        i as u32
    }

    /// Takes `slots` (the same table's, with ids outside the table met
    /// since), forgetting what was cached of those ids.
    fn adopt(&mut self, slots: RegionSlots) {
        let direct = slots.direct_len();
        self.slots = slots;
        self.names.truncate(direct);
        self.interned.truncate(direct);
        self.region_args.truncate(direct);
    }
}

impl SlotOf for SlotTable {
    #[inline]
    fn slot(&mut self, region: u16) -> u32 {
        SlotTable::slot(self, region)
    }
}

/// What the warps written so far decide for the next: the sequence ids
/// taken, the SMs and blocks of the launch whose tracks are described.
#[derive(Debug, Default)]
pub(crate) struct PerfettoRunning {
    /// The last warp's sequence id (0 before the first).
    seq: u32,
    sms: HashSet<u16>,
    blocks: HashSet<(u16, u32)>,
    /// While other threads encode: the slots of region ids outside the
    /// table in the order the writer meets them (they name the events),
    /// and the planner that meets them in that order.
    strays: Option<(RegionSlots, Planner)>,
}

/// What a warp's place in the trace is: `None` when it is not written
/// (no span and no mark).
pub(crate) type PerfettoOrder = Option<WarpOrder>;

/// A written warp's place in the trace.
#[derive(Debug)]
pub(crate) struct WarpOrder {
    /// Its sequence id.
    seq: u32,
    /// Its SM's track is described here (its first warp in the launch).
    new_sm: bool,
    /// Its block's likewise.
    new_block: bool,
    /// The slots of ids outside the table, when the warp has such ids.
    slots: Option<RegionSlots>,
}

/// What [`PerfettoRunning::order`] needs to know of a warp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpPrep {
    /// It has a span or a mark.
    written: bool,
    /// It has a span or mark of an id outside the table.
    strays: bool,
}

impl WarpPrep {
    /// Of `warp`, whose events are named through `slots`.
    fn of(warp: &WarpTrace, slots: &RegionSlots) -> Self {
        let stray = |r: u16| !slots.is_direct(r);
        let written = !warp.spans.is_empty() || warp.marks().next().is_some();
        WarpPrep {
            written,
            strays: written
                && (warp.spans.iter().any(|s| stray(s.region))
                    || warp.marks().any(|m| stray(m.region))),
        }
    }
}

impl PerfettoRunning {
    /// The place of `warp` after the warps given theirs so far.
    fn order(&mut self, warp: &WarpTrace, prep: WarpPrep) -> PerfettoOrder {
        if !prep.written {
            return None;
        }
        self.seq = if self.seq == 0 {
            WRITER_SEQUENCE_ID + 1
        } else {
            self.seq.wrapping_add(1).max(WRITER_SEQUENCE_ID + 1)
        };
        let slots = match (&mut self.strays, prep.strays) {
            (Some((slots, planner)), true) => {
                planner.plan(warp, slots);
                Some(slots.clone())
            }
            _ => None,
        };
        Some(WarpOrder {
            seq: self.seq,
            new_sm: self.sms.insert(warp.id.sm),
            new_block: self.blocks.insert((warp.id.sm, warp.id.block)),
            slots,
        })
    }
}

/// Streams a `.pftrace`: [`PerfettoWriter::begin`], then for each launch
/// [`PerfettoWriter::launch`] followed by [`PerfettoWriter::warp`] for each
/// of its warps, then [`PerfettoWriter::finish`].
pub struct PerfettoWriter<W: Write> {
    w: W,
    /// Packets not yet handed to `w`: `out[..pos]` (`out` keeps its length,
    /// [`BUF_LEN`]).
    out: Vec<u8>,
    pos: usize,
    /// Scratch for one packet built from `prost` messages.
    pkt: Vec<u8>,
    opts: PerfettoOptions,
    /// What names the regions of the current launch.
    table: SlotTable,
    /// Scratch: the interned data of one event packet, encoded.
    intern_buf: Vec<u8>,
    /// The `sm`, `block` and `warp` debug annotations of the current warp.
    warp_args: Vec<u8>,
    /// The current event's values as annotations.
    value_args: Vec<u8>,
    /// The current warp's sequence id (0 before the first warp).
    seq: u32,
    /// What the warps written decide for the next.
    running: PerfettoRunning,
    /// `seq` as a varint after its field key.
    seq_field: ([u8; 6], usize),
    /// Devices seen, with their track uuids.
    devices: Vec<(String, u64)>,
    /// Mixed into every track uuid: from the first launch's origin.
    salt: u64,
    launch: Option<LaunchState>,
    /// Lays out the current warp's events.
    planner: Planner,
    /// Spans and marks written.
    events: u64,
    /// Track events written (a span is two).
    track_events: u64,
    /// A fork that encodes a chunk: `out` grows instead of going to `w`.
    grow: bool,
}

impl<W: Write> PerfettoWriter<W> {
    /// Starts the file. With host clocks, it begins with their snapshot.
    pub fn begin(w: W, opts: PerfettoOptions) -> io::Result<Self> {
        let mut pw = PerfettoWriter {
            w,
            out: vec![0; BUF_LEN],
            pos: 0,
            pkt: Vec::with_capacity(256),
            opts,
            table: SlotTable::new(&Regions::new()),
            intern_buf: Vec::new(),
            warp_args: Vec::new(),
            value_args: Vec::new(),
            seq: 0,
            running: PerfettoRunning::default(),
            seq_field: ([0; 6], 0),
            devices: Vec::new(),
            salt: 0,
            launch: None,
            planner: Planner::default(),
            events: 0,
            track_events: 0,
            grow: false,
        };
        if let Some(h) = opts.host_clocks {
            pw.packet(&h.snapshot_packet())?;
        }
        Ok(pw)
    }

    /// Spans and marks written so far: the events the Chrome writer writes
    /// for the same warps by default.
    pub fn events_written(&self) -> u64 {
        self.events
    }

    /// Track events written so far (a span is a begin and an end).
    pub fn track_events_written(&self) -> u64 {
        self.track_events
    }

    /// Appends one `prost` packet, framed as a `Trace.packet` field.
    fn packet(&mut self, p: &pb::TracePacket) -> io::Result<()> {
        let mut pkt = std::mem::take(&mut self.pkt);
        pkt.clear();
        p.encode_raw(&mut pkt);
        let mut head = Vec::with_capacity(11);
        head.push(0x0a);
        push_varint(&mut head, pkt.len() as u64);
        let r = self.put(&head).and_then(|()| self.put(&pkt));
        self.pkt = pkt;
        r
    }

    /// Appends `bytes` to the output.
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.pos + bytes.len() > self.out.len() - SLACK {
            if self.grow {
                let need = self.pos + bytes.len() + SLACK;
                self.out.resize(need.max(2 * self.out.len()), 0);
            } else {
                self.w.write_all(&self.out[..self.pos])?;
                self.pos = 0;
                if bytes.len() > self.out.len() - SLACK {
                    return self.w.write_all(bytes);
                }
            }
        }
        self.out[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
        Ok(())
    }

    /// Starts a launch: its device track (once per device name), its track
    /// and its host span. The warps of `dec` follow through
    /// [`PerfettoWriter::warp`]; `regions` names their events.
    pub fn launch(
        &mut self,
        group: &LaunchGroup,
        dec: &Decoder<'_>,
        regions: &Regions,
    ) -> io::Result<()> {
        if *regions != self.table.regions || self.launch.is_none() {
            self.table = SlotTable::new(regions);
        }
        let origin = dec.origin_globaltimer();
        if self.launch.is_none() {
            self.salt = splitmix64(origin ^ 0x6b74_7261_6365_0000);
            if self.opts.host_clocks.is_none() {
                // Alone, the file's times are on REALTIME.
                let ns = origin.saturating_add_signed(group.offset_ns);
                self.packet(&realtime_snapshot_packet(ns))?;
            }
        }
        let seq_saved = self.seq;
        self.seq = 0; // descriptors below go on the writer's sequence
        let uuid = self.launch_tracks(group, dec)?;
        self.seq = seq_saved;
        self.launch = Some(LaunchState {
            uuid,
            base_ns: i64::try_from(origin)
                .unwrap_or(i64::MAX)
                .saturating_add(group.offset_ns),
        });
        self.running.sms.clear();
        self.running.blocks.clear();
        Ok(())
    }

    /// Writes one warp of the current launch: its tracks, then its spans
    /// and marks.
    pub fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        if self.launch.is_none() {
            return Err(io::Error::other("PerfettoWriter::warp before launch"));
        }
        let prep = WarpPrep {
            written: !warp.spans.is_empty() || warp.marks().next().is_some(),
            strays: false,
        };
        let order = self.running.order(warp, prep);
        self.encode_warp(warp, order)
    }

    /// [`PerfettoWriter::warp`] at the place `order` says.
    fn encode_warp(&mut self, warp: &WarpTrace, order: PerfettoOrder) -> io::Result<()> {
        let Some(launch) = self.launch else {
            return Err(io::Error::other("PerfettoWriter::warp before launch"));
        };
        let Some(mut order) = order else {
            return Ok(());
        };
        if let Some(slots) = order.slots.take() {
            self.table.adopt(slots);
        }
        self.planner.plan(warp, &mut self.table);
        // A warp with a span or a mark has an event to write.
        let Some(first) = self.planner.evs.first() else {
            return Ok(());
        };
        let first_ns = ns_at(launch.base_ns, first.t);
        self.seq = order.seq;
        let tracks = WarpTracks::new(launch.uuid, warp.id);
        let start = sequence_start_packet(self.seq, tracks.warp, first_ns, self.opts.args);
        self.packet(&start)?;
        let evs = std::mem::take(&mut self.planner.evs);
        let r = self
            .warp_tracks(warp.id, &tracks, &order, &evs)
            .and_then(|()| {
                self.start_sequence_fields(warp.id, self.seq);
                self.events_of_warp(&evs, launch.base_ns, first_ns, tracks.warp)
            });
        self.planner.evs = evs;
        r
    }

    /// Where the output buffer is full at `pos`: hands it to the writer
    /// (the cursor goes back to 0), or in a fork doubles it. Returns the
    /// cursor.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, pos: usize) -> io::Result<usize> {
        if self.grow {
            let n = 2 * self.out.len();
            self.out.resize(n, 0);
            Ok(pos)
        } else {
            self.w.write_all(&self.out[..pos])?;
            Ok(0)
        }
    }

    /// Writes what is left and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.write_all(&self.out[..self.pos])?;
        self.pos = 0;
        self.w.flush()?;
        Ok(self.w)
    }
}

impl<W: Write> ChunkSink for PerfettoWriter<W> {
    type Running = PerfettoRunning;
    type Order = PerfettoOrder;
    type Prep = WarpPrep;
    type Fork = PerfettoWriter<io::Sink>;

    fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        PerfettoWriter::warp(self, warp)
    }

    fn take_running(&mut self) -> PerfettoRunning {
        PerfettoRunning {
            seq: self.running.seq,
            sms: std::mem::take(&mut self.running.sms),
            blocks: std::mem::take(&mut self.running.blocks),
            strays: Some((self.table.slots.clone(), Planner::default())),
        }
    }

    fn put_running(&mut self, running: PerfettoRunning) {
        let PerfettoRunning {
            seq,
            sms,
            blocks,
            strays,
        } = running;
        if let Some((slots, _)) = strays {
            self.table.adopt(slots);
        }
        // As after writing the warps here: the current sequence is the
        // last warp's.
        self.seq = seq;
        self.running = PerfettoRunning {
            seq,
            sms,
            blocks,
            strays: None,
        };
    }

    fn order(running: &mut PerfettoRunning, warp: &WarpTrace, prep: WarpPrep) -> PerfettoOrder {
        running.order(warp, prep)
    }

    /// A writer of the same launch whose output stays in its buffer.
    fn fork(&self) -> PerfettoWriter<io::Sink> {
        let mut table = SlotTable::new(&self.table.regions);
        table.slots = self.table.slots.clone();
        PerfettoWriter {
            w: io::sink(),
            out: vec![0; BUF_LEN],
            pos: 0,
            pkt: Vec::with_capacity(256),
            opts: self.opts,
            table,
            intern_buf: Vec::new(),
            warp_args: Vec::new(),
            value_args: Vec::new(),
            seq: 0,
            running: PerfettoRunning::default(),
            seq_field: ([0; 6], 0),
            devices: Vec::new(),
            salt: self.salt,
            launch: self.launch,
            planner: Planner::default(),
            events: 0,
            track_events: 0,
            grow: true,
        }
    }

    fn write_chunk(&mut self, chunk: &Encoded) -> io::Result<()> {
        self.w.write_all(&self.out[..self.pos])?;
        self.pos = 0;
        self.w.write_all(&chunk.bytes[..chunk.len])?;
        self.events += chunk.events;
        self.track_events += chunk.track_events;
        Ok(())
    }
}

impl ChunkEncoder for PerfettoWriter<io::Sink> {
    type Order = PerfettoOrder;
    type Prep = WarpPrep;

    fn prepare(&self, warp: &WarpTrace) -> WarpPrep {
        WarpPrep::of(warp, &self.table.slots)
    }

    fn encode(&mut self, warp: &WarpTrace, order: PerfettoOrder) -> io::Result<()> {
        self.encode_warp(warp, order)
    }

    fn take(&mut self, mut spare: Vec<u8>) -> Encoded {
        if spare.len() < BUF_LEN {
            spare.resize(BUF_LEN, 0);
        }
        let bytes = std::mem::replace(&mut self.out, spare);
        Encoded {
            bytes,
            len: std::mem::take(&mut self.pos),
            events: std::mem::take(&mut self.events),
            track_events: std::mem::take(&mut self.track_events),
        }
    }
}

/// The first packet of the file without host clocks: the trace clock is
/// `REALTIME`, read `ns` at the first launch's origin.
fn realtime_snapshot_packet(ns: u64) -> pb::TracePacket {
    pb::TracePacket {
        trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
        first_packet_on_sequence: Some(true),
        data: Some(pb::trace_packet::Data::ClockSnapshot(pb::ClockSnapshot {
            clocks: vec![pb::clock_snapshot::Clock {
                clock_id: Some(REALTIME_CLOCK_ID),
                timestamp: Some(ns),
                is_incremental: None,
            }],
            primary_trace_clock: Some(pb::BuiltinClock::BuiltinClockRealtime as i32),
        })),
        ..Default::default()
    }
}

/// The first packet of a warp's sequence `seq`, its state: a clock
/// snapshot starting the incremental clock at `first_ns`, defaults that put
/// events on that clock and on the warp's track, and with `args` the
/// annotation names.
fn sequence_start_packet(seq: u32, warp_uuid: u64, first_ns: u64, args: bool) -> pb::TracePacket {
    pb::TracePacket {
        trusted_packet_sequence_id: Some(seq),
        first_packet_on_sequence: Some(true),
        sequence_flags: Some(pb::trace_packet::SequenceFlags::SeqIncrementalStateCleared as u32),
        trace_packet_defaults: Some(pb::TracePacketDefaults {
            timestamp_clock_id: Some(INCREMENTAL_CLOCK_ID),
            track_event_defaults: Some(pb::TrackEventDefaults {
                track_uuid: Some(warp_uuid),
            }),
        }),
        interned_data: args.then(|| pb::InternedData {
            event_names: Vec::new(),
            debug_annotation_names: ARG_NAMES
                .iter()
                .map(|&(iid, name)| pb::DebugAnnotationName {
                    iid: Some(iid),
                    name: Some(name.into()),
                })
                .collect(),
        }),
        data: Some(pb::trace_packet::Data::ClockSnapshot(pb::ClockSnapshot {
            clocks: vec![
                pb::clock_snapshot::Clock {
                    clock_id: Some(REALTIME_CLOCK_ID),
                    timestamp: Some(first_ns),
                    is_incremental: None,
                },
                pb::clock_snapshot::Clock {
                    clock_id: Some(INCREMENTAL_CLOCK_ID),
                    timestamp: Some(first_ns),
                    is_incremental: Some(true),
                },
            ],
            primary_trace_clock: None,
        })),
        ..Default::default()
    }
}

/// `base_ns + round(t_ps / 1000)` (halves up), 0 if before the epoch.
#[inline]
fn ns_at(base_ns: i64, t_ps: i64) -> u64 {
    let ns = base_ns.saturating_add(t_ps.saturating_add(500).div_euclid(1000));
    ns.max(0) as u64
}
