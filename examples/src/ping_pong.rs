//! What the `two_gpus` example checks, as plain functions over its two
//! captures (one per GPU): each ping-pong round's four marks placed on one
//! axis, and how well that axis lines the GPUs up.
//!
//! In round `i` GPU 0 marks "ping sent" and writes a flag into GPU 1's
//! memory; GPU 1 marks "ping seen" when it reads it, then "pong sent" and
//! writes back; GPU 0 marks "pong seen". On a correct timeline both one-way
//! delays, `ping seen − ping sent` and `pong seen − pong sent`, are
//! positive. If GPU 1 is placed `e` too late, the first reads `ℓ₁ + e` and
//! the second `ℓ₂ − e`; the two directions cross the same link, so `ℓ₁ ≈ ℓ₂`
//! and half their difference estimates `e`, the alignment error.

use std::fmt;

use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::timeline::Placement;
use ktrace_runtime::{decode::Decoder, ExportOptions};

/// Why the rounds of two captures cannot be paired ([`rounds`]).
///
/// `Debug` prints the `Display` message, as `ktrace_runtime::Error` does:
/// the `two_gpus` example's `main` returns it.
#[derive(thiserror::Error)]
pub enum RoundsError {
    /// The captures hold different numbers of launches.
    #[error("{gpu0} launches on GPU 0, {gpu1} on GPU 1")]
    LaunchCount {
        /// Launches in GPU 0's capture.
        gpu0: usize,
        /// Launches in GPU 1's capture.
        gpu1: usize,
    },
    /// A launch's buffer does not match its shape.
    #[error(transparent)]
    Buffer(#[from] ktrace_runtime::Error),
    /// A launch pair whose four kinds of marks are not as many each.
    #[error(
        "launch {launch}: {pings_sent} pings sent, {pings_seen} seen; {pongs_sent} pongs \
         sent, {pongs_seen} seen"
    )]
    MarkCount {
        /// The launch.
        launch: usize,
        /// "ping sent" marks on GPU 0.
        pings_sent: usize,
        /// "ping seen" marks on GPU 1.
        pings_seen: usize,
        /// "pong sent" marks on GPU 1.
        pongs_sent: usize,
        /// "pong seen" marks on GPU 0.
        pongs_seen: usize,
    },
}

impl fmt::Debug for RoundsError {
    /// The `Display` text: what `main` prints when it returns this error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The four marks of one round, in ps on the axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// GPU 0 before writing the ping.
    pub ping_sent: i128,
    /// GPU 1 after reading it.
    pub ping_seen: i128,
    /// GPU 1 before writing the pong.
    pub pong_sent: i128,
    /// GPU 0 after reading it.
    pub pong_seen: i128,
}

impl Round {
    /// `ping seen − ping sent`, ps.
    pub fn there(&self) -> i128 {
        self.ping_seen - self.ping_sent
    }

    /// `pong seen − pong sent`, ps.
    pub fn back(&self) -> i128 {
        self.pong_seen - self.pong_sent
    }

    /// Half the difference of the two one-way delays, ps: how much later
    /// than GPU 0 the axis places GPU 1.
    pub fn skew(&self) -> i128 {
        (self.there() - self.back()) / 2
    }

    /// Whether a flag is seen before it was sent.
    pub fn violates_order(&self) -> bool {
        self.there() <= 0 || self.back() <= 0
    }
}

/// The marks named `names` of launch `l` of `cap`, in ps on the axis
/// (`shift` picks the offset from the launch's origin), each name's marks
/// in time order.
fn marks(
    cap: &Capture,
    l: usize,
    names: [&str; 2],
    shift: impl Fn(u64) -> i64,
) -> Result<[Vec<i128>; 2], RoundsError> {
    let launch = &cap.launches[l];
    let opts = ExportOptions::default().decode_for(&cap.device);
    let dec = Decoder::new(launch.buffer()?, &opts);
    let origin = dec.origin_globaltimer();
    let base = (i128::from(origin) + i128::from(shift(origin))) * 1000;
    let ids = names.map(|n| cap.regions.iter().find(|(_, m)| *m == n).map(|(id, _)| id));
    let mut out = [Vec::new(), Vec::new()];
    for w in dec.warps() {
        for e in w.events.iter().filter(|e| e.kind == EventKind::Mark) {
            for (k, id) in ids.iter().enumerate() {
                if *id == Some(e.region) {
                    out[k].push(base + i128::from(e.t_ps));
                }
            }
        }
    }
    for v in &mut out {
        v.sort_unstable();
    }
    Ok(out)
}

/// The rounds of every launch pair of `gpu0` (ping) and `gpu1` (pong)
/// placed by `placement` (capture 0 is `gpu0`); with `corrected` false,
/// on the raw `%globaltimer` readings of each GPU instead.
pub fn rounds(
    gpu0: &Capture,
    gpu1: &Capture,
    placement: &Placement,
    corrected: bool,
) -> Result<Vec<Vec<Round>>, RoundsError> {
    if gpu0.launches.len() != gpu1.launches.len() {
        return Err(RoundsError::LaunchCount {
            gpu0: gpu0.launches.len(),
            gpu1: gpu1.launches.len(),
        });
    }
    let shift = |i: usize| {
        move |gt: u64| {
            if corrected {
                placement.shift_ns(i, gt)
            } else {
                0
            }
        }
    };
    (0..gpu0.launches.len())
        .map(|l| {
            let [sent, seen] = marks(gpu0, l, ["ping sent", "pong seen"], shift(0))?;
            let [got, back] = marks(gpu1, l, ["ping seen", "pong sent"], shift(1))?;
            let n = sent.len();
            if [seen.len(), got.len(), back.len()] != [n; 3] {
                return Err(RoundsError::MarkCount {
                    launch: l,
                    pings_sent: n,
                    pings_seen: got.len(),
                    pongs_sent: back.len(),
                    pongs_seen: seen.len(),
                });
            }
            Ok((0..n)
                .map(|i| Round {
                    ping_sent: sent[i],
                    ping_seen: got[i],
                    pong_sent: back[i],
                    pong_seen: seen[i],
                })
                .collect())
        })
        .collect()
}

/// The `q`-quantile (0..=1, nearest rank) of `v`, sorted in place.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_measures_skew_and_order() {
        // GPU 1 placed 300 ps late; 1000 ps each way.
        let r = Round {
            ping_sent: 0,
            ping_seen: 1300,
            pong_sent: 1400,
            pong_seen: 2100,
        };
        assert_eq!((r.there(), r.back(), r.skew()), (1300, 700, 300));
        assert!(!r.violates_order());
        let late = Round { ping_seen: -1, ..r };
        assert!(late.violates_order());
        let mut v = vec![3.0, 1.0, 2.0];
        assert_eq!(quantile(&mut v, 0.5), 2.0);
    }

    #[test]
    fn a_mismatch_prints_its_message_as_debug_too() {
        let e = RoundsError::MarkCount {
            launch: 2,
            pings_sent: 5,
            pings_seen: 4,
            pongs_sent: 4,
            pongs_seen: 3,
        };
        let text = "launch 2: 5 pings sent, 4 seen; 4 pongs sent, 3 seen";
        assert_eq!(e.to_string(), text);
        assert_eq!(format!("{e:?}"), text);
        let e = RoundsError::LaunchCount { gpu0: 1, gpu1: 2 };
        assert_eq!(e.to_string(), "1 launches on GPU 0, 2 on GPU 1");
    }
}
