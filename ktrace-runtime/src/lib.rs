//! Host side of [ktrace], an intra-kernel trace profiler for CUDA C++
//! kernels: a [`TraceSession`] gives a kernel its trace buffer, and after the
//! launch writes a Chrome trace (open it in ui.perfetto.dev) and a per-region
//! summary. Captures of the raw buffer can be saved and exported later, on a
//! machine without a GPU, by the `ktrace` command-line tool.
//!
//! # Example
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! ktrace-runtime = "0.1"
//! cudarc = { version = "0.19", default-features = false, features = ["std", "driver", "dynamic-loading", "cuda-13000"] }
//!
//! [build-dependencies]
//! ktrace-build = "0.1"
//! ```
//!
//! `build.rs`:
//!
//! ```ignore
//! fn main() {
//!     ktrace_build::Build::new()
//!         .kernel_dir("kernels") // every .cu here becomes a module
//!         .arch("sm_90a")
//!         .compile();
//! }
//! ```
//!
//! `kernels/saxpy.cu`:
//!
//! ```cuda
//! #include <ktrace.cuh>
//! extern "C" __global__ void saxpy(float a, const float* x, float* y, int n, ktrace_arg trace) {
//!     KTRACE_OPEN(trace);
//!     KTRACE_B("body");
//!     int i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = a * x[i] + y[i];
//!     KTRACE_E("body");
//! }
//! ```
//!
//! `src/main.rs`:
//!
//! ```ignore
//! use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
//! use ktrace_runtime::{TraceConfig, TraceSession};
//!
//! ktrace_runtime::include_ktrace!(); // REGIONS and kernels::SAXPY
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let ctx = CudaContext::new(0)?;
//!     let stream = ctx.default_stream();
//!     // The traced build of the kernel when KTRACE=1, the untraced one otherwise.
//!     let module = ktrace_runtime::load_module(&ctx, &kernels::SAXPY)?;
//!     let saxpy = module.load_function("saxpy")?;
//!
//!     let n = 1 << 20;
//!     let x = stream.clone_htod(&vec![1.0f32; n])?;
//!     let mut y = stream.alloc_zeros::<f32>(n)?;
//!     let cfg = LaunchConfig::for_num_elems(n as u32);
//!
//!     let session = TraceSession::new(&stream, TraceConfig::for_launch(&cfg), REGIONS)?;
//!     let trace = session.arg(); // a null buffer when tracing is off
//!     let n = n as i32;
//!     let mut launch = stream.launch_builder(&saxpy);
//!     launch.arg(&2.0f32).arg(&x).arg(&mut y).arg(&n).arg(&trace);
//!     unsafe { launch.launch(cfg) }?;
//!     session.finish()?; // trace.json and trace_summary.json
//!     Ok(())
//! }
//! ```
//!
//! Run with `KTRACE=1 cargo run --release` and open `trace.json` in
//! Perfetto. For several launches with one session, call
//! [`TraceSession::finish_launch`] after each; launch `N > 0` is written to
//! `trace_launchN.json`.
//!
//! # Environment variables
//!
//! - `KTRACE`: tracing is on when it is `1` (see [`enabled`]; [`set_enabled`]
//!   overrides it). Off, a session allocates nothing and writes nothing, and
//!   [`load_module`] loads the kernels built without markers.
//! - `KTRACE_OUT`: the trace file of launch 0, when the [`TraceConfig`] does
//!   not name one (default `trace.json`).
//! - `KTRACE_CAPTURE`: save a capture file (`.ktrace`) of every launch there,
//!   when the [`TraceConfig`] does not name one. Read it with
//!   `ktrace export`, `ktrace summary` and `ktrace diff`.
//!
//! # Features
//!
//! None. The `cudarc` dependency uses dynamic loading: nothing links against
//! the CUDA driver at build time.
//!
//! # Modules
//!
//! The buffer layout ([`layout`], checked against the C header), the launch
//! shape and sampling ([`shape`]), decoding ([`mod@decode`]), what went wrong
//! ([`diagnostics`]), outputs ([`chrome`], [`summary`], [`export`]), capture
//! files ([`capture`]), and the device edge ([`session`]).
//!
//! [ktrace]: https://github.com/ktrace-rs/ktrace
#![deny(missing_docs)]

mod format;
pub use format::{capture, layout, regions, shape};

pub mod decode;
pub mod diagnostics;
mod error;
pub mod export;
pub use export::{chrome, summary};
pub mod output;
pub mod session;
#[doc(hidden)]
pub mod synth;

pub use capture::{Capture, DeviceInfo, LaunchCapture};
pub use chrome::ChromeOptions;
pub use decode::{decode, DecodeOptions, DecodedLaunch, Decoder, WarpTrace};
pub use diagnostics::{Diagnostic, Diagnostics};
pub use error::{Error, Result};
pub use export::{export_launch, write_trace, ExportOptions, ExportReport, WrittenTrace};
pub use layout::KtraceArg;
pub use regions::Regions;
pub use session::{
    enabled, load_module, open_device, set_enabled, KernelModule, TraceConfig, TraceSession,
};
pub use shape::{BlockSampling, LaunchShape, WarpSampling};
pub use summary::{Breakdown, Summary, SummaryOptions};

/// Includes the Rust file that ktrace-build generated in `OUT_DIR`: the
/// region table `REGIONS` and a `kernels` module with one [`KernelModule`]
/// per kernel file.
#[macro_export]
macro_rules! include_ktrace {
    () => {
        include!(concat!(env!("OUT_DIR"), "/ktrace.rs"));
    };
}
