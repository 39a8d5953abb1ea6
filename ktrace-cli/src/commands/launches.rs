//! `ktrace launches`: statistics across the launches of a capture, per
//! kernel and (`--each`) per launch, read from the slots' metadata alone.
//! The file is read a record at a time and each launch's buffer dropped
//! once its facts are taken, so a capture of any size takes the memory of
//! a small record per launch.

use std::fmt::Write as _;
use std::path::Path;

use ktrace_runtime::export::launches::{
    facts_infos, kernel_stats, read_facts, site_overlaps, step_launches, KernelStats,
    LaunchDuration, LaunchFacts, LaunchInfo, LaunchSelection, OUTLIER_FACTOR,
};
use ktrace_runtime::format::capture::{Capture, StreamEnd};
use ktrace_runtime::format::site::WhenFull;

use super::check_read;
use crate::cli::LaunchesArgs;
use crate::error::CliError;
use crate::table::{dur, table_text};

/// Outliers named per kernel; the rest are counted.
const OUTLIERS_NAMED: usize = 5;

/// `ktrace launches`.
pub fn run(args: LaunchesArgs) -> Result<(), CliError> {
    print!(
        "{}",
        file_text(&args.capture, &args.select.selection(), args.each)?
    );
    Ok(())
}

/// What `ktrace launches` prints for the capture file at `path`, read a
/// record at a time: no launch's buffer is kept.
fn file_text(path: &Path, sel: &LaunchSelection, each: bool) -> Result<String, CliError> {
    let read = read_facts(path, |_| false)?;
    check_read(path, &read.capture, read.launches.len())?;
    facts_text(&read.capture, &read.launches, sel, each)
}

/// What `ktrace launches` prints for `cap` ([`facts_text`] of its
/// launches).
#[cfg(test)]
fn text(cap: &Capture, sel: &LaunchSelection, each: bool) -> Result<String, CliError> {
    let facts = cap
        .launches
        .iter()
        .map(LaunchFacts::of)
        .collect::<Result<Vec<_>, _>>()?;
    facts_text(cap, &facts, sel, each)
}

/// What `ktrace launches` prints for a capture whose launches are `facts`
/// (the launches of `cap` itself are not read: only its clock syncs,
/// steps, sites and end): a line when the file was cut, a warning per site
/// that dropped launches, the table per kernel and its outliers, and with
/// `each` the table per launch.
pub fn facts_text(
    cap: &Capture,
    facts: &[LaunchFacts],
    sel: &LaunchSelection,
    each: bool,
) -> Result<String, CliError> {
    let all = facts_infos(facts, &cap.clock_syncs)?;
    let infos: Vec<LaunchInfo<'_>> = sel.select(&all, &cap.steps)?.into_iter().copied().collect();
    let mut out = String::new();
    if let Some(StreamEnd::Cut { offset, left }) = cap.stream_end {
        let _ = writeln!(
            out,
            "capture cut at byte {offset}: everything before it was read ({left} bytes after \
             it, an incomplete record, were not)"
        );
    }
    // Sites of the kernels chosen (all of them without --kernels).
    let chosen = |kernel: &str| infos.iter().any(|l| l.kernel == kernel) || sel.keeps_all();
    for s in cap
        .sites
        .iter()
        .filter(|s| s.dropped > 0 && chosen(&s.kernel))
    {
        let why = match s.when_full {
            WhenFull::DropNew => "chosen, but no slab was free",
            WhenFull::KeepNewest => "the ring was full: newer launches wrote over them",
        };
        let _ = writeln!(
            out,
            "warning: site {} ({}): {} {} ({why}); {} of {} kept",
            s.site,
            name(&s.kernel),
            plural(s.dropped as usize, "launch", "launches"),
            s.when_full.lost(),
            s.kept,
            s.launches
        );
    }
    let stats = kernel_stats(&infos, &cap.sites, 1);
    let _ = writeln!(
        out,
        "{} of {}, {}",
        infos.len(),
        plural(all.len(), "launch", "launches"),
        plural(stats.len(), "kernel", "kernels")
    );
    out.push_str(&kernel_table(&stats));
    for k in &stats {
        out.push_str(&kernel_notes(k));
    }
    out.push_str(&overlap_notes(&infos));
    if each {
        out.push('\n');
        out.push_str(&launch_table(cap, &all, &infos));
    }
    Ok(out)
}

/// A kernel's name, or `(unnamed)`.
fn name(kernel: &str) -> &str {
    if kernel.is_empty() {
        "(unnamed)"
    } else {
        kernel
    }
}

