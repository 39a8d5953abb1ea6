//! The filter's unit tests: parsing, checking against a launch, applying
//! to warps, and the writers that go through it.

use std::borrow::Cow;
use std::fmt;

use super::*;
use crate::decode::{decode, DecodeOptions, DecodedLaunch};
use crate::format::capture::DeviceInfo;
use crate::format::layout::EventKind;
use crate::format::regions::Regions;
use crate::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use crate::synth::{SynthLaunch, SynthWarp};

fn problem(r: Result<impl fmt::Debug, FilterError>) -> String {
    let e = r.expect_err("should fail");
    e.to_string()
}

#[test]
fn time_windows_parse_exactly() {
    let w = TimeWindow::parse("10..250.5").unwrap();
    assert_eq!(w.start_ps, Some(10_000_000));
    assert_eq!(w.end_ps, Some(250_500_000));
    assert_eq!(w.to_string(), "10..250.5");
    let w = TimeWindow::parse("10..").unwrap();
    assert_eq!((w.start_ps, w.end_ps), (Some(10_000_000), None));
    let w = TimeWindow::parse("..0.000001").unwrap();
    assert_eq!((w.start_ps, w.end_ps), (None, Some(1)));
    assert_eq!(
        TimeWindow::parse(" .5 .. 2. ").unwrap().start_ps,
        Some(500_000)
    );
    assert_eq!(TimeWindow::parse("..").unwrap(), TimeWindow::default());
    assert_eq!(TimeWindow::parse("3..3").unwrap().end_ps, Some(3_000_000));
}

#[test]
fn bad_time_windows_say_why() {
    let e = problem(TimeWindow::parse("5..2"));
    assert_eq!(
        e,
        "time window \"5..2\": the window ends (2 us) before it starts (5 us)"
    );
    assert!(problem(TimeWindow::parse("5")).contains("expected START..END"));
    assert!(problem(TimeWindow::parse("5-7")).contains("expected START..END"));
    assert!(problem(TimeWindow::parse("-1..2")).contains("\"-1\" is not a number"));
    assert!(problem(TimeWindow::parse("1e3..")).contains("not a number"));
    assert!(problem(TimeWindow::parse("x..")).contains("not a number"));
    assert!(problem(TimeWindow::parse("1..2..3")).contains("\"2..3\" is not a number"));
    assert!(problem(TimeWindow::parse("1.0000001..")).contains("more than six decimals"));
    assert!(problem(TimeWindow::parse("99999999999999999..")).contains("too large"));
}

#[test]
fn id_lists_parse_and_match() {
    let l = IdList::parse(FilterPart::Blocks, "0-3, 7 ,12-").unwrap();
    assert_eq!(l.to_string(), "0-3,7,12-");
    let kept: Vec<u32> = (0..16).filter(|&v| l.contains(v)).collect();
    assert_eq!(kept, [0, 1, 2, 3, 7, 12, 13, 14, 15]);
    assert!(l.contains(u32::MAX));
    let one = IdList::parse(FilterPart::Warps, "5").unwrap();
    assert_eq!(
        one.ranges(),
        [IdRange {
            first: 5,
            last: Some(5)
        }]
    );
}

#[test]
fn bad_id_lists_say_why() {
    let p = |s| problem(IdList::parse(FilterPart::Blocks, s));
    assert_eq!(
        p("5-2"),
        "block list \"5-2\": the range 5-2 is reversed (write 2-5)"
    );
    assert!(p("").contains("the list is empty"));
    assert!(p(" ").contains("the list is empty"));
    assert!(p("1,,2").contains("an item is empty"));
    assert!(p("1,").contains("an item is empty"));
    assert!(p("a").contains("\"a\" is not a number"));
    assert!(p("-5").contains("\"\" is not a number"));
    assert!(p("1-2-3").contains("\"2-3\" is not a number"));
    assert!(p("4294967296").contains("too large"));
    let e = IdList::parse(FilterPart::Sms, "x").unwrap_err();
    assert_eq!((e.part, e.input.as_str()), (FilterPart::Sms, "x"));
    assert!(e.to_string().starts_with("SM list \"x\": "), "{e}");
}

