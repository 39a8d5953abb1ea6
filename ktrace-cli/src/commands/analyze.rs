//! `ktrace analyze`: warp roles and their wait share, imbalance across
//! blocks and the tail, warps inside each region over time; as text or as
//! the JSON of `docs/analysis.md`.

use ktrace_runtime::analysis::stalls::StallTable;
use ktrace_runtime::analysis::{analyze_launch, Analysis, AnalysisOptions};
use ktrace_runtime::format::capture::Capture;

use super::read_picked;
use crate::analysis_text::analysis_text;
use crate::cli::AnalyzeArgs;
use crate::error::CliError;

/// What `ktrace analyze --json` writes.
#[derive(serde::Serialize)]
struct CaptureAnalysis<'a> {
    schema: &'static str,
    capture: String,
    device: String,
    launches: &'a [Analysis],
    /// The stall tables of the capture's PC samples (`ktrace stalls`),
    /// when it holds any.
    #[serde(skip_serializing_if = "<[StallTable]>::is_empty")]
    stalls: &'a [StallTable],
}

/// `ktrace analyze`.
pub fn run(args: AnalyzeArgs) -> Result<(), CliError> {
    let opts = AnalysisOptions {
        wait: args.wait.patterns()?,
        active: args.active.into(),
        busy_bins: args.bins,
        slow_blocks: args.slow_blocks,
        ..AnalysisOptions::default()
    };
    let capture = &args.capture;
    // A capture of PC samples alone (a run with tracing off) is analysed
    // for its stalls.
    let cap = match read_picked(capture, args.launch, &Default::default()) {
        Err(CliError::OnlyStalls { path, .. }) => {
            Capture::read(&path).map_err(|e| CliError::reading(&path, e))?
        }
        other => other?,
    };
    let stalls = super::stalls::tables(&cap, &[], None);
    let mut analyses = Vec::new();
    for l in &cap.launches {
        analyses.push(
            analyze_launch(l, &cap.device, &cap.regions, &opts).map_err(|error| {
                CliError::Launch {
                    launch: l.shape.launch,
                    error,
                }
            })?,
        );
    }
    let text = if args.json {
        let doc = CaptureAnalysis {
            schema: ktrace_runtime::analysis::SCHEMA,
            capture: capture.display().to_string(),
            device: cap.device.label(),
            launches: &analyses,
            stalls: &stalls,
        };
        let mut t = serde_json::to_string_pretty(&doc)
            .unwrap_or_else(|e| unreachable!("plain data serialises: {e}"));
        t.push('\n');
        t
    } else {
        analyses
            .iter()
            .map(analysis_text)
            .chain(stalls.iter().map(super::stalls::table_text))
            .collect::<Vec<_>>()
            .join("\n")
    };
    super::emit(text, args.output.as_deref())
}
