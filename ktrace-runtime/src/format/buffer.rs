//! One typed view of a launch's raw buffer: the only place that checks its
//! length against the launch shape and the only place that knows what each
//! ring entry is in the buffer's layout version.
//!
//! A [`LaunchBuffer`] is made once from the bytes, the [`LaunchShape`] and
//! the layout version of the device code that wrote them (a
//! [`LaunchCapture`](crate::format::capture::LaunchCapture) carries it). It
//! yields [`SlotView`]s, each with its metadata read and its entries
//! classified ([`EntryKind`]): an event (begin, end, mark), a time anchor
//! (layout version 2 on), a value (version 3 on), or unknown. Decoding, the
//! ring-fill report and the compact form of a capture all read through it,
//! so they agree on what a buffer holds.

use crate::error::{Error, Result};
use crate::format::layout::{
    Event, EventKind, SlotMeta, EVENT_ANCHOR, EVENT_BYTES, EVENT_VALUE, LAYOUT_VERSION, META_BYTES,
    OLDEST_LAYOUT_VERSION,
};
use crate::format::shape::LaunchShape;

/// A launch's raw buffer whose length matches its shape, read as the layout
/// version that wrote it.
#[derive(Clone, Copy, Debug)]
pub struct LaunchBuffer<'a> {
    raw: &'a [u8],
    shape: LaunchShape,
    layout_version: u32,
}

/// What a ring entry is, in the layout version of its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A begin, end or mark: it carries the `%clock` of the event.
    Event(EventKind),
    /// A time anchor (layout version 2 on): `%globaltimer` bits where an
    /// event carries its clock, for the event before it.
    Anchor,
    /// A 32-bit value recorded with the event before it (layout version 3
    /// on).
    Value,
    /// A type this layout version does not define.
    Unknown,
}

impl EntryKind {
    /// Whether the clock chain skips the entry: a time anchor or a value
    /// carries no `%clock`, and an entry of a type this layout does not
    /// define is not trusted to (its clock field could be anything).
    pub fn is_clockless(self) -> bool {
        matches!(
            self,
            EntryKind::Anchor | EntryKind::Value | EntryKind::Unknown
        )
    }
}

impl<'a> LaunchBuffer<'a> {
    /// A view of `raw`, the buffer of a launch of `shape` written by device
    /// code of layout version `layout_version`. Fails if the shape is
    /// invalid, the length is not what the shape needs, or the layout
    /// version is not one this build reads.
    pub fn new(raw: &'a [u8], shape: &LaunchShape, layout_version: u32) -> Result<Self> {
        shape.validate()?;
        let expected = shape.buffer_bytes().unwrap_or(u64::MAX);
        if raw.len() as u64 != expected {
            return Err(Error::BufferSize {
                expected,
                actual: raw.len() as u64,
            });
        }
        check_layout_version(layout_version)?;
        Ok(LaunchBuffer {
            raw,
            shape: *shape,
            layout_version,
        })
    }

    /// The launch shape.
    pub fn shape(&self) -> &LaunchShape {
        &self.shape
    }

    /// The layout version the buffer is read as.
    pub fn layout_version(&self) -> u32 {
        self.layout_version
    }

    /// The raw bytes.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Number of slots (opened or not).
    pub fn slot_count(&self) -> u64 {
        self.shape.slot_count()
    }

    /// Slot `index` (below [`slot_count`](Self::slot_count)).
    pub fn slot(&self, index: u64) -> SlotView<'a> {
        let slot_bytes = self.shape.slot_bytes() as usize;
        let bytes = &self.raw[index as usize * slot_bytes..][..slot_bytes];
        let (meta, ring) = bytes.split_at(META_BYTES);
        SlotView {
            index,
            meta: SlotMeta::from_bytes(meta.try_into().expect("64 bytes of metadata")),
            ring,
            cap: self.shape.cap(),
            layout_version: self.layout_version,
            stamps: false,
        }
        .stamped()
    }

    /// Every slot, in slot order.
    pub fn slots(&self) -> impl Iterator<Item = SlotView<'a>> + '_ {
        (0..self.slot_count()).map(move |i| self.slot(i))
    }
}

