//! The cost of recording, per event, on the GPU: a microbenchmark in the
//! shape of Proton's (a loop of 8 dependent fp32 FMAs, 200,000 iterations,
//! 4 warps per block, 1 and 8 blocks per SM) with 0, 1, 2 or 4 events per
//! iteration, for each recorder design, each traced build timed against its
//! untraced build with launches alternating (CUDA events, median).
//!
//! `cargo run --release -p ktrace-examples --example recorder_bench [-- REPS [ITERS]]`
//!
//! Designs (rows), all writing the same buffer layout:
//! - `store`: the default, one 8-byte global store per event
//!   (`KTRACE_RECORDER_STORE`), stamped with `%globaltimer` bits;
//! - `storecnt`: as `store`, built with `KTRACE_ANCHORS_COUNT` (an
//!   anchor every 16 entries of each warp, tested on the count);
//! - `storeclk`: as `store`, built with `KTRACE_ANCHORS_CLOCK` (time
//!   anchors by the clock: a test in every event, an anchor entry after
//!   each event in a new period of 2,048 cycles);
//! - `storena`: as `store`, built without time anchors or stamps
//!   (`KTRACE_ANCHOR_CYCLES 0`: what the stamp costs);
//! - `storepred`: as `store`, built with `KTRACE_STORE_BRANCH 0` (no skip
//!   branch: the store of a warp that records nothing predicated off);
//! - `ring`: events held in registers, one 256-byte warp store per 32;
//! - `smem`: `KTRACE_RECORDER_SMEM`, one 8-byte shared-memory store per event, each
//!   full half of 16 entries copied out with cp.async.bulk; keeps every
//!   event (ring of 4,096 entries per warp);
//! - `smem32`: the same build with a 32-entry ring, so the staging area is
//!   the ring: it keeps the newest 32 entries per warp and copies them out
//!   at the flush (Proton's policy: no global traffic while recording);
//! - `smem32na`: as `smem32`, built without time anchors (like Proton);
//! - `newest`: `KTRACE_RECORDER_NEWEST`, each warp keeps its newest 64
//!   events in a shared-memory ring written out at the flush (Proton's
//!   policy; no check and no global memory traffic while recording), run
//!   with a 64-entry ring per warp;
//! - `newestpin`: as `newest`, built with `KTRACE_NEWEST_PIN 1` (the entry
//!   and its address in registers of their own: 3 registers more);
//! - `newestnb`: as `newest`, built with `KTRACE_NEWEST_BRANCH 0` (no skip
//!   branch: every warp records, an event is 5 instructions).
//!
//! `KTRACE_BENCH_DESIGNS=store,newest` runs only the named designs.
//!
//! Row `1v` is one mark per iteration that records a value with it
//! (`KTRACE_M_V`): its cost per event against row `1` is what a value adds.
//!
//! Then one line per recorder for an fp32 SGEMM (4096^3): untraced,
//! traced, traced with a null buffer, and with one block in 33 sampled.
//!
//! Columns: `ns/event (SM)` is the extra time per recorded event amortised
//! over the SM (extra kernel time / events per SM); `cyc/event (warp)` is
//! the extra time of one warp per event it passes, in SM cycles.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig, PushKernelArg};
use ktrace_examples::{gpu, kernels, median, sm_count, REGIONS};
use ktrace_runtime::{
    BlockSampling, KernelModule, KtraceArg, TraceConfig, TraceSession, WarpSampling,
};

const WARPS: u32 = 4;

