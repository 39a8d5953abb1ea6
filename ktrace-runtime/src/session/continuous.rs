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

use cudarc::driver::{result as cu, CudaSlice, CudaStream, DevicePtr};

use crate::error::{Error, Result};
use crate::format::capture::{DeviceInfo, HostStep, LaunchCapture, SiteRecord};
use crate::format::clock_sync::ClockSync;
use crate::format::layout::{KtraceArg, Site as SiteState, ARG_SITE, SITE_BYTES};
use crate::format::regions::Regions;
use crate::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use crate::format::site::{gpu_span, initial_site, ready_slabs, site_bytes, slab_launch, Keep};
use crate::format::stream::CaptureWriter;
use crate::histogram::Histogram;
use crate::sizing::bytes_text;
use crate::timeline::host_clocks_ns;

use super::clock_sync::ClockProbe;
use super::device::{device_info, driver};

/// The arena's size unless asked otherwise: 1 GiB.
pub const DEFAULT_ARENA_BYTES: u64 = 1 << 30;

/// What a continuous session is asked for.
#[derive(Clone, Debug)]
pub struct ContinuousConfig {
    /// Bytes of device memory for every site and its slabs. Default
    /// [`DEFAULT_ARENA_BYTES`].
    pub arena_bytes: u64,
    /// The capture file, written as the program runs. Default
    /// `ktrace-stream.ktrace`.
    pub capture: PathBuf,
    /// How often the drain thread looks for completed launches.
    pub poll: Duration,
    /// How often the GPU's clock is measured against the host's.
    pub clock_sync_every: Duration,
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
    /// Slabs in its ring; 0: as many as fit in half the arena left (at most
    /// 1,024).
    pub slabs: u32,
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
    /// Slabs drained so far (the host's `drained`).
    drained: u32,
    last: SiteState,
    durations: Histogram,
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
    /// The capture file.
    pub capture: PathBuf,
}

/// A session that traces launches for as long as it lives (see the module
/// docs).
pub struct ContinuousSession {
    stream: Arc<CudaStream>,
    /// The arena: freed (in stream order) when the session is dropped.
    _arena: CudaSlice<u8>,
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
        let arena = stream
            .alloc_zeros::<u8>(len)
            .map_err(driver("allocating the trace arena"))?;
        let base = {
            let (base, _sync) = arena.device_ptr(stream);
            base
        };
        stream
            .synchronize()
            .map_err(driver("zeroing the trace arena"))?;
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
        };
        session.drain = Some(session.spawn_drain()?);
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
        let left = self.config.arena_bytes - self.used;
        let slab_count = match config.slabs {
            0 => ((left / 2).saturating_sub(SITE_BYTES as u64) / slab_bytes).min(1024) as u32,
            n => n,
        };
        let bytes = site_bytes(&shape, slab_count).unwrap_or(u64::MAX);
        if slab_count < 2 || bytes > left {
            return Err(Error::Config(format!(
                "site {}: {slab_count} slab(s) of {} in the {} left of the arena; a site \
                 needs 2 or more (give the session a larger arena_bytes, or this site fewer \
                 blocks, warps or entries)",
                config.kernel,
                bytes_text(slab_bytes),
                bytes_text(left)
            )));
        }
        let warps = shape.warps_traced() * shape.blocks_traced;
        let state = initial_site(warps, slab_count, config.keep);
        let addr = self.base + self.used;
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
        sites.push(SiteSlot {
            config,
            shape,
            addr,
            slab_bytes,
            drained: 0,
            last: state,
            durations: Histogram::default(),
        });
        Ok(TracedSite { index, arg })
    }

    /// Marks a step of the host's work, from now until the guard is
    /// dropped: it appears on the host track of the traces and selects
    /// launches with `--steps`.
    pub fn step(&self, name: &str, index: u64) -> StepGuard<'_> {
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

    /// Traces the next `n` launches of `site` that its keep rule leaves
    /// out (with [`Keep::Triggered`]: the next `n`).
    pub fn capture_next(&self, site: TracedSite, n: u32) -> Result<()> {
        let mut sites = self.sites.lock().expect("sites");
        let s = &mut sites[site.index as usize];
        let asked = s.last.triggers_asked.wrapping_add(n);
        // The host's word of the site; the device only reads it.
        let at = s.addr + std::mem::offset_of!(SiteState, triggers_asked) as u64;
        // SAFETY: inside the arena.
        unsafe {
            cu::memcpy_htod_async(at, &asked.to_le_bytes(), self.stream.cu_stream())
                .map_err(driver("asking for launches"))?;
        }
        s.last.triggers_asked = asked;
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
    /// and reports. Prints the report's lines unless quiet.
    pub fn finish(mut self) -> Result<ContinuousReport> {
        self.stream
            .synchronize()
            .map_err(driver("waiting for the traced kernels"))?;
        self.stop.store(true, Ordering::SeqCst);
        if let Some(d) = self.drain.take() {
            d.join()
                .map_err(|_| Error::Config("the drain thread panicked".into()))??;
        }
        let sites = self.sites.lock().expect("sites");
        let records: Vec<SiteRecord> = sites
            .iter()
            .enumerate()
            .map(|(i, s)| SiteRecord {
                site: i as u32,
                kernel: s.config.kernel.clone(),
                launches: u64::from(s.last.epoch),
                kept: u64::from(s.last.kept),
                dropped: u64::from(s.last.dropped),
            })
            .collect();
        let durations = sites.iter().map(|s| s.durations.clone()).collect();
        drop(sites);
        if let Some(tx) = self.tx.take() {
            for r in &records {
                tx.send(Message::Site(r.clone()))
                    .map_err(|_| Error::Config("the capture writer stopped".into()))?;
            }
        }
        let writer = self.writer.take().expect("writer");
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
            capture: self.config.capture.clone(),
        };
        if !self.config.quiet {
            print_report(&report);
        }
        Ok(report)
    }

    fn spawn_drain(&self) -> Result<JoinHandle<Result<()>>> {
        let ctx = self.stream.context().clone();
        let sites = self.sites.clone();
        let counters = self.counters.clone();
        let stop = self.stop.clone();
        let tx = self.tx.clone().expect("sender");
        let (poll, sync_every) = (self.config.poll, self.config.clock_sync_every);
        let quiet = self.config.quiet;
        let handle = std::thread::Builder::new()
            .name("ktrace-drain".into())
            .spawn(move || -> Result<()> {
                ctx.bind_to_thread()
                    .map_err(driver("binding the drain thread"))?;
                let stream = ctx
                    .new_stream()
                    .map_err(driver("creating the drain stream"))?;
                let probe = ClockProbe::new(&ctx).ok();
                let mut drainer = Drainer {
                    stream,
                    staging: Staging::new(STAGING_BYTES)?,
                    tx,
                    counters,
                    next_launch: 0,
                };
                let mut last_sync: Option<Instant> = None;
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
                    let moved = drainer.round(&sites)?;
                    if stopping {
                        // One more round after the device finished: the last
                        // launches' slabs.
                        drainer.round(&sites)?;
                        return Ok(());
                    }
                    // At most one round a poll: the copies and waits of a
                    // round take the driver's lock the program's own
                    // launches need.
                    let _ = moved;
                    std::thread::sleep(poll);
                }
            })
            .map_err(|e| Error::io("<drain thread>", e))?;
        Ok(handle)
    }
}

