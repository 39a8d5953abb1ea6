//! The cost of recording, per event, on the GPU: a microbenchmark in the
//! shape of Proton's (a loop of 8 dependent fp32 FMAs, 200,000 iterations,
//! 4 warps per block, 1 and 8 blocks per SM) with 0, 1, 2 or 4 events per
//! iteration, for each recorder design, each traced build timed against its
//! untraced build with launches alternating (CUDA events, median).
//!
//! `cargo run --release --example recorder_bench [-- REPS [ITERS]]`
//!
//! Columns: `ns/event (SM)` is the extra time per recorded event amortised
//! over the SM (extra kernel time / events per SM); `cyc/event (warp)` is
//! the extra time of one warp per event it passes, in SM cycles.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig, PushKernelArg};
use ktrace_examples::{gpu, kernels, median, sm_count, REGIONS};
use ktrace_runtime::{KernelModule, KtraceArg, TraceConfig, TraceSession, WarpSampling};

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
    let designs: [(&str, KernelModule); 2] = [
        ("store", kernels::RECORDER_STORE),
        ("ring", kernels::RECORDER_RING),
    ];
    println!("recorder microbenchmark: {iters} iterations x 8 dependent FMAs, {WARPS} warps/block, {sms} SMs, median of {reps} alternating launches; clock {clock_ghz:.2} GHz (nominal)");
    println!(
        "{:<6} {:>6} {:>4} {:>11} {:>11} {:>9} {:>14} {:>17} {:>14} {:>14}",
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
        let mk = |warps: WarpSampling| -> Result<TraceSession, Box<dyn std::error::Error>> {
            let mut tc = TraceConfig::for_launch(&cfg);
            tc.cap = 4096;
            tc.warps = warps;
            tc.quiet = true;
            Ok(TraceSession::new(&stream, tc, REGIONS)?)
        };
        let all = mk(WarpSampling::All)?;
        let one = mk(WarpSampling::Mask(1))?;
        let (arg_all, arg_one) = (all.arg(), one.arg());
        for (design, module) in &designs {
            for (ev, name) in [
                (0u32, "bench_e0"),
                (1, "bench_e1"),
                (2, "bench_e2"),
                (4, "bench_e4"),
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
                println!("{design:<6} {occ:>6} {ev:>4} {mu:>11.4} {ma:>11.4} {:>8.1}% {:>14.3} {:>17.2} {:>14.3} {:>13.1}%",
                    100.0 * (ma / mu - 1.0), per_event(ma), cyc,
                    if ev == 0 { f64::NAN } else { (m1 - mu) * 1e6 / sites_per_sm },
                    100.0 * (m0 / mu - 1.0));
            }
        }
        all.discard();
        one.discard();
    }
    Ok(())
}
