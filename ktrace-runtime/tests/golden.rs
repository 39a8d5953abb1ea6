//! Golden Chrome trace and summary files for the synthetic sample capture.
//! Refresh with `KTRACE_BLESS=1 cargo test -p ktrace-runtime --test golden`.

use std::path::{Path, PathBuf};

use ktrace_runtime::synth::sample_capture;
use ktrace_runtime::{
    export::chrome::ChromeOptions, export::summary::Breakdown, export::summary::SummaryOptions,
    export_launch, ExportOptions,
};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ktrace-golden-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn check(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    #[allow(clippy::disallowed_methods)] // the test's own switch, not the crate's
    if std::env::var_os("KTRACE_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with KTRACE_BLESS=1 to create it",
            path.display()
        )
    });
    if want != actual {
        let line = want
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             (KTRACE_BLESS=1 refreshes it if the change is intended)",
            path.display(),
            line + 1,
            want.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

/// The summary names the trace by the path it was written to; golden files
/// name it by file name only.
fn normalise_summary(path: &Path, trace: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let full = serde_json::to_string(&trace.display().to_string()).unwrap();
    let short = serde_json::to_string(&trace.file_name().unwrap().to_string_lossy()).unwrap();
    assert!(text.contains(&full));
    text.replace(&full, &short)
}

fn export(name: &str, opts: ExportOptions) -> (String, String) {
    let cap = sample_capture();
    let dir = scratch(name);
    let trace = dir.join(name);
    let r = export_launch(&cap.launches[0], &cap.device, &cap.regions, &trace, &opts).unwrap();
    let t = std::fs::read_to_string(&r.trace_path).unwrap();
    let s = normalise_summary(&r.summary_path, &r.trace_path);
    let _ = std::fs::remove_dir_all(&dir);
    (t, s)
}

#[test]
fn default_layout() {
    let (t, s) = export("trace.json", ExportOptions::default());
    check("trace.json", &t);
    check("trace_summary.json", &s);
}

#[test]
fn by_sm_with_raw_events_and_breakdown() {
    let opts = ExportOptions {
        chrome: ChromeOptions {
            by_sm: true,
            raw_events: true,
        },
        summary: SummaryOptions {
            hist_bins: 8,
            breakdown: Breakdown::PerWarp,
        },
        ..ExportOptions::default()
    };
    let (t, s) = export("by_sm_raw.json", opts);
    check("by_sm_raw.json", &t);
    check("by_sm_raw_summary.json", &s);
}

#[test]
fn trace_is_valid_chrome_json() {
    let (t, s) = export("valid.json", ExportOptions::default());
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(v["displayTimeUnit"], "ns");
    let events = v["traceEvents"].as_array().unwrap();
    let mut first_ts = f64::MAX;
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        assert!(["M", "X", "i"].contains(&ph), "{e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64());
        if ph == "X" {
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
        }
        if ph == "i" {
            assert_eq!(e["s"], "t");
        }
        if ph != "M" {
            first_ts = first_ts.min(e["ts"].as_f64().unwrap());
            let a = &e["args"];
            assert!(a["sm"].is_u64() && a["block"].is_u64() && a["warp"].is_u64());
            assert!(e["cname"].is_string());
        }
    }
    assert_eq!(first_ts, 0.0, "times start at the first event");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "SM 004 Block 0000",
            "SM 009 Block 0001",
            "SM 002 Block 0002"
        ]
    );
    let other = &v["otherData"];
    assert_eq!(other["grid"], serde_json::json!([3, 1, 1]));
    assert_eq!(other["device"], "Synthetic GPU");
    assert!(other["diagnostics"]["count"].as_u64().unwrap() >= 3);

    let s: serde_json::Value = serde_json::from_str(&s).unwrap();
    for key in [
        "trace",
        "displayTimeUnit",
        "scale",
        "blocks",
        "warps_per_block",
        "per_warp_cap",
        "regions",
        "diagnostics",
    ] {
        assert!(s.get(key).is_some(), "summary lacks {key}");
    }
    let r = &s["regions"][0];
    for key in [
        "region",
        "name",
        "count",
        "mean_dur",
        "cv_dur",
        "min_dur",
        "max_dur",
        "var_dur_pop",
        "var_dur_sample",
        "percentiles",
        "hist",
    ] {
        assert!(r.get(key).is_some(), "region stats lack {key}");
    }
    for p in ["p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"] {
        assert!(r["percentiles"][p].is_f64());
    }
    for h in ["bins", "min", "max", "prob"] {
        assert!(r["hist"].get(h).is_some());
    }
    // "load": spans of 300, 260 and 200 cycles at 2 GHz (the never-flushed
    // warp's span is recovered), plus an unmatched begin.
    assert_eq!(r["name"], "load");
    assert_eq!(r["count"], 3);
    assert_eq!(r["min_dur"], 0.1);
    assert_eq!(r["max_dur"], 0.15);
}
