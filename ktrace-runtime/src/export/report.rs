//! One self-contained HTML file per launch (`ktrace report`): a header,
//! a timeline with one lane per traced warp, per-region histograms,
//! percentiles and heatmaps, and the launch's analysis.
//!
//! The page needs nothing from the network: its style and script are
//! compiled into this crate (`export/report/`) and the launch's data sits in
//! the page as one JSON blob ([`ReportData`]), which the script draws on
//! `<canvas>` elements.
//!
//! Building the data ([`report_data`]) and the page ([`render_html`]) are
//! pure functions of the capture; [`write_report`] decodes, builds and
//! writes the file atomically.
//!
//! # The data
//!
//! Times are whole nanoseconds from the launch's first event (each
//! timestamp rounded on its own, so a span's duration is the difference of
//! its rounded ends). Region names are interned: spans and marks carry an
//! index into [`ReportData::regions`]. Lanes are stored as columns (one
//! entry per traced warp, in slot order), each lane's spans as one flat
//! array `[region, start, duration, region, start, duration, ...]` in
//! start order, and its marks as `[region, time, ...]`; values recorded
//! with events sit beside them, only where there are any. The statistics are
//! the summary's ([`summary`](super::summary)), computed from the exact
//! picosecond durations.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::collect::LaunchCollector;
use super::summary::{ClockSummary, RegionStats, SummaryOptions};
use super::ExportOptions;
use crate::decode::Decoder;
use crate::error::{Error, Result};
use crate::fill::ring_fill;
use crate::format::capture::{DeviceInfo, LaunchCapture};
use crate::format::regions::Regions;
use crate::output::write_atomic;

/// Diagnostic messages kept in the page (counts cover all of them).
const DIAGNOSTICS_IN_REPORT: usize = 200;

const TEMPLATE: &str = include_str!("report/report.html");
const STYLE: &str = include_str!("report/report.css");
const SCRIPT: &str = include_str!("report/report.js");

/// Choices for a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    /// Decoding choices (the nominal clock is the device's when this leaves
    /// it 0, as for an export).
    pub export: ExportOptions,
    /// Bins of each region's duration histogram (default 48).
    pub hist_bins: usize,
    /// The analysis the page shows (wait regions, busy bins, ...).
    pub analysis: crate::analysis::AnalysisOptions,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            export: ExportOptions::default(),
            hist_bins: 48,
            analysis: crate::analysis::AnalysisOptions::default(),
        }
    }
}

/// Everything the page shows, as embedded in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportData {
    /// Version of this data's layout (1).
    pub format: u32,
    /// "ktrace" and its version.
    pub tool: String,
    /// The launch header.
    pub header: ReportHeader,
    /// Region names; spans, marks, statistics and heatmaps refer to them by
    /// index. Ordered by region id.
    pub regions: Vec<String>,
    /// The region id of each name.
    pub region_ids: Vec<u16>,
    /// One lane per traced warp that opened, in slot order.
    pub lanes: Lanes,
    /// Per-region statistics (the summary's), in the order of `regions`
    /// among those with a complete span.
    pub stats: Vec<RegionReport>,
    /// The launch's analysis ([`crate::analysis::analyze_decoded_launch`]
    /// with [`ReportOptions::analysis`]). The page draws its JSON section by
    /// section, in field order: an object's keys become headings, an array
    /// of objects a table, and an array of rows that each hold a number
    /// array (the busy series) a line chart.
    pub analysis: crate::analysis::Analysis,
}

/// The launch header.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportHeader {
    /// "launch 0: gemm" (see [`LaunchCapture::title`]).
    pub title: String,
    /// Kernel name (empty when the capture does not say).
    pub kernel: String,
    /// Launch index.
    pub launch: u32,
    /// Device label, e.g. "GPU 0: NVIDIA H200".
    pub device: String,
    /// SMs of the device.
    pub sm_count: u32,
    /// Grid, in blocks.
    pub grid: [u32; 3],
    /// Block, in threads.
    pub block: [u32; 3],
    /// Blocks in the grid.
    pub blocks: u64,
    /// Blocks traced.
    pub blocks_traced: u32,
    /// Warps per block.
    pub warps_per_block: u32,
    /// Warps traced per traced block.
    pub warps_traced_per_block: u32,
    /// Warps decoded (lanes of the timeline).
    pub warps: usize,
    /// First to last event of any warp, µs (null without events).
    pub kernel_time_us: Option<f64>,
    /// Events decoded (begins, ends and marks).
    pub events: u64,
    /// Complete spans.
    pub spans: u64,
    /// Marks.
    pub marks: u64,
    /// Events lost to ring overflow.
    pub dropped: u64,
    /// How full the rings were, in one sentence.
    pub ring_fill: String,
    /// The time model and the SM clock range the anchors measured.
    pub clock: ClockSummary,
    /// Counts per kind and the first messages.
    pub diagnostics: serde_json::Value,
}

