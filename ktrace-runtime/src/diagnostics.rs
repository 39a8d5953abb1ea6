//! What went wrong in a trace, said plainly: dropped events, unmatched begins
//! and ends, warps that never flushed, clocks that disagree.

use std::fmt;

/// Which warp a diagnostic is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WarpId {
    /// Linear block index.
    pub block: u32,
    /// Warp index within the block.
    pub warp: u16,
    /// SM the warp ran on.
    pub sm: u16,
}

impl fmt::Display for WarpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block {} warp {} (SM {})",
            self.block, self.warp, self.sm
        )
    }
}

/// One thing that went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// The ring overflowed: the oldest events were overwritten.
    Dropped {
        /// The warp.
        warp: WarpId,
        /// Events recorded.
        recorded: u32,
        /// Events kept (the capacity).
        kept: u32,
    },
    /// The warp opened its context but never flushed it (it trapped, exited
    /// early past its flush, or the kernel was cut short).
    NeverFlushed {
        /// The warp.
        warp: WarpId,
        /// Events recovered from the slot (a leading run of written events,
        /// placed through its time anchors or with the device-wide clock
        /// rate); 0 when none could be placed safely.
        recovered: u32,
        /// Entries after a clock that stepped backwards, left out.
        discarded: u32,
    },
    /// Begins of a region without a matching end.
    UnmatchedBegin {
        /// The warp.
        warp: WarpId,
        /// The region id.
        region: u16,
        /// How many.
        count: u32,
    },
    /// Ends of a region without a matching begin (the begin may have been
    /// dropped from the ring).
    UnmatchedEnd {
        /// The warp.
        warp: WarpId,
        /// The region id.
        region: u16,
        /// How many.
        count: u32,
    },
    /// Events whose type is none of begin, end, mark.
    UnknownEventType {
        /// The warp.
        warp: WarpId,
        /// The first unknown type seen.
        kind: u16,
        /// How many events were skipped.
        count: u32,
    },
    /// Value entries that do not belong to the event before them: a second
    /// value after one event (dropped), or a value whose region differs
    /// from its event's (attached all the same). A value whose event the
    /// ring overwrote is not counted: that is what a wrapped ring holds.
    StrayValue {
        /// The warp.
        warp: WarpId,
        /// Values after an event that had one already, dropped.
        extra: u32,
        /// Values attached to an event of another region.
        other_region: u32,
    },
    /// A slot's cycles-to-time ratio is off the device-wide median by more
    /// than 1%.
    ClockRateOutlier {
        /// The warp.
        warp: WarpId,
        /// The slot's clock rate in MHz.
        slot_mhz: u64,
        /// The median clock rate in MHz.
        median_mhz: u64,
    },
    /// The unwrapped events run past the warp's flush clock: two events were
    /// probably more than 2^32 cycles apart, which the 32-bit clock cannot
    /// tell.
    ClockInconsistent {
        /// The warp.
        warp: WarpId,
    },
    /// A slot's metadata names a different block or warp than its position.
    SlotMismatch {
        /// Slot index.
        slot: u64,
        /// The block and warp the position implies.
        expected: (u64, u32),
        /// What the metadata says.
        found: WarpId,
    },
    /// A slot's open magic is one that a later layout version introduced
    /// than the capture's: the slot is read as never opened.
    OpenMagicOfLaterLayout {
        /// Slot index.
        slot: u64,
        /// The open magic.
        magic: u32,
        /// The layout version that introduced it.
        introduced: u32,
        /// The capture's layout version.
        layout_version: u32,
    },
    /// No slot had a usable timer pair: times assume a nominal clock rate.
    NoClockCalibration {
        /// The clock rate assumed, in kHz.
        assumed_khz: u64,
    },
    /// Time anchors that disagree with their neighbours (out of order, or a
    /// clock rate outside a quarter to four times the launch's) and were
    /// not used.
    AnchorsRejected {
        /// The warp.
        warp: WarpId,
        /// How many.
        count: u32,
    },
    /// Events 2^32 cycles or more apart, which the 32-bit event clock cannot
    /// tell, placed by the time anchors.
    ClockWrapPlaced {
        /// The warp.
        warp: WarpId,
        /// Such gaps.
        gaps: u32,
        /// Whole turns of 2^32 cycles they added.
        turns: u64,
    },
    /// The flush clock is whole turns of 2^32 cycles past the last event
    /// and no anchor says where the gap was (two-point model): every time
    /// after the gap is early by that much.
    ClockWrapUnplaced {
        /// The warp.
        warp: WarpId,
        /// Turns of 2^32 cycles.
        turns: u64,
    },
    /// A long warp with events but no time anchor (built with
    /// `KTRACE_ANCHOR_CYCLES=0`?): its times between open and flush follow
    /// one mean clock rate and may be off by microseconds under load.
    NoAnchors {
        /// The warp.
        warp: WarpId,
        /// Open to flush, in nanoseconds.
        span_ns: u64,
    },
    /// A region id that the region table does not name.
    UnknownRegion {
        /// The region id.
        region: u16,
    },
}

