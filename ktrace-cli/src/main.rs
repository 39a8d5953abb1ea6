//! `ktrace`: reads capture files (`.ktrace`) written by ktrace-runtime.
//!
//! - `ktrace export CAPTURE [-o OUT.json]`: Chrome trace JSON (open it in
//!   ui.perfetto.dev) and the summary beside it; `--time`, `--blocks`,
//!   `--sms`, `--warps` and `--regions` keep part of it.
//! - `ktrace summary CAPTURE`: a table of region statistics.
//! - `ktrace diff A B`: region statistics of two captures side by side.

mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ktrace_runtime::export::summarize_launch;
use ktrace_runtime::output::launch_trace_path;
use ktrace_runtime::summary::RegionStats;
use ktrace_runtime::{
    export_launch_with_progress, ring_fill, Breakdown, Capture, ChromeOptions, ExportOptions,
    FilterError, LaunchCapture, Summary, SummaryOptions, SummaryScope, TraceFilter,
};
use progress::ProgressLine;

#[derive(Parser, Debug)]
#[command(
    name = "ktrace",
    version,
    about = "Export, summarise and compare ktrace captures"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write the Chrome trace JSON and the summary of a capture.
    ///
    /// --time, --blocks, --sms, --warps and --regions keep part of each
    /// launch in the trace: the warps in all the lists given, and of those
    /// the spans and marks in the window and of the regions named. A span
    /// that overlaps the window is kept whole, even where it starts before
    /// the window or ends after it. The summary covers the whole launch
    /// unless --filter-summary is given; otherData.filter in the trace
    /// records the filter.
    ///
    /// A progress line appears on stderr when an export runs for more than
    /// a second and stderr is a terminal.
    #[command(verbatim_doc_comment)]
    Export {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// The trace file; the summary goes beside it (NAME_summary.json).
        /// Default: the capture's name with .json. Launches after the first
        /// go to NAME_launchN.json unless --launch picks one.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// One process per SM instead of one per block.
        #[arg(long)]
        by_sm: bool,
        /// Raw begin/end events instead of complete events.
        #[arg(long)]
        raw_events: bool,
        /// Export only this launch.
        #[arg(long)]
        launch: Option<u32>,
        /// Add per-block or per-warp totals to the summary.
        #[arg(long, value_enum, default_value_t = BreakdownArg::None)]
        breakdown: BreakdownArg,
        /// Keep only this time window, in microseconds from the launch's
        /// first event; either side may be left out: 10..250.5, 10..,
        /// ..250.5. Both edges count as inside.
        #[arg(long, value_name = "START..END", allow_hyphen_values = true)]
        time: Option<String>,
        /// Keep only these blocks (linear index): comma-separated numbers
        /// and inclusive ranges, a range with no end reaching the last
        /// block: 0-3,7,12-.
        #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
        blocks: Option<String>,
        /// Keep only the warps that ran on these SMs (LIST as for --blocks).
        #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
        sms: Option<String>,
        /// Keep only these warps of each block (LIST as for --blocks).
        #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
        warps: Option<String>,
        /// Keep only these regions: names from the capture's region table,
        /// comma-separated; * matches any run of characters (wait*).
        #[arg(long, value_name = "NAME[,NAME...]", allow_hyphen_values = true)]
        regions: Option<String>,
        /// Summarise only what the filters keep (default: the summary
        /// covers the whole launch).
        #[arg(long)]
        filter_summary: bool,
    },
    /// Print region statistics of a capture.
    Summary {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// Only this launch (default: every launch).
        #[arg(long)]
        launch: Option<u32>,
    },
    /// Compare region statistics of two captures (before, after).
    Diff {
        /// The capture before.
        a: PathBuf,
        /// The capture after.
        b: PathBuf,
        /// The launch to compare in both (default 0).
        #[arg(long, default_value_t = 0)]
        launch: u32,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BreakdownArg {
    None,
    Block,
    Warp,
}

/// What can stop a command.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// Reading, decoding or writing failed.
    #[error(transparent)]
    Runtime(#[from] ktrace_runtime::Error),
    /// The capture file holds no launch to read.
    #[error("{path}: the capture holds no launch")]
    NoLaunch {
        /// The capture file.
        path: PathBuf,
    },
    /// A filter option that cannot be parsed.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// Exporting one launch failed.
    #[error("launch {launch}: {error}")]
    Launch {
        /// The launch.
        launch: u32,
        /// Why.
        error: ktrace_runtime::Error,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ktrace: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read(path: &Path) -> Result<Capture, CliError> {
    let cap = Capture::read(path)?;
    if cap.launches.is_empty() {
        return Err(CliError::NoLaunch {
            path: path.to_path_buf(),
        });
    }
    Ok(cap)
}

fn pick(cap: &Capture, launch: Option<u32>) -> Result<Vec<&LaunchCapture>, CliError> {
    match launch {
        Some(n) => Ok(vec![cap.launch(n)?]),
        None => Ok(cap.launches.iter().collect()),
    }
}

fn run(cmd: Command) -> Result<(), CliError> {
    match cmd {
        Command::Export {
            capture,
            output,
            by_sm,
            raw_events,
            launch,
            breakdown,
            time,
            blocks,
            sms,
            warps,
            regions,
            filter_summary,
        } => {
            let filter = FilterArgs {
                time,
                blocks,
                sms,
                warps,
                regions,
                filter_summary,
            }
            .parse()?;
            let cap = read(&capture)?;
            let base = output.unwrap_or_else(|| capture.with_extension("json"));
            let opts = ExportOptions {
                chrome: ChromeOptions { by_sm, raw_events },
                summary: SummaryOptions {
                    breakdown: match breakdown {
                        BreakdownArg::None => Breakdown::None,
                        BreakdownArg::Block => Breakdown::PerBlock,
                        BreakdownArg::Warp => Breakdown::PerWarp,
                    },
                    ..SummaryOptions::default()
                },
                filter,
                ..ExportOptions::default()
            };
            for l in pick(&cap, launch)? {
                let path = if launch.is_some() {
                    base.clone()
                } else {
                    launch_trace_path(&base, l.shape.launch)
                };
                let mut bar = ProgressLine::stderr(format!("launch {}:", l.shape.launch));
                let r = export_launch_with_progress(
                    l,
                    &cap.device,
                    &cap.regions,
                    &path,
                    &opts,
                    &mut |p| bar.update(p),
                );
                bar.finish();
                let r = r.map_err(|error| CliError::Launch {
                    launch: l.shape.launch,
                    error,
                })?;
                let warn = match r.diagnostics.len() {
                    0 => String::new(),
                    n => format!(", {n} warnings (see otherData.diagnostics)"),
                };
                let warps = if opts.filter.is_some() {
                    format!("{} of {}", r.warps_written, r.warps)
                } else {
                    r.warps.to_string()
                };
                println!(
                    "launch {}: {} events from {warps} warps -> {} and {}{warn}",
                    l.shape.launch,
                    r.events,
                    r.trace_path.display(),
                    r.summary_path.display()
                );
            }
            Ok(())
        }
        Command::Summary { capture, launch } => {
            let cap = read(&capture)?;
            for l in pick(&cap, launch)? {
                let (s, d) =
                    summarize_launch(l, &cap.device, &cap.regions, &ExportOptions::default())?;
                print_summary(&cap, l, &s);
                for (kind, n) in d.counts() {
                    println!("  warning: {n} x {kind}");
                }
                for m in d.items().iter().take(5) {
                    println!("    {m}");
                }
                println!();
            }
            Ok(())
        }
        Command::Diff { a, b, launch } => {
            let (ca, cb) = (read(&a)?, read(&b)?);
            let sa = summary_of(&ca, launch)?;
            let sb = summary_of(&cb, launch)?;
            print_diff(&a, &b, &sa, &sb);
            Ok(())
        }
    }
}

/// The filter options of `ktrace export`, as given.
struct FilterArgs {
    time: Option<String>,
    blocks: Option<String>,
    sms: Option<String>,
    warps: Option<String>,
    regions: Option<String>,
    filter_summary: bool,
}

impl FilterArgs {
    /// The filter, or `None` when no option asks for one.
    fn parse(self) -> Result<Option<TraceFilter>, FilterError> {
        let mut f = TraceFilter::default();
        if let Some(t) = &self.time {
            f.set_time(t)?;
        }
        if let Some(b) = &self.blocks {
            f.set_blocks(b)?;
        }
        if let Some(s) = &self.sms {
            f.set_sms(s)?;
        }
        if let Some(w) = &self.warps {
            f.set_warps(w)?;
        }
        if let Some(r) = &self.regions {
            f.set_regions(r)?;
        }
        if self.filter_summary {
            f.summary = SummaryScope::Kept;
        }
        Ok((!f.keeps_all()).then_some(f))
    }
}

fn summary_of(cap: &Capture, launch: u32) -> Result<Summary, CliError> {
    let l = cap.launch(launch)?;
    let (s, _) = summarize_launch(l, &cap.device, &cap.regions, &ExportOptions::default())?;
    Ok(s)
}

/// A duration given in µs, with a unit that suits it.
fn dur(us: f64) -> String {
    let a = us.abs();
    if a < 1.0 {
        format!("{:.1} ns", us * 1e3)
    } else if a < 1e3 {
        format!("{us:.3} us")
    } else if a < 1e6 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{:.3} s", us / 1e6)
    }
}

fn table(rows: &[Vec<String>]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 {
                    format!("{s:<w$}", w = width[c])
                } else {
                    format!("{s:>w$}", w = width[c])
                }
            })
            .collect();
        println!("  {}", line.join("  ").trim_end());
    }
}

