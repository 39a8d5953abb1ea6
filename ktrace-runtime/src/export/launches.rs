//! Launches across a capture: how long each launch ran, statistics per
//! kernel over its launches, which launches fall in each of the host's
//! steps, and choosing launches by kernel name and by step.
//!
//! A capture of a continuous session (CUDA graph replays, a serving loop)
//! holds thousands of launches of a few kernels. Everything here reads only
//! each launch's slot metadata, never its events, so it is cheap enough to
//! run over all of them:
//!
//! - [`launch_info`] (and [`launch_infos`], [`capture_launches`]): a
//!   launch's [`GpuSpan`], from the earliest `init_globaltimer` to the
//!   latest `final_globaltimer` of its slots that were opened and flushed;
//!   its kernel and [`LaunchOrigin`]; and its [`HostRange`] on the host's
//!   `CLOCK_REALTIME`: the GPU span mapped through the capture's
//!   [`HostAxis`] when it has clock syncs, else the launch's recorded
//!   enqueue → completion span.
//! - [`kernel_stats`]: per kernel, the launches' count, duration
//!   percentiles (p50, p90, p99; linear interpolation between the closest
//!   ranks, as the region summary computes them), max and mean, the
//!   slowest launches, the outliers (a launch whose duration exceeds
//!   [`OUTLIER_FACTOR`] times its kernel's p50) and the sites
//!   ([`SiteRecord`]) that ran it, with what they kept and dropped.
//! - [`step_launches`]: per [`HostStep`], the launches in it
//!   ([`LaunchInfo::in_step`]): the step the device recorded for a launch
//!   (the last one begun before it was enqueued, in its stream's order),
//!   or for a launch without one, whether its host range overlaps the step
//!   ([`HostRange::overlaps`]).
//! - [`LaunchSelection`]: the launches whose kernel matches a name pattern
//!   ([`NamePattern`]: `gemm*`) and that are in the steps of a
//!   [`StepRange`] (`2..5`, `2..`). A selection that keeps nothing is a
//!   [`FilterError`] naming what was asked and what the capture holds.
//! - [`site_overlaps`]: how many of a site's consecutive launches ran at
//!   the same time, and by how much (programmatic dependent launch).
//! - [`LaunchFacts`] and [`read_facts`]: what [`LaunchInfo`] tells of a
//!   launch, owned and without the buffer, for every launch of a capture
//!   file read a record at a time; so a capture of any size is summarised
//!   in the memory of a small record per launch.

mod facts;
mod overlap;
#[cfg(test)]
mod tests;

pub use facts::{facts_infos, read_facts, read_facts_on, CaptureFacts, KernelNames, LaunchFacts};
pub use overlap::{site_overlaps, SiteOverlap};

use std::fmt;

use crate::error::Result;
use crate::export::filter::{FilterError, FilterPart};
use crate::format::capture::{
    Capture, HostSpan, HostStep, LaunchCapture, LaunchOrigin, SiteRecord,
};
use crate::format::pattern::NamePattern;
use crate::timeline::HostAxis;

/// A launch is an outlier when its duration exceeds this many times the
/// median (p50) duration of its kernel's launches.
pub const OUTLIER_FACTOR: f64 = 1.5;

pub use crate::format::site::GpuSpan;

/// Where a [`HostRange`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSource {
    /// The launch's [`GpuSpan`] placed on the host's clock through the
    /// capture's clock syncs ([`HostAxis`]).
    GpuSpan,
    /// The launch's recorded enqueue → completion span
    /// ([`LaunchCapture::host_span`]): the capture has no clock syncs, or
    /// the launch no GPU span.
    Enqueue,
}

/// A launch's time on the host's `CLOCK_REALTIME`, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRange {
    /// Its start.
    pub begin_ns: i64,
    /// Its end.
    pub end_ns: i64,
    /// What it was measured from.
    pub source: HostSource,
}

impl HostRange {
    /// Whether the range shares time with `step`: the half-open ranges
    /// `[begin, end)` and `[step.begin, step.end)` intersect, a range of
    /// length 0 counting as its one nanosecond `[t, t + 1)`.
    pub fn overlaps(&self, step: &HostStep) -> bool {
        let b = i128::from(self.begin_ns);
        let e = i128::from(self.end_ns).max(b + 1);
        let sb = i128::from(step.begin_ns);
        let se = i128::from(step.end_ns).max(sb + 1);
        b.max(sb) < e.min(se)
    }
}

