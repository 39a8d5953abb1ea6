//! [`ContinuousSession`]: one session for any number of launches of any
//! number of kernels, from plain stream launches and CUDA graph replays
//! alike, in bounded memory. Each kernel's launch place is a site
//! ([`format::site`](crate::format::site)): a `ktrace_site` and its ring of
//! slabs in one device arena the session owns for its whole life, so a
//! graph captured once and replayed a million times needs no host call per
//! replay. A host thread drains completed slabs while the program runs
//! (its own non-blocking stream) and appends them to a streaming capture.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cudarc::driver::{result as cu, CudaStream};

use crate::error::{Error, Result};
use crate::format::capture::{DeviceInfo, HostStep, LaunchCapture, SiteRecord};
use crate::format::clock_sync::ClockSync;
use crate::format::layout::{
    site_step_bytes, KtraceArg, Site, ARG_OVERLAP, ARG_SITE, KEEP_HELD_CLOSED, KEEP_HELD_OPEN,
    SITE_STEP_OFFSET, SLAB_NEWEST,
};
use crate::format::regions::Regions;
use crate::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use crate::format::site::{initial_site, site_head_bytes, Keep, SiteRead, WhenFull};
use crate::format::stream::CaptureWriter;
use crate::histogram::Histogram;
use crate::sizing::bytes_text;
use crate::timeline::host_clocks_ns;

mod arena;
mod drain;
mod report;
mod step_words;

use arena::{site_ring, Arena};
use drain::Drainer;
use report::print_report;
pub use report::SiteFill;
use step_words::StepWriter;

use super::clock_sync::ClockProbe;
use super::device::{device_info, driver};

/// The arena's size unless asked otherwise: 1 GiB.
pub const DEFAULT_ARENA_BYTES: u64 = 1 << 30;

/// The shortest drain poll: the time a site's newest launch's stores are
/// given to land after its warps have counted themselves (their count is
/// relaxed, so it can arrive before their stores).
pub const MIN_POLL: Duration = Duration::from_micros(50);

/// What a continuous session is asked for.
#[derive(Clone, Debug)]
pub struct ContinuousConfig {
    /// Bytes of device memory for every site and its slabs. Default
    /// [`DEFAULT_ARENA_BYTES`].
    pub arena_bytes: u64,
    /// The capture file, written as the program runs. Default
    /// `ktrace-stream.ktrace`.
    pub capture: PathBuf,
    /// How often the drain thread looks for completed launches; at least
    /// [`MIN_POLL`] (a shorter one is taken as that). A site's newest
    /// launch, which no later launch has followed yet, is drained once
    /// two reads a poll apart agree: the poll is how long its warps' last
    /// stores have had to land (see `docs/continuous.md`).
    pub poll: Duration,
    /// How often the GPU's clock is measured against the host's.
    pub clock_sync_every: Duration,
    /// Whether `step` also writes each step on the device, so that a
    /// launch records the step it was enqueued in and `--steps` finds a
    /// step's launches even when the host runs ahead of the device
    /// (default true; false: steps are placed by the host's time). The
    /// stream waits for the write between its launches: on an H100, about
    /// 1 µs a step and stream (one batched copy for all its sites), 1.6% of
    /// a loop of 62 µs steps (by arithmetic, 0.1% of a step of 1 ms;
    /// `docs/continuous.md`).
    pub steps_on_device: bool,
    /// Print nothing.
    pub quiet: bool,
}

impl Default for ContinuousConfig {
    fn default() -> Self {
        ContinuousConfig {
            arena_bytes: DEFAULT_ARENA_BYTES,
            capture: PathBuf::from("ktrace-stream.ktrace"),
            poll: Duration::from_micros(500),
            clock_sync_every: Duration::from_secs(1),
            steps_on_device: true,
            quiet: false,
        }
    }
}

