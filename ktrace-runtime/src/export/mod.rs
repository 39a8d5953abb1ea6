//! Writing a launch's Chrome trace and summary files, or launches (of one
//! capture or several) into one Perfetto trace (`.pftrace`) with a summary
//! per launch, streamed warp by warp and written atomically, whole or
//! through a [`TraceFilter`]; and a launch's HTML report ([`report`]).

pub mod chrome;
mod collect;
pub mod filter;
pub mod launch_group;
pub mod launches;
mod parallel;
mod pass;
pub mod perfetto;
pub mod plan;
mod region_slots;
pub mod report;
mod sort;
pub mod summary;

/// Perfetto's messages under their former path (they are [`perfetto::proto`]).
pub use perfetto::proto as perfetto_proto;

use std::borrow::Borrow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::decode::{DecodeOptions, Decoder, WarpTrace};
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::fill::RingFill;
use crate::format::capture::{DeviceInfo, LaunchCapture};
use crate::format::regions::Regions;
use crate::output::{summary_path, write_atomic, write_atomic_with};
use crate::timeline::HostAxis;
use chrome::{ChromeOptions, ChromeWriter};
use filter::{FilterError, LaunchFilter, TraceFilter};
use launch_group::LaunchGroup;
use parallel::{run_warps, NoTrace};
use pass::FilteredPass;
use perfetto::{PerfettoOptions, PerfettoWriter};
use summary::{Summary, SummaryOptions};

/// Diagnostic messages kept in output files (counts cover all of them).
const DIAGNOSTICS_IN_FILES: usize = 200;

/// Everything that shapes the output files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Decoding choices (the nominal clock is taken from the device info
    /// when this leaves it 0).
    pub decode: DecodeOptions,
    /// Chrome trace layout.
    pub chrome: ChromeOptions,
    /// Summary choices.
    pub summary: SummaryOptions,
    /// What the trace keeps of each launch (`None`: everything), and
    /// whether the summary covers only that ([`TraceFilter::summary`]).
    pub filter: Option<TraceFilter>,
    /// Threads that decode, summarise and encode a launch's warps: 0 (the
    /// default) one per core, 1 this thread alone. The output is the
    /// same whatever the number ([`crate::threads::thread_count`]).
    pub threads: usize,
}

impl ExportOptions {
    /// The filter checked against a launch whose first event is at
    /// `first_event_ps`; `None` without a filter.
    pub fn filter_for(
        &self,
        dec: &Decoder<'_>,
        device: &DeviceInfo,
        regions: &Regions,
        first_event_ps: i64,
    ) -> std::result::Result<Option<LaunchFilter>, FilterError> {
        self.filter
            .as_ref()
            .map(|f| f.for_launch(dec.shape(), device, regions, first_event_ps))
            .transpose()
    }

