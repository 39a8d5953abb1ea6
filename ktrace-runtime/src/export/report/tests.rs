//! The report's unit tests: the lanes, values, statistics and heatmaps
//! it gathers, and the page it renders and writes.

use super::*;
use crate::decode::decode;
use crate::format::layout::EventKind;
use crate::synth::{sample_capture, SynthLaunch, SynthWarp};

/// Two blocks of two warps at 2 cycles a ns, three of the four slots
/// opened, all on SM 3: block 0 warp 0 (opened at 0 ns) has spans of
/// 100 and 100 ns and a mark, block 0 warp 1 (opened at 10 ns) one of
/// 200 ns, block 1 warp 0 (opened at 1000 ns) one of 50 ns.
fn planted() -> (LaunchCapture, DeviceInfo, Regions) {
    let launch = SynthLaunch::all_traced(2, 64, 32)
        .layout(1)
        .with(
            SynthWarp::new(0, 0)
                .sm(3)
                .span(100, 300, 1)
                .mark(350, 2)
                .span(400, 600, 1),
        )
        .with(SynthWarp::new(0, 1).sm(3).span(100, 500, 1))
        .with(SynthWarp::new(1, 0).sm(3).span(100, 200, 1))
        .into_capture();
    let device = DeviceInfo {
        name: "Synthetic GPU".into(),
        sm_count: 132,
        ..DeviceInfo::default()
    };
    let regions = Regions::from_table(&[(1, "mma"), (2, "tick"), (7, "unused")]);
    (launch, device, regions)
}

#[test]
fn lanes_hold_every_span_and_mark_in_whole_ns_from_the_first_event() {
    let (launch, device, regions) = planted();
    let d = report_data(&launch, &device, &regions, &ReportOptions::default()).unwrap();
    // Only the ids that occur, by id; the unused table entry is left out.
    assert_eq!(d.regions, ["mma", "tick"]);
    assert_eq!(d.region_ids, [1, 2]);
    assert_eq!(d.lanes.block, [0, 0, 1]);
    assert_eq!(d.lanes.warp, [0, 1, 0]);
    assert_eq!(d.lanes.sm, [3, 3, 3]);
    assert_eq!(d.lanes.dropped, [0, 0, 0]);
    assert_eq!(
        d.lanes.spans,
        [
            vec![0, 0, 100, 0, 150, 100],
            vec![0, 10, 200],
            vec![0, 1000, 50]
        ]
    );
    assert_eq!(d.lanes.marks, [vec![1, 125], vec![], vec![]]);
    let h = &d.header;
    assert_eq!(
        (h.warps, h.spans, h.marks, h.events, h.dropped),
        (3, 4, 1, 9, 0)
    );
    assert_eq!(h.kernel_time_us, Some(1.05));
    assert_eq!((h.grid, h.block, h.blocks), ([2, 1, 1], [64, 1, 1], 2));
    assert_eq!((h.warps_per_block, h.warps_traced_per_block), (2, 2));
    assert_eq!(h.device, "GPU: Synthetic GPU");
    assert_eq!(h.diagnostics["count"], 0);
    assert_eq!(d.analysis.schema, "ktrace.analysis/1");
}

#[test]
fn values_recorded_with_spans_and_marks_are_kept_beside_them() {
    let launch = SynthLaunch::all_traced(1, 32, 32)
        .with(
            SynthWarp::new(0, 0)
                .span(100, 200, 1)
                .event_value(300, 1, EventKind::Begin, 7)
                .event_value(400, 1, EventKind::End, 9)
                .event_value(450, 2, EventKind::Mark, 42)
                .mark(500, 2),
        )
        .into_capture();
    let (_, _, regions) = planted();
    // Values need the current layout (version 1 buffers have none).
    let device = DeviceInfo::default();
    let d = report_data(&launch, &device, &regions, &ReportOptions::default()).unwrap();
    assert_eq!(d.lanes.spans[0].len(), 6);
    assert_eq!(d.lanes.span_values, [vec![1, 7, 9]]);
    assert_eq!(d.lanes.marks, [vec![1, 175, 1, 200]]);
    assert_eq!(d.lanes.mark_values, [vec![0, 42]]);
}