/// One launch as its slot metadata tells it (borrowing its kernel name from
/// the [`LaunchCapture`] or the [`LaunchFacts`] it was read from).
#[derive(Clone, Copy, Debug)]
pub struct LaunchInfo<'a> {
    /// Its index (the `launch` of its shape).
    pub launch: u32,
    /// Its kernel's name (empty when the session was not told it).
    pub kernel: &'a str,
    /// Its site and epoch, for a launch of a continuous session.
    pub origin: Option<LaunchOrigin>,
    /// Slots opened (warps that ran traced).
    pub warps: u64,
    /// Of those, the slots that flushed.
    pub flushed: u64,
    /// Its span on the GPU; `None` when no slot was opened and flushed.
    pub gpu: Option<GpuSpan>,
    /// Its span on the host's clock, if one is known.
    pub host: Option<HostRange>,
}

impl LaunchInfo<'_> {
    /// The duration of its [`GpuSpan`], ns.
    pub fn duration_ns(&self) -> Option<u64> {
        self.gpu.map(|g| g.duration_ns())
    }

    /// The host step it belongs to, as the device recorded it
    /// ([`LaunchOrigin::step`]).
    pub fn device_step(&self) -> Option<u64> {
        self.origin.and_then(|o| o.step)
    }

    /// Whether it belongs to `step`: the step the device recorded for it
    /// (in its stream's order) when there is one, else whether its host
    /// range overlaps the step's ([`HostRange::overlaps`]).
    pub fn in_step(&self, step: &HostStep) -> bool {
        match self.device_step() {
            Some(s) => s == step.index,
            None => self.host.is_some_and(|h| h.overlaps(step)),
        }
    }
}

/// `l` as its slot metadata tells it, its host range placed through `axis`
/// when one is given (else taken from its recorded host span). Fails only
/// when its buffer does not match its shape.
pub fn launch_info<'a>(l: &'a LaunchCapture, axis: Option<&HostAxis>) -> Result<LaunchInfo<'a>> {
    let (warps, flushed, gpu) = slot_facts(l)?;
    Ok(LaunchInfo {
        launch: l.shape.launch,
        kernel: &l.kernel,
        origin: l.origin,
        warps,
        flushed,
        gpu,
        host: host_range(gpu, l.host_span, axis),
    })
}

/// The slots of `l` that were opened, of those the flushed ones, and the
/// span from the earliest open to the latest flush of those.
fn slot_facts(l: &LaunchCapture) -> Result<(u64, u64, Option<GpuSpan>)> {
    let buf = l.buffer()?;
    let opened = buf.slots().filter(|s| s.meta().is_opened());
    let (warps, flushed) = opened.fold((0u64, 0u64), |(w, f), s| {
        (w + 1, f + u64::from(s.meta().is_flushed()))
    });
    Ok((warps, flushed, crate::format::site::gpu_span(&buf)))
}

/// A launch's host range: its GPU span through `axis`, else its recorded
/// host span.
fn host_range(
    gpu: Option<GpuSpan>,
    host_span: Option<HostSpan>,
    axis: Option<&HostAxis>,
) -> Option<HostRange> {
    let mapped = axis.zip(gpu).map(|(a, g)| HostRange {
        begin_ns: a.to_host_ns(g.begin_ns),
        end_ns: a.to_host_ns(g.end_ns),
        source: HostSource::GpuSpan,
    });
    mapped.or_else(|| {
        host_span.map(|h| HostRange {
            begin_ns: clamp_i64(h.enqueue_ns),
            end_ns: clamp_i64(h.complete_ns),
            source: HostSource::Enqueue,
        })
    })
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// [`launch_info`] of each of `launches`, in the order given.
pub fn launch_infos<'a>(
    launches: impl IntoIterator<Item = &'a LaunchCapture>,
    axis: Option<&HostAxis>,
) -> Result<Vec<LaunchInfo<'a>>> {
    launches.into_iter().map(|l| launch_info(l, axis)).collect()
}

/// [`launch_info`] of every launch of `cap`, placed on the host's clock
/// through its clock syncs when it has some.
pub fn capture_launches(cap: &Capture) -> Result<Vec<LaunchInfo<'_>>> {
    let axis = HostAxis::new(&cap.clock_syncs)?;
    launch_infos(&cap.launches, axis.as_ref())
}

/// Durations of a kernel's launches, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DurationStats {
    /// Median.
    pub p50_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// Shortest.
    pub min_ns: u64,
    /// Longest.
    pub max_ns: u64,
    /// Mean.
    pub mean_ns: f64,
}

