//! `ktrace`: reads capture files (`.ktrace`) written by ktrace-runtime.
//!
//! - `ktrace export CAPTURE [-o OUT.json]`: Chrome trace JSON (open it in
//!   ui.perfetto.dev) and the summary beside it; `-o OUT.pftrace` (or
//!   `--format perfetto`): Perfetto's own format, every launch in one file;
//!   `--time`, `--blocks`, `--sms`, `--warps` and `--regions` keep part of
//!   it.
//! - `ktrace merge A.ktrace B.ktrace ... -o all.pftrace`: the launches of
//!   several captures (processes, GPUs) on one timeline.
//! - `ktrace report CAPTURE -o report.html`: one self-contained HTML page
//!   per launch: header, timeline, histograms, heatmaps, analysis.
//! - `ktrace summary CAPTURE`: a table of region statistics.
//! - `ktrace analyze CAPTURE`: warp roles and their wait share, imbalance
//!   across blocks and the tail, warps inside each region over time
//!   (`--json`: the analysis as documented in `docs/analysis.md`).
//! - `ktrace diff A B`: region statistics of two captures side by side, and
//!   the time per warp of each warp role.

mod analyze;
mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use analyze::{analysis_text, role_diff_text};
use clap::{Parser, Subcommand, ValueEnum};
use ktrace_runtime::analysis::{compare_roles, ActiveWindow, AnalysisError, WaitPatterns};
use ktrace_runtime::decode::Decoder;
use ktrace_runtime::export::{is_perfetto_path, summarize_launch};
use ktrace_runtime::output::launch_trace_path;
use ktrace_runtime::summary::{by_value, RegionStats};
use ktrace_runtime::timeline::{place, Axis, HostAxis};
use ktrace_runtime::write_report;
use ktrace_runtime::{
    analyze_launch, export_launch_with_progress, export_perfetto, ring_fill, Analysis,
    AnalysisOptions, Breakdown, Capture, ChromeOptions, ExportOptions, ExportReport, FilterError,
    HostClocks, LaunchCapture, PerfettoOptions, ReportOptions, Summary, SummaryOptions,
    SummaryScope, TimelineLaunch, TraceFilter,
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
    /// Write the trace (Chrome JSON or Perfetto) and the summary of a capture.
    ///
    /// --time, --blocks, --sms, --warps and --regions keep part of each
    /// launch in the trace: the warps in all the lists given, and of those
    /// the spans and marks in the window and of the regions named. A span
    /// that overlaps the window is kept whole, even where it starts before
    /// the window or ends after it. The summary covers the whole launch
    /// unless --filter-summary is given; otherData.filter in the trace
    /// records the filter.
    ///
    /// A Perfetto trace puts the launches on the host's CLOCK_REALTIME
    /// when the capture holds clock syncs (captures of format 2 from a
    /// TraceSession), with each launch's host enqueue-to-completion span.
    ///
    /// A progress line appears on stderr when an export runs for more than
    /// a second and stderr is a terminal.
    #[command(verbatim_doc_comment)]
    Export {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// The trace file; the summary goes beside it (NAME_summary.json).
        /// Default: the capture's name with .json (.pftrace for --format
        /// perfetto). A name ending in .pftrace or .perfetto-trace asks for
        /// the Perfetto format. Chrome: launches after the first go to
        /// NAME_launchN.json unless --launch picks one. Perfetto: every
        /// launch goes into the one file, with NAME_launchN_summary.json.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The trace format: chrome (JSON) or perfetto (.pftrace). Default:
        /// from the output's name, else chrome.
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// Chrome: one process per SM instead of one per block.
        #[arg(long)]
        by_sm: bool,
        /// Chrome: raw begin/end events instead of complete events.
        #[arg(long)]
        raw_events: bool,
        /// Perfetto: sm, block, warp and region as arguments of every slice
        /// and instant (a larger file; the tracks already say them).
        #[arg(long)]
        args: bool,
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
    /// Put the launches of several captures (other processes, other GPUs)
    /// on one timeline, in one Perfetto trace.
    ///
    /// Each capture's %globaltimer is placed on the host's CLOCK_REALTIME
    /// through its clock syncs (interpolated between them), so events of
    /// different GPUs line up; each launch is a group under its GPU with
    /// its kernel name and its host enqueue-to-completion span. Captures
    /// without clock syncs can be merged only when all come from one GPU
    /// (same UUID): then the raw %globaltimer is the axis.
    #[command(verbatim_doc_comment)]
    Merge {
        /// The capture files (.ktrace).
        #[arg(required = true, num_args = 1..)]
        captures: Vec<PathBuf>,
        /// The Perfetto trace to write (.pftrace); a summary per launch goes
        /// beside it (NAME_partK_summary.json, K counting the launches of the
        /// file from 0).
        #[arg(short, long)]
        output: PathBuf,
        /// sm, block, warp and region as arguments of every slice and
        /// instant.
        #[arg(long)]
        args: bool,
    },
    /// Write one self-contained HTML report of a launch: the launch header,
    /// a timeline of every traced warp (zoom with the wheel, pan by
    /// dragging, hover for a span), per-region histograms, percentiles and
    /// heatmaps, the analysis (as `ktrace analyze`: warp roles and wait
    /// share, slowest blocks and the tail, warps inside each region over
    /// time) and the diagnostics. It needs no network: open it in any
    /// browser.
    Report {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// The HTML file to write. Default: the capture's name with .html.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The launch to report. Default: the only launch of the capture
        /// (a capture of several launches needs --launch).
        #[arg(long)]
        launch: Option<u32>,
        /// Regions in which warps wait, for the analysis: a name or a glob
        /// (* matches any run of characters); repeat for more. Default:
        /// wait*.
        #[arg(long, value_name = "GLOB")]
        wait: Vec<String>,
    },
    /// Print region statistics of a capture.
    Summary {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// Only this launch (default: every launch).
        #[arg(long)]
        launch: Option<u32>,
        /// Instead, the durations of this region's spans grouped by the
        /// value recorded with them (KTRACE_B_V / KTRACE_E_V: the begin's
        /// value, else the end's), and its marks (KTRACE_M_V) counted by
        /// value.
        #[arg(long, value_name = "REGION", alias = "by-payload")]
        by_value: Option<String>,
    },
    /// Compare region statistics of two captures (before, after), and the
    /// time per warp of each warp role.
    Diff {
        /// The capture before.
        a: PathBuf,
        /// The capture after.
        b: PathBuf,
        /// The launch to compare in both (default 0).
        #[arg(long, default_value_t = 0)]
        launch: u32,
        /// Regions in which warps wait, for the roles' wait share: a name
        /// or a glob (* matches any run of characters); repeat for more.
        /// Default: wait*.
        #[arg(long, value_name = "GLOB")]
        wait: Vec<String>,
    },
    /// Analyse a capture: warp roles and their wait share, imbalance across
    /// blocks and the tail, warps inside each region over time.
    ///
    /// Warps are grouped into roles by the set of regions they run (the
    /// producer and consumer warps of a warp-specialized kernel). A warp's
    /// active time runs from its first event to its last (--active
    /// open-to-flush: from its open to its flush); its wait share is the
    /// part of it spent in regions matching --wait. docs/analysis.md
    /// defines every figure and the JSON that --json writes.
    #[command(verbatim_doc_comment)]
    Analyze {
        /// The capture file (.ktrace).
        capture: PathBuf,
        /// Only this launch (default: every launch).
        #[arg(long)]
        launch: Option<u32>,
        /// Regions in which warps wait: a name or a glob (* matches any run
        /// of characters); repeat for more. Default: wait*.
        #[arg(long, value_name = "GLOB")]
        wait: Vec<String>,
        /// What counts as a warp's active time.
        #[arg(long, value_enum, default_value_t = ActiveArg::Events)]
        active: ActiveArg,
        /// Bins of the busy series.
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        bins: u32,
        /// The slowest blocks to list.
        #[arg(long, default_value_t = 5)]
        slow_blocks: usize,
        /// Write the analysis as JSON (schema ktrace.analysis/1): an object
        /// with the capture's name and one analysis per launch.
        #[arg(long)]
        json: bool,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ActiveArg {
    /// From a warp's first event to its last.
    Events,
    /// From a warp's open to its flush.
    OpenToFlush,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// Chrome trace event JSON.
    Chrome,
    /// Perfetto's protobuf trace (.pftrace).
    Perfetto,
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
    /// Options that do not go together.
    #[error("{0}")]
    Usage(String),
    /// Analysis options that cannot be used.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// Writing the output failed.
    #[error("{path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing to a closed pipe (`ktrace summary
    // ... | head`) would panic; a command-line tool should just stop, as
    // other Unix tools do.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default before any
    // other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
            format,
            by_sm,
            raw_events,
            args,
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
            let format = trace_format(output.as_deref(), format)?;
            if format == FormatArg::Perfetto && (by_sm || raw_events) {
                return Err(CliError::Usage(
                    "--by-sm and --raw-events shape the Chrome trace; the Perfetto trace always \
                     nests device, launch, SM, block and warp tracks and writes spans and marks"
                        .into(),
                ));
            }
            if format == FormatArg::Chrome && args {
                return Err(CliError::Usage(
                    "--args is for the Perfetto format (the Chrome trace always has them)".into(),
                ));
            }
            let cap = read(&capture)?;
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
            let reports = if format == FormatArg::Perfetto {
                let path = output.unwrap_or_else(|| capture.with_extension("pftrace"));
                let axis = HostAxis::new(&cap.clock_syncs)?;
                let launches: Vec<TimelineLaunch> = pick(&cap, launch)?
                    .into_iter()
                    .map(|l| TimelineLaunch {
                        launch: l,
                        device: &cap.device,
                        regions: &cap.regions,
                        host_axis: axis.as_ref(),
                    })
                    .collect();
                let perfetto = PerfettoOptions {
                    host_clocks: axis
                        .as_ref()
                        .and_then(|_| HostClocks::from_syncs(&cap.clock_syncs)),
                    args,
                };
                let mut bar = ProgressLine::stderr("export:".into());
                let r = export_perfetto(&launches, &path, &opts, &perfetto, &mut |p| bar.update(p));
                bar.finish();
                r?
            } else {
                let base = output.unwrap_or_else(|| capture.with_extension("json"));
                let mut reports = Vec::new();
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
                    reports.push(r.map_err(|error| CliError::Launch {
                        launch: l.shape.launch,
                        error,
                    })?);
                }
                reports
            };
            for r in &reports {
                print_export(r, format, opts.filter.is_some());
            }
            Ok(())
        }
        Command::Merge {
            captures,
            output,
            args,
        } => merge(&captures, &output, args),
        Command::Report {
            capture,
            output,
            launch,
            wait,
        } => report(&capture, output, launch, wait_patterns(wait)?),
        Command::Summary {
            capture,
            launch,
            by_value: Some(region),
        } => {
            let cap = read(&capture)?;
            let id = region_id(&cap, &region)?;
            for l in pick(&cap, launch)? {
                print_by_value(&cap, l, id, &region)?;
            }
            Ok(())
        }
        Command::Summary {
            capture,
            launch,
            by_value: None,
        } => {
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
        Command::Diff { a, b, launch, wait } => {
            let opts = AnalysisOptions {
                wait: wait_patterns(wait)?,
                ..AnalysisOptions::default()
            };
            let (ca, cb) = (read(&a)?, read(&b)?);
            let sa = summary_of(&ca, launch)?;
            let sb = summary_of(&cb, launch)?;
            print_diff(&a, &b, &sa, &sb);
            let aa = analyze_launch(ca.launch(launch)?, &ca.device, &ca.regions, &opts)?;
            let ab = analyze_launch(cb.launch(launch)?, &cb.device, &cb.regions, &opts)?;
            println!();
            print!("{}", role_diff_text(&compare_roles(&aa, &ab), &opts.wait));
            Ok(())
        }
        Command::Analyze {
            capture,
            launch,
            wait,
            active,
            bins,
            slow_blocks,
            json,
            output,
        } => {
            let opts = AnalysisOptions {
                wait: wait_patterns(wait)?,
                active: match active {
                    ActiveArg::Events => ActiveWindow::Events,
                    ActiveArg::OpenToFlush => ActiveWindow::OpenToFlush,
                },
                busy_bins: bins,
                slow_blocks,
                ..AnalysisOptions::default()
            };
            let cap = read(&capture)?;
            let mut analyses = Vec::new();
            for l in pick(&cap, launch)? {
                analyses.push(analyze_launch(l, &cap.device, &cap.regions, &opts).map_err(
                    |error| CliError::Launch {
                        launch: l.shape.launch,
                        error,
                    },
                )?);
            }
            let text = if json {
                let doc = CaptureAnalysis {
                    schema: ktrace_runtime::analysis::SCHEMA,
                    capture: capture.display().to_string(),
                    device: cap.device.label(),
                    launches: &analyses,
                };
                let mut t = serde_json::to_string_pretty(&doc)
                    .unwrap_or_else(|e| unreachable!("plain data serialises: {e}"));
                t.push('\n');
                t
            } else {
                analyses
                    .iter()
                    .map(analysis_text)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            match output {
                Some(path) => std::fs::write(&path, text).map_err(|error| CliError::Write {
                    path: path.clone(),
                    error,
                }),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
    }
}

/// What `ktrace analyze --json` writes.
#[derive(serde::Serialize)]
struct CaptureAnalysis<'a> {
    schema: &'static str,
    capture: String,
    device: String,
    launches: &'a [Analysis],
}

/// The `--wait` patterns, `wait*` when none is given.
fn wait_patterns(wait: Vec<String>) -> Result<WaitPatterns, CliError> {
    if wait.is_empty() {
        Ok(WaitPatterns::default())
    } else {
        Ok(WaitPatterns::new(wait)?)
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

/// The trace format asked for: `--format`, else the output's name. A name
/// that says one format and a `--format` that says the other is an error.
fn trace_format(output: Option<&Path>, format: Option<FormatArg>) -> Result<FormatArg, CliError> {
    let by_name = output.and_then(|p| {
        if is_perfetto_path(p) {
            Some(FormatArg::Perfetto)
        } else if p.extension().is_some_and(|e| e == "json") {
            Some(FormatArg::Chrome)
        } else {
            None
        }
    });
    match (format, by_name) {
        (Some(f), Some(n)) if f != n => Err(CliError::Usage(format!(
            "{} names a {} trace but --format {} was asked",
            output.map(|p| p.display().to_string()).unwrap_or_default(),
            if n == FormatArg::Perfetto {
                "Perfetto"
            } else {
                "Chrome JSON"
            },
            if f == FormatArg::Perfetto {
                "perfetto"
            } else {
                "chrome"
            },
        ))),
        (Some(f), _) | (None, Some(f)) => Ok(f),
        (None, None) => Ok(FormatArg::Chrome),
    }
}

/// One line per exported launch.
fn print_export(r: &ExportReport, format: FormatArg, filtered: bool) {
    let warn = match (r.diagnostics.len(), format) {
        (0, _) => String::new(),
        (n, FormatArg::Chrome) => format!(", {n} warnings (see otherData.diagnostics)"),
        (n, FormatArg::Perfetto) => format!(", {n} warnings (see the summary's diagnostics)"),
    };
    let warps = if filtered {
        format!("{} of {}", r.warps_written, r.warps)
    } else {
        r.warps.to_string()
    };
    println!(
        "launch {}: {} events from {warps} warps -> {} and {}{warn}",
        r.summary.launch,
        r.events,
        r.trace_path.display(),
        r.summary_path.display()
    );
}

/// `ktrace merge`.
fn merge(paths: &[PathBuf], output: &Path, args: bool) -> Result<(), CliError> {
    if !is_perfetto_path(output) {
        return Err(CliError::Usage(format!(
            "{}: merge writes a Perfetto trace; name it .pftrace or .perfetto-trace",
            output.display()
        )));
    }
    let caps = paths
        .iter()
        .map(|p| read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let named: Vec<(&str, &Capture)> = names.iter().map(String::as_str).zip(&caps).collect();
    let placement = place(&named)?;
    for ((name, cap), axis) in named.iter().zip(&placement.host_axes) {
        let clock = match axis {
            Some(a) => {
                let (first, last) = (a.points()[0], a.points()[a.points().len() - 1]);
                format!(
                    "{} clock syncs, %globaltimer ahead of the host's clock by {:.3} to {:.3} ms \
                     (each within {} ns)",
                    a.points().len(),
                    first.1 as f64 / 1e6,
                    last.1 as f64 / 1e6,
                    a.points().iter().map(|p| p.2).max().unwrap_or(0)
                )
            }
            None => "no clock syncs".into(),
        };
        println!(
            "{name}: {}, {} launch(es), {clock}",
            cap.device.label(),
            cap.launches.len()
        );
    }
    let launches = TimelineLaunch::placed(&caps, &placement);
    let perfetto = PerfettoOptions {
        host_clocks: (placement.axis == Axis::HostRealtime)
            .then(|| HostClocks::from_syncs(caps.iter().flat_map(|c| &c.clock_syncs)))
            .flatten(),
        args,
    };
    let mut bar = ProgressLine::stderr("merge:".into());
    let r = export_perfetto(
        &launches,
        output,
        &ExportOptions::default(),
        &perfetto,
        &mut |p| bar.update(p),
    );
    bar.finish();
    let reports = r?;
    let events: u64 = reports.iter().map(|r| r.events).sum();
    println!(
        "{} launches of {} captures, {events} events, on the {} axis -> {}",
        reports.len(),
        caps.len(),
        match placement.axis {
            Axis::HostRealtime => "host's CLOCK_REALTIME",
            Axis::GlobalTimer => "one GPU's %globaltimer",
        },
        output.display()
    );
    Ok(())
}

/// The id of the region named `name` in `cap`'s table.
fn region_id(cap: &Capture, name: &str) -> Result<u16, CliError> {
    cap.regions
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(id, _)| id)
        .ok_or_else(|| {
            let known: Vec<&str> = cap.regions.iter().map(|(_, n)| n).collect();
            CliError::Usage(format!(
                "no region \"{name}\" in the capture; its regions: {}",
                known.join(", ")
            ))
        })
}

/// `ktrace summary --by-value`: one row per value of the region in `l`.
fn print_by_value(
    cap: &Capture,
    l: &LaunchCapture,
    region: u16,
    name: &str,
) -> Result<(), CliError> {
    let opts = ExportOptions::default();
    let dec = Decoder::new(l.buffer()?, &opts.decode_for(&cap.device));
    let warps: Vec<_> = dec.warps().collect();
    let groups = by_value(&warps, region, name, 1);
    println!("launch {}: \"{name}\" by value", l.shape.launch);
    if groups.iter().all(|g| g.value.is_none()) {
        println!(
            "  no value was recorded with \"{name}\" (record one with KTRACE_B_V, KTRACE_E_V or KTRACE_M_V)"
        );
    }
    let mut rows = vec![["value", "spans", "mean", "p50", "p90", "max", "marks"]
        .map(String::from)
        .to_vec()];
    for g in &groups {
        let st = &g.spans;
        let d = |us: f64| if st.count == 0 { "-".into() } else { dur(us) };
        rows.push(vec![
            g.value.map_or("(none)".into(), |v| v.to_string()),
            st.count.to_string(),
            d(st.mean_dur),
            d(st.percentiles.p50),
            d(st.percentiles.p90),
            d(st.max_dur),
            g.marks.to_string(),
        ]);
    }
    table(&rows);
    println!();
    Ok(())
}

/// `ktrace report`.
fn report(
    capture: &Path,
    output: Option<PathBuf>,
    launch: Option<u32>,
    wait: WaitPatterns,
) -> Result<(), CliError> {
    let cap = read(capture)?;
    let l = match launch {
        Some(n) => cap.launch(n)?,
        None if cap.launches.len() == 1 => &cap.launches[0],
        None => {
            let numbers: Vec<String> = cap
                .launches
                .iter()
                .map(|l| l.shape.launch.to_string())
                .collect();
            return Err(CliError::Usage(format!(
                "{}: the capture holds {} launches ({}); pick one with --launch N",
                capture.display(),
                cap.launches.len(),
                numbers.join(", ")
            )));
        }
    };
    let path = output.unwrap_or_else(|| capture.with_extension("html"));
    let mut opts = ReportOptions::default();
    opts.analysis.wait = wait;
    let r = write_report(l, &cap.device, &cap.regions, &path, &opts).map_err(|error| {
        CliError::Launch {
            launch: l.shape.launch,
            error,
        }
    })?;
    let warn = match r.diagnostics {
        0 => String::new(),
        n => format!(", {n} warnings (listed in the report)"),
    };
    println!(
        "{}: {} spans of {} warps -> {} ({} KiB){warn}",
        l.title(),
        r.spans,
        r.warps,
        path.display(),
        r.bytes.div_ceil(1024)
    );
    Ok(())
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
    print!("{}", table_text(rows, "  "));
}

/// Rows as aligned columns, each line starting with `indent`: the first
/// column left-aligned, the others right-aligned.
fn table_text(rows: &[Vec<String>], indent: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
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
        out.push_str(indent);
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
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
    if let Ok(fill) = l.buffer().as_ref().map(ring_fill) {
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
