//! Time calibration: from a warp's unwrapped `%clock64` values to
//! picoseconds from the launch origin, in integers only.
//!
//! A slot records two timer pairs, `(%clock64, %globaltimer)` at open and at
//! flush. Their quotient is the slot's own clock rate, kept as an exact
//! [`ClockRatio`]; [`calibrate`] picks each slot's rate (its own, or the
//! device-wide median when its span is too short to trust), and a
//! [`WarpClock`] maps one warp's cycles to time through one anchor pair and
//! that rate. Walking the ring to get those cycles is `ring.rs`'s job.

use std::cmp::Ordering;

use super::DecodeOptions;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::format::layout::SlotMeta;

/// A clock rate as an exact ratio: `ns` nanoseconds per `cycles` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRatio {
    /// Nanoseconds.
    pub ns: u64,
    /// Cycles in that many nanoseconds (never 0).
    pub cycles: u64,
}

impl ClockRatio {
    /// The rate of a clock of `khz` kilohertz (1 GHz if `khz` is 0).
    pub fn from_khz(khz: u64) -> Self {
        ClockRatio {
            ns: 1_000_000,
            cycles: if khz == 0 { 1_000_000 } else { khz },
        }
    }

    /// Compares nanoseconds per cycle, exactly.
    pub fn cmp_period(&self, other: &ClockRatio) -> Ordering {
        let a = u128::from(self.ns) * u128::from(other.cycles);
        let b = u128::from(other.ns) * u128::from(self.cycles);
        a.cmp(&b)
    }

    /// Picoseconds in `cycles` cycles, rounded to nearest (saturating).
    pub fn cycles_to_ps(&self, cycles: i128) -> i128 {
        // The same rounding in 64-bit arithmetic when nothing overflows:
        // 128-bit division is a library call, slow per event.
        if let Some(v) = self.cycles_to_ps_u64(cycles) {
            return v;
        }
        self.cycles_to_ps_wide(cycles)
    }

    #[inline]
    fn cycles_to_ps_u64(&self, cycles: i128) -> Option<i128> {
        let num = self.ns.checked_mul(1000)?;
        let den = self.cycles.max(1);
        let m = u64::try_from(cycles.unsigned_abs())
            .ok()?
            .checked_mul(num)?;
        let (a, b) = (m / den, m % den);
        if cycles >= 0 {
            // q = a, r = b; round half up.
            Some(i128::from(a) + i128::from(b >= den - b))
        } else if b == 0 {
            Some(-i128::from(a))
        } else {
            // floor(-m / den) = -(a + 1), remainder den - b.
            let r = den - b;
            Some(-i128::from(a) - 1 + i128::from(r >= den - r))
        }
    }

    fn cycles_to_ps_wide(&self, cycles: i128) -> i128 {
        let num = i128::from(self.ns) * 1000;
        let den = i128::from(self.cycles.max(1));
        match cycles.checked_mul(num) {
            Some(p) => {
                let q = p.div_euclid(den);
                let r = p.rem_euclid(den);
                if 2 * r >= den {
                    q + 1
                } else {
                    q
                }
            }
            None if cycles < 0 => i128::from(i64::MIN),
            None => i128::from(i64::MAX),
        }
    }

    /// The clock rate in MHz, rounded down.
    pub fn mhz(&self) -> u64 {
        let v = u128::from(self.cycles) * 1000 / u128::from(self.ns.max(1));
        u64::try_from(v).unwrap_or(u64::MAX)
    }

    /// The clock rate in GHz, for display.
    pub fn ghz(&self) -> f64 {
        self.cycles as f64 / self.ns.max(1) as f64
    }

    /// Whether `self` is off `reference` by more than 1%.
    fn off_by_more_than_1pc(&self, reference: &ClockRatio) -> bool {
        let a = u128::from(self.ns) * u128::from(reference.cycles);
        let b = u128::from(reference.ns) * u128::from(self.cycles);
        match a.abs_diff(b).checked_mul(100) {
            Some(d) => d > b,
            None => true,
        }
    }
}

