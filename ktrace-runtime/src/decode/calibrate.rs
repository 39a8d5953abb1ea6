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
use crate::layout::SlotMeta;

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

/// Where a warp's clock rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatioSource {
    /// The slot's own timer pairs.
    Slot,
    /// The device-wide median (the slot was too short, or never flushed).
    DeviceWide,
    /// The device's nominal clock rate (no slot had a usable timer pair).
    Nominal,
}

impl RatioSource {
    /// A short name for output files.
    pub fn as_str(self) -> &'static str {
        match self {
            RatioSource::Slot => "slot",
            RatioSource::DeviceWide => "device_median",
            RatioSource::Nominal => "nominal",
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

/// Picoseconds from the launch origin (`origin_ns` of globaltimer) to
/// `globaltimer_ns`, saturated to `i64`.
pub(crate) fn ps_since(origin_ns: u64, globaltimer_ns: u64) -> i64 {
    clamp(ps_since_wide(origin_ns, globaltimer_ns))
}

fn ps_since_wide(origin_ns: u64, globaltimer_ns: u64) -> i128 {
    i128::from(globaltimer_ns) * 1000 - i128::from(origin_ns) * 1000
}

fn clamp(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Cycles to picoseconds for one warp: its unwrapped `%clock64` values
/// mapped to time from the launch origin through one anchor pair and the
/// warp's rate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpClock {
    anchor_clock: i128,
    anchor_ps: i128,
    ratio: ClockRatio,
}

impl WarpClock {
    /// The map through `anchor` at `ratio`, for a launch whose origin is
    /// `origin_ns` of globaltimer.
    pub fn new(origin_ns: u64, anchor: TimerPair, ratio: ClockRatio) -> Self {
        WarpClock {
            anchor_clock: i128::from(anchor.clock64),
            anchor_ps: ps_since_wide(origin_ns, anchor.globaltimer),
            ratio,
        }
    }

    /// The time of unwrapped clock value `clock`, in picoseconds from the
    /// launch origin (saturated to `i64`).
    #[inline]
    pub fn ps(&self, clock: i128) -> i64 {
        clamp(self.anchor_ps + self.ratio.cycles_to_ps(clock - self.anchor_clock))
    }
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
/// [`Diagnostic::ClockRateOutlier`] as it finds them.
pub(crate) fn calibrate(
    opened: &[(u64, SlotMeta)],
    opts: &DecodeOptions,
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
                if r.off_by_more_than_1pc(&device_ratio) {
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

    #[test]
    fn warp_clock_maps_through_its_anchor() {
        // 2 GHz, anchored 1 µs after the origin at clock 1000.
        let r = ClockRatio {
            ns: 1000,
            cycles: 2000,
        };
        let anchor = TimerPair {
            clock64: 1000,
            globaltimer: 5_001_000,
        };
        let c = WarpClock::new(5_000_000, anchor, r);
        assert_eq!(c.ps(1000), 1_000_000);
        assert_eq!(c.ps(3000), 2_000_000);
        assert_eq!(c.ps(0), 500_000);
    }
}