/// The lanes of the timeline, as columns: entry `i` of each is lane `i`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Lanes {
    /// Linear block index.
    pub block: Vec<u32>,
    /// Warp index within the block.
    pub warp: Vec<u16>,
    /// SM the warp ran on.
    pub sm: Vec<u16>,
    /// Events the warp lost to ring overflow.
    pub dropped: Vec<u64>,
    /// Spans, flat: `[region, start_ns, duration_ns, ...]`, by start.
    pub spans: Vec<Vec<i64>>,
    /// Marks, flat: `[region, t_ns, ...]`, in time order.
    pub marks: Vec<Vec<i64>>,
    /// Values recorded with spans (`KTRACE_B_V`, `KTRACE_E_V`), only for
    /// spans that have one, flat: `[span_index, begin_value, end_value,
    /// ...]`, -1 for no value.
    pub span_values: Vec<Vec<i64>>,
    /// Values recorded with marks (`KTRACE_M_V`), flat: `[mark_index,
    /// value, ...]`.
    pub mark_values: Vec<Vec<i64>>,
}

/// One region's statistics and heatmaps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionReport {
    /// Index into [`ReportData::regions`].
    pub region: usize,
    /// Count, mean, percentiles and histogram, µs.
    pub stats: RegionStats,
    /// Mean duration per block (rows) and warp index (columns).
    pub by_block: Heatmap,
    /// Mean duration per SM (rows) and warp index (columns).
    pub by_sm: Heatmap,
}

/// A grid of mean durations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    /// Row labels: block or SM numbers, ascending.
    pub rows: Vec<u32>,
    /// Column labels: warp indices, ascending.
    pub cols: Vec<u16>,
    /// Mean duration in µs, row by row (`rows.len() * cols.len()`); null
    /// where the row and column had no span of the region.
    pub mean_us: Vec<Option<f64>>,
}

/// Sums of durations (ps) and counts per (row, warp).
type Cells = BTreeMap<(u32, u16), (u128, u64)>;

fn heatmap(cells: &Cells) -> Heatmap {
    let mut rows: Vec<u32> = cells.keys().map(|k| k.0).collect();
    rows.dedup();
    let mut cols: Vec<u16> = cells.keys().map(|k| k.1).collect();
    cols.sort_unstable();
    cols.dedup();
    let mut mean_us = Vec::with_capacity(rows.len() * cols.len());
    for &r in &rows {
        for &c in &cols {
            mean_us.push(
                cells
                    .get(&(r, c))
                    .map(|&(sum, n)| sum as f64 / n as f64 / 1e6),
            );
        }
    }
    Heatmap {
        rows,
        cols,
        mean_us,
    }
}

/// Whole nanoseconds from `t0` to `t`, both in ps, rounded to nearest.
fn ns_from(t0: i64, t: i64) -> i64 {
    (i128::from(t) - i128::from(t0) + 500).div_euclid(1000) as i64
}