/// How cycles become time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimeModel {
    /// Piecewise-linear through every time anchor a warp recorded (layout
    /// version 2), its open and its flush: right while the SM clock moves.
    /// Buffers of layout version 1 have no anchors and decode as
    /// [`TimeModel::TwoPoint`].
    #[default]
    Anchors,
    /// One rate per warp from its open and flush timer pairs (the device-wide
    /// median for short warps): layout version 1's model, kept to compare.
    TwoPoint,
}

impl TimeModel {
    /// A short name for output files.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeModel::Anchors => "anchors",
            TimeModel::TwoPoint => "two_point",
        }
    }
}

/// The SM clock over one warp, as its time anchors measured it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockStats {
    /// Time anchors used (in-stream anchors, open and flush).
    pub anchors: u64,
    /// Slowest and fastest rate over windows of at least
    /// [`CLOCK_WINDOW_NS`] between anchors; `None` without such a window.
    pub range: Option<(ClockRatio, ClockRatio)>,
    /// Cycles and nanoseconds over all those windows.
    pub total: (u64, u64),
}

/// The shortest span over which [`ClockStats`] measures a rate: long
/// enough that the globaltimer's 32 ns steps move it by 0.3% at most.
pub const CLOCK_WINDOW_NS: u64 = 10_000;

impl ClockStats {
    /// Adds another warp's (or launch's) statistics.
    pub fn merge(&mut self, o: &ClockStats) {
        self.anchors += o.anchors;
        self.total = (self.total.0 + o.total.0, self.total.1 + o.total.1);
        self.range = match (self.range, o.range) {
            (None, r) | (r, None) => r,
            (Some((a, b)), Some((c, d))) => Some((
                if c.cmp_period(&a) == Ordering::Greater {
                    c
                } else {
                    a
                },
                if d.cmp_period(&b) == Ordering::Less {
                    d
                } else {
                    b
                },
            )),
        };
    }

    /// The mean rate over the measured windows.
    pub fn mean(&self) -> Option<ClockRatio> {
        (self.total.0 > 0 && self.total.1 > 0).then_some(ClockRatio {
            ns: self.total.1,
            cycles: self.total.0,
        })
    }

    pub(crate) fn of_points(points: &[TimerPoint]) -> Self {
        let mut st = ClockStats {
            anchors: points.len() as u64,
            ..ClockStats::default()
        };
        let mut start = match points.first() {
            Some(p) => *p,
            None => return st,
        };
        for p in &points[1..] {
            let ns = p.globaltimer - start.globaltimer;
            if ns < CLOCK_WINDOW_NS {
                continue;
            }
            let r = ClockRatio {
                ns,
                cycles: (p.clock - start.clock) as u64,
            };
            st.merge(&ClockStats {
                anchors: 0,
                range: Some((r, r)),
                total: (r.cycles, r.ns),
            });
            start = *p;
        }
        st
    }
}

/// One line on the SM clock of a launch, e.g. "SM clock 1.615-1.846 GHz
/// (mean 1.784) over windows of 10 us between 38115 time anchors".
pub fn describe_clock(c: &ClockStats) -> String {
    match (c.range, c.mean()) {
        (Some((slow, fast)), Some(mean)) => format!(
            "SM clock {:.3}-{:.3} GHz (mean {:.3}) over windows of {} us between {} time anchors",
            slow.ghz(),
            fast.ghz(),
            mean.ghz(),
            CLOCK_WINDOW_NS / 1000,
            c.anchors
        ),
        _ => format!(
            "{} time anchors; no window of {} us between them to measure the SM clock",
            c.anchors,
            CLOCK_WINDOW_NS / 1000
        ),
    }
}

/// Where a warp's clock rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatioSource {
    /// The slot's own timer pairs.
    Slot,
    /// The device-wide median (the slot was too short, or never flushed).
    DeviceWide,
    /// The device's nominal clock rate (no slot had a usable timer pair).
    Nominal,
    /// Piecewise through the warp's time anchors (the rate shown is its
    /// open-to-flush mean).
    Anchors,
    /// Piecewise through the time points of the warp's SM (layout version
    /// 5: a warp that shares its SM's anchors).
    SmAnchors,
}