    /// The decoding options for a launch on `device`: the nominal clock is
    /// the device's when [`DecodeOptions::nominal_clock_khz`] is 0.
    pub fn decode_for(&self, device: &DeviceInfo) -> DecodeOptions {
        self.decode.for_device(device)
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
    /// Warps written to the trace: all of them, or those the filter kept.
    pub warps_written: usize,
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
    filter: Option<serde_json::Value>,
) -> serde_json::Value {
    let s = dec.shape();
    let (ratio, source) = dec.device_ratio();
    let mut v = serde_json::json!({
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
        "layout_version": dec.layout_version(),
        "origin_globaltimer_ns": dec.origin_globaltimer().to_string(),
        "first_event_ps_from_origin": t0_ps,
        "warps": dec.warp_count(),
        "events": events,
        "diagnostics": diagnostics.to_json(DIAGNOSTICS_IN_FILES),
    });
    if let Some(f) = filter {
        v["filter"] = f;
    }
    v
}

/// A [`FilterError`] as this crate's error.
fn config_error(e: FilterError) -> Error {
    Error::Config(e.to_string())
}

/// Decodes a launch and computes its summary, writing nothing. The
/// diagnostics are the ones [`write_trace`] reports for the same launch;
/// with a filter whose summary covers only what it keeps
/// ([`SummaryScope::Kept`](crate::export::filter::SummaryScope::Kept)), the summary is of that, as beside the trace.
pub fn summarize_launch(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
) -> Result<(Summary, Diagnostics)> {
    let dec = Decoder::new(launch.buffer()?, &opts.decode_for(device));
    let t0 = dec.first_event_of_launch().unwrap_or(0);
    let filter = opts
        .filter_for(&dec, device, regions, t0)
        .map_err(config_error)?;
    let mut pass = FilteredPass::new(filter, &dec, regions, opts);
    run_warps(&dec, opts.threads, &mut pass, &mut NoTrace, &mut |_| {})
        .map_err(|e| Error::io(Path::new(""), e))?;
    let (summary, diagnostics, _) = pass.finish(Path::new("")).map_err(config_error)?;
    Ok((summary, diagnostics))
}

/// A Chrome trace as [`write_trace`] wrote it, and the summary beside it.
#[derive(Clone, Debug)]
pub struct WrittenTrace {
    /// Trace events written (complete, instant or begin/end events).
    pub events: u64,
    /// Warps written: all of them, or those the filter kept.
    pub warps_written: usize,
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
///
/// With [`ExportOptions::filter`], the trace holds what the filter keeps
/// ([`LaunchFilter::apply`]), `otherData.filter` records it, and the
/// summary covers the whole launch or what was kept
/// ([`TraceFilter::summary`]). A filter that does not fit the launch fails
/// with an [`Error::Config`] holding the [`FilterError`]'s message: before
/// anything is written, or, for a window that starts after the launch's
/// last event, once every warp has been written to `w`. An error writing
/// to `w` is an [`Error::Io`] naming `trace_name`.
pub fn write_trace<W: Write, T: Borrow<WarpTrace>>(
    dec: &Decoder<'_>,
    warps: impl IntoIterator<Item = T>,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
    trace_name: &Path,
    w: W,
) -> Result<WrittenTrace> {
    let warps = Warps::Given(warps.into_iter());
    write_trace_with_steps(dec, warps, device, regions, opts, trace_name, &[], w).map(|(t, _)| t)
}

/// The warps a trace is written from.
enum Warps<'p, I> {
    /// These, decoded already.
    Given(I),
    /// The decoder's, decoded on [`ExportOptions::threads`] threads,
    /// `progress` called with each warp's events after it.
    Decode(&'p mut dyn FnMut(u64)),
}

/// [`write_trace`], with host steps (ps from the launch origin) on a track
/// of their own; also how full the launch's rings were.
#[allow(clippy::too_many_arguments)]
fn write_trace_with_steps<'d, W: Write, T: Borrow<WarpTrace>>(
    dec: &'d Decoder<'d>,
    warps: Warps<'_, impl Iterator<Item = T>>,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
    trace_name: &Path,
    steps: &[(String, i64, i64)],
    w: W,
) -> Result<(WrittenTrace, RingFill)> {
    let io = |e| Error::io(trace_name, e);
    let t0 = dec.first_event_of_launch().unwrap_or(0);
    let filter = opts
        .filter_for(dec, device, regions, t0)
        .map_err(config_error)?;
    let mut pass = FilteredPass::new(filter, dec, regions, opts);
    let mut cw = ChromeWriter::begin(w, regions, opts.chrome, t0).map_err(io)?;
    for (title, start, end) in steps {
        cw.host_step(title, *start, *end).map_err(io)?;
    }
    match warps {
        Warps::Given(warps) => {
            for warp in warps {
                if let Some(kept) = pass.add_warp(warp.borrow()) {
                    cw.warp(&kept).map_err(io)?;
                }
            }
            for i in 0..dec.warp_count() {
                pass.part.add_fill(dec, i);
            }
        }
        Warps::Decode(progress) => {
            run_warps(dec, opts.threads, &mut pass, &mut cw, progress).map_err(io)?;
        }
    }
    let events = cw.events_written();
    let warps_written = pass.warps_kept();
    let fill = pass.fill();
    let (summary, diagnostics, record) = pass.finish(trace_name).map_err(config_error)?;
    cw.finish(&other_data(
        dec,
        device,
        &summary,
        &diagnostics,
        events,
        t0,
        record,
    ))
    .map_err(io)?;
    let written = WrittenTrace {
        events,
        warps_written,
        diagnostics,
        summary,
    };
    Ok((written, fill))
}

/// How far an export has come, as [`export_launch_with_progress`] reports
/// it after each warp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportProgress {
    /// Warps decoded so far.
    pub warps_done: usize,
    /// Warps in the launch.
    pub warps: usize,
    /// Events decoded so far.
    pub events: u64,
}

