//! A warp's time points from its time anchors: which anchors pair with
//! which event, the full `%globaltimer` of an anchor entry, and what
//! checking the points found, as diagnostics.

use crate::diagnostics::Diagnostic;
use crate::format::layout::{Event, EventKind, SlotMeta};

use super::calibrate::{self, ClockRatio, TimerPair, TimerPoint};
use super::ring::{Kept, Slot};
use super::stamps::Stamps;
use super::warp_id;

/// A flushed warp whose globaltimer span is at least this long and that
/// recorded events but no time anchor is reported: under load its times
/// between open and flush may be off by microseconds.
pub(super) const LONG_WARP_NS: u64 = 1_000_000;

/// A warp's time points in cycle order, each with the ring position from
/// which a 2^32-cycle shift found at it applies: the open pair (when the
/// chain starts there), every usable anchor (paired with the event right
/// before it), the flush pair (position `u32::MAX`: never shifted). Also
/// how many in-stream anchors there were.
///
/// With `until = Some(n)` the walk stops once `n` usable anchors follow the
/// first valid event, and the list is a prefix of the whole one (no flush
/// pair); `None` when the walk reached the end anyway. Checking points is a
/// left-to-right pass, so the checked prefix is the prefix of the checked
/// whole, and it places every event up to those anchors the same way.
///
/// A warp that stamps its events (layout version 6) has a point at one
/// event in every [`ANCHOR_CYCLES_DEFAULT`](crate::format::layout::ANCHOR_CYCLES_DEFAULT)
/// cycles instead, its stamps unwrapped at the device-wide `rate`
/// ([`Stamps`]).
pub(super) fn anchor_points(
    slot: &Slot<'_>,
    kept: &Kept,
    until: Option<u64>,
    rate: &ClockRatio,
) -> (Vec<(u32, TimerPoint)>, u64, bool) {
    let meta = &slot.meta;
    let mut points: Vec<(u32, TimerPoint)> = Vec::new();
    if kept.starts_at_open() {
        points.push((0, TimerPoint::from(TimerPair::open(meta))));
    }
    let mut prev: Option<(u32, i128)> = None;
    let mut in_stream = 0u64;
    let mut after_first = None::<u64>;
    let mut complete = true;
    let mut stamps = slot.stamps().then(|| Stamps::new(slot, kept, rate));
    slot.walk(kept, |i, e, cycles| {
        if let Some(stamps) = stamps.as_mut() {
            let Some(p) = slot
                .stamp(kept, i)
                .and_then(|s| stamps.point(slot, kept, cycles, s))
            else {
                return true;
            };
            points.push((i, p));
            in_stream += 1;
            let n = after_first.get_or_insert(0);
            *n += 1;
            if until.is_some_and(|u| *n >= u) {
                complete = false;
                return false;
            }
        } else if slot.is_anchor(&e) {
            // An anchor pairs with the event right before it; one whose
            // event was overwritten (the oldest kept entry) is unusable.
            if let Some((j, c)) = prev.filter(|(j, _)| j + 1 == i) {
                let globaltimer = anchor_globaltimer(meta.init_globaltimer, &e);
                points.push((
                    j,
                    TimerPoint {
                        clock: c,
                        globaltimer,
                    },
                ));
                in_stream += 1;
                if let Some(n) = after_first.as_mut() {
                    *n += 1;
                    if until.is_some_and(|u| *n >= u) {
                        complete = false;
                        return false;
                    }
                }
            }
        } else if !slot.is_value(&e) {
            prev = Some((i, cycles));
            if after_first.is_none() && EventKind::from_raw(e.kind).is_some() {
                after_first = Some(0);
            }
        }
        true
    });
    if complete && meta.is_flushed() {
        points.push((u32::MAX, TimerPoint::from(TimerPair::flush(meta))));
    }
    (points, in_stream, complete)
}

/// What checking a warp's points found, as diagnostics.
pub(super) fn point_diagnostics(
    meta: &SlotMeta,
    check: &calibrate::PointCheck,
    in_stream: u64,
    kept: u32,
) -> Vec<Diagnostic> {
    let warp = warp_id(meta);
    let mut diagnostics = Vec::new();
    if check.rejected > 0 {
        diagnostics.push(Diagnostic::AnchorsRejected {
            warp,
            count: check.rejected,
        });
    }
    if check.wraps > 0 {
        diagnostics.push(Diagnostic::ClockWrapPlaced {
            warp,
            gaps: check.wraps,
            turns: check.turns,
        });
    }
    let span = meta.final_globaltimer.saturating_sub(meta.init_globaltimer);
    if meta.is_flushed() && in_stream == 0 && kept > 0 && span >= LONG_WARP_NS {
        diagnostics.push(Diagnostic::NoAnchors {
            warp,
            span_ns: span,
        });
    }
    diagnostics
}

/// The full `%globaltimer` of an anchor entry: bits 0..31 from its `clock`
/// field, 32..47 from its `region` field and the rest from the slot's open
/// time (the anchor is later than the open and less than 2^47 ns after it).
pub(super) fn anchor_globaltimer(open_ns: u64, e: &Event) -> u64 {
    let low = (u64::from(e.region) << 32) | u64::from(e.clock);
    let high = open_ns & !((1u64 << 48) - 1);
    let v = high | low;
    if v < open_ns.saturating_sub(1 << 47) {
        v.wrapping_add(1 << 48)
    } else {
        v
    }
}