fn table() -> Regions {
    Regions::from_table(&[(0, "load"), (1, "mma"), (2, "wait_full"), (3, "wait_empty")])
}

#[test]
fn region_names_resolve_to_ids() {
    let r = RegionNames::parse("mma, wait*").unwrap();
    assert_eq!(r.resolve(&table()).unwrap(), [1, 2, 3]);
    let r = RegionNames::parse("load,*").unwrap();
    assert_eq!(r.resolve(&table()).unwrap(), [0, 1, 2, 3]);
    let e = problem(RegionNames::parse("mma,sync").unwrap().resolve(&table()));
    assert_eq!(
        e,
        "region list \"mma,sync\": no region is named \"sync\"; the capture's regions: \
         load, mma, wait_full, wait_empty"
    );
    let e = problem(RegionNames::parse("x*").unwrap().resolve(&table()));
    assert!(e.contains("no region name matches \"x*\""), "{e}");
    let e = problem(RegionNames::parse("x").unwrap().resolve(&Regions::new()));
    assert!(e.ends_with("the capture's region table is empty"), "{e}");
    assert!(problem(RegionNames::parse("")).contains("the list is empty"));
    assert!(problem(RegionNames::parse("a,,b")).contains("a name is empty"));
}

fn shape(blocks: u32, threads: u32, warps: &WarpSampling, b: BlockSampling) -> LaunchShape {
    LaunchShape::new([blocks, 1, 1], [threads, 1, 1], 32, warps, b).unwrap()
}

fn device() -> DeviceInfo {
    DeviceInfo {
        sm_count: 132,
        ..DeviceInfo::default()
    }
}

fn check(f: &TraceFilter, s: &LaunchShape) -> Result<LaunchFilter, FilterError> {
    f.for_launch(s, &device(), &table(), 0)
}

#[test]
fn lists_are_checked_against_the_launch() {
    let s = shape(3, 64, &WarpSampling::All, BlockSampling::All);
    let mut f = TraceFilter::default();
    f.set_blocks("0-9").unwrap();
    assert_eq!(
        problem(check(&f, &s)),
        "block list \"0-9\": block 9 is outside the grid of 3 blocks (0-2)"
    );
    f.set_blocks("1-").unwrap();
    assert!(check(&f, &s).is_ok());
    f.set_blocks("3-").unwrap();
    assert!(problem(check(&f, &s)).contains("block 3 is outside"));

    f = TraceFilter::default();
    f.set_warps("1,2").unwrap();
    assert_eq!(
        problem(check(&f, &s)),
        "warp list \"1,2\": warp 2 is outside a block of 2 warps (0-1)"
    );
    f.set_sms("131,132").unwrap();
    f.set_warps("1").unwrap();
    assert_eq!(
        problem(check(&f, &s)),
        "SM list \"131,132\": SM 132 is outside the device's 132 SMs (0-131)"
    );
    // A capture that does not say how many SMs: not checked.
    assert!(f
        .for_launch(&s, &DeviceInfo::default(), &table(), 0)
        .is_ok());

    // Sampled launches: a list of only untraced blocks or warps fails.
    let s = shape(
        16,
        128,
        &WarpSampling::List(vec![0, 2]),
        BlockSampling::Stride(4),
    );
    f = TraceFilter::default();
    f.set_blocks("1-3,5").unwrap();
    assert_eq!(
        problem(check(&f, &s)),
        "block list \"1-3,5\": none of these blocks was traced: the launch traced one \
         block in 4: 4 blocks, 0, 4, ... 12"
    );
    f.set_blocks("1-4").unwrap();
    assert!(check(&f, &s).is_ok());
    f.set_blocks("13-").unwrap();
    assert!(problem(check(&f, &s)).contains("none of these blocks"));
    f = TraceFilter::default();
    f.set_warps("1,3").unwrap();
    assert_eq!(
        problem(check(&f, &s)),
        "warp list \"1,3\": none of these warps was traced: the launch traced warps 0,2"
    );
    let s = shape(16, 32, &WarpSampling::All, BlockSampling::First(5));
    f = TraceFilter::default();
    f.set_blocks("7").unwrap();
    assert!(problem(check(&f, &s)).ends_with("the launch traced blocks 0-4"));
}

