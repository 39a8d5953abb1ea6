//! A real capture of a continuous session from an H200, checked in CI: the
//! launch identity check of the serving_loop example. Three sites of one
//! kernel (8 blocks x 4 warps, every warp traced): a CUDA graph replayed
//! 100 times, and plain launches on two streams, 100 each, interleaved with
//! the replays. Before each launch a `bump` kernel adds one to that site's
//! launch counter; the traced kernel records the count it reads as the
//! value of a "launch_index" mark in every warp. So every record must say,
//! by the launch the session grouped it into, the count its kernel read.
//!
//! Recorded with `serving_loop check` (writes `serving_check.ktrace`).
//!
//! And the windows check of the same example (`serving_loop windows`,
//! writes `serving_windows.ktrace`): the same probe as two sites, one kept
//! for host steps 100..120 of 400 launched back to back, one kept for the
//! seconds 1.0..1.3 of the run, one launch a step, the host waiting for
//! each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ktrace_runtime::decode::{decode, DecodeOptions};
use ktrace_runtime::export::launches::capture_launches;
use ktrace_runtime::format::buffer::EntryKind;
use ktrace_runtime::format::capture::{HostStep, StreamEnd};
use ktrace_runtime::Capture;

fn read(name: &str) -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data")
        .join(name);
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn capture() -> Capture {
    read("h200_serving_check.ktrace")
}

#[test]
fn every_record_decodes_to_the_launch_its_kernel_counted() {
    let cap = capture();
    assert_eq!(cap.stream_end, Some(StreamEnd::Closed));
    assert_eq!(cap.launches.len(), 300);
    let mut checked = 0;
    let mut epochs: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for l in &cap.launches {
        let o = l
            .origin
            .expect("every launch of a continuous session has an origin");
        assert!(
            epochs.entry(o.site).or_default().insert(o.epoch),
            "{o:?} twice"
        );
        let b = l.buffer().unwrap();
        let mut warps = 0;
        for slot in b.slots().filter(|s| s.meta().is_flushed()) {
            warps += 1;
            assert_eq!(slot.meta().launch, o.epoch, "a slot of another launch");
            let values: Vec<u32> = (0..slot.stored_entries())
                .map(|i| slot.entry(i))
                .filter(|e| slot.kind_of(e) == EntryKind::Value)
                .map(|e| e.clock)
                .collect();
            assert_eq!(
                values,
                [o.epoch + 1],
                "launch {} of site {}",
                o.epoch,
                o.site
            );
            checked += 1;
        }
        assert_eq!(warps, 32, "every warp of launch {o:?} traced");
    }
    assert_eq!(checked, 300 * 32);
    for (site, e) in &epochs {
        assert_eq!(
            e.iter().copied().collect::<Vec<_>>(),
            (0..100).collect::<Vec<_>>(),
            "site {site}"
        );
    }
}

#[test]
fn graph_replays_share_their_node_grid_id_and_plain_launches_do_not() {
    let cap = capture();
    let mut grids: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    for l in &cap.launches {
        let o = l.origin.unwrap();
        grids.entry(o.site).or_default().insert(o.grid_id);
    }
    // Site 0 is the graph: every replay reads its node's %gridid.
    assert_eq!(grids[&0].len(), 1);
    // Sites 1 and 2 are plain launches on two streams: one id each.
    assert_eq!(grids[&1].len(), 100);
    assert_eq!(grids[&2].len(), 100);
    assert!(grids[&1].is_disjoint(&grids[&2]));
}

#[test]
fn the_sites_counted_every_launch_and_dropped_none_and_every_launch_decodes() {
    let cap = capture();
    let kernels: Vec<(&str, u64, u64, u64)> = cap
        .sites
        .iter()
        .map(|s| (s.kernel.as_str(), s.launches, s.kept, s.dropped))
        .collect();
    assert_eq!(
        kernels,
        [
            ("probe_graph", 100, 100, 0),
            ("probe_stream_a", 100, 100, 0),
            ("probe_stream_b", 100, 100, 0)
        ]
    );
    let opts = DecodeOptions::default().for_device(&cap.device);
    for l in &cap.launches {
        let d = decode(l.buffer().unwrap(), &opts);
        assert_eq!(d.warps.len(), 32);
        assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
        for w in &d.warps {
            let spin: Vec<_> = w
                .spans
                .iter()
                .filter(|s| cap.regions.name(s.region) == "spin")
                .collect();
            assert_eq!(spin.len(), 1);
            assert!(spin[0].end_ps > spin[0].start_ps);
            let marks: Vec<Option<u32>> = w.marks().map(|m| m.value).collect();
            assert_eq!(marks, [Some(l.origin.unwrap().epoch + 1)]);
        }
    }
    // The session measured the GPU's clock against the host's as it ran.
    assert!(!cap.clock_syncs.is_empty());
}

