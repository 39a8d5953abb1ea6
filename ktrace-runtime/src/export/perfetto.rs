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
//! `prost` messages of [`super::perfetto_proto`]; event packets, one per
//! event, are encoded by hand into a reused buffer, byte for byte what
//! `prost` writes for the same message (a unit test checks it).

use std::collections::HashSet;
use std::io::{self, Write};

use prost::Message;

use super::perfetto_proto as pb;
use super::region_slots::RegionSlots;
use crate::decode::{Decoder, WarpTrace};
use crate::regions::Regions;

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

/// The host's clocks, read together: what lets Perfetto place ktrace's
/// `CLOCK_REALTIME` times on the `CLOCK_BOOTTIME` axis of its own traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostClocks {
    /// `CLOCK_REALTIME`, ns.
    pub realtime_ns: u64,
    /// `CLOCK_BOOTTIME`, ns.
    pub boottime_ns: u64,
    /// `CLOCK_MONOTONIC`, ns (0: not known, left out of the snapshot).
    pub monotonic_ns: u64,
}

impl HostClocks {
    /// The snapshot a capture carries: the first clock sync that read
    /// `CLOCK_BOOTTIME` (its realtime and boottime stand for one instant;
    /// no monotonic reading). `None` when no sync has one. It puts a trace
    /// exported later, or elsewhere, on the boot-time axis of the host and
    /// boot it was recorded on.
    pub fn from_syncs<'a>(
        syncs: impl IntoIterator<Item = &'a crate::timeline::ClockSync>,
    ) -> Option<HostClocks> {
        syncs
            .into_iter()
            .find(|s| s.boottime_ns != 0)
            .map(|s| HostClocks {
                realtime_ns: s.host_after_ns,
                boottime_ns: s.boottime_ns,
                monotonic_ns: 0,
            })
    }

    /// Reads the three clocks now: realtime between two boottime reads
    /// (their mean is the boottime written), then monotonic. `None` where
    /// they cannot be read (not 64-bit Linux).
    pub fn now() -> Option<HostClocks> {
        let b0 = clock_ns(CLOCK_BOOTTIME)?;
        let realtime_ns = clock_ns(CLOCK_REALTIME)?;
        let b1 = clock_ns(CLOCK_BOOTTIME)?;
        let monotonic_ns = clock_ns(CLOCK_MONOTONIC)?;
        Some(HostClocks {
            realtime_ns,
            boottime_ns: b0 + (b1.saturating_sub(b0)) / 2,
            monotonic_ns,
        })
    }
}

const CLOCK_REALTIME: i32 = 0;
const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_BOOTTIME: i32 = 7;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn clock_ns(clock: i32) -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec (two 64-bit fields on
    // 64-bit Linux) and clock_gettime writes only into it.
    let rc = unsafe { clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return None;
    }
    u64::try_from(ts.tv_sec)
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(u64::try_from(ts.tv_nsec).ok()?)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn clock_ns(_clock: i32) -> Option<u64> {
    None
}

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

/// One launch in the file: its tracks' names and where its events go on
/// the output axis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchGroup {
    /// The launch track's name, e.g. "launch 3: gemm_kernel".
    pub title: String,
    /// The device track's name, e.g. "GPU 0: NVIDIA H200". Launches with the
    /// same device name share its track.
    pub device: String,
    /// Added to absolute `%globaltimer` nanoseconds to place events on the
    /// output axis (`CLOCK_REALTIME`); 0 keeps the globaltimer axis.
    pub offset_ns: i64,
    /// The host's enqueue and completion of the launch, in ns on the output
    /// axis: a slice on the launch's "Host" track.
    pub host_span_ns: Option<(u64, u64)>,
}

/// Slice begin, slice end and instant, as `TrackEvent.type` values.
const SLICE_BEGIN: u8 = 1;
const SLICE_END: u8 = 2;
const INSTANT: u8 = 3;

/// One event of the warp being written, in output order.
#[derive(Clone, Copy, Debug)]
struct Ev {
    /// Time in ps from the launch origin.
    t: i64,
    /// The region's slot in [`PerfettoWriter::names`].
    slot: u32,
    /// [`SLICE_BEGIN`], [`SLICE_END`] or [`INSTANT`].
    kind: u8,
    /// 0: the warp's track; `n`: its n-th overlap track.
    lane: u32,
    /// The value recorded with a mark or a span's begin.
    value: Option<u32>,
    /// The value recorded with a span's end (on its begin event).
    end_value: Option<u32>,
}

