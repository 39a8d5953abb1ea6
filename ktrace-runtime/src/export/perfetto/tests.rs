//! The writer's unit tests: files written and read back as Perfetto's
//! importer reads them (the encoder's own test is in `encode.rs`).

use std::collections::HashMap;

use super::*;
use crate::decode::DecodeOptions;
use crate::format::capture::LaunchCapture;
use crate::synth::{SynthLaunch, SynthWarp};

/// A track as its descriptor declares it.
#[derive(Clone, Debug)]
struct Track {
    name: String,
    parent: Option<u64>,
    rank: i32,
    ordering: Option<i32>,
}

/// One track event, resolved: its track, type, name and time in ns.
#[derive(Clone, Debug, PartialEq)]
struct Event {
    track: u64,
    kind: i32,
    name: Option<String>,
    ns: u64,
    args: Vec<(String, u64)>,
}

#[derive(Default)]
struct Sequence {
    clock: Option<u32>,
    track: Option<u64>,
    last_ns: u64,
    names: HashMap<u64, String>,
    arg_names: HashMap<u64, String>,
}

impl Sequence {
    /// Takes in what packet `p` sets of the sequence's state: cleared,
    /// defaults, interned names.
    fn update(&mut self, p: &pb::TracePacket) {
        if p.sequence_flags.unwrap_or(0) & 1 != 0 {
            *self = Sequence::default();
        }
        if let Some(d) = &p.trace_packet_defaults {
            self.clock = d.timestamp_clock_id;
            self.track = d.track_event_defaults.as_ref().and_then(|t| t.track_uuid);
        }
        if let Some(i) = &p.interned_data {
            for n in &i.event_names {
                self.names.insert(n.iid.unwrap(), n.name.clone().unwrap());
            }
            for n in &i.debug_annotation_names {
                self.arg_names
                    .insert(n.iid.unwrap(), n.name.clone().unwrap());
            }
        }
    }

    /// Track event `e` of a packet with `timestamp` on `clock`, resolved.
    fn event(&mut self, timestamp: Option<u64>, clock: Option<u32>, e: &pb::TrackEvent) -> Event {
        let ts = timestamp.expect("events have a timestamp");
        let ns = match clock.or(self.clock) {
            Some(INCREMENTAL_CLOCK_ID) => {
                self.last_ns += ts;
                self.last_ns
            }
            Some(REALTIME_CLOCK_ID) => ts,
            other => panic!("clock {other:?}"),
        };
        let name = match e.name_iid {
            Some(iid) => Some(self.names.get(&iid).expect("interned before use").clone()),
            None => e.name.clone(),
        };
        let args = e
            .debug_annotations
            .iter()
            .map(|a| {
                let name = match a.name_iid {
                    Some(iid) => self.arg_names[&iid].clone(),
                    None => a.name.clone().expect("a name or its id"),
                };
                (name, a.uint_value.unwrap())
            })
            .collect();
        Event {
            track: e.track_uuid.or(self.track).expect("a track"),
            kind: e.r#type.unwrap(),
            name,
            ns,
            args,
        }
    }
}

/// Reads a trace as Perfetto's importer does for the features ktrace
/// writes: per-sequence defaults, interned names and incremental clock.
fn read(bytes: &[u8]) -> (HashMap<u64, Track>, Vec<Event>, Vec<pb::ClockSnapshot>) {
    let trace = pb::Trace::decode(bytes).expect("a Trace message");
    let mut tracks = HashMap::new();
    let mut events = Vec::new();
    let mut snapshots = Vec::new();
    let mut seqs: HashMap<u32, Sequence> = HashMap::new();
    for p in trace.packet {
        let id = p
            .trusted_packet_sequence_id
            .expect("every packet names its sequence");
        let seq = seqs.entry(id).or_default();
        seq.update(&p);
        match p.data {
            Some(pb::trace_packet::Data::ClockSnapshot(c)) => {
                for clock in &c.clocks {
                    if clock.clock_id == Some(INCREMENTAL_CLOCK_ID) {
                        assert_eq!(clock.is_incremental, Some(true));
                        seq.last_ns = clock.timestamp.unwrap();
                    }
                }
                snapshots.push(c);
            }
            Some(pb::trace_packet::Data::TrackDescriptor(d)) => {
                let prev = tracks.insert(
                    d.uuid.unwrap(),
                    Track {
                        name: d.name.unwrap(),
                        parent: d.parent_uuid,
                        rank: d.sibling_order_rank.unwrap_or(0),
                        ordering: d.child_ordering,
                    },
                );
                assert!(prev.is_none(), "one descriptor per track");
            }
            Some(pb::trace_packet::Data::TrackEvent(e)) => {
                events.push(seq.event(p.timestamp, p.timestamp_clock_id, &e));
            }
            None => {}
        }
    }
    (tracks, events, snapshots)
}

