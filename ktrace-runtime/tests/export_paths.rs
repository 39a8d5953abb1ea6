//! The two ways a capture is read, `summarize_launch` (what `ktrace
//! summary` runs) and `export_launch` (what `ktrace export` runs, through
//! `write_trace`), report the same diagnostics, whatever the Chrome layout.

use std::path::PathBuf;

use ktrace_runtime::export::summarize_launch;
use ktrace_runtime::synth::unknown_regions_capture;
use ktrace_runtime::{
    diagnostics::Diagnostic, export::chrome::ChromeOptions, export::summary::Breakdown,
    export::summary::SummaryOptions, export_launch, Capture, ExportOptions,
};

fn option_sets() -> Vec<ExportOptions> {
    let raw_by_sm = ChromeOptions {
        by_sm: true,
        raw_events: true,
    };
    let per_warp = SummaryOptions {
        breakdown: Breakdown::PerWarp,
        ..SummaryOptions::default()
    };
    vec![
        ExportOptions::default(),
        ExportOptions {
            chrome: raw_by_sm,
            summary: per_warp,
            ..ExportOptions::default()
        },
    ]
}

/// Checks that both paths report the same diagnostics for every launch
/// of `cap` under `opts`, in the result and in the files.
fn assert_both_paths_agree(cap: &Capture, opts: &ExportOptions) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    for l in &cap.launches {
        let (summary, diagnostics) = summarize_launch(l, &cap.device, &cap.regions, opts).unwrap();
        let report = export_launch(l, &cap.device, &cap.regions, &path, opts).unwrap();
        assert_eq!(diagnostics, report.diagnostics, "launch {}", l.shape.launch);
        assert_eq!(summary.diagnostics, report.summary.diagnostics);
        let trace: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(trace["otherData"]["diagnostics"], summary.diagnostics);
    }
}

#[test]
fn unknown_region_ids_are_reported_alike_by_id() {
    let cap = unknown_regions_capture();
    for opts in option_sets() {
        assert_both_paths_agree(&cap, &opts);
    }
    // Every event's id counts, shown in the trace or not, and the ids
    // come last, by id (the Chrome writer meets them as 9, 7, 0xffff).
    let l = &cap.launches[0];
    let (_, diagnostics) =
        summarize_launch(l, &cap.device, &cap.regions, &ExportOptions::default()).unwrap();
    let items = diagnostics.items();
    let unknown: Vec<u16> = items
        .iter()
        .filter_map(|d| match d {
            Diagnostic::UnknownRegion { region } => Some(*region),
            _ => None,
        })
        .collect();
    assert_eq!(unknown, [7, 9, 300, 0xffff]);
    assert!(items[items.len() - unknown.len()..]
        .iter()
        .all(|d| matches!(d, Diagnostic::UnknownRegion { .. })));
}

#[test]
fn the_h200_fixture_is_reported_alike() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/h200_gemm2048.ktrace");
    if !path.exists() {
        eprintln!("skipped: {} is not here (a packaged crate)", path.display());
        return;
    }
    let cap = Capture::read(&path).unwrap();
    assert!(!cap.launches.is_empty());
    assert_both_paths_agree(&cap, &ExportOptions::default());
}
