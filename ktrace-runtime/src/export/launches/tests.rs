use super::*;
use crate::format::capture::HostSpan;
use crate::synth::{continuous_capture, timed_launch, BASE_GT};
use crate::timeline::ClockSync;

/// The GPU runs 1000 ns ahead of the host.
fn syncs() -> Vec<ClockSync> {
    continuous_capture().clock_syncs
}

fn capture() -> Capture {
    continuous_capture()
}

#[test]
fn the_gpu_span_comes_from_opened_and_flushed_slots_only() {
    let l = timed_launch(3, "gemm", BASE_GT, 4000);
    let i = launch_info(&l, None).unwrap();
    assert_eq!((i.launch, i.kernel, i.warps, i.flushed), (3, "gemm", 3, 2));
    // The never-flushed warp opened 500 ns earlier: not counted.
    assert_eq!(
        i.gpu,
        Some(GpuSpan {
            begin_ns: BASE_GT,
            end_ns: BASE_GT + 4000
        })
    );
    assert_eq!(i.duration_ns(), Some(4000));
    assert_eq!((i.host, i.origin), (None, None));
}

#[test]
fn a_launch_without_a_flushed_slot_has_no_span() {
    let mut l = timed_launch(0, "k", BASE_GT, 1000);
    let slot = l.shape.slot_bytes() as usize;
    l.raw[..2 * slot].fill(0);
    let i = launch_info(&l, None).unwrap();
    assert_eq!((i.warps, i.flushed, i.gpu), (1, 0, None));
    let s = kernel_stats(&[i], &[], 3);
    assert_eq!((s[0].launches, s[0].timed, s[0].duration), (1, 0, None));
    assert!(s[0].slowest.is_empty() && s[0].outliers.is_empty());
}

#[test]
fn the_host_range_is_the_gpu_span_on_the_axis_else_the_host_span() {
    let mut l = timed_launch(0, "k", BASE_GT + 5000, 2000);
    l.host_span = Some(HostSpan {
        enqueue_ns: 100,
        complete_ns: 200,
    });
    let axis = HostAxis::new(&syncs()).unwrap().unwrap();
    let on_axis = launch_info(&l, Some(&axis)).unwrap().host.unwrap();
    let host0 = BASE_GT as i64 - 1000;
    assert_eq!(
        (on_axis.begin_ns, on_axis.end_ns, on_axis.source),
        (host0 + 5000, host0 + 7000, HostSource::GpuSpan)
    );
    let recorded = launch_info(&l, None).unwrap().host.unwrap();
    assert_eq!(
        (recorded.begin_ns, recorded.end_ns, recorded.source),
        (100, 200, HostSource::Enqueue)
    );
}

#[test]
fn duration_statistics_interpolate_between_ranks() {
    let d = DurationStats::of(&[4000, 1000, 10_000, 2000, 3000]).unwrap();
    assert_eq!(d.p50_ns, 3000.0);
    // Rank 0.9 * 4 = 3.6: 4000 + 0.6 * 6000.
    assert!((d.p90_ns - 7600.0).abs() < 1e-9, "{d:?}");
    assert!((d.p99_ns - 9760.0).abs() < 1e-9, "{d:?}");
    assert_eq!((d.min_ns, d.max_ns, d.mean_ns), (1000, 10_000, 4000.0));
    assert_eq!(DurationStats::of(&[]), None);
    let one = DurationStats::of(&[7]).unwrap();
    assert_eq!((one.p50_ns, one.p99_ns, one.max_ns), (7.0, 7.0, 7));
}

