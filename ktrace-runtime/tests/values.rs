//! Values recorded with events (layout version 3): each value entry belongs
//! to the event before it, anchors skipped, and takes no part in time.

use ktrace_runtime::decode::{decode, DecodeOptions, DecodedLaunch, TimeModel};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
use ktrace_runtime::{format::shape::LaunchShape, BlockSampling, WarpSampling};

fn shape(cap: u32) -> LaunchShape {
    LaunchShape::new(
        [1, 1, 1],
        [32, 1, 1],
        cap,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .unwrap()
}

fn run(l: &SynthLaunch, layout_version: u32) -> DecodedLaunch {
    let opts = DecodeOptions {
        time_model: TimeModel::Anchors,
        ..DecodeOptions::default()
    };
    decode(l.clone().layout(layout_version).buffer(), &opts)
}

/// A warp with anchors every 256 cycles, tiles 0..8 of "tile" (region 0)
/// with their index as the begin value and 1000 + index as the end value,
/// and a mark (region 1) with value u32::MAX.
fn tiled() -> SynthWarp {
    let mut w = SynthWarp::new(0, 0).anchors(256);
    for i in 0..8u64 {
        let at = 1_000 + i * 600;
        w = w
            .event_value(at, 0, EventKind::Begin, i as u32)
            .event_value(at + 400, 0, EventKind::End, 1_000 + i as u32);
    }
    w.event_value(9_000, 1, EventKind::Mark, u32::MAX)
        .begin(9_500, 2)
        .end(9_700, 2)
}

#[test]
fn values_attach_to_their_events_and_spans() {
    let w = tiled();
    let d = run(&SynthLaunch::new(shape(64)).with(w.clone()), 3);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let dw = &d.warps[0];
    // Values are not events: 16 tile events, one mark, one plain span.
    assert_eq!(dw.events.len(), 19);
    let tiles: Vec<_> = dw.spans.iter().filter(|s| s.region == 0).collect();
    assert_eq!(tiles.len(), 8);
    for (i, s) in tiles.iter().enumerate() {
        assert_eq!(s.begin_value, Some(i as u32));
        assert_eq!(s.end_value, Some(1_000 + i as u32));
        assert_eq!(s.value(), Some(i as u32));
        // 400 cycles at 2 GHz.
        assert_eq!(s.dur_ps(), 200_000);
    }
    let plain = dw.spans.iter().find(|s| s.region == 2).unwrap();
    assert_eq!((plain.begin_value, plain.end_value), (None, None));
    let mark = dw.marks().next().unwrap();
    assert_eq!(mark.value, Some(u32::MAX));
    // Times are those of the same warp recorded without values.
    let mut bare = SynthWarp::new(0, 0).anchors(256);
    for &(at, region, kind) in &w.events {
        bare = bare.event(at, region, kind);
    }
    let b = run(&SynthLaunch::new(shape(64)).with(bare), 3);
    let t = |d: &DecodedLaunch| d.warps[0].events.iter().map(|e| e.t_ps).collect::<Vec<_>>();
    assert_eq!(t(&d), t(&b));
}

#[test]
fn a_value_whose_event_was_overwritten_belongs_to_none() {
    // 16 events + 16 values + 1 mark + its value + anchors overflow a ring
    // of 32: the oldest kept entry may be a value; it must not attach to
    // anything, and every kept span still carries its own values.
    let d = run(&SynthLaunch::new(shape(32)).with(tiled()), 3);
    let dw = &d.warps[0];
    assert!(dw.dropped > 0);
    for s in dw.spans.iter().filter(|s| s.region == 0) {
        let i = s.begin_value.expect("a kept begin keeps its value");
        assert_eq!(s.end_value, Some(1_000 + i));
    }
    assert_eq!(dw.marks().next().unwrap().value, Some(u32::MAX));
}

#[test]
fn before_layout_version_3_value_entries_are_unknown_events() {
    let d = run(&SynthLaunch::new(shape(64)).with(tiled()), 2);
    let dw = &d.warps[0];
    assert!(dw.spans.iter().all(|s| s.value().is_none()));
    assert!(d
        .diagnostics
        .items()
        .iter()
        .any(|x| x.kind() == "unknown_event_type"));
}

#[test]
fn the_chrome_trace_carries_values_as_args() {
    use ktrace_runtime::decode::Decoder;
    use ktrace_runtime::export::{write_trace, ExportOptions};
    use ktrace_runtime::format::capture::DeviceInfo;
    use ktrace_runtime::format::regions::Regions;
    let l = SynthLaunch::new(shape(64)).with(tiled());
    let device = DeviceInfo::default();
    let regions = Regions::from_table(&[(0, "tile"), (1, "stage"), (2, "plain")]);
    let opts = ExportOptions::default();
    let dec = Decoder::new(l.buffer(), &opts.decode_for(&device));
    let mut out = Vec::new();
    write_trace(
        &dec,
        dec.warps(),
        &device,
        &regions,
        &opts,
        std::path::Path::new("t.json"),
        &mut out,
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let tiles: Vec<_> = events.iter().filter(|e| e["name"] == "tile").collect();
    assert_eq!(tiles.len(), 8);
    for (i, t) in tiles.iter().enumerate() {
        assert_eq!(t["args"]["value"], i as u64);
        assert_eq!(t["args"]["end_value"], 1_000 + i as u64);
        assert_eq!(t["args"]["warp"], 0);
    }
    let stage = events.iter().find(|e| e["name"] == "stage").unwrap();
    assert_eq!(stage["args"]["value"], u64::from(u32::MAX));
    let plain = events.iter().find(|e| e["name"] == "plain").unwrap();
    assert!(plain["args"].get("value").is_none());
}
