//! A producer/consumer kernel in two warpgroups: thread 0 of the producer
//! warpgroup (which gives its registers back down to 24 with `setmaxnreg`)
//! copies tiles into a shared-memory ring with cp.async.bulk, four consumer
//! warps reduce them, synchronised with mbarriers. Traced with warp
//! sampling (the producer and the first consumer), so the timeline shows
//! the two roles side by side.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example warp_specialized [-- --newest]`
//! (`--newest`: the build with the newest-N shared-memory recorder).
//!
//! `cargo run --release -p ktrace-examples --example warp_specialized -- --bench [REPS]`
//! times the untraced kernel against its traced builds (the shared-memory
//! staging recorder, the default store recorder, the newest-N recorder with
//! and without its skip branch; every warp traced, and with a null buffer),
//! launches alternating, and prints the medians.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, median, time_ms, trace_config, Rng, REGIONS};
use ktrace_runtime::{KtraceArg, TraceSession, WarpSampling};

const TILE: usize = 1024;
const THREADS: u32 = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("warp_specialized");
    let (ctx, stream) = gpu();
    let blocks = 264usize;
    let tiles_per_block = 64usize;
    let n = blocks * tiles_per_block * TILE;
    let mut rng = Rng::new(42);
    let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
    let dx = stream.clone_htod(&x)?;
    let mut out = stream.alloc_zeros::<f32>(blocks)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let tpb = tiles_per_block as i32;
    if args.first().is_some_and(|a| a == "--bench") {
        let reps = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(60);
        let load = |m, traced| -> Result<CudaFunction, Box<dyn std::error::Error>> {
            let m = ktrace_runtime::load_module_variant(&ctx, m, traced)?;
            Ok(m.load_function("warp_specialized")?)
        };
        let untraced = load(&kernels::WARP_SPECIALIZED, false)?;
        let smem = load(&kernels::WARP_SPECIALIZED, true)?;
        let store = load(&kernels::WARP_SPECIALIZED_STORE, true)?;
        let newest = load(&kernels::WARP_SPECIALIZED_NEWEST, true)?;
        let newest_nb = load(&kernels::WARP_SPECIALIZED_NEWEST_NOBRANCH, true)?;
        ktrace_runtime::set_enabled(Some(true));
        let session = |cap: u32| -> Result<TraceSession, Box<dyn std::error::Error>> {
            let mut tc = trace_config("warp_specialized_bench", &cfg);
            tc.cap = cap;
            tc.quiet = true;
            Ok(TraceSession::new(&stream, tc, REGIONS)?)
        };
        // Every event kept (the store and staging recorders), and the
        // newest 64 (the newest-N builds).
        let (s_every, s_newest) = (session(512)?, session(64)?);
        let (a_every, a_newest) = (s_every.arg(), s_newest.arg());
        let runs: [(&str, &CudaFunction, &KtraceArg); 9] = [
            ("untraced", &untraced, &KtraceArg::OFF),
            ("store recorder (default), all warps", &store, &a_every),
            ("store recorder, null buffer", &store, &KtraceArg::OFF),
            ("shared-memory recorder, all warps", &smem, &a_every),
            (
                "shared-memory recorder, null buffer",
                &smem,
                &KtraceArg::OFF,
            ),
            ("newest-64 recorder, all warps", &newest, &a_newest),
            ("newest-64 recorder, null buffer", &newest, &KtraceArg::OFF),
            ("newest-64 no skip branch, all warps", &newest_nb, &a_newest),
            (
                "newest-64 no skip branch, null buffer",
                &newest_nb,
                &KtraceArg::OFF,
            ),
        ];
        let launch = |f: &CudaFunction, arg: &KtraceArg, out: &mut CudaSlice<f32>| {
            time_ms(&ctx, &stream, 0, 1, || {
                let mut l = stream.launch_builder(f);
                l.arg(&dx).arg(&mut *out).arg(&tpb).arg(arg);
                unsafe { l.launch(cfg) }.map(|_| ())
            })
        };
        for _ in 0..5 {
            for (_, f, arg) in runs {
                launch(f, arg, &mut out)?;
            }
        }
        let mut times = vec![Vec::new(); runs.len()];
        for _ in 0..reps {
            for (t, (_, f, arg)) in times.iter_mut().zip(runs) {
                t.extend(launch(f, arg, &mut out)?);
            }
        }
        let mu = median(&mut times[0]);
        println!("warp_specialized {blocks} blocks x {tiles_per_block} tiles, {reps} alternating launches each, medians:");
        for ((name, _, _), t) in runs.iter().zip(times.iter_mut()) {
            let m = median(t);
            println!(
                "  {name:<38} {:.2} us  {:+.2}%",
                m * 1e3,
                100.0 * (m / mu - 1.0)
            );
        }
        s_every.discard();
        s_newest.discard();
        return Ok(());
    }
    let newest = args.iter().any(|a| a == "--newest");
    let module = if newest {
        ktrace_runtime::load_module(&ctx, &kernels::WARP_SPECIALIZED_NEWEST)?
    } else {
        ktrace_runtime::load_module(&ctx, &kernels::WARP_SPECIALIZED)?
    };
    let f = module.load_function("warp_specialized")?;
    let mut tc = trace_config("warp_specialized", &cfg);
    // The producer and the first consumer; four events per tile, and the
    // time anchors between them.
    tc.warps = WarpSampling::List(vec![0, 4]);
    tc.cap = (tiles_per_block as u32 * 8).next_power_of_two();
    if newest {
        // The newest-N recorder keeps 64 events per warp: a ring of 64, the
        // older events reported as dropped.
        tc.cap = 64;
    }
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();
    let mut l = stream.launch_builder(&f);
    l.arg(&dx).arg(&mut out).arg(&tpb).arg(&arg);
    unsafe { l.launch(cfg) }?;
    session.finish_launch()?;
    let got = stream.clone_dtoh(&out)?;
    for (b, &g) in got.iter().enumerate() {
        let chunk = &x[b * tiles_per_block * TILE..(b + 1) * tiles_per_block * TILE];
        let want: f64 = chunk.iter().map(|&v| (v as f64) * (v as f64)).sum();
        if ((g as f64) - want).abs() > 1e-3 * want.max(1.0) {
            fail(&format!("block {b}: sum of squares {g}, expected {want}"));
        }
    }
    println!("warp_specialized: {blocks} blocks x {tiles_per_block} tiles reduced correctly");
    session.finish()?;
    Ok(())
}
