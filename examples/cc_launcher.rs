//! A kernel launched from C++ host code (a static library built by
//! ktrace-build through `cc`, declared to Rust by bindgen), traced from Rust:
//! the session's argument crosses the C boundary by value.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example cc_launcher`

use cudarc::driver::LaunchConfig;
use ktrace_examples::{announce, fail, gpu, launchers, trace_config, Rng, REGIONS};
use ktrace_runtime::TraceSession;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("cc_launcher");
    // The C++ side uses the runtime API's primary context; cudarc's context
    // for device 0 is the same one, so the trace buffer is valid there.
    let (_ctx, stream) = gpu();
    let n = 1 << 22;
    let (blocks, threads) = (264, 256);
    let mut rng = Rng::new(11);
    let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
    let y0: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
    let mut y = y0.clone();
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut session = TraceSession::new(&stream, trace_config("cc_launcher", &cfg), REGIONS)?;
    let arg = session.arg();
    stream.synchronize()?;
    let a = 2.5f32;
    // The traced build for a launch its argument traces, the untraced one
    // otherwise (tracing off, or a launch KTRACE_LAUNCHES leaves out).
    let launch = if arg.traces() {
        launchers::cc_saxpy_traced
    } else {
        launchers::cc_saxpy_untraced
    };
    // SAFETY: x and y hold n floats; the launcher copies them to and from the device.
    let rc = unsafe {
        launch(
            a,
            x.as_ptr(),
            y.as_mut_ptr(),
            n as i32,
            blocks as i32,
            threads as i32,
            arg,
        )
    };
    if rc != 0 {
        fail(&format!("the C++ launcher returned CUDA error {rc}"));
    }
    session.finish_launch()?;
    for i in 0..n {
        let want = a.mul_add(x[i], y0[i]);
        if y[i] != want {
            fail(&format!("y[{i}] = {}, expected {want}", y[i]));
        }
    }
    println!("cc_launcher: saxpy over {n} floats from the C++ launcher is exact");
    session.finish()?;
    Ok(())
}
