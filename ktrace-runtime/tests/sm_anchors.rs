//! Anchors shared across an SM (layout version 5): a warp that opens with
//! `KTRACE_OPEN_SHARED_MAGIC` (built with `KTRACE_ANCHORS_COUNT`: an
//! anchor every 16 entries) maps its clock to time through the points of
//! every warp on its SM, its own among them; the first tests take the case
//! of such warps whose rings kept no anchor, beside a warp that anchors by
//! the clock.

use ktrace_runtime::decode::{decode, DecodeOptions, DecodedLaunch, RatioSource, WarpTrace};
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};

/// Largest |decoded - true| time of `dw`'s events against `w`'s, in ps.
fn worst_error(d: &DecodedLaunch, dw: &WarpTrace, w: &SynthWarp) -> i64 {
    assert_eq!(dw.events.len(), w.events.len());
    w.worst_error_ps(d.origin_globaltimer, &dw.events)
}

/// The anchor warp of block 0 on SM 7: 2 GHz, slowing to 1.6 GHz 200,000
/// cycles in, a mark every 1,000 cycles over 600,000 cycles, anchors every
/// 2,048 cycles.
fn anchor_warp() -> SynthWarp {
    let mut w = SynthWarp::new(0, 0)
        .sm(7)
        .rate(1, 2)
        .rate_from(200_000, 10, 16)
        .anchors(2048);
    for i in 1..=600 {
        w = w.mark(i * 1000, 0);
    }
    w
}

/// A warp beside `a` (same SM and clock) that opens `offset` cycles after
/// it and records a span every 3,333 cycles for `len` cycles, sharing the
/// SM's anchors.
fn shared_warp(a: &SynthWarp, block: u32, warp: u32, offset: u64, len: u64) -> SynthWarp {
    let mut w = SynthWarp::beside(a, block, warp, offset).shared();
    let mut at = 500;
    while at + 1000 < len {
        w = w.span(at, at + 1000, 1);
        at += 3333;
    }
    w
}

fn warp(d: &DecodedLaunch, block: u32, warp: u32) -> &WarpTrace {
    d.warps
        .iter()
        .find(|w| w.id.block == block && u32::from(w.id.warp) == warp)
        .unwrap()
}

#[test]
fn a_shared_warp_follows_its_sms_anchors_through_a_clock_change() {
    let a = anchor_warp();
    // Block 0's warp 1 and block 1's warp 0, both on SM 7, neither with
    // anchors of its own; block 1 opens 150,000 cycles after block 0 and
    // outlives nothing.
    let b = shared_warp(&a, 0, 1, 37, 590_000);
    let c = shared_warp(&a, 1, 0, 150_000, 400_000);
    let l = SynthLaunch::all_traced(2, 64, 4096)
        .with(a.clone())
        .with(b.clone())
        .with(c.clone());
    let d = decode(l.buffer(), &DecodeOptions::default());
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics.items());
    let (db, dc) = (warp(&d, 0, 1), warp(&d, 1, 0));
    assert_eq!(db.ratio_source, RatioSource::SmAnchors);
    assert_eq!(dc.ratio_source, RatioSource::SmAnchors);
    // Anchors every 2,048 cycles: between two of them the map is linear,
    // and only the segment over the sudden change bends away from the
    // truth, by at most a quarter of its length times the change of the
    // period (2,048 / 4 * 0.125 ns = 64 ns), plus 1 ns of rounding.
    for (dw, w) in [(db, &b), (dc, &c)] {
        let err = worst_error(&d, dw, w);
        assert!(err <= 65_000, "warp {:?}: worst error {err} ps", dw.id);
    }
    // The shared warps measure nothing of their own: the launch's anchors
    // are the anchor warp's.
    assert_eq!(d.clock.anchors, warp(&d, 0, 0).clock.anchors);
    assert_eq!(db.clock.anchors, 0);
    // Through its own open and flush alone, warp b is off by microseconds.
    let alone = SynthLaunch::all_traced(2, 64, 4096).with(b.clone());
    let d1 = decode(alone.buffer(), &DecodeOptions::default());
    assert_eq!(d1.warps[0].ratio_source, RatioSource::Slot);
    assert!(worst_error(&d1, &d1.warps[0], &b) > 5_000_000);
}