/// Two warps at 2 cycles a ns, both opened at the origin (block 0): t0
/// is warp 0's first event at 50 ns.
fn launch() -> (DecodedLaunch, i64) {
    let base = crate::synth::BASE_GT;
    let l = SynthLaunch::all_traced(2, 64, 64)
        .with(
            SynthWarp::new(0, 0)
                .sm(4)
                .open_at(base, 0)
                .span(100, 300, 0) // 50..150 ns
                .begin(400, 1) // 200 ns
                .span(500, 700, 2) // 250..350 ns
                .mark(800, 3) // 400 ns
                .end(1000, 1) // 500 ns
                .span(1200, 1400, 0), // 600..700 ns
        )
        .with(
            SynthWarp::new(0, 1)
                .sm(4)
                .open_at(base, 0)
                .span(200, 600, 1) // 100..300 ns
                .mark(900, 3), // 450 ns
        )
        .with(
            SynthWarp::new(1, 0)
                .sm(7)
                .open_at(base, 0)
                .span(300, 500, 3), // 150..250 ns
        );
    let d = decode(l.buffer(), &DecodeOptions::default());
    let t0 = d
        .warps
        .iter()
        .filter_map(|w| w.events.first())
        .map(|e| e.t_ps)
        .min()
        .unwrap();
    (d, t0)
}

/// (region, start ns, end ns) of the kept spans, (kind, region, ns) of
/// the kept events, per kept warp (block, warp).
type Kept = Vec<((u32, u16), Vec<(u16, i64, i64)>, Vec<(char, u16, i64)>)>;

fn kept(f: &TraceFilter) -> Kept {
    let (d, t0) = launch();
    let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
    d.warps
        .iter()
        .filter_map(|w| lf.apply(w))
        .map(|w| {
            let spans = w
                .spans
                .iter()
                .map(|s| (s.region, s.start_ps / 1000, s.end_ps / 1000))
                .collect();
            let events = w
                .events
                .iter()
                .map(|e| {
                    let k = match e.kind {
                        EventKind::Begin => 'B',
                        EventKind::End => 'E',
                        EventKind::Mark => 'i',
                    };
                    (k, e.region, e.t_ps / 1000)
                })
                .collect();
            ((w.id.block, w.id.warp), spans, events)
        })
        .collect()
}

#[test]
fn an_empty_filter_borrows_every_warp() {
    let (d, t0) = launch();
    assert_eq!(t0, 50_000);
    let lf = TraceFilter::default()
        .for_launch(&d.shape, &device(), &table(), t0)
        .unwrap();
    assert!(lf.keeps_all());
    for w in &d.warps {
        assert!(matches!(lf.apply(w), Some(Cow::Borrowed(b)) if std::ptr::eq(b, w)));
    }
    // A window over the whole launch keeps everything, borrowed too.
    let mut f = TraceFilter::default();
    f.set_time("0..").unwrap();
    let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
    assert!(d
        .warps
        .iter()
        .all(|w| matches!(lf.apply(w), Some(Cow::Borrowed(_)))));
}

#[test]
fn warp_lists_keep_whole_warps() {
    let mut f = TraceFilter::default();
    f.set_blocks("0").unwrap();
    f.set_warps("1-").unwrap();
    let k = kept(&f);
    assert_eq!(k.len(), 1);
    assert_eq!(k[0].0, (0, 1));
    assert_eq!(k[0].1, [(1, 100, 300)]);
    let mut f = TraceFilter::default();
    f.set_sms("7").unwrap();
    let k = kept(&f);
    assert_eq!(k.iter().map(|w| w.0).collect::<Vec<_>>(), [(1, 0)]);
}

