//! The analysis on synthetic launches with planted answers.
//!
//! Every synthetic warp opens at the same globaltimer and runs at 2 GHz, so
//! `c` cycles after open are `c / 2` ns from the decode origin.

use super::*;
use crate::decode::DecodeOptions;
use crate::synth::{SynthLaunch, SynthWarp, BASE_GT};

const LOAD: u16 = 0;
const WAIT_EMPTY: u16 = 1;
const MMA: u16 = 2;
const WAIT_FULL: u16 = 3;
const EPILOGUE: u16 = 4;
const TICK: u16 = 5;

fn regions() -> Regions {
    Regions::from_table(&[
        (LOAD, "load"),
        (WAIT_EMPTY, "wait_empty"),
        (MMA, "mma"),
        (WAIT_FULL, "wait_full"),
        (EPILOGUE, "epilogue"),
        (TICK, "tick"),
    ])
}

fn warp(block: u32, warp: u32) -> SynthWarp {
    SynthWarp::new(block, warp).open_at(BASE_GT, 0)
}

/// A producer: per iteration, 20 cycles in wait_empty then 40 in load,
/// every 100 cycles from `start`; iteration `slow_at` takes `extra` more
/// cycles of load and shifts what follows.
fn producer(block: u32, start: u64, slow_at: u64, extra: u64) -> SynthWarp {
    let mut w = warp(block, 0);
    let mut t = start;
    for i in 0..4 {
        let more = if i == slow_at { extra } else { 0 };
        w = w
            .span(t, t + 20, WAIT_EMPTY)
            .span(t + 20, t + 60 + more, LOAD);
        t += 100 + more;
    }
    w
}

/// A consumer: per iteration, 50 cycles in wait_full, 40 in mma and 10
/// outside any region, then 100 cycles of epilogue: active 500 cycles, of
/// which 200 wait (a wait share of exactly 0.40). Iteration `slow_at` waits
/// `extra` cycles more.
fn consumer(block: u32, w: u32, start: u64, slow_at: u64, extra: u64) -> SynthWarp {
    let mut s = warp(block, w);
    let mut t = start;
    for i in 0..4 {
        let more = if i == slow_at { extra } else { 0 };
        s = s
            .span(t, t + 50 + more, WAIT_FULL)
            .span(t + 50 + more, t + 90 + more, MMA);
        t += 100 + more;
    }
    s.span(t, t + 100, EPILOGUE)
}

fn decoded(l: SynthLaunch) -> DecodedLaunch {
    decode(l.buffer(), &DecodeOptions::default())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn role<'a>(a: &'a Analysis, name: &str) -> &'a Role {
    a.roles
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no role {name}: {:?}", a.roles))
}

fn region<'a>(r: &'a Role, name: &str) -> &'a RoleRegion {
    r.region_times.iter().find(|t| t.region == name).unwrap()
}

/// Four blocks of a producer, two consumers, and in block 0 a fourth warp
/// that only marks.
fn gemm_like() -> DecodedLaunch {
    let mut l = SynthLaunch::all_traced(4, 128, 64);
    for b in 0..4 {
        l.write(&producer(b, 100, 99, 0));
        l.write(&consumer(b, 1, 100, 99, 0));
        l.write(&consumer(b, 2, 100, 99, 0));
    }
    l.write(&warp(0, 3).mark(300, TICK));
    decoded(l)
}

#[test]
fn roles_group_producers_and_consumers_with_a_planted_wait_share() {
    let a = analyze(&gemm_like(), &regions(), &AnalysisOptions::default());
    assert_eq!(a.schema, SCHEMA);
    let names: Vec<&str> = a.roles.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["load+wait_empty", "epilogue+mma+wait_full", "(no regions)"]
    );
    assert_eq!(a.warps_traced, 13);
    assert_eq!(a.roles.iter().map(|r| r.warps).sum::<u64>(), 13);
    assert_eq!(a.wait_regions, ["wait_empty", "wait_full"]);

    let p = role(&a, "load+wait_empty");
    assert_eq!((p.warps, p.blocks), (4, 4));
    assert_eq!(p.warp_indices, [0]);
    assert_eq!(p.regions, ["load", "wait_empty"]);
    // 100..460 cycles: 180 ns active, 40 of them waiting.
    assert!(close(p.active_per_warp_ns, 180.0), "{p:?}");
    assert!(close(p.wait_share, 80.0 / 360.0), "{p:?}");
    assert!(close(region(p, "load").per_warp_ns, 80.0));
    assert_eq!(region(p, "load").spans, 16);
    assert!(close(region(p, "load").spans_per_warp, 4.0));
    assert!(close(region(p, "load").mean_span_ns, 20.0));
    assert!(region(p, "wait_empty").wait && !region(p, "load").wait);

    let c = role(&a, "epilogue+mma+wait_full");
    assert_eq!((c.warps, c.blocks), (8, 4));
    assert_eq!(c.warp_indices, [1, 2]);
    assert!(close(c.active_per_warp_ns, 250.0), "{c:?}");
    assert!(close(c.wait_share, 0.40), "{c:?}");
    assert!(close(c.wait_share_min, 0.40) && close(c.wait_share_max, 0.40));
    assert!(close(c.wait_per_warp_ns, 100.0));
    assert!(close(c.outside_share, 0.08), "{c:?}");
    assert!(close(c.outside_per_warp_ns, 20.0));
    assert!(close(region(c, "mma").share, 0.32));
    assert!(close(region(c, "epilogue").share, 0.20));
    assert!(close(region(c, "wait_full").total_ns, 800.0));

    let idle = role(&a, "(no regions)");
    assert_eq!(idle.warps, 1);
    assert!(idle.regions.is_empty() && idle.region_times.is_empty());
    assert_eq!((idle.active_per_warp_ns, idle.wait_share), (0.0, 0.0));
}