fn print_summary(cap: &Capture, l: &LaunchCapture, s: &Summary) {
    let sh = &l.shape;
    let kernel_time = s.kernel_time.map_or("no events".into(), |us| {
        format!("{} (first to last event)", dur(us))
    });
    println!(
        "launch {}: grid {:?}, block {:?}, {} of {} blocks x {} warps traced, cap {}, device {}; \
         kernel time {kernel_time}",
        sh.launch,
        sh.grid,
        sh.block,
        sh.blocks_traced,
        sh.total_blocks(),
        sh.warps_traced(),
        sh.cap(),
        if cap.device.name.is_empty() {
            "?"
        } else {
            &cap.device.name
        }
    );
    println!("{}", s.clock.text);
    if let Ok(fill) = ring_fill(&l.raw, &l.shape) {
        println!("{fill}");
    }
    let mut rows = vec![vec![
        "region".to_string(),
        "count".into(),
        "mean".into(),
        "p50".into(),
        "p99".into(),
        "max".into(),
    ]];
    for r in &s.regions {
        rows.push(vec![
            r.name.clone(),
            r.count.to_string(),
            dur(r.mean_dur),
            dur(r.percentiles.p50),
            dur(r.percentiles.p99),
            dur(r.max_dur),
        ]);
    }
    if s.regions.is_empty() {
        println!("  no complete regions");
    } else {
        table(&rows);
    }
}

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
        let (ra, rb) = (find(sa, n), find(sb, n));
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
        rows.push(vec![
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
        ]);
    }
    table(&rows);
}
