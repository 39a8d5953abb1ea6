use ktrace_runtime::export::launches::{capture_launches, StepRange};
use ktrace_runtime::synth::continuous_capture;

use super::*;

fn sel(kernels: &[&str], steps: Option<&str>) -> LaunchSelection {
    LaunchSelection {
        kernels: kernels.iter().map(|k| k.to_string()).collect(),
        steps: steps.map(|s| StepRange::parse(s).unwrap()),
    }
}

/// What the whole capture picks: `--launch`, then the selection.
fn picked_whole(cap: &Capture, launch: Option<u32>, sel: &LaunchSelection) -> Vec<u32> {
    let infos = capture_launches(cap).unwrap();
    let infos: Vec<_> = infos
        .into_iter()
        .filter(|i| launch.map_or(true, |n| i.launch == n))
        .collect();
    sel.select(&infos, &cap.steps)
        .unwrap()
        .iter()
        .map(|i| i.launch)
        .collect()
}

#[test]
fn read_picked_keeps_the_launches_picked_and_the_rest_of_the_capture() {
    let dir = std::env::temp_dir().join(format!("ktrace-picked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.ktrace");
    let cap = continuous_capture();
    cap.save(&path).unwrap();
    let whole = Capture::read(&path).unwrap();
    let cases = [
        (None, sel(&[], None)),
        (Some(3), sel(&[], None)),
        (None, sel(&["gemm"], None)),
        (None, sel(&["n*"], Some("11.."))),
        (Some(4), sel(&["gemm"], Some("11"))),
        (None, sel(&[], Some("10..12"))),
    ];
    for (launch, s) in cases {
        let got = read_picked(&path, launch, &s).unwrap();
        let want = picked_whole(&whole, launch, &s);
        let kept: Vec<u32> = got.launches.iter().map(|l| l.shape.launch).collect();
        assert_eq!(kept, want, "{launch:?} {s:?}");
        let expect = Capture {
            launches: whole
                .launches
                .iter()
                .filter(|l| want.contains(&l.shape.launch))
                .cloned()
                .collect(),
            ..whole.clone()
        };
        assert_eq!(got, expect, "{launch:?} {s:?}");
    }
    let e = read_picked(&path, Some(9), &sel(&[], None)).unwrap_err();
    assert_eq!(e.to_string(), whole.launch(9).unwrap_err().to_string());
    let e = read_picked(&path, Some(5), &sel(&["gemm"], None)).unwrap_err();
    assert!(e.to_string().contains("norm (1 launch)"), "{e}");
    let e = read_picked(&path, None, &sel(&[], Some("3..5"))).unwrap_err();
    assert!(e.to_string().contains("indices 10 to 12"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
