//! A serving loop: one decode step is a CUDA graph of three kernels at
//! decode sizes (a matrix-vector product over a 128 MiB weight matrix, a
//! row reduction, an elementwise scale: `examples/kernels/serving.cu`),
//! replayed for `--seconds` with one host step per replay, traced by one
//! [`ContinuousSession`] with no host call per replay.
//!
//! `cargo run --release -p ktrace-examples --example serving_loop -- MODE [--seconds S]
//! [--arena-mib N] [--poll-us N] [--cap N] [--plain-l2] [--no-steps]
//! [--host-steps]` (`--arena-mib` and `--poll-us`: the continuous
//! session's arena and drain poll instead of the defaults; `--cap`: the
//! matrix-vector product's cap, 32 unless given; `--plain-l2`: the kernels
//! built with `KTRACE_SITE_EVICT_LAST 0`; `--no-steps`: no host steps;
//! `--host-steps`: host steps not written on the device, placed by the
//! host's time: `ContinuousConfig::steps_on_device` off), MODE:
//! - `every`: every replay traced, warp 0 of every block (a loop's sampling);
//! - `sampled`: 1 replay in 100, every warp, by the sites' keep rule
//!   (`Keep::Every(100)`): every replay runs the traced build;
//! - `sampled-pair`: the same launches kept, chosen on the host: the step
//!   captured twice, with the sites' arguments and with the null ones
//!   (through `FunctionPair::for_arg`: the traced and the untraced build),
//!   and step `i` replays the first when `i % 100 == 0`, the second
//!   otherwise;
//! - `plain`: the same kernels launched without a graph, traced as `every`;
//! - `buffer`: the traced build, each kernel given one single-launch buffer
//!   that every replay overwrites (the markers' cost without the sites);
//! - `idle`: as `every`, but keeping no launch (`Keep::Triggered`, never
//!   triggered): the sites' per-launch work alone;
//! - `off`: the traced build with tracing off (null arguments);
//! - `off-pair`: null arguments, the kernels launched through
//!   `load_module_pair`'s `FunctionPair::for_arg`, which picks their
//!   untraced build (what a program with ktrace compiled in runs when it
//!   traces nothing);
//! - `untraced`: the untraced build;
//! - `check`: the launch identity check: graph replays and plain launches
//!   on two streams of a kernel that records the launch count it reads;
//!   every record must decode to its own launch;
//! - `triggers`: a site kept with `Keep::Triggered`, 400 launches on the
//!   session's stream, `capture_next` asked before launches 50, 150, 250
//!   and 251 (5, 5, 5 and 3 more): the launch each request reaches grants
//!   the launches after it, and a request while a window runs extends it,
//!   so exactly launches 51-55, 151-155 and 251-258 must be kept;
//! - `windows`: held windows. A site kept with `Keep::Steps { from: 100,
//!   until: 120 }`, 400 steps enqueued without waiting (the host runs far
//!   ahead of the device): exactly the launches of steps 100-119 must be
//!   kept; likewise for a second such site whose launches, ten times
//!   shorter, go on another stream (`SiteConfig::stream`), which runs
//!   ahead of the session's (`--steps-on-session-stream`: that site
//!   without its stream, shown and not checked). Then a site kept with `Keep::Seconds` from 1.0 s to 1.3 s of the
//!   session, one step every 2 ms until 1.6 s: every step that ran well
//!   inside the window kept, none well outside it, the kept ones in a row.
//!   Then one step while the session's stream is captured into a CUDA
//!   graph: the step must write nothing there, and the capture and its
//!   replay must succeed. Every kept launch must carry the step it was
//!   enqueued in, as the device recorded it, and `--steps 100..105` must
//!   select exactly the steps sites' launches of those steps.
//! - `newest`: a site that keeps the newest launches
//!   (`WhenFull::KeepNewest`) with a ring of 8 slabs and a drain that polls
//!   every 5 ms, under 3,000 launches of the launch-identity kernel
//!   enqueued back to back: the ring overflows, every launch is drained or
//!   counted as overwritten, every drained launch is whole (each of its
//!   warps recorded it, and read its count), and the newest 7 are there.
//!
//! Prints replays, their median time, launches traced, entries drained per
//! second, dropped launches, the host's peak memory, the arena and each
//! kernel's duration across replays.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use ktrace_examples::{fail, gpu, is_whole, kernels, REGIONS};
use ktrace_runtime::export::launches::{capture_launches, LaunchSelection, StepRange};
use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::format::layout::KtraceArg;
use ktrace_runtime::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use ktrace_runtime::format::site::{Keep, WhenFull};
use ktrace_runtime::histogram::Histogram;
use ktrace_runtime::session::continuous::{
    ContinuousConfig, ContinuousReport, ContinuousSession, SiteConfig,
};
use ktrace_runtime::{FunctionPair, KernelModule};

