//! The host's clocks, read together, and the clock snapshot that makes
//! `BOOTTIME` the trace clock.

use super::proto as pb;
use super::{REALTIME_CLOCK_ID, WRITER_SEQUENCE_ID};
use crate::timeline::{clock_ns, HostClock};

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
        syncs: impl IntoIterator<Item = &'a crate::format::clock_sync::ClockSync>,
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
    /// they cannot be read (not Linux).
    pub fn now() -> Option<HostClocks> {
        let b0 = clock_ns(HostClock::Boottime)?;
        let realtime_ns = clock_ns(HostClock::Realtime)?;
        let b1 = clock_ns(HostClock::Boottime)?;
        let monotonic_ns = clock_ns(HostClock::Monotonic)?;
        Some(HostClocks {
            realtime_ns,
            boottime_ns: b0 + (b1.saturating_sub(b0)) / 2,
            monotonic_ns,
        })
    }

    /// The file's first packet with these clocks: their snapshot, naming
    /// `BOOTTIME` the trace clock.
    pub(super) fn snapshot_packet(&self) -> pb::TracePacket {
        let clock = |id: u32, ns: u64| pb::clock_snapshot::Clock {
            clock_id: Some(id),
            timestamp: Some(ns),
            is_incremental: None,
        };
        let boottime = pb::BuiltinClock::BuiltinClockBoottime;
        let monotonic = pb::BuiltinClock::BuiltinClockMonotonic as u32;
        pb::TracePacket {
            trusted_packet_sequence_id: Some(WRITER_SEQUENCE_ID),
            first_packet_on_sequence: Some(true),
            data: Some(pb::trace_packet::Data::ClockSnapshot(pb::ClockSnapshot {
                clocks: [
                    Some(clock(boottime as u32, self.boottime_ns)),
                    Some(clock(REALTIME_CLOCK_ID, self.realtime_ns)),
                    (self.monotonic_ns != 0).then(|| clock(monotonic, self.monotonic_ns)),
                ]
                .into_iter()
                .flatten()
                .collect(),
                primary_trace_clock: Some(boottime as i32),
            })),
            ..Default::default()
        }
    }
}
