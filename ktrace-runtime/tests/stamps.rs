//! Stamped events (layout version 6, `KTRACE_ANCHORS_STAMP`): every event
//! carries bits 5..17 of its `%globaltimer`, and the decoder unwraps them
//! into time points as dense as the default build's anchors.

use ktrace_runtime::decode::{decode, DecodeOptions, DecodedLaunch};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};

fn decoded(l: &SynthLaunch) -> DecodedLaunch {
    decode(l.buffer(), &DecodeOptions::default())
}

fn kinds(d: &DecodedLaunch) -> Vec<&'static str> {
    d.diagnostics.items().iter().map(|d| d.kind()).collect()
}

/// Largest |decoded - true| time of the newest `n` events of `w`, in ps
/// (`n` = all of them when the ring kept everything).
fn worst_error_of_newest(d: &DecodedLaunch, w: &SynthWarp, n: usize) -> i64 {
    let dw = &d.warps[0];
    assert_eq!(dw.events.len(), n);
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
fn stamped_events_follow_a_clock_that_slows_as_closely_as_anchors() {
    let w = slowing_warp().stamped();
    let d = decoded(&SynthLaunch::all_traced(1, 32, 2048).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    let stamped = worst_error_of_newest(&d, &w, 600);
    let a = slowing_warp().anchors(2048);
    let d = decoded(&SynthLaunch::all_traced(1, 32, 2048).with(a.clone()));
    let anchored = worst_error_of_newest(&d, &a, 600);
    // The stamp drops the timer's 5 low bits (the device's timer moves in
    // 32 ns steps; this synthetic one in 1 ns steps): at most 31 ns more.
    assert!(
        stamped <= anchored + 32_000,
        "stamped {stamped} ps, anchored {anchored} ps"
    );
    // Between points 2,048 cycles apart the map bends from the truth only
    // over the rate change: 1 us at 0.125 ns per cycle of period change.
    assert!(stamped < 200_000, "{stamped} ps");
}

#[test]
fn kinds_and_regions_lose_their_stamps() {
    let mut w = SynthWarp::new(0, 0).stamped();
    for i in 0..50u64 {
        w = w.span(1000 + i * 3000, 2000 + i * 3000, (i % 3) as u16);
    }
    w = w.mark(200_000, 7).flush_at(200_100);
    let d = decoded(&SynthLaunch::all_traced(1, 32, 256).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    let warp = &d.warps[0];
    assert_eq!(warp.spans.len(), 50);
    assert_eq!(warp.marks().count(), 1);
    for (i, s) in warp.spans.iter().enumerate() {
        assert_eq!(s.region, (i % 3) as u16);
        // 1,000 cycles at 2 GHz, through points whose readings lost their
        // 5 low bits (as the device's timer, which moves in 32 ns steps).
        assert!(s.dur_ps().abs_diff(500_000) < 32_000, "{}", s.dur_ps());
    }
    assert!(worst_error_of_newest(&d, &w, 101) < 32_000);
}

#[test]
fn gaps_longer_than_the_stamp_period_unwrap_through_the_clock() {
    // Events 300 us apart (more than the stamp's 262 us period), at 2 GHz
    // and then 1.6 GHz: the clock says which turn each stamp is in, and
    // only the stamps say where the rate changed.
    let mut w = SynthWarp::new(0, 0)
        .stamped()
        .rate(1, 2)
        .rate_from(6_000_000, 10, 16);
    for i in 0..20u64 {
        w = w.mark(1000 + i * 600_000, 1);
    }
    let d = decoded(&SynthLaunch::all_traced(1, 32, 64).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    assert!(worst_error_of_newest(&d, &w, 20) < 32_000);
}

#[test]
fn an_overwritten_ring_unwraps_back_from_the_flush() {
    // 600 events in a ring of 128: the 128 newest, whose chain hangs from
    // the flush pair, 600,000 cycles (300 us) after the open.
    let w = slowing_warp().stamped();
    let d = decoded(&SynthLaunch::all_traced(1, 32, 128).with(w.clone()));
    assert!(worst_error_of_newest(&d, &w, 128) < 32_000);
    assert!(d.warps[0].dropped > 0);
}

#[test]
fn a_warp_that_never_flushed_keeps_its_stamped_times() {
    let w = slowing_warp().stamped().never_flushed();
    let d = decoded(&SynthLaunch::all_traced(1, 32, 2048).with(w.clone()));
    assert!(worst_error_of_newest(&d, &w, 600) < 200_000);
}

#[test]
fn values_follow_stamped_events() {
    let w = SynthWarp::new(0, 0)
        .stamped()
        .event_value(1000, 2, EventKind::Begin, 77)
        .event_value(5000, 2, EventKind::End, 78)
        .flush_at(6000);
    let d = decoded(&SynthLaunch::all_traced(1, 32, 64).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    let s = &d.warps[0].spans[0];
    assert_eq!((s.region, s.value()), (2, Some(77)));
    assert!(s.dur_ps().abs_diff(2_000_000) < 32_000, "{}", s.dur_ps());
}

/// A warp at 2 GHz for 10 ms (a mark every 10,000 cycles), then at 1 GHz:
/// one mark after a gap of `gap_cycles`, `after` more marks 1,000 cycles
/// apart, and the flush 1,000 cycles after the last.
fn warp_with_a_slow_gap(gaps: &[u64], after: u64) -> SynthWarp {
    let mut w = SynthWarp::new(0, 0)
        .stamped()
        .rate(1, 2)
        .rate_from(20_000_000, 1, 1);
    for i in 1..=2000u64 {
        w = w.mark(i * 10_000, 0);
    }
    let mut at = 20_000_000;
    for &gap in gaps {
        at += gap;
        w = w.mark(at, 1);
        for _ in 0..after {
            at += 1000;
            w = w.mark(at, 2);
        }
    }
    w.flush_at(at + 1000)
}

#[test]
fn a_long_gap_at_a_slower_clock_takes_its_turn_from_the_flush() {
    // 1 ms at 1 GHz that the warp's mean rate (1.9 GHz) would call 0.53
    // ms: two stamp periods out. The events after the gap hang from the
    // flush, the ones before from the open, exactly.
    let w = warp_with_a_slow_gap(&[1_000_000], 50);
    let d = decoded(&SynthLaunch::all_traced(1, 32, 4096).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    assert!(worst_error_of_newest(&d, &w, 2051) < 32_000);
}

#[test]
fn events_between_two_long_gaps_are_placed_between_their_neighbours() {
    // Two 1 ms gaps at 1 GHz with 20 events between them: the middle run
    // is placed by the clock between the run before the first gap and the
    // run after the second, not extrapolated at the mean rate.
    let w = warp_with_a_slow_gap(&[1_000_000, 1_000_000], 20);
    let d = decoded(&SynthLaunch::all_traced(1, 32, 4096).with(w.clone()));
    assert!(d.diagnostics.is_empty(), "{:?}", kinds(&d));
    assert!(worst_error_of_newest(&d, &w, 2042) < 32_000);
}

/// A stamped warp's open magic ("KTRT") belongs to layout version 6: in a
/// buffer read as version 5 the slot is not opened, and the decoder says
/// why (`open_magic_of_later_layout`) instead of reading its stamps as
/// event types.
#[test]
fn a_stamped_slot_in_a_layout_5_buffer_is_reported_not_read() {
    let w = SynthWarp::new(0, 0)
        .stamped()
        .span(1000, 2000, 1)
        .flush_at(3000);
    let l = SynthLaunch::all_traced(1, 32, 32).with(w);
    assert_eq!(decoded(&l).warps.len(), 1);
    let old = ktrace_runtime::format::buffer::LaunchBuffer::new(&l.raw, &l.shape, 5).unwrap();
    let d = decode(old, &DecodeOptions::default());
    assert!(d.warps.is_empty());
    assert_eq!(kinds(&d), ["open_magic_of_later_layout"]);
    let text = d.diagnostics.items()[0].to_string();
    assert!(
        text.contains("layout version 6") && text.contains("version 5"),
        "{text}"
    );
}
