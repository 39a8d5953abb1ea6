//! A real capture of launches that overlap on one site, from an H100,
//! checked in CI: `pdl_loop --blocks 8 --launches 40 --replays 10 --spin
//! 20000` (writes `pdl_loop.ktrace`). One site marked `overlapping`, of a
//! kernel (8 blocks x 4 warps, every warp traced) launched after itself
//! with programmatic dependent launch: each block lets the next launch
//! start once its warps have opened their contexts, so consecutive
//! launches run at the same time. 40 plain launches, then 10 replays of a
//! graph of 4 such launches. Each warp records its launch's tag as a value
//! at its start and at its end: a plain launch's number, or 1,000,000 +
//! the graph node's index.

use std::path::Path;

use ktrace_runtime::format::buffer::EntryKind;
use ktrace_runtime::format::capture::StreamEnd;
use ktrace_runtime::Capture;

const PLAIN: u32 = 40;

fn capture() -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data/h100_pdl_overlap.ktrace");
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_launch_was_drained_once_in_order() {
    let cap = capture();
    assert_eq!(cap.stream_end, Some(StreamEnd::Closed));
    assert_eq!(cap.sites.len(), 1);
    let site = &cap.sites[0];
    assert_eq!(site.launches, 80);
    assert_eq!(site.dropped, 0);
    let epochs: Vec<u32> = cap
        .launches
        .iter()
        .map(|l| l.origin.expect("a site's launch").epoch)
        .collect();
    assert_eq!(epochs, (0..80).collect::<Vec<u32>>());
}

#[test]
fn the_launches_overlapped_and_every_record_is_in_its_own_launch() {
    let cap = capture();
    let mut values = 0;
    let mut overlapped = 0;
    let mut previous_end = None;
    for l in &cap.launches {
        let epoch = l.origin.unwrap().epoch;
        let b = l.buffer().unwrap();
        assert_eq!(b.slots().count(), 32);
        let start = b.slots().map(|s| s.meta().init_globaltimer).min().unwrap();
        let end = b.slots().map(|s| s.meta().final_globaltimer).max().unwrap();
        if let Some(prev) = previous_end {
            overlapped += usize::from(start < prev);
        }
        previous_end = Some(end);
        for slot in b.slots() {
            let m = slot.meta();
            assert!(
                m.finished(),
                "launch {epoch}: a slot handed over unfinished"
            );
            assert_eq!(m.launch, epoch, "a slot of another launch");
            for i in 0..slot.stored_entries() {
                let e = slot.entry(i);
                if slot.kind_of(&e) != EntryKind::Value {
                    continue;
                }
                values += 1;
                if epoch < PLAIN {
                    assert_eq!(e.clock, epoch, "plain launch {epoch}");
                } else {
                    assert_eq!(
                        e.clock - 1_000_000,
                        (epoch - PLAIN) % 4,
                        "graph launch {epoch}"
                    );
                }
            }
        }
    }
    // Two values a warp.
    assert_eq!(values, cap.launches.len() * 32 * 2);
    // Programmatic dependent launch took effect: most launches started
    // before the one before them had ended (66 of 79 in this capture).
    assert!(overlapped >= 60, "{overlapped} launches overlapped");
}