const M: usize = 4;
const K: usize = 4096;
const N: usize = 8192;

type Error = Box<dyn std::error::Error>;

struct Step {
    matvec: FunctionPair,
    rowsum: FunctionPair,
    scale: FunctionPair,
    pick: Pick,
    x: CudaSlice<f32>,
    w: CudaSlice<f32>,
    y: CudaSlice<f32>,
    s: CudaSlice<f32>,
    b: CudaSlice<f32>,
}

fn cfg(grid: u32) -> LaunchConfig {
    cfg_threads(grid, 256)
}
const MATVEC_GRID: u32 = (N / 128) as u32;
/// Blocks that split K for each column tile of the matrix-vector product.
const KSPLIT: u32 = 4;
const SCALE_GRID: u32 = (M * N / 256) as u32;

/// Which build the step's kernels run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// The untraced build, whatever the arguments.
    Untraced,
    /// The traced build, whatever the arguments (`off`: given the null one).
    Traced,
    /// The build each kernel's argument asks for (`FunctionPair::for_arg`).
    ForArg,
}

impl Step {
    /// The step's kernels, both builds (each launch runs the one `pick`
    /// says for its argument), and its buffers.
    fn new(stream: &Arc<CudaStream>, module: &KernelModule, pick: Pick) -> Result<Self, Error> {
        let m = ktrace_runtime::load_module_pair(stream.context(), module)?;
        Ok(Step {
            matvec: m.load_function("serve_matvec")?,
            rowsum: m.load_function("serve_rowsum")?,
            scale: m.load_function("serve_scale")?,
            pick,
            x: stream.clone_htod(&vec![0.01f32; M * K])?,
            w: stream.clone_htod(&vec![0.001f32; K * N])?,
            y: stream.alloc_zeros(M * N)?,
            s: stream.alloc_zeros(M)?,
            b: stream.clone_htod(&vec![1.0f32; N])?,
        })
    }

    /// The function of `pair` that a launch with `arg` runs.
    fn function<'a>(&self, pair: &'a FunctionPair, arg: &KtraceArg) -> &'a CudaFunction {
        match self.pick {
            Pick::Untraced => pair.untraced(),
            Pick::Traced => pair.traced(),
            Pick::ForArg => pair.for_arg(arg),
        }
    }

    /// The three launches of one step, with their trace arguments.
    fn enqueue(&mut self, stream: &Arc<CudaStream>, args: &[KtraceArg; 3]) -> Result<(), Error> {
        let (k, n) = (K as i32, N as i32);
        stream.memset_zeros(&mut self.y)?;
        let mut l = stream.launch_builder(self.function(&self.matvec, &args[0]));
        l.arg(&self.x)
            .arg(&self.w)
            .arg(&mut self.y)
            .arg(&k)
            .arg(&n)
            .arg(&args[0]);
        let matvec = LaunchConfig {
            grid_dim: (MATVEC_GRID, KSPLIT, 1),
            ..cfg(1)
        };
        unsafe { l.launch(matvec) }?;
        let mut l = stream.launch_builder(self.function(&self.rowsum, &args[1]));
        l.arg(&self.y).arg(&mut self.s).arg(&n).arg(&args[1]);
        unsafe { l.launch(cfg(M as u32)) }?;
        let mut l = stream.launch_builder(self.function(&self.scale, &args[2]));
        l.arg(&mut self.y)
            .arg(&self.s)
            .arg(&self.b)
            .arg(&n)
            .arg(&args[2]);
        unsafe { l.launch(cfg(SCALE_GRID)) }?;
        Ok(())
    }
}

/// The three kernels' sites. `loop_sampling`: what a user would pick to
/// trace every replay of a loop (warp 0 of every 16th block, every block of
/// the 4-block reduction); otherwise every warp.
fn sites(
    session: &mut ContinuousSession,
    loop_sampling: bool,
    keep: Keep,
    matvec_cap: u32,
) -> Result<[KtraceArg; 3], Error> {
    let mut site =
        |name: &str, grid: (u32, u32), cap: u32, every: u32| -> Result<KtraceArg, Error> {
            let mut c = SiteConfig::new(name, (grid.0, grid.1, 1), (256, 1, 1));
            c.cap = cap;
            if loop_sampling {
                c.warps = WarpSampling::List(vec![0]);
                c.blocks = if every > 1 {
                    BlockSampling::Stride(every)
                } else {
                    BlockSampling::All
                };
            }
            c.keep = keep;
            Ok(session.site(c)?.arg())
        };
    Ok([
        site("serve_matvec", (MATVEC_GRID, KSPLIT), matvec_cap, 16)?,
        site("serve_rowsum", (M as u32, 1), 32, 1)?,
        site("serve_scale", (SCALE_GRID, 1), 32, 16)?,
    ])
}

