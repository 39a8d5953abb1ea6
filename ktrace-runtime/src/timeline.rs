//! Placing launches on one time axis: a GPU's `%globaltimer` measured
//! against the host's clock, and the launches of one or more captures put
//! on a common axis.
//!
//! `%globaltimer` is close to Unix time but is not the host's clock: on an
//! H200 it read about 95 µs ahead of `CLOCK_REALTIME` and drifted by about
//! 1.2 µs per second, and two GPUs of one host differ by tens to hundreds of
//! µs. A [`TraceSession`](crate::session::TraceSession) therefore measures
//! the offset itself, at its start and after every traced launch, with a
//! handshake through mapped host memory ([`ClockSync`]); the capture keeps
//! the measurements, and [`HostAxis`] interpolates between them to put any
//! `%globaltimer` reading on the host's `CLOCK_REALTIME` axis.
//!
//! Everything here is plain arithmetic on recorded numbers; the handshake
//! itself is the device edge's (`session::clock_sync`).

use crate::error::{Error, Result};
use crate::format::capture::Capture;
pub use crate::format::clock_sync::ClockSync;

/// The estimate of one handshake from its rounds (each a [`ClockSync`]).
///
/// Each round bounds the offset (GPU ahead of host): it lies between
/// `gpu − host_after` and `gpu − host_before`, so the rounds together bound
/// it to the intersection of their intervals. The estimate is the median of
/// the rounds' midpoint offsets, kept inside that intersection: on an H200
/// two handshakes with one GPU a millisecond apart agreed within 59 ns (sd,
/// 40 pairs of 64 rounds), where the single round with the shortest round
/// trip scattered by 236 ns. The result is a [`ClockSync`] whose midpoint
/// is the estimate and whose half round trip is the larger distance from
/// it to the intersection's edges: what the rounds prove, not a
/// statistical error. Fails when there are no rounds or one is not a
/// handshake.
pub fn estimate_sync(rounds: &[ClockSync]) -> Result<ClockSync> {
    for r in rounds {
        r.check()?;
    }
    if rounds.is_empty() {
        return Err(Error::Corrupt("a clock handshake without rounds".into()));
    }
    let bound = |r: &ClockSync, host: u64| i128::from(r.gpu_ns) - i128::from(host);
    let lo = rounds.iter().map(|r| bound(r, r.host_after_ns)).max();
    let hi = rounds.iter().map(|r| bound(r, r.host_before_ns)).min();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        unreachable!("rounds is not empty")
    };
    let mut mids: Vec<i128> = rounds.iter().map(|r| i128::from(r.offset_ns())).collect();
    mids.sort_unstable();
    let n = mids.len();
    let median = (mids[(n - 1) / 2] + mids[n / 2]) / 2;
    // Rounds that contradict each other (the host clock stepped during the
    // handshake) leave no intersection: then the rounds' own spread bounds
    // it.
    let (lo, hi) = if lo <= hi {
        (lo, hi)
    } else {
        (
            mids[0] - i128::from(rounds[0].uncertainty_ns()),
            mids[n - 1] + i128::from(rounds[n - 1].uncertainty_ns()),
        )
    };
    let est = median.clamp(lo, hi);
    let unc = (est - lo).max(hi - est);
    let middle = &rounds[n / 2];
    let gpu = i128::from(middle.gpu_ns);
    let before = gpu - est - unc;
    let after = gpu - est + unc;
    let to_u64 = |v: i128| {
        u64::try_from(v).map_err(|_| Error::Corrupt(format!("clock handshake out of range: {v}")))
    };
    let shift = after - i128::from(middle.host_after_ns);
    let s = ClockSync {
        host_before_ns: to_u64(before)?,
        gpu_ns: middle.gpu_ns,
        host_after_ns: to_u64(after)?,
        boottime_ns: if middle.boottime_ns == 0 {
            0
        } else {
            to_u64(i128::from(middle.boottime_ns) + shift)?
        },
    };
    s.check()?;
    Ok(s)
}

/// A GPU's `%globaltimer` mapped onto the host's `CLOCK_REALTIME`: the
/// offset of each [`ClockSync`], interpolated linearly between them (in
/// `%globaltimer` order) and held constant before the first and after the
/// last, where drift cannot be estimated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostAxis {
    /// `(gpu_ns, offset_ns, uncertainty_ns)`, by `gpu_ns`, no two equal.
    points: Vec<(u64, i64, u64)>,
    /// What making the points took.
    repairs: AxisRepairs,
}

