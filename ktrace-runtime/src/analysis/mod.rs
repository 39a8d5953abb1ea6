//! What a decoded launch says about a kernel: warp roles and their wait
//! share, imbalance across blocks and the tail, and how many warps are
//! inside each region over time.
//!
//! [`analyze`] is a pure function of a [`DecodedLaunch`], its region names
//! and [`AnalysisOptions`]; [`analyze_launch`] decodes a captured launch
//! first. The result, [`Analysis`], is plain data (rows with named fields,
//! times in nanoseconds as `f64`) meant to be printed as tables or written
//! as JSON; `docs/analysis.md` documents every field of schema
//! [`SCHEMA`].
//!
//! # Definitions
//!
//! - **Launch start**: the earliest event of any traced warp. Every time in
//!   an [`Analysis`] (span ends, block ends, the busy series) counts from
//!   it, in ns.
//! - **Active time** of a warp: by default from its first event to its last
//!   event (begins, ends and marks; [`ActiveWindow::Events`]), or from its
//!   open to its flush ([`ActiveWindow::OpenToFlush`], the last event
//!   standing in for the flush of a warp that never flushed). A warp with no
//!   event has no active time.
//! - **Time in a region** of a warp: the length of the union of that
//!   region's spans (a region nested in itself counts once), clipped to the
//!   active window. Different regions may overlap (nesting), so a warp's
//!   region shares can add up to more than 1.
//! - **Outside any region**: active time minus the length of the union of
//!   all the warp's spans, so nested regions are not subtracted twice.
//! - **Wait time**: the length of the union of the spans of the regions
//!   whose names match a wait pattern ([`WaitPatterns`], default `wait*`).
//!
//! `roles.rs` groups warps into roles, `imbalance.rs` compares blocks and
//! occurrences, `busy.rs` builds the series, `compare.rs` sets the roles of
//! two analyses side by side (for `ktrace diff`).

mod busy;
mod compare;
mod imbalance;
mod roles;
pub mod stalls;

pub use busy::{Busy, BusySeries};
pub use compare::{compare_roles, RoleComparison, RoleRegionComparison};
pub use imbalance::{Imbalance, OccurrenceSpread, SlowBlock, Tail};
pub use roles::{Role, RoleRegion};

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decode::{decode, DecodeOptions, DecodedLaunch, WarpTrace};
use crate::diagnostics::WarpId;
use crate::format::capture::{DeviceInfo, LaunchCapture};
use crate::format::pattern::NamePattern;
use crate::format::regions::Regions;

/// The schema string of [`Analysis`]: readers check it; fields may be added
/// without changing it, never renamed, removed or given a new meaning.
pub const SCHEMA: &str = "ktrace.analysis/1";

/// What can be wrong with the options of an analysis.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// A wait pattern that no region name could match as meant.
    #[error("wait pattern {pattern:?}: {problem}")]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Glob patterns naming the regions in which a warp waits (`*` matches any
/// run of characters; every other character matches itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitPatterns {
    patterns: Vec<String>,
}

impl Default for WaitPatterns {
    /// `wait*`.
    fn default() -> Self {
        WaitPatterns {
            patterns: vec!["wait*".into()],
        }
    }
}

impl WaitPatterns {
    /// Checks and keeps `patterns`. An empty list means no region is a
    /// wait. A pattern fails when it is empty or holds a character no
    /// region name can hold (region names are printable ASCII without
    /// quotes or backslashes) or `?` (only `*` is a wildcard).
    pub fn new<I, S>(patterns: I) -> Result<Self, AnalysisError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        for p in &patterns {
            let bad = |problem: String| AnalysisError::BadPattern {
                pattern: p.clone(),
                problem,
            };
            if p.trim().is_empty() {
                return Err(bad(
                    "the pattern is empty; give a region name or a glob such as wait*".into(),
                ));
            }
            if let Some(c) = p
                .chars()
                .find(|&c| !(c.is_ascii_graphic() || c == ' ') || c == '"' || c == '\\')
            {
                return Err(bad(format!(
                    "{c:?} cannot appear in a region name (printable ASCII without quotes or \
                     backslashes)"
                )));
            }
            if p.contains('?') {
                return Err(bad(
                    "'?' is not a wildcard here and cannot appear in a region name; only * is \
                     a wildcard (wait*)"
                        .into(),
                ));
            }
        }
        Ok(WaitPatterns { patterns })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `name` matches one of the patterns.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns
            .iter()
            .any(|p| NamePattern::new(p).matches(name))
    }
}