fn load(
    ctx: &Arc<CudaContext>,
    module: &KernelModule,
    traced: bool,
    name: &str,
) -> Result<CudaFunction, Box<dyn std::error::Error>> {
    let m = ktrace_runtime::load_module_variant(ctx, module, traced)?;
    Ok(m.load_function(name)?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let reps = args.first().copied().unwrap_or(50);
    let iters = args.get(1).copied().unwrap_or(200_000) as i32;
    let (ctx, stream) = gpu();
    let sms = sm_count(&ctx)?;
    let clock_ghz = {
        use cudarc::driver::sys::CUdevice_attribute;
        ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64 / 1e6
    };
    // (name, module, per-warp ring capacity)
    let all_designs: [(&str, KernelModule, u32); 12] = [
        ("store", kernels::RECORDER_STORE, 4096),
        ("storecnt", kernels::RECORDER_STORE_COUNT, 4096),
        ("storeclk", kernels::RECORDER_STORE_CLOCK, 4096),
        ("storena", kernels::RECORDER_STORE_NOANCHOR, 4096),
        ("storepred", kernels::RECORDER_STORE_PRED, 4096),
        ("ring", kernels::RECORDER_RING, 4096),
        ("smem", kernels::RECORDER_SMEM, 4096),
        ("smem32", kernels::RECORDER_SMEM, 32),
        ("smem32na", kernels::RECORDER_SMEM_NOANCHOR, 32),
        ("newest", kernels::RECORDER_NEWEST, 64),
        ("newestpin", kernels::RECORDER_NEWEST_PIN, 64),
        ("newestnb", kernels::RECORDER_NEWEST_NOBRANCH, 64),
    ];
    let chosen = std::env::var("KTRACE_BENCH_DESIGNS").ok();
    let designs: Vec<_> = all_designs
        .into_iter()
        .filter(|(d, _, _)| match chosen.as_deref() {
            Some(c) => c.split(',').any(|x| x == *d),
            None => true,
        })
        .collect();
    println!("recorder microbenchmark: {iters} iterations x 8 dependent FMAs, {WARPS} warps/block, {sms} SMs, median of {reps} alternating launches; clock {clock_ghz:.2} GHz (nominal)");
    println!(
        "{:<8} {:>6} {:>4} {:>11} {:>11} {:>9} {:>14} {:>17} {:>14} {:>14}",
        "design",
        "blk/SM",
        "ev/it",
        "untraced ms",
        "traced ms",
        "slowdown",
        "ns/event (SM)",
        "cyc/event (warp)",
        "1 warp: ns/site",
        "null buf: +%"
    );
    for occ in [1u32, 8] {
        let blocks = sms * occ;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (WARPS * 32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut out = stream.alloc_zeros::<f32>((blocks * WARPS * 32) as usize)?;
        ktrace_runtime::set_enabled(Some(true));
        let mk =
            |warps: WarpSampling, cap: u32| -> Result<TraceSession, Box<dyn std::error::Error>> {
                let mut tc = TraceConfig::for_launch(&cfg);
                tc.cap = cap;
                tc.warps = warps;
                tc.quiet = true;
                Ok(TraceSession::new(&stream, tc, REGIONS)?)
            };
        let mut sessions = Vec::new();
        for (design, module, cap) in &designs {
            let all = mk(WarpSampling::All, *cap)?;
            let one = mk(WarpSampling::Mask(1), *cap)?;
            let (arg_all, arg_one) = (all.arg(), one.arg());
            sessions.push(all);
            sessions.push(one);
            for (ev, name, label) in [
                (0u32, "bench_e0", "0"),
                (1, "bench_e1", "1"),
                (2, "bench_e2", "2"),
                (4, "bench_e4", "4"),
                (1, "bench_v1", "1v"),
            ] {
                let fu = load(&ctx, module, false, name)?;
                let ft = load(&ctx, module, true, name)?;
                let run = |f: &CudaFunction,
                           arg: &KtraceArg,
                           out: &mut cudarc::driver::CudaSlice<f32>|
                 -> Result<f32, Box<dyn std::error::Error>> {
                    Ok(ktrace_examples::time_ms(&ctx, &stream, 0, 1, || {
                        let mut l = stream.launch_builder(f);
                        l.arg(&mut *out).arg(&iters).arg(arg);
                        unsafe { l.launch(cfg) }.map(|_| ())
                    })?[0])
                };
                for _ in 0..3 {
                    run(&fu, &KtraceArg::OFF, &mut out)?;
                    run(&ft, &arg_all, &mut out)?;
                }
                let (mut tu, mut ta, mut t1, mut t0) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for _ in 0..reps {
                    tu.push(run(&fu, &KtraceArg::OFF, &mut out)?);
                    ta.push(run(&ft, &arg_all, &mut out)?);
                    t1.push(run(&ft, &arg_one, &mut out)?);
                    t0.push(run(&ft, &KtraceArg::OFF, &mut out)?);
                }
                let (mu, ma, m1, m0) = (
                    median(&mut tu) as f64,
                    median(&mut ta) as f64,
                    median(&mut t1) as f64,
                    median(&mut t0) as f64,
                );
                let events_per_sm = (occ * WARPS) as f64 * iters as f64 * ev as f64;
                let sites_per_sm = events_per_sm;
                let per_event = |t: f64| {
                    if ev == 0 {
                        f64::NAN
                    } else {
                        (t - mu) * 1e6 / events_per_sm
                    }
                };
                let cyc = if ev == 0 {
                    f64::NAN
                } else {
                    (ma - mu) * 1e6 * clock_ghz / (iters as f64 * ev as f64)
                };
                println!("{design:<8} {occ:>6} {label:>4} {mu:>11.4} {ma:>11.4} {:>8.1}% {:>14.3} {:>17.2} {:>14.3} {:>13.1}%",
                    100.0 * (ma / mu - 1.0), per_event(ma), cyc,
                    if ev == 0 { f64::NAN } else { (m1 - mu) * 1e6 / sites_per_sm },
                    100.0 * (m0 / mu - 1.0));
            }
        }
        for s in sessions {
            s.discard();
        }
    }
    for (recorder, module, cap) in [
        ("store recorder (default)", &kernels::SGEMM_BENCH, 4096),
        (
            "store, anchors by the event count",
            &kernels::SGEMM_BENCH_COUNT,
            4096,
        ),
        ("store, no anchors", &kernels::SGEMM_BENCH_NOANCHOR, 4096),
        (
            "store, anchors by the clock",
            &kernels::SGEMM_BENCH_CLOCK,
            4096,
        ),
        ("shared-memory recorder", &kernels::SGEMM_BENCH_SMEM, 4096),
        ("newest-64 recorder", &kernels::SGEMM_BENCH_NEWEST, 64),
        (
            "newest-64, no skip branch",
            &kernels::SGEMM_BENCH_NEWEST_NOBRANCH,
            64,
        ),
    ] {
        sgemm(&ctx, &stream, reps, recorder, module, cap)?;
    }
    Ok(())
}

/// The markers on a compute-bound kernel: an fp32 SGEMM (4096^3, two
/// region pairs per k-tile in every warp, examples/kernels/sgemm_bench.cu)
/// built with `recorder`, untraced, traced, traced with a null buffer
/// (tracing off at run time) and traced with one block in 33 sampled,
/// launches alternating.
fn sgemm(
    ctx: &Arc<CudaContext>,
    stream: &Arc<cudarc::driver::CudaStream>,
    reps: usize,
    recorder: &str,
    module: &KernelModule,
    cap: u32,
) -> Result<(), Box<dyn std::error::Error>> {
    const N: u32 = 4096;
    let ones = vec![1.0f32; (N * N) as usize];
    let a = stream.clone_htod(&ones)?;
    let b = stream.clone_htod(&ones)?;
    let mut c = stream.alloc_zeros::<f32>((N * N) as usize)?;
    let cfg = LaunchConfig {
        grid_dim: (N / 128, N / 128, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let fu = load(ctx, module, false, "sgemm_bench")?;
    let ft = load(ctx, module, true, "sgemm_bench")?;
    let mk = |blocks: BlockSampling| -> Result<TraceSession, Box<dyn std::error::Error>> {
        let mut tc = TraceConfig::for_launch(&cfg);
        tc.cap = cap;
        tc.blocks = blocks;
        tc.quiet = true;
        Ok(TraceSession::new(stream, tc, REGIONS)?)
    };
    let all = mk(BlockSampling::All)?;
    let some = mk(BlockSampling::Stride(33))?;
    let (arg_all, arg_some) = (all.arg(), some.arg());
    let n = N as i32;
    let mut run = |f: &CudaFunction, arg: &KtraceArg| -> Result<f32, Box<dyn std::error::Error>> {
        Ok(ktrace_examples::time_ms(ctx, stream, 0, 1, || {
            let mut l = stream.launch_builder(f);
            l.arg(&a)
                .arg(&b)
                .arg(&mut c)
                .arg(&n)
                .arg(&n)
                .arg(&n)
                .arg(arg);
            unsafe { l.launch(cfg) }.map(|_| ())
        })?[0])
    };
    let runs: [(&CudaFunction, &KtraceArg); 4] = [
        (&fu, &KtraceArg::OFF),
        (&ft, &arg_all),
        (&ft, &KtraceArg::OFF),
        (&ft, &arg_some),
    ];
    for (f, arg) in runs {
        run(f, arg)?;
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..reps {
        for (t, (f, arg)) in times.iter_mut().zip(runs) {
            t.push(run(f, arg)?);
        }
    }
    let got = stream.clone_dtoh(&c)?;
    if got.iter().step_by(4097).any(|&v| v != N as f32) {
        return Err("sgemm: wrong result".into());
    }
    let [mu, ma, m0, m33] = times.map(|mut t| median(&mut t) as f64);
    let tflops = 2.0 * (N as f64).powi(3) / (mu * 1e-3) / 1e12;
    println!(
        "sgemm {N}^3 (fp32, 2 region pairs per k-tile in every warp), {recorder}, median of \
         {reps}: untraced {mu:.3} ms ({tflops:.1} TFLOP/s); traced {:+.2}%; null buffer {:+.2}%; \
         1 block in 33 {:+.2}%",
        100.0 * (ma / mu - 1.0),
        100.0 * (m0 / mu - 1.0),
        100.0 * (m33 / mu - 1.0)
    );
    all.discard();
    some.discard();
    Ok(())
}
