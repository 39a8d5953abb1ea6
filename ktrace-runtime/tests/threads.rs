//! An export on several threads writes the bytes one thread writes: the
//! Chrome JSON, the `.pftrace` and the summary JSON, for the committed
//! captures (`tests/data`) and synthetic ones (overlapping spans, unmatched
//! begins and ends, region ids outside the table in many warps, values,
//! never-flushed and overflowed rings, random corruption), whole and
//! through filters, with thread counts that cut the warps into chunks of
//! one warp and of many.

use std::path::{Path, PathBuf};

use ktrace_runtime::export::chrome::ChromeOptions;
use ktrace_runtime::export::filter::{SummaryScope, TraceFilter};
use ktrace_runtime::export::perfetto::PerfettoOptions;
use ktrace_runtime::export::plan::{plan, ChromeNames, TraceFormat};
use ktrace_runtime::export::summary::{Breakdown, SummaryOptions};
use ktrace_runtime::export::{summarize_launch, TimelineLaunch};
use ktrace_runtime::fill::ring_fill;
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::synth::{xorshift64, SynthLaunch, SynthWarp};
use ktrace_runtime::timeline::HostAxis;
use ktrace_runtime::{Capture, ExportOptions};

/// Every file an export wrote, by name, and what it returned (or its
/// error).
type Written = (Vec<(String, Vec<u8>)>, String);

/// Exports `cap` into `dir` as `format` with `opts`: every file written,
/// with the reports' counts and diagnostics.
fn export(cap: &Capture, dir: &Path, format: TraceFormat, opts: &ExportOptions) -> Written {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let perfetto = matches!(format, TraceFormat::Perfetto(_));
    let axis = if perfetto {
        HostAxis::new(&cap.clock_syncs).unwrap()
    } else {
        None
    };
    let launches: Vec<TimelineLaunch> =
        TimelineLaunch::of_capture(cap, &cap.launches, axis.as_ref()).collect();
    let out = dir.join(if perfetto { "t.pftrace" } else { "t.json" });
    let mut report = String::new();
    let mut warps_seen = Vec::new();
    let mut fills = cap.launches.iter().map(|l| ring_fill(&l.buffer().unwrap()));
    for file in plan(launches, &out, format, ChromeNames::ByLaunch).unwrap() {
        match file.write(opts, &mut |p| warps_seen.push(*p)) {
            Ok(rs) => {
                for r in rs {
                    assert_eq!(
                        Some(r.fill),
                        fills.next(),
                        "the fill of launch {}",
                        r.summary.launch
                    );
                    report += &format!(
                        "{} {} {} {} {:?}\n",
                        r.events, r.warps, r.warps_written, r.fill.events, r.diagnostics
                    );
                }
            }
            Err(e) => {
                // A Chrome file is one launch.
                fills.next();
                report += &format!("error: {e}\n");
            }
        }
    }
    report += &format!("{warps_seen:?}");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    (files, report)
}

/// The option sets compared: plain, Chrome laid out by SM with raw events
/// and a per-warp summary, and a filter whose summary covers what it keeps.
fn option_sets(regions: &Regions) -> Vec<ExportOptions> {
    let mut filter = TraceFilter::default();
    filter.set_blocks("0-40,97-").unwrap();
    filter.set_warps("0,2-").unwrap();
    filter.set_time("0.05..").unwrap();
    if let Some((_, name)) = regions.iter().nth(1) {
        let first = regions.iter().next().map(|(_, n)| n.to_string());
        filter
            .set_regions(&format!("{},{name}", first.unwrap_or_default()))
            .unwrap();
    }
    filter.summary = SummaryScope::Kept;
    vec![
        ExportOptions::default(),
        ExportOptions {
            chrome: ChromeOptions {
                by_sm: true,
                raw_events: true,
            },
            summary: SummaryOptions {
                breakdown: Breakdown::PerWarp,
                ..SummaryOptions::default()
            },
            ..ExportOptions::default()
        },
        ExportOptions {
            filter: Some(filter),
            summary: SummaryOptions {
                breakdown: Breakdown::PerBlock,
                ..SummaryOptions::default()
            },
            ..ExportOptions::default()
        },
    ]
}

