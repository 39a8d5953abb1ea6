//! A slot's events in time order: one walk of its ring that reads the
//! events (their cycles, values, unknown types) and the time anchors
//! together, then the cycles turned into time through the map the anchors
//! give. Where the anchors reveal a gap of 2^32 cycles or more, which moves
//! every entry after it, the ring is walked again with the map known.

use super::anchors::anchor_globaltimer;
use super::calibrate::{TimerPair, TimerPoint};
use super::ring::{Kept, Slot};
use super::stamps::Stamps;
use super::{Decoder, SlotPlan, TimeBase, TimedEvent};
use crate::format::buffer::EntryKind;
use crate::format::layout::{Event, EventKind};

impl Decoder<'_> {
    /// The events `slot`'s ring kept, in time order (at equal times begin,
    /// then mark, then end).
    pub(super) fn timed_events(&self, slot: &Slot<'_>, plan: &SlotPlan) -> RingEvents {
        let kept = slot.kept();
        // The chain's start: every walked clock is this plus an offset.
        let start = i128::from(slot.anchor(&kept).clock64);
        let scan = self.scan(slot, &kept, start);
        let mut base = self.time_base_of(slot, &kept, plan, (scan.points, scan.in_stream, true));
        if !base.shifts.is_empty() {
            return self.timed_events_walked(slot, plan);
        }
        base.last_clock = scan.last_clock;
        let mut events = scan.events;
        let mut clock = base.clock.cursor();
        // Whether the events come in (time, begin-mark-end) order already.
        let mut in_order = true;
        let mut last = (i64::MIN, 0u8);
        for e in &mut events {
            e.t_ps = clock.ps(start + i128::from(e.t_ps));
            let key = (e.t_ps, e.kind.tie_rank());
            in_order &= last <= key;
            last = key;
        }
        // Times never decrease in ring order; only events at the same time
        // may need reordering (begin, mark, end), and usually none do.
        if !in_order {
            events.sort_by_key(|e| (e.t_ps, e.kind.tie_rank()));
        }
        RingEvents {
            events,
            walked: scan.walked,
            unknown: scan.unknown,
            stray: scan.stray,
            base: Some(base),
            kept,
        }
    }

    /// One walk of `slot`'s ring, as [`Slot::walk`] walks it: its events,
    /// each with its cycles after `start` (the chain's start, where the
    /// offsets fit an `i64`: at most 2^32 per entry) where its time goes,
    /// and (with anchors) its time points as
    /// [`super::anchors::anchor_points`] finds them.
    fn scan(&self, slot: &Slot<'_>, kept: &Kept, start: i128) -> RingScan {
        let meta = &slot.meta;
        let mut scan = RingScan {
            events: Vec::with_capacity(kept.len as usize),
            points: Vec::new(),
            in_stream: 0,
            walked: 0,
            unknown: None,
            stray: (0, 0),
            last_clock: None,
            prev: None,
            takes_value: None,
            after_entry: false,
        };
        if self.anchored && kept.starts_at_open() {
            scan.points
                .push((0, TimerPoint::from(TimerPair::open(meta))));
        }
        let (mut cyc, mut clock) = slot.chain_start(kept);
        let mut stamps =
            (self.anchored && slot.stamps()).then(|| Stamps::new(slot, kept, &self.device_ratio));
        for (i, e) in slot.entries(kept).enumerate() {
            let i = i as u32;
            match slot.kind_of(&e) {
                EntryKind::Event(kind) => {
                    cyc += i64::from(e.clock.wrapping_sub(clock));
                    clock = e.clock;
                    scan.entry(i, cyc, &e, Some(kind));
                    if let Some(stamps) = stamps.as_mut() {
                        let at = start + i128::from(cyc);
                        if let Some(p) = slot
                            .stamp(kept, i)
                            .and_then(|s| stamps.point(slot, kept, at, s))
                        {
                            scan.points.push((i, p));
                            scan.in_stream += 1;
                        }
                    }
                }
                EntryKind::Anchor if self.anchored => {
                    let globaltimer = anchor_globaltimer(meta.init_globaltimer, &e);
                    scan.anchor(i, start, globaltimer);
                }
                EntryKind::Anchor => {}
                EntryKind::Value => scan.value(&e),
                EntryKind::Unknown => scan.entry(i, cyc, &e, None),
            }
        }
        scan.last_clock = scan.prev.map(|(_, c)| start + i128::from(c));
        if self.anchored && meta.is_flushed() {
            scan.points
                .push((u32::MAX, TimerPoint::from(TimerPair::flush(meta))));
        }
        scan
    }

    /// [`Decoder::timed_events`] by two walks of the ring: the points,
    /// then the events placed as they are walked, shifts of 2^32-cycle gaps
    /// included.
    fn timed_events_walked(&self, slot: &Slot<'_>, plan: &SlotPlan) -> RingEvents {
        let kept = slot.kept();
        let mut out = RingEvents {
            events: Vec::with_capacity(kept.len as usize),
            walked: 0,
            unknown: None,
            stray: (0, 0),
            base: None,
            kept,
        };
        // Whether the events come in (time, begin-mark-end) order already.
        let mut in_order = true;
        let mut last = (i64::MIN, 0u8);
        // The event a value entry right after it belongs to.
        let mut takes_value: Option<usize> = None;
        // Whether an entry came before (a leading value's event was
        // overwritten: not stray).
        let mut after_entry = false;
        let base = self.for_each_event(slot, &kept, plan, false, |e, t| {
            if slot.is_value(&e) {
                // A value whose event the ring overwrote belongs to none.
                match takes_value.take() {
                    Some(i) => {
                        if out.events[i].region != e.region {
                            out.stray.1 += 1;
                        }
                        out.events[i].value = Some(e.clock);
                    }
                    None if after_entry => out.stray.0 += 1,
                    None => {}
                }
                after_entry = true;
                return true;
            }
            after_entry = true;
            out.walked += 1;
            takes_value = None;
            match EventKind::from_raw(e.kind) {
                Some(kind) => {
                    let key = (t, kind.tie_rank());
                    in_order &= last <= key;
                    last = key;
                    takes_value = Some(out.events.len());
                    out.events.push(TimedEvent {
                        t_ps: t,
                        region: e.region,
                        kind,
                        value: None,
                    })
                }
                None => {
                    let u = out.unknown.get_or_insert((e.kind, 0));
                    u.1 += 1;
                }
            }
            true
        });
        out.base = Some(base);
        // Times never decrease in ring order; only events at the same time
        // may need reordering (begin, mark, end), and usually none do.
        if !in_order {
            out.events.sort_by_key(|e| (e.t_ps, e.kind.tie_rank()));
        }
        out
    }
}

