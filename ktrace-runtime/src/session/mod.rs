//! The device edge (feature `cuda`): [`TraceSession`] owns the trace buffer
//! on the GPU, hands the kernel its [`KtraceArg`], copies the buffer back
//! after each launch and writes the outputs. Also [`open_device`] and
//! [`load_module`], which loads the traced or untraced build of a kernel
//! ([`KernelModule`]) as the tracing switch says,
//! [`load_module_variant`], which loads the build asked for, and
//! [`load_module_pair`], which loads both so that each launch runs the build
//! its argument asks for.

mod clock_sync;
mod config;
pub mod continuous;
mod cupti;
mod device;
mod module_pair;
mod stalls;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use crate::error::Result;
use crate::export::perfetto::{HostClocks, PerfettoOptions};
use crate::export::plan::{plan, ChromeNames, TraceFormat};
use crate::export::{is_perfetto_path, ExportOptions, ExportReport, TimelineLaunch};
use crate::fill::{ring_fill, RingFill};
use crate::format::capture::{Capture, DeviceInfo, HostSpan, LaunchCapture};
use crate::format::layout::KtraceArg;
use crate::format::regions::Regions;
use crate::format::shape::LaunchShape;
use crate::format::stalls::StallSamples;
use crate::settings::{var, LaunchSelection, Overrides};
use crate::sizing::{bytes_text, Sizing};
use crate::switch::enabled;
pub use crate::switch::{KernelModule, ENV_ENABLE};
use crate::timeline::{host_clocks_ns, ClockSync, HostAxis};
pub use clock_sync::{ClockProbe, ROUNDS as CLOCK_SYNC_ROUNDS};
pub use config::{SessionPlan, TraceConfig};
use device::{alloc_buffer, device_info, driver};
pub use device::{load_module, load_module_variant, open_device};
pub use module_pair::{load_module_pair, FunctionPair, ModulePair};

/// `KTRACE_OUT`: the trace file of launch 0 (default `trace.json`); a name
/// ending in `.pftrace` writes every launch of the session into that one
/// Perfetto trace, on the host's clock.
pub const ENV_OUT: &str = "KTRACE_OUT";
/// `KTRACE_CAPTURE`: when set, the capture file to save at the end.
pub const ENV_CAPTURE: &str = "KTRACE_CAPTURE";

/// A tracing session for one kernel (one grid and block shape), over one or
/// more launches.
///
/// With tracing off ([`enabled`] is false) it allocates nothing, [`arg`]
/// gives a null buffer and nothing is written. With tracing on it owns one
/// zeroed device buffer, sized within a memory budget (see
/// [`sizing`](crate::sizing); [`sizing`](TraceSession::sizing) says what was
/// chosen); after each launch [`finish_launch`] copies it back, reads how
/// full the rings were ([`fills`](TraceSession::fills)) and zeroes it, and [`finish`] (or
/// dropping the session) writes a Chrome trace and a summary per launch.
///
/// # Launches
///
/// Each call of [`finish_launch`] ends one launch, traced or not; they are
/// numbered from 0. [`TraceConfig::launches`] (or `KTRACE_LAUNCHES`) picks
/// the launches traced: for the others [`arg`] gives the null argument and
/// [`finish_launch`] copies nothing and writes nothing. A timing loop takes
/// `arg()` and calls `finish_launch()` once per launch:
///
/// ```ignore
/// let mut session = TraceSession::new(&stream, config, REGIONS)?; // KTRACE_LAUNCHES=3
/// for _ in 0..20 {
///     let trace = session.arg(); // the buffer for launch 3, null otherwise
///     launch(&trace)?;
///     session.finish_launch()?; // copies launch 3 only
/// }
/// session.finish()?; // one trace: trace_launch3.json
/// ```
///
/// Reusing one [`arg`] for several launches is safe: every traced warp
/// writes its slot afresh at `KTRACE_OPEN` (its entry count restarts at 0
/// and the open timers and ids are rewritten; see `ktrace.cuh`), so the
/// buffer that [`finish_launch`] copies holds the last launch that wrote
/// it. A launch given [`KtraceArg::OFF`] records nothing and is not a
/// launch of the session: call no [`finish_launch`] for it.
///
/// [`discard`](TraceSession::discard) ends a session without copying or
/// writing anything, even with a launch pending.
///
/// [`arg`]: TraceSession::arg
/// [`finish_launch`]: TraceSession::finish_launch
/// [`finish`]: TraceSession::finish
pub struct TraceSession {
    stream: Arc<CudaStream>,
    sizing: Sizing,
    /// The sizing's shape; its `launch` is the next launch's index.
    shape: LaunchShape,
    selection: LaunchSelection,
    buffer: Option<CudaSlice<u8>>,
    /// The device, the regions, the launches recorded so far and the clock
    /// syncs: what a capture file of the session holds.
    capture: Capture,
    /// The trace file; `None`: the capture only.
    output: Option<PathBuf>,
    capture_path: Option<PathBuf>,
    export: ExportOptions,
    quiet: bool,
    fills: Vec<RingFill>,
    kernel: String,
    /// The clock handshake, while it works.
    probe: Option<ClockProbe>,
    /// `CLOCK_REALTIME` when the pending launch's argument was handed out.
    enqueued_ns: Cell<u64>,
    pending: Cell<bool>,
    written: usize,
    /// The PC sampling period's power of two; 0: not sampling.
    stalls: u32,
    /// Launches of PC samples saved so far.
    stalls_written: usize,
    finished: bool,
}