/// Checks that `cap` exports to the same bytes with one thread and with
/// each of `threads`, in every format and option set.
fn assert_threads_agree(name: &str, cap: &Capture, threads: &[usize]) {
    let dir = tempfile::tempdir().unwrap();
    let formats = [
        TraceFormat::Chrome,
        TraceFormat::Perfetto(PerfettoOptions::default()),
        TraceFormat::Perfetto(PerfettoOptions {
            args: true,
            ..PerfettoOptions::default()
        }),
    ];
    for (k, base) in option_sets(&cap.regions).into_iter().enumerate() {
        for format in formats {
            let opts = |threads| ExportOptions {
                threads,
                ..base.clone()
            };
            let one = export(cap, &dir.path().join("out"), format, &opts(1));
            let wrote = !one.0.is_empty() || one.1.contains("error");
            assert!(wrote || cap.launches.is_empty(), "{name}: nothing written");
            for &t in threads {
                let many = export(cap, &dir.path().join("out"), format, &opts(t));
                assert_eq!(
                    many.1, one.1,
                    "{name}: options {k}, {format:?}, {t} threads"
                );
                let names = |w: &Written| w.0.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                assert_eq!(names(&many), names(&one), "{name}");
                for (a, b) in one.0.iter().zip(&many.0) {
                    assert!(
                        a.1 == b.1,
                        "{name}: options {k}, {format:?}, {t} threads: {} differs",
                        a.0
                    );
                }
            }
        }
        for l in &cap.launches {
            let opts = |threads| ExportOptions {
                threads,
                ..base.clone()
            };
            let one = summarize_launch(l, &cap.device, &cap.regions, &opts(1));
            for &t in threads {
                let many = summarize_launch(l, &cap.device, &cap.regions, &opts(t));
                assert_eq!(format!("{many:?}"), format!("{one:?}"), "{name}: summary");
            }
        }
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

#[test]
fn committed_captures_export_alike_on_any_number_of_threads() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ktrace"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for path in names {
        let cap = Capture::read(&path).unwrap();
        assert_threads_agree(&path.display().to_string(), &cap, &[3]);
    }
}

/// A launch of `blocks` blocks of 4 warps with random events: regions
/// 0 to 5 and ids outside the table (300, 0xfffe, 0xffff), begins and ends
/// that need not match, overlapping spans, marks, values, rings that
/// overflow, warps that never flush.
fn random_launch(seed: u64, blocks: u32, layout: u32) -> Capture {
    let mut next = xorshift64(seed);
    let cap = 64;
    let mut launch = SynthLaunch::all_traced(blocks, 128, cap).layout(layout);
    let regions = [0u16, 1, 2, 3, 4, 5, 300, 0xfffe, 0xffff];
    for block in 0..blocks {
        for warp in 0..4 {
            let mut w = SynthWarp::new(block, warp).sm((block % 7) as u16);
            if layout >= 2 {
                w = w.anchors(150);
            }
            let n = next() % 90;
            let mut at = 10 + next() % 50;
            for _ in 0..n {
                let r = next();
                let region = regions[(r % 100) as usize % 8 + usize::from(r % 100 >= 97)];
                let kind = match (r >> 8) % 7 {
                    0..=2 => EventKind::Begin,
                    3..=5 => EventKind::End,
                    _ => EventKind::Mark,
                };
                w = if layout >= 3 && (r >> 16) % 5 == 0 {
                    w.event_value(at, region, kind, (r >> 20) as u32)
                } else {
                    w.event(at, region, kind)
                };
                at += (r >> 32) % 40;
            }
            if next() % 11 == 0 {
                w = w.never_flushed();
            }
            launch.write(&w);
        }
    }
    let regions: Vec<(u16, String)> = (0..6).map(|i| (i, format!("r{i}"))).collect();
    let table: Vec<(u16, &str)> = regions.iter().map(|(i, n)| (*i, n.as_str())).collect();
    Capture {
        regions: Regions::from_table(&table),
        launches: vec![launch.into_capture()],
        ..ktrace_runtime::synth::sample_capture()
    }
}

#[test]
fn synthetic_captures_export_alike_on_any_number_of_threads() {
    for (seed, blocks, layout) in [(1u64, 3u32, 3u32), (2, 40, 3), (3, 97, 2), (4, 60, 1)] {
        let cap = random_launch(seed * 0x9e37_79b9, blocks, layout);
        assert_threads_agree(&format!("random {seed}"), &cap, &[2, 7]);
    }
    for (name, cap) in [
        ("sample", ktrace_runtime::synth::sample_capture()),
        (
            "unknown regions",
            ktrace_runtime::synth::unknown_regions_capture(),
        ),
        ("continuous", ktrace_runtime::synth::continuous_capture()),
    ] {
        assert_threads_agree(name, &cap, &[2, 4]);
    }
}

#[test]
fn corrupted_captures_export_alike_on_any_number_of_threads() {
    let cap = Capture::read(data_dir().join("h200_gemm2048_v3.ktrace")).unwrap();
    let mut next = xorshift64(0x5eed_1234_abcd);
    for round in 0..4 {
        let mut c = cap.clone();
        for l in &mut c.launches {
            let n = l.raw.len() as u64;
            for _ in 0..200 {
                let at = (next() % n) as usize;
                l.raw[at] = next() as u8;
            }
        }
        assert_threads_agree(&format!("corrupted {round}"), &c, &[3]);
    }
}