#[test]
fn wait_patterns_choose_the_wait_regions() {
    let d = gemm_like();
    let opts = AnalysisOptions {
        wait: WaitPatterns::new(["wait_full"]).unwrap(),
        ..AnalysisOptions::default()
    };
    let a = analyze(&d, &regions(), &opts);
    assert_eq!(a.wait_regions, ["wait_full"]);
    assert_eq!(role(&a, "load+wait_empty").wait_share, 0.0);
    assert!(close(role(&a, "epilogue+mma+wait_full").wait_share, 0.4));
    // Counting the epilogue as waiting too adds its 20%.
    let opts = AnalysisOptions {
        wait: WaitPatterns::new(["wait*", "epi*"]).unwrap(),
        ..AnalysisOptions::default()
    };
    let a = analyze(&d, &regions(), &opts);
    assert!(close(role(&a, "epilogue+mma+wait_full").wait_share, 0.6));
    assert!(a.notes.is_empty(), "{:?}", a.notes);

    let opts = AnalysisOptions {
        wait: WaitPatterns::new(["sync*"]).unwrap(),
        ..AnalysisOptions::default()
    };
    let a = analyze(&d, &regions(), &opts);
    assert!(a.wait_regions.is_empty());
    assert!(a.roles.iter().all(|r| r.wait_share == 0.0));
    assert_eq!(a.notes.len(), 1);
    assert!(
        a.notes[0].contains("\"sync*\" matches no region with spans in this launch"),
        "{:?}",
        a.notes
    );
}

#[test]
fn wait_regions_are_those_the_launch_runs() {
    // The table names a wait region no warp runs: it is no wait region of
    // this launch, and a pattern that matches only it is noted.
    let mut table = regions();
    table.insert(9, "wait_barrier");
    let opts = AnalysisOptions {
        wait: WaitPatterns::new(["wait*", "wait_b*"]).unwrap(),
        ..AnalysisOptions::default()
    };
    let a = analyze(&gemm_like(), &table, &opts);
    assert_eq!(a.wait_regions, ["wait_empty", "wait_full"]);
    assert_eq!(a.notes.len(), 1, "{:?}", a.notes);
    assert!(a.notes[0].starts_with("wait pattern \"wait_b*\" matches no region"));
}

#[test]
fn bad_wait_patterns_say_why() {
    let err = |p: &str| WaitPatterns::new([p]).unwrap_err().to_string();
    assert!(err("").contains("empty"), "{}", err(""));
    assert!(err("  ").contains("empty"));
    assert!(
        err("wa?t").contains("only * is a wildcard"),
        "{}",
        err("wa?t")
    );
    assert!(err("wait\"").contains("cannot appear in a region name"));
    assert!(err("wait\u{e9}").contains("cannot appear in a region name"));
    assert!(err("wa?t").starts_with("wait pattern \"wa?t\": "));
    let ok = WaitPatterns::new(["wait*", "sync [x]"]).unwrap();
    assert!(ok.matches("wait_full") && ok.matches("sync [x]") && !ok.matches("sync"));
    assert_eq!(ok.to_string(), "wait*,sync [x]");
    assert!(!WaitPatterns::new(Vec::<String>::new())
        .unwrap()
        .matches("wait"));
}