impl DurationStats {
    /// The statistics of `d` (any order); `None` when it is empty.
    /// Percentiles interpolate linearly between the closest ranks: the
    /// p-th sits at rank `p/100 * (n-1)` of the sorted durations.
    pub fn of(d: &[u64]) -> Option<DurationStats> {
        let mut s = d.to_vec();
        s.sort_unstable();
        let n = s.len();
        let (&min_ns, &max_ns) = (s.first()?, s.last()?);
        let pct = |p: u64| {
            let num = p * (n as u64 - 1);
            let lo = (num / 100) as usize;
            let frac = (num % 100) as f64 / 100.0;
            let (a, b) = (s[lo] as f64, s[(lo + 1).min(n - 1)] as f64);
            a + (b - a) * frac
        };
        let total: u128 = s.iter().map(|&x| u128::from(x)).sum();
        Some(DurationStats {
            p50_ns: pct(50),
            p90_ns: pct(90),
            p99_ns: pct(99),
            min_ns,
            max_ns,
            mean_ns: total as f64 / n as f64,
        })
    }
}

/// One launch and its duration, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDuration {
    /// The launch's index.
    pub launch: u32,
    /// Its duration.
    pub duration_ns: u64,
}

/// One kernel across its launches.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelStats<'a> {
    /// The kernel's name (empty for launches without one).
    pub kernel: &'a str,
    /// Its launches.
    pub launches: usize,
    /// Of those, the launches with a [`GpuSpan`] (the others recorded no
    /// flushed warp and have no duration).
    pub timed: usize,
    /// Their durations; `None` when none is timed.
    pub duration: Option<DurationStats>,
    /// The slowest timed launches, slowest first (ties: the lower index
    /// first).
    pub slowest: Vec<LaunchDuration>,
    /// The launches slower than [`OUTLIER_FACTOR`] times the p50, slowest
    /// first.
    pub outliers: Vec<LaunchDuration>,
    /// The sites that ran the kernel (a site of the same kernel name, or
    /// one its launches came from), with what they kept and dropped.
    pub sites: Vec<&'a SiteRecord>,
}

/// Statistics per kernel of `infos`, kernels in the order of their first
/// launch, each with its `slowest` slowest launches; `sites` is the
/// capture's [`Capture::sites`].
pub fn kernel_stats<'a>(
    infos: &[LaunchInfo<'a>],
    sites: &'a [SiteRecord],
    slowest: usize,
) -> Vec<KernelStats<'a>> {
    let mut kernels: Vec<&'a str> = Vec::new();
    for i in infos {
        if !kernels.contains(&i.kernel) {
            kernels.push(i.kernel);
        }
    }
    kernels
        .into_iter()
        .map(|k| one_kernel(k, infos.iter().filter(|i| i.kernel == k), sites, slowest))
        .collect()
}

/// [`KernelStats`] of kernel `kernel`, whose launches are `launches`.
fn one_kernel<'a, 'i>(
    kernel: &'a str,
    launches: impl Iterator<Item = &'i LaunchInfo<'a>>,
    sites: &'a [SiteRecord],
    slowest: usize,
) -> KernelStats<'a>
where
    'a: 'i,
{
    let mut count = 0;
    let mut timed: Vec<LaunchDuration> = Vec::new();
    let mut site_ids: Vec<u32> = Vec::new();
    for i in launches {
        count += 1;
        if let Some(d) = i.duration_ns() {
            timed.push(LaunchDuration {
                launch: i.launch,
                duration_ns: d,
            });
        }
        if let Some(o) = i.origin {
            site_ids.push(o.site);
        }
    }
    let durations: Vec<u64> = timed.iter().map(|t| t.duration_ns).collect();
    let duration = DurationStats::of(&durations);
    timed.sort_by(|a, b| {
        b.duration_ns
            .cmp(&a.duration_ns)
            .then(a.launch.cmp(&b.launch))
    });
    let outliers = duration.map_or_else(Vec::new, |d| {
        let limit = d.p50_ns * OUTLIER_FACTOR;
        timed
            .iter()
            .copied()
            .take_while(|t| t.duration_ns as f64 > limit)
            .collect()
    });
    let sites = sites
        .iter()
        .filter(|s| (!kernel.is_empty() && s.kernel == kernel) || site_ids.contains(&s.site))
        .collect();
    KernelStats {
        kernel,
        launches: count,
        timed: timed.len(),
        duration,
        slowest: timed.iter().copied().take(slowest).collect(),
        outliers,
        sites,
    }
}

