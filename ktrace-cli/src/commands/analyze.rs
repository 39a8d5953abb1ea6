//! `ktrace analyze`: warp roles and their wait share, imbalance across
//! blocks and the tail, warps inside each region over time; as text or as
//! the JSON of `docs/analysis.md`.

use ktrace_runtime::analysis::{analyze_launch, Analysis, AnalysisOptions};

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
    let cap = read_picked(capture, args.launch, &Default::default())?;
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
    match args.output {
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