/// Fails unless this build reads buffers of `layout_version`.
pub fn check_layout_version(layout_version: u32) -> Result<()> {
    if (OLDEST_LAYOUT_VERSION..=LAYOUT_VERSION).contains(&layout_version) {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "layout version {layout_version} (this build reads {OLDEST_LAYOUT_VERSION} to \
             {LAYOUT_VERSION})"
        )))
    }
}

/// One slot of a [`LaunchBuffer`]: its metadata and its ring of entries.
#[derive(Clone, Copy, Debug)]
pub struct SlotView<'a> {
    index: u64,
    meta: SlotMeta,
    ring: &'a [u8],
    cap: u32,
    layout_version: u32,
    stamps: bool,
}

impl<'a> SlotView<'a> {
    fn stamped(mut self) -> Self {
        self.stamps = self.layout_version >= 6 && self.meta.stamps_events();
        self
    }

    /// Whether the slot's warp stamped its events with `%globaltimer` bits
    /// (layout version 6, `KTRACE_ANCHORS_STAMP`): [`entry`](Self::entry)
    /// then gives each event without its stamp, [`stamp`](Self::stamp) the
    /// stamp.
    pub fn stamps(&self) -> bool {
        self.stamps
    }

    /// The stamp of the entry at ring index `index`, if the slot's warp
    /// stamps its events and the entry is an event (a value carries none).
    pub fn stamp(&self, index: u32) -> Option<u16> {
        if !self.stamps {
            return None;
        }
        let raw = self.raw_entry(index);
        matches!(self.kind_of(&raw.without_stamp()), EntryKind::Event(_)).then(|| raw.stamp())
    }

    /// The slot's index in the buffer.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The slot's metadata.
    pub fn meta(&self) -> &SlotMeta {
        &self.meta
    }

    /// The ring's capacity in entries.
    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// The ring's bytes: `cap` entries of 8 bytes.
    pub fn ring(&self) -> &'a [u8] {
        self.ring
    }

    /// The entry at ring index `index` (below the cap), as stored, less
    /// its stamp when the warp stamps its events.
    pub fn entry(&self, index: u32) -> Event {
        let e = self.raw_entry(index);
        if self.stamps {
            e.without_stamp()
        } else {
            e
        }
    }

    /// Whether the entry at ring index `index` was written: not all zero
    /// as stored (a stamp counts).
    pub fn is_written(&self, index: u32) -> bool {
        self.raw_entry(index) != Event::default()
    }

    fn raw_entry(&self, index: u32) -> Event {
        let off = index as usize * EVENT_BYTES;
        Event::from_bytes(
            self.ring[off..off + EVENT_BYTES]
                .try_into()
                .expect("8 bytes"),
        )
    }

    /// What `e`, an entry of this slot, is in the buffer's layout version.
    #[inline]
    pub fn kind_of(&self, e: &Event) -> EntryKind {
        match e.kind {
            EVENT_ANCHOR if self.layout_version >= 2 => EntryKind::Anchor,
            EVENT_VALUE if self.layout_version >= 3 => EntryKind::Value,
            k => EventKind::from_raw(k).map_or(EntryKind::Unknown, EntryKind::Event),
        }
    }

    /// Ring entries a capture stores for this slot, from ring index 0: none
    /// for a slot never opened, `min(count, cap)` for a flushed one (a ring
    /// that wrapped is full), all `cap` for one opened but never flushed
    /// (its count is unknown).
    pub fn stored_entries(&self) -> u32 {
        stored_entries(&self.meta, self.cap)
    }

    /// The entries a flushed ring kept, from ring index 0 (in no particular
    /// order when the ring wrapped), classified; none for a slot that did
    /// not flush.
    pub fn flushed_entries(&self) -> impl Iterator<Item = EntryKind> + '_ {
        let n = if self.meta.is_flushed() {
            self.meta.count.min(self.cap)
        } else {
            0
        };
        (0..n).map(move |i| self.kind_of(&self.entry(i)))
    }
}

