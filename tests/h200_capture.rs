//! A real capture from an H200, decoded in CI: the gemm example traced at
//! 2048³ (128 CTAs x 12 warps; producer warp 0 records "wait_empty" and
//! "load" per k-tile, consumer warps 4..11 "wait_full" and "mma" per k-tile
//! and "epilogue" per tile; warps 1..3 only open and flush).
//!
//! Recorded with `KTRACE=1 KTRACE_CAPTURE=gemm2048.ktrace gemm 2048 2048 2048`
//! (scripts/gpu-run.sh).

use std::collections::HashMap;
use std::path::Path;

use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::{decode::decode, decode::DecodeOptions, diagnostics::Diagnostic, Capture};

const K_TILES: usize = 2048 / 64;

fn capture() -> Capture {
    read("h200_gemm2048.ktrace")
}

fn read(name: &str) -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data")
        .join(name);
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every event of the kernel: 128 CTAs, each a producer with 32 k-tiles x 4
/// and 8 consumers with 32 x 4 + 2.
const EVENTS: usize = 128 * (K_TILES * 4 + 8 * (K_TILES * 4 + 2));

#[test]
fn real_capture_decodes_with_the_expected_shape() {
    let cap = capture();
    assert!(
        cap.device.name.contains("H200"),
        "device {:?}",
        cap.device.name
    );
    assert_eq!(cap.device.sm_count, 132);
    assert_eq!(cap.launches.len(), 1);
    let launch = &cap.launches[0];
    assert_eq!(launch.shape.grid, [128, 1, 1]);
    assert_eq!(launch.shape.block, [384, 1, 1]);
    let d = decode(launch.buffer().unwrap(), &DecodeOptions::default());
    assert_eq!(d.warps.len(), 128 * 12, "every warp opened");
    // The SM clock ramps during this 40 µs kernel, so warps whose open-flush
    // windows differ (the producer finishes first) average different rates
    // and are reported as more than 1% off the median; nothing else may be.
    let diags: Vec<String> = d
        .diagnostics
        .items()
        .iter()
        .filter(|x| !matches!(x, Diagnostic::ClockRateOutlier { .. }))
        .map(|x| x.to_string())
        .collect();
    assert!(
        diags.is_empty(),
        "no dropped, unmatched or unflushed events expected: {diags:?}"
    );
    let total: usize = d.warps.iter().map(|w| w.events.len()).sum();
    assert_eq!(total, EVENTS);
}

#[test]
fn real_capture_invariants() {
    let cap = capture();
    let launch = &cap.launches[0];
    let d = decode(launch.buffer().unwrap(), &DecodeOptions::default());
    let names: HashMap<u16, String> = cap
        .regions
        .iter()
        .map(|(i, n)| (i, n.to_string()))
        .collect();
    let name = |id: u16| names.get(&id).map(String::as_str).unwrap_or("?");

    // Calibration: a Hopper SM clock; every warp's average within 5% of the
    // median (the clock ramps during the launch, see above).
    let ghz = d.device_ratio.ghz();
    assert!((1.0..=2.1).contains(&ghz), "device clock {ghz} GHz");
    for w in &d.warps {
        let r = w.ratio.ghz();
        assert!((r / ghz - 1.0).abs() < 0.05, "{}: {r} GHz vs {ghz}", w.id);
        assert!(w.flushed, "{} never flushed", w.id);
        assert_eq!(w.dropped, 0);
    }

    for w in &d.warps {
        // Per-warp order, inside the warp's lifetime.
        assert!(
            w.events.windows(2).all(|p| p[0].t_ps <= p[1].t_ps),
            "{}: events out of order",
            w.id
        );
        if let (Some(first), Some(flush)) = (w.events.first(), w.flush_ps) {
            let last = w.events.last().unwrap().t_ps;
            assert!(
                w.open_ps <= first.t_ps && last <= flush,
                "{}: events {}..{} ps outside open {} .. flush {flush} ({})",
                w.id,
                first.t_ps,
                last,
                w.open_ps,
                w.ratio_source.as_str()
            );
        }
        // Durations positive; spans disjoint or nested.
        for s in &w.spans {
            assert!(
                s.end_ps > s.start_ps,
                "{}: {} span of {} ps",
                w.id,
                name(s.region),
                s.dur_ps()
            );
        }
        let mut spans = w.spans.clone();
        spans.sort_by_key(|s| (s.start_ps, std::cmp::Reverse(s.end_ps)));
        for p in spans.windows(2) {
            let (a, b) = (p[0], p[1]);
            assert!(
                b.start_ps >= a.end_ps || b.end_ps <= a.end_ps,
                "{}: {} and {} overlap",
                w.id,
                name(a.region),
                name(b.region)
            );
        }
        // The kernel's structure, event by event.
        let seq: Vec<(&str, EventKind)> =
            w.events.iter().map(|e| (name(e.region), e.kind)).collect();
        let per_tile = |a: &'static str, b: &'static str| -> Vec<(&'static str, EventKind)> {
            let mut v = Vec::new();
            for _ in 0..K_TILES {
                v.extend([
                    (a, EventKind::Begin),
                    (a, EventKind::End),
                    (b, EventKind::Begin),
                    (b, EventKind::End),
                ]);
            }
            v
        };
        match w.id.warp {
            0 => assert_eq!(
                seq,
                per_tile("wait_empty", "load"),
                "producer warp {}",
                w.id
            ),
            1..=3 => assert!(
                seq.is_empty(),
                "{}: idle warp recorded {} events",
                w.id,
                seq.len()
            ),
            _ => {
                let mut want = per_tile("wait_full", "mma");
                want.extend([("epilogue", EventKind::Begin), ("epilogue", EventKind::End)]);
                assert_eq!(seq, want, "consumer warp {}", w.id);
            }
        }
    }
}