#[test]
fn kernels_in_order_of_first_launch_with_slowest_outliers_and_sites() {
    let cap = capture();
    let infos = capture_launches(&cap).unwrap();
    let s = kernel_stats(&infos, &cap.sites, 2);
    let names: Vec<&str> = s.iter().map(|k| k.kernel).collect();
    assert_eq!(names, ["gemm", "norm", ""]);
    let gemm = &s[0];
    assert_eq!((gemm.launches, gemm.timed), (5, 5));
    assert_eq!(gemm.duration.unwrap().p50_ns, 3000.0);
    let ld = |launch, duration_ns| LaunchDuration {
        launch,
        duration_ns,
    };
    assert_eq!(gemm.slowest, [ld(4, 10_000), ld(3, 4000)]);
    // Over 1.5 x 3000 ns.
    assert_eq!(gemm.outliers, [ld(4, 10_000)]);
    assert_eq!(gemm.sites.len(), 1);
    assert_eq!((gemm.sites[0].kept, gemm.sites[0].dropped), (5, 2));
    let norm = &s[1];
    assert_eq!((norm.launches, norm.outliers.len()), (2, 0));
    assert_eq!(norm.sites[0].site, 1);
    // The unnamed kernel matches no site by name and has no origin.
    assert!(s[2].sites.is_empty());
}

#[test]
fn a_site_matches_by_origin_when_the_names_differ() {
    let cap = capture();
    let infos = capture_launches(&cap).unwrap();
    let mut sites = cap.sites.clone();
    sites[1].kernel = "norm_kernel<float>".into();
    let s = kernel_stats(&infos, &sites, 1);
    assert_eq!(s[1].sites.len(), 1);
    assert_eq!(s[1].sites[0].kernel, "norm_kernel<float>");
}

/// Each of `cap`'s steps' index and the launches in it
/// ([`step_launches`]).
fn launches_per_step(cap: &Capture) -> Vec<(u64, Vec<u32>)> {
    let infos = capture_launches(cap).unwrap();
    step_launches(&cap.steps, &infos)
        .into_iter()
        .map(|s| (s.step.index, s.launches))
        .collect()
}

#[test]
fn steps_hold_the_launches_that_overlap_them() {
    let cap = capture();
    let per_step = launches_per_step(&cap);
    // Host 0-250 µs: gemm 0, 1, 2 (at 0, 100, 200 µs) and norm 5 (50 µs);
    // 250-500: gemm 3 (300), 4 (400) and norm 6 (250: starts on the edge);
    // 500-750: the unnamed kernel (600).
    assert_eq!(
        per_step,
        [(10, vec![0, 1, 2, 5]), (11, vec![3, 4, 6]), (12, vec![7]),]
    );
}

/// The capture of [`capture`] from a host that ran ahead: the device
/// recorded gemm 0 and 1 in step 10, 2 and 3 in step 11 and 4 in step 12
/// (their host times say 0, 1, 2 in step 10 and 3, 4 in step 11); the
/// norm launches have no recorded step.
fn ahead_capture() -> Capture {
    let mut cap = capture();
    for (l, step) in cap.launches.iter_mut().zip([10, 10, 11, 11, 12]) {
        l.origin.as_mut().expect("a site's launch").step = Some(step);
    }
    cap
}

#[test]
fn a_step_recorded_on_the_device_places_its_launch() {
    let cap = ahead_capture();
    let per_step = launches_per_step(&cap);
    // gemm by its recorded step; norm 5, 6 and the unnamed 7 by host time.
    assert_eq!(
        per_step,
        [(10, vec![0, 1, 5]), (11, vec![2, 3, 6]), (12, vec![4, 7])]
    );
    let sel = |k: &str, s: &str| LaunchSelection {
        kernels: vec![k.to_string()],
        steps: Some(StepRange::parse(s).unwrap()),
    };
    assert_eq!(picked(&sel("gemm", "12"), &cap).unwrap(), [4]);
    assert_eq!(picked(&sel("gemm", "..11"), &cap).unwrap(), [0, 1]);
    assert_eq!(picked(&sel("*", "11"), &cap).unwrap(), [2, 3, 6]);
    // Every gemm launch has its step: the error says so, without the
    // host-time hint.
    let mut none_in_13 = cap.clone();
    none_in_13.steps.push(HostStep {
        name: "decode".into(),
        index: 13,
        begin_ns: 0,
        end_ns: 1,
    });
    let e = picked(&sel("gemm", "13"), &none_in_13).unwrap_err();
    assert_eq!(
        e,
        "host steps \"13..14\": no launch of a kernel matching gemm was enqueued during the 1 \
         steps in 13..14 (every launch's step was recorded on the device)"
    );
}