/// Eight blocks; block 5's producer loads 1000 cycles (500 ns) longer in
/// its third iteration, and its consumer waits that much longer; block 6
/// starts 200 cycles (100 ns) late.
fn slow_block_launch() -> DecodedLaunch {
    let mut l = SynthLaunch::all_traced(8, 64, 64);
    for b in 0..8 {
        let (start, extra) = match b {
            5 => (100, 1000),
            6 => (300, 0),
            _ => (100, 0),
        };
        l.write(&producer(b, start, 2, extra));
        l.write(&consumer(b, 1, start, 2, extra));
    }
    decoded(l)
}

#[test]
fn a_planted_slow_block_is_named_with_its_cause_and_the_tail() {
    let a = analyze(
        &slow_block_launch(),
        &regions(),
        &AnalysisOptions::default(),
    );
    assert_eq!(a.blocks_with_events, 8);
    // Normal blocks end at 600 cycles (300 ns); launch start is 100 cycles.
    assert!(close(a.kernel_time_ns, 750.0), "{}", a.kernel_time_ns);
    let im = &a.imbalance;
    let tail = im.tail.as_ref().unwrap();
    assert_eq!(tail.blocks, 8);
    assert_eq!(tail.last_block, 5);
    assert!(close(tail.median_end_ns, 250.0), "{tail:?}");
    assert!(close(tail.last_end_ns, 750.0), "{tail:?}");
    assert!(close(tail.tail_ns, 500.0), "{tail:?}");
    assert!(close(tail.tail_share, 500.0 / 750.0));

    let slow: Vec<u32> = im.slowest_blocks.iter().map(|b| b.block).collect();
    assert_eq!(slow, [5, 6, 0, 1, 2]);
    let b5 = &im.slowest_blocks[0];
    // Load and the consumer's wait both exceed by 500 ns: load, not a
    // wait, wins the tie.
    assert_eq!(b5.cause.as_deref(), Some("load"));
    assert!(close(b5.cause_excess_ns, 500.0), "{b5:?}");
    assert!(!b5.cause_is_wait);
    assert_eq!(b5.work_cause.as_deref(), Some("load"));
    assert!(close(b5.work_excess_ns, 500.0));
    assert!(close(b5.wait_excess_ns, 500.0), "{b5:?}");
    assert!(close(b5.end_over_median_ns, 500.0));
    assert!(close(b5.late_start_ns, 0.0));
    assert_eq!(b5.warps, 2);
    let b6 = &im.slowest_blocks[1];
    assert_eq!((&b6.cause, &b6.work_cause), (&None, &None), "{b6:?}");
    assert!(close(b6.late_start_ns, 100.0) && close(b6.end_over_median_ns, 100.0));
    assert!(close(b6.start_ns, 100.0));

    // Occurrence 2 of load: one warp 500 ns longer, ending 500 ns later.
    let load2 = im
        .occurrences
        .iter()
        .find(|o| o.region == "load" && o.occurrence == 2)
        .unwrap();
    assert_eq!((load2.warps, load2.blocks), (8, 8));
    assert!(close(load2.dur_median_ns, 20.0) && close(load2.dur_max_ns, 520.0));
    assert!(close(load2.dur_min_ns, 20.0));
    assert_eq!((load2.latest_block, load2.longest_block), (5, 5));
    assert_eq!(load2.latest_sm, 5);
    // Ends at 360 cycles (130 ns from launch start) in most blocks, at
    // 560 in block 6 and at 1360 in block 5.
    assert!(close(load2.end_min_ns, 130.0) && close(load2.end_median_ns, 130.0));
    assert!(close(load2.end_max_ns, 630.0), "{load2:?}");
    let load1 = im
        .occurrences
        .iter()
        .find(|o| o.region == "load" && o.occurrence == 1)
        .unwrap();
    assert!(close(load1.dur_min_ns, load1.dur_max_ns));
    // Every region has 4 occurrences but the epilogue, which has one.
    assert_eq!(im.occurrences.len(), 4 * 4 + 1);
    let regions: Vec<&str> = im.occurrences.iter().map(|o| o.region.as_str()).collect();
    assert!(regions.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_wait_only_excess_is_flagged_as_such() {
    // Block 3's consumer waits longer while its producer is not slower.
    let mut l = SynthLaunch::all_traced(4, 64, 64);
    for b in 0..4 {
        l.write(&producer(b, 100, 9, 0));
        l.write(&consumer(b, 1, 100, 1, if b == 3 { 400 } else { 0 }));
    }
    let a = analyze(&decoded(l), &regions(), &AnalysisOptions::default());
    let b3 = &a.imbalance.slowest_blocks[0];
    assert_eq!(b3.block, 3);
    assert_eq!(b3.cause.as_deref(), Some("wait_full"));
    assert!(
        b3.cause_is_wait && close(b3.cause_excess_ns, 200.0),
        "{b3:?}"
    );
}

#[test]
fn busy_series_count_warps_inside_each_region() {
    // Warp 0 is in mma from 0 to 1000 cycles (with a nested mma span that
    // must not count twice); warp 1 from 500 to 1000, and in load from 0
    // to 200. Four bins of 125 ns.
    let l = SynthLaunch::all_traced(1, 64, 64)
        .with(warp(0, 0).begin(0, MMA).span(200, 300, MMA).end(1000, MMA))
        .with(warp(0, 1).span(0, 200, LOAD).span(500, 1000, MMA));
    let opts = AnalysisOptions {
        busy_bins: 4,
        ..AnalysisOptions::default()
    };
    let a = analyze(&decoded(l), &regions(), &opts);
    let b = &a.busy;
    assert_eq!(b.bins, 4);
    assert!(close(b.bin_ns, 125.0) && close(b.end_ns, 500.0) && b.start_ns == 0.0);
    let names: Vec<&str> = b.series.iter().map(|s| s.region.as_str()).collect();
    assert_eq!(names, ["load", "mma"]);
    let mma = &b.series[1];
    assert_eq!(mma.values, [1.0, 1.0, 2.0, 2.0]);
    assert!(close(mma.peak, 2.0) && close(mma.mean, 1.5));
    let load = &b.series[0];
    assert!(close(load.values[0], 0.8), "{load:?}");
    assert_eq!(&load.values[1..], [0.0, 0.0, 0.0]);
    assert!(close(load.mean, 0.2));
    // A bin edge inside a span splits it.
    let opts = AnalysisOptions {
        busy_bins: 3,
        ..AnalysisOptions::default()
    };
    let a = analyze(&decoded_busy_three(), &regions(), &opts);
    let mma = &a.busy.series[0];
    assert!(close(mma.values[0], 1.0) && close(mma.values[1], 0.5));
    assert!(close(mma.values[2], 0.0));
}

/// One warp in mma for the first half of a 600-cycle launch.
fn decoded_busy_three() -> DecodedLaunch {
    decoded(SynthLaunch::all_traced(1, 32, 64).with(warp(0, 0).span(0, 300, MMA).mark(600, TICK)))
}

#[test]
fn nested_regions_do_not_count_twice_outside_any_region() {
    // 100..1300 cycles active (600 ns): epilogue 100..1100 holds mma
    // 300..500 and wait_full 700..800; load 1200..1300 holds a nested load
    // 1220..1260. Outside: 1100..1200, 50 ns.
    let l = SynthLaunch::all_traced(1, 32, 64).with(
        warp(0, 0)
            .flush_at(2000)
            .begin(100, EPILOGUE)
            .span(300, 500, MMA)
            .span(700, 800, WAIT_FULL)
            .end(1100, EPILOGUE)
            .begin(1200, LOAD)
            .span(1220, 1260, LOAD)
            .end(1300, LOAD),
    );
    let d = decoded(l);
    let a = analyze(&d, &regions(), &AnalysisOptions::default());
    let r = &a.roles[0];
    assert_eq!(r.name, "epilogue+load+mma+wait_full");
    assert!(close(r.active_per_warp_ns, 600.0), "{r:?}");
    assert!(close(r.outside_per_warp_ns, 50.0), "{r:?}");
    assert!(close(r.outside_share, 50.0 / 600.0));
    assert!(close(region(r, "epilogue").per_warp_ns, 500.0));
    assert!(close(region(r, "load").per_warp_ns, 50.0));
    assert_eq!(region(r, "load").spans, 2);
    assert!(close(region(r, "mma").per_warp_ns, 100.0));
    assert!(close(r.wait_share, 50.0 / 600.0));
    let shares: f64 = r.region_times.iter().map(|t| t.share).sum();
    assert!(shares > 1.0, "nested regions overlap: {shares}");

    // Open to flush: 0..2000 cycles, so 1000 ns, of which 450 outside.
    let opts = AnalysisOptions {
        active: ActiveWindow::OpenToFlush,
        ..AnalysisOptions::default()
    };
    let a = analyze(&d, &regions(), &opts);
    let r = &a.roles[0];
    assert_eq!(a.active_window, ActiveWindow::OpenToFlush);
    assert!(close(r.active_per_warp_ns, 1000.0), "{r:?}");
    assert!(close(r.outside_per_warp_ns, 450.0), "{r:?}");
    assert!(close(r.wait_share, 0.05));
}

#[test]
fn occurrences_beyond_the_limit_are_left_out_with_a_note() {
    let mut w = warp(0, 0);
    for i in 0..10 {
        w = w.span(i * 100, i * 100 + 50, MMA);
    }
    let l = SynthLaunch::all_traced(1, 32, 64).with(w);
    let opts = AnalysisOptions {
        max_occurrences: 3,
        // No wait patterns, so no note that they match nothing.
        wait: WaitPatterns::new(Vec::<String>::new()).unwrap(),
        ..AnalysisOptions::default()
    };
    let a = analyze(&decoded(l), &regions(), &opts);
    assert_eq!(a.imbalance.occurrences.len(), 3);
    assert_eq!(a.notes.len(), 1);
    assert!(
        a.notes[0].contains("\"mma\" runs up to 10 times in a warp"),
        "{:?}",
        a.notes
    );
}

#[test]
fn an_empty_launch_analyses_to_empty_tables() {
    let l = SynthLaunch::all_traced(2, 32, 64).with(warp(0, 0).flush_at(100));
    let a = analyze(&decoded(l), &regions(), &AnalysisOptions::default());
    assert_eq!(a.warps_traced, 1);
    assert_eq!((a.warps_with_events, a.blocks_with_events), (0, 0));
    assert_eq!(a.kernel_time_ns, 0.0);
    assert_eq!(a.roles.len(), 1);
    assert_eq!(a.roles[0].name, "(no regions)");
    assert!(a.imbalance.tail.is_none() && a.imbalance.slowest_blocks.is_empty());
    assert_eq!(a.busy, Busy::default());
}

#[test]
fn the_analysis_round_trips_through_json() {
    let a = analyze(
        &slow_block_launch(),
        &regions(),
        &AnalysisOptions::default(),
    );
    let text = serde_json::to_string(&a).unwrap();
    let back: Analysis = serde_json::from_str(&text).unwrap();
    assert_eq!(back.roles.len(), a.roles.len());
    for (x, y) in back.roles.iter().zip(&a.roles) {
        assert_eq!((&x.name, x.warps), (&y.name, y.warps));
        assert!((x.wait_share - y.wait_share).abs() < 1e-12);
    }
    assert_eq!(back.imbalance.slowest_blocks.len(), 5);
    assert_eq!(
        back.imbalance.occurrences.len(),
        a.imbalance.occurrences.len()
    );
    assert_eq!(back.busy.series.len(), a.busy.series.len());
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "ktrace.analysis/1");
    assert_eq!(v["active_window"], "events");
    assert_eq!(v["imbalance"]["slowest_blocks"][0]["cause"], "load");
    assert_eq!(v["roles"][1]["region_times"][0]["region"], "epilogue");
}

#[test]
fn roles_compare_across_two_launches() {
    let before = analyze(&gemm_like(), &regions(), &AnalysisOptions::default());
    // After: warp 2 of each block also ticks, which makes it a role of its
    // own, and the idle warp is gone.
    let mut l = SynthLaunch::all_traced(4, 128, 64);
    for b in 0..4 {
        l.write(&producer(b, 100, 99, 0));
        l.write(&consumer(b, 1, 100, 99, 0));
        l.write(&consumer(b, 2, 100, 99, 0).span(700, 800, TICK));
    }
    let after = analyze(&decoded(l), &regions(), &AnalysisOptions::default());
    let c = compare_roles(&before, &after);
    let names: Vec<&str> = c.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(
        names,
        [
            "load+wait_empty",
            "epilogue+mma+wait_full",
            "(no regions)",
            "epilogue+mma+tick+wait_full"
        ]
    );
    let p = &c[0];
    assert_eq!((p.warps_a, p.warps_b), (Some(4), Some(4)));
    assert_eq!(p.wait_share_change, Some(0.0));
    assert!(p.regions.iter().all(|r| r.delta_ns == Some(0.0)));
    let consumers = &c[1];
    assert_eq!((consumers.warps_a, consumers.warps_b), (Some(8), Some(4)));
    assert_eq!(c[2].warps_b, None);
    assert_eq!(c[2].wait_share_change, None);
    let ticked = &c[3];
    assert_eq!((ticked.warps_a, ticked.warps_b), (None, Some(4)));
    // Active 100..800 cycles: 350 ns, 100 waiting.
    assert!(close(ticked.wait_share_b.unwrap(), 100.0 / 350.0));
    let tick = ticked.regions.iter().find(|r| r.region == "tick").unwrap();
    assert_eq!((tick.per_warp_a_ns, tick.delta_ns), (None, None));
    assert!(close(tick.per_warp_b_ns.unwrap(), 50.0));
}
