//! Ground truth for ktrace's timing while the SM clock moves. One timeline
//! warp per block records ~1,000 markers from 0.05 µs to 100 µs apart over
//! more than 10 ms and reads `%globaltimer` beside each one; the block's
//! other warps load the tensor cores, and the GEMM example runs on a second
//! stream on the remaining SMs, so the chip reaches its power limit and its
//! clock wanders. The example decodes the trace twice — with the time
//! anchors the warps recorded (piecewise) and with only the open and flush
//! timer pairs (two-point, the old model) — and prints the error of each
//! against the truth.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example dvfs [-- --quiet] [--markers N] [--blocks B]`
//!
//! `--quiet`: no load (no tensor-core warps, no GEMM): the clock stays put.
//! `--count`: the kernel built with `KTRACE_ANCHORS_COUNT` (variant
//! `dvfs_count`: each warp records an anchor every 16 entries), every warp
//! traced: the timeline warp's times go through the anchors of all the
//! traced warps on its SM.
//! `--clock`: the kernel built with `KTRACE_ANCHORS_CLOCK` (variant
//! `dvfs_clock`: time anchors by the clock, the default before stamped
//! events).
//! Writes `dvfs.ktrace` (the capture) and `dvfs_truth.bin` (the truth,
//! see `ktrace_examples::truth`) beside the trace.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::gemm::{load_gemm, Problem};
use ktrace_examples::truth::{compare, Truth};
use ktrace_examples::{announce, fail, gpu, kernels, sm_count, trace_config, Rng, REGIONS};
use ktrace_runtime::decode::TimeModel;
use ktrace_runtime::{
    decode::decode, decode::DecodeOptions, KtraceArg, TraceSession, WarpSampling,
};

const THREADS: u32 = 256;
/// Shortest and longest gap between markers, in SM cycles.
const GAP_CYCLES: (f64, f64) = (100.0, 200_000.0);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quiet = args.iter().any(|a| a == "--quiet");
    let count = args.iter().any(|a| a == "--count");
    let clock = args.iter().any(|a| a == "--clock");
    let value = |flag: &str| -> Option<u32> {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1)?.parse().ok()
    };
    announce("dvfs");
    let (ctx, stream) = gpu();
    let sms = sm_count(&ctx)?;
    let markers = value("--markers").unwrap_or(1000);
    let blocks = value("--blocks").unwrap_or((sms / 2).max(1));
    if markers < 3 {
        fail("--markers must be at least 3");
    }

    // Log-uniform gaps, different in every block.
    let mut rng = Rng::new(0x6476_6673);
    let (lo, hi) = (GAP_CYCLES.0.ln(), GAP_CYCLES.1.ln());
    let gaps: Vec<u32> = (0..blocks as usize * markers as usize)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            (lo + u * (hi - lo)).exp() as u32
        })
        .collect();
    let d_gaps = stream.clone_htod(&gaps)?;
    let mut d_truth = stream.alloc_zeros::<u64>(gaps.len())?;
    let mut sink = stream.alloc_zeros::<f32>(1)?;
    let module = ktrace_runtime::load_module(
        &ctx,
        if count {
            &kernels::DVFS_COUNT
        } else if clock {
            &kernels::DVFS_CLOCK
        } else {
            &kernels::DVFS
        },
    )?;
    let f = module.load_function("dvfs")?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut tc = trace_config("dvfs", &cfg);
    // Markers plus at most one anchor after each; with --count the load
    // warps' regions too (one about every 20 us).
    tc.cap = (2 * markers + 2).next_power_of_two() * if count { 4 } else { 1 };
    tc.warps = if count {
        WarpSampling::All
    } else {
        WarpSampling::List(vec![0])
    };
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();

    // The load: the GEMM on a second stream, on the SMs the timeline blocks
    // leave free (its CTAs need a whole SM), launched right after them.
    let load_stream = ctx.new_stream()?;
    let mut gemm = if quiet {
        None
    } else {
        let f = load_gemm(&ctx, kernels::GEMM.untraced)?;
        let (p, _) = Problem::new(&ctx, &load_stream, 8192, 8192, 8192)?;
        load_stream.synchronize()?;
        Some((p, f))
    };
    let load = u32::from(!quiet);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&d_gaps)
        .arg(&markers)
        .arg(&mut d_truth)
        .arg(&load)
        .arg(&mut sink)
        .arg(&arg);
    unsafe { launch.launch(cfg) }?;
    if let Some((p, gf)) = gemm.as_mut() {
        for _ in 0..6 {
            p.launch(&load_stream, gf, &KtraceArg::OFF)?;
        }
    }
    stream.synchronize()?;
    load_stream.synchronize()?;
    let truth = Truth {
        markers,
        blocks,
        ns: stream.clone_dtoh(&d_truth)?,
    };
    let span = |b: usize| {
        let t = &truth.ns[b * markers as usize..(b + 1) * markers as usize];
        t[t.len() - 1].saturating_sub(t[0])
    };
    let mut spans: Vec<u64> = (0..blocks as usize).map(span).collect();
    spans.sort_unstable();
    println!(
        "dvfs: {blocks} timeline warps (warp 0{}), {markers} markers each, {} load; warps lasted {:.2}..{:.2} ms",
        if count {
            ", every warp anchoring by its count"
        } else if clock {
            ", time anchors by the clock"
        } else {
            ""
        },
        if quiet { "no" } else { "tensor-core + GEMM" },
        spans[0] as f64 / 1e6,
        spans[spans.len() - 1] as f64 / 1e6
    );
    if !session.is_enabled() {
        return Ok(());
    }
    session.finish_launch()?;
    std::fs::write("dvfs_truth.bin", truth.to_bytes())?;
    println!("dvfs: wrote dvfs_truth.bin");
    let l = &session.launches()[0];
    println!("\ntime model      event time |trace - truth| (ns)   region duration |trace - truth| (ns)   |rel. error| p99");
    println!("                   median       p99       max      median       p99       max   regions >= 32 us");
    for (name, model) in [
        ("two-point", TimeModel::TwoPoint),
        ("anchors", TimeModel::Anchors),
    ] {
        let opts = DecodeOptions {
            time_model: model,
            ..DecodeOptions::default()
        };
        let decoded = decode(l.buffer()?, &opts);
        let c = compare(&decoded, &truth).unwrap_or_else(|e| fail(&e.to_string()));
        println!(
            "{name:<12} {}   {}   {:>16.2e}",
            c.event_time, c.duration, c.long_duration_rel_p99
        );
        if model == TimeModel::Anchors {
            println!("{}", ktrace_runtime::decode::describe_clock(&decoded.clock));
        }
    }
    session.finish()?;
    Ok(())
}