#[test]
fn overlap_is_half_open_and_a_point_counts() {
    let step = HostStep {
        begin_ns: 100,
        end_ns: 200,
        ..HostStep::default()
    };
    let r = |b, e| HostRange {
        begin_ns: b,
        end_ns: e,
        source: HostSource::Enqueue,
    };
    assert!(r(50, 101).overlaps(&step));
    assert!(!r(50, 100).overlaps(&step));
    assert!(r(199, 300).overlaps(&step));
    assert!(!r(200, 300).overlaps(&step));
    assert!(r(150, 150).overlaps(&step) && r(100, 100).overlaps(&step));
    assert!(!r(200, 200).overlaps(&step));
}

#[test]
fn step_ranges_parse_as_rust_ranges() {
    let r = |t: &str| StepRange::parse(t).unwrap();
    assert_eq!(
        r("2..5"),
        StepRange {
            start: Some(2),
            end: Some(5)
        }
    );
    assert!(r("2..5").contains(4) && !r("2..5").contains(5) && !r("2..5").contains(1));
    assert!(r("2..").contains(u64::MAX) && !r("2..").contains(1));
    assert!(r("..3").contains(0) && !r("..3").contains(3));
    assert_eq!(r("7"), r("7..8"));
    assert_eq!(r(" 1 .. 4 ").to_string(), "1..4");
    assert_eq!(r("..").to_string(), "..");
    for (bad, says) in [
        ("5..2", "holds no index"),
        ("3..3", "holds no index"),
        ("a..4", "expected a range"),
        ("", "expected a range"),
        ("1..=3", "..="),
        ("-1..", "expected a range"),
    ] {
        let e = StepRange::parse(bad).unwrap_err();
        assert_eq!(e.part, FilterPart::Steps);
        assert!(e.to_string().contains(says), "{bad}: {e}");
        assert!(e.to_string().starts_with("host steps "), "{e}");
    }
}

fn picked(sel: &LaunchSelection, cap: &Capture) -> std::result::Result<Vec<u32>, String> {
    let infos = capture_launches(cap).unwrap();
    sel.select(&infos, &cap.steps)
        .map(|v| v.iter().map(|i| i.launch).collect())
        .map_err(|e| e.to_string())
}

#[test]
fn a_selection_keeps_kernels_and_steps() {
    let cap = capture();
    let all = LaunchSelection::default();
    assert!(all.keeps_all());
    assert_eq!(picked(&all, &cap).unwrap(), [0, 1, 2, 3, 4, 5, 6, 7]);
    let gemm = LaunchSelection {
        kernels: vec!["ge*".into()],
        steps: None,
    };
    assert_eq!(picked(&gemm, &cap).unwrap(), [0, 1, 2, 3, 4]);
    let two = LaunchSelection {
        kernels: vec!["norm".into(), "gemm".into()],
        steps: Some(StepRange::parse("11..").unwrap()),
    };
    assert_eq!(picked(&two, &cap).unwrap(), [3, 4, 6]);
    let unnamed = LaunchSelection {
        kernels: vec![String::new()],
        steps: Some(StepRange::parse("12").unwrap()),
    };
    assert_eq!(picked(&unnamed, &cap).unwrap(), [7]);
}

