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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ktrace_runtime::decode::{decode, DecodeOptions};
use ktrace_runtime::format::buffer::EntryKind;
use ktrace_runtime::format::capture::StreamEnd;
use ktrace_runtime::Capture;

fn capture() -> Capture {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200_serving_check.ktrace");
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
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
