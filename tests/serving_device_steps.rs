//! Host steps recorded on the device, from a real capture: the windows check
//! of the serving_loop example (`serving_loop windows`), recorded once steps
//! were written on the device. 400 steps of two sites (the second on another
//! stream, its launches ten times shorter) enqueued without waiting, so the
//! host ran far ahead of the device, then one launch of a third site a step,
//! the host waiting for each. Each launch must carry the step it was
//! enqueued in, and `--steps` must select by it; the same check on the
//! capture written before steps were recorded on the device finds no launch
//! and says why.

use std::path::Path;

use ktrace_runtime::export::launches::{
    capture_launches, step_launches, LaunchSelection, StepRange,
};
use ktrace_runtime::Capture;

/// The capture recorded with steps on the device.
const WITH_STEPS: &str = "h100_serving_windows_steps.ktrace";
/// The capture of the same check recorded before.
const BEFORE: &str = "h200_serving_windows.ktrace";

fn read(name: &str) -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data")
        .join(name);
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn steps(range: &str) -> LaunchSelection {
    LaunchSelection {
        kernels: Vec::new(),
        steps: Some(StepRange::parse(range).unwrap()),
    }
}

#[test]
fn every_launch_carries_the_step_it_was_enqueued_in() {
    let cap = read(WITH_STEPS);
    let mut per_site = [0; 3];
    for l in &cap.launches {
        let o = l.origin.expect("a site's launch");
        // Launch k of the steps sites (0, 2) was enqueued in step k; launch
        // k of the seconds site (1) in step 400 + k.
        let want = u64::from(o.epoch) + if o.site == 1 { 400 } else { 0 };
        assert_eq!(o.step, Some(want), "{o:?}");
        per_site[o.site as usize] += 1;
    }
    assert_eq!((per_site[0], per_site[2]), (20, 20));
    assert!(per_site[1] > 100, "{per_site:?}");
    // The host ran ahead: the steps sites' launches ran after their steps
    // had ended, so by time they would be in no step of theirs.
    let infos = capture_launches(&cap).unwrap();
    let late = infos
        .iter()
        .filter(|i| i.origin.unwrap().site != 1)
        .filter(|i| {
            let s = &cap.steps[i.origin.unwrap().epoch as usize];
            i.host.unwrap().begin_ns > s.end_ns as i64
        })
        .count();
    assert_eq!(late, 40, "every steps-site launch ran after its step ended");
}

#[test]
fn steps_select_by_the_recorded_step() {
    let cap = read(WITH_STEPS);
    let infos = capture_launches(&cap).unwrap();
    let picked: Vec<(u32, u32)> = steps("100..105")
        .select(&infos, &cap.steps)
        .unwrap()
        .iter()
        .map(|i| (i.origin.unwrap().site, i.origin.unwrap().epoch))
        .collect();
    let mut sorted = picked.clone();
    sorted.sort_unstable();
    let want: Vec<(u32, u32)> = [0, 2]
        .into_iter()
        .flat_map(|s| (100..105).map(move |k| (s, k)))
        .collect();
    assert_eq!(sorted, want);
    // Per step: step 110 holds launch 110 of both steps sites, step 400 + k
    // launch k of the seconds site.
    let per = step_launches(&cap.steps, &infos);
    let of = |index: u64| -> Vec<(u32, u32)> {
        let s = per.iter().find(|s| s.step.index == index).unwrap();
        let mut v: Vec<(u32, u32)> = s
            .launches
            .iter()
            .map(|&l| {
                let o = infos
                    .iter()
                    .find(|i| i.launch == l)
                    .unwrap()
                    .origin
                    .unwrap();
                (o.site, o.epoch)
            })
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(of(110), [(0, 110), (2, 110)]);
    assert_eq!(of(99), []);
    let seconds = cap
        .launches
        .iter()
        .filter_map(|l| l.origin.filter(|o| o.site == 1))
        .next()
        .unwrap();
    assert_eq!(of(400 + u64::from(seconds.epoch)), [(1, seconds.epoch)]);
}

#[test]
fn a_capture_without_recorded_steps_selects_by_time_and_says_why_it_finds_none() {
    let cap = read(BEFORE);
    assert!(cap
        .launches
        .iter()
        .all(|l| l.origin.unwrap().step.is_none()));
    let infos = capture_launches(&cap).unwrap();
    let e = steps("100..105")
        .select(&infos, &cap.steps)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no launch overlaps the 5 steps in 100..105"),
        "{e}"
    );
    assert!(
        e.contains("a host that enqueues ahead of the device"),
        "{e}"
    );
}