/// One host step and the launches in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepLaunches<'s> {
    /// The step.
    pub step: &'s HostStep,
    /// The indices of the launches in it ([`LaunchInfo::in_step`]), in the
    /// order of `infos`.
    pub launches: Vec<u32>,
}

/// For each of `steps`, the launches of `infos` in it
/// ([`LaunchInfo::in_step`]): those the device recorded in the step, and
/// of the launches without a recorded step those whose host range overlaps
/// it; a launch with neither is in none.
pub fn step_launches<'s>(steps: &'s [HostStep], infos: &[LaunchInfo<'_>]) -> Vec<StepLaunches<'s>> {
    steps
        .iter()
        .map(|step| StepLaunches {
            step,
            launches: infos
                .iter()
                .filter(|i| i.in_step(step))
                .map(|i| i.launch)
                .collect(),
        })
        .collect()
}

/// A range of host step indices, as Rust writes ranges: `A..B` holds `A`
/// up to `B` exclusive, `A..` every index from `A`, `..B` every index
/// below `B`; a lone `A` is `A..A+1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepRange {
    /// The first index, or `None` from the first step.
    pub start: Option<u64>,
    /// The index after the last, or `None` to the last step.
    pub end: Option<u64>,
}

impl StepRange {
    /// Parses `A..B`, `A..`, `..B` or `A`.
    pub fn parse(text: &str) -> std::result::Result<Self, FilterError> {
        let err = |p: &str| FilterError::new(FilterPart::Steps, text, p);
        let form = "expected a range of step indices: A..B (A up to B, B excluded), A.., ..B or A";
        let num = |s: &str| -> std::result::Result<Option<u64>, FilterError> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(None);
            }
            s.parse().map(Some).map_err(|_| err(form))
        };
        let r = match text.split_once("..") {
            Some((a, b)) if !b.starts_with('=') => StepRange {
                start: num(a)?,
                end: num(b)?,
            },
            Some(_) => return Err(err(&format!("{form} (write A..B+1 for ..=)"))),
            None => {
                let a = num(text)?.ok_or_else(|| err(form))?;
                StepRange {
                    start: Some(a),
                    end: Some(a.saturating_add(1)),
                }
            }
        };
        if let (Some(a), Some(b)) = (r.start, r.end) {
            if b <= a {
                return Err(err(&format!("the range {r} holds no index")));
            }
        }
        Ok(r)
    }

    /// Whether step index `index` is in the range.
    pub fn contains(&self, index: u64) -> bool {
        self.start.map_or(true, |a| index >= a) && self.end.map_or(true, |b| index < b)
    }
}

impl fmt::Display for StepRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(a) = self.start {
            write!(f, "{a}")?;
        }
        f.write_str("..")?;
        if let Some(b) = self.end {
            write!(f, "{b}")?;
        }
        Ok(())
    }
}

/// Which launches to keep: those whose kernel matches one of `kernels`
/// (every kernel when empty) and that are in a host step with an index in
/// `steps` (every launch when `None`; see [`LaunchInfo::in_step`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchSelection {
    /// Kernel name patterns ([`NamePattern`]: `*` matches any run of
    /// characters).
    pub kernels: Vec<String>,
    /// Host step indices.
    pub steps: Option<StepRange>,
}

impl LaunchSelection {
    /// Whether it keeps every launch.
    pub fn keeps_all(&self) -> bool {
        self.kernels.is_empty() && self.steps.is_none()
    }

    /// Whether kernel `name` matches (always, without patterns).
    pub fn matches_kernel(&self, name: &str) -> bool {
        self.kernels.is_empty()
            || self
                .kernels
                .iter()
                .any(|p| NamePattern::new(p).matches(name))
    }