/// One site: a kernel, its launch shape and sampling, the launches kept,
/// and its share of the arena.
#[derive(Clone, Debug)]
pub struct SiteConfig {
    /// The kernel's name, shown with its launches.
    pub kernel: String,
    /// Grid and block of its launches.
    pub grid: (u32, u32, u32),
    /// Block dimensions.
    pub block: (u32, u32, u32),
    /// Entries per warp (a power of two).
    pub cap: u32,
    /// Warps traced in a traced block.
    pub warps: WarpSampling,
    /// Blocks traced.
    pub blocks: BlockSampling,
    /// Launches traced.
    pub keep: Keep,
    /// Slabs in its ring, a power of two; 0: as many as fit in half the
    /// arena left (at most 1,024, rounded down to a power of two).
    pub slabs: u32,
    /// What a kept launch does when every slab still waits to be drained:
    /// record nothing (the default, the capture keeps the oldest) or write
    /// over the oldest (the capture keeps the newest). Either way the
    /// launches lost are counted.
    pub when_full: WhenFull,
    /// The site's launches may overlap: a kernel launched after itself
    /// with programmatic dependent launch, whose next launch starts before
    /// this one ends. Each recording warp's flush then waits for its
    /// stores to be visible before it marks its slot finished, and the
    /// drain hands over a launch once every warp of its slab has finished,
    /// not once a later launch has opened. Every sampled warp must open
    /// its context before the kernel lets the next launch start
    /// (`griddepcontrol.launch_dependents`,
    /// `cudaTriggerProgrammaticLaunchCompletion`). Not with
    /// [`WhenFull::KeepNewest`].
    pub overlapping: bool,
    /// The stream the site's launches (or the graph replays holding them)
    /// are enqueued on, when it is not the session's. A
    /// [`Keep::Steps`] window is opened and closed in this stream's order,
    /// so it holds exactly the launches enqueued on it during the steps;
    /// `None`: in the session stream's order.
    pub stream: Option<Arc<CudaStream>>,
}

impl SiteConfig {
    /// Every launch of `kernel`, every warp, 256 entries per warp.
    pub fn new(kernel: &str, grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        SiteConfig {
            kernel: kernel.to_string(),
            grid,
            block,
            cap: 256,
            warps: WarpSampling::All,
            blocks: BlockSampling::All,
            keep: Keep::All,
            slabs: 0,
            when_full: WhenFull::DropNew,
            overlapping: false,
            stream: None,
        }
    }
}

/// A site of a session: pass [`TracedSite::arg`] to every launch of its
/// kernel from its place (captured into a graph or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracedSite {
    /// The site's index in the session.
    pub index: u32,
    arg: KtraceArg,
}

impl TracedSite {
    /// The kernel argument: the same for every launch of the site.
    pub fn arg(&self) -> KtraceArg {
        self.arg
    }
}

struct SiteSlot {
    config: SiteConfig,
    shape: LaunchShape,
    /// Device address of its `ktrace_site`.
    addr: u64,
    slab_bytes: u64,
    /// Bytes of its header and launch counters: where its slabs start.
    head_bytes: u64,
    /// Kept launches drained so far (the host's `drained`).
    drained: u32,
    /// Launches asked for with `capture_next` (the host's `triggers_asked`).
    asked: u32,
    /// A held site's window as the host last set it (its `triggered`).
    held: u32,
    /// The site as the drain read it last.
    last: SiteRead,
    /// Launches drained and written.
    written: u64,
    /// Kept launches that found the ring full.
    dropped: u64,
    durations: Histogram,
    /// How full its drained launches' rings were.
    fill: SiteFill,
}

impl SiteSlot {
    /// Opens (`open`) or closes a held site's window, if it is not so
    /// already: writes its `triggered` in `stream`'s order.
    fn hold(&mut self, open: bool, stream: &CudaStream) -> Result<()> {
        let want = if open {
            KEEP_HELD_OPEN
        } else {
            KEEP_HELD_CLOSED
        };
        if self.held == want {
            return Ok(());
        }
        let at = self.addr + std::mem::offset_of!(Site, triggered) as u64;
        // SAFETY: inside the arena; the device only reads `triggered`.
        unsafe {
            cu::memcpy_htod_async(at, &want.to_le_bytes(), stream.cu_stream())
                .map_err(driver("opening or closing a held window"))?;
        }
        self.held = want;
        Ok(())
    }
}

