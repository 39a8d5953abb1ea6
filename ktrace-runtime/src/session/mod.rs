//! The device edge: [`TraceSession`] owns the trace buffer on the GPU, hands
//! the kernel its [`KtraceArg`], copies the buffer back after each launch and
//! writes the outputs. Also [`KernelModule`] and [`load_module`], which pick
//! the traced or untraced build of a kernel.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use cudarc::driver::sys::{cudaError_enum, CUdevice_attribute};
use cudarc::driver::{
    CudaContext, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
};
use cudarc::nvrtc::Ptx;

use crate::capture::{Capture, DeviceInfo, LaunchCapture};
use crate::error::{Error, Result};
use crate::export::{export_launch, ExportOptions, ExportReport};
use crate::layout::KtraceArg;
use crate::output::launch_trace_path;
use crate::regions::Regions;
use crate::shape::{BlockSampling, LaunchShape, WarpSampling};

/// `KTRACE`: tracing is on when it is `1`.
pub const ENV_ENABLE: &str = "KTRACE";
/// `KTRACE_OUT`: the trace file of launch 0 (default `trace.json`).
pub const ENV_OUT: &str = "KTRACE_OUT";
/// `KTRACE_CAPTURE`: when set, the capture file to save at the end.
pub const ENV_CAPTURE: &str = "KTRACE_CAPTURE";

/// 0: follow `KTRACE`; 1: forced off; 2: forced on.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// Whether tracing is on: forced through [`set_enabled`], or else `KTRACE=1`.
pub fn enabled() -> bool {
    match FORCED.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => std::env::var_os(ENV_ENABLE).is_some_and(|v| v == "1"),
    }
}

/// Opens CUDA device `ordinal` (its primary context), or says plainly that
/// there is no driver, where cudarc would panic.
pub fn open_device(ordinal: usize) -> Result<Arc<CudaContext>> {
    // SAFETY: only probes whether the driver library can be loaded.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoDriver {
            tried: cudarc::get_lib_name_candidates("cuda")
                .into_iter()
                .take(3)
                .collect::<Vec<_>>()
                .join(", ")
                + ", ...",
        });
    }
    CudaContext::new(ordinal).map_err(driver("opening the CUDA device"))
}

/// Forces tracing on or off for the whole process (`None`: follow `KTRACE`
/// again). Affects sessions and modules created afterwards.
pub fn set_enabled(on: Option<bool>) {
    let v = match on {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    };
    FORCED.store(v, Ordering::Relaxed);
}

/// A kernel file built twice by ktrace-build: with markers (traced) and
/// without (untraced). The generated `ktrace.rs` defines one constant per
/// kernel file.
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    /// The kernel file's name.
    pub name: &'static str,
    /// The cubin built with tracing on.
    pub traced: &'static [u8],
    /// The cubin built with tracing off.
    pub untraced: &'static [u8],
}

impl KernelModule {
    /// The cubin for tracing on or off.
    pub fn image(&self, traced: bool) -> &'static [u8] {
        if traced {
            self.traced
        } else {
            self.untraced
        }
    }
}

/// Loads a kernel module into `ctx`: the traced build when [`enabled`], the
/// untraced one otherwise.
pub fn load_module(ctx: &Arc<CudaContext>, m: &KernelModule) -> Result<Arc<CudaModule>> {
    ctx.load_module(Ptx::from_binary(m.image(enabled()).to_vec()))
        .map_err(driver("loading a kernel module"))
}

/// What to trace in a launch, and where the output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// Grid dimensions of the launch, in blocks.
    pub grid: (u32, u32, u32),
    /// Block dimensions of the launch, in threads.
    pub block: (u32, u32, u32),
    /// Per-warp event capacity: a power of two from
    /// [`MIN_CAP`](crate::layout::MIN_CAP) to [`MAX_CAP`](crate::layout::MAX_CAP).
    /// Default 4096.
    pub cap: u32,
    /// Which warps of a traced block to trace. Default all.
    pub warps: WarpSampling,
    /// Which blocks to trace. Default all.
    pub blocks: BlockSampling,
    /// The trace file of launch 0; later launches go to `NAME_launchN.json`.
    /// `None`: `KTRACE_OUT`, or else `trace.json`.
    pub output: Option<PathBuf>,
    /// Capture file saved by [`TraceSession::finish`]. `None`:
    /// `KTRACE_CAPTURE`, or else no capture.
    pub capture: Option<PathBuf>,
    /// Decoding, trace layout and summary choices.
    pub export: ExportOptions,
    /// Do not print a line per file written.
    pub quiet: bool,
}