/// Pinned host memory the drain thread copies into: copies from the arena
/// run at the link's speed and need no staging by the driver.
struct Staging {
    ptr: *mut u8,
    len: usize,
}

impl Staging {
    fn new(len: usize) -> Result<Self> {
        // SAFETY: a plain allocation, freed in Drop.
        let ptr = unsafe { cu::malloc_host(len, 0) }.map_err(driver("allocating pinned memory"))?;
        Ok(Staging {
            ptr: ptr.cast(),
            len,
        })
    }

    fn bytes(&mut self, at: usize, len: usize) -> &mut [u8] {
        assert!(at + len <= self.len, "staging overrun");
        // SAFETY: inside the allocation, which `self` owns.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_host; no copy into it is in flight
        // (every copy is waited for).
        let _ = unsafe { cu::free_host(self.ptr.cast()) };
    }
}

/// Bytes of pinned memory a drain round copies at most.
const STAGING_BYTES: usize = 64 << 20;

/// What the drain thread needs of a site, taken once per round.
struct SiteView {
    addr: u64,
    shape: LaunchShape,
    slab_bytes: u64,
    kernel: String,
    drained: u32,
}

/// The drain thread's state: its stream, its pinned memory, where drained
/// launches go, and the counters.
struct Drainer {
    stream: Arc<CudaStream>,
    staging: Staging,
    tx: SyncSender<Message>,
    counters: Arc<Counters>,
    next_launch: u32,
}

impl Drainer {
    /// One pass over every site: reads every site's state with one wait,
    /// copies its ready slabs (a run of the ring at a time, as many as the
    /// pinned memory holds), hands them to the writer and tells the device
    /// they are free. Returns the launches moved.
    fn round(&mut self, sites: &Mutex<Vec<SiteSlot>>) -> Result<u64> {
        let views: Vec<SiteView> = sites
            .lock()
            .expect("sites")
            .iter()
            .map(|s| SiteView {
                addr: s.addr,
                shape: s.shape,
                slab_bytes: s.slab_bytes,
                kernel: s.config.kernel.clone(),
                drained: s.drained,
            })
            .collect();
        let states = self.site_states(&views)?;
        let mut moved = 0;
        for (i, (v, mut state)) in views.iter().zip(states).enumerate() {
            state.drained = v.drained;
            let ready = ready_slabs(&state)?;
            let most = (STAGING_BYTES as u64 / v.slab_bytes).max(1) as usize;
            let ready = &ready[..ready.len().min(most)];
            let raws = self.copy_slabs(v, ready)?;
            let n = ready.len() as u32;
            let drained = v.drained.wrapping_add(n);
            if n > 0 {
                let at = v.addr + std::mem::offset_of!(SiteState, drained) as u64;
                // SAFETY: inside the arena; the device only reads `drained`.
                unsafe {
                    cu::memcpy_htod_async(at, &drained.to_le_bytes(), self.stream.cu_stream())
                        .map_err(driver("freeing drained slabs"))?;
                }
            }
            let durations = self.hand_over(i as u32, v, raws)?;
            moved += u64::from(n);
            let mut s = sites.lock().expect("sites");
            let slot = &mut s[i];
            slot.drained = drained;
            state.drained = drained;
            state.triggers_asked = slot.last.triggers_asked;
            slot.last = state;
            for d in durations {
                slot.durations.add(d);
            }
        }
        self.stream
            .synchronize()
            .map_err(driver("freeing drained slabs"))?;
        Ok(moved)
    }

