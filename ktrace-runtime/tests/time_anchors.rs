//! Time anchors (layout version 2): the piecewise map follows a clock that
//! moves, and the edge cases of docs/capture-format.md's time semantics.

use ktrace_runtime::decode::{decode, DecodeOptions, DecodedLaunch, TimeModel};
use ktrace_runtime::format::buffer::LaunchBuffer;
use ktrace_runtime::format::layout::{EventKind, LAYOUT_VERSION};
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
use ktrace_runtime::{format::shape::LaunchShape, BlockSampling, WarpSampling};

fn with_model(l: &SynthLaunch, model: TimeModel, layout_version: u32) -> DecodedLaunch {
    let opts = DecodeOptions {
        time_model: model,
        ..DecodeOptions::default()
    };
    decode(l.clone().layout(layout_version).buffer(), &opts)
}

fn kinds(d: &DecodedLaunch) -> Vec<&'static str> {
    d.diagnostics.items().iter().map(|d| d.kind()).collect()
}

/// Largest |decoded - true| time of `w`'s events, in ps.
fn worst_error(d: &DecodedLaunch, w: &SynthWarp) -> i64 {
    let dw = &d.warps[0];
    assert_eq!(dw.events.len(), w.events.len());
    w.worst_error_ps(d.origin_globaltimer, &dw.events)
}

/// A warp at 2 GHz that slows to 1.6 GHz a third of the way in, with a
/// mark every 1,000 cycles over 600,000 cycles.
fn slowing_warp() -> SynthWarp {
    let mut w = SynthWarp::new(0, 0).rate(1, 2).rate_from(200_000, 10, 16);
    for i in 1..=600 {
        w = w.mark(i * 1000, 0);
    }
    w
}

#[test]
fn piecewise_map_follows_a_clock_that_slows() {
    let w = slowing_warp().anchors(4096);
    let l = SynthLaunch::all_traced(1, 32, 2048).with(w.clone());
    let d = with_model(&l, TimeModel::Anchors, 2);
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    assert_eq!(d.time_model, TimeModel::Anchors);
    // Anchors fall on events; between them the map is linear, and only the
    // segment over the sudden rate change bends away from the truth: by at
    // most a quarter of its length (5,000 cycles) times the change of the
    // period (0.125 ns per cycle), 156 ns.
    let err = worst_error(&d, &w);
    assert!(err <= 156_250, "worst error {err} ps");
    // The clock range: 1.6 to 2 GHz.
    let (slow, fast) = d.clock.range.unwrap();
    assert_eq!((slow.mhz(), fast.mhz()), (1600, 2000));
    // The same buffer with one rate per warp is off by microseconds.
    let two = with_model(&l, TimeModel::TwoPoint, 2);
    assert!(worst_error(&two, &w) > 5_000_000);
}

#[test]
fn anchor_entries_are_not_events_and_a_v1_buffer_has_none() {
    let w = slowing_warp().anchors(4096);
    let l = SynthLaunch::all_traced(1, 32, 2048).with(w);
    // Read as layout version 1, the anchors are entries of an unknown type.
    let d = with_model(&l, TimeModel::Anchors, 1);
    assert_eq!(d.time_model, TimeModel::TwoPoint);
    assert!(kinds(&d).contains(&"unknown_event_type"));
    assert_eq!(d.warps[0].events.len(), 600);
}

#[test]
fn oldest_anchor_whose_event_was_overwritten_is_ignored() {
    // 600 marks and their anchors in a ring of 256: the oldest kept entry
    // may be an anchor whose event is gone; times stay right.
    let w = slowing_warp().anchors(4096);
    let l = SynthLaunch::all_traced(1, 32, 256).with(w.clone());
    let d = with_model(&l, TimeModel::Anchors, 2);
    let dw = &d.warps[0];
    assert!(kinds(&d).iter().all(|k| *k == "dropped"), "{:?}", kinds(&d));
    // The kept events are the newest ones.
    let mut truth: Vec<u64> = w.events.iter().map(|e| e.0).collect();
    truth.sort_unstable();
    let kept = &truth[truth.len() - dw.events.len()..];
    for (e, &at) in dw.events.iter().zip(kept) {
        let t = (w.init_gt + w.ns_at(at) - d.origin_globaltimer) as i64 * 1000;
        // The clock is steady here: only rounding to whole ns remains.
        assert!((e.t_ps - t).abs() <= 1_000, "{} vs {t}", e.t_ps);
    }
}

/// Two events 2^32 + 5,000 cycles apart (2.1 s at 2 GHz).
const GAP: u64 = (1 << 32) + 5_000;