impl TraceConfig {
    /// Defaults for a launch of `grid` blocks of `block` threads.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        TraceConfig {
            grid,
            block,
            cap: 4096,
            warps: WarpSampling::All,
            blocks: BlockSampling::All,
            output: None,
            capture: None,
            export: ExportOptions::default(),
            quiet: false,
        }
    }

    /// Defaults for a cudarc launch configuration.
    pub fn for_launch(cfg: &LaunchConfig) -> Self {
        Self::new(cfg.grid_dim, cfg.block_dim)
    }

    fn shape(&self) -> Result<LaunchShape> {
        let (g, b) = (self.grid, self.block);
        LaunchShape::new(
            [g.0, g.1, g.2],
            [b.0, b.1, b.2],
            self.cap,
            &self.warps,
            self.blocks,
        )
    }
}

/// A tracing session for one kernel (one grid and block shape), over one or
/// more launches.
///
/// With tracing off ([`enabled`] is false) it allocates nothing, [`arg`]
/// gives a null buffer and nothing is written. With tracing on it owns one
/// zeroed device buffer; after each launch [`finish_launch`] copies it back
/// and zeroes it, and [`finish`] (or dropping the session) writes a Chrome
/// trace and a summary per launch.
///
/// [`arg`]: TraceSession::arg
/// [`finish_launch`]: TraceSession::finish_launch
/// [`finish`]: TraceSession::finish
pub struct TraceSession {
    stream: Arc<CudaStream>,
    shape: LaunchShape,
    buffer: Option<CudaSlice<u8>>,
    regions: Regions,
    device: DeviceInfo,
    output: PathBuf,
    capture_path: Option<PathBuf>,
    export: ExportOptions,
    quiet: bool,
    launches: Vec<LaunchCapture>,
    pending: Cell<bool>,
    written: usize,
    finished: bool,
}

impl std::fmt::Debug for TraceSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSession")
            .field("enabled", &self.is_enabled())
            .field("shape", &self.shape)
            .field("output", &self.output)
            .field("launches", &self.launches.len())
            .finish()
    }
}

fn driver(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |error| Error::Driver { what, error }
}

fn device_info(ctx: &Arc<CudaContext>) -> DeviceInfo {
    let attr = |a| ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok());
    DeviceInfo {
        name: ctx.name().unwrap_or_default(),
        sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(0),
        clock_khz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
    }
}

impl TraceSession {
    /// A session for launches on `stream` shaped by `config`, with the
    /// region table generated by ktrace-build (`REGIONS`).
    ///
    /// Fails on a configuration that cannot be traced (checked whether
    /// tracing is on or not) and, with tracing on, when the buffer does not
    /// fit in the device's free memory.
    pub fn new(
        stream: &Arc<CudaStream>,
        config: TraceConfig,
        regions: &[(u16, &str)],
    ) -> Result<Self> {
        let shape = config.shape()?;
        let output = config
            .output
            .clone()
            .or_else(|| std::env::var_os(ENV_OUT).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("trace.json"));
        let capture_path = config
            .capture
            .clone()
            .or_else(|| std::env::var_os(ENV_CAPTURE).map(PathBuf::from));
        let on = enabled();
        let (buffer, device) = if on {
            let ctx = stream.context();
            let device = device_info(ctx);
            (Some(alloc_buffer(stream, &shape)?), device)
        } else {
            (None, DeviceInfo::default())
        };
        Ok(TraceSession {
            stream: stream.clone(),
            shape,
            buffer,
            regions: Regions::from_table(regions),
            device,
            output,
            capture_path,
            export: config.export,
            quiet: config.quiet,
            launches: Vec::new(),
            pending: Cell::new(false),
            written: 0,
            finished: false,
        })
    }

    /// Whether this session traces (it allocated a buffer).
    pub fn is_enabled(&self) -> bool {
        self.buffer.is_some()
    }

    /// The launch shape (the `launch` field is the next launch's index).
    pub fn shape(&self) -> &LaunchShape {
        &self.shape
    }

