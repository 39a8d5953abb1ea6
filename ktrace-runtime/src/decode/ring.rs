//! Walking one slot's ring of events: which entries the ring kept, oldest
//! first, and their 32-bit `%clock` values unwrapped to 64 bits against the
//! slot's open or flush `%clock64`. Time anchors (layout version 2) carry
//! globaltimer bits where events carry a clock: the walk skips them in the
//! clock chain and gives each the clock of the entry before it; so does a
//! value (layout version 3), which carries a 32-bit value there. What the
//! cycles mean in time is `calibrate.rs`'s job.

use super::calibrate::TimerPair;
use crate::format::buffer::{EntryKind, SlotView};
use crate::format::layout::{Event, SlotMeta};

/// Which timer pair the unwrapped chain hangs from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    /// The open pair: the ring kept every event, the oldest is the first.
    Open,
    /// The flush pair: older events were overwritten, so the chain is
    /// walked back from the flush.
    Flush,
}

/// One slot of the buffer: its metadata and its ring, read through the
/// buffer's view (which classifies its entries).
pub(super) struct Slot<'a> {
    view: SlotView<'a>,
    cap: u32,
    /// The slot's metadata.
    pub meta: SlotMeta,
}

/// The events a ring kept: `len` of them from ring index `start` on
/// (wrapping), oldest first.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kept {
    start: u32,
    /// How many.
    pub len: u32,
    anchor: Anchor,
    /// Entries of a never-flushed ring left out because they follow a
    /// clock that steps backwards (see [`Slot::kept`]).
    pub discarded: u32,
}

impl Kept {
    /// Whether the ring kept everything from the warp's open on, so the
    /// chain hangs from the open pair.
    pub fn starts_at_open(&self) -> bool {
        self.anchor == Anchor::Open
    }
}

impl<'a> Slot<'a> {
    /// The decoder's walk over `view`.
    pub fn new(view: SlotView<'a>) -> Self {
        Slot {
            view,
            cap: view.cap(),
            meta: *view.meta(),
        }
    }

    /// Whether `e` is a time anchor rather than an event.
    pub fn is_anchor(&self, e: &Event) -> bool {
        self.view.kind_of(e) == EntryKind::Anchor
    }

    /// Whether `e` is a value recorded with the event before it.
    pub fn is_value(&self, e: &Event) -> bool {
        self.view.kind_of(e) == EntryKind::Value
    }

    /// Whether `e` carries no `%clock` (a time anchor or a value): the clock
    /// chain skips it.
    pub fn is_clockless(&self, e: &Event) -> bool {
        self.view.kind_of(e).is_clockless()
    }

    fn event(&self, index: u32) -> Event {
        self.view.entry(index)
    }

    /// The entries the ring kept. A flushed slot kept `min(count, cap)`; a
    /// never-flushed one the leading run of written (non-zero) entries, or
    /// none when that run fills the ring (it may have wrapped, and its
    /// order is unknown). That run also ends before the first event whose
    /// clock is more than 2^31 cycles past the previous one (or the open):
    /// without a flush nothing can tell a step back from a gap of about a
    /// second, and the entries after it are `discarded`.
    pub fn kept(&self) -> Kept {
        let (cap, meta) = (self.cap, &self.meta);
        let (start, len, anchor, discarded) = if meta.is_flushed() {
            let n = meta.count.min(cap);
            if meta.count > cap {
                (meta.count & (cap - 1), n, Anchor::Flush, 0)
            } else {
                (0, n, Anchor::Open, 0)
            }
        } else {
            let mut k = 0;
            while k < cap && self.view.is_written(k) {
                k += 1;
            }
            if k == cap {
                (0, 0, Anchor::Open, 0)
            } else {
                let mut prev = meta.init_clock64 as u32;
                let mut ordered = k;
                for i in 0..k {
                    let e = self.event(i);
                    if self.is_clockless(&e) {
                        continue;
                    }
                    if e.clock.wrapping_sub(prev) >= 1 << 31 {
                        ordered = i;
                        break;
                    }
                    prev = e.clock;
                }
                (0, ordered, Anchor::Open, k - ordered)
            }
        };
        Kept {
            start,
            len,
            anchor,
            discarded,
        }
    }

    /// Where [`Slot::walk`] starts: the cycles of the chain's start before
    /// the anchor's `%clock64` (0 from the open; back from the flush, at
    /// most 2^32 per kept entry), and the 32-bit clock before the oldest
    /// kept event.
    pub fn chain_start(&self, kept: &Kept) -> (i64, u32) {
        let anchor = self.anchor(kept).clock64 as u32;
        match kept.anchor {
            Anchor::Open => (0, anchor),
            Anchor::Flush => {
                let mut cyc: i64 = 0;
                let mut next = anchor;
                for e in self.entries(kept).rev() {
                    if self.is_clockless(&e) {
                        continue;
                    }
                    cyc -= i64::from(next.wrapping_sub(e.clock));
                    next = e.clock;
                }
                (cyc, next)
            }
        }
    }

    /// The entries `kept` holds, oldest first.
    pub fn entries(&self, kept: &Kept) -> impl DoubleEndedIterator<Item = Event> + '_ {
        let (start, mask) = (kept.start, self.cap - 1);
        (0..kept.len).map(move |i| self.event((start + i) & mask))
    }

    /// The stamp of the entry at position `i` of `kept` (0: the oldest),
    /// if the warp stamps its events and that entry is an event.
    pub fn stamp(&self, kept: &Kept, i: u32) -> Option<u16> {
        self.view.stamp((kept.start + i) & (self.cap - 1))
    }

    /// Whether the warp stamps its events (`KTRACE_ANCHORS_STAMP`).
    pub fn stamps(&self) -> bool {
        self.view.stamps()
    }

    /// What `e`, an entry of this slot, is.
    #[inline]
    pub fn kind_of(&self, e: &Event) -> EntryKind {
        self.view.kind_of(e)
    }

    /// The timer pair that `kept`'s unwrapped clocks hang from.
    pub fn anchor(&self, kept: &Kept) -> TimerPair {
        match kept.anchor {
            Anchor::Open => TimerPair::open(&self.meta),
            Anchor::Flush => TimerPair::flush(&self.meta),
        }
    }

    /// Calls `f(position, entry, unwrapped %clock64)` for every kept entry,
    /// oldest first (position 0), until `f` returns false. A time anchor
    /// or a value gets the clock of the entry before it (or of the chain's start when
    /// it is the oldest kept entry).
    ///
    /// Each event's clock is the previous one plus the wrapping 32-bit
    /// difference, starting from the open `%clock64`; when older entries
    /// were dropped, the chain is first walked back from the flush
    /// `%clock64` to find where the oldest kept event sits.
    pub fn walk(&self, kept: &Kept, mut f: impl FnMut(u32, Event, i128) -> bool) {
        let n = kept.len;
        if n == 0 {
            return;
        }
        let at = |i: u32| self.event((kept.start + i) & (self.cap - 1));
        let (cyc, mut prev) = self.chain_start(kept);
        let mut cyc = i128::from(cyc);
        let anchor = i128::from(self.anchor(kept).clock64);
        for i in 0..n {
            let e = at(i);
            if !self.is_clockless(&e) {
                cyc += i128::from(e.clock.wrapping_sub(prev));
                prev = e.clock;
            }
            if !f(i, e, anchor + cyc) {
                return;
            }
        }
    }
}