/// The launch being written.
struct LaunchState {
    uuid: u64,
    /// `origin + offset_ns`, ns: where `t_ps = 0` goes.
    base_ns: i64,
    sms: HashSet<u16>,
    blocks: HashSet<(u16, u32)>,
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
    regions: Regions,
    slots: RegionSlots,
    /// Per slot, once seen: the region's name.
    names: Vec<Option<String>>,
    /// Per slot: the sequence whose state holds the name (0: none).
    interned: Vec<u32>,
    /// Scratch: the interned data of one event packet, encoded.
    intern_buf: Vec<u8>,
    /// Per slot: the `region` debug annotation, encoded.
    region_args: Vec<Vec<u8>>,
    /// The `sm`, `block` and `warp` debug annotations of the current warp.
    warp_args: Vec<u8>,
    /// The current event's values as annotations.
    value_args: Vec<u8>,
    /// The current warp's sequence id (0 before the first warp).
    seq: u32,
    /// `seq` as a varint after its field key.
    seq_field: ([u8; 6], usize),
    /// Devices seen, with their track uuids.
    devices: Vec<(String, u64)>,
    /// Mixed into every track uuid: from the first launch's origin.
    salt: u64,
    launch: Option<LaunchState>,
    /// Scratch: the current warp's events; per lane, the ends of its open
    /// spans (innermost last) with their slots.
    evs: Vec<Ev>,
    lanes: Vec<Vec<(i64, u32)>>,
    /// Spans and marks written.
    events: u64,
    /// Track events written (a span is two).
    track_events: u64,
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
            regions: Regions::new(),
            slots: RegionSlots::new(&Regions::new()),
            names: Vec::new(),
            interned: Vec::new(),
            intern_buf: Vec::new(),
            region_args: Vec::new(),
            warp_args: Vec::new(),
            value_args: Vec::new(),
            seq: 0,
            seq_field: ([0; 6], 0),
            devices: Vec::new(),
            salt: 0,
            launch: None,
            evs: Vec::new(),
            lanes: Vec::new(),
            events: 0,
            track_events: 0,
        };
        if let Some(h) = opts.host_clocks {
            let clock = |id: u32, ns: u64| pb::clock_snapshot::Clock {
                clock_id: Some(id),
                timestamp: Some(ns),
                is_incremental: None,
            };
            pw.packet(&pb::TracePacket {
                trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
                first_packet_on_sequence: Some(true),
                data: Some(pb::trace_packet::Data::ClockSnapshot(pb::ClockSnapshot {
                    clocks: [
                        Some(clock(
                            pb::BuiltinClock::BuiltinClockBoottime as u32,
                            h.boottime_ns,
                        )),
                        Some(clock(REALTIME_CLOCK_ID, h.realtime_ns)),
                        (h.monotonic_ns != 0).then(|| {
                            clock(
                                pb::BuiltinClock::BuiltinClockMonotonic as u32,
                                h.monotonic_ns,
                            )
                        }),
                    ]
                    .into_iter()
                    .flatten()
                    .collect(),
                    primary_trace_clock: Some(pb::BuiltinClock::BuiltinClockBoottime as i32),
                })),
                ..Default::default()
            })?;
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
        if self.pos + bytes.len() > BUF_LEN - SLACK {
            self.w.write_all(&self.out[..self.pos])?;
            self.pos = 0;
            if bytes.len() > BUF_LEN - SLACK {
                return self.w.write_all(bytes);
            }
        }
        self.out[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
        Ok(())
    }

    /// A track descriptor packet on the current sequence.
    fn track(
        &mut self,
        uuid: u64,
        parent: Option<u64>,
        name: String,
        rank: i32,
        description: Option<String>,
    ) -> io::Result<()> {
        let seq = if self.seq == 0 {
            WRITER_SEQUENCE_ID
        } else {
            self.seq
        };
        self.packet(&pb::TracePacket {
            trusted_packet_sequence_id: Some(seq),
            data: Some(pb::trace_packet::Data::TrackDescriptor(
                pb::TrackDescriptor {
                    uuid: Some(uuid),
                    parent_uuid: parent,
                    name: Some(name),
                    description,
                    child_ordering: Some(
                        pb::track_descriptor::ChildTracksOrdering::Explicit as i32,
                    ),
                    sibling_order_rank: Some(rank),
                },
            )),
            ..Default::default()
        })
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
        if *regions != self.regions || self.launch.is_none() {
            self.regions = regions.clone();
            self.slots = RegionSlots::new(regions);
            self.names.clear();
            self.interned.clear();
            self.region_args.clear();
        }
        let origin = dec.origin_globaltimer();
        let first_launch = self.launch.is_none();
        if first_launch {
            self.salt = splitmix64(origin ^ 0x6b74_7261_6365_0000);
            if self.opts.host_clocks.is_none() {
                // Alone, the file's times are on REALTIME.
                self.packet(&pb::TracePacket {
                    trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
                    first_packet_on_sequence: Some(true),
                    data: Some(pb::trace_packet::Data::ClockSnapshot(pb::ClockSnapshot {
                        clocks: vec![pb::clock_snapshot::Clock {
                            clock_id: Some(REALTIME_CLOCK_ID),
                            timestamp: Some(origin.saturating_add_signed(group.offset_ns)),
                            is_incremental: None,
                        }],
                        primary_trace_clock: Some(pb::BuiltinClock::BuiltinClockRealtime as i32),
                    })),
                    ..Default::default()
                })?;
            }
        }
        let seq_saved = self.seq;
        self.seq = 0; // descriptors below go on the writer's sequence
        let device_uuid = match self.devices.iter().find(|(d, _)| *d == group.device) {
            Some(&(_, u)) => u,
            None => {
                let rank = self.devices.len() as i32;
                let uuid = child_uuid(self.salt, 0, fnv1a(group.device.as_bytes()));
                self.devices.push((group.device.clone(), uuid));
                self.track(uuid, None, group.device.clone(), rank, None)?;
                uuid
            }
        };
        let s = dec.shape();
        let uuid = child_uuid(device_uuid, 1, u64::from(s.launch) ^ (origin << 20));
        self.track(
            uuid,
            Some(device_uuid),
            group.title.clone(),
            rank32(u64::from(s.launch)),
            None,
        )?;
        if let Some((start, end)) = group.host_span_ns {
            let host = child_uuid(uuid, 6, 0);
            self.track(
                host,
                Some(uuid),
                "Host".into(),
                -1,
                Some("the host's enqueue to completion of the launch".into()),
            )?;
            for (ts, kind) in [(start, SLICE_BEGIN), (end.max(start), SLICE_END)] {
                self.packet(&pb::TracePacket {
                    timestamp: Some(ts),
                    timestamp_clock_id: Some(REALTIME_CLOCK_ID),
                    trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
                    data: Some(pb::trace_packet::Data::TrackEvent(pb::TrackEvent {
                        r#type: Some(i32::from(kind)),
                        track_uuid: Some(host),
                        name: (kind == SLICE_BEGIN).then(|| group.title.clone()),
                        ..Default::default()
                    })),
                    ..Default::default()
                })?;
            }
        }
        self.seq = seq_saved;
        self.launch = Some(LaunchState {
            uuid,
            base_ns: i64::try_from(origin)
                .unwrap_or(i64::MAX)
                .saturating_add(group.offset_ns),
            sms: HashSet::new(),
            blocks: HashSet::new(),
        });
        Ok(())
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

    /// [`PerfettoWriter::slot`] the first time a region is seen, and for
    /// ids outside the table.
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

    /// Writes one warp of the current launch: its tracks, then its spans
    /// and marks.
    pub fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        let Some(launch) = self.launch.as_ref() else {
            return Err(io::Error::other("PerfettoWriter::warp before launch"));
        };
        let (launch_uuid, base_ns) = (launch.uuid, launch.base_ns);
        if warp.spans.is_empty() && warp.marks().next().is_none() {
            return Ok(());
        }
        self.plan(warp);
        let Some(first) = self.evs.first() else {
            return Ok(());
        };
        let first_ns = ns_at(base_ns, first.t);

        let id = warp.id;
        self.seq = if self.seq == 0 {
            WRITER_SEQUENCE_ID + 1
        } else {
            self.seq.wrapping_add(1).max(WRITER_SEQUENCE_ID + 1)
        };
        let seq = self.seq;
        let sm_uuid = child_uuid(launch_uuid, 2, u64::from(id.sm));
        let block_uuid = child_uuid(sm_uuid, 3, u64::from(id.block));
        let warp_uuid = child_uuid(block_uuid, 4, u64::from(id.warp));

        // The sequence's state: clock, defaults, annotation names.
        self.packet(&pb::TracePacket {
            trusted_packet_sequence_id: Some(seq),
            first_packet_on_sequence: Some(true),
            sequence_flags: Some(
                pb::trace_packet::SequenceFlags::SeqIncrementalStateCleared as u32,
            ),
            trace_packet_defaults: Some(pb::TracePacketDefaults {
                timestamp_clock_id: Some(INCREMENTAL_CLOCK_ID),
                track_event_defaults: Some(pb::TrackEventDefaults {
                    track_uuid: Some(warp_uuid),
                }),
            }),
            interned_data: self.opts.args.then(|| pb::InternedData {
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
        })?;

        // Tracks: SM and block when new, the warp, its overlap tracks.
        let launch = self.launch.as_mut().expect("checked above");
        let new_sm = launch.sms.insert(id.sm);
        let new_block = launch.blocks.insert((id.sm, id.block));
        if new_sm {
            self.track(
                sm_uuid,
                Some(launch_uuid),
                format!("SM {:03}", id.sm),
                i32::from(id.sm),
                None,
            )?;
        }
        if new_block {
            self.track(
                block_uuid,
                Some(sm_uuid),
                format!("Block {:04}", id.block),
                rank32(u64::from(id.block)),
                None,
            )?;
        }
        self.track(
            warp_uuid,
            Some(block_uuid),
            format!("Warp {:02}", id.warp),
            i32::from(id.warp),
            None,
        )?;
        let max_lane = self.evs.iter().map(|e| e.lane).max().unwrap_or(0);
        for lane in 1..=max_lane {
            self.track(
                child_uuid(warp_uuid, 5, u64::from(lane)),
                Some(warp_uuid),
                format!("Overlap {lane}"),
                lane as i32,
                Some(format!(
                    "spans of Warp {:02} that overlap an earlier span without nesting in it",
                    id.warp
                )),
            )?;
        }

        if self.opts.args {
            self.warp_args.clear();
            push_annotation(&mut self.warp_args, 1, u64::from(id.sm));
            push_annotation(&mut self.warp_args, 2, u64::from(id.block));
            push_annotation(&mut self.warp_args, 3, u64::from(id.warp));
        }
        let mut sf = [0u8; 6];
        sf[0] = 0x50;
        let n = 1 + write_varint(&mut sf[1..], u64::from(seq));
        self.seq_field = (sf, n);

        let evs = std::mem::take(&mut self.evs);
        let r = self.events_of_warp(&evs, base_ns, first_ns, warp_uuid);
        self.evs = evs;
        r
    }

    /// Appends the event packets of `evs`, the current warp's events.
    fn events_of_warp(
        &mut self,
        evs: &[Ev],
        base_ns: i64,
        first_ns: u64,
        warp_uuid: u64,
    ) -> io::Result<()> {
        let (sf, sn) = self.seq_field;
        let mut last_ns = first_ns;
        // The buffer and its cursor are locals here, so that the byte
        // stores do not make the compiler reload them.
        let mut pos = self.pos;
        for e in evs {
            if pos > BUF_LEN - SLACK {
                self.w.write_all(&self.out[..pos])?;
                pos = 0;
            }
            let ns = ns_at(base_ns, e.t);
            let delta = ns - last_ns;
            last_ns = ns;
            let slot = e.slot as usize;
            let named = e.kind != SLICE_END;
            let iid = slot as u64 + 1;
            let track = (e.lane != 0).then(|| child_uuid(warp_uuid, 5, u64::from(e.lane)));
            let intern = named && self.interned[slot] != self.seq;
            if intern || (self.opts.args && named) || e.value.is_some() || e.end_value.is_some() {
                self.pos = pos;
                self.event_with_extras(delta, e, track, intern)?;
                pos = self.pos;
            } else {
                let out: &mut [u8; SLACK] = (&mut self.out[pos..pos + SLACK])
                    .try_into()
                    .expect("SLACK bytes");
                pos += encode_small_event(out, delta, &sf, sn, e.kind, named.then_some(iid), track);
            }
            self.track_events += 1;
            self.events += u64::from(e.kind != SLICE_BEGIN);
        }
        self.pos = pos;
        Ok(())
    }

    /// Lays out the warp's spans on tracks (lane 0: the warp's own) and
    /// merges in its marks: `self.evs` in output order.
    fn plan(&mut self, warp: &WarpTrace) {
        if nest(&warp.spans, &mut self.lanes) {
            self.plan_one_track(warp);
        } else {
            self.plan_overlaps(warp);
        }
    }

    /// [`PerfettoWriter::plan`] for a warp whose spans all nest on its own
    /// track: one pass over spans and marks.
    fn plan_one_track(&mut self, warp: &WarpTrace) {
        let mut evs = std::mem::take(&mut self.evs);
        let mut stack = std::mem::take(&mut self.lanes[0]);
        evs.clear();
        stack.clear();
        let mut marks = warp.marks().peekable();
        // Marks go after the slice events at their time (see plan_overlaps).
        macro_rules! marks_before {
            ($t:expr) => {
                while let Some(m) = marks.next_if(|m| m.t_ps < $t) {
                    let slot = self.slot(m.region);
                    evs.push(Ev {
                        t: m.t_ps,
                        slot,
                        kind: INSTANT,
                        lane: 0,
                        value: m.value,
                        end_value: None,
                    });
                }
            };
        }
        for s in &warp.spans {
            while let Some(&(e, slot)) = stack.last() {
                if e > s.start_ps {
                    break;
                }
                marks_before!(e);
                evs.push(Ev {
                    t: e,
                    slot,
                    kind: SLICE_END,
                    lane: 0,
                    value: None,
                    end_value: None,
                });
                stack.pop();
            }
            marks_before!(s.start_ps);
            let slot = self.slot(s.region);
            evs.push(Ev {
                t: s.start_ps,
                slot,
                kind: SLICE_BEGIN,
                lane: 0,
                value: s.begin_value,
                end_value: s.end_value,
            });
            stack.push((s.end_ps.max(s.start_ps), slot));
        }
        while let Some((e, slot)) = stack.pop() {
            marks_before!(e);
            evs.push(Ev {
                t: e,
                slot,
                kind: SLICE_END,
                lane: 0,
                value: None,
                end_value: None,
            });
        }
        marks_before!(i64::MAX);
        if let Some(m) = marks.next() {
            // A mark at i64::MAX ps.
            let slot = self.slot(m.region);
            evs.push(Ev {
                t: m.t_ps,
                slot,
                kind: INSTANT,
                lane: 0,
                value: m.value,
                end_value: None,
            });
            for m in marks {
                let slot = self.slot(m.region);
                evs.push(Ev {
                    t: m.t_ps,
                    slot,
                    kind: INSTANT,
                    lane: 0,
                    value: m.value,
                    end_value: None,
                });
            }
        }
        self.evs = evs;
        self.lanes[0] = stack;
    }

    /// [`PerfettoWriter::plan`] for a warp with spans that overlap without
    /// nesting: each goes on the first track where it nests.
    fn plan_overlaps(&mut self, warp: &WarpTrace) {
        let mut evs = std::mem::take(&mut self.evs);
        let mut lanes = std::mem::take(&mut self.lanes);
        evs.clear();
        for l in &mut lanes {
            l.clear();
        }
        let mut used = 0usize;
        for s in &warp.spans {
            let slot = self.slot(s.region);
            let end = s.end_ps.max(s.start_ps);
            let mut placed = None;
            for (i, lane) in lanes.iter_mut().enumerate().take(used) {
                // Spans that ended by this start close first.
                while let Some(&(e, sl)) = lane.last() {
                    if e > s.start_ps {
                        break;
                    }
                    lane.pop();
                    evs.push(Ev {
                        t: e,
                        slot: sl,
                        kind: SLICE_END,
                        lane: i as u32,
                        value: None,
                        end_value: None,
                    });
                }
                if lane.last().map_or(true, |&(e, _)| e >= end) {
                    placed = Some(i);
                    break;
                }
            }
            let i = placed.unwrap_or_else(|| {
                if used == lanes.len() {
                    lanes.push(Vec::new());
                }
                used += 1;
                used - 1
            });
            lanes[i].push((end, slot));
            evs.push(Ev {
                t: s.start_ps,
                slot,
                kind: SLICE_BEGIN,
                lane: i as u32,
                value: s.begin_value,
                end_value: s.end_value,
            });
        }
        for (i, lane) in lanes.iter_mut().enumerate().take(used) {
            while let Some((e, sl)) = lane.pop() {
                evs.push(Ev {
                    t: e,
                    slot: sl,
                    kind: SLICE_END,
                    lane: i as u32,
                    value: None,
                    end_value: None,
                });
            }
        }
        if used > 1 {
            // Each lane's events are in order; the lanes interleave.
            evs.sort_by_key(|e| e.t);
        }
        // Marks go after the slice events at their time: inside a span
        // that begins then, after one that ends then (as in the Chrome
        // trace, where a mark at a span's start follows the span).
        let mut marks = warp.marks().peekable();
        if marks.peek().is_some() {
            let slice_events = evs.len();
            let mut merged = Vec::with_capacity(slice_events + warp.events.len());
            let mut i = 0;
            for m in marks {
                while i < slice_events && evs[i].t <= m.t_ps {
                    merged.push(evs[i]);
                    i += 1;
                }
                let slot = self.slot(m.region);
                merged.push(Ev {
                    t: m.t_ps,
                    slot,
                    kind: INSTANT,
                    lane: 0,
                    value: m.value,
                    end_value: None,
                });
            }
            merged.extend_from_slice(&evs[i..]);
            evs = merged;
        }
        self.evs = evs;
        self.lanes = lanes;
    }

    /// Appends an event packet that carries annotations or interns its
    /// name (the first use of a region's name on the sequence).
    #[cold]
    fn event_with_extras(
        &mut self,
        delta: u64,
        e: &Ev,
        track: Option<u64>,
        intern: bool,
    ) -> io::Result<()> {
        let slot = e.slot as usize;
        let named = e.kind != SLICE_END;
        let iid = slot as u64 + 1;
        self.intern_buf.clear();
        if intern {
            self.interned[slot] = self.seq;
            let name = self.names[slot].as_deref().unwrap_or_default();
            push_interned_name(&mut self.intern_buf, iid, name.as_bytes());
        }
        let no_args: &[u8] = &[];
        self.value_args.clear();
        if let Some(v) = e.value {
            push_named_annotation(&mut self.value_args, "value", u64::from(v));
        }
        if let Some(v) = e.end_value {
            push_named_annotation(&mut self.value_args, "end_value", u64::from(v));
        }
        let args = if self.opts.args && named {
            [
                self.warp_args.as_slice(),
                self.region_args[slot].as_slice(),
                self.value_args.as_slice(),
            ]
        } else {
            [no_args, no_args, self.value_args.as_slice()]
        };
        let (sf, sn) = self.seq_field;
        let mut pkt = std::mem::take(&mut self.pkt);
        pkt.clear();
        encode_event(
            &mut pkt,
            EventFields {
                delta,
                seq_field: &sf[..sn],
                kind: e.kind,
                name_iid: named.then_some(iid),
                track_uuid: track,
                args,
                interned: &self.intern_buf,
            },
        );
        let r = self.put(&pkt);
        self.pkt = pkt;
        r
    }

    /// Writes what is left and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.write_all(&self.out[..self.pos])?;
        self.pos = 0;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Whether `spans` (by start, outer first) all nest in one another or
/// follow one another; `lanes[0]` is scratch (made to exist).
fn nest(spans: &[crate::decode::Span], lanes: &mut Vec<Vec<(i64, u32)>>) -> bool {
    if lanes.is_empty() {
        lanes.push(Vec::new());
    }
    let stack = &mut lanes[0];
    stack.clear();
    for s in spans {
        let end = s.end_ps.max(s.start_ps);
        while stack.last().is_some_and(|&(e, _)| e <= s.start_ps) {
            stack.pop();
        }
        if stack.last().is_some_and(|&(e, _)| e < end) {
            return false;
        }
        stack.push((end, 0));
    }
    true
}

/// The fields of one event packet.
struct EventFields<'a> {
    /// Nanoseconds since the sequence's previous event.
    delta: u64,
    /// Field 10 (`trusted_packet_sequence_id`), encoded.
    seq_field: &'a [u8],
    /// `TrackEvent.type`.
    kind: u8,
    /// `TrackEvent.name_iid`.
    name_iid: Option<u64>,
    /// `TrackEvent.track_uuid`, when not the sequence's default.
    track_uuid: Option<u64>,
    /// `TrackEvent.debug_annotations`, encoded (three runs).
    args: [&'a [u8]; 3],
    /// Field 12 (`interned_data`), encoded, or empty.
    interned: &'a [u8],
}

/// Appends a `Trace.packet` holding a TracePacket with a TrackEvent,
/// byte for byte as `prost` encodes the same message: fields in tag
/// order, the `data` oneof (tags 6, 11, 60) first.
#[inline]
fn encode_event(out: &mut Vec<u8>, f: EventFields<'_>) {
    // After the annotations: TrackEvent's type (9), name_iid (10) and
    // track_uuid (11), then the packet's timestamp (8) and sequence id (10).
    let mut tail = [0u8; 48];
    tail[0] = 0x48;
    tail[1] = f.kind;
    let mut n = 2;
    if let Some(iid) = f.name_iid {
        tail[n] = 0x50;
        n += 1 + write_varint(&mut tail[n + 1..], iid);
    }
    if let Some(u) = f.track_uuid {
        tail[n] = 0x58;
        n += 1 + write_varint(&mut tail[n + 1..], u);
    }
    let te_len = f.args[0].len() + f.args[1].len() + f.args[2].len() + n;
    let te_end = n;
    tail[n] = 0x40;
    n += 1 + write_varint(&mut tail[n + 1..], f.delta);
    tail[n..n + f.seq_field.len()].copy_from_slice(f.seq_field);
    n += f.seq_field.len();
    let packet_len = 1 + varint_len(te_len as u64) + te_len + (n - te_end) + f.interned.len();
    let mut head = [0u8; 24];
    head[0] = 0x0a;
    let mut h = 1 + write_varint(&mut head[1..], packet_len as u64);
    head[h] = 0x5a;
    h += 1 + write_varint(&mut head[h + 1..], te_len as u64);
    out.extend_from_slice(&head[..h]);
    out.extend_from_slice(f.args[0]);
    out.extend_from_slice(f.args[1]);
    out.extend_from_slice(f.args[2]);
    out.extend_from_slice(&tail[..n]);
    out.extend_from_slice(f.interned);
}

/// [`encode_event`] for an event without annotations or interned data,
/// whose packet is at most 45 bytes: written at the start of `b`, its two
/// lengths patched in at the end. Returns its length.
#[inline(always)]
fn encode_small_event(
    b: &mut [u8; SLACK],
    delta: u64,
    seq_field: &[u8; 6],
    seq_len: usize,
    kind: u8,
    name_iid: Option<u64>,
    track_uuid: Option<u64>,
) -> usize {
    // 0a LEN 5a LEN | 48 kind [50 iid] [58 uuid] | 40 delta | 50 seq:
    // at most 4 + 2 + 11 + 11 + 11 + 6 = 45 bytes.
    b[0] = 0x0a;
    b[2] = 0x5a;
    b[4] = 0x48;
    b[5] = kind;
    let mut n = 6;
    if let Some(iid) = name_iid {
        b[n] = 0x50;
        n = put_varint(b, n + 1, iid);
    }
    if let Some(u) = track_uuid {
        b[n] = 0x58;
        n = put_varint(b, n + 1, u);
    }
    let te_len = n - 4;
    b[n] = 0x40;
    n = put_varint(b, n + 1, delta);
    for (i, &x) in seq_field.iter().enumerate().take(seq_len) {
        b[n + i] = x;
    }
    n += seq_len;
    b[1] = (n - 2) as u8;
    b[3] = te_len as u8;
    n
}

/// Writes `v` as a varint into `b` at `at`; returns where it ends.
#[inline(always)]
fn put_varint(b: &mut [u8; SLACK], mut at: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        b[at & (SLACK - 1)] = (v as u8) | 0x80;
        v >>= 7;
        at += 1;
    }
    b[at & (SLACK - 1)] = v as u8;
    at + 1
}

/// Appends field 12 (`interned_data`) holding one event name.
fn push_interned_name(out: &mut Vec<u8>, iid: u64, name: &[u8]) {
    // EventName { iid (1), name (2) } in InternedData.event_names (2).
    let en_len = 1 + varint_len(iid) + 1 + varint_len(name.len() as u64) + name.len();
    let id_len = 1 + varint_len(en_len as u64) + en_len;
    out.push(0x62);
    push_varint(out, id_len as u64);
    out.push(0x12);
    push_varint(out, en_len as u64);
    out.push(0x08);
    push_varint(out, iid);
    out.push(0x12);
    push_varint(out, name.len() as u64);
    out.extend_from_slice(name);
}

/// The length of `v` as a varint.
#[inline]
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// `base_ns + round(t_ps / 1000)` (halves up), 0 if before the epoch.
#[inline]
fn ns_at(base_ns: i64, t_ps: i64) -> u64 {
    let ns = base_ns.saturating_add(t_ps.saturating_add(500).div_euclid(1000));
    ns.max(0) as u64
}

/// A `sibling_order_rank` for `v`.
fn rank32(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// Appends a `DebugAnnotation { name_iid, uint_value }` as field 4 of a
/// TrackEvent.
fn push_annotation(out: &mut Vec<u8>, name_iid: u64, value: u64) {
    let mut body = [0u8; 24];
    body[0] = 0x08;
    let mut n = 1 + write_varint(&mut body[1..], name_iid);
    body[n] = 0x18;
    n += 1 + write_varint(&mut body[n + 1..], value);
    out.push(0x22);
    out.push(n as u8);
    out.extend_from_slice(&body[..n]);
}

/// Appends a `TrackEvent.debug_annotations` entry with a literal `name`
/// (not interned) and an unsigned value, fields in tag order (`uint_value`
/// 3, `name` 10).
fn push_named_annotation(out: &mut Vec<u8>, name: &str, value: u64) {
    let mut body = [0u8; 11];
    body[0] = 0x18;
    let n = 1 + write_varint(&mut body[1..], value);
    out.push(0x22);
    push_varint(out, (n + 2 + name.len()) as u64);
    out.extend_from_slice(&body[..n]);
    out.push(0x52);
    push_varint(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
}

/// Writes `v` as a varint at the start of `buf`; returns its length.
#[inline]
fn write_varint(buf: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
    i + 1
}

/// Appends `v` as a varint.
fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; 10];
    let n = write_varint(&mut b, v);
    out.extend_from_slice(&b[..n]);
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The uuid of the `kind` child of `parent` keyed `key` (never 0, the
/// global track).
fn child_uuid(parent: u64, kind: u8, key: u64) -> u64 {
    let u = splitmix64(parent ^ splitmix64(key ^ (u64::from(kind) << 56)));
    u.max(1)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::capture::LaunchCapture;
    use crate::decode::DecodeOptions;
    use crate::synth::{SynthLaunch, SynthWarp};

    /// A track as its descriptor declares it.
    #[derive(Clone, Debug)]
    struct Track {
        name: String,
        parent: Option<u64>,
        rank: i32,
        ordering: Option<i32>,
    }

    /// One track event, resolved: its track, type, name and time in ns.
    #[derive(Clone, Debug, PartialEq)]
    struct Event {
        track: u64,
        kind: i32,
        name: Option<String>,
        ns: u64,
        args: Vec<(String, u64)>,
    }

    #[derive(Default)]
    struct Sequence {
        clock: Option<u32>,
        track: Option<u64>,
        last_ns: u64,
        names: HashMap<u64, String>,
        arg_names: HashMap<u64, String>,
    }

    /// Reads a trace as Perfetto's importer does for the features ktrace
    /// writes: per-sequence defaults, interned names and incremental clock.
    fn read(bytes: &[u8]) -> (HashMap<u64, Track>, Vec<Event>, Vec<pb::ClockSnapshot>) {
        let trace = pb::Trace::decode(bytes).expect("a Trace message");
        let mut tracks = HashMap::new();
        let mut events = Vec::new();
        let mut snapshots = Vec::new();
        let mut seqs: HashMap<u32, Sequence> = HashMap::new();
        for p in trace.packet {
            let id = p
                .trusted_packet_sequence_id
                .expect("every packet names its sequence");
            let seq = seqs.entry(id).or_default();
            if p.sequence_flags.unwrap_or(0) & 1 != 0 {
                *seq = Sequence::default();
            }
            if let Some(d) = &p.trace_packet_defaults {
                seq.clock = d.timestamp_clock_id;
                seq.track = d.track_event_defaults.as_ref().and_then(|t| t.track_uuid);
            }
            if let Some(i) = &p.interned_data {
                for n in &i.event_names {
                    seq.names.insert(n.iid.unwrap(), n.name.clone().unwrap());
                }
                for n in &i.debug_annotation_names {
                    seq.arg_names
                        .insert(n.iid.unwrap(), n.name.clone().unwrap());
                }
            }
            match p.data {
                Some(pb::trace_packet::Data::ClockSnapshot(c)) => {
                    for clock in &c.clocks {
                        if clock.clock_id == Some(INCREMENTAL_CLOCK_ID) {
                            assert_eq!(clock.is_incremental, Some(true));
                            seq.last_ns = clock.timestamp.unwrap();
                        }
                    }
                    snapshots.push(c);
                }
                Some(pb::trace_packet::Data::TrackDescriptor(d)) => {
                    let prev = tracks.insert(
                        d.uuid.unwrap(),
                        Track {
                            name: d.name.unwrap(),
                            parent: d.parent_uuid,
                            rank: d.sibling_order_rank.unwrap_or(0),
                            ordering: d.child_ordering,
                        },
                    );
                    assert!(prev.is_none(), "one descriptor per track");
                }
                Some(pb::trace_packet::Data::TrackEvent(e)) => {
                    let ts = p.timestamp.expect("events have a timestamp");
                    let ns = match p.timestamp_clock_id.or(seq.clock) {
                        Some(INCREMENTAL_CLOCK_ID) => {
                            seq.last_ns += ts;
                            seq.last_ns
                        }
                        Some(REALTIME_CLOCK_ID) => ts,
                        other => panic!("clock {other:?}"),
                    };
                    let name = match e.name_iid {
                        Some(iid) => {
                            Some(seq.names.get(&iid).expect("interned before use").clone())
                        }
                        None => e.name.clone(),
                    };
                    let args = e
                        .debug_annotations
                        .iter()
                        .map(|a| {
                            let name = match a.name_iid {
                                Some(iid) => seq.arg_names[&iid].clone(),
                                None => a.name.clone().expect("a name or its id"),
                            };
                            (name, a.uint_value.unwrap())
                        })
                        .collect();
                    events.push(Event {
                        track: e.track_uuid.or(seq.track).expect("a track"),
                        kind: e.r#type.unwrap(),
                        name,
                        ns,
                        args,
                    });
                }
                None => {}
            }
        }
        (tracks, events, snapshots)
    }

    /// A track's name and its ancestors', root first.
    fn path(tracks: &HashMap<u64, Track>, mut uuid: u64) -> Vec<String> {
        let mut names = Vec::new();
        loop {
            let t = &tracks[&uuid];
            names.push(t.name.clone());
            match t.parent {
                Some(p) => uuid = p,
                None => break,
            }
        }
        names.reverse();
        names
    }

    /// Slices `(track, name, start, end)` and instants `(track, name, t)`;
    /// panics unless every track's slices nest and its times never go back.
    #[allow(clippy::type_complexity)]
    fn slices(events: &[Event]) -> (Vec<(u64, String, u64, u64)>, Vec<(u64, String, u64)>) {
        let mut open: HashMap<u64, Vec<(String, u64)>> = HashMap::new();
        let mut last: HashMap<u64, u64> = HashMap::new();
        let mut spans = Vec::new();
        let mut instants = Vec::new();
        for e in events {
            let l = last.entry(e.track).or_insert(0);
            assert!(e.ns >= *l, "time goes back on a track");
            *l = e.ns;
            let stack = open.entry(e.track).or_default();
            match e.kind {
                1 => stack.push((e.name.clone().unwrap(), e.ns)),
                2 => {
                    let (name, start) = stack.pop().expect("an end closes an open slice");
                    spans.push((e.track, name, start, e.ns));
                }
                3 => instants.push((e.track, e.name.clone().unwrap(), e.ns)),
                k => panic!("type {k}"),
            }
        }
        assert!(open.values().all(Vec::is_empty), "every slice ends");
        (spans, instants)
    }

    /// A launch whose warps hold everything the layout has to handle:
    /// regions that overlap without nesting (1 over 100..300 and 2 over
    /// 200..400 cycles), nested and repeated regions, zero-length spans,
    /// marks at span boundaries, an unmatched begin and an unmatched end,
    /// odd cycle counts (half nanoseconds at 2 GHz), and warps on two SMs.
    fn tricky_launch() -> LaunchCapture {
        SynthLaunch::all_traced(3, 64, 64)
            .with(
                SynthWarp::new(0, 0)
                    .begin(100, 1)
                    .mark(100, 5)
                    .begin(150, 3)
                    .begin(151, 3)
                    .end(181, 3)
                    .end(190, 3)
                    .begin(200, 2)
                    .begin(250, 4)
                    .end(280, 4)
                    .end(300, 1)
                    .mark(300, 5)
                    .begin(301, 6)
                    .end(301, 6)
                    .begin(350, 1)
                    .end(390, 1)
                    .end(400, 2)
                    .begin(401, 7)
                    .flush_at(1000),
            )
            .with(
                SynthWarp::new(0, 1)
                    .end(90, 2)
                    .span(100, 200, 1)
                    .span(150, 250, 2)
                    .span(160, 260, 3)
                    .span(170, 270, 4)
                    .mark(205, 5)
                    .flush_at(1000),
            )
            .with(SynthWarp::new(1, 0).sm(7).span(10, 20, 1).flush_at(100))
            .with(SynthWarp::new(1, 1).sm(7).flush_at(100))
            // Nested and consecutive spans only, marks at their edges.
            .with(
                SynthWarp::new(2, 0)
                    .sm(7)
                    .mark(5, 5)
                    .begin(10, 1)
                    .mark(10, 5)
                    .begin(10, 2)
                    .end(20, 2)
                    .mark(20, 5)
                    .begin(20, 3)
                    .end(31, 3)
                    .end(40, 1)
                    .mark(40, 5)
                    .begin(40, 4)
                    .end(40, 4)
                    .mark(90, 5)
                    .flush_at(100),
            )
            .into_capture()
    }

    fn regions() -> Regions {
        Regions::from_table(&[
            (1, "a"),
            (2, "b"),
            (3, "c"),
            (4, "d"),
            (5, "tick"),
            (6, "zero"),
        ])
    }

    fn group(n: u32) -> LaunchGroup {
        LaunchGroup {
            title: format!("launch {n}: tricky"),
            device: "GPU 0: test".into(),
            offset_ns: -1_000_000_000,
            host_span_ns: None,
        }
    }

    /// Writes `launch` and reads it back, with what the decoder found.
    #[allow(clippy::type_complexity)]
    fn round_trip(
        launch: &LaunchCapture,
        opts: PerfettoOptions,
    ) -> (
        Vec<WarpTrace>,
        i64,
        HashMap<u64, Track>,
        Vec<Event>,
        Vec<pb::ClockSnapshot>,
        u64,
    ) {
        let dec = Decoder::new(launch.buffer().unwrap(), &DecodeOptions::default());
        let mut w = PerfettoWriter::begin(Vec::new(), opts).unwrap();
        w.launch(&group(launch.shape.launch), &dec, &regions())
            .unwrap();
        let warps: Vec<WarpTrace> = dec.warps().collect();
        for warp in &warps {
            w.warp(warp).unwrap();
        }
        let written = w.events_written();
        let bytes = w.finish().unwrap();
        let (tracks, events, snapshots) = read(&bytes);
        let base = dec.origin_globaltimer() as i64 - 1_000_000_000;
        (warps, base, tracks, events, snapshots, written)
    }

    #[test]
    fn every_span_and_mark_comes_back_on_its_warps_tracks_and_slices_nest() {
        let launch = tricky_launch();
        for args in [false, true] {
            let opts = PerfettoOptions {
                host_clocks: None,
                args,
            };
            let (warps, base, tracks, events, snapshots, written) = round_trip(&launch, opts);
            let (spans, instants) = slices(&events);
            let regions = regions();
            // What the decoder matched, on the output axis, by warp.
            let mut expected_spans = Vec::new();
            let mut expected_marks = Vec::new();
            for w in &warps {
                let key = (w.id.sm, w.id.block, w.id.warp);
                for s in &w.spans {
                    let name = regions.name(s.region).into_owned();
                    expected_spans.push((
                        key,
                        name,
                        ns_at(base, s.start_ps),
                        ns_at(base, s.end_ps),
                    ));
                }
                for m in w.marks() {
                    expected_marks.push((
                        key,
                        regions.name(m.region).into_owned(),
                        ns_at(base, m.t_ps),
                    ));
                }
            }
            let warp_of = |track: u64| {
                let p = path(&tracks, track);
                assert_eq!(p[0], "GPU 0: test");
                assert_eq!(p[1], "launch 0: tricky");
                let num =
                    |s: &str, prefix: &str| s.strip_prefix(prefix).unwrap().parse::<u32>().unwrap();
                let key = (
                    num(&p[2], "SM ") as u16,
                    num(&p[3], "Block "),
                    num(&p[4], "Warp ") as u16,
                );
                match p.len() {
                    5 => (key, 0),
                    6 => (key, num(&p[5], "Overlap ")),
                    n => panic!("track depth {n}"),
                }
            };
            let mut got_spans: Vec<_> = spans
                .iter()
                .map(|(t, n, a, b)| (warp_of(*t).0, n.clone(), *a, *b))
                .collect();
            let mut got_marks: Vec<_> = instants
                .iter()
                .map(|(t, n, ns)| (warp_of(*t).0, n.clone(), *ns))
                .collect();
            expected_spans.sort();
            expected_marks.sort();
            got_spans.sort();
            got_marks.sort();
            assert_eq!(got_spans, expected_spans);
            assert_eq!(got_marks, expected_marks);
            assert_eq!(
                written,
                (expected_spans.len() + expected_marks.len()) as u64
            );
            // Both warps of block 0 needed overlap tracks: warp 0 for b over
            // a, warp 1 for its staircase of four spans.
            let overlaps: Vec<_> = spans
                .iter()
                .map(|(t, n, _, _)| (warp_of(*t), n.as_str()))
                .filter(|((_, lane), _)| *lane > 0)
                .collect();
            assert_eq!(
                overlaps,
                [
                    (((0, 0, 0), 1), "b"),
                    (((0, 0, 1), 1), "b"),
                    (((0, 0, 1), 2), "c"),
                    (((0, 0, 1), 3), "d"),
                ]
            );
            // Marks follow the slice events at their time: inside a span
            // that begins then, after one that ends then.
            let order: Vec<String> = events
                .iter()
                .filter(|e| warp_of(e.track).0 == (7, 2, 0))
                .map(|e| match e.kind {
                    1 => format!("B {}", e.name.as_deref().unwrap()),
                    2 => "E".to_string(),
                    _ => "I".to_string(),
                })
                .collect();
            assert_eq!(
                order,
                ["I", "B a", "B b", "I", "E", "B c", "I", "E", "E", "B d", "E", "I", "I"]
            );
            // Half nanoseconds round up: c over 150..190 and 151..181
            // cycles is 75..95 and 75.5..90.5 ns after open.
            let open = ns_at(base, warps[0].open_ps);
            let mut c: Vec<(u64, u64)> = spans
                .iter()
                .filter(|s| s.1 == "c" && warp_of(s.0).0 == (0, 0, 0))
                .map(|s| (s.2 - open, s.3 - open))
                .collect();
            c.sort();
            assert_eq!(c, [(75, 95), (76, 91)]);
            // The unmatched begin (region 7) and end are left out; the warp
            // without events has no track; every parent orders explicitly.
            assert!(events.iter().all(|e| e.name.as_deref() != Some("region 7")));
            assert!(!tracks.values().any(
                |t| t.name == "Warp 01" && path(&tracks, t.parent.unwrap())[3] == "Block 0001"
            ));
            assert!(tracks.values().all(|t| t.ordering == Some(3)));
            let sms: Vec<i32> = {
                let mut v: Vec<i32> = tracks
                    .values()
                    .filter(|t| t.name.starts_with("SM "))
                    .map(|t| t.rank)
                    .collect();
                v.sort();
                v
            };
            assert_eq!(sms, [0, 7]);
            // Alone, the trace is on REALTIME.
            assert_eq!(
                snapshots[0].primary_trace_clock,
                Some(pb::BuiltinClock::BuiltinClockRealtime as i32)
            );
            // Annotations name the event's own warp and region.
            for e in events.iter().filter(|e| e.kind != 2) {
                if !args {
                    assert!(e.args.is_empty());
                    continue;
                }
                let ((sm, block, warp), _) = warp_of(e.track);
                let region = regions
                    .iter()
                    .find(|(_, n)| Some(*n) == e.name.as_deref())
                    .unwrap()
                    .0;
                let want: Vec<(String, u64)> = [
                    ("sm", u64::from(sm)),
                    ("block", u64::from(block)),
                    ("warp", u64::from(warp)),
                    ("region", u64::from(region)),
                ]
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect();
                assert_eq!(e.args, want);
            }
        }
    }

    #[test]
    fn host_clocks_make_boottime_the_trace_clock_and_host_spans_get_a_track() {
        let launch = tricky_launch();
        let dec = Decoder::new(launch.buffer().unwrap(), &DecodeOptions::default());
        let host = HostClocks {
            realtime_ns: 1_700_000_000_000_000_000,
            boottime_ns: 5_000_000_000,
            monotonic_ns: 4_000_000_000,
        };
        let opts = PerfettoOptions {
            host_clocks: Some(host),
            args: false,
        };
        let mut w = PerfettoWriter::begin(Vec::new(), opts).unwrap();
        let g = LaunchGroup {
            host_span_ns: Some((1_700_000_000_000_000_100, 1_700_000_000_000_009_000)),
            ..group(0)
        };
        w.launch(&g, &dec, &regions()).unwrap();
        for warp in dec.warps() {
            w.warp(&warp).unwrap();
        }
        let (tracks, events, snapshots) = read(&w.finish().unwrap());
        let first = &snapshots[0];
        assert_eq!(
            first.primary_trace_clock,
            Some(pb::BuiltinClock::BuiltinClockBoottime as i32)
        );
        let clocks: Vec<(u32, u64)> = first
            .clocks
            .iter()
            .map(|c| (c.clock_id.unwrap(), c.timestamp.unwrap()))
            .collect();
        assert_eq!(
            clocks,
            [
                (6, 5_000_000_000),
                (1, 1_700_000_000_000_000_000),
                (3, 4_000_000_000)
            ]
        );
        // Every other snapshot starts a warp's incremental clock on REALTIME.
        assert!(snapshots[1..]
            .iter()
            .all(|s| s.primary_trace_clock.is_none()
                && s.clocks.len() == 2
                && s.clocks[0].clock_id == Some(REALTIME_CLOCK_ID)
                && s.clocks[1].clock_id == Some(INCREMENTAL_CLOCK_ID)
                && s.clocks[0].timestamp == s.clocks[1].timestamp));
        let (spans, _) = slices(&events);
        let host_spans: Vec<_> = spans
            .iter()
            .filter(|s| path(&tracks, s.0).last().unwrap() == "Host")
            .collect();
        assert_eq!(host_spans.len(), 1);
        assert_eq!((host_spans[0].2, host_spans[0].3), g.host_span_ns.unwrap());
        assert_eq!(
            path(&tracks, host_spans[0].0),
            ["GPU 0: test", "launch 0: tricky", "Host"]
        );
        assert_eq!(tracks[&host_spans[0].0].rank, -1);
    }

    #[test]
    fn launches_share_their_device_track_and_keep_apart_otherwise() {
        let a = tricky_launch();
        let mut b = crate::synth::sample_launch(1, 3);
        b.shape.launch = 1;
        let regions = regions();
        let mut w = PerfettoWriter::begin(Vec::new(), PerfettoOptions::default()).unwrap();
        let mut counts = Vec::new();
        for l in [&a, &b] {
            let dec = Decoder::new(l.buffer().unwrap(), &DecodeOptions::default());
            w.launch(&group(l.shape.launch), &dec, &regions).unwrap();
            let mut n = 0;
            for warp in dec.warps() {
                n += warp.spans.len() + warp.marks().count();
                w.warp(&warp).unwrap();
            }
            counts.push(n);
        }
        let (tracks, events, _) = read(&w.finish().unwrap());
        let devices: Vec<_> = tracks.values().filter(|t| t.parent.is_none()).collect();
        assert_eq!(devices.len(), 1);
        let mut per_launch: HashMap<String, usize> = HashMap::new();
        for e in events.iter().filter(|e| e.kind != 1) {
            *per_launch
                .entry(path(&tracks, e.track)[1].clone())
                .or_default() += 1;
        }
        assert_eq!(per_launch["launch 0: tricky"], counts[0]);
        assert_eq!(per_launch["launch 1: tricky"], counts[1]);
        let ranks: Vec<i32> = {
            let mut v: Vec<i32> = tracks
                .values()
                .filter(|t| t.name.starts_with("launch "))
                .map(|t| t.rank)
                .collect();
            v.sort();
            v
        };
        assert_eq!(ranks, [0, 1]);
        slices(&events);
    }

    #[test]
    fn values_become_annotations_named_value_and_end_value() {
        use crate::layout::EventKind;
        let launch = SynthLaunch::all_traced(1, 32, 32)
            .with(
                SynthWarp::new(0, 0)
                    .event_value(10, 1, EventKind::Begin, 7)
                    .event_value(20, 1, EventKind::End, 9)
                    .event_value(30, 5, EventKind::Mark, u32::MAX)
                    .span(40, 50, 2)
                    .flush_at(100),
            )
            .into_capture();
        for args in [false, true] {
            let opts = PerfettoOptions {
                args,
                ..PerfettoOptions::default()
            };
            let (_, _, _, events, _, _) = round_trip(&launch, opts);
            let named = |name: &str, kind: u8| {
                events
                    .iter()
                    .find(|e| e.name.as_deref() == Some(name) && e.kind == i32::from(kind))
                    .unwrap_or_else(|| panic!("{name} in {events:?}"))
                    .args
                    .iter()
                    .filter(|(k, _)| k.contains("value"))
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                named("a", SLICE_BEGIN),
                [("value".to_string(), 7), ("end_value".to_string(), 9)]
            );
            assert_eq!(
                named("tick", INSTANT),
                [("value".to_string(), u64::from(u32::MAX))]
            );
            assert!(named("b", SLICE_BEGIN).is_empty());
            // Without --args a plain span carries no annotations at all.
            if !args {
                let b = events
                    .iter()
                    .find(|e| e.name.as_deref() == Some("b"))
                    .unwrap();
                assert!(b.args.is_empty());
            }
        }
    }

    #[test]
    fn hand_encoded_event_packets_are_what_prost_writes() {
        let mut next = crate::synth::xorshift64(0x1234_5678_9abc_def1);
        let names = ["r", "a longer region name", &"x".repeat(300)];
        for i in 0..3000u64 {
            let x = next();
            let delta = x >> (x % 64);
            let seq = (WRITER_SEQUENCE_ID + 1).wrapping_add((x >> 7) as u32 % 5_000_000);
            let kind = [SLICE_BEGIN, SLICE_END, INSTANT][(i % 3) as usize];
            let iid = (kind != SLICE_END).then_some(1 + (x >> 11) % 70_000);
            let track = (i % 5 == 0).then_some(next());
            let args = (i % 4 == 0).then(|| {
                let mut a = Vec::new();
                push_annotation(&mut a, 1, x % 200);
                push_annotation(&mut a, 2, next() % 1_000_000);
                push_annotation(&mut a, 3, x % 32);
                let mut r = Vec::new();
                push_annotation(&mut r, 4, next() % 65_536);
                (a, r)
            });
            let values = (i % 6 == 0).then(|| {
                let mut v = Vec::new();
                push_named_annotation(&mut v, "value", x % 5_000_000_000);
                if i % 12 == 0 {
                    push_named_annotation(&mut v, "end_value", u64::from(u32::MAX));
                }
                v
            });
            let interned = (i % 7 == 0 && iid.is_some()).then(|| names[(i % 3) as usize]);
            let mut ib = Vec::new();
            if let (Some(name), Some(iid)) = (interned, iid) {
                push_interned_name(&mut ib, iid, name.as_bytes());
            }
            let mut sf = [0u8; 6];
            sf[0] = 0x50;
            let sn = 1 + write_varint(&mut sf[1..], u64::from(seq));
            let mut ours = Vec::new();
            let empty: &[u8] = &[];
            encode_event(
                &mut ours,
                EventFields {
                    delta,
                    seq_field: &sf[..sn],
                    kind,
                    name_iid: iid,
                    track_uuid: track,
                    args: {
                        let v = values.as_deref().unwrap_or(empty);
                        args.as_ref()
                            .map_or([empty, empty, v], |(a, r)| [a.as_slice(), r.as_slice(), v])
                    },
                    interned: &ib,
                },
            );
            let annotation = |name_iid: u64, v: u64| pb::DebugAnnotation {
                name_iid: Some(name_iid),
                uint_value: Some(v),
                name: None,
            };
            let expected = pb::Trace {
                packet: vec![pb::TracePacket {
                    timestamp: Some(delta),
                    trusted_packet_sequence_id: Some(seq),
                    interned_data: interned.map(|name| pb::InternedData {
                        event_names: vec![pb::EventName {
                            iid,
                            name: Some(name.into()),
                        }],
                        debug_annotation_names: Vec::new(),
                    }),
                    data: Some(pb::trace_packet::Data::TrackEvent(pb::TrackEvent {
                        r#type: Some(i32::from(kind)),
                        track_uuid: track,
                        name_iid: iid,
                        name: None,
                        debug_annotations: {
                            let mut v = Vec::new();
                            let (a, r) = args
                                .as_ref()
                                .map_or((empty, empty), |(a, r)| (a.as_slice(), r.as_slice()));
                            for chunk in [a, r, values.as_deref().unwrap_or(empty)] {
                                let mut buf = chunk;
                                while !buf.is_empty() {
                                    let len = usize::from(buf[1]);
                                    v.push(pb::DebugAnnotation::decode(&buf[2..2 + len]).unwrap());
                                    buf = &buf[2 + len..];
                                }
                            }
                            // The decoded annotations are the ones encoded.
                            if args.is_some() {
                                assert_eq!(v[3], annotation(4, v[3].uint_value.unwrap()));
                            }
                            if values.is_some() {
                                let k = if args.is_some() { 4 } else { 0 };
                                assert_eq!(v[k].name.as_deref(), Some("value"));
                                assert_eq!(v[k].uint_value, Some(x % 5_000_000_000));
                                assert_eq!(v.len() - k, if i % 12 == 0 { 2 } else { 1 });
                            }
                            v
                        },
                    })),
                    ..Default::default()
                }],
            }
            .encode_to_vec();
            assert_eq!(ours, expected, "packet {i}");
            if args.is_none() && values.is_none() && interned.is_none() {
                let mut small = [7u8; SLACK];
                let n = encode_small_event(&mut small, delta, &sf, sn, kind, iid, track);
                assert_eq!(small[..n], expected[..], "small packet {i}");
            }
            assert_eq!(varint_len(delta), {
                let mut b = [0u8; 10];
                write_varint(&mut b, delta)
            });
        }
    }

    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    #[test]
    fn host_clocks_are_read_together() {
        let a = HostClocks::now().expect("clock_gettime works on Linux");
        let b = HostClocks::now().expect("clock_gettime works on Linux");
        // Realtime is Unix time (after 2020); boottime counts at least what
        // monotonic does (it adds suspended time), read a moment earlier.
        assert!(a.realtime_ns > 1_577_836_800_000_000_000);
        assert!(a.boottime_ns + 1_000_000 >= a.monotonic_ns);
        // Read again, every clock moved forward by about the same amount.
        let d = |x: u64, y: u64| y.wrapping_sub(x) as i64;
        assert!(d(a.boottime_ns, b.boottime_ns) >= 0);
        assert!(d(a.monotonic_ns, b.monotonic_ns) >= 0);
        let skew = d(a.realtime_ns, b.realtime_ns) - d(a.boottime_ns, b.boottime_ns);
        assert!(skew.abs() < 50_000_000, "{a:?} {b:?}");
    }

    #[test]
    fn times_round_to_the_nearest_nanosecond_halves_up() {
        assert_eq!(ns_at(1000, 0), 1000);
        assert_eq!(ns_at(1000, 499), 1000);
        assert_eq!(ns_at(1000, 500), 1001);
        assert_eq!(ns_at(1000, 1499), 1001);
        assert_eq!(ns_at(1000, -500), 1000);
        assert_eq!(ns_at(1000, -501), 999);
        assert_eq!(ns_at(1000, -2_000_000), 0);
        assert_eq!(ns_at(i64::MAX, i64::MAX), i64::MAX as u64);
    }
}