/// Opens and closes the windows of the sites kept with [`Keep::Seconds`]
/// at `elapsed` into the session, on `stream`.
fn hold_seconds(
    sites: &Mutex<Vec<SiteSlot>>,
    elapsed: Duration,
    stream: &CudaStream,
) -> Result<()> {
    for s in sites.lock().expect("sites").iter_mut() {
        if let Keep::Seconds { from, until } = s.config.keep {
            s.hold((from..until).contains(&elapsed), stream)?;
        }
    }
    Ok(())
}

/// Counters the drain thread keeps, readable while the program runs.
#[derive(Debug, Default)]
struct Counters {
    launches: AtomicU64,
    records: AtomicU64,
    stale_slots: AtomicU64,
    overlaps: AtomicU64,
}

enum Message {
    Launch(LaunchCapture),
    Step(HostStep),
    Sync(ClockSync),
    Site(SiteRecord),
}

/// What a session did, returned by [`ContinuousSession::finish`].
#[derive(Clone, Debug)]
pub struct ContinuousReport {
    /// Launches drained and written.
    pub launches: u64,
    /// Entries (events, anchors, values) drained.
    pub records: u64,
    /// Seconds from the session's start to its end.
    pub seconds: f64,
    /// Each site: its kernel and what became of its launches.
    pub sites: Vec<SiteRecord>,
    /// Each site's launch durations on the GPU (earliest open to latest
    /// flush of its traced warps), in ns.
    pub durations: Vec<Histogram>,
    /// The device arena, in bytes.
    pub arena_bytes: u64,
    /// Slots cleared because they held another launch's record.
    pub stale_slots: u64,
    /// Slabs holding more than one `%gridid`: overlapping launches of a site.
    pub overlaps: u64,
    /// Each site: how full its drained launches' rings were.
    pub fills: Vec<SiteFill>,
    /// The capture file.
    pub capture: PathBuf,
}

/// A session that traces launches for as long as it lives (see the module
/// docs).
pub struct ContinuousSession {
    stream: Arc<CudaStream>,
    /// The arena: freed when the session is dropped.
    _arena: Arena,
    base: u64,
    used: u64,
    sites: Arc<Mutex<Vec<SiteSlot>>>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    tx: Option<SyncSender<Message>>,
    drain: Option<JoinHandle<Result<()>>>,
    writer: Option<JoinHandle<Result<()>>>,
    config: ContinuousConfig,
    started: Instant,
    /// Writes `step`'s steps on the device.
    steps: StepWriter,
    /// Whether a site is kept with [`Keep::Steps`]: `step` then opens and
    /// closes windows.
    steps_held: bool,
}

impl ContinuousSession {
    /// A session on `stream`'s device: allocates and zeroes the arena,
    /// creates the capture file and starts the drain thread.
    pub fn new(
        stream: &Arc<CudaStream>,
        config: ContinuousConfig,
        regions: &[(u16, &str)],
    ) -> Result<Self> {
        let len = usize::try_from(config.arena_bytes)
            .map_err(|_| Error::Config("arena too large".into()))?;
        let arena = Arena::new(stream, len)?;
        let base = arena.ptr;
        let device = device_info(stream.context());
        let regions = Regions::from_table(regions);
        let (tx, rx) = sync_channel::<Message>(256);
        let writer = spawn_writer(&config, &device, &regions, rx)?;
        if !config.quiet {
            eprintln!(
                "ktrace: continuous session, arena {} on {}, capture -> {}",
                bytes_text(config.arena_bytes),
                device.label(),
                config.capture.display()
            );
        }
        let quiet = config.quiet;
        let mut session = ContinuousSession {
            stream: stream.clone(),
            _arena: arena,
            base,
            used: 0,
            sites: Arc::new(Mutex::new(Vec::new())),
            counters: Arc::new(Counters::default()),
            stop: Arc::new(AtomicBool::new(false)),
            tx: Some(tx),
            drain: None,
            writer: Some(writer),
            config,
            started: Instant::now(),
            steps: StepWriter::new(quiet),
            steps_held: false,
        };
        let (drain, started) = session.spawn_drain()?;
        session.drain = Some(drain);
        // The session's seconds (`Keep::Seconds`, the report's) count from
        // here, when it is ready, as the program's first launch does.
        session.started = started;
        Ok(session)
    }

