//! The map from one warp's unwrapped `%clock64` values to picoseconds
//! from the launch origin ([`WarpClock`], built by the decoder from the
//! points and rates that `calibrate.rs` gives), and the reader that turns a
//! warp's clocks, which come mostly in increasing order, into times
//! ([`ClockCursor`]): once per piece of the map in 128-bit arithmetic, then
//! in 64 bits for the clocks around it where that is exact.

use super::calibrate::{clamp, ps_since_wide, ClockRatio, TimerPair, TimerPoint};

/// Cycles to picoseconds for one warp: its unwrapped `%clock64` values
/// mapped to time from the launch origin.
///
/// The map goes through one or more points `(clock64, %globaltimer)`:
/// linearly between neighbouring points, and at `before` / `after` outside
/// them. With one point and one rate it is the two-point model of layout
/// version 1: the point is the open (or flush) pair and the rate the slot's.
#[derive(Clone, Debug)]
pub(crate) struct WarpClock {
    /// Points: clock, picoseconds from the origin, sorted by clock with
    /// non-decreasing times; never empty.
    points: Vec<(i128, i128)>,
    /// The rate of each segment between neighbouring points.
    segments: Vec<ClockRatio>,
    before: ClockRatio,
    after: ClockRatio,
}

impl WarpClock {
    /// The map through `anchor` at `ratio`, for a launch whose origin is
    /// `origin_ns` of globaltimer.
    pub fn new(origin_ns: u64, anchor: TimerPair, ratio: ClockRatio) -> Self {
        WarpClock {
            points: vec![(
                i128::from(anchor.clock64),
                ps_since_wide(origin_ns, anchor.globaltimer),
            )],
            segments: Vec::new(),
            before: ratio,
            after: ratio,
        }
    }

    /// The piecewise-linear map through `points` (at least one, sorted by
    /// clock, strictly increasing clocks and non-decreasing globaltimer),
    /// continued at `before` and `after` outside them.
    pub fn piecewise(
        origin_ns: u64,
        points: &[TimerPoint],
        before: ClockRatio,
        after: ClockRatio,
    ) -> Self {
        debug_assert!(!points.is_empty());
        let segments = points
            .windows(2)
            .map(|w| ClockRatio {
                ns: w[1].globaltimer - w[0].globaltimer,
                cycles: (w[1].clock - w[0].clock) as u64,
            })
            .collect();
        WarpClock {
            points: points
                .iter()
                .map(|p| (p.clock, ps_since_wide(origin_ns, p.globaltimer)))
                .collect(),
            segments,
            before,
            after,
        }
    }

    /// A reader of times for clocks that mostly come in increasing order.
    pub fn cursor(&self) -> ClockCursor<'_> {
        ClockCursor {
            map: self,
            seg: 0,
            lo: 0,
            hi: 0,
            line: Line::default(),
        }
    }

    /// The time of unwrapped clock value `clock`, in picoseconds from the
    /// launch origin (saturated to `i64`).
    #[cfg(test)]
    pub fn ps(&self, clock: i128) -> i64 {
        self.cursor().ps(clock)
    }
}

/// [`WarpClock::ps`] with the piece of the map of the last call
/// remembered, and the clocks around it that 64-bit arithmetic maps.
pub(crate) struct ClockCursor<'a> {
    map: &'a WarpClock,
    seg: usize,
    /// Clocks in `lo..hi` map through `line`.
    lo: i128,
    hi: i128,
    line: Line,
}

/// One piece of the map in 64-bit arithmetic: `p0` ps at clock `c0`, then
/// `num / den` ps a cycle, rounded as [`ClockRatio::cycles_to_ps`] rounds,
/// for clocks close enough to `c0` that nothing overflows.
#[derive(Clone, Copy, Debug, Default)]
struct Line {
    c0: i128,
    p0: i64,
    num: u64,
    den: u64,
}

impl Line {
    /// `ratio` from the point (`c0`, `p0` ps); with the clocks around `c0`
    /// where it holds exactly in 64 bits, or `None` where `p0` is too close
    /// to the ends of `i64`.
    fn new(c0: i128, p0: i128, ratio: &ClockRatio) -> Option<(Line, i128)> {
        let num = ratio.ns.checked_mul(1000)?;
        let den = ratio.cycles.max(1);
        // |d| * num fits in 64 bits, and so does p0 + |d| * num / den + 1.
        let reach = (u64::MAX / num.max(1)).min(1 << 62);
        let most = i128::from(reach) * i128::from(num) / i128::from(den) + 1;
        let p0 = i64::try_from(p0).ok()?;
        let fits = i128::from(p0).abs() + most <= i128::from(i64::MAX);
        fits.then_some((Line { c0, p0, num, den }, i128::from(reach)))
    }

