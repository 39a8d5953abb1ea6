//! The layout of a warp's spans on lanes (lane 0: the warp's own track;
//! lane `n`: its "Overlap n" track) with its marks merged in, in output
//! order: what the writer encodes, one event at a time.

use std::iter::Peekable;

use super::super::region_slots::RegionSlots;
use super::{INSTANT, SLICE_BEGIN, SLICE_END};
use crate::decode::{Span, TimedEvent, WarpTrace};

/// Gives each region the slot that names it in the trace.
pub(super) trait SlotOf {
    /// The slot of `region`.
    fn slot(&mut self, region: u16) -> u32;
}

impl SlotOf for RegionSlots {
    fn slot(&mut self, region: u16) -> u32 {
        self.index(region) as u32
    }
}

/// One event of the warp being written, in output order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ev {
    /// Time in ps from the launch origin.
    pub(super) t: i64,
    /// The region's slot in the writer's per-slot tables.
    pub(super) slot: u32,
    /// [`SLICE_BEGIN`], [`SLICE_END`] or [`INSTANT`].
    pub(super) kind: u8,
    /// 0: the warp's track; `n`: its n-th overlap track.
    pub(super) lane: u32,
    /// The value recorded with a mark or a span's begin.
    pub(super) value: Option<u32>,
    /// The value recorded with a span's end (on its begin event).
    pub(super) end_value: Option<u32>,
}

impl Ev {
    /// The begin of span `s`, whose region has `slot`, on `lane`.
    #[inline]
    fn begin(s: &Span, slot: u32, lane: u32) -> Ev {
        Ev {
            t: s.start_ps,
            slot,
            kind: SLICE_BEGIN,
            lane,
            value: s.begin_value,
            end_value: s.end_value,
        }
    }

    /// The end, at `t`, of a span whose region has `slot`, on `lane`.
    #[inline]
    fn end(t: i64, slot: u32, lane: u32) -> Ev {
        Ev {
            t,
            slot,
            kind: SLICE_END,
            lane,
            value: None,
            end_value: None,
        }
    }

    /// Mark `m`, whose region has `slot`, on the warp's track.
    #[inline]
    fn mark(m: &TimedEvent, slot: u32) -> Ev {
        Ev {
            t: m.t_ps,
            slot,
            kind: INSTANT,
            lane: 0,
            value: m.value,
            end_value: None,
        }
    }
}

/// A warp's events in output order, and the scratch that lays them out.
#[derive(Clone, Debug, Default)]
pub(super) struct Planner {
    /// The events of the warp planned last.
    pub(super) evs: Vec<Ev>,
    /// Per lane, the ends of its open spans (innermost last) with their
    /// slots.
    lanes: Vec<Vec<(i64, u32)>>,
}

impl Planner {
    /// Lays out the warp's spans on tracks (lane 0: the warp's own) and
    /// merges in its marks: [`Planner::evs`] in output order, each region's
    /// slot from `slots`.
    pub(super) fn plan(&mut self, warp: &WarpTrace, slots: &mut impl SlotOf) {
        if nest(&warp.spans, &mut self.lanes) {
            self.plan_one_track(warp, slots);
        } else {
            self.plan_overlaps(warp, slots);
        }
    }

    /// [`Planner::plan`] for a warp whose spans all nest on its own
    /// track: one pass over spans and marks.
    fn plan_one_track(&mut self, warp: &WarpTrace, slots: &mut impl SlotOf) {
        let mut evs = std::mem::take(&mut self.evs);
        let mut stack = std::mem::take(&mut self.lanes[0]);
        evs.clear();
        stack.clear();
        let mut marks = warp.marks().peekable();
        // Marks go after the slice events at their time (see plan_overlaps).
        for s in &warp.spans {
            while let Some(&(e, slot)) = stack.last() {
                if e > s.start_ps {
                    break;
                }
                Self::marks_before(slots, &mut marks, e, &mut evs);
                evs.push(Ev::end(e, slot, 0));
                stack.pop();
            }
            Self::marks_before(slots, &mut marks, s.start_ps, &mut evs);
            let slot = slots.slot(s.region);
            evs.push(Ev::begin(s, slot, 0));
            stack.push((s.end_ps.max(s.start_ps), slot));
        }
        while let Some((e, slot)) = stack.pop() {
            Self::marks_before(slots, &mut marks, e, &mut evs);
            evs.push(Ev::end(e, slot, 0));
        }
        // The marks after every span, in order (those at i64::MAX ps too).
        for m in marks {
            let slot = slots.slot(m.region);
            evs.push(Ev::mark(m, slot));
        }
        self.evs = evs;
        self.lanes[0] = stack;
    }