impl RatioSource {
    /// A short name for output files.
    pub fn as_str(self) -> &'static str {
        match self {
            RatioSource::Slot => "slot",
            RatioSource::DeviceWide => "device_median",
            RatioSource::Nominal => "nominal",
            RatioSource::Anchors => "anchors",
            RatioSource::SmAnchors => "sm_anchors",
        }
    }
}

/// A `%clock64` value and the `%globaltimer` read with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerPair {
    /// SM cycles.
    pub clock64: u64,
    /// Nanoseconds.
    pub globaltimer: u64,
}

impl TimerPair {
    /// The pair read when the warp opened its slot.
    pub fn open(m: &SlotMeta) -> Self {
        TimerPair {
            clock64: m.init_clock64,
            globaltimer: m.init_globaltimer,
        }
    }

    /// The pair read when the warp flushed (meaningful once flushed).
    pub fn flush(m: &SlotMeta) -> Self {
        TimerPair {
            clock64: m.final_clock64,
            globaltimer: m.final_globaltimer,
        }
    }
}

impl From<TimerPair> for TimerPoint {
    fn from(p: TimerPair) -> Self {
        TimerPoint {
            clock: i128::from(p.clock64),
            globaltimer: p.globaltimer,
        }
    }
}

/// Picoseconds from the launch origin (`origin_ns` of globaltimer) to
/// `globaltimer_ns`, saturated to `i64`.
pub(crate) fn ps_since(origin_ns: u64, globaltimer_ns: u64) -> i64 {
    clamp(ps_since_wide(origin_ns, globaltimer_ns))
}

pub(super) fn ps_since_wide(origin_ns: u64, globaltimer_ns: u64) -> i128 {
    i128::from(globaltimer_ns) * 1000 - i128::from(origin_ns) * 1000
}

pub(super) fn clamp(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// A time anchor: an unwrapped clock and the `%globaltimer` read with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerPoint {
    /// Unwrapped `%clock64`.
    pub clock: i128,
    /// `%globaltimer`, in nanoseconds.
    pub globaltimer: u64,
}

/// Below this globaltimer span a segment's rate is not checked against the
/// launch's: the globaltimer's 32 ns steps make it too coarse.
const CHECKED_SPAN_NS: u64 = 1_000;

/// What [`check_points`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PointCheck {
    /// Points dropped: out of order, or implying a clock rate outside a
    /// quarter to four times the launch's.
    pub rejected: u32,
    /// Gaps of 2^32 cycles or more found between neighbouring points, and
    /// how many whole 2^32 cycles they added.
    pub wraps: u32,
    /// Whole 2^32-cycle turns added.
    pub turns: u64,
}

