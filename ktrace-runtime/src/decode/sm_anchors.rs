//! Time points shared across the warps of an SM (layout version 5).
//!
//! `%clock` is one counter per SM, so a `(%clock64, %globaltimer)` pair that
//! one warp read holds for every warp on the same SM. A warp that opens
//! with `KTRACE_OPEN_SHARED_MAGIC` — built with `KTRACE_ANCHORS_COUNT`, an
//! anchor every `KTRACE_ANCHOR_EVENTS` entries — maps its clock to time
//! through the *SM's points*: every checked time
//! point of the launch's warps on that SM (their open and flush pairs and
//! in-stream anchors), in clock order, each kept only if its globaltimer
//! does not step back from the last kept one.

use std::collections::BTreeMap;

use crate::format::buffer::LaunchBuffer;
use crate::format::layout::SlotMeta;

use super::anchors::anchor_points;
use super::calibrate::{check_points, ClockRatio, TimerPair, TimerPoint};
use super::ring::Slot;

/// The time points of each SM of one launch, by `%smid`.
#[derive(Debug, Default)]
pub(super) struct SmPoints {
    by_sm: BTreeMap<u16, Vec<TimerPoint>>,
}

impl SmPoints {
    /// The SMs' points of a launch: empty unless some opened warp shares
    /// its SM's anchors (no other warp reads them).
    pub fn new(
        buffer: &LaunchBuffer<'_>,
        opened: &[(u64, SlotMeta)],
        reference: &ClockRatio,
    ) -> Self {
        let mut by_sm: BTreeMap<u16, Vec<TimerPoint>> = BTreeMap::new();
        if !opened.iter().any(|(_, m)| m.shares_anchors()) {
            return SmPoints { by_sm };
        }
        for &(slot, meta) in opened {
            let points = by_sm.entry(meta.smid).or_default();
            points.push(TimerPair::open(&meta).into());
            if meta.is_flushed() {
                points.push(TimerPair::flush(&meta).into());
            }
            let slot = Slot::new(buffer.slot(slot));
            let kept = slot.kept();
            let (mut own, _, _) = anchor_points(&slot, &kept, None, reference);
            check_points(&mut own, reference, |_, _| {});
            points.extend(own.into_iter().map(|(_, p)| p));
        }
        for points in by_sm.values_mut() {
            *points = monotone(std::mem::take(points));
        }
        SmPoints { by_sm }
    }

    /// The points of `meta`'s SM from its open to its flush (to the SM's
    /// last point when it never flushed), in clock order; the warp's own
    /// open and flush pairs are among them.
    pub fn for_warp(&self, meta: &SlotMeta) -> &[TimerPoint] {
        let Some(points) = self.by_sm.get(&meta.smid) else {
            return &[];
        };
        let open = i128::from(meta.init_clock64);
        let from = points.partition_point(|p| p.clock < open);
        let until = if meta.is_flushed() {
            let flush = i128::from(meta.final_clock64);
            points.partition_point(|p| p.clock <= flush)
        } else {
            points.len()
        };
        &points[from..until.max(from)]
    }

    /// How many of [`SmPoints::for_warp`]'s points lie strictly between the
    /// warp's open and its flush (after its open when it never flushed):
    /// other warps' measurements, not its own pairs.
    pub fn inner(&self, meta: &SlotMeta) -> usize {
        let (open, flush) = (
            i128::from(meta.init_clock64),
            i128::from(meta.final_clock64),
        );
        self.for_warp(meta)
            .iter()
            .filter(|p| p.clock > open && (!meta.is_flushed() || p.clock < flush))
            .count()
    }
}

/// `points` sorted by clock, with equal clocks merged and every point whose
/// globaltimer is earlier than the last kept one's dropped: strictly
/// increasing clocks and non-decreasing globaltimer, as a piecewise map
/// needs.
fn monotone(mut points: Vec<TimerPoint>) -> Vec<TimerPoint> {
    points.sort_by_key(|p| (p.clock, p.globaltimer));
    let mut kept: Vec<TimerPoint> = Vec::with_capacity(points.len());
    for p in points {
        match kept.last() {
            Some(last) if p.clock == last.clock || p.globaltimer < last.globaltimer => {}
            _ => kept.push(p),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(clock: i128, globaltimer: u64) -> TimerPoint {
        TimerPoint { clock, globaltimer }
    }

    #[test]
    fn monotone_sorts_merges_and_drops_steps_back() {
        let got = monotone(vec![
            p(30, 300),
            p(10, 100),
            p(20, 90),
            p(10, 105),
            p(40, 400),
        ]);
        // (10, 100) before (10, 105): the first of equal clocks stays;
        // (20, 90) steps back from 100.
        assert_eq!(got, vec![p(10, 100), p(30, 300), p(40, 400)]);
    }
}