impl std::fmt::Debug for TraceSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSession")
            .field("enabled", &self.is_enabled())
            .field("shape", &self.shape)
            .field("launches_traced", &self.selection)
            .field("output", &self.output)
            .field("launches", &self.capture.launches.len())
            .finish()
    }
}

impl TraceSession {
    /// A session for launches on `stream` shaped by `config` and the
    /// environment's overrides ([`TraceConfig::plan`]), with the region
    /// table generated by ktrace-build (`REGIONS`). With tracing on and
    /// the buffer not as asked, prints one line saying what was chosen
    /// (unless quiet).
    ///
    /// Fails on a configuration or an environment variable that cannot be
    /// traced (checked whether tracing is on or not) and, with tracing on,
    /// when the buffer does not fit in the device's free memory.
    pub fn new(
        stream: &Arc<CudaStream>,
        config: TraceConfig,
        regions: &[(u16, &str)],
    ) -> Result<Self> {
        let plan = config.plan(&Overrides::from_env()?)?;
        let shape = plan.sizing.shape;
        let (output, capture_path) = config::outputs(
            &config,
            var(ENV_OUT).map(PathBuf::from),
            var(ENV_CAPTURE).map(PathBuf::from),
        );
        if plan.stalls > 0 {
            stalls::start(stream.context(), plan.stalls)?;
        }
        let (buffer, device) = if enabled() {
            if let (Some(line), false) = (plan.sizing.message(), config.quiet) {
                eprintln!("ktrace: {line}");
            }
            let device = device_info(stream.context());
            (Some(alloc_buffer(stream, &shape)?), device)
        } else {
            let device = if plan.stalls > 0 {
                device_info(stream.context())
            } else {
                DeviceInfo::default()
            };
            (None, device)
        };
        let probe = clock_probe(stream, buffer.is_some(), &config, plan.stalls);
        let mut session = TraceSession {
            stream: stream.clone(),
            sizing: plan.sizing,
            shape,
            selection: plan.launches,
            buffer,
            capture: Capture {
                device,
                regions: Regions::from_table(regions),
                launches: Vec::new(),
                clock_syncs: Vec::new(),
                ..Default::default()
            },
            output,
            capture_path,
            export: ExportOptions {
                threads: plan.threads,
                ..config.export
            },
            quiet: config.quiet,
            fills: Vec::new(),
            kernel: config.kernel,
            probe,
            enqueued_ns: Cell::new(0),
            pending: Cell::new(false),
            written: 0,
            stalls: plan.stalls,
            stalls_written: 0,
            finished: false,
        };
        session.measure_clock();
        if session.stalls > 0 {
            stalls::discard()?;
        }
        Ok(session)
    }

    /// One clock handshake, kept; on failure says so once and stops
    /// measuring.
    fn measure_clock(&mut self) {
        let Some(probe) = &self.probe else { return };
        match probe.sync(&self.stream) {
            Ok(s) => self.capture.clock_syncs.push(s),
            Err(e) => {
                no_clock_sync(&e, self.quiet);
                self.probe = None;
            }
        }
    }