/// Checks the points of one warp in clock order against each other and
/// against the launch's rate `reference`, in place:
///
/// - a point whose globaltimer is earlier than its predecessor's, or whose
///   clock is not later, is dropped;
/// - the point at index `u32::MAX` is the flush pair, whose clock is the
///   full `%clock64` and is never moved;
/// - where the globaltimer says far more time passed between neighbours
///   than their clocks do, the 32-bit event clock wrapped unseen: the later
///   point and everything after it move by whole turns of 2^32 cycles (the
///   turn count closest to the reference rate, but never so many that a
///   point would pass the flush pair, whose full clock bounds them), and
///   `shift(index, cycles)` is called with the later point's index in the
///   input order so that the caller moves its events too;
/// - a point that implies a rate outside a quarter to four times the
///   reference is dropped.
pub(crate) fn check_points(
    points: &mut Vec<(u32, TimerPoint)>,
    reference: &ClockRatio,
    mut shift: impl FnMut(u32, i128),
) -> PointCheck {
    let mut check = PointCheck::default();
    let mut kept: Vec<(u32, TimerPoint)> = Vec::with_capacity(points.len());
    let mut extra: i128 = 0;
    let turn: i128 = 1 << 32;
    // The flush pair's full clock, and the last other point's: turns added
    // before the flush may not carry the last point past it.
    let flush = points
        .iter()
        .find(|(i, _)| *i == u32::MAX)
        .map(|(_, p)| p.clock);
    let last = points
        .iter()
        .filter(|(i, _)| *i != u32::MAX)
        .map(|(_, p)| p.clock)
        .max();
    for &(idx, p) in points.iter() {
        // The flush pair's clock is the full `%clock64`: it needs no turns.
        let absolute = idx == u32::MAX;
        let mut p = TimerPoint {
            clock: if absolute { p.clock } else { p.clock + extra },
            ..p
        };
        let Some(&(_, a)) = kept.last() else {
            kept.push((idx, p));
            continue;
        };
        if p.globaltimer < a.globaltimer || p.clock <= a.clock {
            check.rejected += 1;
            continue;
        }
        let ns = p.globaltimer - a.globaltimer;
        let cycles = p.clock - a.clock;
        // Cycles the reference rate expects over `ns`.
        let expected =
            i128::from(ns) * i128::from(reference.cycles) / i128::from(reference.ns.max(1));
        let mut k = (expected - cycles + turn / 2).div_euclid(turn);
        if let (false, Some(flush), Some(last)) = (absolute, flush, last) {
            let room = (flush - (last + extra)).div_euclid(turn);
            if (0..k).contains(&room) {
                k = room;
            }
        }
        if k < 0 {
            check.rejected += 1;
            continue;
        }
        if k > 0 && !absolute {
            p.clock += k * turn;
            extra += k * turn;
            check.wraps += 1;
            check.turns += k as u64;
            shift(idx, k * turn);
        }
        let cycles = p.clock - a.clock;
        if ns >= CHECKED_SPAN_NS {
            // ratio = cycles / ns against reference.cycles / reference.ns
            let lhs = cycles * i128::from(reference.ns);
            let rhs = i128::from(ns) * i128::from(reference.cycles);
            if lhs * 4 < rhs || lhs > rhs * 4 {
                check.rejected += 1;
                continue;
            }
        }
        kept.push((idx, p));
    }
    *points = kept;
    check
}

/// Whether a flushed warp's events, from `first_ps` to `last_ps`, stay
/// within its open and flush times (with slack for the coarse
/// globaltimer). A real inconsistency is a gap of 2^32 cycles, seconds
/// long, that the 32-bit event clock could not tell.
pub(crate) fn events_fit_open_to_flush(
    meta: &SlotMeta,
    ratio: &ClockRatio,
    origin_ns: u64,
    first_ps: i64,
    last_ps: i64,
) -> bool {
    if meta.final_clock64 <= meta.init_clock64 {
        return true;
    }
    let span = meta.final_clock64 - meta.init_clock64;
    let tol = ratio.cycles_to_ps(i128::from(span) / 100) + 2_000_000;
    let lo = i128::from(ps_since(origin_ns, meta.init_globaltimer)) - tol;
    let hi = i128::from(ps_since(origin_ns, meta.final_globaltimer)) + tol;
    i128::from(first_ps) >= lo && i128::from(last_ps) <= hi
}

/// The rates a launch decodes with.
#[derive(Clone, Debug)]
pub(crate) struct Calibration {
    /// The device-wide rate.
    pub device_ratio: ClockRatio,
    /// Where it came from.
    pub device_source: RatioSource,
    /// Per opened slot, in the order given: the rate it uses and where
    /// that came from.
    pub slots: Vec<(ClockRatio, RatioSource)>,
}

