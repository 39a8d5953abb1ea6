//! Decoder behaviour on synthetic buffers written in the device layout.

use ktrace_runtime::decode::{decode, ClockRatio, DecodeOptions, RatioSource, Span};
use ktrace_runtime::diagnostics::Diagnostic;
use ktrace_runtime::format::buffer::LaunchBuffer;
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::synth::{SynthLaunch, SynthWarp, BASE_GT};
use ktrace_runtime::{
    decode::DecodedLaunch, format::shape::LaunchShape, BlockSampling, WarpSampling,
};

fn shape(grid: u32, threads: u32, cap: u32) -> LaunchShape {
    LaunchShape::new(
        [grid, 1, 1],
        [threads, 1, 1],
        cap,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .unwrap()
}

/// Synthetic buffers without anchors are layout version 1.
fn v1<'a>(raw: &'a [u8], shape: &LaunchShape) -> ktrace_runtime::Result<LaunchBuffer<'a>> {
    LaunchBuffer::new(raw, shape, 1)
}

fn run(l: &SynthLaunch) -> DecodedLaunch {
    decode(v1(&l.raw, &l.shape).unwrap(), &DecodeOptions::default())
}

fn kinds(d: &DecodedLaunch) -> Vec<&'static str> {
    d.diagnostics.items().iter().map(|d| d.kind()).collect()
}

#[test]
fn single_warp_exact_times() {
    // 2 GHz: one cycle is 500 ps.
    let l = SynthLaunch::new(shape(1, 32, 32)).with(
        SynthWarp::new(0, 0)
            .sm(7)
            .begin(100, 0)
            .mark(150, 2)
            .end(300, 0)
            .flush_at(1000),
    );
    let d = run(&l);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    assert_eq!(d.origin_globaltimer, BASE_GT);
    assert_eq!(d.warps.len(), 1);
    let w = &d.warps[0];
    assert_eq!((w.id.block, w.id.warp, w.id.sm), (0, 0, 7));
    assert_eq!(w.ratio_source, RatioSource::DeviceWide);
    let t: Vec<i64> = w.events.iter().map(|e| e.t_ps).collect();
    assert_eq!(t, [50_000, 75_000, 150_000]);
    assert_eq!(
        w.spans,
        [Span {
            region: 0,
            start_ps: 50_000,
            end_ps: 150_000,
            begin_value: None,
            end_value: None,
        }]
    );
    assert_eq!(w.marks().count(), 1);
    assert_eq!(w.flush_ps, Some(500_000));
}

#[test]
fn ring_overflow_keeps_the_newest_and_anchors_at_flush() {
    let mut w = SynthWarp::new(0, 0);
    for i in 0..50u64 {
        w = w.span(1000 + i * 100, 1000 + i * 100 + 40, 1);
    }
    let l = SynthLaunch::new(shape(1, 32, 32)).with(w.flush_at(20_000));
    let d = run(&l);
    let w = &d.warps[0];
    assert_eq!(w.recorded, 100);
    assert_eq!(w.dropped, 68);
    assert_eq!(w.events.len(), 32);
    // The newest 32 events are spans 34..50, all exact.
    assert_eq!(w.spans.len(), 16);
    for (k, s) in w.spans.iter().enumerate() {
        let i = 34 + k as i64;
        assert_eq!(s.start_ps, (1000 + i * 100) * 500);
        assert_eq!(s.end_ps, (1000 + i * 100 + 40) * 500);
    }
    assert_eq!(kinds(&d), ["dropped"]);
    assert!(d.diagnostics.items()[0]
        .to_string()
        .contains("68 events dropped"));
    assert_eq!(d.diagnostics.dropped_events(), 68);
}

#[test]
fn ring_overflow_with_an_odd_start() {
    // 37 events in a ring of 32: starts at index 5, ends mid-span.
    let mut w = SynthWarp::new(0, 0);
    for i in 0..37u64 {
        w = w.mark(10 + i * 3, 4);
    }
    let l = SynthLaunch::new(shape(1, 32, 32)).with(w);
    let d = run(&l);
    let t: Vec<i64> = d.warps[0].events.iter().map(|e| e.t_ps).collect();
    let want: Vec<i64> = (5..37).map(|i| (10 + i * 3) * 500).collect();
    assert_eq!(t, want);
}

