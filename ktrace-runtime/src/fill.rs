//! How full a launch's rings were, and the cap that would have kept every
//! entry: read from the slots' metadata (`count`) and their kept entries,
//! without decoding.
//!
//! A ring entry is an event (begin, end, mark), a time anchor or a value
//! ([`EntryKind`], read through the launch's [`LaunchBuffer`] as decoding
//! reads it): up to one value and one anchor follow an event, so a warp's
//! count may be up to three times its events, and the cap must hold them all.

use std::fmt;

use crate::format::buffer::{EntryKind, LaunchBuffer, SlotView};
use crate::format::layout::{MAX_CAP, MIN_CAP};

/// How full the rings of one launch were.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingFill {
    /// The per-warp cap of the launch, in entries.
    pub cap: u32,
    /// Warps that flushed (their entry count is known).
    pub warps: u64,
    /// Warps that opened but never flushed (their count is unknown).
    pub unflushed: u64,
    /// The most entries (events, time anchors and values) any warp recorded.
    pub max_entries: u32,
    /// Warps that recorded more entries than the cap: their oldest were
    /// overwritten.
    pub overflowed: u64,
    /// Entries overwritten, over all warps.
    pub lost: u64,
    /// Events (begins, ends, marks) kept in the rings.
    pub events: u64,
    /// Time anchors kept in the rings.
    pub anchors: u64,
    /// Values kept in the rings (layout version 3 on).
    pub values: u64,
    /// Entries of a type the launch's layout version does not define.
    pub unknown: u64,
}

impl RingFill {
    /// The smallest power-of-two cap that would have kept every entry of
    /// the fullest warp (at least [`MIN_CAP`]); `None` when that is over
    /// [`MAX_CAP`].
    pub fn needed_cap(&self) -> Option<u32> {
        let cap = self.max_entries.max(MIN_CAP).checked_next_power_of_two()?;
        (cap <= MAX_CAP).then_some(cap)
    }
}

/// Reads the fill of a launch's buffer.
pub fn ring_fill(buffer: &LaunchBuffer<'_>) -> RingFill {
    let mut fill = RingFill {
        cap: buffer.shape().cap(),
        ..RingFill::default()
    };
    for slot in buffer.slots() {
        fill.add_slot(&slot);
    }
    fill
}

impl RingFill {
    /// Adds one slot of the launch (nothing when it never opened).
    pub fn add_slot(&mut self, slot: &SlotView<'_>) {
        let meta = slot.meta();
        if !meta.is_opened() {
            return;
        }
        if !meta.is_flushed() {
            self.unflushed += 1;
            return;
        }
        self.warps += 1;
        self.max_entries = self.max_entries.max(meta.count);
        if meta.count > self.cap {
            self.overflowed += 1;
            self.lost += u64::from(meta.count - self.cap);
        }
        for kind in slot.flushed_entries() {
            match kind {
                EntryKind::Event(_) => self.events += 1,
                EntryKind::Anchor => self.anchors += 1,
                EntryKind::Value => self.values += 1,
                EntryKind::Unknown => self.unknown += 1,
            }
        }
    }

    /// Adds the slots `other` read (of the same launch).
    pub fn merge(&mut self, other: &RingFill) {
        self.warps += other.warps;
        self.unflushed += other.unflushed;
        self.max_entries = self.max_entries.max(other.max_entries);
        self.overflowed += other.overflowed;
        self.lost += other.lost;
        self.events += other.events;
        self.anchors += other.anchors;
        self.values += other.values;
        self.unknown += other.unknown;
    }
}

