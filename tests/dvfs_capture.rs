//! A real capture of the `dvfs` example recorded on an H200 under load (the
//! SM clock between 1.6 and 1.8 GHz inside the launch), with the
//! `%globaltimer` readings its timeline warps took beside every marker:
//! decoded with the time anchors, the trace stays within the accuracy
//! targets of docs/accuracy.md; decoded with the two-point model of layout
//! version 1, it is microseconds off. Needs no GPU.

use std::path::Path;

use ktrace_examples::truth::{compare, Comparison, Truth};
use ktrace_runtime::decode::TimeModel;
use ktrace_runtime::{decode::decode, decode::DecodeOptions, Capture};

fn run(model: TimeModel) -> Comparison {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let cap = Capture::read(dir.join("h200_dvfs_load.ktrace")).expect("the dvfs capture");
    let truth = Truth::load(&dir.join("h200_dvfs_load_truth.bin")).expect("its truth");
    let l = &cap.launches[0];
    assert_eq!(l.layout_version, 2);
    let opts = DecodeOptions {
        time_model: model,
        ..DecodeOptions::default()
    };
    let d = decode(l.buffer().expect("decodes"), &opts);
    let c = compare(&d, &truth).expect("every marker in the trace");
    println!(
        "{model:?}: event time {} | duration {} | long regions rel. p99 {:.2e}",
        c.event_time, c.duration, c.long_duration_rel_p99
    );
    c
}

#[test]
fn anchors_keep_times_within_targets_under_load() {
    let c = run(TimeModel::Anchors);
    assert_eq!(c.warps, 66);
    assert!(c.longest_warp_ns >= 10_000_000, "warps of 10 ms or more");
    assert!(
        c.event_time.p99 <= 64.0,
        "event time p99 {}",
        c.event_time.p99
    );
    assert!(
        c.event_time.max <= 128.0,
        "event time max {}",
        c.event_time.max
    );
    // Durations against a truth that itself steps by 32 ns at each end.
    assert!(c.duration.p99 <= 64.0, "duration p99 {}", c.duration.p99);
    assert!(
        c.long_duration_rel_p99 <= 2e-3,
        "regions of 32 us or more: relative error p99 {}",
        c.long_duration_rel_p99
    );
}

#[test]
fn two_point_model_is_microseconds_off_on_the_same_capture() {
    let c = run(TimeModel::TwoPoint);
    assert!(
        c.event_time.p99 > 5_000.0,
        "event time p99 {}",
        c.event_time.p99
    );
}