/// A warp that runs 3·2^32 cycles (about 6.5 s at 1.98 GHz).
fn long_warp(block: u32, init_clk: u64, n_spans: u64) -> SynthWarp {
    let step = (1u64 << 32) / 3;
    let mut w = SynthWarp::new(block, 0)
        .open_at(BASE_GT, init_clk)
        .rate(1000, 1980);
    for i in 0..n_spans {
        w = w.span(i * step, i * step + 40, 0);
    }
    let end = 3 * (1u64 << 32) + 1980;
    w.flush_at(end - end % 1980)
}

#[test]
fn clock_wraps_past_2_pow_32() {
    // Opened just before %clock wraps; the warp runs past 2^32 cycles.
    let w = long_warp(0, 0xffff_ff00, 9);
    let ns_per = |c: u64| (u128::from(c) * 1000 * 1000 / 1980) as i64; // ps, exact enough
    let l = SynthLaunch::new(shape(1, 32, 64)).with(w);
    let d = run(&l);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let w = &d.warps[0];
    assert_eq!(w.ratio_source, RatioSource::Slot);
    assert_eq!(w.spans.len(), 9);
    let step = (1u64 << 32) / 3;
    for (i, s) in w.spans.iter().enumerate() {
        let c = i as u64 * step;
        assert!((s.start_ps - ns_per(c)).abs() <= 1, "span {i}: {s:?}");
        assert_eq!(s.dur_ps(), 20_202);
    }
    assert!(w.spans[8].start_ps > 5_000_000_000_000); // past 5 s
}

#[test]
fn clock_wrap_with_dropped_events() {
    // Same warp with a ring of 32 and 40 spans: anchored at the flush.
    let step = (1u64 << 32) / 16;
    let mut w = SynthWarp::new(0, 0)
        .open_at(BASE_GT, 0xffff_0000)
        .rate(1000, 1980);
    for i in 0..40u64 {
        w = w.span(i * step, i * step + 40, 0);
    }
    let end = 40 * step + 1980 * 10;
    let l = SynthLaunch::new(shape(1, 32, 32)).with(w.flush_at(end - end % 1980));
    let d = run(&l);
    let w = &d.warps[0];
    assert_eq!(w.dropped, 48);
    assert_eq!(w.spans.len(), 16);
    for (k, s) in w.spans.iter().enumerate() {
        let c = (24 + k as u64) * step;
        let want = (u128::from(c) * 1_000_000 / 1980) as i64;
        assert!(
            (s.start_ps - want).abs() <= 1,
            "span {k}: {s:?} want {want}"
        );
        assert_eq!(s.dur_ps(), 20_202);
    }
}

#[test]
fn forty_cycles_at_1_98_ghz_is_20_2_ns() {
    // Short slot (device-wide rate from another, long slot) and long slot.
    let long = SynthWarp::new(0, 0)
        .rate(1000, 1980)
        .span(1000, 1040, 3)
        .flush_at(1980 * 1000);
    let short = SynthWarp::new(1, 0)
        .rate(1000, 1980)
        .span(500, 540, 3)
        .flush_at(1980);
    let l = SynthLaunch::new(shape(2, 32, 32)).with(long).with(short);
    let d = run(&l);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    assert_eq!(d.warps[0].ratio_source, RatioSource::Slot);
    assert_eq!(d.warps[1].ratio_source, RatioSource::DeviceWide);
    for w in &d.warps {
        assert_eq!(w.spans[0].dur_ps(), 20_202, "{:?}", w.ratio_source);
    }
    assert_eq!(
        d.device_ratio,
        ClockRatio {
            ns: 1_000_000,
            cycles: 1_980_000
        }
    );
}

#[test]
fn nested_and_repeated_regions() {
    let w = SynthWarp::new(0, 0)
        .begin(10, 0) // outer
        .begin(20, 1)
        .end(30, 1)
        .begin(40, 1)
        .begin(50, 1) // recursion of region 1
        .end(60, 1)
        .end(70, 1)
        .end(80, 0);
    let d = run(&SynthLaunch::new(shape(1, 32, 32)).with(w));
    assert!(d.diagnostics.is_empty());
    let s: Vec<(u16, i64, i64)> = d.warps[0]
        .spans
        .iter()
        .map(|s| (s.region, s.start_ps / 500, s.end_ps / 500))
        .collect();
    assert_eq!(s, [(0, 10, 80), (1, 20, 30), (1, 40, 70), (1, 50, 60)]);
}