impl fmt::Display for RingFill {
    /// One line: the fullest warp against the cap, the warps that
    /// overflowed, and the cap that would have kept everything.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.warps == 0 {
            return write!(f, "rings: no warp flushed, so no entry count to report");
        }
        let mut kept = if self.values == 0 {
            format!(
                "entries are events and time anchors: {} and {} kept",
                self.events, self.anchors
            )
        } else {
            format!(
                "entries are events, time anchors and values: {}, {} and {} kept",
                self.events, self.anchors, self.values
            )
        };
        if self.unknown > 0 {
            kept += &format!(
                ", and {} of a type the layout does not define",
                self.unknown
            );
        }
        let need = match self.needed_cap() {
            Some(c) if self.overflowed == 0 => format!("cap {c} would have been enough"),
            Some(c) => format!("cap {c} would have kept everything (KTRACE_CAP={c})"),
            None => format!("no cap holds that many (the largest is {MAX_CAP}): record fewer"),
        };
        write!(
            f,
            "rings: fullest warp {} of {} entries, {} of {} warps overflowed",
            self.max_entries, self.cap, self.overflowed, self.warps
        )?;
        if self.lost > 0 {
            write!(f, " ({} oldest entries lost)", self.lost)?;
        }
        write!(f, "; {need} ({kept})")?;
        if self.unflushed > 0 {
            write!(f, "; {} warps never flushed", self.unflushed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthLaunch, SynthWarp};

    #[test]
    fn counts_events_and_anchors_and_the_cap_needed() {
        // Warp 0: 10 events, an anchor after every one of them (period 1).
        let mut w0 = SynthWarp::new(0, 0).anchors(1);
        for i in 0..5 {
            w0 = w0.span(100 + i * 10, 105 + i * 10, 1);
        }
        // Warp 1: 3 events, one anchor (the first event's).
        let w1 = SynthWarp::new(0, 1)
            .anchors(1 << 20)
            .span(10, 20, 1)
            .mark(30, 2);
        let l = SynthLaunch::all_traced(2, 64, 32).with(w0).with(w1);
        let f = ring_fill(&l.buffer());
        assert_eq!(
            f,
            RingFill {
                cap: 32,
                warps: 2,
                unflushed: 0,
                max_entries: 20,
                overflowed: 0,
                lost: 0,
                events: 13,
                anchors: 11,
                values: 0,
                unknown: 0,
            }
        );
        assert_eq!(f.needed_cap(), Some(32));
        assert_eq!(
            f.to_string(),
            "rings: fullest warp 20 of 32 entries, 0 of 2 warps overflowed; cap 32 would have \
             been enough (entries are events and time anchors: 13 and 11 kept)"
        );
    }

    #[test]
    fn overflow_lost_entries_and_unflushed_warps() {
        let mut busy = SynthWarp::new(1, 0).anchors(1);
        for i in 0..50 {
            busy = busy.span(i * 10, i * 10 + 5, 0);
        }
        let l = SynthLaunch::all_traced(2, 64, 32)
            .with(busy)
            .with(SynthWarp::new(1, 1).span(0, 5, 0).never_flushed());
        let f = ring_fill(&l.buffer());
        // 100 events and 100 anchors into a ring of 32.
        assert_eq!((f.max_entries, f.overflowed, f.lost), (200, 1, 168));
        assert_eq!((f.events + f.anchors, f.unflushed), (32, 1));
        assert_eq!(f.needed_cap(), Some(256));
        let line = f.to_string();
        assert!(
            line.contains("1 of 1 warps overflowed (168 oldest entries lost)"),
            "{line}"
        );
        assert!(
            line.contains("cap 256 would have kept everything (KTRACE_CAP=256)"),
            "{line}"
        );
        assert!(line.ends_with("; 1 warps never flushed"), "{line}");
    }

    #[test]
    fn empty_launches_huge_counts_and_bad_lengths() {
        let l = SynthLaunch::all_traced(1, 32, 32);
        let f = ring_fill(&l.buffer());
        assert_eq!((f.warps, f.needed_cap()), (0, Some(MIN_CAP)));
        assert!(f.to_string().contains("no warp flushed"));
        let huge = RingFill {
            max_entries: MAX_CAP + 1,
            warps: 1,
            overflowed: 1,
            ..f
        };
        assert_eq!(huge.needed_cap(), None);
        assert!(huge.to_string().contains("no cap holds that many"));
        assert!(matches!(
            LaunchBuffer::new(&l.raw[1..], &l.shape, l.layout_version),
            Err(crate::error::Error::BufferSize { .. })
        ));
    }
}