#[test]
fn statistics_are_the_summary_and_heatmaps_average_per_block_and_sm() {
    let (launch, device, regions) = planted();
    let d = report_data(&launch, &device, &regions, &ReportOptions::default()).unwrap();
    let (summary, _) =
        super::super::summarize_launch(&launch, &device, &regions, &ExportOptions::default())
            .unwrap();
    assert_eq!(d.stats.len(), 1);
    let mma = &d.stats[0];
    assert_eq!(mma.region, 0);
    assert_eq!(mma.stats.count, 4);
    assert_eq!(mma.stats.max_dur, 0.2);
    assert_eq!(mma.stats.hist.bins, 48);
    assert_eq!(mma.stats.percentiles, summary.regions[0].percentiles);
    assert_eq!(mma.by_block.rows, [0, 1]);
    assert_eq!(mma.by_block.cols, [0, 1]);
    assert_eq!(
        mma.by_block.mean_us,
        [Some(0.1), Some(0.2), Some(0.05), None]
    );
    assert_eq!(mma.by_sm.rows, [3]);
    assert_eq!(mma.by_sm.cols, [0, 1]);
    let w0 = mma.by_sm.mean_us[0].unwrap();
    assert!((w0 - 0.25 / 3.0).abs() < 1e-12, "{w0}");
    assert_eq!(mma.by_sm.mean_us[1], Some(0.2));
}

#[test]
fn lanes_match_the_decoder_on_the_sample_and_real_captures() {
    let sample = sample_capture();
    let real = crate::format::capture::Capture::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/h200_gemm2048_v2.ktrace"
    ))
    .unwrap();
    for cap in [&sample, &real] {
        let launch = &cap.launches[0];
        let opts = ReportOptions::default();
        let d = report_data(launch, &cap.device, &cap.regions, &opts).unwrap();
        let dec = decode(
            launch.buffer().unwrap(),
            &opts.export.decode_for(&cap.device),
        );
        assert_eq!(d.header.warps, dec.warps.len());
        assert_eq!(d.lanes.spans.len(), dec.warps.len());
        assert_eq!(d.lanes.block.len(), dec.warps.len());
        for (lane, w) in d.lanes.spans.iter().zip(&dec.warps) {
            assert_eq!(lane.len(), 3 * w.spans.len());
            for (s, flat) in w.spans.iter().zip(lane.chunks(3)) {
                assert_eq!(d.region_ids[flat[0] as usize], s.region);
                // Each end rounded to whole ns: within 1 ns of the exact
                // duration.
                let exact = s.dur_ps() as i64;
                assert!((flat[2] * 1000 - exact).abs() <= 1000, "{flat:?} {exact}");
            }
        }
        let spans: usize = dec.warps.iter().map(|w| w.spans.len()).sum();
        let marks: usize = dec.warps.iter().map(|w| w.marks().count()).sum();
        assert_eq!(d.header.spans, spans as u64);
        assert_eq!(d.header.marks, marks as u64);
        assert_eq!(
            d.header.dropped,
            dec.warps.iter().map(|w| w.dropped).sum::<u64>()
        );
        let starts = d.lanes.spans.iter().flat_map(|l| l.chunks(3).map(|c| c[1]));
        assert_eq!(starts.min(), Some(0));
        let counted: u64 = d.stats.iter().map(|r| r.stats.count).sum();
        assert_eq!(counted, spans as u64);
        // The page embeds the launch's analysis, as `ktrace analyze`
        // computes it.
        let mut want = crate::analysis::analyze(&dec, &cap.regions, &opts.analysis);
        want.kernel = launch.kernel.clone();
        assert_eq!(d.analysis, want);
        let warps: u64 = want.roles.iter().map(|r| r.warps).sum();
        assert_eq!(warps, dec.warps.len() as u64);
    }
    // The real capture: 128 blocks of 12 warps, all traced.
    let d = report_data(
        &real.launches[0],
        &real.device,
        &real.regions,
        &ReportOptions::default(),
    )
    .unwrap();
    assert_eq!((d.header.warps, d.header.spans), (1536, 74752));
    assert_eq!(d.header.kernel, "gemm");
    assert!(d.header.clock.slowest_mhz.is_some());
}

#[test]
fn the_sample_reports_its_unnamed_region_and_diagnostics() {
    let cap = sample_capture();
    let d = report_data(
        &cap.launches[0],
        &cap.device,
        &cap.regions,
        &ReportOptions::default(),
    )
    .unwrap();
    assert_eq!(d.regions, ["load", "mma", "tick", "region 5"]);
    assert!(d.header.diagnostics["count"].as_u64().unwrap() > 0);
}

