//! A producer/consumer kernel in two warpgroups: thread 0 of the producer
//! warpgroup (which gives its registers back down to 24 with `setmaxnreg`)
//! copies tiles into a shared-memory ring with cp.async.bulk, four consumer
//! warps reduce them, synchronised with mbarriers. Traced with warp
//! sampling (the producer and the first consumer), so the timeline shows
//! the two roles side by side.
//!
//! `KTRACE=1 cargo run --release --example warp_specialized`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, trace_config, Rng, REGIONS};
use ktrace_runtime::{TraceSession, WarpSampling};

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
    let module = ktrace_runtime::load_module(&ctx, &kernels::WARP_SPECIALIZED)?;
    let f = module.load_function("warp_specialized")?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut tc = trace_config("warp_specialized", &cfg);
    // The producer and the first consumer; four events per tile, and the
    // time anchors between them.
    tc.warps = WarpSampling::List(vec![0, 4]);
    tc.cap = (tiles_per_block as u32 * 8).next_power_of_two();
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();
    let tpb = tiles_per_block as i32;
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