/// A warp with a begin, a mark, and the end `GAP` cycles later, anchored.
fn gap_warp() -> SynthWarp {
    SynthWarp::new(0, 0)
        .begin(100, 1)
        .mark(600, 2)
        .end(GAP + 600, 1)
        .anchors(4096)
}

#[test]
fn a_gap_of_more_than_2_pow_32_cycles_is_placed_by_the_anchors() {
    // Edge case 1.
    let gap = GAP;
    let w = gap_warp().mark(gap + 900, 2);
    let l = SynthLaunch::all_traced(1, 32, 32).with(w.clone());
    let d = with_model(&l, TimeModel::Anchors, 2);
    assert_eq!(worst_error(&d, &w), 0);
    assert_eq!(kinds(&d), ["clock_wrap_placed"]);
    assert_eq!(d.warps[0].spans[0].dur_ps(), (gap + 500) * 500);
}

#[test]
fn a_gap_of_more_than_2_pow_32_cycles_without_anchors_is_reported() {
    // Edge case 1 without anchors: the flush shows the gap; the times after
    // it cannot be placed, and that is said, not left silent.
    let gap = (1u64 << 32) + 5_000;
    let w = SynthWarp::new(0, 0).begin(100, 1).end(gap + 600, 1);
    let l = SynthLaunch::all_traced(1, 32, 32).with(w);
    let d = with_model(&l, TimeModel::Anchors, 1);
    assert!(
        kinds(&d).contains(&"clock_wrap_unplaced"),
        "{:?}",
        kinds(&d)
    );
}

#[test]
fn traced_blocks_the_grid_cannot_have_are_rejected() {
    // Edge case 2: 4 blocks sampled every 2 have 2 slots, not 3.
    let mut s = LaunchShape::new(
        [4, 1, 1],
        [32, 1, 1],
        32,
        &WarpSampling::All,
        BlockSampling::Stride(2),
    )
    .unwrap();
    assert_eq!(s.blocks_traced, 2);
    s.blocks_traced = 3;
    let raw = vec![0u8; s.buffer_bytes().unwrap() as usize];
    let e = LaunchBuffer::new(&raw, &s, LAYOUT_VERSION).unwrap_err();
    assert!(e.to_string().contains("3 traced blocks"), "{e}");
}

#[test]
fn never_flushed_recovery_stops_at_a_clock_that_steps_back() {
    // Edge case 3: a never-flushed warp whose third entry's clock is before
    // the second's: recovery keeps the two events before it and says how
    // many entries it left out, instead of a span of 2^32 cycles.
    let w = SynthWarp::new(0, 0)
        .begin(1_000, 1)
        .mark(2_000, 2)
        .never_flushed();
    let mut l = SynthLaunch::all_traced(1, 32, 32).with(w);
    // Append an end whose clock is 500 cycles before the mark, then one more.
    let base = 64 + 2 * 8;
    for (i, clk) in [(0usize, 1_500u64), (1, 3_000)] {
        let e = ktrace_runtime::format::layout::Event {
            clock: (1_000_000 + clk) as u32,
            region: 1,
            kind: EventKind::End.raw(),
        };
        l.raw[base + 8 * i..base + 8 * i + 8].copy_from_slice(&e.to_bytes());
    }
    let d = with_model(&l, TimeModel::Anchors, 2);
    let dw = &d.warps[0];
    assert_eq!(dw.events.len(), 2);
    let msg = d
        .diagnostics
        .items()
        .iter()
        .find(|d| d.kind() == "never_flushed")
        .unwrap()
        .to_string();
    assert!(
        msg.contains("2 events recovered, 2 entries after a clock that steps back left out"),
        "{msg}"
    );
    assert!(dw.events.iter().all(|e| e.t_ps < 10_000_000));
}

#[test]
fn an_anchor_out_of_order_is_rejected() {
    let w = slowing_warp().anchors(4096);
    let mut l = SynthLaunch::all_traced(1, 32, 2048).with(w);
    // Find the third anchor entry and move its time back by 1 ms.
    let mut seen = 0;
    for i in 0..2048usize {
        let off = 64 + 8 * i;
        let kind = u16::from_le_bytes([l.raw[off + 6], l.raw[off + 7]]);
        if kind == ktrace_runtime::format::layout::EVENT_ANCHOR {
            seen += 1;
            if seen == 3 {
                let lo = u32::from_le_bytes(l.raw[off..off + 4].try_into().unwrap());
                l.raw[off..off + 4].copy_from_slice(&lo.wrapping_sub(1_000_000).to_le_bytes());
                break;
            }
        }
    }
    let d = with_model(&l, TimeModel::Anchors, 2);
    assert_eq!(kinds(&d), ["anchors_rejected"]);
}