/// "1 launch", "2 launches".
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A duration in ns, with a unit that suits it.
fn dur_ns(ns: f64) -> String {
    dur(ns / 1e3)
}

/// "launch 4 (10.000 us)".
fn launch_duration(l: &LaunchDuration) -> String {
    format!("launch {} ({})", l.launch, dur_ns(l.duration_ns as f64))
}

/// A row per kernel: launches, p50, p99, max, the slowest launch.
fn kernel_table(stats: &[KernelStats<'_>]) -> String {
    let mut rows = vec![
        ["kernel", "launches", "p50", "p99", "max", "slowest launch"]
            .map(String::from)
            .to_vec(),
    ];
    for k in stats {
        let d = |f: fn(&ktrace_runtime::export::launches::DurationStats) -> f64| {
            k.duration.as_ref().map_or("-".into(), |d| dur_ns(f(d)))
        };
        rows.push(vec![
            name(k.kernel).to_string(),
            k.launches.to_string(),
            d(|d| d.p50_ns),
            d(|d| d.p99_ns),
            d(|d| d.max_ns as f64),
            k.slowest.first().map_or("-".into(), launch_duration),
        ]);
    }
    table_text(&rows, "  ")
}

/// A kernel's launches without a duration and its outliers, a line each.
fn kernel_notes(k: &KernelStats<'_>) -> String {
    let mut out = String::new();
    let untimed = k.launches - k.timed;
    if untimed > 0 {
        let _ = writeln!(
            out,
            "  {}: {} with no flushed warp, so no duration",
            name(k.kernel),
            plural(untimed, "launch", "launches")
        );
    }
    if !k.outliers.is_empty() {
        let named: Vec<String> = k
            .outliers
            .iter()
            .take(OUTLIERS_NAMED)
            .map(launch_duration)
            .collect();
        let more = k.outliers.len().saturating_sub(OUTLIERS_NAMED);
        let _ = writeln!(
            out,
            "  {}: {} (over {OUTLIER_FACTOR} x p50): {}{}",
            name(k.kernel),
            plural(k.outliers.len(), "outlier", "outliers"),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    out
}

/// A line per site whose consecutive launches ran at the same time
/// (programmatic dependent launch): how many of them, and by how much.
fn overlap_notes(infos: &[LaunchInfo<'_>]) -> String {
    let mut out = String::new();
    for o in site_overlaps(infos).iter().filter(|o| o.overlapped > 0) {
        let _ = writeln!(
            out,
            "  {} (site {}): {} of {} consecutive launches began before the one before them \
             ended, by {} at the median",
            name(o.kernel),
            o.site,
            o.overlapped,
            o.pairs,
            dur_ns(o.median_ns as f64)
        );
    }
    out
}

/// A row per launch of `infos`: index, kernel, site/epoch, start (from the
/// first launch of `all`), duration, warps, and the host steps it is in
/// ([`LaunchInfo::in_step`]) when the capture has steps.
fn launch_table(cap: &Capture, all: &[LaunchInfo<'_>], infos: &[LaunchInfo<'_>]) -> String {
    let first = all.iter().filter_map(|i| i.gpu.map(|g| g.begin_ns)).min();
    let steps = step_launches(&cap.steps, infos);
    let mut header = [
        "launch",
        "kernel",
        "site/epoch",
        "start",
        "duration",
        "warps",
    ]
    .map(String::from)
    .to_vec();
    if !cap.steps.is_empty() {
        header.push("steps".into());
    }
    let mut rows = vec![header];
    for i in infos {
        let start = match (i.gpu, first) {
            (Some(g), Some(f)) => format!("+{}", dur_ns((g.begin_ns - f) as f64)),
            _ => "-".into(),
        };
        let warps = if i.flushed < i.warps {
            format!("{} ({} unflushed)", i.warps, i.warps - i.flushed)
        } else {
            i.warps.to_string()
        };
        let mut row = vec![
            i.launch.to_string(),
            name(i.kernel).to_string(),
            i.origin
                .map_or("-".into(), |o| format!("{}/{}", o.site, o.epoch)),
            start,
            i.duration_ns().map_or("-".into(), |d| dur_ns(d as f64)),
            warps,
        ];
        if !cap.steps.is_empty() {
            let of: Vec<String> = steps
                .iter()
                .filter(|s| s.launches.contains(&i.launch))
                .map(|s| s.step.index.to_string())
                .collect();
            row.push(if of.is_empty() {
                "-".into()
            } else {
                of.join(",")
            });
        }
        rows.push(row);
    }
    table_text(&rows, "  ")
}

#[cfg(test)]
mod tests;
