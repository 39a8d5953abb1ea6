//! Row sums traced through ktrace, the kernel compiled by cudaforge.
//! `KTRACE=1 cargo run --release` writes trace.json and prints the regions.
use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_runtime::{TraceConfig, TraceSession};

ktrace_runtime::include_ktrace!(); // REGIONS and kernels::ROWSUM

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ktrace_runtime::open_device(0)?; // a clear error without a driver
    let stream = ctx.default_stream();
    // cudaforge's traced PTX with KTRACE=1, its untraced PTX otherwise.
    let module = ktrace_runtime::load_module(&ctx, &kernels::ROWSUM)?;
    let f = module.load_function("rowsum")?;
    let (rows, cols) = (264usize, 8192usize);
    let m = stream.clone_htod(&vec![1.0f32; rows * cols])?;
    let mut out = stream.alloc_zeros::<f32>(rows)?;
    let cfg = LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut session = TraceSession::new(&stream, TraceConfig::for_launch(&cfg), REGIONS)?;
    let (cols32, arg) = (cols as i32, session.arg());
    let mut launch = stream.launch_builder(&f);
    launch.arg(&m).arg(&mut out).arg(&cols32).arg(&arg);
    unsafe { launch.launch(cfg) }?;
    session.finish_launch()?;
    let sums = stream.clone_dtoh(&out)?;
    if sums.iter().any(|&s| s != cols as f32) {
        return Err(format!("wrong row sums: {:?}", &sums[..4]).into());
    }
    for report in session.finish()? {
        for r in &report.summary.regions {
            println!(
                "{:<8} {:>6} spans, mean {:.2} us",
                r.name, r.count, r.mean_dur
            );
        }
    }
    println!("rowsum: {rows} rows of {cols}, sums correct");
    Ok(())
}