    /// Adds a site: its `ktrace_site` and slabs from the arena, written
    /// before this returns (in `stream`'s order, so before any launch
    /// enqueued after it).
    pub fn site(&mut self, config: SiteConfig) -> Result<TracedSite> {
        let (g, b) = (config.grid, config.block);
        let shape = LaunchShape::new(
            [g.0, g.1, g.2],
            [b.0, b.1, b.2],
            config.cap,
            &config.warps,
            config.blocks,
        )?;
        let slab_bytes = shape.buffer_bytes().unwrap_or(u64::MAX);
        let warps = shape.warps_traced() * shape.blocks_traced;
        let head_bytes = site_head_bytes(warps);
        let left = self.config.arena_bytes - self.used;
        let (slab_count, bytes) = site_ring(&config, &shape, left)?;
        let mut state = initial_site(warps, slab_count, config.keep);
        if config.when_full == WhenFull::KeepNewest {
            state.slab_count |= SLAB_NEWEST;
        }
        // The slabs' steps lie below the site.
        let addr = self.base + self.used + site_step_bytes(slab_count);
        // SAFETY: the site lies inside the arena, which the session owns.
        unsafe {
            cu::memcpy_htod_async(addr, &state.to_bytes(), self.stream.cu_stream())
                .map_err(driver("writing a trace site"))?;
        }
        self.stream
            .synchronize()
            .map_err(driver("writing a trace site"))?;
        self.used += bytes.div_ceil(256) * 256;
        let mut sites = self.sites.lock().expect("sites");
        let index = sites.len() as u32;
        if !self.config.quiet {
            eprintln!(
                "ktrace: site {index} {}: {slab_count} slabs of {} ({} of the arena)",
                config.kernel,
                bytes_text(slab_bytes),
                bytes_text(bytes)
            );
        }
        let mut arg = shape.arg(addr);
        arg.launch = ARG_SITE | index;
        if config.overlapping {
            arg.launch |= ARG_OVERLAP;
        }
        self.steps_held |= matches!(config.keep, Keep::Steps { .. });
        sites.push(SiteSlot {
            config,
            shape,
            addr,
            slab_bytes,
            head_bytes,
            drained: 0,
            asked: 0,
            held: state.triggered,
            last: SiteRead {
                site: state,
                launches: 0,
            },
            written: 0,
            dropped: 0,
            durations: Histogram::default(),
            fill: SiteFill {
                cap: shape.cap(),
                ..SiteFill::default()
            },
        });
        Ok(TracedSite { index, arg })
    }

