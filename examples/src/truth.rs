//! Ground truth for the `dvfs` example: the `%globaltimer` readings its
//! timeline warps take beside every marker, the file they are saved in, and
//! the comparison of a decoded trace against them. Pure functions, so the
//! committed capture is checked in CI without a GPU.

use std::fmt;
use std::path::{Path, PathBuf};

use ktrace_runtime::decode::DecodedLaunch;
use ktrace_runtime::format::layout::EventKind;

/// The first bytes of a truth file.
pub const TRUTH_MAGIC: &[u8; 8] = b"KTTRUTH1";

/// Why bytes are not a truth file ([`Truth::from_bytes`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TruthFormatError {
    /// The bytes do not start with [`TRUTH_MAGIC`] (or are shorter than
    /// the header).
    #[error("not a truth file (bad magic)")]
    BadMagic,
    /// The length does not match the counts in the header.
    #[error(
        "truth file of {actual} bytes, expected {expected} for {blocks} blocks x {markers} markers"
    )]
    Length {
        /// Bytes given.
        actual: usize,
        /// Bytes the header implies.
        expected: usize,
        /// Blocks in the header.
        blocks: u32,
        /// Markers in the header.
        markers: u32,
    },
}

/// Why a truth file could not be loaded ([`Truth::load`]): each message
/// starts with the file and ends with its cause, which is also the
/// [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum TruthLoadError {
    /// Reading the file failed.
    #[error("{path}: {error}", path = path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        error: std::io::Error,
    },
    /// The file is not a truth file.
    #[error("{path}: {error}", path = path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        error: TruthFormatError,
    },
}

/// Why a decoded trace cannot be compared with the truth ([`compare`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// A timeline warp of a block the truth has no readings for.
    #[error("block {block} has no truth")]
    NoTruth {
        /// The block.
        block: usize,
    },
    /// A timeline warp whose event count is not the marker count.
    #[error("block {block}: {events} events in the trace, {markers} markers recorded")]
    EventCount {
        /// The block.
        block: usize,
        /// Events in the trace.
        events: usize,
        /// Markers per timeline warp in the truth.
        markers: usize,
    },
    /// An event whose kind is not its marker's.
    #[error("block {block}: event {event} is a {kind:?}")]
    EventKind {
        /// The block.
        block: usize,
        /// The event's index in its warp.
        event: usize,
        /// Its kind.
        kind: EventKind,
    },
    /// The trace has no warp 0 in any block.
    #[error("no timeline warp (warp 0) in the trace")]
    NoTimelineWarp,
}

/// `%globaltimer` (ns) read right after each marker of each timeline warp:
/// `ns[block * markers + i]` for marker `i` of block `block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// Markers per timeline warp.
    pub markers: u32,
    /// Blocks (one timeline warp each).
    pub blocks: u32,
    /// Absolute `%globaltimer` readings, block-major.
    pub ns: Vec<u64>,
}

impl Truth {
    /// The file: magic, `markers` and `blocks` (u32 LE), then the readings
    /// (u64 LE).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 8 * self.ns.len());
        out.extend_from_slice(TRUTH_MAGIC);
        out.extend_from_slice(&self.markers.to_le_bytes());
        out.extend_from_slice(&self.blocks.to_le_bytes());
        for v in &self.ns {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads [`Truth::to_bytes`]'s format, checking every length.
    pub fn from_bytes(b: &[u8]) -> Result<Self, TruthFormatError> {
        if b.len() < 16 || &b[..8] != TRUTH_MAGIC {
            return Err(TruthFormatError::BadMagic);
        }
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let (markers, blocks) = (word(8), word(12));
        let n = markers as usize * blocks as usize;
        if b.len() != 16 + 8 * n {
            return Err(TruthFormatError::Length {
                actual: b.len(),
                expected: 16 + 8 * n,
                blocks,
                markers,
            });
        }
        let ns = b[16..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(Truth {
            markers,
            blocks,
            ns,
        })
    }

    /// Reads a truth file.
    pub fn load(path: &Path) -> Result<Self, TruthLoadError> {
        let b = std::fs::read(path).map_err(|error| TruthLoadError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Truth::from_bytes(&b).map_err(|error| TruthLoadError::Format {
            path: path.to_path_buf(),
            error,
        })
    }
}

/// The kind of marker `i` of a timeline warp (see examples/kernels/dvfs.cu).
pub fn marker_kind(i: u32) -> EventKind {
    match i % 3 {
        0 => EventKind::Begin,
        1 => EventKind::End,
        _ => EventKind::Mark,
    }
}

/// Order statistics of absolute errors, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorStats {
    /// How many values.
    pub n: usize,
    /// Median of |error|.
    pub median: f64,
    /// 99th percentile of |error|.
    pub p99: f64,
    /// Largest |error|.
    pub max: f64,
}

impl ErrorStats {
    /// The statistics of `errors` (signed; their absolute values are used).
    pub fn of(errors: &[f64]) -> Self {
        let mut a: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
        if a.is_empty() {
            return ErrorStats::default();
        }
        a.sort_by(f64::total_cmp);
        let at = |q: f64| a[((a.len() - 1) as f64 * q).round() as usize];
        ErrorStats {
            n: a.len(),
            median: at(0.5),
            p99: at(0.99),
            max: a[a.len() - 1],
        }
    }
}

impl fmt::Display for ErrorStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>9.1} {:>9.1} {:>9.1}",
            self.median, self.p99, self.max
        )
    }
}

