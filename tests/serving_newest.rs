//! A real capture of a continuous session that keeps the newest launches,
//! from an H100, checked in CI: `serving_loop newest` (writes
//! `serving_newest.ktrace`). One site of the launch-identity kernel (8
//! blocks x 4 warps, every warp traced) with a ring of 8 slabs, kept with
//! `WhenFull::KeepNewest`, and a drain polling every 5 ms, under 3,000
//! launches enqueued back to back; before each, a `bump` kernel adds one to
//! a counter whose value the traced kernel records in every warp. The ring
//! overflowed: the launches the drain could copy whole are in the capture,
//! the others are counted as overwritten.

use std::path::Path;

use ktrace_runtime::format::buffer::EntryKind;
use ktrace_runtime::format::capture::StreamEnd;
use ktrace_runtime::format::site::WhenFull;
use ktrace_runtime::Capture;

fn capture() -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data/h100_serving_newest.ktrace");
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_site_kept_the_newest_and_counted_every_launch_it_lost() {
    let cap = capture();
    assert_eq!(cap.stream_end, Some(StreamEnd::Closed));
    assert_eq!(cap.sites.len(), 1);
    let site = &cap.sites[0];
    assert_eq!(site.when_full, WhenFull::KeepNewest);
    assert_eq!(site.launches, 3000);
    assert_eq!(site.kept, cap.launches.len() as u64);
    assert!(site.dropped > 0, "the ring overflowed");
    assert_eq!(
        site.kept + site.dropped,
        site.launches,
        "every launch accounted for"
    );
    let epochs: Vec<u32> = cap
        .launches
        .iter()
        .map(|l| l.origin.expect("a site's launch").epoch)
        .collect();
    assert!(
        epochs.windows(2).all(|w| w[0] < w[1]),
        "in order, each once"
    );
    // The newest the ring could hold (its 8 slabs less one) are there.
    assert_eq!(
        &epochs[epochs.len() - 7..],
        &[2993, 2994, 2995, 2996, 2997, 2998, 2999]
    );
}

#[test]
fn every_drained_launch_is_whole_and_each_warp_read_its_own_count() {
    let cap = capture();
    let mut values = 0;
    for l in &cap.launches {
        let epoch = l.origin.unwrap().epoch;
        let b = l.buffer().unwrap();
        assert_eq!(b.slots().count(), 32);
        for slot in b.slots() {
            let m = slot.meta();
            assert!(
                m.is_opened() && m.is_flushed(),
                "launch {epoch}: a slot not written whole"
            );
            assert_eq!(m.launch, epoch, "a slot of another launch");
            for i in 0..slot.stored_entries() {
                let e = slot.entry(i);
                if slot.kind_of(&e) == EntryKind::Value {
                    // `bump` ran once before each launch: launch n read n + 1.
                    assert_eq!(e.clock, epoch + 1, "launch {epoch}");
                    values += 1;
                }
            }
        }
    }
    assert_eq!(values, cap.launches.len() * 32);
}