/// What one walk of a ring read (see [`Decoder::scan`]).
struct RingScan {
    /// The valid events in ring order, `t_ps` holding their cycles after
    /// the chain's start.
    events: Vec<TimedEvent>,
    /// The time points, as the anchors give them (none without anchors).
    points: Vec<(u32, TimerPoint)>,
    /// Anchors in the ring that paired with an event.
    in_stream: u64,
    /// Events walked, valid or not.
    walked: u32,
    /// The first unknown event type seen, and how many events had one.
    unknown: Option<(u16, u32)>,
    /// Stray values, as in [`RingEvents::stray`].
    stray: (u32, u32),
    /// The unwrapped clock of the last event walked.
    last_clock: Option<i128>,
    /// The last entry (position, cycles after the chain's start) that is
    /// neither an anchor nor a value: an anchor right after it pairs with it.
    prev: Option<(u32, i64)>,
    /// The event a value entry right after it belongs to.
    takes_value: Option<usize>,
    /// Whether an entry came before (a leading value's event was
    /// overwritten: not stray).
    after_entry: bool,
}

impl RingScan {
    /// Entry `i`, at `cyc` cycles after the chain's start: an event of
    /// `kind`, or of a type the layout does not define (`None`).
    #[inline]
    fn entry(&mut self, i: u32, cyc: i64, e: &Event, kind: Option<EventKind>) {
        self.prev = Some((i, cyc));
        self.after_entry = true;
        self.walked += 1;
        self.takes_value = None;
        match kind {
            Some(kind) => {
                self.takes_value = Some(self.events.len());
                self.events.push(TimedEvent {
                    t_ps: cyc,
                    region: e.region,
                    kind,
                    value: None,
                });
            }
            None => {
                let u = self.unknown.get_or_insert((e.kind, 0));
                u.1 += 1;
            }
        }
    }

    /// A time anchor at position `i` that read `globaltimer`: it pairs with
    /// the entry right before it; one whose entry was overwritten (the
    /// oldest kept) is unusable. `start` is the chain's start.
    #[inline]
    fn anchor(&mut self, i: u32, start: i128, globaltimer: u64) {
        if let Some((j, c)) = self.prev.filter(|(j, _)| j + 1 == i) {
            let point = TimerPoint {
                clock: start + i128::from(c),
                globaltimer,
            };
            self.points.push((j, point));
            self.in_stream += 1;
        }
    }

    /// A value entry: it belongs to the event right before it, or, when
    /// the ring overwrote that event, to none.
    #[inline]
    fn value(&mut self, e: &Event) {
        match self.takes_value.take() {
            Some(k) => {
                if self.events[k].region != e.region {
                    self.stray.1 += 1;
                }
                self.events[k].value = Some(e.clock);
            }
            None if self.after_entry => self.stray.0 += 1,
            None => {}
        }
        self.after_entry = true;
    }
}

/// What [`Decoder::timed_events`] read from a ring.
pub(super) struct RingEvents {
    /// The valid events, in time order.
    pub(super) events: Vec<TimedEvent>,
    /// Events walked, valid or not.
    pub(super) walked: u32,
    /// The first unknown event type seen, and how many events had one.
    pub(super) unknown: Option<(u16, u32)>,
    /// Values after an event that had one, and values of another region
    /// than their event's.
    pub(super) stray: (u32, u32),
    /// The map from cycles to time the events went through.
    pub(super) base: Option<TimeBase>,
    /// The entries the ring kept.
    pub(super) kept: Kept,
}