/// Peak resident memory of this process, from /proc (KiB).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn pct(h: &Histogram, q: f64) -> f64 {
    h.quantile(q) as f64 / 1e3
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_else(|| "every".into());
    let seconds: f64 = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(60.0);
    // The continuous session's arena (MiB) and drain poll (µs), to measure
    // what they cost: `--arena-mib N`, `--poll-us N` (defaults otherwise).
    let number = |flag: &str| -> Option<u64> {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1)?.parse().ok()
    };
    let arena_mib = number("--arena-mib");
    let poll_us = number("--poll-us");
    let matvec_cap = number("--cap").map_or(32, |c| c as u32);
    // `--no-steps`: no host steps, to measure what marking them costs.
    let host_steps = !args.iter().any(|a| a == "--no-steps");
    let (ctx, _default) = gpu();
    // A stream of its own: the legacy default stream cannot be captured.
    let stream = ctx.new_stream()?;
    // Graph capture and cudarc's own cross-stream events do not mix (a
    // captured launch may not wait on an event recorded outside the
    // capture); this program orders its streams itself.
    unsafe { ctx.disable_event_tracking() };
    if mode == "check" {
        return check(&stream);
    }
    if mode == "ceiling" {
        return ceiling(&stream, seconds);
    }
    if mode == "windows" {
        // `--steps-on-session-stream`: the other stream's site without
        // `SiteConfig::stream`, to show what that gives.
        return windows(
            &stream,
            !args.iter().any(|a| a == "--steps-on-session-stream"),
        );
    }
    if mode == "triggers" {
        return triggers(&stream);
    }
    if mode == "newest" {
        return newest(&stream);
    }
    // `--plain-l2`: the kernels built without KTRACE_SITE_EVICT_LAST.
    let module = if args.iter().any(|a| a == "--plain-l2") {
        &kernels::SERVING_PLAIN_L2
    } else {
        &kernels::SERVING
    };
    let capture =
        std::env::var("KTRACE_CAPTURE").unwrap_or_else(|_| format!("serving_{mode}.ktrace"));
    let mut session = None;
    let mut buffers = Vec::new();
    let args3: [KtraceArg; 3] = match mode.as_str() {
        "every" | "plain" | "sampled" | "sampled-pair" | "idle" => {
            let mut config = ContinuousConfig {
                capture: capture.clone().into(),
                ..ContinuousConfig::default()
            };
            if let Some(mib) = arena_mib {
                config.arena_bytes = mib << 20;
            }
            if let Some(us) = poll_us {
                config.poll = Duration::from_micros(us);
            }
            config.steps_on_device = !args.iter().any(|a| a == "--host-steps");
            let mut s = ContinuousSession::new(&stream, config, REGIONS)?;
            let a = if mode == "sampled" {
                sites(&mut s, false, Keep::Every(100), matvec_cap)?
            } else if mode == "sampled-pair" {
                sites(&mut s, false, Keep::All, matvec_cap)?
            } else if mode == "idle" {
                sites(&mut s, true, Keep::Triggered, matvec_cap)?
            } else {
                sites(&mut s, true, Keep::All, matvec_cap)?
            };
            session = Some(s);
            a
        }
        "buffer" => {
            let mut a = [KtraceArg::OFF; 3];
            for (i, (grid, cap, every)) in [
                ((MATVEC_GRID, KSPLIT), matvec_cap, 16),
                ((M as u32, 1), 32, 1),
                ((SCALE_GRID, 1), 32, 16),
            ]
            .into_iter()
            .enumerate()
            {
                let blocks = if every > 1 {
                    BlockSampling::Stride(every)
                } else {
                    BlockSampling::All
                };
                let shape = LaunchShape::new(
                    [grid.0, grid.1, 1],
                    [256, 1, 1],
                    cap,
                    &WarpSampling::List(vec![0]),
                    blocks,
                )?;
                let buf = stream.alloc_zeros::<u8>(shape.buffer_bytes().unwrap_or(0) as usize)?;
                let (ptr, _) = buf.device_ptr(&stream);
                a[i] = shape.arg(ptr);
                buffers.push(buf);
            }
            a
        }
        "off" | "off-pair" | "untraced" => [KtraceArg::OFF; 3],
        other => fail(&format!(
            "unknown mode {other}: every, sampled, sampled-pair, plain, idle, buffer, off, off-pair, untraced, check, triggers or ceiling"
        )),
    };
    let pick = match mode.as_str() {
        "untraced" => Pick::Untraced,
        "off" | "buffer" => Pick::Traced,
        _ => Pick::ForArg,
    };
    let mut step = Step::new(&stream, module, pick)?;
    let mut capture_step = |args: &[KtraceArg; 3]| -> Result<_, Error> {
        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
        let enqueued = step.enqueue(&stream, args);
        let graph = stream.end_capture(CUgraphInstantiate_flags(0));
        enqueued?;
        Ok(graph?)
    };
    let graph = if mode == "plain" {
        None
    } else {
        capture_step(&args3)?
    };
    // `sampled-pair`: the step captured again with the null arguments (the
    // untraced build), replayed but 1 time in 100.
    let graph_off = if mode == "sampled-pair" {
        capture_step(&[KtraceArg::OFF; 3])?
    } else {
        None
    };
    // Warm up, then replay in batches of 100 steps, timing each batch.
    let run = |step: &mut Step,
               n: usize,
               session: &Option<ContinuousSession>,
               first: usize|
     -> Result<(), Error> {
        for i in 0..n {
            let _step = session
                .as_ref()
                .filter(|_| host_steps)
                .map(|s| s.step("decode", (first + i) as u64));
            match (&graph, &graph_off) {
                (Some(_), Some(off)) if !(first + i).is_multiple_of(100) => off.launch()?,
                (Some(g), _) => g.launch()?,
                (None, _) => step.enqueue(&stream, &args3)?,
            }
        }
        Ok(())
    };
    run(&mut step, 100, &session, 0)?;
    stream.synchronize()?;
    let start = Instant::now();
    let mut batches = Vec::new();
    let mut replays = 100;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let t = Instant::now();
        run(&mut step, 100, &session, replays)?;
        stream.synchronize()?;
        batches.push(t.elapsed().as_secs_f64() * 1e6 / 100.0);
        replays += 100;
    }
    let wall = start.elapsed().as_secs_f64();
    let step_us = median(&mut batches);
    println!(
        "mode {mode}: {replays} steps in {wall:.1} s, median step {step_us:.2} us (batches of 100)"
    );
    if let Some(s) = session {
        let r = s.finish()?;
        print_table(&r, wall);
    }
    println!(
        "host peak RSS: {} MiB, CPU {:.1} s",
        peak_rss_kib() / 1024,
        cpu_seconds()
    );
    Ok(())
}