/// A track's name and its ancestors', root first.
fn path(tracks: &HashMap<u64, Track>, mut uuid: u64) -> Vec<String> {
    let mut names = Vec::new();
    loop {
        let t = &tracks[&uuid];
        names.push(t.name.clone());
        match t.parent {
            Some(p) => uuid = p,
            None => break,
        }
    }
    names.reverse();
    names
}

/// Slices `(track, name, start, end)` and instants `(track, name, t)`;
/// panics unless every track's slices nest and its times never go back.
#[allow(clippy::type_complexity)]
fn slices(events: &[Event]) -> (Vec<(u64, String, u64, u64)>, Vec<(u64, String, u64)>) {
    let mut open: HashMap<u64, Vec<(String, u64)>> = HashMap::new();
    let mut last: HashMap<u64, u64> = HashMap::new();
    let mut spans = Vec::new();
    let mut instants = Vec::new();
    for e in events {
        let l = last.entry(e.track).or_insert(0);
        assert!(e.ns >= *l, "time goes back on a track");
        *l = e.ns;
        let stack = open.entry(e.track).or_default();
        match e.kind {
            1 => stack.push((e.name.clone().unwrap(), e.ns)),
            2 => {
                let (name, start) = stack.pop().expect("an end closes an open slice");
                spans.push((e.track, name, start, e.ns));
            }
            3 => instants.push((e.track, e.name.clone().unwrap(), e.ns)),
            k => panic!("type {k}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "every slice ends");
    (spans, instants)
}

/// A launch whose warps hold everything the layout has to handle:
/// regions that overlap without nesting (1 over 100..300 and 2 over
/// 200..400 cycles), nested and repeated regions, zero-length spans,
/// marks at span boundaries, an unmatched begin and an unmatched end,
/// odd cycle counts (half nanoseconds at 2 GHz), and warps on two SMs.
fn tricky_launch() -> LaunchCapture {
    SynthLaunch::all_traced(3, 64, 64)
        .with(
            SynthWarp::new(0, 0)
                .begin(100, 1)
                .mark(100, 5)
                .begin(150, 3)
                .begin(151, 3)
                .end(181, 3)
                .end(190, 3)
                .begin(200, 2)
                .begin(250, 4)
                .end(280, 4)
                .end(300, 1)
                .mark(300, 5)
                .begin(301, 6)
                .end(301, 6)
                .begin(350, 1)
                .end(390, 1)
                .end(400, 2)
                .begin(401, 7)
                .flush_at(1000),
        )
        .with(
            SynthWarp::new(0, 1)
                .end(90, 2)
                .span(100, 200, 1)
                .span(150, 250, 2)
                .span(160, 260, 3)
                .span(170, 270, 4)
                .mark(205, 5)
                .flush_at(1000),
        )
        .with(SynthWarp::new(1, 0).sm(7).span(10, 20, 1).flush_at(100))
        .with(SynthWarp::new(1, 1).sm(7).flush_at(100))
        // Nested and consecutive spans only, marks at their edges.
        .with(
            SynthWarp::new(2, 0)
                .sm(7)
                .mark(5, 5)
                .begin(10, 1)
                .mark(10, 5)
                .begin(10, 2)
                .end(20, 2)
                .mark(20, 5)
                .begin(20, 3)
                .end(31, 3)
                .end(40, 1)
                .mark(40, 5)
                .begin(40, 4)
                .end(40, 4)
                .mark(90, 5)
                .flush_at(100),
        )
        .into_capture()
}

fn regions() -> Regions {
    Regions::from_table(&[
        (1, "a"),
        (2, "b"),
        (3, "c"),
        (4, "d"),
        (5, "tick"),
        (6, "zero"),
    ])
}

fn group(n: u32) -> LaunchGroup {
    LaunchGroup {
        title: format!("launch {n}: tricky"),
        device: "GPU 0: test".into(),
        offset_ns: -1_000_000_000,
        host_span_ns: None,
    }
}

/// Writes `launch` and reads it back, with what the decoder found.
#[allow(clippy::type_complexity)]
fn round_trip(
    launch: &LaunchCapture,
    opts: PerfettoOptions,
) -> (
    Vec<WarpTrace>,
    i64,
    HashMap<u64, Track>,
    Vec<Event>,
    Vec<pb::ClockSnapshot>,
    u64,
) {
    let dec = Decoder::new(launch.buffer().unwrap(), &DecodeOptions::default());
    let mut w = PerfettoWriter::begin(Vec::new(), opts).unwrap();
    w.launch(&group(launch.shape.launch), &dec, &regions())
        .unwrap();
    let warps: Vec<WarpTrace> = dec.warps().collect();
    for warp in &warps {
        w.warp(warp).unwrap();
    }
    let written = w.events_written();
    let bytes = w.finish().unwrap();
    let (tracks, events, snapshots) = read(&bytes);
    let base = dec.origin_globaltimer() as i64 - 1_000_000_000;
    (warps, base, tracks, events, snapshots, written)
}

/// The warp `(sm, block, warp)` whose tracks hold `track`, and the lane:
/// 0 for the warp's own track, `n` for its "Overlap n".
fn warp_of(tracks: &HashMap<u64, Track>, track: u64) -> ((u16, u32, u16), u32) {
    let p = path(tracks, track);
    assert_eq!(p[0], "GPU 0: test");
    assert_eq!(p[1], "launch 0: tricky");
    let num = |s: &str, prefix: &str| s.strip_prefix(prefix).unwrap().parse::<u32>().unwrap();
    let key = (
        num(&p[2], "SM ") as u16,
        num(&p[3], "Block "),
        num(&p[4], "Warp ") as u16,
    );
    match p.len() {
        5 => (key, 0),
        6 => (key, num(&p[5], "Overlap ")),
        n => panic!("track depth {n}"),
    }
}

/// The tricky launch written and read back.
struct TrickyTrip {
    warps: Vec<WarpTrace>,
    base: i64,
    tracks: HashMap<u64, Track>,
    events: Vec<Event>,
    snapshots: Vec<pb::ClockSnapshot>,
    written: u64,
    spans: Vec<(u64, String, u64, u64)>,
    instants: Vec<(u64, String, u64)>,
}

/// Every span and mark the decoder matched is on its warp's tracks, at
/// its time on the output axis, and counted.
fn check_every_span_and_mark(r: &TrickyTrip) {
    let regions = regions();
    // What the decoder matched, on the output axis, by warp.
    let mut expected_spans = Vec::new();
    let mut expected_marks = Vec::new();
    for w in &r.warps {
        let key = (w.id.sm, w.id.block, w.id.warp);
        for s in &w.spans {
            let name = regions.name(s.region).into_owned();
            expected_spans.push((
                key,
                name,
                ns_at(r.base, s.start_ps),
                ns_at(r.base, s.end_ps),
            ));
        }
        for m in w.marks() {
            expected_marks.push((
                key,
                regions.name(m.region).into_owned(),
                ns_at(r.base, m.t_ps),
            ));
        }
    }
    let mut got_spans: Vec<_> = r
        .spans
        .iter()
        .map(|(t, n, a, b)| (warp_of(&r.tracks, *t).0, n.clone(), *a, *b))
        .collect();
    let mut got_marks: Vec<_> = r
        .instants
        .iter()
        .map(|(t, n, ns)| (warp_of(&r.tracks, *t).0, n.clone(), *ns))
        .collect();
    expected_spans.sort();
    expected_marks.sort();
    got_spans.sort();
    got_marks.sort();
    assert_eq!(got_spans, expected_spans);
    assert_eq!(got_marks, expected_marks);
    assert_eq!(
        r.written,
        (expected_spans.len() + expected_marks.len()) as u64
    );
}

/// The spans that overlap without nesting are on overlap tracks, and
/// marks follow the slice events at their time.
fn check_overlaps_and_order(r: &TrickyTrip) {
    // Both warps of block 0 needed overlap tracks: warp 0 for b over
    // a, warp 1 for its staircase of four spans.
    let overlaps: Vec<_> = r
        .spans
        .iter()
        .map(|(t, n, _, _)| (warp_of(&r.tracks, *t), n.as_str()))
        .filter(|((_, lane), _)| *lane > 0)
        .collect();
    assert_eq!(
        overlaps,
        [
            (((0, 0, 0), 1), "b"),
            (((0, 0, 1), 1), "b"),
            (((0, 0, 1), 2), "c"),
            (((0, 0, 1), 3), "d"),
        ]
    );
    // Marks follow the slice events at their time: inside a span
    // that begins then, after one that ends then.
    let order: Vec<String> = r
        .events
        .iter()
        .filter(|e| warp_of(&r.tracks, e.track).0 == (7, 2, 0))
        .map(|e| match e.kind {
            1 => format!("B {}", e.name.as_deref().unwrap()),
            2 => "E".to_string(),
            _ => "I".to_string(),
        })
        .collect();
    assert_eq!(
        order,
        ["I", "B a", "B b", "I", "E", "B c", "I", "E", "E", "B d", "E", "I", "I"]
    );
}

/// Times round halves up; unmatched events and empty warps are left out;
/// tracks order their children explicitly; the trace is on REALTIME.
fn check_rounding_and_tracks(r: &TrickyTrip) {
    let (tracks, events) = (&r.tracks, &r.events);
    // Half nanoseconds round up: c over 150..190 and 151..181
    // cycles is 75..95 and 75.5..90.5 ns after open.
    let open = ns_at(r.base, r.warps[0].open_ps);
    let mut c: Vec<(u64, u64)> = r
        .spans
        .iter()
        .filter(|s| s.1 == "c" && warp_of(tracks, s.0).0 == (0, 0, 0))
        .map(|s| (s.2 - open, s.3 - open))
        .collect();
    c.sort();
    assert_eq!(c, [(75, 95), (76, 91)]);
    // The unmatched begin (region 7) and end are left out; the warp
    // without events has no track; every parent orders explicitly.
    assert!(events.iter().all(|e| e.name.as_deref() != Some("region 7")));
    assert!(!tracks
        .values()
        .any(|t| t.name == "Warp 01" && path(tracks, t.parent.unwrap())[3] == "Block 0001"));
    assert!(tracks.values().all(|t| t.ordering == Some(3)));
    let sms: Vec<i32> = {
        let mut v: Vec<i32> = tracks
            .values()
            .filter(|t| t.name.starts_with("SM "))
            .map(|t| t.rank)
            .collect();
        v.sort();
        v
    };
    assert_eq!(sms, [0, 7]);
    // Alone, the trace is on REALTIME.
    assert_eq!(
        r.snapshots[0].primary_trace_clock,
        Some(pb::BuiltinClock::BuiltinClockRealtime as i32)
    );
}

/// With `args`, annotations name the event's own warp and region;
/// without, there are none.
fn check_annotations(r: &TrickyTrip, args: bool) {
    let regions = regions();
    // Annotations name the event's own warp and region.
    for e in r.events.iter().filter(|e| e.kind != 2) {
        if !args {
            assert!(e.args.is_empty());
            continue;
        }
        let ((sm, block, warp), _) = warp_of(&r.tracks, e.track);
        let region = regions
            .iter()
            .find(|(_, n)| Some(*n) == e.name.as_deref())
            .unwrap()
            .0;
        let want: Vec<(String, u64)> = [
            ("sm", u64::from(sm)),
            ("block", u64::from(block)),
            ("warp", u64::from(warp)),
            ("region", u64::from(region)),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), *v))
        .collect();
        assert_eq!(e.args, want);
    }
}

#[test]
fn every_span_and_mark_comes_back_on_its_warps_tracks_and_slices_nest() {
    let launch = tricky_launch();
    for args in [false, true] {
        let opts = PerfettoOptions {
            host_clocks: None,
            args,
        };
        let (warps, base, tracks, events, snapshots, written) = round_trip(&launch, opts);
        let (spans, instants) = slices(&events);
        let r = TrickyTrip {
            warps,
            base,
            tracks,
            events,
            snapshots,
            written,
            spans,
            instants,
        };
        check_every_span_and_mark(&r);
        check_overlaps_and_order(&r);
        check_rounding_and_tracks(&r);
        check_annotations(&r, args);
    }
}

#[test]
fn host_clocks_make_boottime_the_trace_clock_and_host_spans_get_a_track() {
    let launch = tricky_launch();
    let dec = Decoder::new(launch.buffer().unwrap(), &DecodeOptions::default());
    let host = HostClocks {
        realtime_ns: 1_700_000_000_000_000_000,
        boottime_ns: 5_000_000_000,
        monotonic_ns: 4_000_000_000,
    };
    let opts = PerfettoOptions {
        host_clocks: Some(host),
        args: false,
    };
    let mut w = PerfettoWriter::begin(Vec::new(), opts).unwrap();
    let g = LaunchGroup {
        host_span_ns: Some((1_700_000_000_000_000_100, 1_700_000_000_000_009_000)),
        ..group(0)
    };
    w.launch(&g, &dec, &regions()).unwrap();
    for warp in dec.warps() {
        w.warp(&warp).unwrap();
    }
    let (tracks, events, snapshots) = read(&w.finish().unwrap());
    let first = &snapshots[0];
    assert_eq!(
        first.primary_trace_clock,
        Some(pb::BuiltinClock::BuiltinClockBoottime as i32)
    );
    let clocks: Vec<(u32, u64)> = first
        .clocks
        .iter()
        .map(|c| (c.clock_id.unwrap(), c.timestamp.unwrap()))
        .collect();
    assert_eq!(
        clocks,
        [
            (6, 5_000_000_000),
            (1, 1_700_000_000_000_000_000),
            (3, 4_000_000_000)
        ]
    );
    // Every other snapshot starts a warp's incremental clock on REALTIME.
    assert!(snapshots[1..]
        .iter()
        .all(|s| s.primary_trace_clock.is_none()
            && s.clocks.len() == 2
            && s.clocks[0].clock_id == Some(REALTIME_CLOCK_ID)
            && s.clocks[1].clock_id == Some(INCREMENTAL_CLOCK_ID)
            && s.clocks[0].timestamp == s.clocks[1].timestamp));
    let (spans, _) = slices(&events);
    let host_spans: Vec<_> = spans
        .iter()
        .filter(|s| path(&tracks, s.0).last().unwrap() == "Host")
        .collect();
    assert_eq!(host_spans.len(), 1);
    assert_eq!((host_spans[0].2, host_spans[0].3), g.host_span_ns.unwrap());
    assert_eq!(
        path(&tracks, host_spans[0].0),
        ["GPU 0: test", "launch 0: tricky", "Host"]
    );
    assert_eq!(tracks[&host_spans[0].0].rank, -1);
}

#[test]
fn launches_share_their_device_track_and_keep_apart_otherwise() {
    let a = tricky_launch();
    let mut b = crate::synth::sample_launch(1, 3);
    b.shape.launch = 1;
    let regions = regions();
    let mut w = PerfettoWriter::begin(Vec::new(), PerfettoOptions::default()).unwrap();
    let mut counts = Vec::new();
    for l in [&a, &b] {
        let dec = Decoder::new(l.buffer().unwrap(), &DecodeOptions::default());
        w.launch(&group(l.shape.launch), &dec, &regions).unwrap();
        let mut n = 0;
        for warp in dec.warps() {
            n += warp.spans.len() + warp.marks().count();
            w.warp(&warp).unwrap();
        }
        counts.push(n);
    }
    let (tracks, events, _) = read(&w.finish().unwrap());
    let devices: Vec<_> = tracks.values().filter(|t| t.parent.is_none()).collect();
    assert_eq!(devices.len(), 1);
    let mut per_launch: HashMap<String, usize> = HashMap::new();
    for e in events.iter().filter(|e| e.kind != 1) {
        *per_launch
            .entry(path(&tracks, e.track)[1].clone())
            .or_default() += 1;
    }
    assert_eq!(per_launch["launch 0: tricky"], counts[0]);
    assert_eq!(per_launch["launch 1: tricky"], counts[1]);
    let ranks: Vec<i32> = {
        let mut v: Vec<i32> = tracks
            .values()
            .filter(|t| t.name.starts_with("launch "))
            .map(|t| t.rank)
            .collect();
        v.sort();
        v
    };
    assert_eq!(ranks, [0, 1]);
    slices(&events);
}

#[test]
fn values_become_annotations_named_value_and_end_value() {
    use crate::format::layout::EventKind;
    let launch = SynthLaunch::all_traced(1, 32, 32)
        .with(
            SynthWarp::new(0, 0)
                .event_value(10, 1, EventKind::Begin, 7)
                .event_value(20, 1, EventKind::End, 9)
                .event_value(30, 5, EventKind::Mark, u32::MAX)
                .span(40, 50, 2)
                .flush_at(100),
        )
        .into_capture();
    for args in [false, true] {
        let opts = PerfettoOptions {
            args,
            ..PerfettoOptions::default()
        };
        let (_, _, _, events, _, _) = round_trip(&launch, opts);
        let named = |name: &str, kind: u8| {
            events
                .iter()
                .find(|e| e.name.as_deref() == Some(name) && e.kind == i32::from(kind))
                .unwrap_or_else(|| panic!("{name} in {events:?}"))
                .args
                .iter()
                .filter(|(k, _)| k.contains("value"))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            named("a", SLICE_BEGIN),
            [("value".to_string(), 7), ("end_value".to_string(), 9)]
        );
        assert_eq!(
            named("tick", INSTANT),
            [("value".to_string(), u64::from(u32::MAX))]
        );
        assert!(named("b", SLICE_BEGIN).is_empty());
        // Without --args a plain span carries no annotations at all.
        if !args {
            let b = events
                .iter()
                .find(|e| e.name.as_deref() == Some("b"))
                .unwrap();
            assert!(b.args.is_empty());
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn host_clocks_are_read_together() {
    let a = HostClocks::now().expect("clock_gettime works on Linux");
    let b = HostClocks::now().expect("clock_gettime works on Linux");
    // Realtime is Unix time (after 2020); boottime counts at least what
    // monotonic does (it adds suspended time), read a moment earlier.
    assert!(a.realtime_ns > 1_577_836_800_000_000_000);
    assert!(a.boottime_ns + 1_000_000 >= a.monotonic_ns);
    // Read again, every clock moved forward by about the same amount.
    let d = |x: u64, y: u64| y.wrapping_sub(x) as i64;
    assert!(d(a.boottime_ns, b.boottime_ns) >= 0);
    assert!(d(a.monotonic_ns, b.monotonic_ns) >= 0);
    let skew = d(a.realtime_ns, b.realtime_ns) - d(a.boottime_ns, b.boottime_ns);
    assert!(skew.abs() < 50_000_000, "{a:?} {b:?}");
}

#[test]
fn times_round_to_the_nearest_nanosecond_halves_up() {
    assert_eq!(ns_at(1000, 0), 1000);
    assert_eq!(ns_at(1000, 499), 1000);
    assert_eq!(ns_at(1000, 500), 1001);
    assert_eq!(ns_at(1000, 1499), 1001);
    assert_eq!(ns_at(1000, -500), 1000);
    assert_eq!(ns_at(1000, -501), 999);
    assert_eq!(ns_at(1000, -2_000_000), 0);
    assert_eq!(ns_at(i64::MAX, i64::MAX), i64::MAX as u64);
}

#[test]
fn host_steps_get_a_track_of_their_own_with_a_slice_each() {
    let mut w = PerfettoWriter::begin(Vec::new(), PerfettoOptions::default()).unwrap();
    let steps = [
        crate::format::capture::HostStep {
            name: "decode".into(),
            index: 7,
            begin_ns: 1_000,
            end_ns: 5_000,
        },
        crate::format::capture::HostStep {
            name: "decode".into(),
            index: 8,
            begin_ns: 5_000,
            end_ns: 4_000, // a clock that went back: an empty slice, not a reversed one
        },
    ];
    w.host_steps(&steps).unwrap();
    w.host_steps(&[]).unwrap();
    let (tracks, events, _) = read(&w.finish().unwrap());
    let (spans, _) = slices(&events);
    let on_steps: Vec<_> = spans
        .iter()
        .filter(|s| path(&tracks, s.0) == ["Host steps"])
        .map(|s| (s.1.clone(), s.2, s.3))
        .collect();
    assert_eq!(
        on_steps,
        [
            ("decode 7".to_string(), 1_000, 5_000),
            ("decode 8".to_string(), 5_000, 5_000)
        ]
    );
}
