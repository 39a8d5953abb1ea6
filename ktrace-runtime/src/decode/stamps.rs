//! Time points from stamped events (layout version 6, a warp built with
//! `KTRACE_ANCHORS_STAMP`): each event carries bits
//! [`STAMP_LOW_BIT`]..[`STAMP_LOW_BIT`] + [`STAMP_BITS`] of the
//! `%globaltimer` read right after its `%clock`, so every event is its own
//! time anchor and the ring holds no anchor entries.
//!
//! A stamp wraps every 2^18 ns (262 us), so the decoder has to say which
//! turn each stamp is in. It takes the warp's events as runs split at every
//! gap that the device-wide rate puts at more than a quarter of that period
//! ([`LONG_GAP_NS`]): over a shorter gap the clock may run at a third of
//! that rate or faster and the reading nearest to its prediction is still
//! the right one, so within a run each event's full reading follows from
//! the one before. A run that starts at the open, or ends at the flush,
//! hangs from that timer pair. A run between two long gaps is predicted
//! at the device-wide rate from the run before it and from the run after
//! it; where the two agree (or only one side exists) that is its turn,
//! and where they disagree (the clock ran at another rate over a gap) it
//! is placed by the clock between its placed neighbours, at the rate the
//! time between them says. The bits below the stamp are the open reading's: the
//! timer moves in 32 ns steps, so they do not change. Of those readings,
//! one per [`ANCHOR_CYCLES_DEFAULT`] cycles becomes a time point, as far
//! apart as the default build's anchors, so that 32 ns steps do not make
//! the rate between points noisy.

use super::calibrate::{ClockRatio, TimerPair, TimerPoint};
use super::ring::{Kept, Slot};
use crate::format::layout::{SlotMeta, ANCHOR_CYCLES_DEFAULT, STAMP_BITS, STAMP_LOW_BIT};

/// Nanoseconds after which a stamp repeats.
const PERIOD_NS: i128 = 1 << (STAMP_LOW_BIT + STAMP_BITS);

/// A gap between events that the device-wide rate puts above this is long:
/// the events after it start a new run.
const LONG_GAP_NS: i128 = PERIOD_NS / 4;

/// The full readings of one warp's stamped events, handed out oldest first
/// as the decoder walks the events. A warp whose events start at its open
/// and have no long gap between them is one run chained from the open,
/// which is computed event by event; any other warp's readings are all
/// computed once, when the walk meets the first long gap (or, for a ring
/// that overwrote its oldest events, at once).
pub(super) struct Stamps {
    rate: ClockRatio,
    /// The timer bits below the stamp.
    low: u64,
    /// The last event's (at first, the open's) clock and full reading.
    last: TimerPoint,
    /// The stamped events handed out.
    seen: usize,
    /// Every stamped event's `(clock, full reading)`, in walk order, once
    /// computed.
    all: Option<Vec<TimerPoint>>,
    /// The clock of the last event made a time point.
    taken: Option<i128>,
}

/// One stamped event, or the open or flush pair (whose reading is known).
#[derive(Clone, Copy)]
struct Node {
    clock: i128,
    stamp: u16,
    known: Option<u64>,
}

impl Stamps {
    /// The unwrapping of `slot`'s stamps over the entries `kept` holds, at
    /// the device-wide `rate`.
    pub fn new(slot: &Slot<'_>, kept: &Kept, rate: &ClockRatio) -> Self {
        let meta = &slot.meta;
        Stamps {
            rate: *rate,
            low: low_bits(meta),
            last: TimerPair::open(meta).into(),
            seen: 0,
            all: (!kept.starts_at_open()).then(|| readings(slot, kept, rate)),
            taken: None,
        }
    }

    /// The full reading of the next stamped event of the walk of `slot`
    /// over `kept`, at `clock` and stamped `stamp`, and the time point it
    /// gives when it is [`ANCHOR_CYCLES_DEFAULT`] cycles or more after the
    /// last one (the first always is).
    pub fn point(
        &mut self,
        slot: &Slot<'_>,
        kept: &Kept,
        clock: i128,
        stamp: u16,
    ) -> Option<TimerPoint> {
        let gap = ns(&self.rate, clock - self.last.clock);
        if self.all.is_none() && gap > LONG_GAP_NS {
            self.all = Some(readings(slot, kept, &self.rate));
        }
        let p = match &self.all {
            Some(all) => *all.get(self.seen)?,
            None => TimerPoint {
                clock,
                globaltimer: nearest(i128::from(self.last.globaltimer) + gap, stamp, self.low),
            },
        };
        debug_assert_eq!(p.clock, clock, "the walks disagree");
        self.seen += 1;
        self.last = p;
        let due = self
            .taken
            .map_or(true, |t| clock - t >= i128::from(ANCHOR_CYCLES_DEFAULT));
        due.then(|| {
            self.taken = Some(clock);
            p
        })
    }
}