/// Decodes a launch and writes its Chrome trace to `trace_path` and its
/// summary beside it ([`summary_path`]), one warp at a time.
///
/// A filter ([`ExportOptions::filter`]) that does not fit the launch is an
/// [`Error::Config`] with the [`FilterError`]'s message, and no file is
/// written.
pub fn export_launch(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    trace_path: &Path,
    opts: &ExportOptions,
) -> Result<ExportReport> {
    export_launch_with_progress(launch, device, regions, trace_path, opts, &mut |_| {})
}

/// [`export_launch`], calling `progress` after each warp.
pub fn export_launch_with_progress(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    trace_path: &Path,
    opts: &ExportOptions,
    progress: &mut dyn FnMut(&ExportProgress),
) -> Result<ExportReport> {
    let t = TimelineLaunch {
        launch,
        device,
        regions,
        host_axis: None,
        steps: &[],
    };
    export_timeline_launch(&t, trace_path, opts, progress)
}

/// The host steps that overlap launch `t` on its GPU's clock, as (title,
/// start, end) in ps from the launch origin `origin_ns`; none without a
/// host axis.
fn steps_of_launch(t: &TimelineLaunch<'_>, origin_ns: u64) -> Result<Vec<(String, i64, i64)>> {
    let Some(axis) = t.host_axis else {
        return Ok(Vec::new());
    };
    let Some(span) = crate::format::site::gpu_span(&t.launch.buffer()?) else {
        return Ok(Vec::new());
    };
    let (a, b) = (span.begin_ns, span.end_ns);
    // host = gpu - offset (the GPU's lead), the offset taken at the
    // launch's origin, as the Perfetto export places the launch.
    let offset = axis.offset_at(origin_ns);
    let (ha, hb) = (a as i64 - offset, b as i64 - offset);
    Ok(t.steps
        .iter()
        .filter(|s| (s.begin_ns as i64) < hb && (s.end_ns as i64) > ha)
        .map(|s| {
            let ps = |host: u64| (host as i64 + offset - origin_ns as i64) * 1000;
            (
                format!("{} {}", s.name, s.index),
                ps(s.begin_ns),
                ps(s.end_ns),
            )
        })
        .collect())
}

