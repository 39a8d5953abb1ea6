//! Ground truth for the `dvfs` example: the `%globaltimer` readings its
//! timeline warps take beside every marker, the file they are saved in, and
//! the comparison of a decoded trace against them. Pure functions, so the
//! committed capture is checked in CI without a GPU.

use std::fmt;
use std::path::Path;

use ktrace_runtime::decode::DecodedLaunch;
use ktrace_runtime::format::layout::EventKind;

/// The first bytes of a truth file.
pub const TRUTH_MAGIC: &[u8; 8] = b"KTTRUTH1";

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
    pub fn from_bytes(b: &[u8]) -> Result<Self, String> {
        if b.len() < 16 || &b[..8] != TRUTH_MAGIC {
            return Err("not a truth file (bad magic)".into());
        }
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let (markers, blocks) = (word(8), word(12));
        let n = markers as usize * blocks as usize;
        if b.len() != 16 + 8 * n {
            return Err(format!(
                "truth file of {} bytes, expected {} for {blocks} blocks x {markers} markers",
                b.len(),
                16 + 8 * n
            ));
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
    pub fn load(path: &Path) -> Result<Self, String> {
        let b = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Truth::from_bytes(&b).map_err(|e| format!("{}: {e}", path.display()))
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
pub fn compare(decoded: &DecodedLaunch, truth: &Truth) -> Result<Comparison, String> {
    let m = truth.markers as usize;
    let origin = decoded.origin_globaltimer as i128;
    let (mut ev, mut dur) = (Vec::new(), Vec::new());
    let mut rel_max = 0f64;
    let mut rel_long = Vec::new();
    let (mut warps, mut longest) = (0usize, 0u64);
    for w in decoded.warps.iter().filter(|w| w.id.warp == 0) {
        let b = w.id.block as usize;
        if b >= truth.blocks as usize {
            return Err(format!("block {b} has no truth"));
        }
        let tr = &truth.ns[b * m..(b + 1) * m];
        if w.events.len() != m {
            return Err(format!(
                "block {b}: {} events in the trace, {m} markers recorded",
                w.events.len()
            ));
        }
        for (i, (e, &t)) in w.events.iter().zip(tr).enumerate() {
            if e.kind != marker_kind(i as u32) {
                return Err(format!("block {b}: event {i} is a {:?}", e.kind));
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
        return Err("no timeline warp (warp 0) in the trace".into());
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