#[test]
fn a_window_keeps_overlapping_spans_whole_and_marks_inside() {
    // 0.2..0.35 us from t0 (50 ns): 250..400 ns from the origin.
    let mut f = TraceFilter::default();
    f.set_time("0.2..0.35").unwrap();
    let k = kept(&f);
    assert_eq!(
        k,
        [
            (
                (0, 0),
                // The span 200..500 crosses both edges: kept whole.
                vec![(1, 200, 500), (2, 250, 350)],
                vec![
                    ('B', 1, 200),
                    ('B', 2, 250),
                    ('E', 2, 350),
                    ('i', 3, 400),
                    ('E', 1, 500)
                ]
            ),
            // Ends at 300, inside; the mark at 450 is outside.
            (
                (0, 1),
                vec![(1, 100, 300)],
                vec![('B', 1, 100), ('E', 1, 300)]
            ),
            // 150..250 ends exactly at the window's start: kept.
            (
                (1, 0),
                vec![(3, 150, 250)],
                vec![('B', 3, 150), ('E', 3, 250)]
            ),
        ]
    );
    // A window with nothing in it leaves every warp out.
    f.set_time("0.51..0.54").unwrap();
    let k = kept(&f);
    assert!(k.is_empty(), "{k:?}");
    // An open start.
    f.set_time("..0.05").unwrap();
    let k = kept(&f);
    assert_eq!(k.iter().map(|w| w.0).collect::<Vec<_>>(), [(0, 0), (0, 1)]);
    assert_eq!(k[0].1, [(0, 50, 150)]);
}

#[test]
fn regions_keep_their_spans_and_marks() {
    let mut f = TraceFilter::default();
    f.set_regions("mma,wait_empty").unwrap();
    let k = kept(&f);
    assert_eq!(
        k,
        [
            (
                (0, 0),
                vec![(1, 200, 500)],
                vec![('B', 1, 200), ('i', 3, 400), ('E', 1, 500)]
            ),
            (
                (0, 1),
                vec![(1, 100, 300)],
                vec![('B', 1, 100), ('E', 1, 300), ('i', 3, 450)]
            ),
            (
                (1, 0),
                vec![(3, 150, 250)],
                vec![('B', 3, 150), ('E', 3, 250)]
            ),
        ]
    );
    // With a window: only what both keep.
    f.set_time("0.3..").unwrap();
    f.set_regions("wait*").unwrap();
    let k = kept(&f);
    assert_eq!(
        k,
        [
            (
                (0, 0),
                vec![(2, 250, 350)],
                vec![('B', 2, 250), ('E', 2, 350), ('i', 3, 400)]
            ),
            ((0, 1), vec![], vec![('i', 3, 450)]),
        ]
    );
}

#[test]
fn unmatched_events_are_kept_by_their_time() {
    let base = crate::synth::BASE_GT;
    let l = SynthLaunch::all_traced(1, 32, 32).with(
        SynthWarp::new(0, 0)
            .open_at(base, 0)
            .end(100, 1) // 50 ns: no begin
            .span(200, 400, 0) // 100..200 ns
            .begin(600, 2), // 300 ns: no end
    );
    let d = decode(l.buffer(), &DecodeOptions::default());
    let mut f = TraceFilter::default();
    f.set_time("0.2..").unwrap(); // 250 ns from the origin
    let lf = f.for_launch(&d.shape, &device(), &table(), 50_000).unwrap();
    let w = lf.apply(&d.warps[0]).unwrap();
    assert!(w.spans.is_empty());
    assert_eq!(w.events.len(), 1);
    assert_eq!(
        (w.events[0].kind, w.events[0].t_ps),
        (EventKind::Begin, 300_000)
    );
    f.set_time("..0.1").unwrap(); // up to 150 ns
    let lf = f.for_launch(&d.shape, &device(), &table(), 50_000).unwrap();
    let w = lf.apply(&d.warps[0]).unwrap();
    let kinds: Vec<(EventKind, i64)> = w.events.iter().map(|e| (e.kind, e.t_ps)).collect();
    // The span's end outside the window comes with it.
    assert_eq!(
        kinds,
        [
            (EventKind::End, 50_000),
            (EventKind::Begin, 100_000),
            (EventKind::End, 200_000)
        ]
    );
    assert_eq!(w.diagnostics, d.warps[0].diagnostics);
}