/// [`export_launch_with_progress`] for a launch with its axis and its
/// capture's host steps: the steps that overlap it go on a track of their
/// own.
pub fn export_timeline_launch(
    t: &TimelineLaunch<'_>,
    trace_path: &Path,
    opts: &ExportOptions,
    progress: &mut dyn FnMut(&ExportProgress),
) -> Result<ExportReport> {
    let (launch, device, regions) = (t.launch, t.device, t.regions);
    let buffer = launch.buffer()?;
    let dec = Decoder::new(buffer, &opts.decode_for(device));
    if opts.filter.is_some() {
        // The checks that need no decoding, before the file is created.
        let t0 = dec.first_event_of_launch().unwrap_or(0);
        opts.filter_for(&dec, device, regions, t0)
            .map_err(config_error)?;
    }
    let mut done = ExportProgress {
        warps: dec.warp_count(),
        ..ExportProgress::default()
    };
    let mut each_warp = |events: u64| {
        done.warps_done += 1;
        done.events += events;
        progress(&done);
    };
    let warps = Warps::<std::iter::Empty<WarpTrace>>::Decode(&mut each_warp);
    let (
        WrittenTrace {
            events,
            warps_written,
            diagnostics,
            summary,
        },
        fill,
    ) = {
        let steps = steps_of_launch(t, dec.origin_globaltimer())?;
        write_atomic_with(trace_path, |w| {
            write_trace_with_steps(&dec, warps, device, regions, opts, trace_path, &steps, w)
        })?
    };
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
        warps_written,
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

/// The summary file of the Perfetto trace `trace`: the name the Chrome
/// export gives launch 0's for the same name ending in `.json` instead
/// (`out_summary.json` for `out.pftrace`). It holds every launch of the
/// trace (see [`export_perfetto`]).
pub fn perfetto_summary_path(trace: &Path) -> PathBuf {
    let s = trace.as_os_str().to_string_lossy();
    summary_path(&PathBuf::from(format!(
        "{}.json",
        perfetto_stem(trace).unwrap_or_else(|| s.into_owned())
    )))
}

/// One launch of a Perfetto timeline, with what places it there.
#[derive(Clone, Copy, Debug)]
pub struct TimelineLaunch<'a> {
    /// The launch.
    pub launch: &'a LaunchCapture,
    /// The device it ran on (its track is named after
    /// [`DeviceInfo::label`]).
    pub device: &'a DeviceInfo,
    /// Its region table.
    pub regions: &'a Regions,
    /// Its GPU's clock against the host's (from the capture's clock
    /// syncs): puts its events on the host's `CLOCK_REALTIME` axis, and its
    /// host span beside them. `None`: the raw `%globaltimer` axis, and no
    /// host span.
    pub host_axis: Option<&'a HostAxis>,
    /// The host steps of its capture (continuous sessions): a Perfetto
    /// trace puts them on a "Host steps" track when the launch is on the
    /// host's axis.
    pub steps: &'a [crate::format::capture::HostStep],
}

impl<'a> TimelineLaunch<'a> {
    /// The launches `launches` of `capture` (all of them, or a tail of
    /// its `launches`), each on `host_axis`.
    pub fn of_capture(
        capture: &'a crate::format::capture::Capture,
        launches: &'a [LaunchCapture],
        host_axis: Option<&'a HostAxis>,
    ) -> impl Iterator<Item = TimelineLaunch<'a>> {
        launches.iter().map(move |l| TimelineLaunch {
            launch: l,
            device: &capture.device,
            regions: &capture.regions,
            host_axis,
            steps: &capture.steps,
        })
    }

    /// Every launch of `captures`, in order, each on the axis `placement`
    /// gives its capture: `placement` is [`crate::timeline::place`]'s
    /// answer for the same captures in the same order.
    pub fn placed(
        captures: impl IntoIterator<Item = &'a crate::format::capture::Capture>,
        placement: &'a crate::timeline::Placement,
    ) -> Vec<TimelineLaunch<'a>> {
        captures
            .into_iter()
            .zip(&placement.host_axes)
            .flat_map(|(c, axis)| Self::of_capture(c, &c.launches, axis.as_ref()))
            .collect()
    }
}