impl fmt::Display for WaitPatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.patterns.join(","))
    }
}

/// Which stretch of a warp's life counts as its active time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActiveWindow {
    /// From the warp's first event to its last (the default): what the
    /// markers cover, without the recorder's own open and flush.
    #[default]
    Events,
    /// From the warp's open to its flush (to its last event when it never
    /// flushed): also counts the time before the first marker and after
    /// the last one as outside any region.
    OpenToFlush,
}

impl ActiveWindow {
    /// `"events"` or `"open_to_flush"`, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ActiveWindow::Events => "events",
            ActiveWindow::OpenToFlush => "open_to_flush",
        }
    }
}

/// Analysis choices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalysisOptions {
    /// Regions in which warps wait (default `wait*`).
    pub wait: WaitPatterns,
    /// What counts as a warp's active time (default first to last event).
    pub active: ActiveWindow,
    /// Bins of the busy series (default 120; 0 counts as 1).
    pub busy_bins: u32,
    /// How many of the slowest blocks to list (default 5).
    pub slow_blocks: usize,
    /// Occurrence indices listed per region in the imbalance table (default
    /// 256): a region that some warp runs more often has its later
    /// occurrences left out, and says so.
    pub max_occurrences: u32,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            wait: WaitPatterns::default(),
            active: ActiveWindow::default(),
            busy_bins: 120,
            slow_blocks: 5,
            max_occurrences: 256,
        }
    }
}

/// The analysis of one launch (schema [`SCHEMA`]; `docs/analysis.md`
/// documents every field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Launch index.
    pub launch: u32,
    /// Kernel name, empty when the capture does not know it.
    #[serde(default)]
    pub kernel: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Traced warps (opened slots).
    pub warps_traced: u64,
    /// Traced warps with at least one event.
    pub warps_with_events: u64,
    /// Blocks with at least one event.
    pub blocks_with_events: u64,
    /// Launch start to the last event of any warp, ns; 0 without events.
    pub kernel_time_ns: f64,
    /// What counts as active time: `"events"` or `"open_to_flush"`.
    pub active_window: ActiveWindow,
    /// The wait patterns used.
    pub wait_patterns: Vec<String>,
    /// Names of the regions with spans in this launch that those patterns
    /// match, in name order.
    pub wait_regions: Vec<String>,
    /// Warps grouped by the set of regions they run.
    pub roles: Vec<Role>,
    /// Spread across warps and blocks, the slowest blocks, the tail.
    pub imbalance: Imbalance,
    /// Warps inside each region over the launch.
    pub busy: Busy,
    /// Things a reader should know about this analysis (a wait pattern
    /// that matched no region, warps that never flushed), one sentence each.
    pub notes: Vec<String>,
}

/// Analyses a decoded launch, naming regions from `regions`.
pub fn analyze(launch: &DecodedLaunch, regions: &Regions, opts: &AnalysisOptions) -> Analysis {
    let views: Vec<WarpView> = launch
        .warps
        .iter()
        .map(|w| WarpView::new(w, opts.active, &|r| opts.wait.matches(&regions.name(r))))
        .collect();
    let t0 = views.iter().filter_map(|v| v.first).min().unwrap_or(0);
    let t1 = views.iter().filter_map(|v| v.last).max().unwrap_or(t0);
    let ctx = Context {
        regions,
        opts,
        t0,
        t1,
    };
    let used_names = used_region_names(&views, regions);
    let wait_regions = wait_regions(&used_names, &opts.wait);
    let mut notes = unmatched_pattern_notes(&used_names, &opts.wait);
    notes.extend(lost_event_notes(&launch.warps));
    let (imbalance, imbalance_notes) = imbalance::imbalance(&views, &ctx);
    notes.extend(imbalance_notes);
    Analysis {
        schema: SCHEMA.into(),
        launch: launch.shape.launch,
        kernel: String::new(),
        grid: launch.shape.grid,
        block: launch.shape.block,
        warps_traced: views.len() as u64,
        warps_with_events: views.iter().filter(|v| v.first.is_some()).count() as u64,
        blocks_with_events: blocks_with_events(&views),
        kernel_time_ns: ns(t1 - t0),
        active_window: opts.active,
        wait_patterns: opts.wait.patterns().to_vec(),
        wait_regions,
        roles: roles::roles(&views, &ctx),
        imbalance,
        busy: busy::busy(&views, &ctx),
        notes,
    }
}