#[test]
fn names_cannot_end_the_script_element() {
    let (launch, device, _) = planted();
    let evil = "</script><script>alert(1)</script><!-- & \u{2028}";
    let regions = Regions::from_table(&[(1, evil), (2, "tick")]);
    let mut launch = launch;
    launch.kernel = "<b>k</b>".into();
    let d = report_data(&launch, &device, &regions, &ReportOptions::default()).unwrap();
    let html = render_html(&d).unwrap();
    let start = html.find(r#"<script type="application/json" id="ktrace-data">"#);
    let body = &html[start.unwrap()..];
    let body = &body[body.find('>').unwrap() + 1..];
    let json = &body[..body.find("</script>").unwrap()];
    for bad in ["<", ">", "&", "\u{2028}"] {
        assert!(!json.contains(bad), "{bad:?} in the data");
    }
    // The escaped blob still reads back as the same data.
    let back: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(back["regions"][0], evil);
    assert_eq!(back["header"]["kernel"], "<b>k</b>");
    // (Both read by the same parser: floats compare as parsed.)
    let plain: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(back, plain);
    // The title is text.
    assert!(html.contains("<title>ktrace report: launch 0: &lt;b&gt;k&lt;/b&gt;</title>"));
    // Two script elements (the data, the page's script) and no other end.
    assert_eq!(html.matches("</script>").count(), 2);
}

#[test]
fn the_page_is_self_contained_and_deterministic() {
    let (launch, device, regions) = planted();
    let opts = ReportOptions::default();
    let a = render_html(&report_data(&launch, &device, &regions, &opts).unwrap()).unwrap();
    let b = render_html(&report_data(&launch, &device, &regions, &opts).unwrap()).unwrap();
    assert_eq!(a, b);
    assert!(a.starts_with("<!DOCTYPE html>"));
    assert!(!a.contains("{{"), "a placeholder was left");
    for external in ["http://", "https://", "<link", " src=", "@import", "url("] {
        assert!(!a.contains(external), "{external} in the page");
    }
    assert!(a.contains(SCRIPT) && a.contains(STYLE));
}

#[test]
fn write_report_writes_the_page_atomically() {
    let (launch, device, regions) = planted();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/r.html");
    let w = write_report(&launch, &device, &regions, &path, &ReportOptions::default()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!((w.warps, w.spans, w.diagnostics), (3, 4, 0));
    assert_eq!(w.bytes, text.len() as u64);
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.html"]);
}

#[test]
fn times_round_to_the_nearest_ns_either_side_of_the_origin() {
    assert_eq!(ns_from(0, 1499), 1);
    assert_eq!(ns_from(0, 1500), 2);
    assert_eq!(ns_from(1000, 500), 0);
    assert_eq!(ns_from(1000, -600), -2);
    assert_eq!(ns_from(i64::MIN, i64::MAX), (u64::MAX / 1000 + 1) as i64);
}

#[test]
fn the_page_carries_the_stall_table_of_the_launchs_kernel_only() {
    use crate::format::pc_map::PcMap;
    use crate::format::stalls::PcSample;
    let (mut launch, device, regions) = planted();
    launch.kernel = "gemm".into();
    let map =
        PcMap::parse("ktrace-pcmap 1\nfile 0 /k.cu\nfunction g\n0010 1 u 0:5 HMMA\n").unwrap();
    let samples = |kernel: &str| StallSamples {
        kernel: kernel.into(),
        reasons: vec!["math_pipe_throttle".into()],
        pcs: vec![PcSample::placed("g", 0x10, vec![(0, 7)], &map)],
        ..Default::default()
    };
    let opts = ReportOptions {
        stalls: vec![samples("other"), samples("gemm")],
        ..ReportOptions::default()
    };
    let d = report_data(&launch, &device, &regions, &opts).unwrap();
    let t = d.stalls.as_ref().expect("a stall table");
    assert_eq!((t.kernel.as_str(), t.samples), ("gemm", 7));
    assert_eq!(t.regions[0].name, "mma");
    assert_eq!(t.regions[0].reasons[0].0, "math_pipe_throttle");
    let html = render_html(&d).unwrap();
    assert!(
        html.contains("\"stalls\":{\"kernel\":\"gemm\""),
        "the data is in the page"
    );
    let none = report_data(&launch, &device, &regions, &ReportOptions::default()).unwrap();
    assert!(none.stalls.is_none());
}
