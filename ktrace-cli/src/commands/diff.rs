//! `ktrace diff`: region statistics of two captures side by side, and the
//! time per warp of each warp role.

use std::path::Path;

use ktrace_runtime::analysis::{analyze_launch, compare_roles, AnalysisOptions};
use ktrace_runtime::export::summary::{RegionStats, Summary};
use ktrace_runtime::export::{summarize_launch, ExportOptions};
use ktrace_runtime::format::capture::Capture;

use super::read_picked;
use crate::analysis_text::role_diff_text;
use crate::cli::DiffArgs;
use crate::error::CliError;
use crate::table::{dur, print_table};

/// `ktrace diff`.
pub fn run(args: DiffArgs) -> Result<(), CliError> {
    let (a, b, launch) = (&args.a, &args.b, args.launch);
    let opts = AnalysisOptions {
        wait: args.wait.patterns()?,
        ..AnalysisOptions::default()
    };
    let only = Default::default();
    let (ca, cb) = (
        read_picked(a, Some(launch), &only)?,
        read_picked(b, Some(launch), &only)?,
    );
    let sa = summary_of(&ca, launch)?;
    let sb = summary_of(&cb, launch)?;
    print_diff(a, b, &sa, &sb);
    let aa = analyze_launch(ca.launch(launch)?, &ca.device, &ca.regions, &opts)?;
    let ab = analyze_launch(cb.launch(launch)?, &cb.device, &cb.regions, &opts)?;
    println!();
    print!("{}", role_diff_text(&compare_roles(&aa, &ab), &opts.wait));
    Ok(())
}

/// The summary of launch `launch` of `cap`.
fn summary_of(cap: &Capture, launch: u32) -> Result<Summary, CliError> {
    let l = cap.launch(launch)?;
    let (s, _) = summarize_launch(l, &cap.device, &cap.regions, &ExportOptions::default())?;
    Ok(s)
}

/// The change from `a` to `b`, in percent of `a`.
fn change(a: f64, b: f64) -> String {
    if a == 0.0 {
        if b == 0.0 {
            "0.0%".into()
        } else {
            "new".into()
        }
    } else {
        format!("{:+.1}%", (b - a) / a * 100.0)
    }
}

/// The regions of both summaries, a row each: count, mean, p50 and p99 in
/// A and B and their change.
fn print_diff(a: &Path, b: &Path, sa: &Summary, sb: &Summary) {
    println!("A: {}", a.display());
    println!("B: {}", b.display());
    let mut names: Vec<&str> = sa.regions.iter().map(|r| r.name.as_str()).collect();
    for r in &sb.regions {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    let find = |s: &'_ Summary, n: &str| -> Option<RegionStats> {
        s.regions.iter().find(|r| r.name == n).cloned()
    };
    let mut rows = vec![vec![
        "region".to_string(),
        "count A".into(),
        "count B".into(),
        "mean A".into(),
        "mean B".into(),
        "change".into(),
        "p50 A".into(),
        "p50 B".into(),
        "change".into(),
        "p99 A".into(),
        "p99 B".into(),
        "change".into(),
    ]];
    for n in names {
        rows.push(diff_row(n, find(sa, n), find(sb, n)));
    }
    print_table(&rows);
}

/// The row of region `n`, from its statistics in A and in B.
fn diff_row(n: &str, ra: Option<RegionStats>, rb: Option<RegionStats>) -> Vec<String> {
    let get = |r: &Option<RegionStats>, f: fn(&RegionStats) -> f64| r.as_ref().map(f);
    let cell = |v: Option<f64>| v.map_or("-".to_string(), dur);
    let delta = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => change(x, y),
        (None, Some(_)) => "new".into(),
        (Some(_), None) => "gone".into(),
        (None, None) => "-".into(),
    };
    let mean = |r: &RegionStats| r.mean_dur;
    let p50 = |r: &RegionStats| r.percentiles.p50;
    let p99 = |r: &RegionStats| r.percentiles.p99;
    vec![
        n.to_string(),
        ra.as_ref().map_or("-".into(), |r| r.count.to_string()),
        rb.as_ref().map_or("-".into(), |r| r.count.to_string()),
        cell(get(&ra, mean)),
        cell(get(&rb, mean)),
        delta(get(&ra, mean), get(&rb, mean)),
        cell(get(&ra, p50)),
        cell(get(&rb, p50)),
        delta(get(&ra, p50), get(&rb, p50)),
        cell(get(&ra, p99)),
        cell(get(&rb, p99)),
        delta(get(&ra, p99), get(&rb, p99)),
    ]
}
