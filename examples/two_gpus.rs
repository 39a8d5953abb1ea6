//! Two GPUs on one timeline. One warp on each GPU plays ping-pong through
//! peer memory (`examples/kernels/two_gpus.cu`), launch after launch for a
//! minute or more while each GPU's `%globaltimer` drifts from the other's;
//! each GPU has its own [`TraceSession`], which measures its clock against
//! the host's at the start and after every launch. The two captures are
//! then put on one axis ([`timeline::place`]) and every round is checked:
//! no flag may be seen before it was sent, and half the difference of the
//! two one-way delays estimates how far apart the axis put the GPUs.
//!
//! ```text
//! KTRACE=1 cargo run --release -p ktrace-examples --example two_gpus -- [--seconds 70] [--rounds 1000]
//!     [--every-ms 2000] [--one-gpu]
//! ```
//!
//! Writes `two_gpus_gpu0.ktrace` and `two_gpus_gpu1.ktrace`, and both on one
//! timeline in `two_gpus.pftrace` (what `ktrace merge` of the two writes). `--one-gpu` plays both sides on GPU 0 (two streams), for
//! machines with one GPU.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use ktrace_examples::ping_pong::{quantile, rounds, Round};
use ktrace_examples::{announce, fail, kernels, REGIONS};
use ktrace_runtime::timeline::{place, Axis, Placement};
use ktrace_runtime::{
    export::perfetto::HostClocks, export::perfetto::PerfettoOptions, export::TimelineLaunch,
    export_perfetto, Capture, ExportOptions, KtraceArg, TraceConfig, TraceSession,
};

struct Args {
    seconds: f64,
    rounds: u32,
    every: Duration,
    one_gpu: bool,
    /// Only measure the clocks: this many handshakes per probe, every
    /// round written to `clock_rounds.csv`.
    probe: u32,
}

fn args() -> Args {
    let mut a = Args {
        seconds: 70.0,
        rounds: 1000,
        every: Duration::from_millis(2000),
        one_gpu: false,
        probe: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> f64 {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| fail(&format!("{name} needs a number")))
        };
        match flag.as_str() {
            "--seconds" => a.seconds = value("--seconds"),
            "--rounds" => a.rounds = value("--rounds") as u32,
            "--every-ms" => a.every = Duration::from_millis(value("--every-ms") as u64),
            "--one-gpu" => a.one_gpu = true,
            "--probe" => a.probe = value("--probe") as u32,
            other => fail(&format!(
                "unknown argument {other:?} (--seconds S, --rounds N, --every-ms MS, --one-gpu)"
            )),
        }
    }
    a
}

/// Lets each context reach the other's memory.
fn enable_peer_access(a: &Arc<CudaContext>, b: &Arc<CudaContext>) {
    for (from, to) in [(a, b), (b, a)] {
        let mut can = 0;
        // SAFETY: plain queries and a context switch of this thread.
        unsafe {
            sys::cuDeviceCanAccessPeer(&mut can, from.cu_device(), to.cu_device());
        }
        if can == 0 {
            fail(&format!(
                "GPU {} cannot access GPU {}'s memory (no peer access)",
                from.ordinal(),
                to.ordinal()
            ));
        }
        from.bind_to_thread()
            .unwrap_or_else(|e| fail(&e.to_string()));
        // SAFETY: both contexts are alive; enabling twice is reported, not UB.
        let rc = unsafe { sys::cuCtxEnablePeerAccess(to.cu_ctx(), 0) };
        if rc != sys::cudaError_enum::CUDA_SUCCESS
            && rc != sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        {
            fail(&format!("enabling peer access: {rc:?}"));
        }
    }
}

/// A u32 in device memory that the peer GPU can reach: allocated with
/// `cuMemAlloc`, since memory from the stream-ordered pools (cudarc's
/// `alloc_zeros`) is not covered by peer access.
struct Inbox {
    ctx: Arc<CudaContext>,
    ptr: sys::CUdeviceptr,
}

impl Inbox {
    fn new(ctx: &Arc<CudaContext>) -> Result<Self, Box<dyn std::error::Error>> {
        ctx.bind_to_thread()?;
        // SAFETY: a plain allocation of 4 bytes, zeroed, freed in drop.
        let ptr = unsafe {
            let p = cudarc::driver::result::malloc_sync(4)?;
            cudarc::driver::result::memset_d8_sync(p, 0, 4)?;
            p
        };
        Ok(Inbox {
            ctx: ctx.clone(),
            ptr,
        })
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated in `new`; the kernels using it have finished.
        let _ = unsafe { cudarc::driver::result::free_sync(self.ptr) };
    }
}

/// One side of the game: its stream, kernel, inbox, status word and session.
struct Side {
    stream: Arc<CudaStream>,
    f: CudaFunction,
    inbox: Inbox,
    status: cudarc::driver::CudaSlice<u32>,
    session: TraceSession,
}

