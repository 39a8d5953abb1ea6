use ktrace_runtime::export::launches::StepRange;
use ktrace_runtime::synth::continuous_capture;

use super::*;

fn sel(kernels: &[&str], steps: Option<&str>) -> LaunchSelection {
    LaunchSelection {
        kernels: kernels.iter().map(|k| k.to_string()).collect(),
        steps: steps.map(|s| StepRange::parse(s).unwrap()),
    }
}

/// The cells of a table line: its runs of text between two or more spaces.
fn cells(l: &str) -> Vec<String> {
    l.split("  ")
        .filter(|c| !c.is_empty())
        .map(str::trim)
        .map(String::from)
        .collect()
}

#[test]
fn per_kernel_table_with_outliers_and_dropped_sites() {
    let out = text(&continuous_capture(), &sel(&[], None), false).unwrap();
    println!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "warning: site 0 (gemm): 2 launches dropped (chosen, but no slab was free); 5 of 9 kept"
    );
    assert_eq!(lines[1], "8 of 8 launches, 3 kernels");
    assert_eq!(
        cells(lines[2]),
        ["kernel", "launches", "p50", "p99", "max", "slowest launch"]
    );
    assert_eq!(
        cells(lines[3]),
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
        cells(lines[4]),
        [
            "norm",
            "2",
            "500.0 ns",
            "500.0 ns",
            "500.0 ns",
            "launch 5 (500.0 ns)"
        ]
    );
    assert_eq!(
        cells(lines[5]),
        [
            "(unnamed)",
            "1",
            "100.0 ns",
            "100.0 ns",
            "100.0 ns",
            "launch 7 (100.0 ns)"
        ]
    );
    assert_eq!(
        lines[6],
        "  gemm: 1 outlier (over 1.5 x p50): launch 4 (10.000 us)"
    );
    assert_eq!(lines.len(), 7, "{out}");
}

#[test]
fn a_site_that_kept_the_newest_says_its_losses_were_overwritten() {
    let mut cap = continuous_capture();
    cap.sites[0].when_full = ktrace_runtime::format::site::WhenFull::KeepNewest;
    let out = text(&cap, &sel(&[], None), false).unwrap();
    assert_eq!(
        out.lines().next().unwrap(),
        "warning: site 0 (gemm): 2 launches overwritten (the ring was full: newer launches wrote \
         over them); 5 of 9 kept"
    );
}

#[test]
fn each_launch_with_its_site_start_and_steps() {
    let out = text(
        &continuous_capture(),
        &sel(&["gemm", "norm"], Some("11..")),
        true,
    )
    .unwrap();
    println!("{out}");
    assert!(out.contains("\n3 of 8 launches, 2 kernels\n"), "{out}");
    let table: Vec<&str> = out.lines().skip_while(|l| !l.is_empty()).skip(1).collect();
    assert_eq!(
        cells(table[0]),
        [
            "launch",
            "kernel",
            "site/epoch",
            "start",
            "duration",
            "warps",
            "steps"
        ]
    );
    assert_eq!(
        cells(table[1]),
        [
            "3",
            "gemm",
            "0/3",
            "+300.000 us",
            "4.000 us",
            "3 (1 unflushed)",
            "11"
        ]
    );
    assert_eq!(
        cells(table[2])[..5],
        ["4", "gemm", "0/4", "+400.000 us", "10.000 us"]
    );
    assert_eq!(
        cells(table[3]),
        [
            "6",
            "norm",
            "1/1",
            "+250.000 us",
            "500.0 ns",
            "3 (1 unflushed)",
            "11"
        ]
    );
    assert_eq!(table.len(), 4, "{out}");
}

#[test]
fn a_cut_capture_says_where() {
    let cap = Capture {
        stream_end: Some(StreamEnd::Cut {
            offset: 4096,
            left: 17,
        }),
        sites: Vec::new(),
        ..continuous_capture()
    };
    let out = text(&cap, &sel(&["norm"], None), false).unwrap();
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "capture cut at byte 4096: everything before it was read (17 bytes after it, an \
         incomplete record, were not)"
    );
    assert!(!out.contains("warning"), "{out}");
    assert!(out.contains("\n2 of 8 launches, 1 kernel\n"), "{out}");
    let closed = Capture {
        stream_end: Some(StreamEnd::Closed),
        ..cap
    };
    assert!(!text(&closed, &sel(&[], None), false)
        .unwrap()
        .contains("cut"));
}

#[test]
fn a_selection_of_nothing_is_an_error() {
    let e = text(&continuous_capture(), &sel(&["attn"], None), false).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("kernel pattern \"attn\": no launch's kernel matches"),
        "{e}"
    );
    let e = text(&continuous_capture(), &sel(&[], Some("3..5")), false).unwrap_err();
    assert!(e.to_string().contains("indices 10 to 12"), "{e}");
}