/// CPU time this process has used (user and system), from /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: u64 = fields.get(11).and_then(|u| u.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0);
    ticks as f64 / 100.0
}

/// The drain's ceiling: a kernel whose every warp records as fast as it
/// can, launched back to back for `seconds`, every launch kept.
fn ceiling(stream: &Arc<CudaStream>, seconds: f64) -> Result<(), Error> {
    let module = ktrace_runtime::load_module_variant(stream.context(), &kernels::SERVING, true)?;
    let burst = module.load_function("record_burst")?;
    let capture =
        std::env::var("KTRACE_CAPTURE").unwrap_or_else(|_| "serving_ceiling.ktrace".into());
    let config = ContinuousConfig {
        capture: capture.into(),
        arena_bytes: 2 << 30,
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(stream, config, REGIONS)?;
    let mut c = SiteConfig::new("record_burst", (528, 1, 1), (256, 1, 1));
    c.cap = 1024;
    c.slabs = 32;
    let arg = session.site(c)?.arg();
    let mut sink = stream.alloc_zeros::<u32>(1)?;
    let n = 1000i32;
    let start = Instant::now();
    let mut launches = 0u64;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        for _ in 0..20 {
            let mut l = stream.launch_builder(&burst);
            l.arg(&n).arg(&mut sink).arg(&arg);
            unsafe { l.launch(cfg(528)) }?;
        }
        stream.synchronize()?;
        launches += 20;
    }
    let cpu0 = cpu_seconds();
    let r = session.finish()?;
    let wall = r.seconds;
    println!(
        "ceiling: {launches} launches of {} warps x {n} marks; drained {} launches, {} entries in {wall:.1} s: {:.1} M entries/s ({:.2} GB/s of entries); dropped {}; process CPU {:.1} s",
        528 * 8,
        r.launches,
        r.records,
        r.records as f64 / wall / 1e6,
        r.records as f64 * 8.0 / wall / 1e9,
        r.sites[0].dropped,
        cpu0
    );
    println!("host peak RSS: {} MiB", peak_rss_kib() / 1024);
    Ok(())
}

fn print_table(r: &ContinuousReport, wall: f64) {
    println!(
        "launches traced {} | entries drained {} ({:.1} M/s) | dropped {} | arena {} MiB",
        r.launches,
        r.records,
        r.records as f64 / wall / 1e6,
        r.sites.iter().map(|s| s.dropped).sum::<u64>(),
        r.arena_bytes >> 20
    );
    println!(
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "kernel", "launches", "kept", "p50 us", "p99 us", "max us", "min us"
    );
    for (s, d) in r.sites.iter().zip(&r.durations) {
        println!(
            "{:<14} {:>9} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            s.kernel,
            s.launches,
            s.kept,
            pct(d, 0.5),
            pct(d, 0.99),
            pct(d, 1.0),
            pct(d, 0.0)
        );
    }
}

