//! One self-contained HTML file per launch (`ktrace report`): a header,
//! a timeline with one lane per traced warp, per-region histograms,
//! percentiles and heatmaps, each region's stall reasons when the capture
//! holds PC samples of the kernel, and the launch's analysis.
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
use super::summary::{ClockSummary, RegionStats, Summary, SummaryOptions};
use super::ExportOptions;
use crate::analysis::stalls::{stall_tables, StallTable};
use crate::decode::{Decoder, WarpTrace};
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::fill::{ring_fill, RingFill};
use crate::format::capture::{DeviceInfo, LaunchCapture};
use crate::format::regions::Regions;
use crate::format::stalls::StallSamples;
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
    /// PC samples (`KTRACE_STALLS`) to show with the regions: those of the
    /// launch's kernel, when there are any ([`Capture::stalls`]).
    ///
    /// [`Capture::stalls`]: crate::format::capture::Capture::stalls
    pub stalls: Vec<StallSamples>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            export: ExportOptions::default(),
            hist_bins: 48,
            analysis: crate::analysis::AnalysisOptions::default(),
            stalls: Vec::new(),
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
    /// The stall table of the launch's kernel, when the options carry PC
    /// samples of it: the page shows each region's share and reasons in
    /// its card, and the samples outside regions and on markers.
    pub stalls: Option<StallTable>,
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

/// What the report takes from the decoded warps while the launch's first
/// event is not yet known: spans and marks in ps, per lane, and per region
/// the duration sums per (block, warp) and (SM, warp).
struct Gathered {
    /// The lanes' columns, all but the spans and marks.
    lanes: Lanes,
    /// `(region, start_ps, end_ps)` of each lane's spans.
    raw_spans: Vec<Vec<(u16, i64, i64)>>,
    /// `(region, t_ps)` of each lane's marks.
    raw_marks: Vec<Vec<(u16, i64)>>,
    by_block: BTreeMap<u16, Cells>,
    by_sm: BTreeMap<u16, Cells>,
    /// The earliest first event of any warp, ps (`i64::MAX` while none).
    t0: i64,
    events: u64,
    dropped: u64,
}

impl Gathered {
    fn new() -> Self {
        Gathered {
            lanes: Lanes::default(),
            raw_spans: Vec::new(),
            raw_marks: Vec::new(),
            by_block: BTreeMap::new(),
            by_sm: BTreeMap::new(),
            t0: i64::MAX,
            events: 0,
            dropped: 0,
        }
    }

    /// Adds one warp as the next lane.
    fn add_warp(&mut self, w: &WarpTrace) {
        if let Some(e) = w.events.first() {
            self.t0 = self.t0.min(e.t_ps);
        }
        self.events += w.events.len() as u64;
        self.dropped += w.dropped;
        self.lanes.block.push(w.id.block);
        self.lanes.warp.push(w.id.warp);
        self.lanes.sm.push(w.id.sm);
        self.lanes.dropped.push(w.dropped);
        self.add_cells(w);
        self.raw_spans.push(
            w.spans
                .iter()
                .map(|s| (s.region, s.start_ps, s.end_ps))
                .collect(),
        );
        self.raw_marks
            .push(w.marks().map(|e| (e.region, e.t_ps)).collect());
        let value = |v: Option<u32>| v.map_or(-1, i64::from);
        self.lanes.span_values.push(
            w.spans
                .iter()
                .enumerate()
                .filter(|(_, s)| s.begin_value.is_some() || s.end_value.is_some())
                .flat_map(|(i, s)| [i as i64, value(s.begin_value), value(s.end_value)])
                .collect(),
        );
        self.lanes.mark_values.push(
            w.marks()
                .enumerate()
                .filter_map(|(i, e)| Some([i as i64, i64::from(e.value?)]))
                .flatten()
                .collect(),
        );
    }