    /// Every site's state, copied with one wait.
    fn site_states(&mut self, views: &[SiteView]) -> Result<Vec<SiteState>> {
        for (i, v) in views.iter().enumerate() {
            let dst = self.staging.bytes(i * SITE_BYTES, SITE_BYTES);
            // SAFETY: the site lies inside the arena, which outlives the
            // thread; `dst` is pinned and waited for below.
            unsafe { cu::memcpy_dtoh_async(dst, v.addr, self.stream.cu_stream()) }
                .map_err(driver("reading the trace sites"))?;
        }
        self.stream
            .synchronize()
            .map_err(driver("reading the trace sites"))?;
        Ok((0..views.len())
            .map(|i| {
                let b: [u8; SITE_BYTES] = self.staging.bytes(i * SITE_BYTES, SITE_BYTES)[..]
                    .try_into()
                    .expect("a site");
                SiteState::from_bytes(&b)
            })
            .collect())
    }

    /// The bytes of slabs `ready` of a site (consecutive indices of its ring
    /// copied as one run), each in a vector of its own.
    fn copy_slabs(&mut self, v: &SiteView, ready: &[u32]) -> Result<Vec<Vec<u8>>> {
        let sb = v.slab_bytes as usize;
        let mut at = 0;
        let mut k = 0;
        while k < ready.len() {
            let mut run = 1;
            while k + run < ready.len() && ready[k + run] == ready[k] + run as u32 {
                run += 1;
            }
            let src = v.addr + SITE_BYTES as u64 + u64::from(ready[k]) * v.slab_bytes;
            let dst = self.staging.bytes(at, run * sb);
            // SAFETY: the run lies inside the site's slabs; `dst` is pinned
            // and waited for below.
            unsafe { cu::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }
                .map_err(driver("draining the trace arena"))?;
            at += run * sb;
            k += run;
        }
        self.stream
            .synchronize()
            .map_err(driver("draining the trace arena"))?;
        Ok((0..ready.len())
            .map(|j| self.staging.bytes(j * sb, sb).to_vec())
            .collect())
    }

    /// Makes drained slabs into launches and sends them to the writer;
    /// returns their durations.
    fn hand_over(&mut self, site: u32, v: &SiteView, raws: Vec<Vec<u8>>) -> Result<Vec<u64>> {
        let mut durations = Vec::with_capacity(raws.len());
        for raw in raws {
            let (launch, report) = slab_launch(raw, &v.shape, site, self.next_launch, &v.kernel)?;
            self.next_launch = self.next_launch.wrapping_add(1);
            let buffer = launch.buffer()?;
            let records: u64 = buffer.slots().map(|s| u64::from(s.stored_entries())).sum();
            if let Some(span) = gpu_span(&buffer) {
                durations.push(span.duration_ns());
            }
            let c = &self.counters;
            c.records.fetch_add(records, Ordering::Relaxed);
            c.launches.fetch_add(1, Ordering::Relaxed);
            c.stale_slots
                .fetch_add(report.stale_slots, Ordering::Relaxed);
            c.overlaps
                .fetch_add(u64::from(report.extra_grids > 0), Ordering::Relaxed);
            if self.tx.send(Message::Launch(launch)).is_err() {
                return Err(Error::Config("the capture writer stopped".into()));
            }
        }
        Ok(durations)
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

fn print_report(r: &ContinuousReport) {
    eprintln!(
        "ktrace: {} launches drained ({} entries, {:.1} M entries/s over {:.1} s) -> {}",
        r.launches,
        r.records,
        r.records as f64 / r.seconds / 1e6,
        r.seconds,
        r.capture.display()
    );
    for s in &r.sites {
        eprintln!(
            "ktrace: site {} {}: {} launches, {} kept, {} dropped",
            s.site, s.kernel, s.launches, s.kept, s.dropped
        );
        if s.dropped > 0 {
            eprintln!(
                "ktrace: warning: site {} {}: {} launches dropped: the ring was full (drain \
                 slower than the launches; give the session a larger arena, or keep fewer \
                 launches)",
                s.site, s.kernel, s.dropped
            );
        }
    }
    if r.stale_slots > 0 {
        eprintln!(
            "ktrace: warning: {} slots held no record of their launch (a sampled warp did not \
             open its context, or did not flush it)",
            r.stale_slots
        );
    }
    if r.overlaps > 0 {
        eprintln!(
            "ktrace: warning: {} launches overlapped another launch of their site: give each \
             stream its own site",
            r.overlaps
        );
    }
}
