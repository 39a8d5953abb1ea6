//! A templated kernel with a marker in a `__device__` helper and CUB from
//! the toolkit's headers (`examples/kernels/block_sum.cu`, shown in the
//! README): sums 2^22 floats with both instantiations and checks the sums.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example block_sum`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, trace_config, REGIONS};
use ktrace_runtime::TraceSession;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("block_sum");
    let (ctx, stream) = gpu();
    let module = ktrace_runtime::load_module(&ctx, &kernels::BLOCK_SUM)?;
    let n: usize = 1 << 22;
    let x = stream.clone_htod(&vec![0.5f32; n])?;
    for (name, block) in [("block_sum_256", 256u32), ("block_sum_512", 512)] {
        let f = module.load_function(name)?;
        let mut out = stream.alloc_zeros::<f32>(1)?;
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(block), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut tc = trace_config(name, &cfg);
        tc.cap = 32;
        let mut session = TraceSession::new(&stream, tc, REGIONS)?;
        let (arg, n32) = (session.arg(), n as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&x).arg(&mut out).arg(&n32).arg(&arg);
        unsafe { launch.launch(cfg) }?;
        session.finish_launch()?;
        let sum = stream.clone_dtoh(&out)?[0];
        if sum != 0.5 * n as f32 {
            fail(&format!("{name}: sum {sum}, expected {}", 0.5 * n as f32));
        }
        println!("{name}: sum of {n} halves is {sum}");
        session.finish()?;
    }
    Ok(())
}
