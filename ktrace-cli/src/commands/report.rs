//! `ktrace report`: one self-contained HTML page of a launch.

use ktrace_runtime::export::report::{write_report, ReportOptions};

use super::read_picked;
use crate::cli::ReportArgs;
use crate::error::CliError;

/// `ktrace report`.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    let wait = args.wait.patterns()?;
    let capture = &args.capture;
    let cap = read_picked(capture, args.launch, &Default::default())?;
    let l = match args.launch {
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
    let path = args
        .output
        .unwrap_or_else(|| capture.with_extension("html"));
    let mut opts = ReportOptions::default();
    opts.analysis.wait = wait;
    opts.stalls = cap.stalls.clone();
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
