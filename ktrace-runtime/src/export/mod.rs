//! Writing a launch's Chrome trace and summary files, or a capture's
//! launches into one Perfetto trace (`.pftrace`) with a summary per launch,
//! streamed warp by warp and written atomically.

pub mod chrome;
mod collect;
pub mod perfetto;
pub mod perfetto_proto;
mod region_slots;
pub mod summary;

use std::borrow::Borrow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::capture::{DeviceInfo, LaunchCapture};
use crate::decode::{DecodeOptions, Decoder, WarpTrace};
use crate::diagnostics::Diagnostics;
use crate::error::Result;
use crate::fill::{ring_fill, RingFill};
use crate::output::{launch_trace_path, summary_path, write_atomic};
use crate::regions::Regions;
use chrome::{ChromeOptions, ChromeWriter};
use collect::LaunchCollector;
use perfetto::{LaunchGroup, PerfettoOptions, PerfettoWriter};
use summary::{Summary, SummaryOptions};

/// Diagnostic messages kept in output files (counts cover all of them).
const DIAGNOSTICS_IN_FILES: usize = 200;

/// Everything that shapes the output files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Decoding choices (the nominal clock is taken from the device info
    /// when this leaves it 0).
    pub decode: DecodeOptions,
    /// Chrome trace layout.
    pub chrome: ChromeOptions,
    /// Summary choices.
    pub summary: SummaryOptions,
}

impl ExportOptions {
    /// The decoding options for a launch on `device`: the nominal clock is
    /// the device's when [`DecodeOptions::nominal_clock_khz`] is 0, and the
    /// layout version the device's.
    pub fn decode_for(&self, device: &DeviceInfo) -> DecodeOptions {
        let mut d = self.decode;
        if d.nominal_clock_khz == 0 {
            d.nominal_clock_khz = u64::from(device.clock_khz);
        }
        d.layout_version = device.layout_version;
        d
    }
}

/// What an export wrote.
#[derive(Clone, Debug)]
pub struct ExportReport {
    /// The trace file: the launch's Chrome trace, or the `.pftrace` that
    /// [`export_perfetto`] writes every launch into.
    pub trace_path: PathBuf,
    /// The summary file.
    pub summary_path: PathBuf,
    /// Trace events written (complete, instant or begin/end events; for
    /// the Perfetto trace, the launch's spans and marks).
    pub events: u64,
    /// Warps decoded.
    pub warps: usize,
    /// Everything that went wrong.
    pub diagnostics: Diagnostics,
    /// The summary as written.
    pub summary: Summary,
    /// How full the launch's rings were.
    pub fill: RingFill,
}

fn other_data(
    dec: &Decoder<'_>,
    device: &DeviceInfo,
    summary: &Summary,
    diagnostics: &Diagnostics,
    events: u64,
    t0_ps: i64,
) -> serde_json::Value {
    let s = dec.shape();
    let (ratio, source) = dec.device_ratio();
    serde_json::json!({
        "tool": concat!("ktrace ", env!("CARGO_PKG_VERSION")),
        "launch": s.launch,
        "grid": s.grid,
        "block": s.block,
        "warps_per_block": s.warps_per_block(),
        "per_warp_cap": s.cap(),
        "warp_mask": s.warp_mask,
        "warps_traced": s.warps_traced(),
        "block_stride": s.block_stride,
        "blocks_traced": s.blocks_traced,
        "device": device.name,
        "sm_count": device.sm_count,
        "nominal_clock_khz": device.clock_khz,
        "clock_mhz_estimate": ratio.mhz(),
        "clock_ratio": {"ns": ratio.ns, "cycles": ratio.cycles, "source": source.as_str()},
        "clock": summary.clock,
        "layout_version": device.layout_version,
        "origin_globaltimer_ns": dec.origin_globaltimer().to_string(),
        "first_event_ps_from_origin": t0_ps,
        "warps": dec.warp_count(),
        "events": events,
        "diagnostics": diagnostics.to_json(DIAGNOSTICS_IN_FILES),
    })
}

/// Decodes a launch and computes its summary, writing nothing. The
/// diagnostics are the ones [`write_trace`] reports for the same launch.
pub fn summarize_launch(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
) -> Result<(Summary, Diagnostics)> {
    let dec = Decoder::new(&launch.raw, &launch.shape, &opts.decode_for(device))?;
    let mut collector = LaunchCollector::new(&dec, regions, opts.summary);
    for w in dec.warps() {
        collector.add_warp(&w);
    }
    Ok(collector.finish(Path::new("")))
}

/// A Chrome trace as [`write_trace`] wrote it, and the summary beside it.
#[derive(Clone, Debug)]
pub struct WrittenTrace {
    /// Trace events written (complete, instant or begin/end events).
    pub events: u64,
    /// Everything that went wrong: the decoder's, every warp's, and one
    /// per region id of a decoded event that the table lacks, by id (the
    /// same as [`summarize_launch`] reports).
    pub diagnostics: Diagnostics,
    /// The summary (not written anywhere).
    pub summary: Summary,
}