impl Diagnostic {
    /// A short stable name of the kind of diagnostic.
    pub fn kind(&self) -> &'static str {
        match self {
            Diagnostic::Dropped { .. } => "dropped",
            Diagnostic::NeverFlushed { .. } => "never_flushed",
            Diagnostic::UnmatchedBegin { .. } => "unmatched_begin",
            Diagnostic::UnmatchedEnd { .. } => "unmatched_end",
            Diagnostic::UnknownEventType { .. } => "unknown_event_type",
            Diagnostic::StrayValue { .. } => "stray_value",
            Diagnostic::ClockRateOutlier { .. } => "clock_rate_outlier",
            Diagnostic::ClockInconsistent { .. } => "clock_inconsistent",
            Diagnostic::SlotMismatch { .. } => "slot_mismatch",
            Diagnostic::OpenMagicOfLaterLayout { .. } => "open_magic_of_later_layout",
            Diagnostic::NoClockCalibration { .. } => "no_clock_calibration",
            Diagnostic::AnchorsRejected { .. } => "anchors_rejected",
            Diagnostic::ClockWrapPlaced { .. } => "clock_wrap_placed",
            Diagnostic::ClockWrapUnplaced { .. } => "clock_wrap_unplaced",
            Diagnostic::NoAnchors { .. } => "no_anchors",
            Diagnostic::UnknownRegion { .. } => "unknown_region",
        }
    }
}