    #[inline]
    fn ps(&self, clock: i128) -> i64 {
        let d = (clock - self.c0) as i64;
        let den = self.den;
        let m = d.unsigned_abs() * self.num;
        let (a, b) = (m / den, m % den);
        let v = if d >= 0 {
            // q = a, r = b; round half up.
            (a + u64::from(b >= den - b)) as i64
        } else if b == 0 {
            -(a as i64)
        } else {
            // floor(-m / den) = -(a + 1), remainder den - b.
            let r = den - b;
            -(a as i64) - 1 + i64::from(r >= den - r)
        };
        self.p0 + v
    }
}

impl ClockCursor<'_> {
    /// The time of unwrapped clock value `clock`, in picoseconds from the
    /// launch origin (saturated to `i64`).
    #[inline]
    pub fn ps(&mut self, clock: i128) -> i64 {
        if self.lo <= clock && clock < self.hi {
            return self.line.ps(clock);
        }
        self.ps_slow(clock)
    }

    /// [`ClockCursor::ps`] outside the remembered piece: the piece that
    /// holds `clock` found (and remembered), the time computed through it.
    #[inline(never)]
    fn ps_slow(&mut self, clock: i128) -> i64 {
        let m = self.map;
        let n = m.points.len();
        let (first, last) = (m.points[0], m.points[n - 1]);
        // The piece: its point, its rate and the clocks it covers.
        let (point, ratio, lo, hi) = if clock <= first.0 {
            (first, &m.before, i128::MIN, first.0 + 1)
        } else if clock >= last.0 {
            (last, &m.after, last.0, i128::MAX)
        } else {
            // first.0 < clock < last.0: some segment holds it.
            if clock < m.points[self.seg].0 {
                self.seg = m.points.partition_point(|p| p.0 <= clock) - 1;
            }
            while m.points[self.seg + 1].0 <= clock {
                self.seg += 1;
            }
            let s = self.seg;
            (
                m.points[s],
                &m.segments[s],
                m.points[s].0,
                m.points[s + 1].0,
            )
        };
        let v = clamp(point.1 + ratio.cycles_to_ps(clock - point.0));
        if let Some((line, reach)) = Line::new(point.0, point.1, ratio) {
            self.lo = lo.max(point.0.saturating_sub(reach));
            self.hi = hi.min(point.0.saturating_add(reach));
            self.line = line;
        } else {
            (self.lo, self.hi) = (0, 0);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_cursor_gives_what_a_fresh_one_gives_in_any_order() {
        let mut next = crate::synth::xorshift64(0x2545_f491_4f6c_dd1d);
        for round in 0..300u64 {
            let n = 1 + (next() % 6) as usize;
            let mut clock = (next() >> (next() % 64)) as i128 - (1i128 << 40);
            let mut gt = 1_700_000_000_000_000_000 + next() % 1_000_000_000;
            let mut points = Vec::new();
            for _ in 0..n {
                points.push(TimerPoint {
                    clock,
                    globaltimer: gt,
                });
                if next() % 2 == 0 {
                    clock += [1, 2, 4, 2000][(next() % 4) as usize];
                    gt += next() % 5;
                } else {
                    clock += 1 + (next() >> (next() % 63 + 1)) as i128;
                    gt += next() >> (next() % 63 + 1);
                }
            }
            // Small rates give exact halves to round; large ones overflow.
            let ratio = |x: u64| match x % 3 {
                0 => ClockRatio {
                    ns: 1 + (x >> 8) % 7,
                    cycles: [1, 2, 3, 4, 8, 1980, 2000][(x >> 4) as usize % 7],
                },
                _ => ClockRatio {
                    ns: 1 + (x >> (x % 64)),
                    cycles: 1 + (x >> 3) % 5_000_000,
                },
            };
            let map = WarpClock::piecewise(
                gt - (next() % 10_000_000_000),
                &points,
                ratio(next()),
                ratio(next()),
            );
            let (lo, hi) = (points[0].clock, points[n - 1].clock);
            let span = (hi - lo).max(1);
            let mut clocks: Vec<i128> = (0..400)
                .map(|k| match k % 4 {
                    0 => lo - span + (next() as i128).rem_euclid(3 * span + 1),
                    1 => points[(next() % n as u64) as usize].clock + k as i128 % 3 - 1,
                    2 => (next() as i128) << (next() % 40),
                    _ => lo + (next() as i128).rem_euclid(span),
                })
                .collect();
            if round % 2 == 0 {
                clocks.sort_unstable();
            }
            let mut cursor = map.cursor();
            for c in clocks {
                assert_eq!(cursor.ps(c), map.ps(c), "round {round}, clock {c}");
            }
        }
    }
}
