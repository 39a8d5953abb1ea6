//! Tracks: the uuids of the device, launch, SM, block, warp and overlap
//! tracks, and their descriptor packets.

use std::io::{self, Write};

use super::lanes::Ev;
use super::proto as pb;
use super::{
    LaunchGroup, PerfettoWriter, WarpOrder, REALTIME_CLOCK_ID, SLICE_BEGIN, SLICE_END,
    WRITER_SEQUENCE_ID,
};
use crate::decode::Decoder;
use crate::diagnostics::WarpId;
use crate::format::capture::HostStep;

/// The uuids of a warp's tracks and of those above it in the launch.
pub(super) struct WarpTracks {
    pub(super) launch: u64,
    pub(super) sm: u64,
    pub(super) block: u64,
    pub(super) warp: u64,
}

impl WarpTracks {
    /// The tracks of warp `id` in the launch whose track is `launch_uuid`.
    pub(super) fn new(launch_uuid: u64, id: WarpId) -> WarpTracks {
        let sm = child_uuid(launch_uuid, 2, u64::from(id.sm));
        let block = child_uuid(sm, 3, u64::from(id.block));
        let warp = child_uuid(block, 4, u64::from(id.warp));
        WarpTracks {
            launch: launch_uuid,
            sm,
            block,
            warp,
        }
    }
}

/// The uuid of the warp's `lane`-th overlap track ("Overlap `lane`").
#[inline]
pub(super) fn overlap_track(warp_uuid: u64, lane: u32) -> u64 {
    child_uuid(warp_uuid, 5, u64::from(lane))
}

impl<W: Write> PerfettoWriter<W> {
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

    /// The tracks of a launch: its device's (once per device name), its
    /// own and, with a host span, its "Host" track and the span. Returns
    /// the launch track's uuid.
    pub(super) fn launch_tracks(
        &mut self,
        group: &LaunchGroup,
        dec: &Decoder<'_>,
    ) -> io::Result<u64> {
        let device_uuid = self.device_track(&group.device)?;
        let origin = dec.origin_globaltimer();
        let launch = u64::from(dec.shape().launch);
        let uuid = child_uuid(device_uuid, 1, launch ^ (origin << 20));
        self.track(
            uuid,
            Some(device_uuid),
            group.title.clone(),
            rank32(launch),
            None,
        )?;
        if let Some(span) = group.host_span_ns {
            self.host_span(uuid, &group.title, span)?;
        }
        Ok(uuid)
    }

    /// The uuid of the track of `device`, its descriptor written the first
    /// time the name is seen.
    fn device_track(&mut self, device: &str) -> io::Result<u64> {
        if let Some(&(_, u)) = self.devices.iter().find(|(d, _)| d == device) {
            return Ok(u);
        }
        let rank = self.devices.len() as i32;
        let uuid = child_uuid(self.salt, 0, fnv1a(device.as_bytes()));
        self.devices.push((device.to_owned(), uuid));
        self.track(uuid, None, device.to_owned(), rank, None)?;
        Ok(uuid)
    }

    /// A "Host steps" track at the top of the trace and on it a slice per
    /// step, "NAME INDEX", on the host's `CLOCK_REALTIME` (where launches
    /// placed on the host's clock are). Nothing without steps.
    pub fn host_steps(&mut self, steps: &[HostStep]) -> io::Result<()> {
        if steps.is_empty() {
            return Ok(());
        }
        let uuid = child_uuid(self.salt, 7, 0);
        self.track(
            uuid,
            None,
            "Host steps".into(),
            -1,
            Some("the program's steps (ContinuousSession::step)".into()),
        )?;
        for step in steps {
            let title = format!("{} {}", step.name, step.index);
            self.realtime_slice(uuid, &title, (step.begin_ns, step.end_ns))?;
        }
        Ok(())
    }

    /// The launch's "Host" track and on it the slice `title` over
    /// `start..end` (ns on the output axis).
    fn host_span(&mut self, launch_uuid: u64, title: &str, span: (u64, u64)) -> io::Result<()> {
        let host = child_uuid(launch_uuid, 6, 0);
        self.track(
            host,
            Some(launch_uuid),
            "Host".into(),
            -1,
            Some("the host's enqueue to completion of the launch".into()),
        )?;
        self.realtime_slice(host, title, span)
    }

    /// The slice `title` on `track` over `start..end` in ns of the host's
    /// `CLOCK_REALTIME` (an end before its start ends it where it starts).
    fn realtime_slice(&mut self, track: u64, title: &str, span: (u64, u64)) -> io::Result<()> {
        let (start, end) = span;
        for (ts, kind) in [(start, SLICE_BEGIN), (end.max(start), SLICE_END)] {
            self.packet(&pb::TracePacket {
                timestamp: Some(ts),
                timestamp_clock_id: Some(REALTIME_CLOCK_ID),
                trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
                data: Some(pb::trace_packet::Data::TrackEvent(pb::TrackEvent {
                    r#type: Some(i32::from(kind)),
                    track_uuid: Some(track),
                    name: (kind == SLICE_BEGIN).then(|| title.to_owned()),
                    ..Default::default()
                })),
                ..Default::default()
            })?;
        }
        Ok(())
    }

    /// The descriptors of warp `id`'s tracks: its SM's and block's when
    /// new in the launch (as `order` says), its own, and the overlap tracks
    /// its planned events `evs` use.
    pub(super) fn warp_tracks(
        &mut self,
        id: WarpId,
        t: &WarpTracks,
        order: &WarpOrder,
        evs: &[Ev],
    ) -> io::Result<()> {
        if order.new_sm {
            self.track(
                t.sm,
                Some(t.launch),
                format!("SM {:03}", id.sm),
                i32::from(id.sm),
                None,
            )?;
        }
        if order.new_block {
            self.track(
                t.block,
                Some(t.sm),
                format!("Block {:04}", id.block),
                rank32(u64::from(id.block)),
                None,
            )?;
        }
        self.track(
            t.warp,
            Some(t.block),
            format!("Warp {:02}", id.warp),
            i32::from(id.warp),
            None,
        )?;
        let max_lane = evs.iter().map(|e| e.lane).max().unwrap_or(0);
        for lane in 1..=max_lane {
            self.track(
                overlap_track(t.warp, lane),
                Some(t.warp),
                format!("Overlap {lane}"),
                lane as i32,
                Some(format!(
                    "spans of Warp {:02} that overlap an earlier span without nesting in it",
                    id.warp
                )),
            )?;
        }
        Ok(())
    }
}

/// A `sibling_order_rank` for `v`.
fn rank32(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// A 64-bit mix of `x` (splitmix64's finalizer after its increment).
#[inline]
pub(super) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The uuid of the `kind` child of `parent` keyed `key` (never 0, the
/// global track).
#[inline]
fn child_uuid(parent: u64, kind: u8, key: u64) -> u64 {
    let u = splitmix64(parent ^ splitmix64(key ^ (u64::from(kind) << 56)));
    u.max(1)
}

/// FNV-1a of `bytes`: a device name's key.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