impl Side {
    fn new(
        ctx: &Arc<CudaContext>,
        role: &str,
        rounds: u32,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let stream = ctx.new_stream()?;
        let module = ktrace_runtime::load_module(ctx, &kernels::TWO_GPUS)?;
        let mut tc = TraceConfig::new((1, 1, 1), (32, 1, 1)).kernel(role);
        // Two marks a round, each possibly followed by a time anchor.
        tc.cap = (4 * rounds).next_power_of_two().max(32);
        tc.quiet = true;
        Ok(Side {
            f: module.load_function("two_gpus")?,
            inbox: Inbox::new(ctx)?,
            status: stream.alloc_zeros::<u32>(1)?,
            session: TraceSession::new(&stream, tc, REGIONS)?,
            stream,
        })
    }

    fn inbox_ptr(&self) -> u64 {
        self.inbox.ptr
    }

    fn launch(
        &mut self,
        peer: u64,
        role: u32,
        base: u32,
        rounds: u32,
        arg: &KtraceArg,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let inbox = self.inbox_ptr();
        let mut l = self.stream.launch_builder(&self.f);
        l.arg(&inbox)
            .arg(&peer)
            .arg(&role)
            .arg(&base)
            .arg(&rounds)
            .arg(&mut self.status)
            .arg(arg);
        // SAFETY: the arguments match the kernel's signature; both inboxes
        // outlive the launch (the session waits for it).
        unsafe { l.launch(cfg) }?;
        Ok(())
    }
}