    /// The launches of `infos` it keeps, in order; `steps` is the
    /// capture's [`Capture::steps`]. Fails when it keeps none, saying what
    /// was asked and what there is.
    pub fn select<'i, 'a>(
        &self,
        infos: &'i [LaunchInfo<'a>],
        steps: &[HostStep],
    ) -> std::result::Result<Vec<&'i LaunchInfo<'a>>, FilterError> {
        Ok(self
            .select_indices(infos, steps)?
            .into_iter()
            .map(|i| &infos[i])
            .collect())
    }

    /// The positions in `infos` of the launches it keeps, increasing (as
    /// [`LaunchSelection::select`]).
    pub fn select_indices(
        &self,
        infos: &[LaunchInfo<'_>],
        steps: &[HostStep],
    ) -> std::result::Result<Vec<usize>, FilterError> {
        let by_kernel: Vec<usize> = (0..infos.len())
            .filter(|&i| self.matches_kernel(infos[i].kernel))
            .collect();
        if by_kernel.is_empty() && !infos.is_empty() {
            return Err(self.no_kernel(infos));
        }
        let Some(range) = self.steps else {
            return Ok(by_kernel);
        };
        let chosen: Vec<&HostStep> = steps.iter().filter(|s| range.contains(s.index)).collect();
        if chosen.is_empty() {
            return Err(no_step(range, steps));
        }
        let kept: Vec<usize> = by_kernel
            .into_iter()
            .filter(|&i| match infos[i].device_step() {
                Some(step) => range.contains(step),
                None => infos[i]
                    .host
                    .is_some_and(|h| chosen.iter().any(|s| h.overlaps(s))),
            })
            .collect();
        if kept.is_empty() && !infos.is_empty() {
            return Err(self.no_overlap(range, chosen.len(), infos));
        }
        Ok(kept)
    }

    /// No launch's kernel matches.
    fn no_kernel(&self, infos: &[LaunchInfo<'_>]) -> FilterError {
        let mut names: Vec<(&str, usize)> = Vec::new();
        for i in infos {
            match names.iter_mut().find(|(k, _)| *k == i.kernel) {
                Some((_, n)) => *n += 1,
                None => names.push((i.kernel, 1)),
            }
        }
        let known: Vec<String> = names
            .iter()
            .map(|(k, n)| {
                let k = if k.is_empty() { "(unnamed)" } else { k };
                format!("{k} ({n} launch{})", if *n == 1 { "" } else { "es" })
            })
            .collect();
        FilterError::new(
            FilterPart::Kernels,
            &self.kernels.join(", "),
            format!(
                "no launch's kernel matches; the launches' kernels: {}",
                known.join(", ")
            ),
        )
    }

    /// Steps `range` exist but no kept launch is in them.
    fn no_overlap(&self, range: StepRange, steps: usize, infos: &[LaunchInfo<'_>]) -> FilterError {
        let recorded = infos
            .iter()
            .filter(|i| self.matches_kernel(i.kernel))
            .all(|i| i.device_step().is_some());
        let problem = if recorded {
            let what = if self.kernels.is_empty() {
                String::new()
            } else {
                format!(" of a kernel matching {}", self.kernels.join(", "))
            };
            format!(
                "no launch{what} was enqueued during the {steps} steps in {range} (every \
                 launch's step was recorded on the device)"
            )
        } else if infos
            .iter()
            .all(|i| i.host.is_none() && i.device_step().is_none())
        {
            "no launch has a host time (the capture has no clock syncs and its launches no host \
             spans), so none can be placed in a step"
                .to_string()
        } else if self.kernels.is_empty() {
            format!("no launch overlaps the {steps} steps in {range}{AHEAD_HINT}")
        } else {
            format!(
                "no launch of a kernel matching {} overlaps the {steps} steps in {range}{AHEAD_HINT}",
                self.kernels.join(", ")
            )
        };
        FilterError::new(FilterPart::Steps, &range.to_string(), problem)
    }
}

/// What a failed step selection adds where launches have no step recorded
/// on the device (captures written before it was): such a launch is placed
/// by the host's time, which a host that enqueues ahead of the device
/// leaves behind.
const AHEAD_HINT: &str = " (a launch without a step recorded on the device is in a step when it \
                          runs during the step's host time; a host that enqueues ahead of the \
                          device ends its steps before their launches run: record the steps on \
                          the device with ContinuousConfig::steps_on_device, on by default)";

/// No step has an index in `range`.
fn no_step(range: StepRange, steps: &[HostStep]) -> FilterError {
    let problem = match (
        steps.iter().map(|s| s.index).min(),
        steps.iter().map(|s| s.index).max(),
    ) {
        (Some(lo), Some(hi)) => format!(
            "no host step has an index in {range}; the capture's {} steps have indices {lo} to \
             {hi}",
            steps.len()
        ),
        _ => "the capture holds no host steps (a continuous session records them)".to_string(),
    };
    FilterError::new(FilterPart::Steps, &range.to_string(), problem)
}