#[test]
fn a_window_past_the_end_says_where_the_launch_ends() {
    let (d, t0) = launch();
    let last = d
        .warps
        .iter()
        .filter_map(|w| w.events.last())
        .map(|e| e.t_ps)
        .max();
    assert_eq!(last, Some(700_000));
    let mut f = TraceFilter::default();
    f.set_time("0.65..").unwrap();
    let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
    assert!(lf.check_end(last).is_ok());
    f.set_time("0.650001..2").unwrap();
    let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
    assert_eq!(
        lf.check_end(last).unwrap_err().to_string(),
        "time window \"0.650001..2\": the window starts after the launch's end: its last \
         event is at 0.65 us from its first"
    );
    assert!(lf.check_end(None).is_ok());
}

#[test]
fn the_record_of_a_filter() {
    let (d, t0) = launch();
    let mut f = TraceFilter::default();
    f.set_time("0.1..").unwrap();
    f.set_blocks("0").unwrap();
    f.set_regions("wait*").unwrap();
    f.summary = SummaryScope::Kept;
    let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
    assert_eq!(lf.window_ps(), Some((150_000, i64::MAX)));
    assert_eq!(
        lf.to_json(2),
        serde_json::json!({
            "time_us": "0.1..",
            "window_ps_from_origin": [150_000, null],
            "spans_crossing_the_window": "kept whole",
            "blocks": "0",
            "sms": null,
            "warps": null,
            "regions": ["wait*"],
            "region_ids": [2, 3],
            "summary": "kept",
            "warps_kept": 2,
        })
    );
}

/// The trace events (not metadata) of a Chrome trace, as (name, pid).
fn chrome_events(trace: &serde_json::Value) -> Vec<(String, u64)> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["pid"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn write(
    opts: &crate::export::ExportOptions,
) -> crate::error::Result<(serde_json::Value, crate::export::summary::Summary)> {
    let cap = crate::synth::sample_capture();
    let l = &cap.launches[0];
    let dec = crate::decode::Decoder::new(l.buffer().unwrap(), &opts.decode_for(&cap.device));
    let mut out = Vec::new();
    let written = crate::export::write_trace(
        &dec,
        dec.warps(),
        &cap.device,
        &cap.regions,
        opts,
        std::path::Path::new("t.json"),
        &mut out,
    )?;
    Ok((serde_json::from_slice(&out).unwrap(), written.summary))
}

#[test]
fn write_trace_writes_what_the_filter_keeps() {
    let (whole, whole_summary) = write(&crate::export::ExportOptions::default()).unwrap();
    assert!(whole["otherData"].get("filter").is_none());
    let mut f = TraceFilter::default();
    f.set_blocks("1").unwrap();
    f.set_regions("mma").unwrap();
    let mut opts = crate::export::ExportOptions {
        filter: Some(f),
        ..crate::export::ExportOptions::default()
    };
    let (t, summary) = write(&opts).unwrap();
    // Block 1's warp 0 has 16 mma spans left in its ring of 32
    // entries; its warp 1 only a load span.
    let events = chrome_events(&t);
    assert_eq!(events, vec![("mma".to_string(), 1); 16]);
    let filter = &t["otherData"]["filter"];
    assert_eq!(filter["blocks"], "1");
    assert_eq!(filter["regions"], serde_json::json!(["mma"]));
    assert_eq!(filter["region_ids"], serde_json::json!([1]));
    assert_eq!(filter["warps_kept"], 1);
    assert_eq!(filter["summary"], "launch");
    assert_eq!(t["otherData"]["events"], 16);
    assert_eq!(t["otherData"]["warps"], 5);
    // The summary still covers the whole launch.
    assert_eq!(summary, whole_summary);
    // ... unless asked to cover what was kept.
    opts.filter.as_mut().unwrap().summary = SummaryScope::Kept;
    let (t, kept) = write(&opts).unwrap();
    assert_eq!(chrome_events(&t).len(), 16);
    let regions: Vec<(&str, u64)> = kept
        .regions
        .iter()
        .map(|r| (r.name.as_str(), r.count))
        .collect();
    assert_eq!(regions, [("mma", 16)]);
    let mma = whole_summary
        .regions
        .iter()
        .find(|r| r.name == "mma")
        .unwrap();
    assert!(mma.count > 16, "{}", mma.count);
    assert_eq!(kept.filter.as_ref().unwrap()["summary"], "kept");
    assert!(whole_summary.filter.is_none());
    // The same through summarize_launch.
    let cap = crate::synth::sample_capture();
    let (again, _) =
        crate::export::summarize_launch(&cap.launches[0], &cap.device, &cap.regions, &opts)
            .unwrap();
    assert_eq!(again.regions, kept.regions);
}

#[test]
fn write_trace_with_a_window() {
    // The window's rule applied to the unfiltered file gives the
    // filtered file's events, exactly.
    let (whole, _) = write(&crate::export::ExportOptions::default()).unwrap();
    let mut f = TraceFilter::default();
    f.set_time("1.1..3.21").unwrap();
    let opts = crate::export::ExportOptions {
        filter: Some(f),
        ..crate::export::ExportOptions::default()
    };
    let (t, _) = write(&opts).unwrap();
    let ps = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e6).round() as i64;
    let (lo, hi) = (1_100_000, 3_210_000);
    let events = |t: &serde_json::Value| -> Vec<serde_json::Value> {
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] != "M")
            .cloned()
            .collect()
    };
    let expected: Vec<serde_json::Value> = events(&whole)
        .into_iter()
        .filter(|e| match e["ph"].as_str().unwrap() {
            "X" => ps(&e["ts"]) <= hi && ps(&e["ts"]) + ps(&e["dur"]) >= lo,
            _ => (lo..=hi).contains(&ps(&e["ts"])),
        })
        .collect();
    let got = events(&t);
    assert_eq!(got, expected);
    assert!(!got.is_empty() && got.len() < events(&whole).len());
    // Spans crossing an edge are kept whole: block 1's load span
    // (1.01..1.11 us) and an mma span (3.2..3.226 us).
    assert!(got
        .iter()
        .any(|e| ps(&e["ts"]) < lo || ps(&e["ts"]) + ps(&e["dur"]) > hi));
    // Block 0 warp 1 ends at 0.66 us: its thread is left out.
    let threads: Vec<(u64, u64)> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
        .collect();
    assert_eq!(threads, [(0, 0), (1, 0), (1, 1), (2, 0)]);
    assert_eq!(t["otherData"]["filter"]["warps_kept"], 4);
}