/// Ring entries stored for a slot whose metadata is `meta`, in a launch
/// whose rings hold `cap` entries ([`SlotView::stored_entries`]).
pub fn stored_entries(meta: &SlotMeta, cap: u32) -> u32 {
    if !meta.is_opened() {
        0
    } else if meta.is_flushed() {
        meta.count.min(cap)
    } else {
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::layout::{EVENT_BEGIN, EVENT_MARK};
    use crate::synth::{SynthLaunch, SynthWarp};

    #[test]
    fn the_length_shape_and_layout_version_are_checked_once() {
        let l = SynthLaunch::all_traced(1, 32, 32);
        assert!(LaunchBuffer::new(&l.raw, &l.shape, 3).is_ok());
        assert!(matches!(
            LaunchBuffer::new(&l.raw[1..], &l.shape, 3),
            Err(Error::BufferSize { .. })
        ));
        for bad in [0, LAYOUT_VERSION + 1] {
            let e = LaunchBuffer::new(&l.raw, &l.shape, bad).unwrap_err();
            assert!(e.to_string().contains("layout version"), "{e}");
        }
    }

    #[test]
    fn entries_are_classified_by_the_layout_version() {
        let w = SynthWarp::new(0, 0)
            .anchors(1)
            .event_value(10, 1, EventKind::Begin, 7)
            .mark(20, 2);
        let l = SynthLaunch::all_traced(1, 32, 32).with(w);
        let kinds = |v| {
            let b = LaunchBuffer::new(&l.raw, &l.shape, v).unwrap();
            let s = b.slot(0);
            (0..s.meta().count)
                .map(|i| s.kind_of(&s.entry(i)))
                .collect::<Vec<_>>()
        };
        // Begin, its value, its anchor; mark, its anchor.
        let begin = EntryKind::Event(EventKind::Begin);
        let mark = EntryKind::Event(EventKind::Mark);
        let v3 = kinds(3);
        assert_eq!(v3.len(), 5, "{v3:?}");
        assert_eq!(v3.iter().filter(|k| **k == EntryKind::Value).count(), 1);
        assert_eq!(v3.iter().filter(|k| **k == EntryKind::Anchor).count(), 2);
        assert_eq!((v3.contains(&begin), v3.contains(&mark)), (true, true));
        // Before version 3 a value entry is unknown; before 2, so is an anchor.
        let v2 = kinds(2);
        assert_eq!(v2.iter().filter(|k| **k == EntryKind::Unknown).count(), 1);
        let v1 = kinds(1);
        assert_eq!(v1.iter().filter(|k| **k == EntryKind::Unknown).count(), 3);
        assert!(EntryKind::Anchor.is_clockless() && EntryKind::Value.is_clockless());
        assert!(EntryKind::Unknown.is_clockless() && !begin.is_clockless());
        assert_eq!((EVENT_BEGIN, EVENT_MARK), (0, 2));
    }

    #[test]
    fn stored_entries_follow_the_metadata() {
        let l = SynthLaunch::all_traced(2, 64, 32)
            .with(SynthWarp::new(0, 0).span(10, 20, 0))
            .with(SynthWarp::new(1, 0).span(10, 20, 0).never_flushed());
        let b = LaunchBuffer::new(&l.raw, &l.shape, 3).unwrap();
        let stored: Vec<u32> = b.slots().map(|s| s.stored_entries()).collect();
        assert_eq!(stored, [2, 0, 32, 0]);
        let never_flushed = b.slot(2);
        let meta = never_flushed.meta();
        assert!(meta.is_opened() && !meta.is_flushed());
        assert_eq!(b.slot(2).flushed_entries().count(), 0);
        assert_eq!(b.slot(0).flushed_entries().count(), 2);
    }
}