/// The `(clock, full reading)` of each of `slot`'s stamped events over
/// `kept`, in walk order, by [`unwrap`].
fn readings(slot: &Slot<'_>, kept: &Kept, rate: &ClockRatio) -> Vec<TimerPoint> {
    let meta = &slot.meta;
    let pair = |p: TimerPair| {
        let p = TimerPoint::from(p);
        Node {
            clock: p.clock,
            stamp: 0,
            known: Some(p.globaltimer),
        }
    };
    let mut nodes = Vec::with_capacity(kept.len as usize + 2);
    let open = kept.starts_at_open();
    if open {
        nodes.push(pair(TimerPair::open(meta)));
    }
    slot.walk(kept, |i, _, clock| {
        if let Some(stamp) = slot.stamp(kept, i) {
            nodes.push(Node {
                clock,
                stamp,
                known: None,
            });
        }
        true
    });
    let events = nodes.len() - usize::from(open);
    if meta.is_flushed() {
        nodes.push(pair(TimerPair::flush(meta)));
    }
    let low = low_bits(meta);
    let fallback = TimerPoint::from(TimerPair::open(meta));
    let first = usize::from(open);
    let all = unwrap(&nodes, low, rate, fallback);
    nodes[first..first + events]
        .iter()
        .zip(&all[first..first + events])
        .map(|(n, &globaltimer)| TimerPoint {
            clock: n.clock,
            globaltimer,
        })
        .collect()
}

/// The timer bits below the stamp: the open reading's (the timer moves in
/// 32 ns steps, so they do not change).
fn low_bits(meta: &SlotMeta) -> u64 {
    meta.init_globaltimer & ((1 << STAMP_LOW_BIT) - 1)
}

/// Nanoseconds of `cycles` at `rate`, truncated (`q` of "Time" step 12).
fn ns(rate: &ClockRatio, cycles: i128) -> i128 {
    rate.cycles_to_ps(cycles) / 1000
}

/// The reading stamped `stamp` (above the timer's `low` bits) nearest to
/// `predicted`.
fn nearest(predicted: i128, stamp: u16, low: u64) -> u64 {
    let base = i128::from((u64::from(stamp) << STAMP_LOW_BIT) | low);
    let turns = (predicted - base + PERIOD_NS / 2).div_euclid(PERIOD_NS);
    u64::try_from(base + turns * PERIOD_NS).unwrap_or(0)
}

/// The full reading of every node. The nodes are split into runs at long
/// gaps; a run holding a known pair is chained from it (forwards from the
/// open, backwards from the flush). Each other run's first reading is
/// predicted at `rate` from the run before it (forwards, through the runs
/// so placed) and from the run after it (backwards): where the two agree,
/// or only one exists, that is its reading; where they disagree (the clock
/// ran at another rate over a gap), the run is placed by the clock between
/// the nearest runs on either side already placed. Without any known pair
/// the chain starts from `fallback`.
fn unwrap(nodes: &[Node], low: u64, rate: &ClockRatio, fallback: TimerPoint) -> Vec<u64> {
    let u = Unwrap { nodes, low, rate };
    let runs = u.runs();
    let mut placed: Vec<Option<Vec<u64>>> = runs
        .iter()
        .map(|&(a, b)| {
            let k = (a..b).find(|&i| nodes[i].known.is_some())?;
            Some(u.chain((a, b), k, nodes[k].known?))
        })
        .collect();
    let forwards = u.forwards(&runs, &placed);
    let backwards = u.backwards(&runs, &placed);
    for (r, &run) in runs.iter().enumerate() {
        let first = match (forwards[r], backwards[r]) {
            (Some(f), Some(g)) if f == g => Some(f),
            (Some(f), None) => Some(f),
            (None, Some(g)) => Some(g),
            _ => None,
        };
        if let (None, Some(first)) = (&placed[r], first) {
            placed[r] = Some(u.chain(run, run.0, first));
        }
    }
    for (r, &run) in runs.iter().enumerate() {
        if placed[r].is_none() {
            let first = u.between(&runs, &placed, r, fallback);
            placed[r] = Some(u.chain(run, run.0, first));
        }
    }
    placed.into_iter().flatten().flatten().collect()
}

/// The first and the last reading of run `q`, if placed.
fn ends(placed: &[Option<Vec<u64>>], q: usize) -> Option<(u64, u64)> {
    let r = placed[q].as_ref()?;
    Some((*r.first()?, *r.last()?))
}

/// The nodes of one warp being unwrapped, with the timer's low bits and the
/// device-wide rate.
struct Unwrap<'n> {
    nodes: &'n [Node],
    low: u64,
    rate: &'n ClockRatio,
}

