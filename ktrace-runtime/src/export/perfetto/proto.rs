//! The messages of Perfetto's trace format that the `.pftrace` writer uses,
//! declared with `prost` derives (no `protoc` at build time).
//!
//! Only the fields ktrace writes are declared; a decoder built from these
//! messages skips every other field, as protobuf decoders do. Names, field
//! numbers and types are Perfetto's own, from `protos/perfetto/trace/` of
//! the Perfetto repository (all `proto2`):
//!
//! | message | file |
//! | --- | --- |
//! | [`Trace`] | `trace.proto` |
//! | [`TracePacket`] | `trace_packet.proto` |
//! | [`TracePacketDefaults`] | `trace_packet_defaults.proto` |
//! | [`ClockSnapshot`] | `clock_snapshot.proto` (and `common/builtin_clock.proto`) |
//! | [`InternedData`] | `interned_data/interned_data.proto` |
//! | [`TrackDescriptor`] | `track_event/track_descriptor.proto` |
//! | [`TrackEvent`], [`TrackEventDefaults`], [`EventName`] | `track_event/track_event.proto` |
//! | [`DebugAnnotation`], [`DebugAnnotationName`] | `track_event/debug_annotation.proto` |
//!
//! Fields that Perfetto declares in a `oneof` are plain optional fields
//! here (the encoding is the same) except the packet's payload, which is
//! the oneof [`trace_packet::Data`].

/// A whole trace: a file is this message, which is also any concatenation
/// of such files (`cat a.pftrace b.pftrace`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets, in file order.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// One packet: a payload ([`trace_packet::Data`]) and the sequence state
/// that goes with it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// The packet's time, on `timestamp_clock_id`'s clock (or the
    /// sequence's default clock). For an incremental clock, the time since
    /// the previous packet on the sequence that had one.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The clock of `timestamp`.
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    /// The sequence (one writer's stream of packets) this packet belongs to;
    /// interned data, defaults and sequence-scoped clocks are per sequence.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// [`trace_packet::SequenceFlags`] bits.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Names this and later packets of the sequence refer to by id.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// Defaults for the later packets of the sequence.
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    /// Set on the first packet of a sequence: nothing was lost before it.
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
    /// The payload.
    #[prost(oneof = "trace_packet::Data", tags = "6, 11, 60")]
    pub data: Option<trace_packet::Data>,
}

/// Types nested in [`TracePacket`].
pub mod trace_packet {
    /// A packet's payload (Perfetto's `oneof data`, the fields ktrace uses).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Data {
        /// Clocks read at one instant.
        #[prost(message, tag = "6")]
        ClockSnapshot(super::ClockSnapshot),
        /// A slice begin or end, or an instant.
        #[prost(message, tag = "11")]
        TrackEvent(super::TrackEvent),
        /// A track's name and place in the hierarchy.
        #[prost(message, tag = "60")]
        TrackDescriptor(super::TrackDescriptor),
    }

    /// Bits of [`TracePacket::sequence_flags`](super::TracePacket::sequence_flags).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum SequenceFlags {
        /// No flag.
        SeqUnspecified = 0,
        /// The sequence's interned data and defaults start afresh here.
        SeqIncrementalStateCleared = 1,
        /// The packet needs the sequence's incremental state.
        SeqNeedsIncrementalState = 2,
    }
}

/// Defaults for the packets of a sequence.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    /// The clock of packets that name none.
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    /// Defaults for track events.
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
}

/// Defaults for the track events of a sequence.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    /// The track of events that name none.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// Clocks read at one instant, which lets the reader convert between them.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    /// The clocks.
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<clock_snapshot::Clock>,
    /// The clock the reader shows times on ([`BuiltinClock`]).
    #[prost(enumeration = "BuiltinClock", optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

/// Types nested in [`ClockSnapshot`].
pub mod clock_snapshot {
    /// One clock's reading.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Clock {
        /// 1 to 63: a [`BuiltinClock`](super::BuiltinClock); 64 to 127: a
        /// clock of this packet's sequence only.
        #[prost(uint32, optional, tag = "1")]
        pub clock_id: Option<u32>,
        /// The reading, in ns (times `unit_multiplier_ns`, unset here).
        #[prost(uint64, optional, tag = "2")]
        pub timestamp: Option<u64>,
        /// Whether packet timestamps on this clock are deltas from the
        /// previous one (sequence-scoped clocks only).
        #[prost(bool, optional, tag = "3")]
        pub is_incremental: Option<bool>,
    }
}

/// Perfetto's builtin clocks (the ones ktrace names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum BuiltinClock {
    /// No clock.
    BuiltinClockUnknown = 0,
    /// `CLOCK_REALTIME`.
    BuiltinClockRealtime = 1,
    /// `CLOCK_MONOTONIC`.
    BuiltinClockMonotonic = 3,
    /// `CLOCK_BOOTTIME`, the clock of Perfetto's own traces on Linux.
    BuiltinClockBoottime = 6,
}

/// Names a sequence's packets refer to by id (`iid`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    /// Event names ([`TrackEvent::name_iid`]).
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<EventName>,
    /// Debug annotation names ([`DebugAnnotation::name_iid`]).
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<DebugAnnotationName>,
}

/// An interned event name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventName {
    /// Its id, unique within the sequence's incremental state.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// An interned debug annotation name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotationName {
    /// Its id, unique within the sequence's incremental state.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// A track: a row of the timeline, in a tree of tracks.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id, unique in the whole trace (0 is the global track).
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// The track it nests under; none for a top-level track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// The name shown.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Shown in the track's help popup.
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
    /// How the track's children are ordered
    /// ([`track_descriptor::ChildTracksOrdering`]).
    #[prost(
        enumeration = "track_descriptor::ChildTracksOrdering",
        optional,
        tag = "11"
    )]
    pub child_ordering: Option<i32>,
    /// The track's place among its siblings when the parent orders them
    /// explicitly (lower first).
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
}

/// Types nested in [`TrackDescriptor`].
pub mod track_descriptor {
    /// How a track's children are ordered.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum ChildTracksOrdering {
        /// The reader's choice.
        Unknown = 0,
        /// By name.
        Lexicographic = 1,
        /// By first event.
        Chronological = 2,
        /// By `sibling_order_rank`.
        Explicit = 3,
    }
}

/// A slice begin or end, or an instant, on a track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// [`track_event::Type`].
    #[prost(enumeration = "track_event::Type", optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track; the sequence's [`TrackEventDefaults::track_uuid`] when
    /// unset.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// The name, by its id in [`InternedData::event_names`].
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// The name, spelled out.
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// Arguments shown with the event.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
}

/// Types nested in [`TrackEvent`].
pub mod track_event {
    /// What a track event is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Type {
        /// Unset.
        Unspecified = 0,
        /// Opens a slice on the track.
        SliceBegin = 1,
        /// Closes the track's innermost open slice.
        SliceEnd = 2,
        /// A slice without duration.
        Instant = 3,
    }
}

/// One argument of a track event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// The name, by its id in [`InternedData::debug_annotation_names`].
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// An unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// The name, written out (for names that are not interned).
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}