/// A directory of its own under the system's temporary one, removed when
/// dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("ktrace-launches-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `cap` to `path` as a continuous session does: its clock syncs
/// and steps among its launches (the first sync first, then a step and a
/// sync after every third launch), the sites last; then the end record
/// when `finish`, else the first bytes of a launch record (as if its
/// writer were stopped inside it). The records of the file `cap` saves,
/// put in that order.
fn write_interleaved(cap: &Capture, path: &Path, finish: bool) {
    let mut bytes = Vec::new();
    cap.write_to(&mut bytes).unwrap();
    // The head is what a capture without records writes before its end
    // record (16 bytes of header, 16 of payload).
    let mut empty = Vec::new();
    Capture {
        launches: Vec::new(),
        clock_syncs: Vec::new(),
        steps: Vec::new(),
        sites: Vec::new(),
        ..cap.clone()
    }
    .write_to(&mut empty)
    .unwrap();
    let head = empty.len() - 32;
    let mut by_kind: [Vec<&[u8]>; 6] = Default::default();
    let mut at = head;
    while at < bytes.len() {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let len = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        by_kind[kind].push(&bytes[at..at + 16 + len]);
        at += 16 + len;
    }
    let [_, launches, syncs, steps, sites, end] = by_kind;
    let (mut syncs, mut steps) = (syncs.into_iter(), steps.into_iter());
    let mut out = bytes[..head].to_vec();
    out.extend(syncs.next().unwrap_or_default());
    for (i, l) in launches.iter().enumerate() {
        out.extend(*l);
        if i % 3 == 2 {
            out.extend(steps.next().unwrap_or_default());
            out.extend(syncs.next().unwrap_or_default());
        }
    }
    steps.chain(syncs).chain(sites).for_each(|r| out.extend(r));
    if finish {
        out.extend(end[0]);
    } else {
        out.extend(&launches[0][..40]);
    }
    std::fs::write(path, out).unwrap();
}

/// Selections whose text the streamed and the whole read must agree on.
fn selections() -> Vec<LaunchSelection> {
    vec![
        sel(&[], None),
        sel(&["gemm"], None),
        sel(&["n*", ""], None),
        sel(&[], Some("11..")),
        sel(&["gemm", "norm"], Some("10..12")),
    ]
}

#[test]
fn streamed_text_of_a_version_3_file_is_the_text_of_the_capture() {
    let d = TempDir::new("stream");
    let cap = continuous_capture();
    let path = d.0.join("continuous.ktrace");
    write_interleaved(&cap, &path, true);
    let read = Capture::read(&path).unwrap();
    for s in selections() {
        for each in [false, true] {
            assert_eq!(
                file_text(&path, &s, each).unwrap(),
                text(&read, &s, each).unwrap(),
                "{s:?}, each {each}"
            );
        }
    }
    // The file read whole is the capture, but for the order of its syncs
    // and steps among the launches: the text is the capture's.
    assert_eq!(
        file_text(&path, &sel(&[], Some("11..")), true).unwrap(),
        text(&cap, &sel(&[], Some("11..")), true).unwrap()
    );
    // Errors are the same too.
    for s in [sel(&["attn"], None), sel(&[], Some("3..5"))] {
        assert_eq!(
            file_text(&path, &s, false).unwrap_err().to_string(),
            text(&read, &s, false).unwrap_err().to_string()
        );
    }
}

#[test]
fn streamed_text_of_a_cut_file_is_the_text_of_the_capture() {
    let d = TempDir::new("cut");
    let path = d.0.join("cut.ktrace");
    write_interleaved(&continuous_capture(), &path, false);
    let read = Capture::read(&path).unwrap();
    assert!(matches!(read.stream_end, Some(StreamEnd::Cut { .. })));
    for each in [false, true] {
        let out = file_text(&path, &sel(&[], None), each).unwrap();
        assert!(out.starts_with("capture cut at byte"), "{out}");
        assert_eq!(out, text(&read, &sel(&[], None), each).unwrap());
    }
}

#[test]
fn a_capture_of_thousands_of_small_launches() {
    use ktrace_runtime::format::capture::{HostStep, LaunchOrigin};
    use ktrace_runtime::synth::{timed_launch, BASE_GT};
    let d = TempDir::new("thousands");
    let kernels = ["gemm", "norm", "attn"];
    let n = 3000u32;
    let launches = (0..n)
        .map(|i| {
            let k = i % 3;
            let dur = 1000 + u64::from(i % 7) * 100 + u64::from(i == 1500) * 50_000;
            let mut l = timed_launch(i, kernels[k as usize], BASE_GT + u64::from(i) * 20_000, dur);
            l.origin = Some(LaunchOrigin {
                site: k,
                epoch: i / 3,
                grid_id: u64::from(k),
                step: None,
            });
            l
        })
        .collect();
    let host0 = BASE_GT - 1000;
    let steps = (0..100)
        .map(|k| HostStep {
            name: "decode".into(),
            index: k,
            begin_ns: host0 + k * 600_000,
            end_ns: host0 + (k + 1) * 600_000,
        })
        .collect();
    let cap = Capture {
        launches,
        steps,
        ..continuous_capture()
    };
    let path = d.0.join("many.ktrace");
    write_interleaved(&cap, &path, true);
    let out = file_text(&path, &sel(&[], None), false).unwrap();
    assert!(out.contains("3000 of 3000 launches, 3 kernels\n"), "{out}");
    assert!(out.contains("launch 1500 (51.200 us)"), "{out}");
    assert_eq!(out, text(&cap, &sel(&[], None), false).unwrap());
    let s = sel(&["norm"], Some("10..20"));
    let each = file_text(&path, &s, true).unwrap();
    assert_eq!(each, text(&cap, &s, true).unwrap());
    assert!(each.contains(" of 3000 launches, 1 kernel\n"), "{each}");
}

#[test]
fn launches_that_ran_together_are_counted_per_site() {
    // The real capture of a kernel launched after itself with programmatic
    // dependent launch (tests/pdl_overlap.rs): 80 launches of one site.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/h100_pdl_overlap.ktrace");
    let out = file_text(&path, &sel(&[], None), false).unwrap();
    println!("{out}");
    let line = out
        .lines()
        .find(|l| l.contains("consecutive launches"))
        .expect("an overlap line");
    assert!(
        line.starts_with(
            "  pdl_probe (site 0): 66 of 79 consecutive launches began before the one before \
             them ended, by "
        ),
        "{line}"
    );
    // The synthetic capture's launches never overlap: no such line.
    let plain = text(&continuous_capture(), &sel(&[], None), false).unwrap();
    assert!(!plain.contains("consecutive launches"), "{plain}");
}