impl Diagnostic {
    /// Events lost, unmatched or of an unknown type.
    fn describe_events(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::Dropped {
                warp,
                recorded,
                kept,
            } => write!(
                f,
                "{warp}: {} events dropped ({recorded} recorded, the ring kept the newest {kept}); \
                 raise the per-warp capacity",
                u64::from(*recorded).saturating_sub(u64::from(*kept))
            ),
            Diagnostic::NeverFlushed {
                warp,
                recovered,
                discarded,
            } => {
                write!(
                    f,
                    "{warp}: opened but never flushed (trap or early exit?): {recovered} events \
                     recovered"
                )?;
                if *discarded > 0 {
                    write!(
                        f,
                        ", {discarded} entries after a clock that steps back left out"
                    )?;
                }
                write!(
                    f,
                    ", later ones lost; flush before an early return (KTRACE_FLUSH)"
                )
            }
            Diagnostic::UnmatchedBegin {
                warp,
                region,
                count,
            } => write!(
                f,
                "{warp}: {count} begin(s) of region {region} without an end, shown as no span; \
                 end the region on every path (or use KTRACE_SCOPE)"
            ),
            Diagnostic::UnmatchedEnd {
                warp,
                region,
                count,
            } => write!(
                f,
                "{warp}: {count} end(s) of region {region} without a begin, shown as no span; \
                 if events were dropped, raise the per-warp capacity"
            ),
            Diagnostic::UnknownEventType { warp, kind, count } => write!(
                f,
                "{warp}: {count} entr(ies) of unknown type {kind} skipped (no part in its times \
                 either); the buffer comes from another ktrace version or is corrupt: decode it \
                 with the ktrace that recorded it"
            ),
            Diagnostic::StrayValue {
                warp,
                extra,
                other_region,
            } => write!(
                f,
                "{warp}: {extra} value entr(ies) after an event that had its value already, \
                 dropped; {other_region} value(s) attached to an event of another region; the \
                 device writes neither: the buffer is corrupt or from another ktrace version"
            ),
            _ => unreachable!("fmt sends only event diagnostics here"),
        }
    }

    /// Clocks and times: rates, wraps and anchors.
    fn describe_clock(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::ClockRateOutlier {
                warp,
                slot_mhz,
                median_mhz,
            } => write!(
                f,
                "{warp}: clock rate {slot_mhz} MHz is more than 1% off the median {median_mhz} MHz: \
                 the SM clock moved, and this capture has no time anchors, so times inside the \
                 warp follow its mean rate; record with a ktrace that has anchors for exact times"
            ),
            Diagnostic::ClockInconsistent { warp } => write!(
                f,
                "{warp}: events run past the flush clock: two events more than 2^32 cycles \
                 apart? times after such a gap are wrong; record with time anchors"
            ),
            Diagnostic::NoClockCalibration { assumed_khz } => write!(
                f,
                "no warp flushed with a usable timer pair; times assume a clock of {assumed_khz} \
                 kHz and are only as right as that: let warps reach their flush"
            ),
            Diagnostic::AnchorsRejected { warp, count } => write!(
                f,
                "{warp}: {count} time anchor(s) out of order or implying an impossible clock \
                 rate, not used: times there interpolate between their neighbours"
            ),
            Diagnostic::ClockWrapPlaced { warp, gaps, turns } => write!(
                f,
                "{warp}: {gaps} gap(s) of 2^32 cycles or more between events, placed by the time \
                 anchors ({turns} x 2^32 cycles added)"
            ),
            Diagnostic::ClockWrapUnplaced { warp, turns } => write!(
                f,
                "{warp}: the flush is {turns} x 2^32 cycles past the last event; two events were \
                 more than 2^32 cycles apart and, without time anchors, times after the gap are \
                 early by that much"
            ),
            Diagnostic::NoAnchors { warp, span_ns } => write!(
                f,
                "{warp}: no time anchor in {:.3} ms of events (KTRACE_ANCHOR_CYCLES=0?); times \
                 follow one mean clock rate and may be off by microseconds if the clock moved",
                *span_ns as f64 / 1e6
            ),
            _ => unreachable!("fmt sends only clock diagnostics here"),
        }
    }

    /// The buffer's slots and the region table.
    fn describe_layout(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::SlotMismatch {
                slot,
                expected,
                found,
            } => write!(
                f,
                "slot {slot} should hold block {} warp {} but holds {found}; was the kernel \
                 launched with this session's grid, block and sampling?",
                expected.0, expected.1
            ),
            Diagnostic::OpenMagicOfLaterLayout {
                slot,
                magic,
                introduced,
                layout_version,
            } => write!(
                f,
                "slot {slot}: open magic {magic:#010x} belongs to layout version {introduced}, \
                 the capture is version {layout_version}: the slot is read as never opened; the \
                 capture's header does not match the build that wrote its buffer"
            ),
            Diagnostic::UnknownRegion { region } => {
                write!(
                    f,
                    "region id {region} is not in the region table, shown as \"region \
                     {region}\"; the table does not match the kernel: rebuild, or export the \
                     capture the run wrote"
                )
            }
            _ => unreachable!("fmt sends only slot and region table diagnostics here"),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::Dropped { .. }
            | Diagnostic::NeverFlushed { .. }
            | Diagnostic::UnmatchedBegin { .. }
            | Diagnostic::UnmatchedEnd { .. }
            | Diagnostic::UnknownEventType { .. }
            | Diagnostic::StrayValue { .. } => self.describe_events(f),
            Diagnostic::ClockRateOutlier { .. }
            | Diagnostic::ClockInconsistent { .. }
            | Diagnostic::NoClockCalibration { .. }
            | Diagnostic::AnchorsRejected { .. }
            | Diagnostic::ClockWrapPlaced { .. }
            | Diagnostic::ClockWrapUnplaced { .. }
            | Diagnostic::NoAnchors { .. } => self.describe_clock(f),
            Diagnostic::SlotMismatch { .. }
            | Diagnostic::OpenMagicOfLaterLayout { .. }
            | Diagnostic::UnknownRegion { .. } => self.describe_layout(f),
        }
    }
}

/// The diagnostics of one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// No diagnostics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one.
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    /// Adds several.
    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        self.items.extend(ds);
    }

    /// Adds all of `other`'s, after these.
    pub fn append(&mut self, mut other: Diagnostics) {
        self.items.append(&mut other.items);
    }

    /// All of them, in the order found.
    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Counts per kind, sorted by kind name.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        let mut m = std::collections::BTreeMap::new();
        for d in &self.items {
            *m.entry(d.kind()).or_insert(0usize) += 1;
        }
        m.into_iter().collect()
    }

    /// Total events dropped by ring overflow, over all warps.
    pub fn dropped_events(&self) -> u64 {
        self.items
            .iter()
            .map(|d| match d {
                Diagnostic::Dropped { recorded, kept, .. } => {
                    u64::from(*recorded).saturating_sub(u64::from(*kept))
                }
                _ => 0,
            })
            .sum()
    }

    /// A JSON value for output files: counts per kind and the first `limit`
    /// messages.
    pub fn to_json(&self, limit: usize) -> serde_json::Value {
        let counts: serde_json::Map<String, serde_json::Value> = self
            .counts()
            .into_iter()
            .map(|(k, n)| (k.to_string(), n.into()))
            .collect();
        let messages: Vec<serde_json::Value> = self
            .items
            .iter()
            .take(limit)
            .map(|d| d.to_string().into())
            .collect();
        serde_json::json!({
            "count": self.items.len(),
            "dropped_events": self.dropped_events(),
            "by_kind": counts,
            "messages": messages,
            "messages_omitted": self.items.len().saturating_sub(limit),
        })
    }
}