#[test]
fn a_selection_that_keeps_nothing_says_what_there_is() {
    let cap = capture();
    let sel = |k: &[&str], s: Option<&str>| LaunchSelection {
        kernels: k.iter().map(|k| k.to_string()).collect(),
        steps: s.map(|s| StepRange::parse(s).unwrap()),
    };
    let e = picked(&sel(&["attn*"], None), &cap).unwrap_err();
    assert_eq!(
        e,
        "kernel pattern \"attn*\": no launch's kernel matches; the launches' kernels: gemm \
         (5 launches), norm (2 launches), (unnamed) (1 launch)"
    );
    let e = picked(&sel(&[], Some("20..")), &cap).unwrap_err();
    assert_eq!(
        e,
        "host steps \"20..\": no host step has an index in 20..; the capture's 3 steps have \
         indices 10 to 12"
    );
    let e = picked(&sel(&["gemm"], Some("12")), &cap).unwrap_err();
    assert_eq!(
        e,
        "host steps \"12..13\": no launch of a kernel matching gemm overlaps the 1 steps in \
         12..13 (a launch without a step recorded on the device is in a step when it runs \
         during the step's host time; a host that enqueues ahead of the device ends its steps \
         before their launches run: record the steps on the device with \
         ContinuousConfig::steps_on_device, on by default)"
    );
    let no_steps = Capture {
        steps: Vec::new(),
        ..capture()
    };
    let e = picked(&sel(&[], Some("0..")), &no_steps).unwrap_err();
    assert!(e.contains("holds no host steps"), "{e}");
    // Without clock syncs or host spans no launch has a host time.
    let no_time = Capture {
        clock_syncs: Vec::new(),
        ..capture()
    };
    let e = picked(&sel(&[], Some("10")), &no_time).unwrap_err();
    assert!(e.contains("no launch has a host time"), "{e}");
}

#[test]
fn launch_facts_tell_what_launch_info_tells() {
    let mut cap = capture();
    // One launch with a recorded host span: placed by it without syncs.
    cap.launches[7].host_span = Some(HostSpan {
        enqueue_ns: 5,
        complete_ns: 9,
    });
    let axis = HostAxis::new(&cap.clock_syncs).unwrap().unwrap();
    let facts = CaptureFacts::of(cap.clone()).unwrap();
    assert_eq!(facts.launches.len(), cap.launches.len());
    for (l, f) in cap.launches.iter().zip(&facts.launches) {
        for a in [None, Some(&axis)] {
            assert_eq!(
                format!("{:?}", f.info(a)),
                format!("{:?}", launch_info(l, a).unwrap())
            );
        }
        assert_eq!(*f, LaunchFacts::of(l).unwrap());
    }
    // The launches of one kernel share its name.
    let gemm: Vec<&LaunchFacts> = facts
        .launches
        .iter()
        .filter(|f| &*f.kernel == "gemm")
        .collect();
    assert!(std::sync::Arc::ptr_eq(&gemm[0].kernel, &gemm[4].kernel));
    assert_eq!(
        format!("{:?}", facts.infos().unwrap()),
        format!("{:?}", capture_launches(&cap).unwrap())
    );
}

#[test]
fn read_facts_takes_every_launch_and_keeps_those_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.ktrace");
    let cap = capture();
    cap.save(&path).unwrap();
    let none = read_facts(&path, |_| false).unwrap();
    let whole = CaptureFacts::of(Capture::read(&path).unwrap()).unwrap();
    assert_eq!(none.launches, whole.launches);
    assert!(none.capture.launches.is_empty());
    assert_eq!(
        none.capture,
        Capture {
            launches: Vec::new(),
            ..whole.capture.clone()
        }
    );
    let norm = read_facts(&path, |l| l.kernel == "norm").unwrap();
    assert_eq!(norm.launches, whole.launches);
    let kept: Vec<u32> = norm
        .capture
        .launches
        .iter()
        .map(|l| l.shape.launch)
        .collect();
    assert_eq!(kept, [5, 6]);
}

#[test]
fn select_indices_are_the_positions_select_keeps() {
    let cap = capture();
    let infos = capture_launches(&cap).unwrap();
    let sel = LaunchSelection {
        kernels: vec!["gemm".into(), "norm".into()],
        steps: Some(StepRange::parse("11..").unwrap()),
    };
    let at = sel.select_indices(&infos, &cap.steps).unwrap();
    let kept: Vec<u32> = sel
        .select(&infos, &cap.steps)
        .unwrap()
        .iter()
        .map(|i| i.launch)
        .collect();
    assert_eq!(
        at.iter().map(|&i| infos[i].launch).collect::<Vec<_>>(),
        kept
    );
    assert_eq!(kept, [3, 4, 6]);
}