/// Regions at least this long (ns) count for
/// [`Comparison::long_duration_rel_p99`].
pub const LONG_REGION_NS: u64 = 32_000;

/// A decoded trace against the truth.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Trace time of each marker minus the `%globaltimer` read beside it.
    pub event_time: ErrorStats,
    /// Trace duration of each "dvfs step" region minus its truth duration.
    pub duration: ErrorStats,
    /// The largest duration error relative to the truth duration, where the
    /// error exceeds 8 ns (0 when none does).
    pub duration_rel_max: f64,
    /// The 99th percentile of the duration error relative to the truth, over
    /// regions of at least [`LONG_REGION_NS`] (where the truth's own 32 ns
    /// steps weigh 0.2% at most).
    pub long_duration_rel_p99: f64,
    /// Timeline warps compared.
    pub warps: usize,
    /// Length of the longest timeline warp (first to last marker), in ns.
    pub longest_warp_ns: u64,
}

/// Compares the timeline warps (warp 0 of each block) of `decoded` with the
/// truth. Fails when a timeline warp's events do not match its markers one
/// for one (count and kind): the example's kernel records exactly those.
pub fn compare(decoded: &DecodedLaunch, truth: &Truth) -> Result<Comparison, CompareError> {
    let m = truth.markers as usize;
    let origin = decoded.origin_globaltimer as i128;
    let (mut ev, mut dur) = (Vec::new(), Vec::new());
    let mut rel_max = 0f64;
    let mut rel_long = Vec::new();
    let (mut warps, mut longest) = (0usize, 0u64);
    for w in decoded.warps.iter().filter(|w| w.id.warp == 0) {
        let b = w.id.block as usize;
        if b >= truth.blocks as usize {
            return Err(CompareError::NoTruth { block: b });
        }
        let tr = &truth.ns[b * m..(b + 1) * m];
        if w.events.len() != m {
            return Err(CompareError::EventCount {
                block: b,
                events: w.events.len(),
                markers: m,
            });
        }
        for (i, (e, &t)) in w.events.iter().zip(tr).enumerate() {
            if e.kind != marker_kind(i as u32) {
                return Err(CompareError::EventKind {
                    block: b,
                    event: i,
                    kind: e.kind,
                });
            }
            let truth_ps = (i128::from(t) - origin) * 1000;
            ev.push((i128::from(e.t_ps) - truth_ps) as f64 / 1000.0);
        }
        for i in (0..m.saturating_sub(1)).step_by(3) {
            let trace = (w.events[i + 1].t_ps - w.events[i].t_ps) as f64 / 1000.0;
            let real = tr[i + 1].wrapping_sub(tr[i]) as i64 as f64;
            let err = trace - real;
            dur.push(err);
            if err.abs() > 8.0 && real > 0.0 {
                rel_max = rel_max.max(err.abs() / real);
            }
            if real >= LONG_REGION_NS as f64 {
                rel_long.push(err / real);
            }
        }
        warps += 1;
        longest = longest.max(tr[m - 1].saturating_sub(tr[0]));
    }
    if warps == 0 {
        return Err(CompareError::NoTimelineWarp);
    }
    Ok(Comparison {
        event_time: ErrorStats::of(&ev),
        duration: ErrorStats::of(&dur),
        duration_rel_max: rel_max,
        long_duration_rel_p99: ErrorStats::of(&rel_long).p99,
        warps,
        longest_warp_ns: longest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_say_why_in_the_words_they_always_did() {
        assert_eq!(
            Truth::from_bytes(b"KTTRUTH0").unwrap_err().to_string(),
            "not a truth file (bad magic)"
        );
        let mut b = Truth {
            markers: 3,
            blocks: 2,
            ns: vec![0; 6],
        }
        .to_bytes();
        b.pop();
        assert_eq!(
            Truth::from_bytes(&b).unwrap_err().to_string(),
            "truth file of 63 bytes, expected 64 for 2 blocks x 3 markers"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        std::fs::write(&path, &b).unwrap();
        let e = Truth::load(&path).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: truth file of 63 bytes, expected 64 for 2 blocks x 3 markers",
                path.display()
            )
        );
        let cause = std::error::Error::source(&e).unwrap();
        assert!(cause.is::<TruthFormatError>());
        let e = Truth::load(&dir.path().join("none.bin")).unwrap_err();
        let cause = std::error::Error::source(&e).unwrap();
        let io = cause.downcast_ref::<std::io::Error>().unwrap();
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert!(e.to_string().ends_with(&format!(": {io}")), "{e}");
    }
}