    /// Marks a step of the host's work, from now until the guard is
    /// dropped: it appears on the host track of the traces and selects
    /// launches with `--steps`.
    ///
    /// With [`ContinuousConfig::steps_on_device`] (the default) the step's
    /// index is also written on the device, in the order of each site's
    /// stream (one batched copy a stream): a kept launch records the
    /// last step begun before it was enqueued, so `--steps` finds a step's
    /// launches even when the host runs ahead of the device and its steps
    /// end before their launches run.
    ///
    /// For a site kept with [`Keep::Steps`], the call whose `index` enters
    /// or leaves the site's steps opens or closes its window, in the order
    /// of the site's stream ([`SiteConfig::stream`], or the session's):
    /// before the launches enqueued on it after the call.
    ///
    /// While a site's stream is being captured into a CUDA graph, the call
    /// writes nothing on it (a write captured into the graph would repeat
    /// this step's index in every replay) and says so once: launches of
    /// that stream keep the step written before the capture began, and a
    /// held window does not move.
    pub fn step(&self, name: &str, index: u64) -> StepGuard<'_> {
        let on_device = self.config.steps_on_device;
        if self.steps_held || on_device {
            let mut sites = self.sites.lock().expect("sites");
            // Each stream, whether it is being captured into a graph, and
            // its sites' step words, written with one call.
            let mut streams: Vec<(Arc<CudaStream>, bool, Vec<u64>)> = Vec::new();
            for s in sites.iter_mut() {
                let stream = s.config.stream.as_ref().unwrap_or(&self.stream);
                let k = match streams.iter().position(|(w, _, _)| Arc::ptr_eq(w, stream)) {
                    Some(k) => k,
                    None => {
                        let captured = self.steps.captured(stream, index);
                        streams.push((stream.clone(), captured, Vec::new()));
                        streams.len() - 1
                    }
                };
                let (stream, captured, at) = &mut streams[k];
                if *captured {
                    continue;
                }
                if let Keep::Steps { from, until } = s.config.keep {
                    if let Err(e) = s.hold((from..until).contains(&index), stream) {
                        if !self.config.quiet {
                            eprintln!("ktrace: warning: step {index}: {e}");
                        }
                    }
                }
                if on_device {
                    at.push(s.addr + SITE_STEP_OFFSET);
                }
            }
            for (stream, captured, at) in &streams {
                if !captured {
                    self.steps.write(stream, at, index);
                }
            }
        }
        StepGuard {
            _session: std::marker::PhantomData,
            tx: self.tx.clone(),
            step: HostStep {
                name: name.to_string(),
                index,
                begin_ns: host_clocks_ns().0,
                end_ns: 0,
            },
        }
    }

    /// Traces `n` more launches of `site`, a site kept with
    /// [`Keep::Triggered`]: those after the first launch that starts once
    /// the device has seen the request (the launch that sees it grants
    /// them, from the next one on).
    pub fn capture_next(&self, site: TracedSite, n: u32) -> Result<()> {
        let mut sites = self.sites.lock().expect("sites");
        let s = &mut sites[site.index as usize];
        if s.config.keep != Keep::Triggered {
            return Err(Error::Config(format!(
                "site {} {}: capture_next needs a site kept with Keep::Triggered (it keeps {:?})",
                site.index, s.config.kernel, s.config.keep
            )));
        }
        let asked = s.asked.wrapping_add(n);
        // The host's word of the site; the device only reads it.
        let at = s.addr + std::mem::offset_of!(Site, triggers_asked) as u64;
        // SAFETY: inside the arena.
        unsafe {
            cu::memcpy_htod_async(at, &asked.to_le_bytes(), self.stream.cu_stream())
                .map_err(driver("asking for launches"))?;
        }
        s.asked = asked;
        Ok(())
    }

    /// Launches drained so far, and entries.
    pub fn drained(&self) -> (u64, u64) {
        (
            self.counters.launches.load(Ordering::Relaxed),
            self.counters.records.load(Ordering::Relaxed),
        )
    }

    /// Waits for the device, drains what is left, closes the capture file
    /// and reports. Prints the report's lines unless quiet. A session
    /// dropped without `finish` does the same, quietly, so the capture is
    /// whole even after an early return.
    pub fn finish(mut self) -> Result<ContinuousReport> {
        let report = self.close()?;
        if !self.config.quiet {
            print_report(&report);
        }
        Ok(report)
    }

    /// What [`finish`](Self::finish) and `Drop` do: stops the drain after
    /// a last pass, closes the capture and reports. Once only: a second
    /// call finds no writer and fails.
    fn close(&mut self) -> Result<ContinuousReport> {
        // Every stream of the context: the traced launches may be on any.
        let synced = self
            .stream
            .context()
            .synchronize()
            .map_err(driver("waiting for the traced kernels"));
        // The drain stops whatever the device said: a thread left running
        // would read an arena about to be freed.
        self.stop.store(true, Ordering::SeqCst);
        let drained = match self.drain.take() {
            Some(d) => d
                .join()
                .map_err(|_| Error::Config("the drain thread panicked".into()))
                .and_then(|r| r),
            None => Ok(()),
        };
        synced?;
        drained?;
        let sites = self.sites.lock().expect("sites");
        let records: Vec<SiteRecord> = sites
            .iter()
            .enumerate()
            .map(|(i, s)| SiteRecord {
                site: i as u32,
                kernel: s.config.kernel.clone(),
                launches: u64::from(s.last.launches),
                kept: s.written,
                dropped: s.dropped,
                when_full: s.config.when_full,
            })
            .collect();
        let durations = sites.iter().map(|s| s.durations.clone()).collect();
        let fills = sites.iter().map(|s| s.fill).collect();
        drop(sites);
        if let Some(tx) = self.tx.take() {
            for r in &records {
                tx.send(Message::Site(r.clone()))
                    .map_err(|_| Error::Config("the capture writer stopped".into()))?;
            }
        }
        let writer = self
            .writer
            .take()
            .ok_or_else(|| Error::Config("the session is closed already".into()))?;
        writer
            .join()
            .map_err(|_| Error::Config("the capture writer panicked".into()))??;
        let c = &self.counters;
        let report = ContinuousReport {
            launches: c.launches.load(Ordering::Relaxed),
            records: c.records.load(Ordering::Relaxed),
            seconds: self.started.elapsed().as_secs_f64(),
            sites: records,
            durations,
            arena_bytes: self.config.arena_bytes,
            stale_slots: c.stale_slots.load(Ordering::Relaxed),
            overlaps: c.overlaps.load(Ordering::Relaxed),
            fills,
            capture: self.config.capture.clone(),
        };
        Ok(report)
    }

    /// Starts the drain thread and waits until it is ready: its stream,
    /// its pinned memory and the clock handshake's kernel (compiled from
    /// PTX by the driver) exist and the first handshake is taken. That
    /// setup holds the driver for tens of milliseconds; done here, it
    /// delays the session's start, not the program's first launches.
    /// Returns the thread and the instant it was ready: the session's
    /// start.
    fn spawn_drain(&self) -> Result<(JoinHandle<Result<()>>, Instant)> {
        let ctx = self.stream.context().clone();
        let sites = self.sites.clone();
        let counters = self.counters.clone();
        let stop = self.stop.clone();
        let tx = self.tx.clone().expect("sender");
        let (poll, sync_every) = (self.config.poll.max(MIN_POLL), self.config.clock_sync_every);
        let quiet = self.config.quiet;
        let (ready_tx, ready_rx) = sync_channel::<Result<Instant>>(1);
        let handle = std::thread::Builder::new()
            .name("ktrace-drain".into())
            .spawn(move || -> Result<()> {
                let setup = || -> Result<(Drainer, Option<ClockProbe>)> {
                    ctx.bind_to_thread()
                        .map_err(driver("binding the drain thread"))?;
                    let stream = ctx
                        .new_stream()
                        .map_err(driver("creating the drain stream"))?;
                    let probe = ClockProbe::new(&ctx).ok();
                    Ok((Drainer::new(stream, tx, counters)?, probe))
                };
                let (mut drainer, probe) = match setup() {
                    Ok(d) => d,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(());
                    }
                };
                let mut last_sync: Option<Instant> = None;
                let mut ready = Some(ready_tx);
                let mut started = Instant::now();
                loop {
                    let stopping = stop.load(Ordering::SeqCst);
                    if last_sync.map_or(true, |t| t.elapsed() >= sync_every) || stopping {
                        if let Some(p) = &probe {
                            match p.sync(&drainer.stream) {
                                Ok(s) => {
                                    let _ = drainer.tx.send(Message::Sync(s));
                                }
                                Err(e) if !quiet => eprintln!("ktrace: warning: {e}"),
                                Err(_) => {}
                            }
                        }
                        last_sync = Some(Instant::now());
                    }
                    if let Some(r) = ready.take() {
                        started = Instant::now();
                        let _ = r.send(Ok(started));
                    }
                    hold_seconds(&sites, started.elapsed(), &drainer.stream)?;
                    drainer.round(&sites)?;
                    if stopping {
                        // The device has finished: rounds until every
                        // complete launch is drained, at least two (the
                        // second reads the sites as the first did, so the
                        // newest launches are complete).
                        while drainer.round(&sites)? {}
                        drainer.round(&sites)?;
                        while drainer.round(&sites)? {}
                        return Ok(());
                    }
                    // At most one round a poll: the copies and waits of a
                    // round take the driver's lock the program's own
                    // launches need.
                    std::thread::sleep(poll);
                }
            })
            .map_err(|e| Error::io("<drain thread>", e))?;
        wait_ready(handle, &ready_rx)
    }
}