    /// The GPU's clock measured against the host's so far: at the start
    /// and after every traced launch (empty when
    /// [`TraceConfig::clock_sync`] is off or the handshake failed).
    pub fn clock_syncs(&self) -> &[ClockSync] {
        &self.capture.clock_syncs
    }

    /// Whether this session traces (it allocated a buffer).
    pub fn is_enabled(&self) -> bool {
        self.buffer.is_some()
    }

    /// Whether the next launch is traced: tracing is on and the launch
    /// selection holds it.
    pub fn next_launch_traced(&self) -> bool {
        self.is_enabled() && self.selection.contains(self.shape.launch)
    }

    /// The launch shape (the `launch` field is the next launch's index).
    pub fn shape(&self) -> &LaunchShape {
        &self.shape
    }

    /// The buffer chosen for the session, and how it fits the budget.
    pub fn sizing(&self) -> &Sizing {
        &self.sizing
    }

    /// The kernel argument for the next launch: the buffer, the sampling and
    /// the launch index; a null buffer when tracing is off or the launch is
    /// not selected.
    pub fn arg(&self) -> KtraceArg {
        match &self.buffer {
            Some(buf) if self.next_launch_traced() => {
                self.pending.set(true);
                self.enqueued_ns.set(host_clocks_ns().0);
                let (ptr, _sync) = buf.device_ptr(&self.stream);
                self.shape.arg(ptr)
            }
            _ => KtraceArg::OFF,
        }
    }

    /// Ends the current launch. When it is traced: waits for the stream,
    /// copies the buffer back and keeps it, reads how full the rings were
    /// ([`fills`](TraceSession::fills); printed with the launch's lines
    /// unless quiet) and zeroes the buffer for the next launch. Otherwise
    /// (tracing off, or a launch not selected) copies and keeps nothing.
    pub fn finish_launch(&mut self) -> Result<()> {
        if self.stalls > 0 {
            self.take_stalls()?;
        }
        if !self.next_launch_traced() {
            self.shape.launch = self.shape.launch.saturating_add(1);
            return Ok(());
        }
        if self.buffer.is_none() {
            return Ok(());
        }
        self.pending.set(false);
        self.stream
            .synchronize()
            .map_err(driver("waiting for the traced kernel to finish"))?;
        let host_span = HostSpan {
            enqueue_ns: self.enqueued_ns.get(),
            complete_ns: host_clocks_ns().0,
        };
        self.measure_clock();
        if self.stalls > 0 {
            // The handshake's kernel was sampled too.
            stalls::discard()?;
        }
        let Some(buf) = self.buffer.as_mut() else {
            return Ok(());
        };
        let raw = self
            .stream
            .clone_dtoh(&*buf)
            .map_err(driver("copying the trace buffer back"))?;
        self.stream
            .memset_zeros(buf)
            .map_err(driver("zeroing the trace buffer"))?;
        let launch = LaunchCapture {
            kernel: self.kernel.clone(),
            host_span: Some(host_span),
            ..LaunchCapture::new(self.shape, raw)
        };
        self.fills.push(ring_fill(&launch.buffer()?));
        self.capture.launches.push(launch);
        self.shape.launch = self.shape.launch.saturating_add(1);
        let note = many_launches_note(
            self.capture.launches.len(),
            &self.selection,
            self.sizing.bytes(),
        );
        if let (Some(note), false) = (note, self.quiet) {
            eprintln!("ktrace: {note}");
        }
        Ok(())
    }