#[test]
fn first_event_time_from_the_map_prefix_matches_the_whole_decode() {
    // first_event_ps builds its map only up to two anchors past the first
    // event; it must place that event exactly as the full decode does.
    let wrap = gap_warp();
    let launches = [
        SynthLaunch::all_traced(1, 32, 2048).with(slowing_warp().anchors(4096)),
        SynthLaunch::all_traced(1, 32, 256).with(slowing_warp().anchors(4096)),
        SynthLaunch::all_traced(1, 32, 32).with(wrap),
        SynthLaunch::all_traced(1, 32, 2048).with(slowing_warp().anchors(256)),
    ];
    for l in &launches {
        let opts = DecodeOptions::default();
        let dec = ktrace_runtime::decode::Decoder::new(l.buffer(), &opts);
        let whole = dec.decode_all();
        assert_eq!(
            dec.first_event_ps(0),
            Some(whole.warps[0].events[0].t_ps),
            "{:?}",
            l.shape
        );
    }
}

#[test]
fn an_overflowed_ring_whose_flush_pair_is_rejected_hangs_from_its_one_anchor() {
    // 600 marks 1,000 cycles apart at 2 GHz, an anchor every 20,000 cycles,
    // a ring of 32: the kept entries hold one anchor and hang from the
    // flush pair, whose globaltimer is then moved 1 ms early, so that the
    // check rejects it.
    let mut w = SynthWarp::new(0, 0).anchors(20_000);
    for i in 1..=600 {
        w = w.mark(i * 1000, 0);
    }
    // Warp 1, the same but healthy, gives the launch its clock rate.
    let mut w1 = SynthWarp::new(0, 1).anchors(20_000);
    for i in 1..=600 {
        w1 = w1.mark(i * 1000, 0);
    }
    let mut l = SynthLaunch::all_traced(1, 64, 32).with(w.clone()).with(w1);
    let gt = u64::from_le_bytes(l.raw[32..40].try_into().unwrap());
    l.raw[32..40].copy_from_slice(&(gt - 1_000_000).to_le_bytes());
    let d = with_model(&l, TimeModel::Anchors, 2);
    let dw = &d.warps[0];
    let n = dw.events.len() as u64;
    assert!((29..=31).contains(&n), "{n} events; {:?}", kinds(&d));
    assert!(kinds(&d).contains(&"anchors_rejected"), "{:?}", kinds(&d));
    assert_eq!(dw.clock.anchors, 1);
    // Placed through the anchor at the device's rate: within the 32 ns
    // steps of the globaltimer the anchor read, not 1 ms off.
    for (e, i) in dw.events.iter().zip(601 - n..=600) {
        let truth = (w.init_gt + i * 1000 / 2 - d.origin_globaltimer) as i64 * 1000;
        assert!(
            (e.t_ps - truth).abs() < 100_000,
            "mark {i}: {} vs {truth}",
            e.t_ps
        );
    }
}

#[test]
fn a_long_gap_at_a_slow_clock_gets_the_turns_the_flush_allows() {
    // A warp at 1.5 GHz, 25% below the launch's 2 GHz (two healthy warps
    // give the launch its rate), with 12 s between two anchored events:
    // 4.19 turns of 2^32 cycles, of which the 32-bit clock shows 0.19.
    // The launch's rate expects 5.59 turns, so it alone would add 5; the
    // flush pair's full clock leaves room for 4 only.
    let gap: u64 = 18_000_000_000;
    let w = SynthWarp::new(0, 0)
        .rate(2, 3)
        .begin(100, 1)
        .mark(600, 2)
        .end(gap + 600, 1)
        .mark(gap + 900, 2)
        .anchors(4096);
    let healthy = |warp| {
        let mut h = SynthWarp::new(0, warp).anchors(4096);
        for i in 1..=600 {
            h = h.mark(i * 1000, 0);
        }
        h
    };
    let l = SynthLaunch::all_traced(1, 96, 2048)
        .with(w.clone())
        .with(healthy(1))
        .with(healthy(2));
    let d = with_model(&l, TimeModel::Anchors, 2);
    assert_eq!(kinds(&d), ["clock_wrap_placed"]);
    assert!(worst_error(&d, &w) <= 1_000, "{}", worst_error(&d, &w));
    // 12.000000334 s (the events' whole-ns globaltimers), not 2.86 s later.
    let truth = (w.ns_at(gap + 600) - w.ns_at(100)) * 1000;
    assert_eq!(d.warps[0].spans[0].dur_ps(), truth);
}