fn ns(ps: f64) -> String {
    format!("{:.1}", ps / 1000.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("two_gpus");
    let a = args();
    if !ktrace_runtime::enabled() {
        eprintln!("two_gpus checks the merged traces: run it with KTRACE=1");
        std::process::exit(2);
    }
    let count = CudaContext::device_count().unwrap_or(0);
    let second = if a.one_gpu {
        0
    } else if count >= 2 {
        1
    } else {
        eprintln!("two_gpus needs two GPUs ({count} found); --one-gpu plays both sides on GPU 0");
        std::process::exit(2);
    };
    let ctx0 = ktrace_runtime::open_device(0)?;
    let ctx1 = ktrace_runtime::open_device(second)?;
    if second != 0 {
        enable_peer_access(&ctx0, &ctx1);
    }
    if a.probe > 0 {
        return probe(&[&ctx0, &ctx1, &ctx0], a.probe, a.every);
    }
    let mut ping = Side::new(&ctx0, "ping (GPU 0)", a.rounds)?;
    let mut pong = Side::new(&ctx1, &format!("pong (GPU {second})"), a.rounds)?;
    let (p0, p1) = (ping.inbox_ptr(), pong.inbox_ptr());

    let start = Instant::now();
    let mut launches = 0u32;
    while launches < 2 || start.elapsed().as_secs_f64() < a.seconds {
        let base = launches * a.rounds;
        let arg1 = pong.session.arg();
        pong.launch(p0, 1, base, a.rounds, &arg1)?;
        let arg0 = ping.session.arg();
        ping.launch(p1, 0, base, a.rounds, &arg0)?;
        ping.session.finish_launch()?;
        pong.session.finish_launch()?;
        for (side, name) in [(&ping, "ping"), (&pong, "pong")] {
            if side.stream.clone_dtoh(&side.status)?[0] != 0 {
                fail(&format!(
                    "launch {launches}: the {name} side waited a second in vain"
                ));
            }
        }
        launches += 1;
        let next = a.every * launches;
        if let Some(wait) = next.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    ping.session.save_capture("two_gpus_gpu0.ktrace")?;
    pong.session.save_capture("two_gpus_gpu1.ktrace")?;
    let (c0, c1) = (ping.session.capture(), pong.session.capture());
    ping.session.discard();
    pong.session.discard();
    println!(
        "{launches} launches of {} rounds over {elapsed:.1} s -> two_gpus_gpu0.ktrace, two_gpus_gpu1.ktrace",
        a.rounds
    );
    report(&c0, &c1)
}

/// Takes `handshakes` handshakes with each of `ctxs` in turn (two probes
/// of one GPU show the handshake's own noise), `every` apart, and writes
/// every round to `clock_rounds.csv`.
fn probe(
    ctxs: &[&Arc<CudaContext>],
    handshakes: u32,
    every: Duration,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let probes = ctxs
        .iter()
        .map(|c| {
            Ok((
                c.new_stream()?,
                ktrace_runtime::session::ClockProbe::new(c)?,
            ))
        })
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
    let mut out = std::io::BufWriter::new(std::fs::File::create("clock_rounds.csv")?);
    writeln!(
        out,
        "probe,gpu,handshake,round,host_before_ns,gpu_ns,host_after_ns"
    )?;
    let start = Instant::now();
    for h in 0..handshakes {
        for (p, (stream, probe)) in probes.iter().enumerate() {
            for (r, s) in probe.measure(stream)?.iter().enumerate() {
                writeln!(
                    out,
                    "{p},{},{h},{r},{},{},{}",
                    ctxs[p].ordinal(),
                    s.host_before_ns,
                    s.gpu_ns,
                    s.host_after_ns
                )?;
            }
        }
        if let Some(wait) = (every * (h + 1)).checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    println!(
        "{handshakes} handshakes x {} probes -> clock_rounds.csv",
        probes.len()
    );
    Ok(())
}

fn report(c0: &Capture, c1: &Capture) -> Result<(), Box<dyn std::error::Error>> {
    print_clock_syncs(c0, c1);
    let placement = place(&[("GPU 0", c0), ("GPU 1", c1)])?;
    if placement.axis != Axis::HostRealtime {
        fail("the captures have no clock syncs");
    }
    write_merged_timeline(c0, c1, &placement)?;
    let fixed = rounds(c0, c1, &placement, true)?;
    let raw = rounds(c0, c1, &placement, false)?;
    let (all_skew, violations) = print_skew_table(&fixed, &raw);
    let abs: Vec<f64> = all_skew.iter().map(|s| s.abs()).collect();
    let (mut s, mut abs) = (all_skew, abs);
    println!(
        "corrected: {} rounds, skew median {} ns, |skew| p99 {} ns, max {} ns; order violations: {} raw, {} corrected",
        s.len(),
        ns(quantile(&mut s, 0.5)),
        ns(quantile(&mut abs, 0.99)),
        ns(quantile(&mut abs, 1.0)),
        violations.0,
        violations.1
    );
    if violations.1 > 0 {
        fail("the merged timeline shows a flag seen before it was sent");
    }
    Ok(())
}

/// One line per GPU on its clock syncs: host round trips and offsets.
fn print_clock_syncs(c0: &Capture, c1: &Capture) {
    for (c, name) in [(c0, "GPU 0"), (c1, "GPU 1")] {
        let mut rtt: Vec<f64> = c
            .clock_syncs
            .iter()
            .map(|s| s.round_trip_ns() as f64)
            .collect();
        let offsets: Vec<i64> = c.clock_syncs.iter().map(|s| s.offset_ns()).collect();
        println!(
            "{name} ({}): {} clock syncs, host round trip min {:.0} / median {:.0} / max {:.0} ns; \
             %globaltimer ahead of CLOCK_REALTIME by {:.1} µs at the first, {:.1} µs at the last",
            c.device.name,
            rtt.len(),
            quantile(&mut rtt, 0.0),
            quantile(&mut rtt, 0.5),
            quantile(&mut rtt, 1.0),
            offsets.first().copied().unwrap_or(0) as f64 / 1e3,
            offsets.last().copied().unwrap_or(0) as f64 / 1e3,
        );
    }
}

/// Both GPUs on one timeline, as `ktrace merge` writes it.
fn write_merged_timeline(
    c0: &Capture,
    c1: &Capture,
    placement: &Placement,
) -> Result<(), Box<dyn std::error::Error>> {
    let launches = TimelineLaunch::placed([c0, c1], placement);
    let perfetto = PerfettoOptions {
        host_clocks: HostClocks::from_syncs(c0.clock_syncs.iter().chain(&c1.clock_syncs)),
        args: false,
    };
    export_perfetto(
        &launches,
        std::path::Path::new("two_gpus.pftrace"),
        &ExportOptions::default(),
        &perfetto,
        &mut |_| {},
    )?;
    println!("both GPUs on one timeline -> two_gpus.pftrace");
    Ok(())
}

/// Prints the skew of some launches' rounds, corrected and raw; returns
/// every corrected skew and the order violations (raw, corrected).
fn print_skew_table(fixed: &[Vec<Round>], raw: &[Vec<Round>]) -> (Vec<f64>, (usize, usize)) {
    let t0 = fixed
        .first()
        .and_then(|l| l.first())
        .map_or(0, |r| r.ping_sent);
    println!("launch   t (s)   raw skew (µs)   corrected skew (ns): median  p1..p99   one-way ns (there/back) min   order violations raw/corrected");
    let mut all_skew = Vec::new();
    let mut violations = (0usize, 0usize);
    let n = fixed.len();
    for (l, (f, r)) in fixed.iter().zip(raw).enumerate() {
        let skew = |v: &[Round]| v.iter().map(|r| r.skew() as f64).collect::<Vec<f64>>();
        let (mut fs, mut rs) = (skew(f), skew(r));
        all_skew.extend_from_slice(&fs);
        let vf = f.iter().filter(|r| r.violates_order()).count();
        let vr = r.iter().filter(|r| r.violates_order()).count();
        violations.0 += vr;
        violations.1 += vf;
        if l < 3 || l % 10 == 0 || l + 1 == n {
            let there = f.iter().map(|r| r.there()).min().unwrap_or(0) as f64;
            let back = f.iter().map(|r| r.back()).min().unwrap_or(0) as f64;
            println!(
                "{l:6} {:7.1} {:15.2} {:>28} {:>8}..{:<8} {:>10}/{:<10} {:>10}/{}",
                (f.first().map_or(0, |r| r.ping_sent) - t0) as f64 / 1e12,
                quantile(&mut rs, 0.5) / 1e6,
                ns(quantile(&mut fs, 0.5)),
                ns(quantile(&mut fs, 0.01)),
                ns(quantile(&mut fs, 0.99)),
                ns(there),
                ns(back),
                vr,
                vf
            );
        }
    }
    (all_skew, violations)
}