/// The names of the regions with spans in the launch, by region id.
fn used_region_names(views: &[WarpView], regions: &Regions) -> Vec<String> {
    let mut used: Vec<u16> = views
        .iter()
        .flat_map(|v| v.regions.iter().map(|r| r.id))
        .collect();
    used.sort_unstable();
    used.dedup();
    used.iter()
        .map(|&id| regions.name(id).into_owned())
        .collect()
}

/// The names among `used_names` that the wait patterns match, in name
/// order.
fn wait_regions(used_names: &[String], wait: &WaitPatterns) -> Vec<String> {
    let mut wait_regions: Vec<String> = used_names
        .iter()
        .filter(|n| wait.matches(n))
        .cloned()
        .collect();
    wait_regions.sort();
    wait_regions.dedup();
    wait_regions
}

/// One note per wait pattern that matches none of `used_names`.
fn unmatched_pattern_notes(used_names: &[String], wait: &WaitPatterns) -> Vec<String> {
    let mut notes = Vec::new();
    for p in wait.patterns() {
        if !used_names.iter().any(|n| NamePattern::new(p).matches(n)) {
            notes.push(format!(
                "wait pattern {p:?} matches no region with spans in this launch: no time counts \
                 as waiting for it"
            ));
        }
    }
    notes
}

/// Notes on warps whose active time is cut: those that never flushed, lost
/// events to ring overflow, or have begins or ends without a partner.
fn lost_event_notes(warp_traces: &[WarpTrace]) -> Vec<String> {
    let mut notes = Vec::new();
    let never = warp_traces.iter().filter(|w| !w.flushed).count();
    if never > 0 {
        notes.push(format!(
            "{} never flushed: later events are lost, so active time ends early",
            warps(never)
        ));
    }
    let dropped = warp_traces.iter().filter(|w| w.dropped > 0).count();
    if dropped > 0 {
        notes.push(format!(
            "{} lost the oldest events to ring overflow: the first spans and the start \
             are missing, so active time is short",
            warps(dropped)
        ));
    }
    let unmatched = warp_traces
        .iter()
        .filter(|w| {
            w.diagnostics.iter().any(|d| {
                matches!(
                    d,
                    crate::diagnostics::Diagnostic::UnmatchedBegin { .. }
                        | crate::diagnostics::Diagnostic::UnmatchedEnd { .. }
                )
            })
        })
        .count();
    if unmatched > 0 {
        notes.push(format!(
            "{} with begins or ends without a partner: those are not spans and \
             count as outside any region",
            warps(unmatched)
        ));
    }
    notes
}

/// How many blocks have a warp with at least one event.
fn blocks_with_events(views: &[WarpView]) -> u64 {
    let mut blocks: Vec<u32> = views
        .iter()
        .filter(|v| v.first.is_some())
        .map(|v| v.id.block)
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks.len() as u64
}

/// Decodes a captured launch (as the exporters do for `device`) and
/// analyses it; the kernel name comes from the capture.
pub fn analyze_launch(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &AnalysisOptions,
) -> crate::error::Result<Analysis> {
    let decode_opts = DecodeOptions::default().for_device(device);
    let decoded = decode(launch.buffer()?, &decode_opts);
    Ok(analyze_decoded_launch(launch, &decoded, regions, opts))
}

/// [`analyze`] of `decoded`, the decode of `launch`, with the launch's
/// kernel name: [`analyze_launch`] for a caller that has decoded the launch
/// already (`ktrace report`).
pub fn analyze_decoded_launch(
    launch: &LaunchCapture,
    decoded: &DecodedLaunch,
    regions: &Regions,
    opts: &AnalysisOptions,
) -> Analysis {
    let mut a = analyze(decoded, regions, opts);
    a.kernel = launch.kernel.clone();
    a
}

/// What every part of the analysis reads.
struct Context<'a> {
    regions: &'a Regions,
    opts: &'a AnalysisOptions,
    /// Launch start, ps from the decode origin.
    t0: i64,
    /// The launch's last event, ps from the decode origin.
    t1: i64,
}