    /// Waits for the launch and keeps its PC samples when the launch
    /// selection holds it.
    fn take_stalls(&mut self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver("waiting for the sampled kernel to finish"))?;
        let launch = self.shape.launch;
        if let Some(s) = stalls::take(launch, &self.kernel)? {
            if self.selection.contains(launch) {
                self.capture.stalls.push(s);
            }
        }
        Ok(())
    }

    /// Saves the PC samples not yet saved, when no capture file of the
    /// launches holds them: to the capture path (`KTRACE_CAPTURE`), else
    /// `stalls.ktrace`.
    fn write_stalls(&mut self) -> Result<()> {
        if self.stalls_written == self.capture.stalls.len() {
            return Ok(());
        }
        let path = self
            .capture_path
            .clone()
            .unwrap_or_else(|| PathBuf::from("stalls.ktrace"));
        self.save_capture(&path)?;
        self.stalls_written = self.capture.stalls.len();
        if !self.quiet {
            let samples: u64 = self.capture.stalls.iter().map(StallSamples::samples).sum();
            eprintln!(
                "ktrace: PC samples of {} launch(es), {samples} in all -> {} (read them with \
                 `ktrace stalls {}`)",
                self.capture.stalls.len(),
                path.display(),
                path.display()
            );
        }
        Ok(())
    }

    /// The launches recorded so far, by launch number.
    pub fn launches(&self) -> &[LaunchCapture] {
        &self.capture.launches
    }

    /// How full the rings of each launch recorded so far were, in the
    /// order of [`launches`](TraceSession::launches): the most entries a
    /// warp recorded, the warps that overflowed, and the cap that would
    /// have kept everything.
    pub fn fills(&self) -> &[RingFill] {
        &self.fills
    }

    /// The launches recorded so far, with the device facts and the regions
    /// (a copy: [`TraceSession::launches`] reads them in place).
    pub fn capture(&self) -> Capture {
        self.capture.clone()
    }

    /// Saves the launches recorded so far as a capture file.
    pub fn save_capture(&self, path: impl AsRef<Path>) -> Result<()> {
        self.capture.save(path)
    }

    /// Writes the trace and summary of every launch not yet written (after
    /// [`finish_launch`](TraceSession::finish_launch) if a launch is pending),
    /// and the capture file if one was asked for. Prints one line per file
    /// unless quiet.
    pub fn write(&mut self) -> Result<Vec<ExportReport>> {
        if !self.is_enabled() {
            self.write_stalls()?;
            return Ok(Vec::new());
        }
        if self.pending.get() {
            self.finish_launch()?;
        }
        let reports = match self.output.clone() {
            Some(output) => self.write_traces(&output)?,
            None => Vec::new(),
        };
        if let Some(path) = &self.capture_path {
            if !self.capture.launches.is_empty() {
                self.save_capture(path)?;
                if !self.quiet {
                    eprintln!(
                        "ktrace: capture of {} launch(es) -> {}",
                        self.capture.launches.len(),
                        path.display()
                    );
                }
                self.stalls_written = self.capture.stalls.len();
                if self.output.is_none() {
                    if !self.quiet {
                        eprintln!(
                            "ktrace: no trace written (KTRACE_CAPTURE alone); `ktrace export {}` \
                             makes one",
                            path.display()
                        );
                    }
                    self.written = self.capture.launches.len();
                }
            }
        }
        self.write_stalls()?;
        Ok(reports)
    }

    /// Writes the trace and summary of every launch not yet written to
    /// `output` (a Perfetto trace rewritten whole, or one Chrome trace per
    /// launch), printing a line per file unless quiet.
    fn write_traces(&mut self, output: &Path) -> Result<Vec<ExportReport>> {
        let mut reports = Vec::new();
        // A Perfetto trace is one timeline of every launch so far, on the
        // host's clock (rewritten whole); Chrome traces are the launches
        // not yet written, one file each.
        let perfetto = is_perfetto_path(output);
        let axis = if perfetto {
            HostAxis::new(&self.capture.clock_syncs)?
        } else {
            None
        };
        let first = if perfetto { 0 } else { self.written };
        let launches: Vec<TimelineLaunch> = TimelineLaunch::of_capture(
            &self.capture,
            &self.capture.launches[first..],
            axis.as_ref(),
        )
        .collect();
        let format = if perfetto {
            TraceFormat::Perfetto(PerfettoOptions {
                host_clocks: HostClocks::from_syncs(&self.capture.clock_syncs),
                args: false,
            })
        } else {
            TraceFormat::Chrome
        };
        let files = if self.written < self.capture.launches.len() {
            plan(launches, output, format, ChromeNames::ByLaunch)?
        } else {
            Vec::new()
        };
        // Of a rewritten Perfetto trace, the launches already written.
        let skip = self.written - first;
        for file in files {
            let mut written = file.write(&self.export, &mut |_| {})?;
            written.drain(..skip);
            for r in written {
                if !self.quiet {
                    report(&r, self.capture.launches[self.written].shape.launch);
                }
                reports.push(r);
                self.written += 1;
            }
        }
        Ok(reports)
    }

    /// Writes everything ([`write`](TraceSession::write)) and ends the
    /// session.
    pub fn finish(mut self) -> Result<Vec<ExportReport>> {
        self.finished = true;
        self.write()
    }

    /// Ends the session without copying or writing anything more: a
    /// pending launch is dropped, launches not yet written are not
    /// written, and the device buffer is freed (in stream order, after the
    /// work already queued). For runs whose traces are not wanted, e.g.
    /// after timing launches with the traced build.
    pub fn discard(mut self) {
        self.finished = true;
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if self.finished || std::thread::panicking() {
            return;
        }
        let unsaved_stalls = self.stalls_written < self.capture.stalls.len();
        if !self.is_enabled() && !unsaved_stalls {
            return;
        }
        if self.pending.get() || self.written < self.capture.launches.len() || unsaved_stalls {
            if let Err(e) = self.write() {
                eprintln!("ktrace: {e}");
            }
        }
    }
}