#[test]
fn write_trace_fails_on_a_window_past_the_end() {
    let mut f = TraceFilter::default();
    f.set_time("100..").unwrap();
    let opts = crate::export::ExportOptions {
        filter: Some(f),
        ..crate::export::ExportOptions::default()
    };
    // A configuration error (not an io error), whose message is the
    // FilterError's: its part (the time window), its input and the problem.
    let e = write(&opts).unwrap_err();
    assert!(matches!(e, crate::error::Error::Config(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "time window \"100..\": the window starts after the launch's end: its last \
         event is at 4.834 us from its first"
    );
    assert!(e.to_string().starts_with(&FilterPart::Time.to_string()));
}

#[test]
fn export_launch_writes_nothing_for_a_filter_that_does_not_fit() {
    let cap = crate::synth::sample_capture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    for (set, needle) in [
        (
            (|f: &mut TraceFilter| f.set_time("100..")) as fn(&mut TraceFilter) -> _,
            "its last event is at 4.834 us from its first",
        ),
        (
            |f| f.set_blocks("3"),
            "block 3 is outside the grid of 3 blocks (0-2)",
        ),
        (
            |f| f.set_regions("nope"),
            "the capture's regions: load, mma, tick",
        ),
    ] {
        let mut f = TraceFilter::default();
        set(&mut f).unwrap();
        let opts = crate::export::ExportOptions {
            filter: Some(f),
            ..crate::export::ExportOptions::default()
        };
        let e =
            crate::export::export_launch(&cap.launches[0], &cap.device, &cap.regions, &path, &opts)
                .unwrap_err();
        assert!(matches!(e, crate::error::Error::Config(_)), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