#[test]
fn ties_order_begin_mark_end() {
    let w = SynthWarp::new(0, 0)
        .begin(5, 0)
        .end(10, 0)
        .mark(10, 1)
        .begin(10, 2)
        .end(20, 2);
    let d = run(&SynthLaunch::new(shape(1, 32, 32)).with(w));
    let k: Vec<EventKind> = d.warps[0].events.iter().map(|e| e.kind).collect();
    use EventKind::*;
    assert_eq!(k, [Begin, Begin, Mark, End, End]);
    assert_eq!(d.warps[0].events[1].region, 2);
    assert_eq!(d.warps[0].spans.len(), 2);
}

#[test]
fn warp_and_block_sampling() {
    let shape = LaunchShape::new(
        [3, 2, 1],
        [32, 4, 1], // 4 warps per block
        32,
        &WarpSampling::List(vec![1, 3]),
        BlockSampling::StrideMax { stride: 2, max: 2 },
    )
    .unwrap();
    assert_eq!(shape.blocks_traced, 2);
    let mut l = SynthLaunch::new(shape);
    let mut written = Vec::new();
    for b in 0..6 {
        for w in 0..4 {
            if l.write(&SynthWarp::new(b, w).span(10, 20, 0)) {
                written.push((b, w));
            }
        }
    }
    assert_eq!(written, [(0, 1), (0, 3), (2, 1), (2, 3)]);
    let d = run(&l);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let got: Vec<(u32, u16)> = d.warps.iter().map(|w| (w.id.block, w.id.warp)).collect();
    assert_eq!(got, [(0, 1), (0, 3), (2, 1), (2, 3)]);
    assert_eq!(shape.arg(0xdead).warps_traced, 2);
}

#[test]
fn unopened_slots_are_skipped_silently() {
    // A kernel launched with a smaller grid than the session was sized for.
    let l = SynthLaunch::new(shape(8, 64, 32)).with(SynthWarp::new(0, 1).span(1, 2, 0));
    let d = run(&l);
    assert_eq!(d.warps.len(), 1);
    assert!(d.diagnostics.is_empty());
}

#[test]
fn never_flushed_warps() {
    let partial = SynthWarp::new(0, 0)
        .span(10, 20, 0)
        .mark(30, 1)
        .never_flushed();
    let mut full = SynthWarp::new(1, 0).never_flushed();
    for i in 0..40 {
        full = full.mark(10 + i, 1);
    }
    let fine = SynthWarp::new(2, 0).span(10, 20, 0).flush_at(200_000_000);
    let l = SynthLaunch::new(shape(3, 32, 32))
        .with(partial)
        .with(full)
        .with(fine);
    let d = run(&l);
    assert_eq!(d.warps.len(), 3);
    assert!(!d.warps[0].flushed);
    assert_eq!(d.warps[0].events.len(), 3);
    assert_eq!(d.warps[0].spans.len(), 1);
    assert_eq!(d.warps[0].spans[0].dur_ps(), 5_000);
    assert_eq!(d.warps[0].ratio_source, RatioSource::DeviceWide);
    assert!(d.warps[1].events.is_empty());
    let nf: Vec<String> = d
        .diagnostics
        .items()
        .iter()
        .filter(|d| matches!(d, Diagnostic::NeverFlushed { .. }))
        .map(|d| d.to_string())
        .collect();
    assert_eq!(nf.len(), 2);
    assert!(nf[0].contains("block 0 warp 0") && nf[0].contains("3 events recovered"));
    assert!(nf[1].contains("0 events recovered"));
}