    /// Adds the warp's span durations to its (block, warp) and (SM, warp)
    /// cells.
    fn add_cells(&mut self, w: &WarpTrace) {
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
            cell(&mut self.by_block, w.id.block);
            cell(&mut self.by_sm, u32::from(w.id.sm));
        }
    }

    /// The launch's first event, ps (0 without events).
    fn origin(&self) -> i64 {
        if self.t0 == i64::MAX {
            0
        } else {
            self.t0
        }
    }

    /// Every region id a span or mark uses, by id.
    fn region_ids(&self) -> Vec<u16> {
        let mut ids: Vec<u16> = self
            .raw_spans
            .iter()
            .flatten()
            .map(|s| s.0)
            .chain(self.raw_marks.iter().flatten().map(|m| m.0))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Fills the lanes' spans and marks, in whole ns from `t0` and with
    /// regions as indices into `index`; returns the counts of spans and
    /// marks.
    fn flatten_lanes(&mut self, t0: i64, index: &BTreeMap<u16, usize>) -> (u64, u64) {
        let mut span_count = 0u64;
        let mut mark_count = 0u64;
        for spans in &self.raw_spans {
            span_count += spans.len() as u64;
            let mut flat = Vec::with_capacity(spans.len() * 3);
            for &(r, start, end) in spans {
                let (s, e) = (ns_from(t0, start), ns_from(t0, end));
                flat.extend([index[&r] as i64, s, (e - s).max(0)]);
            }
            self.lanes.spans.push(flat);
        }
        for marks in &self.raw_marks {
            mark_count += marks.len() as u64;
            self.lanes.marks.push(
                marks
                    .iter()
                    .flat_map(|&(r, t)| [index[&r] as i64, ns_from(t0, t)])
                    .collect(),
            );
        }
        (span_count, mark_count)
    }

    /// The statistics and heatmaps of each region of `summary` that has an
    /// index.
    fn region_reports(&self, summary: &Summary, index: &BTreeMap<u16, usize>) -> Vec<RegionReport> {
        let empty = Cells::new();
        summary
            .regions
            .iter()
            .filter_map(|st| {
                Some(RegionReport {
                    region: *index.get(&st.region)?,
                    stats: st.clone(),
                    by_block: heatmap(self.by_block.get(&st.region).unwrap_or(&empty)),
                    by_sm: heatmap(self.by_sm.get(&st.region).unwrap_or(&empty)),
                })
            })
            .collect()
    }
}

/// The counts the header shows beside the launch's shape.
struct HeaderCounts {
    warps: usize,
    events: u64,
    spans: u64,
    marks: u64,
    dropped: u64,
}

/// The launch header, from the capture, the summary and the counts.
fn report_header(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    summary: Summary,
    diagnostics: &Diagnostics,
    fill: &RingFill,
    counts: HeaderCounts,
) -> ReportHeader {
    let s = &launch.shape;
    ReportHeader {
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
        warps: counts.warps,
        kernel_time_us: summary.kernel_time,
        events: counts.events,
        spans: counts.spans,
        marks: counts.marks,
        dropped: counts.dropped,
        ring_fill: fill.to_string(),
        clock: summary.clock,
        diagnostics: diagnostics.to_json(DIAGNOSTICS_IN_REPORT),
    }
}

/// Decodes `launch` and gathers what its report shows.
pub fn report_data(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ReportOptions,
) -> Result<ReportData> {
    let buffer = launch.buffer()?;
    let dec = Decoder::new(buffer, &opts.export.decode_for(device));
    // Decoded once, for the lanes and statistics and for the analysis.
    let decoded = dec.decode_all();
    let fill = ring_fill(&buffer);
    let summary_opts = SummaryOptions {
        hist_bins: opts.hist_bins.max(1),
        ..SummaryOptions::default()
    };
    let mut collector = LaunchCollector::new(&dec, regions, summary_opts);
    let mut gathered = Gathered::new();
    for w in &decoded.warps {
        collector.add_warp(w);
        gathered.add_warp(w);
    }
    let (summary, diagnostics) = collector.finish(Path::new(""));
    let t0 = gathered.origin();

    // Interned names: every region id a span or mark uses, by id.
    let ids = gathered.region_ids();
    let index: BTreeMap<u16, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let (spans, marks) = gathered.flatten_lanes(t0, &index);
    let stats = gathered.region_reports(&summary, &index);
    let counts = HeaderCounts {
        warps: gathered.lanes.block.len(),
        events: gathered.events,
        spans,
        marks,
        dropped: gathered.dropped,
    };
    let header = report_header(launch, device, summary, &diagnostics, &fill, counts);
    Ok(ReportData {
        format: 1,
        tool: concat!("ktrace ", env!("CARGO_PKG_VERSION")).into(),
        header,
        regions: ids
            .iter()
            .map(|&id| regions.name(id).into_owned())
            .collect(),
        region_ids: ids,
        lanes: gathered.lanes,
        stats,
        analysis: crate::analysis::analyze_decoded_launch(
            launch,
            &decoded,
            regions,
            &opts.analysis,
        ),
        stalls: {
            let mine: Vec<StallSamples> = opts
                .stalls
                .iter()
                .filter(|s| s.kernel == launch.kernel)
                .cloned()
                .collect();
            stall_tables(&mine, regions, None).into_iter().next()
        },
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
mod tests;