impl Context<'_> {
    fn name(&self, id: u16) -> String {
        self.regions.name(id).into_owned()
    }

    fn is_wait(&self, id: u16) -> bool {
        self.opts.wait.matches(&self.regions.name(id))
    }

    /// `t` (ps from the decode origin) in ns from launch start.
    fn at(&self, t: i64) -> f64 {
        ns(t - self.t0)
    }
}

/// One region's time in one warp.
#[derive(Clone, Debug)]
struct RegionTime {
    id: u16,
    /// Spans of the region.
    spans: u64,
    /// The region's spans, merged into disjoint intervals within the
    /// active window, by start.
    intervals: Vec<(i64, i64)>,
    /// Their total length, ps.
    ps: i64,
}

/// One warp, reduced to what the analysis reads.
#[derive(Debug)]
struct WarpView<'a> {
    id: WarpId,
    trace: &'a WarpTrace,
    /// First and last event, ps from the decode origin.
    first: Option<i64>,
    last: Option<i64>,
    /// Active time, ps.
    active_ps: i64,
    /// Per region the warp has spans of, by region id.
    regions: Vec<RegionTime>,
    /// Union of the wait regions' spans, ps.
    wait_ps: i64,
    /// Union of all spans, ps.
    any_ps: i64,
}

impl<'a> WarpView<'a> {
    fn new(w: &'a WarpTrace, active: ActiveWindow, is_wait: &dyn Fn(u16) -> bool) -> Self {
        let first = w.events.iter().map(|e| e.t_ps).min();
        let last = w.events.iter().map(|e| e.t_ps).max();
        let window = match (active, first, last) {
            (_, None, _) | (_, _, None) => None,
            (ActiveWindow::Events, Some(f), Some(l)) => Some((f, l)),
            (ActiveWindow::OpenToFlush, Some(f), Some(l)) => {
                Some((w.open_ps.min(f), w.flush_ps.map_or(l, |fl| fl.max(l))))
            }
        };
        let (lo, hi) = window.unwrap_or((0, 0));
        let mut ids: Vec<u16> = w.spans.iter().map(|s| s.region).collect();
        ids.sort_unstable();
        ids.dedup();
        let regions: Vec<RegionTime> = ids
            .into_iter()
            .map(|id| {
                let spans = w.spans.iter().filter(|s| s.region == id);
                let n = spans.clone().count() as u64;
                let intervals = merge(spans.map(|s| (s.start_ps, s.end_ps)), lo, hi);
                RegionTime {
                    id,
                    spans: n,
                    ps: length(&intervals),
                    intervals,
                }
            })
            .collect();
        let wait = merge(
            w.spans
                .iter()
                .filter(|s| is_wait(s.region))
                .map(|s| (s.start_ps, s.end_ps)),
            lo,
            hi,
        );
        let any = merge(w.spans.iter().map(|s| (s.start_ps, s.end_ps)), lo, hi);
        WarpView {
            id: w.id,
            trace: w,
            first,
            last,
            active_ps: hi - lo,
            regions,
            wait_ps: length(&wait),
            any_ps: length(&any),
        }
    }

    fn region(&self, id: u16) -> Option<&RegionTime> {
        self.regions.iter().find(|r| r.id == id)
    }
}

/// Intervals sorted by start, clipped to `[lo, hi]` and merged where they
/// overlap or touch.
fn merge(intervals: impl Iterator<Item = (i64, i64)>, lo: i64, hi: i64) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = intervals
        .map(|(s, e)| (s.max(lo), e.min(hi)))
        .filter(|(s, e)| e > s)
        .collect();
    if !v.windows(2).all(|w| w[0].0 <= w[1].0) {
        v.sort_unstable();
    }
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(intervals: &[(i64, i64)]) -> i64 {
    intervals.iter().map(|(s, e)| e - s).sum()
}

/// "1 warp", "2 warps".
fn warps(n: usize) -> String {
    if n == 1 {
        "1 warp".into()
    } else {
        format!("{n} warps")
    }
}

/// Picoseconds as nanoseconds.
fn ns(ps: i64) -> f64 {
    ps as f64 / 1000.0
}

/// `part / whole`, 0 when `whole` is 0.
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// The median of `v` (the mean of the two middle values for an even
/// count); 0 for an empty slice. Sorts `v`.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests;