#[test]
fn a_shared_warp_without_anchors_on_its_sm_falls_back_to_its_own_pairs() {
    let a = anchor_warp();
    // On SM 7's clock but reported on SM 8, where no warp anchors.
    let mut b = shared_warp(&a, 0, 1, 37, 590_000);
    b.sm = 8;
    let l = SynthLaunch::all_traced(1, 64, 4096)
        .with(a.clone())
        .with(b.clone());
    let d = decode(l.buffer(), &DecodeOptions::default());
    let db = warp(&d, 0, 1);
    // Its open and flush pairs: the slot's rate, the warp's events placed
    // between them, and the decoder says that a long warp had no anchors.
    assert_eq!(db.ratio_source, RatioSource::Slot);
    let kinds: Vec<&str> = db.diagnostics.iter().map(|x| x.kind()).collect();
    assert!(kinds.is_empty(), "{kinds:?}");
    let first = db.events.first().unwrap().t_ps;
    let last = db.events.last().unwrap().t_ps;
    assert!(db.open_ps <= first && last <= db.flush_ps.unwrap());
    // 590,000 cycles at 1.6-2 GHz is about 0.33 ms, under the 1 ms after
    // which a warp without anchors is reported; a longer one is.
    let mut long = SynthWarp::beside(&a, 0, 1, 37).shared().sm(8);
    long = long.span(100, 200, 1).flush_at(2_500_000);
    let l = SynthLaunch::all_traced(1, 64, 4096).with(a).with(long);
    let d = decode(l.buffer(), &DecodeOptions::default());
    let kinds: Vec<&str> = warp(&d, 0, 1)
        .diagnostics
        .iter()
        .map(|x| x.kind())
        .collect();
    assert_eq!(kinds, vec!["no_anchors"]);
}

#[test]
fn a_shared_warp_uses_only_its_own_sms_points() {
    // Two SMs whose clocks differ: SM 7 slows, SM 9 does not. A shared
    // warp on SM 9 beside a steady anchor warp must not bend with SM 7.
    let a7 = anchor_warp();
    let mut a9 = SynthWarp::new(2, 0).sm(9).rate(1, 2).anchors(2048);
    for i in 1..=600 {
        a9 = a9.mark(i * 1000, 0);
    }
    let b9 = shared_warp(&a9, 2, 1, 11, 590_000);
    let l = SynthLaunch::all_traced(3, 64, 4096)
        .with(a7)
        .with(a9)
        .with(b9.clone());
    let d = decode(l.buffer(), &DecodeOptions::default());
    let db = warp(&d, 2, 1);
    assert_eq!(db.ratio_source, RatioSource::SmAnchors);
    assert!(worst_error(&d, db, &b9) <= 1_000);
}

/// A warp on `a`'s SM built with `KTRACE_ANCHORS_COUNT` (an anchor every
/// 16 entries), opening `offset` cycles after `a`, with a mark every
/// `every` cycles until 590,000 cycles after `a` opened.
fn count_warp(a: &SynthWarp, block: u32, warp: u32, offset: u64, every: u64) -> SynthWarp {
    let mut w = SynthWarp::beside(a, block, warp, offset).count_anchors(16);
    let mut at = every;
    while offset + at < 590_000 {
        w = w.mark(at, 0);
        at += every;
    }
    w
}

#[test]
fn warps_anchoring_by_their_count_map_a_sparse_warp_through_their_sm() {
    // SM 7's clock as in anchor_warp(): 2 GHz, 1.6 GHz from 200,000 cycles.
    let clock = anchor_warp();
    // Eight dense warps (a mark every 1,000 cycles: an anchor every 16,000
    // cycles each, every 2,000 on the SM) and one sparse warp (a mark every
    // 40,000 cycles: its own anchors 640,000 cycles apart), all anchoring
    // by their count.
    let dense: Vec<SynthWarp> = (0..8)
        .map(|w| count_warp(&clock, 0, w, 37 + u64::from(w) * 1_999, 1_000))
        .collect();
    let sparse = count_warp(&clock, 1, 0, 11, 40_000);
    let mut l = SynthLaunch::all_traced(2, 256, 4096).with(sparse.clone());
    for w in &dense {
        l = l.with(w.clone());
    }
    let d = decode(l.buffer(), &DecodeOptions::default());
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics.items());
    let ds = warp(&d, 1, 0);
    assert_eq!(ds.ratio_source, RatioSource::SmAnchors);
    // Points about 2,000 cycles apart: only the segment over the change
    // bends, by at most a quarter of it times the change of the period
    // (2,048 / 4 * 0.125 ns = 64 ns), plus rounding.
    let err = worst_error(&d, ds, &sparse);
    assert!(err <= 65_000, "sparse warp: worst error {err} ps");
    for (i, w) in dense.iter().enumerate() {
        let e = worst_error(&d, warp(&d, 0, i as u32), w);
        assert!(e <= 65_000, "dense warp {i}: worst error {e} ps");
    }
    // Each warp's own anchors are counted in its clock statistics (one
    // every 16 entries: about 40 in a dense warp), and the launch's are
    // their sum.
    assert!(warp(&d, 0, 0).clock.anchors >= 35);
    assert_eq!(
        d.clock.anchors,
        d.warps.iter().map(|w| w.clock.anchors).sum::<u64>()
    );
    // Alone, the sparse warp has its first anchor and its flush: off by
    // microseconds after the clock change.
    let alone = SynthLaunch::all_traced(2, 256, 4096).with(sparse.clone());
    let d1 = decode(alone.buffer(), &DecodeOptions::default());
    assert!(worst_error(&d1, warp(&d1, 1, 0), &sparse) > 1_000_000);
}