    /// Appends to `evs` the next of `marks` that come before `t` ps.
    #[inline]
    fn marks_before<'a>(
        slots: &mut impl SlotOf,
        marks: &mut Peekable<impl Iterator<Item = &'a TimedEvent>>,
        t: i64,
        evs: &mut Vec<Ev>,
    ) {
        while let Some(m) = marks.next_if(|m| m.t_ps < t) {
            let slot = slots.slot(m.region);
            evs.push(Ev::mark(m, slot));
        }
    }

    /// [`Planner::plan`] for a warp with spans that overlap without
    /// nesting: each goes on the first track where it nests.
    fn plan_overlaps(&mut self, warp: &WarpTrace, slots: &mut impl SlotOf) {
        let mut evs = std::mem::take(&mut self.evs);
        let mut lanes = std::mem::take(&mut self.lanes);
        evs.clear();
        for l in &mut lanes {
            l.clear();
        }
        let used = Self::place_spans(slots, &warp.spans, &mut lanes, &mut evs);
        for (i, lane) in lanes.iter_mut().enumerate().take(used) {
            while let Some((e, sl)) = lane.pop() {
                evs.push(Ev::end(e, sl, i as u32));
            }
        }
        if used > 1 {
            // Each lane's events are in order; the lanes interleave.
            evs.sort_by_key(|e| e.t);
        }
        Self::merge_marks(slots, warp, &mut evs);
        self.evs = evs;
        self.lanes = lanes;
    }

    /// Puts each of `spans` on the first of `lanes` where it nests (a new
    /// lane where it nests in none), appending to `evs` its begin and the
    /// ends of the spans that ended by its start. Returns how many lanes
    /// are used; the spans still open are left on them.
    fn place_spans(
        slots: &mut impl SlotOf,
        spans: &[Span],
        lanes: &mut Vec<Vec<(i64, u32)>>,
        evs: &mut Vec<Ev>,
    ) -> usize {
        let mut used = 0usize;
        for s in spans {
            let slot = slots.slot(s.region);
            let end = s.end_ps.max(s.start_ps);
            let mut placed = None;
            for (i, lane) in lanes.iter_mut().enumerate().take(used) {
                // Spans that ended by this start close first.
                while let Some(&(e, sl)) = lane.last() {
                    if e > s.start_ps {
                        break;
                    }
                    lane.pop();
                    evs.push(Ev::end(e, sl, i as u32));
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
            evs.push(Ev::begin(s, slot, i as u32));
        }
        used
    }

    /// Merges the warp's marks into `evs`, its slice events in order.
    fn merge_marks(slots: &mut impl SlotOf, warp: &WarpTrace, evs: &mut Vec<Ev>) {
        // Marks go after the slice events at their time: inside a span
        // that begins then, after one that ends then (as in the Chrome
        // trace, where a mark at a span's start follows the span).
        let mut marks = warp.marks().peekable();
        if marks.peek().is_none() {
            return;
        }
        let slice_events = evs.len();
        let mut merged = Vec::with_capacity(slice_events + warp.events.len());
        let mut i = 0;
        for m in marks {
            while i < slice_events && evs[i].t <= m.t_ps {
                merged.push(evs[i]);
                i += 1;
            }
            let slot = slots.slot(m.region);
            merged.push(Ev::mark(m, slot));
        }
        merged.extend_from_slice(&evs[i..]);
        *evs = merged;
    }
}

/// Whether `spans` (by start, outer first) all nest in one another or
/// follow one another; `lanes[0]` is scratch (made to exist).
fn nest(spans: &[Span], lanes: &mut Vec<Vec<(i64, u32)>>) -> bool {
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
