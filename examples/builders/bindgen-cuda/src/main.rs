//! y = a x + b traced through ktrace, the kernel compiled by bindgen_cuda.
//! `KTRACE=1 cargo run --release` writes trace.json and prints the regions.
use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_runtime::{TraceConfig, TraceSession};

ktrace_runtime::include_ktrace!(); // REGIONS and kernels::SCALE

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ktrace_runtime::open_device(0)?; // a clear error without a driver
    let stream = ctx.default_stream();
    // bindgen_cuda's traced PTX with KTRACE=1, its untraced PTX otherwise.
    let module = ktrace_runtime::load_module(&ctx, &kernels::SCALE)?;
    let f = module.load_function("scale")?;
    let n = 1usize << 22;
    let x = stream.clone_htod(&vec![1.5f32; n])?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    let cfg = LaunchConfig {
        grid_dim: (264, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut session = TraceSession::new(&stream, TraceConfig::for_launch(&cfg), REGIONS)?;
    let (a, b, n4, arg) = (2.0f32, 1.0f32, (n / 4) as i32, session.arg());
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&x)
        .arg(&mut y)
        .arg(&a)
        .arg(&b)
        .arg(&n4)
        .arg(&arg);
    unsafe { launch.launch(cfg) }?;
    session.finish_launch()?;
    let ys = stream.clone_dtoh(&y)?;
    if ys.iter().any(|&v| v != 4.0) {
        return Err(format!("wrong results: {:?}", &ys[..4]).into());
    }
    for report in session.finish()? {
        for r in &report.summary.regions {
            println!(
                "{:<8} {:>6} spans, mean {:.2} us",
                r.name, r.count, r.mean_dur
            );
        }
    }
    println!("scale: {n} elements, results correct");
    Ok(())
}