/// Decodes `launches` (of one capture or several) and writes them all into
/// one Perfetto trace at `trace_path` (see [`perfetto`]), one warp at a
/// time, through `opts.filter` if set, and one summary file beside it
/// (`NAME_summary.json`): a single launch's summary as [`export_launch`]
/// writes it, naming the `.pftrace` as its trace, or for several launches
/// `{"trace": ..., "launches": [...]}` with each launch's summary in the
/// trace's order.
///
/// Each launch goes on the axis its [`TimelineLaunch::host_axis`] gives,
/// with the offset interpolated at the launch's origin (the drift within
/// one launch, about 1 ns per ms, is left out). Returns one report per
/// launch, in order; their `trace_path` is the shared file and `events`
/// counts the launch's spans and marks (what the Chrome trace holds).
/// `opts.chrome` plays no part. `progress` is called after each warp.
pub fn export_perfetto(
    launches: &[TimelineLaunch<'_>],
    trace_path: &Path,
    opts: &ExportOptions,
    perfetto: &PerfettoOptions,
    progress: &mut dyn FnMut(&ExportProgress),
) -> Result<Vec<ExportReport>> {
    let mut decoders = Vec::with_capacity(launches.len());
    let mut filters = Vec::with_capacity(launches.len());
    for t in launches {
        let buffer = t.launch.buffer()?;
        let dec = Decoder::new(buffer, &opts.decode_for(t.device));
        // The launch's first event places the filter's window.
        let filter = match opts.filter {
            Some(_) => {
                let t0 = dec.first_event_of_launch().unwrap_or(0);
                opts.filter_for(&dec, t.device, t.regions, t0)
                    .map_err(config_error)?
            }
            None => None,
        };
        filters.push(filter);
        decoders.push(dec);
    }
    let mut done = ExportProgress {
        warps: decoders.iter().map(Decoder::warp_count).sum(),
        ..ExportProgress::default()
    };
    let io = |e| Error::io(trace_path, e);
    let written = write_atomic_with(trace_path, |w| {
        let mut pw = PerfettoWriter::begin(w, *perfetto).map_err(io)?;
        let mut out = Vec::with_capacity(launches.len());
        for ((dec, t), filter) in decoders.iter().zip(launches).zip(filters) {
            let pass = FilteredPass::new(filter, dec, t.regions, opts);
            out.push(write_perfetto_launch(
                &mut pw,
                t,
                dec,
                pass,
                opts.threads,
                trace_path,
                &mut done,
                progress,
            )?);
        }
        // Each capture's steps once, for the captures on the host's axis.
        let mut written_steps: Vec<&[crate::format::capture::HostStep]> = Vec::new();
        for t in launches.iter().filter(|t| t.host_axis.is_some()) {
            if !written_steps.iter().any(|s| std::ptr::eq(*s, t.steps)) {
                pw.host_steps(t.steps).map_err(io)?;
                written_steps.push(t.steps);
            }
        }
        pw.finish().map_err(io)?;
        Ok(out)
    })?;
    let summary_path = write_perfetto_summaries(trace_path, &written)?;
    let mut reports = Vec::with_capacity(launches.len());
    for (written, dec) in written.into_iter().zip(&decoders) {
        let summary_path = summary_path.clone();
        reports.push(ExportReport {
            trace_path: trace_path.to_path_buf(),
            summary_path,
            events: written.events,
            warps: dec.warp_count(),
            warps_written: written.warps_kept,
            diagnostics: written.diagnostics,
            summary: written.summary,
            fill: written.fill,
        });
    }
    Ok(reports)
}

/// Writes the summary file beside the Perfetto trace `trace_path` and
/// returns its path: the launch's own summary, or, for several launches,
/// `{"trace", "launches": [each launch's summary, in order]}`.
fn write_perfetto_summaries(trace_path: &Path, written: &[PerfettoLaunch]) -> Result<PathBuf> {
    let summary_path = perfetto_summary_path(trace_path);
    write_atomic(&summary_path, |w| {
        let json = match written {
            [one] => serde_json::to_value(&one.summary),
            all => serde_json::to_value(PerfettoSummaries {
                trace: trace_path.display().to_string(),
                launches: all.iter().map(|l| &l.summary).collect(),
            }),
        }
        .map_err(io::Error::other)?;
        serde_json::to_writer_pretty(&mut *w, &json).map_err(io::Error::other)?;
        w.write_all(b"\n")
    })?;
    Ok(summary_path)
}

/// What [`write_perfetto_launch`] wrote of one launch.
struct PerfettoLaunch {
    /// Its spans and marks in the trace.
    events: u64,
    warps_kept: usize,
    summary: Summary,
    diagnostics: Diagnostics,
    fill: RingFill,
}

/// Writes launch `t` (decoded by `dec`, filtered by `pass`) into the
/// Perfetto trace `pw` on its axis, and gives its summary (with where it
/// was placed) and diagnostics.
#[allow(clippy::too_many_arguments)]
fn write_perfetto_launch<'d, W: Write>(
    pw: &mut PerfettoWriter<W>,
    t: &TimelineLaunch<'_>,
    dec: &'d Decoder<'d>,
    mut pass: FilteredPass<'d>,
    threads: usize,
    trace_path: &Path,
    done: &mut ExportProgress,
    progress: &mut dyn FnMut(&ExportProgress),
) -> Result<PerfettoLaunch> {
    let io = |e| Error::io(trace_path, e);
    let origin = dec.origin_globaltimer();
    let group = LaunchGroup {
        title: t.launch.title(),
        device: t.device.label(),
        offset_ns: t.host_axis.map_or(0, |a| -a.offset_at(origin)),
        host_span_ns: t
            .host_axis
            .and(t.launch.host_span)
            .map(|h| (h.enqueue_ns, h.complete_ns)),
    };
    pw.launch(&group, dec, t.regions).map_err(io)?;
    let before = pw.events_written();
    let mut each_warp = |events: u64| {
        done.warps_done += 1;
        done.events += events;
        progress(done);
    };
    run_warps(dec, threads, &mut pass, pw, &mut each_warp).map_err(io)?;
    let warps_kept = pass.warps_kept();
    let fill = pass.fill();
    let (mut summary, diagnostics, _) = pass.finish(trace_path).map_err(config_error)?;
    summary.placement = Some(match t.host_axis {
        Some(a) => serde_json::json!({
            "axis": "host_realtime",
            "gpu_ahead_ns": a.offset_at(origin),
            "uncertainty_ns": a.uncertainty_at(origin),
            "clock_syncs": a.points().len(),
            "clock_syncs_in_capture": a.repairs().given,
            "clock_syncs_out_of_order": a.repairs().out_of_order,
            "clock_syncs_same_gpu_time": a.repairs().same_gpu_time,
        }),
        None => serde_json::json!({ "axis": "globaltimer" }),
    });
    Ok(PerfettoLaunch {
        events: pw.events_written() - before,
        warps_kept,
        summary,
        diagnostics,
        fill,
    })
}

/// The summary file of a Perfetto trace of several launches.
#[derive(serde::Serialize)]
struct PerfettoSummaries<'a> {
    /// The trace the launches are in.
    trace: String,
    /// Each launch's summary, in the trace's order.
    launches: Vec<&'a Summary>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_reported_after_each_warp() {
        let cap = crate::synth::sample_capture();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let mut seen = Vec::new();
        let report = export_launch_with_progress(
            &cap.launches[0],
            &cap.device,
            &cap.regions,
            &path,
            &ExportOptions::default(),
            &mut |p| seen.push(*p),
        )
        .unwrap();
        let dec = Decoder::new(
            cap.launches[0].buffer().unwrap(),
            &ExportOptions::default().decode_for(&cap.device),
        );
        let mut events = 0;
        let expected: Vec<ExportProgress> = dec
            .warps()
            .enumerate()
            .map(|(i, w)| {
                events += w.events.len() as u64;
                ExportProgress {
                    warps_done: i + 1,
                    warps: 5,
                    events,
                }
            })
            .collect();
        assert_eq!(seen, expected);
        assert_eq!(report.warps, 5);
        assert!(events > report.events, "{events} {}", report.events);
    }
}
