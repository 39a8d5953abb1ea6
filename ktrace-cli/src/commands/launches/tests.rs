use ktrace_runtime::export::launches::StepRange;
use ktrace_runtime::synth::continuous_capture;

use super::*;

fn sel(kernels: &[&str], steps: Option<&str>) -> LaunchSelection {
    LaunchSelection {
        kernels: kernels.iter().map(|k| k.to_string()).collect(),
        steps: steps.map(|s| StepRange::parse(s).unwrap()),
    }
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
    let cells = |l: &str| {
        l.split("  ")
            .filter(|c| !c.is_empty())
            .map(str::trim)
            .map(String::from)
            .collect::<Vec<_>>()
    };
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
    let cells = |l: &str| {
        l.split("  ")
            .filter(|c| !c.is_empty())
            .map(str::trim)
            .map(String::from)
            .collect::<Vec<_>>()
    };
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