    /// The kernel argument for the next launch: the buffer, the sampling and
    /// the launch index. A null buffer when tracing is off.
    pub fn arg(&self) -> KtraceArg {
        match &self.buffer {
            Some(buf) => {
                self.pending.set(true);
                let (ptr, _sync) = buf.device_ptr(&self.stream);
                self.shape.arg(ptr)
            }
            None => KtraceArg::OFF,
        }
    }

    /// After a traced launch: waits for the stream, copies the buffer back
    /// and keeps it as the next launch, then zeroes the buffer for the launch
    /// after. Does nothing when tracing is off.
    pub fn finish_launch(&mut self) -> Result<()> {
        let Some(buf) = self.buffer.as_mut() else {
            return Ok(());
        };
        self.pending.set(false);
        self.stream
            .synchronize()
            .map_err(driver("waiting for the traced kernel to finish"))?;
        let raw = self
            .stream
            .clone_dtoh(&*buf)
            .map_err(driver("copying the trace buffer back"))?;
        self.stream
            .memset_zeros(buf)
            .map_err(driver("zeroing the trace buffer"))?;
        self.launches.push(LaunchCapture {
            shape: self.shape,
            raw,
        });
        self.shape.launch += 1;
        Ok(())
    }

    /// The launches recorded so far, by launch number.
    pub fn launches(&self) -> &[LaunchCapture] {
        &self.launches
    }

    /// The launches recorded so far, with the device facts and the regions
    /// (a copy: [`TraceSession::launches`] reads them in place).
    pub fn capture(&self) -> Capture {
        Capture {
            device: self.device.clone(),
            regions: self.regions.clone(),
            launches: self.launches.clone(),
        }
    }

    /// Saves the launches recorded so far as a capture file.
    pub fn save_capture(&self, path: impl AsRef<Path>) -> Result<()> {
        crate::capture::save_capture(&self.device, &self.regions, &self.launches, path.as_ref())
    }

    /// Writes the trace and summary of every launch not yet written (after
    /// [`finish_launch`](TraceSession::finish_launch) if a launch is pending),
    /// and the capture file if one was asked for. Prints one line per file
    /// unless quiet.
    pub fn write(&mut self) -> Result<Vec<ExportReport>> {
        if !self.is_enabled() {
            return Ok(Vec::new());
        }
        if self.pending.get() {
            self.finish_launch()?;
        }
        let mut reports = Vec::new();
        while self.written < self.launches.len() {
            let launch = &self.launches[self.written];
            let path = launch_trace_path(&self.output, launch.shape.launch);
            let r = export_launch(launch, &self.device, &self.regions, &path, &self.export)?;
            if !self.quiet {
                report(&r, launch.shape.launch);
            }
            reports.push(r);
            self.written += 1;
        }
        if let Some(path) = &self.capture_path {
            if !self.launches.is_empty() {
                self.save_capture(path)?;
                if !self.quiet {
                    eprintln!(
                        "ktrace: capture of {} launch(es) -> {}",
                        self.launches.len(),
                        path.display()
                    );
                }
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
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if self.finished || !self.is_enabled() || std::thread::panicking() {
            return;
        }
        if self.pending.get() || self.written < self.launches.len() {
            if let Err(e) = self.write() {
                eprintln!("ktrace: {e}");
            }
        }
    }
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

fn alloc_buffer(stream: &Arc<CudaStream>, shape: &LaunchShape) -> Result<CudaSlice<u8>> {
    let asked = shape
        .buffer_bytes()
        .ok_or_else(|| Error::Config("the trace buffer size overflows 64 bits".into()))?;
    let too_large = |free: u64| Error::BufferTooLarge {
        asked,
        free,
        slots: shape.slot_count(),
        slot_bytes: shape.slot_bytes(),
    };
    let ctx = stream.context();
    let (free, _total) = ctx
        .mem_get_info()
        .map_err(driver("querying free device memory"))?;
    if asked > free as u64 {
        return Err(too_large(free as u64));
    }
    let len = usize::try_from(asked).map_err(|_| too_large(free as u64))?;
    stream.alloc_zeros::<u8>(len).map_err(|e| {
        if e.0 == cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            too_large(free as u64)
        } else {
            driver("allocating the trace buffer")(e)
        }
    })
}