/// Writes the Chrome trace of `warps` to `w` and computes the summary
/// beside it, which names the trace `trace_name`.
///
/// `warps` are the warps of `dec` in slot order: [`Decoder::warps`], which
/// decodes one warp at a time, or the `warps` of [`Decoder::decode_all`].
/// [`export_launch`] is this with a file for `w`.
pub fn write_trace<W: Write, T: Borrow<WarpTrace>>(
    dec: &Decoder<'_>,
    warps: impl IntoIterator<Item = T>,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
    trace_name: &Path,
    w: W,
) -> io::Result<WrittenTrace> {
    let t0 = dec.first_event_of_launch().unwrap_or(0);
    let mut collector = LaunchCollector::new(dec, regions, opts.summary);
    let mut cw = ChromeWriter::begin(w, regions, opts.chrome, t0)?;
    for warp in warps {
        let warp = warp.borrow();
        cw.warp(warp)?;
        collector.add_warp(warp);
    }
    let events = cw.events_written();
    let (summary, diagnostics) = collector.finish(trace_name);
    cw.finish(&other_data(dec, device, &summary, &diagnostics, events, t0))?;
    Ok(WrittenTrace {
        events,
        diagnostics,
        summary,
    })
}

/// Decodes a launch and writes its Chrome trace to `trace_path` and its
/// summary beside it ([`summary_path`]), one warp at a time.
pub fn export_launch(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    trace_path: &Path,
    opts: &ExportOptions,
) -> Result<ExportReport> {
    let dec = Decoder::new(&launch.raw, &launch.shape, &opts.decode_for(device))?;
    let fill = ring_fill(&launch.raw, &launch.shape)?;
    let WrittenTrace {
        events,
        diagnostics,
        summary,
    } = write_atomic(trace_path, |w| {
        write_trace(&dec, dec.warps(), device, regions, opts, trace_path, w)
    })?;
    let summary_path = summary_path(trace_path);
    write_atomic(&summary_path, |w| {
        serde_json::to_writer_pretty(&mut *w, &summary).map_err(io::Error::other)?;
        w.write_all(b"\n")
    })?;
    Ok(ExportReport {
        trace_path: trace_path.to_path_buf(),
        summary_path,
        events,
        warps: dec.warp_count(),
        diagnostics,
        summary,
        fill,
    })
}

/// Whether `path` names a Perfetto trace: it ends in `.pftrace` or
/// `.perfetto-trace`.
pub fn is_perfetto_path(path: &Path) -> bool {
    perfetto_stem(path).is_some()
}

/// `path` without its `.pftrace` or `.perfetto-trace` ending.
fn perfetto_stem(path: &Path) -> Option<String> {
    let s = path.as_os_str().to_string_lossy();
    [".pftrace", ".perfetto-trace"]
        .iter()
        .find_map(|ext| s.strip_suffix(ext).map(str::to_owned))
}

/// The summary of launch `launch` in the Perfetto trace `trace`: the name
/// the Chrome export would give it for the same name ending in `.json`
/// instead (`out_summary.json` for launch 0 or a trace of one launch,
/// `out_launch3_summary.json` for launch 3 of `out.pftrace`).
pub fn perfetto_summary_path(trace: &Path, launch: u32, only_launch: bool) -> PathBuf {
    let s = trace.as_os_str().to_string_lossy();
    let json = PathBuf::from(format!(
        "{}.json",
        perfetto_stem(trace).unwrap_or_else(|| s.into_owned())
    ));
    if only_launch {
        summary_path(&json)
    } else {
        summary_path(&launch_trace_path(&json, launch))
    }
}

/// Decodes `launches` and writes them all into one Perfetto trace at
/// `trace_path` (see [`perfetto`]), one warp at a time, and each launch's
/// summary beside it ([`perfetto_summary_path`]: one file per launch, each
/// as [`export_launch`] writes it, naming the `.pftrace` as its trace).
///
/// Returns one report per launch, in order; their `trace_path` is the
/// shared file and `events` counts the launch's spans and marks (what the
/// Chrome trace holds). `opts.chrome` plays no part.
pub fn export_perfetto(
    launches: &[(&LaunchCapture, LaunchGroup)],
    device: &DeviceInfo,
    regions: &Regions,
    trace_path: &Path,
    opts: &ExportOptions,
    perfetto: &PerfettoOptions,
) -> Result<Vec<ExportReport>> {
    let decode = opts.decode_for(device);
    let mut decoders = Vec::with_capacity(launches.len());
    let mut fills = Vec::with_capacity(launches.len());
    for (l, _) in launches {
        decoders.push(Decoder::new(&l.raw, &l.shape, &decode)?);
        fills.push(ring_fill(&l.raw, &l.shape)?);
    }
    let written = write_atomic(trace_path, |w| {
        let mut pw = PerfettoWriter::begin(w, *perfetto)?;
        let mut out = Vec::with_capacity(launches.len());
        for (dec, (_, group)) in decoders.iter().zip(launches) {
            pw.launch(group, dec, regions)?;
            let before = pw.events_written();
            let mut collector = LaunchCollector::new(dec, regions, opts.summary);
            for warp in dec.warps() {
                pw.warp(&warp)?;
                collector.add_warp(&warp);
            }
            let (summary, diagnostics) = collector.finish(trace_path);
            out.push((pw.events_written() - before, summary, diagnostics));
        }
        pw.finish()?;
        Ok(out)
    })?;
    let only = launches.len() == 1;
    let mut reports = Vec::with_capacity(launches.len());
    for (((events, summary, diagnostics), dec), fill) in
        written.into_iter().zip(&decoders).zip(fills)
    {
        let summary_path = perfetto_summary_path(trace_path, dec.shape().launch, only);
        write_atomic(&summary_path, |w| {
            serde_json::to_writer_pretty(&mut *w, &summary).map_err(io::Error::other)?;
            w.write_all(b"\n")
        })?;
        reports.push(ExportReport {
            trace_path: trace_path.to_path_buf(),
            summary_path,
            events,
            warps: dec.warp_count(),
            diagnostics,
            summary,
            fill,
        });
    }
    Ok(reports)
}