/// The launch identity check (see the module docs).
fn check(stream: &Arc<CudaStream>) -> Result<(), Error> {
    let probe = Probe::load(stream)?;
    let other = stream.context().new_stream()?;
    let path = "serving_check.ktrace";
    let config = ContinuousConfig {
        capture: path.into(),
        arena_bytes: 256 << 20,
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(stream, config, REGIONS)?;
    let mut site = |name: &str| -> Result<KtraceArg, Error> {
        let mut c = SiteConfig::new(name, (8, 1, 1), (128, 1, 1));
        c.cap = 32;
        c.slabs = 1024;
        Ok(session.site(c)?.arg())
    };
    let (g_arg, a_arg, b_arg) = (
        site("probe_graph")?,
        site("probe_stream_a")?,
        site("probe_stream_b")?,
    );
    let mut counter_graph = stream.alloc_zeros::<u32>(1)?;
    let mut counter_a = stream.alloc_zeros::<u32>(1)?;
    let mut counter_b = stream.alloc_zeros::<u32>(1)?;
    let mut sink = stream.alloc_zeros::<u32>(1)?;
    let spin = 20000i32;
    let enqueue = |s: &Arc<CudaStream>,
                   c: &mut CudaSlice<u32>,
                   sink: &mut CudaSlice<u32>,
                   arg: &KtraceArg| probe.enqueue(s, c, spin, sink, arg);
    stream.synchronize()?;
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(|e| format!("begin capture: {e:?}"))?;
    enqueue(stream, &mut counter_graph, &mut sink, &g_arg).map_err(|e| format!("capture: {e}"))?;
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(|e| format!("end capture: {e:?}"))?
        .expect("a graph");
    let mut sink_b = other.alloc_zeros::<u32>(1)?;
    for _ in 0..100 {
        graph.launch()?;
        enqueue(stream, &mut counter_a, &mut sink, &a_arg)?;
        enqueue(&other, &mut counter_b, &mut sink_b, &b_arg)?;
    }
    stream.synchronize()?;
    other.synchronize()?;
    let report = session.finish()?;
    let capture = Capture::read(path)?;
    let (checked, wrong) = launch_counts_read(&capture)?;
    let grids: std::collections::BTreeSet<(u32, u64)> = capture
        .launches
        .iter()
        .filter_map(|l| l.origin.map(|o| (o.site, o.grid_id)))
        .collect();
    let graph_grids = grids.iter().filter(|g| g.0 == 0).count();
    println!(
        "check: {} launches ({} per site: {:?}), {checked} records checked, {wrong} wrong; \
         graph replays read {graph_grids} distinct %gridid; dropped {}",
        capture.launches.len(),
        100,
        report.sites.iter().map(|s| s.kept).collect::<Vec<_>>(),
        report.sites.iter().map(|s| s.dropped).sum::<u64>()
    );
    if wrong > 0 || checked == 0 || capture.launches.len() != 300 {
        fail("launch identity check failed");
    }
    println!("check: ok");
    Ok(())
}

/// The launch-identity kernels of the check modes (`check`, `newest`,
/// `triggers`, `windows`), traced build: before each traced launch, `bump`
/// adds one to a counter, and `launch_probe` records the count it reads in
/// every warp, then spins.
struct Probe {
    bump: CudaFunction,
    probe: CudaFunction,
}

impl Probe {
    fn load(stream: &Arc<CudaStream>) -> Result<Self, Error> {
        let module =
            ktrace_runtime::load_module_variant(stream.context(), &kernels::SERVING, true)?;
        Ok(Probe {
            bump: module.load_function("bump")?,
            probe: module.load_function("launch_probe")?,
        })
    }

    /// Enqueues `bump` on `counter`, then `launch_probe` (8 blocks of 128
    /// threads) reading it, spinning `spin` iterations, traced by `arg`.
    fn enqueue(
        &self,
        s: &Arc<CudaStream>,
        counter: &mut CudaSlice<u32>,
        spin: i32,
        sink: &mut CudaSlice<u32>,
        arg: &KtraceArg,
    ) -> Result<(), Error> {
        let mut l = s.launch_builder(&self.bump);
        l.arg(&mut *counter);
        unsafe { l.launch(cfg_threads(1, 32)) }.map_err(|e| format!("bump: {e:?}"))?;
        let mut l = s.launch_builder(&self.probe);
        l.arg(&*counter).arg(&spin).arg(&mut *sink).arg(arg);
        unsafe { l.launch(cfg_threads(8, 128)) }?;
        Ok(())
    }
}

/// The `newest` mode (see the module docs).
fn newest(stream: &Arc<CudaStream>) -> Result<(), Error> {
    let probe = Probe::load(stream)?;
    let path = "serving_newest.ktrace";
    let config = ContinuousConfig {
        capture: path.into(),
        arena_bytes: 64 << 20,
        poll: Duration::from_millis(5),
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(stream, config, REGIONS)?;
    let mut c = SiteConfig::new("probe_newest", (8, 1, 1), (128, 1, 1));
    c.cap = 32;
    c.slabs = 8;
    c.when_full = WhenFull::KeepNewest;
    let arg = session.site(c)?.arg();
    let mut counter = stream.alloc_zeros::<u32>(1)?;
    let mut sink = stream.alloc_zeros::<u32>(1)?;
    let (spin, launches) = (20000i32, 3000u32);
    let started = Instant::now();
    for _ in 0..launches {
        probe.enqueue(stream, &mut counter, spin, &mut sink, &arg)?;
    }
    stream.synchronize()?;
    let wall = started.elapsed().as_secs_f64();
    let report = session.finish()?;
    let capture = Capture::read(path)?;
    let (checked, wrong) = launch_counts_read(&capture)?;
    let epochs: Vec<u32> = capture
        .launches
        .iter()
        .filter_map(|l| l.origin.map(|o| o.epoch))
        .collect();
    // Whole: every slot of every drained launch opened and flushed by that
    // launch's warp.
    let mut partial = 0usize;
    for l in &capture.launches {
        partial += usize::from(!is_whole(l)?);
    }
    let site = &report.sites[0];
    let tail: Vec<u32> = (launches - 7..launches).collect();
    println!(
        "newest: {launches} launches in {wall:.3} s, {} drained, {} overwritten, {checked} \
         records checked, {wrong} wrong, {partial} drained launches not whole, {} stale slots; \
         the last drained: {:?}",
        capture.launches.len(),
        site.dropped,
        report.stale_slots,
        &epochs[epochs.len().saturating_sub(7)..]
    );
    let in_order = epochs.windows(2).all(|w| w[0] < w[1]);
    if wrong > 0
        || checked == 0
        || partial > 0
        || report.stale_slots > 0
        || site.dropped == 0
        || capture.launches.len() as u64 + site.dropped != u64::from(launches)
        || !in_order
        || epochs[epochs.len().saturating_sub(7)..] != tail[..]
        || capture.sites.first().map(|s| s.when_full) != Some(WhenFull::KeepNewest)
    {
        fail("keep-newest check failed");
    }
    println!("newest: ok");
    Ok(())
}

/// The `launch_index` values that `launch_probe` recorded in `capture`
/// (the count its `bump` read), and how many are not their launch's
/// number + 1: the launch the session grouped the record into is not the
/// one it ran in.
fn launch_counts_read(capture: &Capture) -> Result<(u64, u64), Error> {
    let mut checked = 0u64;
    let mut wrong = 0u64;
    for l in &capture.launches {
        let origin = l.origin.expect("a site's launch");
        let b = l.buffer()?;
        for slot in b.slots().filter(|s| s.meta().is_flushed()) {
            for i in 0..slot.stored_entries() {
                let e = slot.entry(i);
                if slot.kind_of(&e) == ktrace_runtime::format::buffer::EntryKind::Value {
                    checked += 1;
                    if e.clock != origin.epoch + 1 {
                        wrong += 1;
                    }
                }
            }
        }
    }
    Ok((checked, wrong))
}

/// The `triggers` mode (see the module docs).
fn triggers(stream: &Arc<CudaStream>) -> Result<(), Error> {
    let probe = Probe::load(stream)?;
    let path = std::env::var("KTRACE_CAPTURE").unwrap_or_else(|_| "serving_triggers.ktrace".into());
    let config = ContinuousConfig {
        capture: path.clone().into(),
        arena_bytes: 64 << 20,
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(stream, config, REGIONS)?;
    let mut c = SiteConfig::new("probe_triggered", (8, 1, 1), (128, 1, 1));
    c.cap = 32;
    c.slabs = 64;
    c.keep = Keep::Triggered;
    let site = session.site(c)?;
    let arg = site.arg();
    let mut counter = stream.alloc_zeros::<u32>(1)?;
    let mut sink = stream.alloc_zeros::<u32>(1)?;
    let spin = 2000i32;
    let asks = [(50u32, 5u32), (150, 5), (250, 5), (251, 3)];
    for i in 0..400u32 {
        for &(at, n) in &asks {
            if at == i {
                // On the session's stream, in order with the launches: the
                // request reaches launch `at` first.
                session.capture_next(site, n)?;
            }
        }
        probe.enqueue(stream, &mut counter, spin, &mut sink, &arg)?;
    }
    stream.synchronize()?;
    let report = session.finish()?;
    let capture = Capture::read(&path)?;
    let mut kept: Vec<u32> = capture
        .launches
        .iter()
        .filter_map(|l| l.origin.map(|o| o.epoch))
        .collect();
    kept.sort_unstable();
    let (_, wrong) = launch_counts_read(&capture)?;
    let expected: Vec<u32> = (51..56).chain(151..156).chain(251..259).collect();
    println!(
        "triggers: {} launches, kept {:?}; {wrong} records of another launch; dropped {}",
        report.sites[0].launches, kept, report.sites[0].dropped
    );
    if kept != expected || wrong > 0 {
        fail(&format!("triggered launches: expected {expected:?}"));
    }
    println!("triggers: ok");
    Ok(())
}

/// The launches of site `site` kept in `capture`, in order.
fn kept_launches(capture: &Capture, site: u32) -> Vec<u32> {
    let mut kept: Vec<u32> = capture
        .launches
        .iter()
        .filter_map(|l| l.origin.filter(|o| o.site == site).map(|o| o.epoch))
        .collect();
    kept.sort_unstable();
    kept
}

/// The `windows` mode (see the module docs).
fn windows(stream: &Arc<CudaStream>, site_stream: bool) -> Result<(), Error> {
    let probe = Probe::load(stream)?;
    let path = std::env::var("KTRACE_CAPTURE").unwrap_or_else(|_| "serving_windows.ktrace".into());
    let config = ContinuousConfig {
        capture: path.clone().into(),
        arena_bytes: 64 << 20,
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(stream, config, REGIONS)?;
    let started = Instant::now();
    let (window_from, window_until) = (Duration::from_millis(1000), Duration::from_millis(1300));
    let mut arg = Vec::new();
    for (name, keep) in [
        (
            "probe_steps",
            Keep::Steps {
                from: 100,
                until: 120,
            },
        ),
        (
            "probe_seconds",
            Keep::Seconds {
                from: window_from,
                until: window_until,
            },
        ),
    ] {
        let mut c = SiteConfig::new(name, (8, 1, 1), (128, 1, 1));
        c.cap = 32;
        c.slabs = 64;
        c.keep = keep;
        arg.push(session.site(c)?.arg());
    }
    // The steps window again, for launches on another stream: opened and
    // closed in that stream's order (`SiteConfig::stream`).
    let other = stream.context().new_stream()?;
    let mut c = SiteConfig::new("probe_steps_other", (8, 1, 1), (128, 1, 1));
    c.cap = 32;
    c.slabs = 64;
    c.keep = Keep::Steps {
        from: 100,
        until: 120,
    };
    c.stream = site_stream.then(|| other.clone());
    arg.push(session.site(c)?.arg());
    // One launch count a site: each probe records the count its bump set.
    let mut counters = [
        stream.alloc_zeros::<u32>(1)?,
        stream.alloc_zeros::<u32>(1)?,
        stream.alloc_zeros::<u32>(1)?,
    ];
    let mut sink = stream.alloc_zeros::<u32>(1)?;
    let mut sink_other = stream.alloc_zeros::<u32>(1)?;
    stream.synchronize()?;
    let mut step = |site: usize, spin: i32| -> Result<(), Error> {
        if site == 2 {
            probe.enqueue(&other, &mut counters[2], spin, &mut sink_other, &arg[2])
        } else {
            probe.enqueue(stream, &mut counters[site], spin, &mut sink, &arg[site])
        }
    };
    for i in 0..400u64 {
        let _s = session.step("steps", i);
        step(0, 200_000)?;
        // Shorter launches: the other stream runs ahead of the session's.
        step(2, 20_000)?;
    }
    stream.synchronize()?;
    other.synchronize()?;
    let steps_done = started.elapsed();
    // (begin, end) of each step of the seconds site, from the session's start.
    let mut times = Vec::new();
    let mut i = 400u64;
    while started.elapsed() < Duration::from_millis(1600) {
        let _s = session.step("seconds", i);
        let begin = started.elapsed();
        step(1, 2000)?;
        stream.synchronize()?;
        times.push((begin, started.elapsed()));
        // A loop with room between its steps: a few hundred launches.
        std::thread::sleep(Duration::from_millis(2));
        i += 1;
    }
    // A step while the session's stream is captured into a graph (after the
    // seconds window, so that its launch is not kept): the step writes
    // nothing on that stream, and the capture and its replay succeed.
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
    {
        let _s = session.step("captured", i);
        step(1, 2000)?;
    }
    match stream.end_capture(CUgraphInstantiate_flags(0)) {
        Ok(Some(g)) => g.launch()?,
        Ok(None) => fail("a step during a graph capture: the capture was empty"),
        Err(e) => fail(&format!(
            "a step during a graph capture broke the capture: {e}"
        )),
    }
    stream.synchronize()?;
    println!("windows: a step during a graph capture: captured and replayed");
    let report = session.finish()?;
    let capture = Capture::read(&path)?;
    let (_, wrong) = launch_counts_read(&capture)?;
    let by_steps = kept_launches(&capture, 0);
    let by_seconds = kept_launches(&capture, 1);
    let by_steps_other = kept_launches(&capture, 2);
    println!(
        "windows: steps site: 400 launches in {:.0} ms, kept {by_steps:?}; {wrong} records of \
         another launch; dropped {}",
        steps_done.as_secs_f64() * 1e3,
        report.sites[0].dropped
    );
    println!(
        "windows: steps site on another stream: kept {by_steps_other:?}; dropped {}",
        report.sites[2].dropped
    );
    if by_steps != (100..120).collect::<Vec<u32>>() || wrong > 0 {
        fail("steps window: expected the launches of steps 100..120");
    }
    if by_steps_other != (100..120).collect::<Vec<u32>>() && site_stream {
        fail("steps window on another stream: expected the launches of steps 100..120");
    }
    // Launch k of the seconds site ran in step times[k].
    let margin = Duration::from_millis(5);
    let inside =
        |k: usize| times[k].0 >= window_from + margin && times[k].1 + margin <= window_until;
    let outside =
        |k: usize| times[k].1 + margin <= window_from || times[k].0 >= window_until + margin;
    let kept: std::collections::BTreeSet<usize> = by_seconds.iter().map(|&k| k as usize).collect();
    let missed = (0..times.len())
        .filter(|&k| inside(k) && !kept.contains(&k))
        .count();
    let extra = kept
        .iter()
        .filter(|&&k| k >= times.len() || outside(k))
        .count();
    let in_a_row = by_seconds.windows(2).all(|w| w[1] == w[0] + 1);
    let span = |k: Option<&u32>| k.map_or(0.0, |&k| times[k as usize].0.as_secs_f64() * 1e3);
    println!(
        "windows: seconds site: {} launches, {} kept from {:.2} ms to {:.2} ms (window 1000 to \
         1300 ms); {missed} missed inside, {extra} kept outside (5 ms margin); dropped {}",
        times.len(),
        by_seconds.len(),
        span(by_seconds.first()),
        span(by_seconds.last()),
        report.sites[1].dropped
    );
    if missed > 0 || extra > 0 || !in_a_row || by_seconds.is_empty() {
        fail("seconds window: the kept launches are not the window's");
    }
    device_steps(&capture)?;
    println!("windows: ok");
    Ok(())
}

/// The steps the device recorded in the `windows` capture: launch `k` of
/// the steps sites (0 and 2) was enqueued in step `k`, launch `k` of the
/// seconds site in step 400 + `k`, although the host ran 400 steps ahead
/// of the steps sites' launches; and `--steps 100..105` selects exactly
/// the steps sites' launches 100-104.
fn device_steps(capture: &Capture) -> Result<(), Error> {
    let mut right = 0;
    let mut wrong = Vec::new();
    for l in &capture.launches {
        let o = l.origin.expect("a site's launch");
        let want = u64::from(o.epoch) + if o.site == 1 { 400 } else { 0 };
        if o.step == Some(want) {
            right += 1;
        } else {
            wrong.push((o.site, o.epoch, o.step));
        }
    }
    let infos = capture_launches(capture)?;
    let sel = LaunchSelection {
        kernels: Vec::new(),
        steps: Some(StepRange::parse("100..105").map_err(|e| e.to_string())?),
    };
    let picked: Vec<(u32, u32)> = match sel.select(&infos, &capture.steps) {
        Ok(p) => p
            .iter()
            .filter_map(|i| i.origin.map(|o| (o.site, o.epoch)))
            .collect(),
        Err(e) => fail(&format!("--steps 100..105: {e}")),
    };
    println!(
        "windows: steps recorded on the device: {right} launches right, {} wrong {:?}; \
         --steps 100..105 selects {picked:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
    let want: Vec<(u32, u32)> = (100..105).flat_map(|k| [(0, k), (2, k)]).collect();
    let mut sorted = picked.clone();
    sorted.sort_unstable();
    let mut want_sorted = want.clone();
    want_sorted.sort_unstable();
    if !wrong.is_empty() || right == 0 || sorted != want_sorted {
        fail("device steps: a launch's recorded step is not the step it was enqueued in");
    }
    Ok(())
}

fn cfg_threads(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}