/// Picks the clock rate of every opened slot: its own where its
/// open-to-flush span is at least [`DecodeOptions::short_span_ns`],
/// the device-wide rate otherwise. The device-wide rate is the median of
/// the long slots' rates, or of every usable rate when no slot is long
/// enough, or the nominal clock when no slot has a usable timer pair.
/// Pushes [`Diagnostic::NoClockCalibration`] and
/// [`Diagnostic::ClockRateOutlier`] as it finds them (the latter only when
/// the warps are not `anchored`: anchors follow a moving clock, and a slot's
/// mean rate off the median is then no fault).
pub(crate) fn calibrate(
    opened: &[(u64, SlotMeta)],
    opts: &DecodeOptions,
    anchored: bool,
    diagnostics: &mut Diagnostics,
) -> Calibration {
    let own: Vec<Option<ClockRatio>> = opened.iter().map(|(_, m)| slot_ratio(m)).collect();
    let long =
        |m: &SlotMeta| m.final_globaltimer.saturating_sub(m.init_globaltimer) >= opts.short_span_ns;
    let mut long_rates: Vec<ClockRatio> = opened
        .iter()
        .zip(&own)
        .filter(|((_, m), r)| r.is_some() && long(m))
        .filter_map(|(_, r)| *r)
        .collect();
    let (device_ratio, device_source) = if !long_rates.is_empty() {
        (median(&mut long_rates), RatioSource::DeviceWide)
    } else {
        let mut all: Vec<ClockRatio> = own.iter().filter_map(|r| *r).collect();
        if all.is_empty() {
            let r = ClockRatio::from_khz(opts.nominal_clock_khz);
            if !opened.is_empty() {
                diagnostics.push(Diagnostic::NoClockCalibration {
                    assumed_khz: if opts.nominal_clock_khz == 0 {
                        1_000_000
                    } else {
                        opts.nominal_clock_khz
                    },
                });
            }
            (r, RatioSource::Nominal)
        } else {
            (median(&mut all), RatioSource::DeviceWide)
        }
    };

    let slots = opened
        .iter()
        .zip(&own)
        .map(|((_, meta), r)| match r {
            Some(r) if long(meta) => {
                // With time anchors a warp's mean rate is information, not
                // a fault: the clock moves under load.
                if !anchored && r.off_by_more_than_1pc(&device_ratio) {
                    diagnostics.push(Diagnostic::ClockRateOutlier {
                        warp: super::warp_id(meta),
                        slot_mhz: r.mhz(),
                        median_mhz: device_ratio.mhz(),
                    });
                }
                (*r, RatioSource::Slot)
            }
            _ => (device_ratio, device_source),
        })
        .collect();
    Calibration {
        device_ratio,
        device_source,
        slots,
    }
}

/// A flushed slot's own rate, from its open and flush timer pairs.
fn slot_ratio(m: &SlotMeta) -> Option<ClockRatio> {
    if !m.is_flushed() {
        return None;
    }
    let (open, flush) = (TimerPair::open(m), TimerPair::flush(m));
    let ns = flush.globaltimer.checked_sub(open.globaltimer)?;
    let cycles = flush.clock64.checked_sub(open.clock64)?;
    (ns > 0 && cycles > 0).then_some(ClockRatio { ns, cycles })
}

fn median(rates: &mut [ClockRatio]) -> ClockRatio {
    rates.sort_by(|a, b| a.cmp_period(b));
    rates[(rates.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_rounding() {
        // 1.98 GHz: 40 cycles are 20.2 ns.
        let r = ClockRatio {
            ns: 1_000_000,
            cycles: 1_980_000,
        };
        assert_eq!(r.cycles_to_ps(40), 20_202);
        assert_eq!(r.cycles_to_ps(-40), -20_202);
        assert_eq!(r.mhz(), 1980);
        let huge = ClockRatio {
            ns: u64::MAX,
            cycles: 1,
        };
        assert_eq!(
            huge.cycles_to_ps(i128::from(u64::MAX)),
            i128::from(i64::MAX)
        );
    }

    #[test]
    fn fast_rounding_matches_wide() {
        let mut next = crate::synth::xorshift64(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let r = ClockRatio {
                ns: next() >> (next() % 64),
                cycles: (next() >> (next() % 64)).max(1),
            };
            let c = (next() >> (next() % 64)) as i128;
            for cycles in [c, -c, c % 1000, -(c % 1000), 0] {
                assert_eq!(
                    r.cycles_to_ps(cycles),
                    r.cycles_to_ps_wide(cycles),
                    "{r:?} {cycles}"
                );
            }
        }
    }

    #[test]
    fn outlier_threshold() {
        let m = ClockRatio {
            ns: 100,
            cycles: 200,
        };
        assert!(!ClockRatio {
            ns: 100,
            cycles: 201
        }
        .off_by_more_than_1pc(&m));
        assert!(ClockRatio {
            ns: 100,
            cycles: 204
        }
        .off_by_more_than_1pc(&m));
    }
}