/// The clock handshake of a session that traces (`tracing`) when its
/// configuration asks for one and PC sampling is off (`stalls` 0):
/// CUPTI's kernel-serialized sampling holds the host while a kernel runs,
/// so the handshake's kernel would never get its answer.
fn clock_probe(
    stream: &Arc<CudaStream>,
    tracing: bool,
    config: &TraceConfig,
    stalls: u32,
) -> Option<ClockProbe> {
    if !tracing || !config.clock_sync {
        return None;
    }
    if stalls > 0 {
        if !config.quiet {
            eprintln!(
                "ktrace: note: PC sampling is on (KTRACE_STALLS), so this session's traces stay \
                 on the GPU's own clock (no clock handshake)"
            );
        }
        return None;
    }
    match ClockProbe::new(stream.context()) {
        Ok(p) => Some(p),
        Err(e) => {
            no_clock_sync(&e, config.quiet);
            None
        }
    }
}

fn no_clock_sync(e: &crate::error::Error, quiet: bool) {
    if !quiet {
        eprintln!(
            "ktrace: warning: {e}; this session's traces stay on the GPU's own clock \
             (they cannot be lined up with the host or other GPUs)"
        );
    }
}

/// Once, when a session that traces every launch has recorded its
/// fourth: each traced launch is a file and a buffer kept in memory.
fn many_launches_note(recorded: usize, selection: &LaunchSelection, bytes: u64) -> Option<String> {
    const MANY: usize = 4;
    (recorded == MANY && *selection == LaunchSelection::All).then(|| {
        format!(
            "{MANY} launches traced so far, each written to its own trace ({} kept in memory \
             until the session ends); to trace only some, set KTRACE_LAUNCHES (e.g. 0 or 0,5) \
             or TraceConfig::launches",
            bytes_text(bytes.saturating_mul(MANY as u64))
        )
    })
}

fn report(r: &ExportReport, launch: u32) {
    eprintln!(
        "ktrace: launch {launch}: {} events from {} warps -> {}",
        r.events,
        r.warps,
        r.trace_path.display()
    );
    eprintln!(
        "ktrace: launch {launch}: summary -> {}",
        r.summary_path.display()
    );
    eprintln!("ktrace: launch {launch}: {}", r.fill);
    const SHOWN: usize = 5;
    for d in r.diagnostics.items().iter().take(SHOWN) {
        eprintln!("ktrace: warning: {d}");
    }
    if r.diagnostics.len() > SHOWN {
        eprintln!(
            "ktrace: ... and {} more warnings (otherData.diagnostics in {})",
            r.diagnostics.len() - SHOWN,
            r.trace_path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_many_launches_note_comes_once_and_only_when_tracing_all() {
        let all = LaunchSelection::All;
        let notes: Vec<usize> = (1..10)
            .filter(|&n| many_launches_note(n, &all, 1 << 20).is_some())
            .collect();
        assert_eq!(notes, [4]);
        let note = many_launches_note(4, &all, 1 << 20).unwrap();
        assert!(
            note.contains("4 MiB kept") && note.contains("KTRACE_LAUNCHES"),
            "{note}"
        );
        assert_eq!(many_launches_note(4, &LaunchSelection::only(0..8), 1), None);
    }
}
