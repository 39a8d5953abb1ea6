//! A memory-bound kernel over 131,072 blocks (past the 65,535 that a 16-bit
//! block index holds), traced with block sampling: every 64th block.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example big_grid`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, trace_config, Rng, REGIONS};
use ktrace_runtime::{BlockSampling, TraceSession};

const THREADS: usize = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("big_grid");
    let (ctx, stream) = gpu();
    let blocks = 131_072usize;
    let n = blocks * THREADS * 4; // floats
    let mut rng = Rng::new(3);
    let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y)?;
    let module = ktrace_runtime::load_module(&ctx, &kernels::BIG_GRID)?;
    let f = module.load_function("big_grid_axpy")?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut tc = trace_config("big_grid", &cfg);
    tc.blocks = BlockSampling::Stride(64);
    tc.cap = 32;
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let a = 0.75f32;
    let arg = session.arg();
    let mut l = stream.launch_builder(&f);
    l.arg(&a).arg(&dx).arg(&mut dy).arg(&arg);
    unsafe { l.launch(cfg) }?;
    session.finish_launch()?;
    let got = stream.clone_dtoh(&dy)?;
    for i in 0..n {
        let want = a.mul_add(x[i], y[i]);
        if got[i] != want {
            fail(&format!("y[{i}] = {}, expected {want}", got[i]));
        }
    }
    println!("big_grid: {blocks} blocks, {n} floats, y = a*x + y exact on every element");
    session.finish()?;
    Ok(())
}