/// A digest of every decoded event time of the layout version 1 fixture.
/// It is the digest the decoder before time anchors computed for this file
/// (the same function run on that version), and the Chrome traces written
/// by both (`ktrace export`) hold the same 78,080 events.
const V1_EVENT_DIGEST: u64 = 0x024c_ed2f_1fea_1bf4;

#[test]
fn layout_version_1_capture_decodes_as_before_anchors() {
    let cap = capture();
    let l = &cap.launches[0];
    assert_eq!(l.layout_version, 1);
    let d = decode(l.buffer().unwrap(), &DecodeOptions::default());
    // FNV-1a over (slot, time, region, kind) of every event.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in &d.warps {
        for e in &w.events {
            for v in [
                w.slot,
                e.t_ps as u64,
                u64::from(e.region),
                u64::from(e.kind.raw()),
            ] {
                for b in v.to_le_bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
    }
    assert_eq!(h, V1_EVENT_DIGEST, "digest {h:#x}");
}

/// The same kernel recorded with time anchors (layout version 2), the
/// capture the README's quick start reads.
#[test]
fn anchored_capture_decodes_cleanly_with_the_clock_it_measured() {
    let cap = read("h200_gemm2048_anchors.ktrace");
    let launch = &cap.launches[0];
    assert_eq!(launch.layout_version, 2);
    let d = decode(launch.buffer().unwrap(), &DecodeOptions::default());
    assert_eq!(d.warps.len(), 128 * 12, "every warp opened");
    // The launch's first event, found from each warp's map prefix, is the
    // first event of the whole decode.
    let dec =
        ktrace_runtime::decode::Decoder::new(launch.buffer().unwrap(), &DecodeOptions::default());
    let first = d
        .warps
        .iter()
        .filter_map(|w| w.events.first())
        .map(|e| e.t_ps)
        .min();
    assert_eq!(dec.first_event_of_launch(), first);
    // With anchors nothing is reported: no clock-rate outliers either.
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics.items());
    let total: usize = d.warps.iter().map(|w| w.events.len()).sum();
    assert_eq!(total, EVENTS);
    // Every warp that recorded events anchored its first one, and the SM
    // clock the anchors saw is a plausible H200 clock.
    for w in d.warps.iter().filter(|w| !w.events.is_empty()) {
        assert!(
            w.clock.anchors >= 3,
            "{}: {} anchors",
            w.id,
            w.clock.anchors
        );
    }
    let (slow, fast) = d.clock.range.expect("windows of 10 us");
    assert!(
        slow.mhz() >= 1000 && fast.mhz() <= 2000,
        "{slow:?} {fast:?}"
    );
    // Per warp, events stay in time order and within open..flush.
    for w in &d.warps {
        assert!(w.events.windows(2).all(|p| p[0].t_ps <= p[1].t_ps));
        if let (Some(first), Some(last), Some(flush)) =
            (w.events.first(), w.events.last(), w.flush_ps)
        {
            assert!(first.t_ps >= w.open_ps && last.t_ps <= flush, "{}", w.id);
        }
    }
}

/// The same kernel recorded with values (layout version 3): each consumer
/// warp's epilogue begins with its tile index, which in this launch (128
/// tiles, 128 blocks) is the block's index.
#[test]
fn capture_with_values_gives_each_epilogue_its_tile() {
    let cap = read("h200_gemm2048_v3.ktrace");
    let launch = &cap.launches[0];
    assert_eq!(launch.layout_version, 3);
    let d = decode(launch.buffer().unwrap(), &DecodeOptions::default());
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics.items());
    assert_eq!(d.warps.len(), 128 * 12);
    let epilogue = cap
        .regions
        .iter()
        .find(|(_, n)| *n == "epilogue")
        .map(|(id, _)| id)
        .unwrap();
    let mut per_tile = std::collections::BTreeMap::<u32, u32>::new();
    for w in &d.warps {
        for s in w.spans.iter().filter(|s| s.region == epilogue) {
            assert_eq!(s.begin_value, Some(w.id.block), "{:?}", w.id);
            assert_eq!(s.end_value, None);
            *per_tile.entry(s.begin_value.unwrap()).or_default() += 1;
        }
        // Other regions carry no values.
        assert!(w
            .spans
            .iter()
            .filter(|s| s.region != epilogue)
            .all(|s| s.value().is_none()));
    }
    // 8 consumer warps per tile, every tile once.
    assert_eq!(per_tile.len(), 128);
    assert!(per_tile.values().all(|&n| n == 8), "{per_tile:?}");
    let total: usize = d.warps.iter().map(|w| w.events.len()).sum();
    assert_eq!(total, EVENTS);
}

/// The ring fill and the decoder read one view of the buffer, so they
/// agree on what it holds: on the layout-3 capture (values after some
/// events), the events the fill counts are the events decoded, its values
/// the values decoded, and no entry is of an unknown type.
#[test]
fn fill_and_decode_agree_on_a_layout_3_capture() {
    let cap = read("h200_gemm2048_v3.ktrace");
    let launch = &cap.launches[0];
    let buffer = launch.buffer().unwrap();
    let fill = ktrace_runtime::fill::ring_fill(&buffer);
    let d = decode(buffer, &DecodeOptions::default());
    let events: u64 = d.warps.iter().map(|w| w.events.len() as u64).sum();
    let values: u64 = d
        .warps
        .iter()
        .flat_map(|w| &w.events)
        .filter(|e| e.value.is_some())
        .count() as u64;
    assert!(values > 0, "the capture records values");
    assert_eq!(fill.events, events);
    assert_eq!(fill.values, values);
    assert_eq!(fill.unknown, 0);
    assert!(fill.anchors > 0);
}
