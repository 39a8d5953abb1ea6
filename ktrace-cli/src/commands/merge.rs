//! `ktrace merge`: the launches of several captures on one timeline, in
//! one Perfetto trace.

use std::path::Path;

use ktrace_runtime::export::perfetto::{HostClocks, PerfettoOptions};
use ktrace_runtime::export::plan::{plan, ChromeNames, TraceFormat};
use ktrace_runtime::export::{is_perfetto_path, ExportOptions, ExportReport, TimelineLaunch};
use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::timeline::{place, Axis, HostAxis, Placement};

use super::read;
use crate::cli::MergeArgs;
use crate::error::CliError;
use crate::progress::ProgressLine;

/// `ktrace merge`.
pub fn run(args: MergeArgs) -> Result<(), CliError> {
    let output = &args.output;
    if !is_perfetto_path(output) {
        return Err(CliError::Usage(format!(
            "{}: merge writes a Perfetto trace; name it .pftrace or .perfetto-trace",
            output.display()
        )));
    }
    let threads = args.threads.threads()?;
    let caps = args
        .captures
        .iter()
        .map(|p| read(p, threads))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = args
        .captures
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let named: Vec<(&str, &Capture)> = names.iter().map(String::as_str).zip(&caps).collect();
    let (axis, reports) = write_merged(&named, output, (args.args, threads), |placement| {
        for ((name, cap), axis) in named.iter().zip(&placement.host_axes) {
            println!(
                "{name}: {}, {} launch(es), {}",
                cap.device.label(),
                cap.launches.len(),
                clock_text(axis.as_ref())
            );
        }
    })?;
    let events: u64 = reports.iter().map(|r| r.events).sum();
    println!(
        "{} launches of {} captures, {events} events, on the {} axis -> {}",
        reports.len(),
        caps.len(),
        match axis {
            Axis::HostRealtime => "host's CLOCK_REALTIME",
            Axis::GlobalTimer => "one GPU's %globaltimer",
        },
        output.display()
    );
    Ok(())
}

/// Writes the merged trace: which launches go to which file on which time
/// axis. Every capture is placed on one axis ([`place`]: the host's
/// CLOCK_REALTIME through its clock syncs, else one GPU's %globaltimer),
/// `placed` is told how, and every launch of every capture goes into
/// `output` on that axis, with the host's clocks when the axis is the
/// host's. `(args, threads)`: `--args` and `--threads`.
fn write_merged(
    named: &[(&str, &Capture)],
    output: &Path,
    (args, threads): (bool, usize),
    placed: impl FnOnce(&Placement),
) -> Result<(Axis, Vec<ExportReport>), CliError> {
    let placement = place(named)?;
    placed(&placement);
    let caps = || named.iter().map(|(_, c)| *c);
    let launches = TimelineLaunch::placed(caps(), &placement);
    let perfetto = PerfettoOptions {
        host_clocks: (placement.axis == Axis::HostRealtime)
            .then(|| HostClocks::from_syncs(caps().flat_map(|c| &c.clock_syncs)))
            .flatten(),
        args,
    };
    let format = TraceFormat::Perfetto(perfetto);
    let mut reports = Vec::new();
    for file in plan(launches, output, format, ChromeNames::ByLaunch)? {
        let mut bar = ProgressLine::stderr("merge:".into());
        let opts = ExportOptions {
            threads,
            ..ExportOptions::default()
        };
        let r = file.write(&opts, &mut |p| bar.update(p));
        bar.finish();
        reports.extend(r?);
    }
    Ok((placement.axis, reports))
}

/// How a capture's clock was placed on the host's.
fn clock_text(axis: Option<&HostAxis>) -> String {
    match axis {
        Some(a) => {
            let (first, last) = (a.points()[0], a.points()[a.points().len() - 1]);
            let repairs = a.repairs().text();
            format!(
                "{} clock syncs, %globaltimer ahead of the host's clock by {:.3} to {:.3} ms \
                 (each within {} ns){}",
                a.points().len(),
                first.1 as f64 / 1e6,
                last.1 as f64 / 1e6,
                a.points().iter().map(|p| p.2).max().unwrap_or(0),
                if repairs.is_empty() {
                    String::new()
                } else {
                    format!("; {repairs}")
                }
            )
        }
        None => "no clock syncs".into(),
    }
}
