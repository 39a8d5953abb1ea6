//! `ktrace export`: the trace (Chrome JSON or Perfetto) and the summary of
//! each launch of a capture.

use std::path::Path;

use ktrace_runtime::export::perfetto::{HostClocks, PerfettoOptions};
use ktrace_runtime::export::plan::{plan, ChromeNames, TraceFormat};
use ktrace_runtime::export::summary::SummaryOptions;
use ktrace_runtime::export::{is_perfetto_path, ExportOptions, ExportReport, TimelineLaunch};
use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::timeline::HostAxis;

use super::read_picked_on;
use crate::cli::{ExportArgs, FormatArg};
use crate::error::CliError;
use crate::progress::ProgressLine;

/// `ktrace export`.
pub fn run(args: ExportArgs) -> Result<(), CliError> {
    let filter = args.filter.filter();
    let format = trace_format(args.output.as_deref(), args.format)?;
    if format == FormatArg::Perfetto && args.chrome.any() {
        return Err(CliError::Usage(
            "--by-sm and --raw-events shape the Chrome trace; the Perfetto trace always \
             nests device, launch, SM, block and warp tracks and writes spans and marks"
                .into(),
        ));
    }
    if format == FormatArg::Chrome && args.args {
        return Err(CliError::Usage(
            "--args is for the Perfetto format (the Chrome trace always has them)".into(),
        ));
    }
    let threads = args.threads.threads()?;
    let cap = read_picked_on(
        &args.capture,
        args.launch,
        &args.select.selection(),
        threads,
    )?;
    let opts = ExportOptions {
        chrome: args.chrome.options(),
        summary: SummaryOptions {
            breakdown: args.breakdown.into(),
            ..SummaryOptions::default()
        },
        filter,
        threads,
        ..ExportOptions::default()
    };
    let dest = Destination {
        capture: &args.capture,
        output: args.output.as_deref(),
        launch: args.launch,
        format,
        perfetto_args: args.args,
    };
    let reports = write_traces(&cap, &dest, &opts)?;
    for r in &reports {
        print_export(r, format, opts.filter.is_some());
    }
    Ok(())
}

/// Where `ktrace export` writes, as asked.
struct Destination<'a> {
    /// The capture file, whose name the default output takes.
    capture: &'a Path,
    /// `-o`.
    output: Option<&'a Path>,
    /// `--launch`.
    launch: Option<u32>,
    /// The trace format.
    format: FormatArg,
    /// `--args`.
    perfetto_args: bool,
}

/// Writes the traces of the launches of `cap` (those picked): which
/// launches go to which file on which time axis.
///
/// Perfetto: the launches picked go into the one file, on the host's
/// CLOCK_REALTIME when the capture holds clock syncs. Chrome: one file per
/// launch, on its own clock; a launch after the first goes to
/// `NAME_launchN.json` unless `--launch` picked it.
fn write_traces(
    cap: &Capture,
    dest: &Destination<'_>,
    opts: &ExportOptions,
) -> Result<Vec<ExportReport>, CliError> {
    let perfetto = dest.format == FormatArg::Perfetto;
    let (ext, axis) = if perfetto {
        ("pftrace", HostAxis::new(&cap.clock_syncs)?)
    } else {
        ("json", None)
    };
    let output = dest
        .output
        .map_or_else(|| dest.capture.with_extension(ext), Path::to_path_buf);
    let launches: Vec<TimelineLaunch> =
        TimelineLaunch::of_capture(cap, &cap.launches, axis.as_ref()).collect();
    let format = if perfetto {
        TraceFormat::Perfetto(PerfettoOptions {
            host_clocks: axis
                .as_ref()
                .and_then(|_| HostClocks::from_syncs(&cap.clock_syncs)),
            args: dest.perfetto_args,
        })
    } else {
        TraceFormat::Chrome
    };
    let names = if dest.launch.is_some() {
        ChromeNames::Exact
    } else {
        ChromeNames::ByLaunch
    };
    let mut reports = Vec::new();
    for file in plan(launches, &output, format, names)? {
        let label = match file.format {
            TraceFormat::Perfetto(_) => "export:".to_string(),
            TraceFormat::Chrome => format!("launch {}:", file.launches[0].launch.shape.launch),
        };
        let mut bar = ProgressLine::stderr(label);
        let r = file.write(opts, &mut |p| bar.update(p));
        bar.finish();
        reports.extend(match (r, file.format) {
            (Ok(r), _) => r,
            (Err(error), TraceFormat::Chrome) => {
                return Err(CliError::Launch {
                    launch: file.launches[0].launch.shape.launch,
                    error,
                })
            }
            (Err(error), TraceFormat::Perfetto(_)) => return Err(error.into()),
        });
    }
    Ok(reports)
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
