//! The `ktrace` binary on synthetic captures and on bad files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ktrace_runtime::synth::{sample_capture, sample_launch, unknown_regions_capture};
use ktrace_runtime::Capture;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("ktrace-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ktrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ktrace"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn assert_clean_failure(o: &Output, needle: &str) {
    let (out, err) = text(o);
    assert!(!o.status.success(), "should fail: {out}{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    // One line, prefixed once by the program, not by every error it wraps.
    assert_eq!(err.lines().count(), 1, "{err}");
    let message = err
        .strip_prefix("ktrace: ")
        .unwrap_or_else(|| panic!("{err}"));
    assert!(!message.starts_with("ktrace: "), "{err}");
}

#[test]
fn export_all_launches() {
    let d = Dir::new("export");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let o = ktrace(&["export", s(&cap)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("launch 0: 26 events from 5 warps -> "),
        "{out}"
    );
    assert!(lines[0].contains("run.json") && lines[0].contains("run_summary.json"));
    assert!(lines[0].contains("4 warnings"));
    assert!(lines[1].contains("run_launch1.json"));
    for f in [
        "run.json",
        "run_summary.json",
        "run_launch1.json",
        "run_launch1_summary.json",
    ] {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap();
        assert!(v.is_object(), "{f}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("run_summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["unit"], "us");
    assert_eq!(summary["scale"], 0.001);
    assert_eq!(summary["kernel_time"], 4.834);
}

#[test]
fn export_one_launch_with_options() {
    let d = Dir::new("export-opts");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let out = d.join("x/trace");
    let o = ktrace(&[
        "export",
        s(&cap),
        "-o",
        s(&out),
        "--by-sm",
        "--raw-events",
        "--launch",
        "1",
        "--breakdown",
        "warp",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.starts_with("launch 1: "), "{stdout}");
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(t["otherData"]["launch"], 1);
    let phs: Vec<&str> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ph"].as_str().unwrap())
        .collect();
    assert!(phs.contains(&"B") && phs.contains(&"E") && !phs.contains(&"X"));
    let sm_names: Vec<&str> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(sm_names, ["SM 004", "SM 009", "SM 002"]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("x/trace_summary.json")).unwrap())
            .unwrap();
    assert!(summary["per_block"][0]["warps"].is_array());
}

#[test]
fn summary_table() {
    let d = Dir::new("summary");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let o = ktrace(&["summary", s(&cap), "--launch", "0"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("launch 0: grid [3, 1, 1]"), "{out}");
    assert!(out.contains("Synthetic GPU"));
    let first = out.lines().next().unwrap();
    assert!(
        first.ends_with("; kernel time 4.834 us (first to last event)"),
        "{first}"
    );
    assert!(
        out.contains("rings: fullest warp 40 of 32 entries, 1 of 4 warps overflowed"),
        "{out}"
    );
    let header = out.lines().find(|l| l.contains("region")).unwrap();
    for col in ["count", "mean", "p50", "p99", "max"] {
        assert!(header.contains(col), "{header}");
    }
    let load = out
        .lines()
        .find(|l| l.trim_start().starts_with("load"))
        .unwrap();
    assert!(
        load.contains(" 3 ") && load.contains("126.7 ns") && load.contains("150.0 ns"),
        "{load}"
    );
    assert!(out.contains("warning: 1 x dropped"), "{out}");
}

/// `ktrace summary` prints the diagnostics' counts per kind and the first
/// five messages; `ktrace export` writes them to `otherData.diagnostics`.
/// For one capture they are the same, region ids the table lacks included.
#[test]
fn summary_and_export_report_the_same_diagnostics() {
    let d = Dir::new("same-diagnostics");
    let synthetic = d.join("unknown.ktrace");
    unknown_regions_capture().save(&synthetic).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/h200_gemm2048.ktrace");
    for cap in [synthetic, fixture] {
        let trace = d.join("trace.json");
        let o = ktrace(&["export", s(&cap), "-o", s(&trace), "--launch", "0"]);
        assert!(o.status.success(), "{}", text(&o).1);
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        let exported = &t["otherData"]["diagnostics"];
        let by_kind: Vec<String> = exported["by_kind"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(kind, n)| format!("{n} x {kind}"))
            .collect();
        let messages: Vec<&str> = exported["messages"]
            .as_array()
            .unwrap()
            .iter()
            .take(5)
            .map(|m| m.as_str().unwrap())
            .collect();

        let o = ktrace(&["summary", s(&cap), "--launch", "0"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let printed_kinds: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("warning: "))
            .collect();
        let printed_messages: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("    "))
            .map(str::trim)
            .collect();
        assert_eq!(printed_kinds, by_kind, "{}", cap.display());
        assert_eq!(printed_messages, messages, "{}", cap.display());
    }
}

#[test]
fn diff_two_captures() {
    let d = Dir::new("diff");
    let (a, b) = (d.join("a.ktrace"), d.join("b.ktrace"));
    let mut before = sample_capture();
    before.launches.truncate(1);
    before.save(&a).unwrap();
    let mut after = before.clone();
    after.launches = vec![sample_launch(0, 200)];
    after.save(&b).unwrap();
    let o = ktrace(&["diff", s(&a), s(&b)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mma = out
        .lines()
        .find(|l| l.trim_start().starts_with("mma"))
        .unwrap();
    assert!(mma.contains('+') && mma.contains('%'), "{mma}");
    let load = out
        .lines()
        .find(|l| l.trim_start().starts_with("load"))
        .unwrap();
    assert!(load.contains("+0.0%"), "{load}");
    // The roles: two warps run only mma, each span 200 cycles (100 ns)
    // longer in B; block 1's warp 0 keeps 16 spans (its ring overflowed),
    // block 2's warp 0 one: 850 ns more per warp.
    let roles = &out[out.find("warp roles (A -> B)").expect(&out)..];
    let busy = &roles[roles.find("\n  mma: warps 2 -> 2").expect(roles)..];
    let row = busy
        .lines()
        .skip(2)
        .find(|l| l.trim_start().starts_with("mma"))
        .unwrap();
    assert!(row.contains("+850.0 ns"), "{row}");
    assert!(
        roles.contains("wait share 0.0% -> 0.0% (+0.0 points)"),
        "{roles}"
    );
    let o = ktrace(&["diff", s(&a), s(&b), "--wait", "mm*"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("wait share = time in mm* over active time"),
        "{out}"
    );
}

#[test]
fn bad_files_fail_cleanly() {
    let d = Dir::new("bad");
    let good = d.join("good.ktrace");
    sample_capture().save(&good).unwrap();
    let bytes = std::fs::read(&good).unwrap();

    let trunc = d.join("trunc.ktrace");
    std::fs::write(&trunc, &bytes[..bytes.len() / 2]).unwrap();
    assert_clean_failure(&ktrace(&["export", s(&trunc)]), "truncated");
    assert_clean_failure(&ktrace(&["summary", s(&trunc)]), "truncated");

    let json = d.join("trace.json");
    std::fs::write(&json, b"{\"traceEvents\":[]}").unwrap();
    assert_clean_failure(&ktrace(&["summary", s(&json)]), "not a ktrace capture");

    let mut newer = bytes.clone();
    newer[8] = 9;
    let newer_path = d.join("newer.ktrace");
    std::fs::write(&newer_path, &newer).unwrap();
    assert_clean_failure(&ktrace(&["diff", s(&good), s(&newer_path)]), "newer");

    assert_clean_failure(
        &ktrace(&["export", s(&d.join("missing.ktrace"))]),
        "missing.ktrace",
    );
    assert_clean_failure(
        &ktrace(&["export", s(&good), "--launch", "5"]),
        "no launch 5",
    );

    let empty = d.join("empty.ktrace");
    Capture::default().save(&empty).unwrap();
    assert_clean_failure(&ktrace(&["summary", s(&empty)]), "no launch");
}

#[test]
fn a_capture_whose_writer_did_not_finish_reads_its_complete_launches() {
    let d = Dir::new("cut");
    let good = d.join("good.ktrace");
    sample_capture().save(&good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    // Cut inside the end record: both launches are complete.
    let cut = d.join("cut.ktrace");
    std::fs::write(&cut, &bytes[..bytes.len() - 8]).unwrap();
    let o = ktrace(&["summary", s(&cut)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        err.contains("is truncated") && err.contains("its 2 launches"),
        "{err}"
    );
    let (whole, _) = text(&ktrace(&["summary", s(&good)]));
    assert_eq!(out.replace(s(&cut), s(&good)), whole);
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(name)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `ktrace analyze` on the real warp-specialized gemm capture: the text
/// names the roles and the tail; the JSON holds together.
#[test]
fn analyze_a_real_capture() {
    let cap = fixture("h200_gemm2048_v2.ktrace");
    let o = ktrace(&["analyze", s(&cap)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for needle in [
        "launch 0 (gemm): grid [128, 1, 1], block [384, 1, 1]; 1536 warps traced",
        "wait regions (wait*): wait_empty, wait_full",
        "warp roles",
        "load+wait_empty",
        "epilogue+mma+wait_full",
        "tail: the last block",
        "slowest blocks",
        "warps inside each region over the launch",
    ] {
        assert!(out.contains(needle), "{needle:?} missing: {out}");
    }

    let d = Dir::new("analyze-real");
    let json = d.join("a.json");
    let o = ktrace(&["analyze", s(&cap), "--json", "-o", s(&json)]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(o.stdout.is_empty());
    let doc = read_json(&json);
    assert_eq!(doc["schema"], "ktrace.analysis/1");
    assert!(
        doc["device"].as_str().unwrap().contains("H200"),
        "{}",
        doc["device"]
    );
    let launches = doc["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 1);
    let a = &launches[0];
    assert_eq!(a["schema"], "ktrace.analysis/1");
    assert_eq!(a["warps_traced"], 1536);
    let roles = a["roles"].as_array().unwrap();
    let warps: u64 = roles.iter().map(|r| r["warps"].as_u64().unwrap()).sum();
    assert_eq!(warps, 1536);
    let by_name = |n: &str| roles.iter().find(|r| r["name"] == n).unwrap();
    let producer = by_name("load+wait_empty");
    assert_eq!(producer["warps"], 128);
    assert_eq!(producer["warp_indices"], serde_json::json!([0]));
    let consumer = by_name("epilogue+mma+wait_full");
    assert_eq!(consumer["warps"], 1024);
    assert_eq!(
        consumer["warp_indices"],
        serde_json::json!([4, 5, 6, 7, 8, 9, 10, 11])
    );
    // The producer waits for free slots most of its time; the consumers
    // wait little.
    assert!(f(&producer["wait_share"]) > 0.4, "{producer}");
    assert!(f(&consumer["wait_share"]) < 0.25, "{consumer}");
    for r in roles {
        for key in [
            "outside_share",
            "wait_share",
            "wait_share_min",
            "wait_share_max",
        ] {
            let v = f(&r[key]);
            assert!((0.0..=1.0).contains(&v), "{key} {v}: {r}");
        }
        assert!(f(&r["wait_share_min"]) <= f(&r["wait_share"]) + 1e-12);
        assert!(f(&r["wait_share"]) <= f(&r["wait_share_max"]) + 1e-12);
        let active = f(&r["active_per_warp_ns"]);
        let outside = f(&r["outside_per_warp_ns"]);
        assert!(outside <= active + 1e-6);
        for t in r["region_times"].as_array().unwrap() {
            assert!((0.0..=1.0).contains(&f(&t["share"])), "{t}");
            assert!(f(&t["per_warp_ns"]) <= active + 1e-6, "{t}");
        }
    }
    // The tail ends at the launch's last event.
    let tail = &a["imbalance"]["tail"];
    assert_eq!(tail["blocks"], 128);
    assert!((f(&tail["last_end_ns"]) - f(&a["kernel_time_ns"])).abs() < 1e-6);
    assert!(f(&tail["median_end_ns"]) <= f(&tail["last_end_ns"]));
    let slowest = a["imbalance"]["slowest_blocks"].as_array().unwrap();
    assert_eq!(slowest.len(), 5);
    assert_eq!(slowest[0]["block"], tail["last_block"]);
    // Busy series: one value per bin, no more warps than traced, and the
    // time they add up to is the roles' time in the region.
    let busy = &a["busy"];
    assert_eq!(busy["bins"], 120);
    for series in busy["series"].as_array().unwrap() {
        let values = series["values"].as_array().unwrap();
        assert_eq!(values.len(), 120);
        assert!(values.iter().all(|v| (0.0..=1536.0).contains(&f(v))));
        let in_roles: f64 = roles
            .iter()
            .flat_map(|r| r["region_times"].as_array().unwrap())
            .filter(|t| t["region"] == series["region"])
            .map(|t| f(&t["total_ns"]))
            .sum();
        let in_series = f(&series["mean"]) * f(&busy["end_ns"]);
        assert!(
            (in_roles - in_series).abs() <= 1e-6 * in_roles,
            "{}: {in_roles} vs {in_series}",
            series["region"]
        );
    }

    // The JSON on standard output is the same document.
    let o = ktrace(&["analyze", s(&cap), "--json"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(&json).unwrap());
}

/// The warp_specialized capture: one producer and one consumer traced per
/// block, both waiting a large part of their time.
#[test]
fn analyze_the_warp_specialized_capture() {
    let cap = fixture("h200_warp_specialized.ktrace");
    let o = ktrace(&["analyze", s(&cap), "--json"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &doc["launches"][0];
    let roles: Vec<(&str, u64, &serde_json::Value)> = a["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["warps"].as_u64().unwrap(),
                &r["warp_indices"],
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("produce+wait_empty", 264, &serde_json::json!([0])),
            ("consume+wait_full", 264, &serde_json::json!([4])),
        ]
    );
    for r in a["roles"].as_array().unwrap() {
        let w = f(&r["wait_share"]);
        assert!((0.1..0.9).contains(&w), "{r}");
    }
    let slowest = &a["imbalance"]["slowest_blocks"][0];
    assert_eq!(slowest["block"], a["imbalance"]["tail"]["last_block"]);
    assert!(slowest["cause"].is_string(), "{slowest}");
}

#[test]
fn analyze_every_launch_or_one() {
    let d = Dir::new("analyze-launches");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let o = ktrace(&["analyze", s(&cap), "--json"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let launches: Vec<u64> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["launch"].as_u64().unwrap())
        .collect();
    assert_eq!(launches, [0, 1]);
    // The sample has no wait region, and its flaws are noted: a warp that
    // never flushed, an overflowed ring, a begin without an end.
    let notes = doc["launches"][0]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 4, "{notes:?}");
    for (note, needle) in notes.iter().zip([
        "wait pattern \"wait*\" matches no region",
        "1 warp never flushed",
        "1 warp lost the oldest events",
        "1 warp with begins or ends without a partner",
    ]) {
        assert!(note.as_str().unwrap().starts_with(needle), "{note}");
    }

    let o = ktrace(&[
        "analyze",
        s(&cap),
        "--launch",
        "1",
        "--wait",
        "mm*",
        "--bins",
        "10",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("launch 1: grid [3, 1, 1]"), "{out}");
    assert!(!out.contains("launch 0"), "{out}");
    assert!(out.contains("wait regions (mm*): mma"), "{out}");
    assert!(out.contains("(10 bins of "), "{out}");
    assert!(out.contains("notes\n"), "{out}");
}

#[test]
fn analyze_refuses_bad_options_cleanly() {
    let d = Dir::new("analyze-bad");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let o = ktrace(&["analyze", s(&cap), "--launch", "7"]);
    assert_clean_failure(&o, "no launch 7 (the capture holds 2 launches)");
    let o = ktrace(&["analyze", s(&cap), "--wait", ""]);
    assert_clean_failure(&o, "wait pattern \"\": the pattern is empty");
    let o = ktrace(&["analyze", s(&cap), "--wait", "wait*", "--wait", "wa?t"]);
    assert_clean_failure(&o, "only * is a wildcard");
    let o = ktrace(&["diff", s(&cap), s(&cap), "--wait", "x\\y"]);
    assert_clean_failure(&o, "cannot appear in a region name");
    let o = ktrace(&["analyze", s(&cap), "--bins", "0"]);
    assert!(!o.status.success());
    let o = ktrace(&["analyze", s(&d.join("missing.ktrace"))]);
    assert_clean_failure(&o, "missing.ktrace");
}

#[test]
fn usage_errors_exit_non_zero() {
    let o = ktrace(&["export"]);
    assert!(!o.status.success());
    let o = ktrace(&["frobnicate"]);
    assert!(!o.status.success());
}

/// The trace events (not metadata) of a trace file: (name, ph, ts, pid, tid).
fn trace_events(path: &Path) -> Vec<(String, String, f64, u64, u64)> {
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["ph"].as_str().unwrap().to_string(),
                e["ts"].as_f64().unwrap(),
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Launch 0 of the sample, from its first event (µs): block 0 warp 0 has
/// load 0-0.15, mma 0.175-0.675, region 5 at 0.2, a tick at 0.45 and mma
/// 0.7-1.25; warp 1 load 0.02-0.15, mma 0.19-0.66, a tick at 0.41; block 1
/// warp 0 mma spans from 1.8 to 4.834, warp 1 load 1.01-1.11; block 2 mma
/// 1.98-2.3.
#[test]
fn export_with_a_window_blocks_and_regions() {
    let d = Dir::new("filter");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let out = d.join("f.json");
    let o = ktrace(&[
        "export",
        s(&cap),
        "-o",
        s(&out),
        "--launch",
        "0",
        "--time",
        "0.3..0.5",
        "--blocks",
        "0",
        "--regions",
        "mma,tick",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // Not a terminal: no progress line, nothing at all on stderr.
    assert_eq!(err, "");
    assert!(
        stdout.starts_with("launch 0: 4 events from 2 of 5 warps -> "),
        "{stdout}"
    );
    let x =
        |name: &str, ph: &str, ts: f64, tid: u64| (name.to_string(), ph.to_string(), ts, 0, tid);
    assert_eq!(
        trace_events(&out),
        [
            // Overlaps the window: kept whole (from 0.175, not 0.3).
            x("mma", "X", 0.175, 0),
            x("tick", "i", 0.45, 0),
            x("mma", "X", 0.19, 1),
            x("tick", "i", 0.41, 1),
        ]
    );
    let t = read_json(&out);
    let filter = &t["otherData"]["filter"];
    assert_eq!(filter["time_us"], "0.3..0.5");
    assert_eq!(filter["blocks"], "0");
    assert_eq!(filter["regions"], serde_json::json!(["mma", "tick"]));
    assert_eq!(filter["summary"], "launch");
    assert_eq!(filter["spans_crossing_the_window"], "kept whole");
    // The summary covers the whole launch.
    let summary = read_json(&d.join("f_summary.json"));
    let counts: Vec<(&str, u64)> = summary["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [("load", 3), ("mma", 20), ("region 5", 1)]);
    assert!(summary.get("filter").is_none());
    assert_eq!(summary["kernel_time"], 4.834);

    // The same with --raw-events: each kept span's begin and end, even
    // outside the window.
    let o = ktrace(&[
        "export",
        s(&cap),
        "-o",
        s(&out),
        "--launch",
        "0",
        "--time",
        "0.3..0.5",
        "--blocks",
        "0",
        "--regions",
        "mma,tick",
        "--raw-events",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let phs: Vec<(String, String, f64, u64)> = trace_events(&out)
        .into_iter()
        .map(|e| (e.0, e.1, e.2, e.4))
        .collect();
    let e = |name: &str, ph: &str, ts: f64, tid: u64| (name.to_string(), ph.to_string(), ts, tid);
    assert_eq!(
        phs,
        [
            e("mma", "B", 0.175, 0),
            e("tick", "i", 0.45, 0),
            e("mma", "E", 0.675, 0),
            e("mma", "B", 0.19, 1),
            e("tick", "i", 0.41, 1),
            e("mma", "E", 0.66, 1),
        ]
    );
}

#[test]
fn export_with_sms_warps_and_a_filtered_summary() {
    let d = Dir::new("filter-summary");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let out = d.join("f.json");
    // SM 9 is block 1; its warp 0 has 16 mma spans left in the ring, at
    // 1.8, 2, 2.2, ... 4.8 us, each shorter than 0.2 us: from 2 us on, 15.
    let o = ktrace(&[
        "export",
        s(&cap),
        "-o",
        s(&out),
        "--launch",
        "0",
        "--sms",
        "9",
        "--warps",
        "0",
        "--time",
        "2..",
        "--filter-summary",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let ts: Vec<f64> = trace_events(&out).iter().map(|e| e.2).collect();
    let expected: Vec<f64> = (10..=24).map(|i| f64::from(i * 2) / 10.0).collect();
    assert_eq!(ts, expected);
    assert!(trace_events(&out)
        .iter()
        .all(|e| e.0 == "mma" && e.3 == 1 && e.4 == 0));
    let summary = read_json(&d.join("f_summary.json"));
    let regions = summary["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1);
    assert_eq!(
        (regions[0]["name"].as_str(), regions[0]["count"].as_u64()),
        (Some("mma"), Some(15))
    );
    assert_eq!(summary["filter"]["summary"], "kept");
    assert_eq!(summary["filter"]["sms"], "9");
    // From the first kept event (2 us) to the last (4.834 us).
    assert_eq!(summary["kernel_time"], 2.834);
}

#[test]
fn bad_filters_fail_cleanly() {
    let d = Dir::new("bad-filter");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let out = d.join("out.json");
    let cases: &[(&[&str], &str)] = &[
        (&["--time", "5..2"], "time window \"5..2\": the window ends (2 us) before it starts (5 us)"),
        (&["--time", "5"], "time window \"5\": expected START..END in microseconds"),
        (&["--time", "1x.."], "\"1x\" is not a number of microseconds"),
        (&["--time", "100.."], "launch 0: time window \"100..\": the window starts after the launch's end: its last event is at 4.834 us from its first"),
        (&["--blocks", ""], "block list \"\": the list is empty"),
        (&["--blocks", "3-1"], "block list \"3-1\": the range 3-1 is reversed (write 1-3)"),
        (&["--blocks", "-5"], "block list \"-5\": \"\" is not a number"),
        (&["--blocks", "0-9"], "launch 0: block list \"0-9\": block 9 is outside the grid of 3 blocks (0-2)"),
        (&["--warps", "1,5"], "launch 0: warp list \"1,5\": warp 5 is outside a block of 2 warps (0-1)"),
        (&["--sms", "4,200"], "launch 0: SM list \"4,200\": SM 200 is outside the device's 132 SMs (0-131)"),
        (&["--sms", "1,,2"], "SM list \"1,,2\": an item is empty"),
        (&["--regions", "mma,nope"], "launch 0: region list \"mma,nope\": no region is named \"nope\"; the capture's regions: load, mma, tick"),
        (&["--regions", "x*"], "no region name matches \"x*\"; the capture's regions: load, mma, tick"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["export", s(&cap), "-o", s(&out), "--launch", "0"];
        all.extend_from_slice(args);
        assert_clean_failure(&ktrace(&all), needle);
        // Nothing written.
        let files: Vec<String> = std::fs::read_dir(&d.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, ["run.ktrace"], "{args:?}");
    }
}

#[test]
fn export_perfetto_puts_every_launch_in_one_file() {
    let d = Dir::new("perfetto");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let pf = d.join("out.pftrace");
    let o = ktrace(&["export", s(&cap), "-o", s(&pf)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // The same events as the Chrome export counts (26 in launch 0).
    assert!(
        lines[0].starts_with("launch 0: 26 events from 5 warps -> "),
        "{out}"
    );
    assert!(lines[0].contains("out.pftrace") && lines[0].contains("out_summary.json"));
    assert!(lines[1].contains("out.pftrace") && lines[1].contains("out_summary.json"));
    let bytes = std::fs::read(&pf).unwrap();
    // A protobuf Trace: every top-level field is packet (1), length-delimited.
    assert_eq!(bytes[0], 0x0a);
    assert!(!d.join("out_launch1.pftrace").exists());
    // One summary file for the trace, listing each launch's summary: the
    // one the Chrome export writes, naming the .pftrace.
    assert!(!d.join("out_launch1_summary.json").exists());
    let chrome = d.join("c.json");
    assert!(ktrace(&["export", s(&cap), "-o", s(&chrome)])
        .status
        .success());
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap()
    };
    let all = read("out_summary.json");
    assert!(all["trace"].as_str().unwrap().ends_with("out.pftrace"));
    let launches = all["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 2);
    for (a, c) in launches
        .iter()
        .zip(["c_summary.json", "c_launch1_summary.json"])
    {
        let (mut a, mut b) = (a.clone(), read(c));
        assert!(a["trace"].as_str().unwrap().ends_with("out.pftrace"));
        a["trace"] = serde_json::Value::Null;
        b["trace"] = serde_json::Value::Null;
        // Plus where the launch was placed: a capture without clock syncs
        // stays on the GPU's own clock.
        let placement = a.as_object_mut().unwrap().remove("placement");
        assert_eq!(placement, Some(serde_json::json!({"axis": "globaltimer"})));
        assert_eq!(a, b, "{c}");
    }
    // --launch: one launch, summary without the launch suffix; --format
    // picks the format whatever the name (but must agree with a known one).
    let one = d.join("one.perfetto-trace");
    let o = ktrace(&["export", s(&cap), "-o", s(&one), "--launch", "1", "--args"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(d.join("one_summary.json").exists());
    let plain = d.join("plain");
    let o = ktrace(&["export", s(&cap), "-o", s(&plain), "--format", "perfetto"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(std::fs::read(&plain).unwrap()[0], 0x0a);
}

#[test]
fn export_format_errors_are_clear() {
    let d = Dir::new("format");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let pf = d.join("x.pftrace");
    let o = ktrace(&["export", s(&cap), "-o", s(&pf), "--format", "chrome"]);
    assert_clean_failure(&o, "names a Perfetto trace but --format chrome was asked");
    let o = ktrace(&[
        "export",
        s(&cap),
        "-o",
        s(&d.join("x.json")),
        "--format",
        "perfetto",
    ]);
    assert_clean_failure(
        &o,
        "names a Chrome JSON trace but --format perfetto was asked",
    );
    let o = ktrace(&["export", s(&cap), "-o", s(&pf), "--by-sm"]);
    assert_clean_failure(&o, "--by-sm and --raw-events shape the Chrome trace");
    let o = ktrace(&["export", s(&cap), "--args"]);
    assert_clean_failure(&o, "--args is for the Perfetto format");
    let o = ktrace(&["export", s(&cap), "--format", "svg"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("invalid value 'svg'") && err.contains("chrome, perfetto"),
        "{err}"
    );
    assert!(!pf.exists());
}

#[test]
fn merge_puts_two_gpus_on_the_host_axis_and_refuses_what_cannot_be_placed() {
    let d = Dir::new("merge");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let (g0, g1) = (
        data.join("h200_two_gpus_gpu0.ktrace"),
        data.join("h200_two_gpus_gpu1.ktrace"),
    );
    if !g0.exists() {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    }
    let out = d.join("two.pftrace");
    let o = ktrace(&["merge", s(&g0), s(&g1), "-o", s(&out)]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        stdout.contains("GPU 0: NVIDIA H200, 35 launch(es), 36 clock syncs"),
        "{stdout}"
    );
    assert!(stdout.contains("GPU 1: NVIDIA H200"), "{stdout}");
    assert!(
        stdout.contains(
            "70 launches of 2 captures, 140000 events, on the host's CLOCK_REALTIME axis"
        ),
        "{stdout}"
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 100_000);
    // One summary for the merged trace, not one per launch.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("two_summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["launches"].as_array().unwrap().len(), 70);
    assert!(!d.join("two_part69_summary.json").exists());
    // And the help says so.
    for cmd in ["merge", "export"] {
        let help = String::from_utf8(ktrace(&[cmd, "--help"]).stdout).unwrap();
        assert!(help.contains("NAME_summary.json"), "{help}");
        assert!(
            !help.contains("partK") && !help.contains("launchN_summary"),
            "{help}"
        );
    }
    // A capture without clock syncs from another GPU cannot join them.
    let bare = d.join("bare.ktrace");
    sample_capture().save(&bare).unwrap();
    let o = ktrace(&["merge", s(&g0), s(&bare), "-o", s(&d.join("x.pftrace"))]);
    assert_clean_failure(&o, "has no clock syncs");
    let o = ktrace(&["merge", s(&g0), "-o", s(&d.join("x.json"))]);
    assert_clean_failure(&o, "merge writes a Perfetto trace");
    assert!(!d.join("x.pftrace").exists());
}

/// A capture whose "tile" spans carry their tile index mod 3 as a value:
/// tile i lasts 100 * (i % 3 + 1) cycles at 2 GHz, so value v has spans of
/// 50 * (v + 1) ns. Plus "tick" marks with value 7 and one without.
fn values_capture() -> Capture {
    use ktrace_runtime::format::layout::EventKind;
    use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
    let mut w = SynthWarp::new(0, 0);
    for i in 0..9u64 {
        let at = 1_000 + i * 1_000;
        let v = (i % 3) as u32;
        w = w
            .event_value(at, 0, EventKind::Begin, v)
            .end(at + 100 * (i % 3 + 1), 0);
    }
    w = w
        .event_value(20_000, 1, EventKind::Mark, 7)
        .event_value(20_100, 1, EventKind::Mark, 7)
        .mark(20_200, 1)
        .span(21_000, 21_500, 2);
    let mut cap = sample_capture();
    cap.regions = ktrace_runtime::format::regions::Regions::from_table(&[
        (0, "tile"),
        (1, "tick"),
        (2, "plain"),
    ]);
    cap.launches = vec![SynthLaunch::all_traced(1, 32, 64)
        .layout(3)
        .with(w)
        .into_capture()];
    cap
}

#[test]
fn summary_by_value() {
    let d = Dir::new("by-value");
    let cap = d.join("values.ktrace");
    values_capture().save(&cap).unwrap();
    let o = ktrace(&["summary", s(&cap), "--by-value", "tile"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let row = |out: &str, v: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(v))
            .unwrap_or_else(|| panic!("no row {v}: {out}"))
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    // value, spans, mean (number and unit), ...
    assert_eq!(row(&out, "0")[1..4], ["3", "50.0", "ns"]);
    assert_eq!(row(&out, "1")[1..4], ["3", "100.0", "ns"]);
    assert_eq!(row(&out, "2")[1..4], ["3", "150.0", "ns"]);
    assert!(!out.contains("(none)"), "{out}");

    // The alias, and marks counted by value.
    let o = ktrace(&["summary", s(&cap), "--by-payload", "tick"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(row(&out, "7").last().unwrap(), "2");
    assert_eq!(row(&out, "(none)").last().unwrap(), "1");

    // A region without values says so; an unknown one is an error.
    let o = ktrace(&["summary", s(&cap), "--by-value", "plain"]);
    let (out, _) = text(&o);
    assert!(
        out.contains("no value was recorded with \"plain\""),
        "{out}"
    );
    assert_clean_failure(
        &ktrace(&["summary", s(&cap), "--by-value", "nope"]),
        "no region \"nope\" in the capture; its regions: tile, tick, plain",
    );
}

/// Output cut short by a closed pipe (`ktrace summary ... | head -1`) ends
/// the program quietly, without a panic message.
#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let d = Dir::new("pipe");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ktrace"))
        .args(["summary", s(&cap)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end at once: every write of the child fails.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn report_writes_one_page_and_asks_for_a_launch_when_there_are_several() {
    let d = Dir::new("report");
    let cap = d.join("run.ktrace");
    sample_capture().save(&cap).unwrap();

    // Two launches: --launch is needed, and the error lists them.
    assert_clean_failure(
        &ktrace(&["report", s(&cap)]),
        "the capture holds 2 launches (0, 1); pick one with --launch N",
    );
    assert_clean_failure(&ktrace(&["report", s(&cap), "--launch", "7"]), "launch 7");

    let o = ktrace(&["report", s(&cap), "--launch", "1"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let page = d.join("run.html");
    assert!(
        out.starts_with(&format!("launch 1: 24 spans of 5 warps -> {}", s(&page))),
        "{out}"
    );
    assert!(out.contains("4 warnings (listed in the report)"), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(r#""launch":1"#), "the page is of launch 1");

    let one = d.join("one.ktrace");
    let mut single = sample_capture();
    single.launches.truncate(1);
    single.save(&one).unwrap();
    let out_page = d.join("out/r.html");
    let o = ktrace(&["report", s(&one), "-o", s(&out_page)]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(std::fs::metadata(&out_page).unwrap().len() > 10_000);

    assert_clean_failure(
        &ktrace(&["report", s(&d.join("missing.ktrace"))]),
        "missing.ktrace",
    );

    // The page embeds the analysis, with the wait regions asked for.
    let data = |html: &str| -> serde_json::Value {
        let start = html.find(r#"id="ktrace-data">"#).unwrap() + r#"id="ktrace-data">"#.len();
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end]).unwrap()
    };
    let a = data(&std::fs::read_to_string(&out_page).unwrap());
    assert_eq!(a["analysis"]["schema"], "ktrace.analysis/1");
    assert_eq!(a["analysis"]["wait_patterns"], serde_json::json!(["wait*"]));
    let o = ktrace(&["report", s(&one), "-o", s(&out_page), "--wait", "mma"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let a = data(&std::fs::read_to_string(&out_page).unwrap());
    assert_eq!(a["analysis"]["wait_patterns"], serde_json::json!(["mma"]));
    assert_eq!(a["analysis"]["wait_regions"], serde_json::json!(["mma"]));
    assert_clean_failure(&ktrace(&["report", s(&one), "--wait", ""]), "wait");
}

/// The numbers in `line` split on runs of two spaces (a table row's cells).
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// The row of `out` whose first cell is `first`.
fn row<'a>(out: &'a str, first: &str) -> Vec<&'a str> {
    out.lines()
        .map(cells)
        .find(|c| c.first() == Some(&first))
        .unwrap_or_else(|| panic!("no row {first:?} in:\n{out}"))
}

#[test]
fn launches_per_kernel_and_per_launch() {
    let d = Dir::new("launches");
    let cap = d.join("serve.ktrace");
    ktrace_runtime::synth::continuous_capture()
        .save(&cap)
        .unwrap();
    let o = ktrace(&["launches", s(&cap)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("8 of 8 launches, 3 kernels\n"), "{out}");
    assert_eq!(
        row(&out, "gemm"),
        [
            "gemm",
            "5",
            "3.000 us",
            "9.760 us",
            "10.000 us",
            "launch 4 (10.000 us)"
        ]
    );
    assert_eq!(
        row(&out, "norm"),
        [
            "norm",
            "2",
            "500.0 ns",
            "500.0 ns",
            "500.0 ns",
            "launch 5 (500.0 ns)"
        ]
    );
    assert_eq!(row(&out, "(unnamed)")[1], "1");
    assert!(
        out.contains("  gemm: 1 outlier (over 1.5 x p50): launch 4 (10.000 us)\n"),
        "{out}"
    );

    let o = ktrace(&["launches", s(&cap), "--each", "--kernels", "n*"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("2 of 8 launches, 1 kernel\n"), "{out}");
    assert!(!out.contains("gemm"), "{out}");
    let five = row(&out, "5");
    assert_eq!(five[1], "norm");
    assert_eq!(five[3..6], ["+50.000 us", "500.0 ns", "3 (1 unflushed)"]);
    assert_eq!(row(&out, "6")[3..5], ["+250.000 us", "500.0 ns"]);

    // Two patterns; one launch of them.
    let o = ktrace(&["launches", s(&cap), "--kernels", "norm", "--kernels", ""]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("3 of 8 launches, 2 kernels\n"), "{out}");
}

#[test]
fn kernels_and_steps_select_launches_to_summarise_and_export() {
    let d = Dir::new("select");
    let cap = d.join("serve.ktrace");
    let c = ktrace_runtime::synth::continuous_capture();
    Capture {
        steps: Vec::new(),
        ..c
    }
    .save(&cap)
    .unwrap();
    let o = ktrace(&["summary", s(&cap), "--kernels", "norm"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let heads: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("launch "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(heads, ["launch 5", "launch 6"], "{out}");

    let o = ktrace(&[
        "export",
        s(&cap),
        "--kernels",
        "gem*",
        "-o",
        s(&d.join("g.json")),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let exported: Vec<&str> = out.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        exported,
        ["launch 0", "launch 1", "launch 2", "launch 3", "launch 4"],
        "{out}"
    );
    assert!(d.join("g_launch4.json").exists() && !d.join("g_launch5.json").exists());

    // What is asked and what there is.
    assert_clean_failure(
        &ktrace(&["export", s(&cap), "--launch", "5", "--kernels", "gemm"]),
        "kernel pattern \"gemm\": no launch's kernel matches; the launches' kernels: norm (1 \
         launch)",
    );
    assert_clean_failure(
        &ktrace(&["summary", s(&cap), "--steps", "0.."]),
        "host steps \"0..\": the capture holds no host steps",
    );
    assert_clean_failure(
        &ktrace(&["launches", s(&cap), "--steps", "5..2"]),
        "host steps \"5..2\": the range 5..2 holds no index",
    );
    assert_clean_failure(
        &ktrace(&["launches", s(&cap), "--kernels", "attn"]),
        "the launches' kernels: gemm (5 launches), norm (2 launches), (unnamed) (1 launch)",
    );
}

/// `ktrace stalls` on the real PC samples of the planted kernel (H200,
/// untraced build): every planted region with its expected top reason, in
/// text and JSON, a region filter, and the errors.
#[test]
fn stalls_of_the_planted_kernel() {
    let cap = fixture("h200_stalls_planted.ktrace");
    let o = ktrace(&["stalls", s(&cap)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.starts_with("stalls (untraced build), launch 0: "),
        "{out}"
    );
    for (region, reason) in [
        ("chase", "long_scoreboard"),
        ("fma_chain", "wait"),
        ("barrier", "barrier"),
        ("bank_conflicts", "short_scoreboard"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(region))
            .unwrap_or_else(|| panic!("no row for {region}: {out}"));
        let top = line.split("  ").last().unwrap().trim();
        assert!(top.starts_with(reason), "{region}: {line}");
    }
    assert!(out.contains("hottest instructions"), "{out}");
    assert!(out.contains("kernels/stalls.cu:"), "{out}");

    let o = ktrace(&["stalls", s(&cap), "--json", "--region", "ch*"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "ktrace.stalls/1");
    let k = &v["kernels"][0];
    assert_eq!(k["kernel"], "stalls");
    assert_eq!(k["traced"], false);
    let regions = k["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1, "{regions:?}");
    assert_eq!(regions[0]["name"], "chase");
    assert_eq!(regions[0]["reasons"][0][0], "long_scoreboard");
    assert!(f(&regions[0]["share"]) > 20.0);

    // analyze --json carries the same tables for a capture of samples alone
    let o = ktrace(&["analyze", s(&cap), "--json"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["launches"].as_array().unwrap().len(), 0);
    assert_eq!(v["stalls"][0]["kernel"], "stalls");

    // The commands that read traced launches say where the samples are.
    for cmd in ["summary", "export", "report"] {
        assert_clean_failure(
            &ktrace(&[cmd, s(&cap)]),
            "the capture holds no traced launch, only PC samples (stall reasons) of stalls: \
             read them with `ktrace stalls",
        );
    }

    assert_clean_failure(
        &ktrace(&["stalls", s(&cap), "--kernels", "gemm*"]),
        "no PC samples of those kernels (sampled: stalls)",
    );
    assert_clean_failure(
        &ktrace(&["stalls", s(&fixture("h200_gemm2048.ktrace"))]),
        "no PC samples; sample a run with KTRACE_STALLS=1",
    );
}

/// `ktrace` with `KTRACE_THREADS` set to `threads`.
fn ktrace_with_threads(threads: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ktrace"))
        .env("KTRACE_THREADS", threads)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn threads_from_the_flag_or_the_environment_write_the_same_files() {
    let d = Dir::new("threads");
    let cap = d.join("run.ktrace");
    unknown_regions_capture().save(&cap).unwrap();
    let real = fixture("h200_gemm2048_anchors.ktrace");
    for (capture, ext) in [(&cap, "json"), (&cap, "pftrace"), (&real, "pftrace")] {
        let mut outputs = Vec::new();
        for (env, flag) in [
            ("1", None),
            ("auto", Some("1")),
            ("1", Some("3")),
            ("4", None),
        ] {
            let out = d.join(&format!("t.{ext}"));
            let mut args = vec!["export", s(capture), "-o", s(&out)];
            if let Some(f) = flag {
                args.extend(["--threads", f]);
            }
            let o = ktrace_with_threads(env, &args);
            let (stdout, err) = text(&o);
            assert!(o.status.success(), "{err}");
            let summary = std::fs::read(d.join("t_summary.json")).unwrap();
            outputs.push((std::fs::read(&out).unwrap(), summary, stdout));
        }
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{ext}");
    }
    let o = ktrace_with_threads("many", &["export", s(&cap), "-o", s(&d.join("x.json"))]);
    assert_clean_failure(&o, "KTRACE_THREADS");
    // The flag wins over a bad variable; a bad flag is a usage error.
    let o = ktrace_with_threads("many", &["summary", s(&cap), "--threads", "2"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = ktrace(&["export", s(&cap), "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("--threads"), "{}", text(&o).1);
}

/// A trace that ktrace wrote, given where a capture goes: the message names
/// the file and says what it looks like.
#[test]
fn a_trace_given_for_a_capture_is_named_and_recognised() {
    let d = Dir::new("not-a-capture");
    let cap = fixture("sample_v1.ktrace");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let json = d.join("t.json");
    let pf = d.join("t.pftrace");
    for out in [&json, &pf] {
        let o = ktrace(&["export", &s(&cap), "-o", &s(out)]);
        assert!(o.status.success(), "{}", text(&o).1);
    }
    for cmd in ["summary", "export", "report", "stalls"] {
        assert_clean_failure(
            &ktrace(&[cmd, &s(&json)]),
            &format!(
                "{}: not a ktrace capture file (bad magic bytes [7b, ",
                json.display()
            ),
        );
        assert_clean_failure(&ktrace(&[cmd, &s(&json)]), "it looks like JSON");
        assert_clean_failure(
            &ktrace(&[cmd, &s(&pf)]),
            "it looks like a Perfetto trace (.pftrace)",
        );
    }
}