/// What [`HostAxis::new`] did to the syncs it was given, so that it can be
/// said: none of it changes a time, but a reader of the capture should
/// know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisRepairs {
    /// Syncs given.
    pub given: usize,
    /// Syncs that came after one with a later `%globaltimer` (sorted).
    pub out_of_order: usize,
    /// Syncs left out because another had the same `%globaltimer` and a
    /// round trip as short or shorter.
    pub same_gpu_time: usize,
}

impl AxisRepairs {
    /// "" when nothing was done, else what was, for a report line.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.out_of_order > 0 {
            parts.push(format!(
                "{} out of %globaltimer order, sorted",
                self.out_of_order
            ));
        }
        if self.same_gpu_time > 0 {
            parts.push(format!(
                "{} with the %globaltimer of another, left out (the shorter round trip kept)",
                self.same_gpu_time
            ));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("of {} clock syncs: {}", self.given, parts.join("; "))
        }
    }
}

impl HostAxis {
    /// The axis of a GPU measured by `syncs` (in any order); `None` when
    /// there are none. Of syncs with the same `%globaltimer` the one with
    /// the shortest round trip is kept. Both are counted in
    /// [`HostAxis::repairs`].
    pub fn new(syncs: &[ClockSync]) -> Result<Option<HostAxis>> {
        for s in syncs {
            s.check()?;
        }
        let out_of_order = syncs
            .windows(2)
            .filter(|w| w[1].gpu_ns < w[0].gpu_ns)
            .count();
        let mut sorted: Vec<&ClockSync> = syncs.iter().collect();
        sorted.sort_by_key(|s| (s.gpu_ns, s.round_trip_ns()));
        sorted.dedup_by_key(|s| s.gpu_ns);
        if sorted.is_empty() {
            return Ok(None);
        }
        let repairs = AxisRepairs {
            given: syncs.len(),
            out_of_order,
            same_gpu_time: syncs.len() - sorted.len(),
        };
        Ok(Some(HostAxis {
            points: sorted
                .into_iter()
                .map(|s| (s.gpu_ns, s.offset_ns(), s.uncertainty_ns()))
                .collect(),
            repairs,
        }))
    }

    /// What was done to the syncs given to [`HostAxis::new`].
    pub fn repairs(&self) -> AxisRepairs {
        self.repairs
    }

    /// The interpolated offset (GPU ahead of host, ns) at `%globaltimer`
    /// `gpu_ns`.
    pub fn offset_at(&self, gpu_ns: u64) -> i64 {
        let p = &self.points;
        let i = p.partition_point(|&(g, _, _)| g <= gpu_ns);
        if i == 0 {
            return p[0].1;
        }
        if i == p.len() {
            return p[i - 1].1;
        }
        let (g0, o0, _) = p[i - 1];
        let (g1, o1, _) = p[i];
        // g0 <= gpu_ns < g1: rounded to the nearest ns.
        let num = i128::from(o1 - o0) * i128::from(gpu_ns - g0);
        let den = i128::from(g1 - g0);
        let step = (2 * num + den * num.signum()) / (2 * den);
        o0 + step as i64
    }

    /// The uncertainty of [`offset_at`](HostAxis::offset_at): the larger
    /// half round trip of the syncs it interpolates between (the nearest
    /// one's outside them).
    pub fn uncertainty_at(&self, gpu_ns: u64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|&(g, _, _)| g <= gpu_ns);
        match i {
            0 => p[0].2,
            i if i == p.len() => p[i - 1].2,
            i => p[i - 1].2.max(p[i].2),
        }
    }

    /// `gpu_ns` on the host's `CLOCK_REALTIME` axis.
    pub fn to_host_ns(&self, gpu_ns: u64) -> i64 {
        (i128::from(gpu_ns) - i128::from(self.offset_at(gpu_ns))) as i64
    }

    /// The drift between the first and the last sync, in ns of offset per
    /// second of `%globaltimer` (`None` with one sync, or syncs less than a
    /// millisecond apart).
    pub fn drift_ns_per_s(&self) -> Option<f64> {
        let (first, last) = (self.points.first()?, self.points.last()?);
        let span = last.0 - first.0;
        (span >= 1_000_000).then(|| (last.1 - first.1) as f64 / (span as f64 / 1e9))
    }

    /// The syncs' `(gpu_ns, offset_ns, uncertainty_ns)`, by `gpu_ns`.
    pub fn points(&self) -> &[(u64, i64, u64)] {
        &self.points
    }
}