/// The values of the `launch_index` marks of `l`'s flushed slots, one a
/// warp, checked to be its epoch + 1 (the count its kernel read).
fn assert_records_are_of(l: &ktrace_runtime::LaunchCapture) {
    let o = l.origin.unwrap();
    let b = l.buffer().unwrap();
    let mut warps = 0;
    for slot in b.slots().filter(|s| s.meta().is_flushed()) {
        let values: Vec<u32> = (0..slot.stored_entries())
            .map(|i| slot.entry(i))
            .filter(|e| slot.kind_of(e) == EntryKind::Value)
            .map(|e| e.clock)
            .collect();
        assert_eq!(values, [o.epoch + 1], "{o:?}");
        warps += 1;
    }
    assert_eq!(warps, 32, "{o:?}");
}

#[test]
fn a_steps_window_keeps_exactly_the_launches_of_its_steps() {
    let cap = read("h200_serving_windows.ktrace");
    assert_eq!(cap.stream_end, Some(StreamEnd::Closed));
    let site = &cap.sites[0];
    assert_eq!(
        (site.kernel.as_str(), site.launches, site.kept, site.dropped),
        ("probe_steps", 400, 20, 0)
    );
    let kept: Vec<u32> = cap
        .launches
        .iter()
        .filter(|l| l.origin.unwrap().site == 0)
        .inspect(|l| assert_records_are_of(l))
        .map(|l| l.origin.unwrap().epoch)
        .collect();
    assert_eq!(kept, (100..120).collect::<Vec<_>>());
    // The 400 steps of that site were on the host track, in order.
    let steps: Vec<u64> = cap
        .steps
        .iter()
        .filter(|s| s.name == "steps")
        .map(|s| s.index)
        .collect();
    assert_eq!(steps, (0..400).collect::<Vec<_>>());
    // The host ran ahead of the GPU: each kept launch ran after its step
    // began (it was enqueued in it), and after the launch before it.
    let infos = capture_launches(&cap).unwrap();
    let mut last_end = i64::MIN;
    for l in infos.iter().filter(|l| l.origin.unwrap().site == 0) {
        let h = l.host.expect("on the host's clock");
        let step = &cap.steps[l.origin.unwrap().epoch as usize];
        assert!(h.begin_ns >= step.begin_ns as i64, "{:?}", l.origin);
        assert!(h.begin_ns >= last_end);
        last_end = h.end_ns;
    }
}

#[test]
fn a_seconds_window_keeps_the_launches_of_its_seconds_on_the_host_clock() {
    let cap = read("h200_serving_windows.ktrace");
    let site = &cap.sites[1];
    assert_eq!(
        (site.kernel.as_str(), site.launches, site.kept, site.dropped),
        ("probe_seconds", 646, 142, 0)
    );
    // Step 400 + k launched launch k of the site and waited for it.
    let steps: Vec<&HostStep> = cap.steps.iter().filter(|s| s.name == "seconds").collect();
    assert_eq!(steps.len(), 646);
    assert!(steps.iter().zip(400..).all(|(s, i)| s.index == i));
    let infos = capture_launches(&cap).unwrap();
    let kept: Vec<u32> = infos
        .iter()
        .filter(|l| l.origin.unwrap().site == 1)
        .map(|l| {
            let k = l.origin.unwrap().epoch as usize;
            let h = l.host.expect("on the host's clock");
            let s = steps[k];
            assert!(
                h.begin_ns >= s.begin_ns as i64 && h.end_ns <= s.end_ns as i64,
                "launch {k} ran outside its step"
            );
            k as u32
        })
        .collect();
    for l in cap.launches.iter().filter(|l| l.origin.unwrap().site == 1) {
        assert_records_are_of(l);
    }
    assert!(kept.windows(2).all(|w| w[1] == w[0] + 1), "{kept:?}");
    // The window is 1.0..1.3 s from the session's start (the first step
    // began right after it): every step well inside it kept, none well
    // outside it.
    let t0 = cap.steps[0].begin_ns;
    let ms = |ns: u64| (ns - t0) as f64 / 1e6;
    for (k, s) in steps.iter().enumerate() {
        let (begin, end) = (ms(s.begin_ns), ms(s.end_ns));
        let is_kept = kept.contains(&(k as u32));
        if begin >= 1005.0 && end <= 1295.0 {
            assert!(
                is_kept,
                "step {} ({begin:.2}..{end:.2} ms) not kept",
                s.index
            );
        }
        if end <= 995.0 || begin >= 1305.0 {
            assert!(!is_kept, "step {} ({begin:.2}..{end:.2} ms) kept", s.index);
        }
    }
}