#[test]
fn unmatched_begins_and_ends() {
    let w = SynthWarp::new(0, 0)
        .end(5, 1)
        .begin(10, 0)
        .begin(20, 0)
        .end(30, 0)
        .begin(40, 2);
    let d = run(&SynthLaunch::new(shape(1, 32, 32)).with(w));
    let msgs: Vec<String> = d
        .diagnostics
        .items()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        msgs,
        [
            "block 0 warp 0 (SM 0): 1 end(s) of region 1 without a begin, shown as no span; \
             if events were dropped, raise the per-warp capacity",
            "block 0 warp 0 (SM 0): 1 begin(s) of region 0 without an end, shown as no span; \
             end the region on every path (or use KTRACE_SCOPE)",
            "block 0 warp 0 (SM 0): 1 begin(s) of region 2 without an end, shown as no span; \
             end the region on every path (or use KTRACE_SCOPE)",
        ]
    );
    assert_eq!(d.warps[0].spans.len(), 1);
    assert_eq!(d.warps[0].spans[0].start_ps, 20 * 500);
}

#[test]
fn clock_rate_outlier_and_origin() {
    let mut l = SynthLaunch::new(shape(5, 32, 32));
    for b in 0..5u32 {
        let cycles = if b == 3 { 2100 } else { 2000 };
        l.write(
            &SynthWarp::new(b, 0)
                .open_at(BASE_GT + 5000 - u64::from(b) * 1000, 50)
                .rate(1000, cycles)
                .span(10, 20, 0)
                .flush_at(cycles * 1000),
        );
    }
    let d = run(&l);
    assert_eq!(d.origin_globaltimer, BASE_GT + 1000);
    assert_eq!(d.device_ratio.mhz(), 2000);
    assert_eq!(kinds(&d), ["clock_rate_outlier"]);
    let m = d.diagnostics.items()[0].to_string();
    assert!(
        m.contains("block 3") && m.contains("2100 MHz") && m.contains("2000 MHz"),
        "{m}"
    );
    // Block 4 opened at the origin.
    assert_eq!(d.warps[4].open_ps, 0);
    assert_eq!(d.warps[0].open_ps, 4_000_000);
}

#[test]
fn slot_mismatch_is_reported() {
    let mut l = SynthLaunch::new(shape(2, 32, 32));
    l.write(&SynthWarp::new(1, 0).span(1, 2, 0));
    // Move slot 1 into slot 0's place, as a kernel launched with another
    // grid or sampling would.
    let sb = l.shape.slot_bytes() as usize;
    let (a, b) = l.raw.split_at_mut(sb);
    a.copy_from_slice(&b[..sb]);
    let d = run(&l);
    assert!(kinds(&d).contains(&"slot_mismatch"));
}

#[test]
fn no_calibration_falls_back_to_the_nominal_clock() {
    let l = SynthLaunch::new(shape(1, 32, 32))
        .with(SynthWarp::new(0, 0).span(10, 50, 0).never_flushed());
    let opts = DecodeOptions {
        nominal_clock_khz: 2_000_000,
        ..DecodeOptions::default()
    };
    let d = decode(v1(&l.raw, &l.shape).unwrap(), &opts);
    assert_eq!(d.device_ratio_source, RatioSource::Nominal);
    assert_eq!(d.warps[0].spans[0].dur_ps(), 20_000);
    assert!(kinds(&d).contains(&"no_clock_calibration"));
}

#[test]
fn wrong_buffer_size_is_an_error() {
    let s = shape(1, 32, 32);
    let raw = vec![0u8; 100];
    let e = v1(&raw, &s).unwrap_err();
    assert!(e.to_string().contains("does not match"), "{e}");
}

#[test]
fn garbage_never_panics() {
    // Random metadata and events with valid magics: decoding must finish.
    let s = shape(4, 64, 32);
    let mut next = ktrace_runtime::synth::xorshift64(0x9e37_79b9_7f4a_7c15);
    for round in 0..200 {
        let mut raw: Vec<u8> = (0..s.buffer_bytes().unwrap())
            .map(|_| next() as u8)
            .collect();
        let sb = s.slot_bytes() as usize;
        for slot in 0..s.slot_count() as usize {
            let m = &mut raw[slot * sb..];
            if round % 3 != 0 {
                m[24..28].copy_from_slice(&0x4f52_544bu32.to_le_bytes());
            }
            if round % 2 == 0 {
                m[52..56].copy_from_slice(&0x4652_544bu32.to_le_bytes());
            }
        }
        let d = decode(v1(&raw, &s).unwrap(), &DecodeOptions::default());
        let _ = d.diagnostics.to_json(10);
    }
}