/// The drain thread once it has said whether it is ready: its handle and
/// when it was ready, or why it could not start.
fn wait_ready(
    handle: JoinHandle<Result<()>>,
    ready: &Receiver<Result<Instant>>,
) -> Result<(JoinHandle<Result<()>>, Instant)> {
    match ready.recv() {
        Ok(Ok(started)) => Ok((handle, started)),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(e)
        }
        // The thread ended without a word: it panicked.
        Err(_) => match handle.join() {
            Ok(r) => r.and(Err(Error::Config(
                "the drain thread ended at its start".into(),
            ))),
            Err(_) => Err(Error::Config(
                "the drain thread panicked at its start".into(),
            )),
        },
    }
}

fn spawn_writer(
    config: &ContinuousConfig,
    device: &DeviceInfo,
    regions: &Regions,
    rx: Receiver<Message>,
) -> Result<JoinHandle<Result<()>>> {
    let mut w = CaptureWriter::create(&config.capture, device, regions)?;
    std::thread::Builder::new()
        .name("ktrace-writer".into())
        .spawn(move || -> Result<()> {
            let mut since_flush = Instant::now();
            for m in rx {
                match m {
                    Message::Launch(l) => w.launch(&l)?,
                    Message::Step(s) => w.step(&s)?,
                    Message::Sync(s) => w.clock_sync(&s)?,
                    Message::Site(s) => w.site(&s)?,
                }
                if since_flush.elapsed() > Duration::from_millis(200) {
                    w.flush()?;
                    since_flush = Instant::now();
                }
            }
            w.finish()?;
            Ok(())
        })
        .map_err(|e| Error::io("<writer thread>", e))
}

impl Drop for ContinuousSession {
    fn drop(&mut self) {
        if self.writer.is_some() {
            if let Err(e) = self.close() {
                if !self.config.quiet {
                    eprintln!("ktrace: closing the capture of a dropped session: {e}");
                }
            }
        }
    }
}

/// A host step, from [`ContinuousSession::step`] until dropped. It
/// borrows the session, so the session cannot finish while a step is open.
pub struct StepGuard<'a> {
    _session: std::marker::PhantomData<&'a ContinuousSession>,
    tx: Option<SyncSender<Message>>,
    step: HostStep,
}

impl Drop for StepGuard<'_> {
    fn drop(&mut self) {
        self.step.end_ns = host_clocks_ns().0;
        if let Some(tx) = &self.tx {
            let _ = tx.send(Message::Step(std::mem::take(&mut self.step)));
        }
    }
}

#[cfg(test)]
mod tests;