impl Unwrap<'_> {
    /// Nanoseconds of `cycles` at the rate, truncated.
    fn ns(&self, cycles: i128) -> i128 {
        ns(self.rate, cycles)
    }

    /// The node reading stamped like node `i` nearest to `predicted`.
    fn nearest(&self, i: usize, predicted: i128) -> u64 {
        nearest(predicted, self.nodes[i].stamp, self.low)
    }

    /// The runs, `(first, end)` node indices, split before every node a
    /// long gap after the one before it.
    fn runs(&self) -> Vec<(usize, usize)> {
        let n = self.nodes;
        let mut runs = Vec::new();
        let mut start = 0;
        for i in 1..=n.len() {
            if i == n.len() || self.ns(n[i].clock - n[i - 1].clock) > LONG_GAP_NS {
                runs.push((start, i));
                start = i;
            }
        }
        runs
    }

    /// The readings of run `a..b` chained from its node `from`, whose
    /// reading is `at`: the nodes after it forwards, the ones before it
    /// backwards; a known node keeps its reading.
    fn chain(&self, (a, b): (usize, usize), from: usize, at: u64) -> Vec<u64> {
        let n = self.nodes;
        let mut r = vec![0u64; b - a];
        r[from - a] = at;
        for i in from + 1..b {
            let prev = i128::from(r[i - 1 - a]);
            r[i - a] = n[i]
                .known
                .unwrap_or_else(|| self.nearest(i, prev + self.ns(n[i].clock - n[i - 1].clock)));
        }
        for i in (a..from).rev() {
            let next = i128::from(r[i + 1 - a]);
            r[i - a] = n[i]
                .known
                .unwrap_or_else(|| self.nearest(i, next - self.ns(n[i + 1].clock - n[i].clock)));
        }
        r
    }

    /// The first reading of each unplaced run predicted from the run before
    /// it, through the runs so chained.
    fn forwards(&self, runs: &[(usize, usize)], placed: &[Option<Vec<u64>>]) -> Vec<Option<u64>> {
        let n = self.nodes;
        let mut out = vec![None; runs.len()];
        let mut carried: Option<(i128, u64)> = None;
        for (r, &(a, b)) in runs.iter().enumerate() {
            if let Some((_, last)) = ends(placed, r) {
                carried = Some((n[b - 1].clock, last));
            } else if let Some((c, t)) = carried {
                let first = self.nearest(a, i128::from(t) + self.ns(n[a].clock - c));
                let run = self.chain((a, b), a, first);
                carried = Some((n[b - 1].clock, *run.last().unwrap_or(&first)));
                out[r] = Some(first);
            }
        }
        out
    }

    /// The first reading of each unplaced run as predicted from the run
    /// after it, through the runs so chained.
    fn backwards(&self, runs: &[(usize, usize)], placed: &[Option<Vec<u64>>]) -> Vec<Option<u64>> {
        let n = self.nodes;
        let mut out = vec![None; runs.len()];
        let mut carried: Option<(i128, u64)> = None;
        for (r, &(a, b)) in runs.iter().enumerate().rev() {
            if let Some((first, _)) = ends(placed, r) {
                carried = Some((n[a].clock, first));
            } else if let Some((c, t)) = carried {
                let last = self.nearest(b - 1, i128::from(t) - self.ns(c - n[b - 1].clock));
                let run = self.chain((a, b), b - 1, last);
                carried = Some((n[a].clock, run[0]));
                out[r] = Some(run[0]);
            }
        }
        out
    }

    /// The first reading of run `r` placed by the clock between the nearest
    /// placed runs on either side (at the rate from the one there is, or
    /// from `fallback`).
    fn between(
        &self,
        runs: &[(usize, usize)],
        placed: &[Option<Vec<u64>>],
        r: usize,
        fallback: TimerPoint,
    ) -> u64 {
        let n = self.nodes;
        let left = (0..r)
            .rev()
            .find_map(|q| Some((n[runs[q].1 - 1].clock, ends(placed, q)?.1)));
        let right =
            (r + 1..runs.len()).find_map(|q| Some((n[runs[q].0].clock, ends(placed, q)?.0)));
        let a = runs[r].0;
        let c = n[a].clock;
        let predicted = match (left, right) {
            (Some((c0, t0)), Some((c1, t1))) if c1 > c0 => {
                let (t0, t1) = (i128::from(t0), i128::from(t1));
                t0 + (t1 - t0) * (c - c0) / (c1 - c0)
            }
            (Some((c0, t0)), _) => i128::from(t0) + self.ns(c - c0),
            (None, Some((c1, t1))) => i128::from(t1) - self.ns(c1 - c),
            (None, None) => i128::from(fallback.globaltimer) + self.ns(c - fallback.clock),
        };
        self.nearest(a, predicted)
    }
}