/// Which axis launches were placed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// The host's `CLOCK_REALTIME`, through each capture's clock syncs.
    HostRealtime,
    /// The raw `%globaltimer` of the one GPU all captures came from.
    GlobalTimer,
}

impl Axis {
    /// `"host_realtime"` or `"globaltimer"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Axis::HostRealtime => "host_realtime",
            Axis::GlobalTimer => "globaltimer",
        }
    }
}

/// The captures of one timeline, each with what places it on the axis.
#[derive(Debug)]
pub struct Placement {
    /// The axis every capture was placed on.
    pub axis: Axis,
    /// Per capture, in the order given: its [`HostAxis`] when the axis is
    /// the host's, `None` on the `%globaltimer` axis.
    pub host_axes: Vec<Option<HostAxis>>,
}

impl Placement {
    /// The offset to add to `%globaltimer` ns of capture `i` near `gpu_ns`
    /// to put it on the axis.
    pub fn shift_ns(&self, i: usize, gpu_ns: u64) -> i64 {
        self.host_axes[i]
            .as_ref()
            .map_or(0, |a| -a.offset_at(gpu_ns))
    }
}

/// Decides how captures (`(name, capture)`, the name for messages) go on one
/// axis: the host's `CLOCK_REALTIME` when every capture has clock syncs;
/// the raw `%globaltimer` when none has and all come from one GPU (same
/// UUID, or a single capture); otherwise an error naming what is missing.
pub fn place(captures: &[(&str, &Capture)]) -> Result<Placement> {
    let axes = captures
        .iter()
        .map(|(name, c)| {
            HostAxis::new(&c.clock_syncs).map_err(|e| Error::Merge(format!("{name}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let with: Vec<&str> = captures
        .iter()
        .zip(&axes)
        .filter(|(_, a)| a.is_some())
        .map(|((n, _), _)| *n)
        .collect();
    if with.len() == captures.len() {
        return Ok(Placement {
            axis: Axis::HostRealtime,
            host_axes: axes,
        });
    }
    let without: Vec<&str> = captures
        .iter()
        .zip(&axes)
        .filter(|(_, a)| a.is_none())
        .map(|((n, _), _)| *n)
        .collect();
    if !with.is_empty() {
        return Err(Error::Merge(format!(
            "{} ha{} no clock syncs, so {} cannot be put on the host axis the others use; \
             record every capture with a ktrace that measures the GPU clock against the host's \
             (captures of format version 2 from a TraceSession)",
            without.join(", "),
            if without.len() == 1 { "s" } else { "ve" },
            if without.len() == 1 { "it" } else { "they" },
        )));
    }
    let first = captures.first().map(|(_, c)| c.device.uuid);
    let same_gpu = captures.len() <= 1
        || (first.flatten().is_some()
            && captures
                .iter()
                .all(|(_, c)| c.device.uuid == first.flatten()));
    if !same_gpu {
        return Err(Error::Merge(format!(
            "none of {} has clock syncs and they do not all come from one GPU (by UUID), \
             so their %globaltimer readings are not on one axis; record them with a ktrace \
             that measures the GPU clock against the host's (capture format version 2)",
            without.join(", ")
        )));
    }
    Ok(Placement {
        axis: Axis::GlobalTimer,
        host_axes: axes,
    })
}

/// The host's `CLOCK_REALTIME` and `CLOCK_BOOTTIME` now, in ns (boot time 0
/// where the host has no such clock).
pub fn host_clocks_ns() -> (u64, u64) {
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (realtime, clock_ns(HostClock::Boottime).unwrap_or(0))
}

/// A clock of the host that [`clock_ns`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostClock {
    /// `CLOCK_REALTIME`: Unix time.
    Realtime,
    /// `CLOCK_MONOTONIC`: time since boot, suspended time left out.
    Monotonic,
    /// `CLOCK_BOOTTIME`: time since boot, suspended time included.
    Boottime,
}

/// `clock` now, in ns: `clock_gettime`, the one place the host's clocks are
/// read by id. `None` where it cannot be read (not Linux, or the call
/// fails).
#[cfg(target_os = "linux")]
pub(crate) fn clock_ns(clock: HostClock) -> Option<u64> {
    let id = match clock {
        HostClock::Realtime => libc::CLOCK_REALTIME,
        HostClock::Monotonic => libc::CLOCK_MONOTONIC,
        HostClock::Boottime => libc::CLOCK_BOOTTIME,
    };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write and clock_gettime writes
    // only into it; the three clocks exist on every Linux this runs on
    // (CLOCK_BOOTTIME since 2.6.39).
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return None;
    }
    u64::try_from(ts.tv_sec)
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(u64::try_from(ts.tv_nsec).ok()?)
}

/// `clock` now, in ns: `None`, no clock is read off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn clock_ns(_clock: HostClock) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::capture::DeviceInfo;

    fn sync(host_before: u64, rtt: u64, offset: i64) -> ClockSync {
        let mid = host_before + rtt / 2;
        ClockSync {
            host_before_ns: host_before,
            gpu_ns: (mid as i64 + offset) as u64,
            host_after_ns: host_before + rtt,
            boottime_ns: 5,
        }
    }

    #[test]
    fn syncs_out_of_order_or_at_one_gpu_time_are_counted() {
        let a = sync(1_000_000, 2_000, 100);
        let b = sync(2_000_000, 2_000, 200);
        let in_order = HostAxis::new(&[a, b]).unwrap().unwrap();
        assert_eq!(in_order.repairs().text(), "");
        // b, then a: sorted, and said.
        let swapped = HostAxis::new(&[b, a]).unwrap().unwrap();
        assert_eq!(swapped.points(), in_order.points());
        assert_eq!(
            swapped.repairs(),
            AxisRepairs {
                given: 2,
                out_of_order: 1,
                same_gpu_time: 0
            }
        );
        // A third at a's GPU time with a longer round trip: left out.
        let mut c = sync(999_000, 4_000, 100);
        c.gpu_ns = a.gpu_ns;
        let three = HostAxis::new(&[a, c, b]).unwrap().unwrap();
        assert_eq!(three.points().len(), 2);
        assert_eq!(three.points()[0].2, 1_000);
        assert_eq!(
            three.repairs().text(),
            "of 3 clock syncs: 1 with the %globaltimer of another, left out (the shorter round \
             trip kept)"
        );
    }

    #[test]
    fn a_sync_gives_the_offset_at_the_midpoint_within_half_the_round_trip() {
        let s = sync(1_000_000, 2_800, 94_600);
        assert_eq!(s.round_trip_ns(), 2_800);
        assert_eq!(s.host_mid_ns(), 1_001_400);
        assert_eq!(s.offset_ns(), 94_600);
        assert_eq!(s.uncertainty_ns(), 1_400);
        assert!(s.check().is_ok());
        let backwards = ClockSync {
            host_after_ns: 10,
            ..s
        };
        assert!(backwards.check().is_err());
        assert!(ClockSync::default().check().is_err());
    }

    #[test]
    fn a_handshake_is_estimated_by_the_median_midpoint_within_what_its_rounds_prove() {
        // The GPU is 100 µs ahead. Each round: the flag takes 1000 ns plus
        // a phase of 0..1000 ns to be seen, the answer 900 ns to arrive.
        let mut rnd = crate::synth::xorshift64(7);
        let offset = 100_000i64;
        let rounds: Vec<ClockSync> = (0..64u64)
            .map(|k| {
                let before = 1_700_000_000_000_000_000 + k * 5_000;
                let seen = before + 1_000 + rnd() % 1_000;
                let after = seen + 900;
                ClockSync {
                    host_before_ns: before,
                    gpu_ns: (seen as i64 + offset) as u64,
                    host_after_ns: after,
                    boottime_ns: 1_000_000 + (after - 1_700_000_000_000_000_000),
                }
            })
            .collect();
        let s = estimate_sync(&rounds).unwrap();
        // Midpoints are offset + (1000 + phase - 900) / 2: the median phase
        // is about 500 ns, so the estimate is about 300 ns high (a bias
        // both GPUs of one host share), well inside the proven interval.
        let err = s.offset_ns() - offset;
        assert!((250..350).contains(&err), "{err}");
        // The proven interval: [gpu − after, gpu − before] intersected.
        assert!(s.uncertainty_ns() >= err.unsigned_abs());
        assert!(s.uncertainty_ns() < 2_000, "{}", s.uncertainty_ns());
        // Boot time keeps its distance to the realtime reading.
        assert_eq!(
            s.host_after_ns - s.boottime_ns,
            rounds[0].host_after_ns - rounds[0].boottime_ns
        );
        assert!(estimate_sync(&[]).is_err());
    }

    #[test]
    fn the_axis_interpolates_drift_between_syncs_and_holds_it_outside() {
        // 94.6 µs ahead at t = 1 s, 121.9 µs ahead 23 s later: 1.187 µs/s.
        let a = sync(1_000_000_000, 2_000, 94_600);
        let b = sync(24_000_000_000, 3_000, 121_900);
        let axis = HostAxis::new(&[b, a]).unwrap().unwrap();
        assert_eq!(axis.offset_at(a.gpu_ns), 94_600);
        assert_eq!(axis.offset_at(b.gpu_ns), 121_900);
        let mid = (a.gpu_ns + b.gpu_ns) / 2;
        assert_eq!(axis.offset_at(mid), 108_250);
        assert_eq!(axis.offset_at(0), 94_600);
        assert_eq!(axis.offset_at(u64::MAX), 121_900);
        assert_eq!(axis.uncertainty_at(mid), 1_500);
        assert_eq!(axis.uncertainty_at(0), 1_000);
        assert_eq!(axis.to_host_ns(a.gpu_ns), a.host_mid_ns() as i64);
        let drift = axis.drift_ns_per_s().unwrap();
        assert!((drift - 1187.0).abs() < 1.0, "{drift}");
        // A negative slope rounds to the nearest ns too.
        let c = sync(1_000_000_000, 0, 100);
        let d = sync(1_000_000_004, 0, 99);
        assert_eq!(d.gpu_ns - c.gpu_ns, 3);
        let axis = HostAxis::new(&[c, d]).unwrap().unwrap();
        assert_eq!(axis.offset_at(c.gpu_ns + 1), 100);
        assert_eq!(axis.offset_at(c.gpu_ns + 2), 99);
        assert_eq!(HostAxis::new(&[]).unwrap(), None);
    }

    fn capture(syncs: Vec<ClockSync>, uuid: Option<[u8; 16]>) -> Capture {
        Capture {
            device: DeviceInfo {
                uuid,
                ..DeviceInfo::default()
            },
            clock_syncs: syncs,
            ..Capture::default()
        }
    }

    #[test]
    fn captures_go_on_the_host_axis_when_all_have_syncs_else_one_gpu_or_an_error() {
        let s = sync(1_000_000_000, 2_000, 50_000);
        let a = capture(vec![s], Some([1; 16]));
        let b = capture(vec![s], Some([2; 16]));
        let p = place(&[("a", &a), ("b", &b)]).unwrap();
        assert_eq!(p.axis, Axis::HostRealtime);
        assert_eq!(p.shift_ns(1, s.gpu_ns), -50_000);

        let bare_a = capture(vec![], Some([1; 16]));
        let bare_a2 = capture(vec![], Some([1; 16]));
        let p = place(&[("x", &bare_a), ("y", &bare_a2)]).unwrap();
        assert_eq!(p.axis, Axis::GlobalTimer);
        assert_eq!(p.shift_ns(0, 123), 0);

        let bare_b = capture(vec![], Some([2; 16]));
        let e = place(&[("x", &bare_a), ("z", &bare_b)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not all come from one GPU"), "{e}");
        let e = place(&[("a", &a), ("x", &bare_a)]).unwrap_err().to_string();
        assert!(e.contains("x has no clock syncs"), "{e}");
        let unknown = capture(vec![], None);
        assert!(place(&[("u", &unknown), ("v", &unknown)]).is_err());
        assert_eq!(place(&[("u", &unknown)]).unwrap().axis, Axis::GlobalTimer);
    }

    #[test]
    fn host_clocks_read_now() {
        let (rt, bt) = host_clocks_ns();
        // After 2020 and, on Linux, a boot time below the Unix time.
        assert!(rt > 1_577_836_800_000_000_000);
        if cfg!(target_os = "linux") {
            assert!(bt > 0 && bt < rt);
        }
    }
}