/// Decodes `launch` and gathers what its report shows.
pub fn report_data(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ReportOptions,
) -> Result<ReportData> {
    let dec = Decoder::new(launch.buffer()?, &opts.export.decode_for(device));
    // Decoded once, for the lanes and statistics and for the analysis.
    let decoded = dec.decode_all();
    let fill = ring_fill(&launch.buffer()?);
    let summary_opts = SummaryOptions {
        hist_bins: opts.hist_bins.max(1),
        ..SummaryOptions::default()
    };
    let mut collector = LaunchCollector::new(&dec, regions, summary_opts);

    // Spans and marks in ps, per lane, until the launch's first event is
    // known; per region, the duration sums per (block, warp) and (SM, warp).
    let mut lanes = Lanes::default();
    let mut raw_spans: Vec<Vec<(u16, i64, i64)>> = Vec::new();
    let mut raw_marks: Vec<Vec<(u16, i64)>> = Vec::new();
    let mut by_block: BTreeMap<u16, Cells> = BTreeMap::new();
    let mut by_sm: BTreeMap<u16, Cells> = BTreeMap::new();
    let (mut t0, mut events, mut dropped) = (i64::MAX, 0u64, 0u64);
    for w in &decoded.warps {
        collector.add_warp(w);
        if let Some(e) = w.events.first() {
            t0 = t0.min(e.t_ps);
        }
        events += w.events.len() as u64;
        dropped += w.dropped;
        lanes.block.push(w.id.block);
        lanes.warp.push(w.id.warp);
        lanes.sm.push(w.id.sm);
        lanes.dropped.push(w.dropped);
        for s in &w.spans {
            let cell = |m: &mut BTreeMap<u16, Cells>, row: u32| {
                let c = m
                    .entry(s.region)
                    .or_default()
                    .entry((row, w.id.warp))
                    .or_default();
                c.0 += u128::from(s.dur_ps());
                c.1 += 1;
            };
            cell(&mut by_block, w.id.block);
            cell(&mut by_sm, u32::from(w.id.sm));
        }
        raw_spans.push(
            w.spans
                .iter()
                .map(|s| (s.region, s.start_ps, s.end_ps))
                .collect(),
        );
        raw_marks.push(w.marks().map(|e| (e.region, e.t_ps)).collect());
        let value = |v: Option<u32>| v.map_or(-1, i64::from);
        lanes.span_values.push(
            w.spans
                .iter()
                .enumerate()
                .filter(|(_, s)| s.begin_value.is_some() || s.end_value.is_some())
                .flat_map(|(i, s)| [i as i64, value(s.begin_value), value(s.end_value)])
                .collect(),
        );
        lanes.mark_values.push(
            w.marks()
                .enumerate()
                .filter_map(|(i, e)| Some([i as i64, i64::from(e.value?)]))
                .flatten()
                .collect(),
        );
    }
    let (summary, diagnostics) = collector.finish(Path::new(""));
    let t0 = if t0 == i64::MAX { 0 } else { t0 };

    // Interned names: every region id a span or mark uses, by id.
    let mut ids: Vec<u16> = raw_spans
        .iter()
        .flatten()
        .map(|s| s.0)
        .chain(raw_marks.iter().flatten().map(|m| m.0))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let index: BTreeMap<u16, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();

    let mut span_count = 0u64;
    let mut mark_count = 0u64;
    for spans in &raw_spans {
        span_count += spans.len() as u64;
        let mut flat = Vec::with_capacity(spans.len() * 3);
        for &(r, start, end) in spans {
            let (s, e) = (ns_from(t0, start), ns_from(t0, end));
            flat.extend([index[&r] as i64, s, (e - s).max(0)]);
        }
        lanes.spans.push(flat);
    }
    for marks in &raw_marks {
        mark_count += marks.len() as u64;
        lanes.marks.push(
            marks
                .iter()
                .flat_map(|&(r, t)| [index[&r] as i64, ns_from(t0, t)])
                .collect(),
        );
    }

    let empty = Cells::new();
    let stats = summary
        .regions
        .iter()
        .filter_map(|st| {
            Some(RegionReport {
                region: *index.get(&st.region)?,
                stats: st.clone(),
                by_block: heatmap(by_block.get(&st.region).unwrap_or(&empty)),
                by_sm: heatmap(by_sm.get(&st.region).unwrap_or(&empty)),
            })
        })
        .collect();

    let s = &launch.shape;
    let header = ReportHeader {
        title: launch.title(),
        kernel: launch.kernel.clone(),
        launch: s.launch,
        device: device.label(),
        sm_count: device.sm_count,
        grid: s.grid,
        block: s.block,
        blocks: s.total_blocks(),
        blocks_traced: s.blocks_traced,
        warps_per_block: s.warps_per_block(),
        warps_traced_per_block: s.warps_traced(),
        warps: lanes.block.len(),
        kernel_time_us: summary.kernel_time,
        events,
        spans: span_count,
        marks: mark_count,
        dropped,
        ring_fill: fill.to_string(),
        clock: summary.clock,
        diagnostics: diagnostics.to_json(DIAGNOSTICS_IN_REPORT),
    };
    Ok(ReportData {
        format: 1,
        tool: concat!("ktrace ", env!("CARGO_PKG_VERSION")).into(),
        header,
        regions: ids
            .iter()
            .map(|&id| regions.name(id).into_owned())
            .collect(),
        region_ids: ids,
        lanes,
        stats,
        analysis: crate::analysis::analyze_decoded_launch(
            launch,
            &decoded,
            regions,
            &opts.analysis,
        ),
    })
}

/// `value` as JSON that can sit inside an HTML `<script>` element: `<`,
/// `>` and `&` (which JSON holds only inside strings) and the line
/// separators U+2028 and U+2029 are written as `\u` escapes, so no
/// `</script>` or `<!--` can occur.
pub fn script_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let json = serde_json::to_string(value)?;
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// `s` with `&`, `<`, `>`, `"` and `'` as character references.
fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page: the template with its style, script, title and data filled
/// in (one pass over the template, so nothing filled in is read again).
pub fn render_html(data: &ReportData) -> serde_json::Result<String> {
    let json = script_json(data)?;
    let title = html_text(&format!("ktrace report: {}", data.header.title));
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + json.len());
    let mut rest = TEMPLATE;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .expect("report template: unclosed placeholder");
        out.push_str(match &after[..close] {
            "STYLE" => STYLE,
            "SCRIPT" => SCRIPT,
            "TITLE" => &title,
            "DATA" => &json,
            other => panic!("report template: unknown placeholder {other}"),
        });
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What [`write_report`] wrote.
#[derive(Clone, Debug)]
pub struct WrittenReport {
    /// Lanes (traced warps) in the timeline.
    pub warps: usize,
    /// Spans in the timeline.
    pub spans: u64,
    /// Diagnostics of the launch.
    pub diagnostics: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// Decodes `launch` and writes its report to `path` (atomically).
pub fn write_report(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    path: &Path,
    opts: &ReportOptions,
) -> Result<WrittenReport> {
    let data = report_data(launch, device, regions, opts)?;
    let html = render_html(&data).map_err(|e| Error::io(path, io::Error::other(e)))?;
    write_atomic(path, |w| w.write_all(html.as_bytes()))?;
    Ok(WrittenReport {
        warps: data.header.warps,
        spans: data.header.spans,
        diagnostics: data.header.diagnostics["count"].as_u64().unwrap_or(0) as usize,
        bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
    })
}

#[cfg(test)]
mod tests {
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
}
