//! Host side of ktrace, an intra-kernel trace profiler for CUDA C++
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
//! use cudarc::driver::{LaunchConfig, PushKernelArg};
//! use ktrace_runtime::{TraceConfig, TraceSession};
//!
//! ktrace_runtime::include_ktrace!(); // REGIONS and kernels::SAXPY
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let ctx = ktrace_runtime::open_device(0)?; // a clear error, not a panic, without a driver
//!     let stream = ctx.default_stream();
//!     // Both builds: a launch runs the traced one when its argument traces it
//!     // (KTRACE=1), the untraced one (no markers in its machine code) otherwise.
//!     let module = ktrace_runtime::load_module_pair(&ctx, &kernels::SAXPY)?;
//!     let saxpy = module.load_function("saxpy")?;
//!
//!     let n = 1 << 20;
//!     let x = stream.clone_htod(&vec![1.0f32; n])?;
//!     let mut y = stream.alloc_zeros::<f32>(n)?;
//!     let cfg = LaunchConfig::for_num_elems(n as u32);
//!
//!     let mut session = TraceSession::new(&stream, TraceConfig::for_launch(&cfg), REGIONS)?;
//!     let trace = session.arg(); // a null buffer when tracing is off
//!     let n = n as i32;
//!     let mut launch = stream.launch_builder(saxpy.for_arg(&trace));
//!     launch.arg(&2.0f32).arg(&x).arg(&mut y).arg(&n).arg(&trace);
//!     unsafe { launch.launch(cfg) }?;
//!     session.finish_launch()?; // copies the buffer back
//!     session.finish()?; // trace.json and trace_summary.json
//!     Ok(())
//! }
//! ```
//!
//! Run with `KTRACE=1 cargo run --release` and open `trace.json` in
//! Perfetto. For several launches with one session, call
//! [`TraceSession::finish_launch`] after each; launch `N > 0` is written to
//! `trace_launchN.json`. To trace only some of them (a timing loop, say),
//! set `KTRACE_LAUNCHES` or [`TraceConfig::launches`]: the other launches
//! get a null buffer from [`TraceSession::arg`] and cost no copy and no file;
//! launched through [`FunctionPair::for_arg`] they run the untraced build.
//! [`TraceSession::discard`] ends a session without writing anything.
//! [`load_module`] loads one build, the traced one when `KTRACE=1`;
//! [`load_module_variant`] loads the traced or the untraced build whatever
//! `KTRACE` says, for programs that time one against the other.
//!
//! The session prints what it wrote, one line when the buffer is not as
//! asked (see below) and, per launch, how full the rings were and the cap
//! that would have kept every entry ([`RingFill`](fill::RingFill)).
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
//!   `ktrace export`, `ktrace summary` and `ktrace diff`. Set alone (no
//!   `KTRACE_OUT`, neither path in the [`TraceConfig`]), the session writes
//!   the capture only, no trace.
//!
//! These override the [`TraceConfig`] when set, so a traced program can be
//! steered without a rebuild. A value that is none of the forms is an
//! [`Error::Env`] naming the variable and the forms (checked whether
//! tracing is on or not); an empty value counts as unset.
//!
//! - `KTRACE_CAP`: the per-warp ring capacity in entries (events and time
//!   anchors): a power of two from 32 to 16777216, kept as asked, or `auto`
//!   (the default): 4096, lowered to fit the budget.
//! - `KTRACE_BUDGET_MB`: the most MiB an automatically sized trace buffer
//!   may take (default 256). Over it, the session lowers an automatic cap
//!   down to 256 entries, then traces one block in every `N` (unless the
//!   block sampling was chosen), and prints one line saying what it chose
//!   and why ([`sizing`]).
//! - `KTRACE_WARPS`: the warps traced in a traced block: `all`, or indices
//!   and ranges such as `0,4-7`.
//! - `KTRACE_BLOCKS`: the blocks traced: `all`; `first:N` (linear index
//!   below `N`); `stride:N` (every `N`-th block, from block 0); or
//!   `stride:N,max:M` (the same, at most `M` blocks).
//! - `KTRACE_LAUNCHES`: the launches traced, counted from 0 by
//!   [`TraceSession::finish_launch`]: `all` (the default), or indices and
//!   ranges such as `3`, `0-2`, `0,5`. The default stays `all` because a
//!   session that ends launches asked for their traces; one that has traced
//!   four launches of all says so once, with the memory they hold.
//! - `KTRACE_STALLS`: sample the launches' PCs with CUPTI (stall reasons
//!   per region, `ktrace stalls`; `docs/stalls.md`): `1` (one sample every
//!   2^10 cycles per SM), `period:N` (every 2^N, N from 5 to 31) or `0`.
//!   Sampling starts in [`load_module`] or [`TraceSession::new`], the
//!   samples go into the capture (`KTRACE_CAPTURE`, else `stalls.ktrace`),
//!   with tracing on or off ([`TraceConfig::stalls`] in code).
//! - `KTRACE_CUPTI`: the `libcupti.so` to load when it is not found in
//!   the toolkit (`CUDA_HOME`, `/usr/local/cuda*`), a PyPI wheel or
//!   `LD_LIBRARY_PATH`.
//!
//! # Features
//!
//! - `cuda` (default): the device edge — [`TraceSession`], [`TraceConfig`],
//!   [`open_device`], [`load_module`], [`KtraceArg`] as a cudarc kernel
//!   argument (`DeviceRepr`), [`load_module_variant`], [`load_module_pair`]
//!   ([`ModulePair`], [`FunctionPair`]), and the errors only
//!   the device raises
//!   (`NoDriver`, `Driver`, `BufferTooLarge`). It brings in cudarc, which
//!   loads the CUDA driver at run time: nothing links against it at build
//!   time.
//!
//! Without it (`default-features = false`) the crate is the pure core:
//! capture files, decoding, the Chrome trace and the summary, with no
//! cudarc anywhere in the dependency graph. The `ktrace` command and the
//! fuzz targets use it that way (CI checks that neither pulls in cudarc).
//! [`include_ktrace!`], [`KernelModule`], [`enabled`] and [`set_enabled`]
//! touch no device and are there either way.
//!
//! Why a feature and not a separate crate: [`KtraceArg`] reaches kernels
//! through cudarc's `DeviceRepr`, which only the crate that defines
//! `KtraceArg` (or cudarc) may implement for it; a separate device crate
//! would need a wrapper type. The code ktrace-build generates names
//! `ktrace_runtime::KernelModule` and `ktrace_runtime::KtraceArg`, one path
//! whether or not the user has a GPU. And the edge is one module over the
//! core's own types, errors and export options: as its own crate it would
//! have to be released in lockstep with the buffer layout anyway. cudarc
//! keeps its driver, NVRTC and library bindings the same way, one crate
//! with a feature each.
//!
//! # Modules
//!
//! The source tree follows the pipeline, and `ARCHITECTURE.md` in the
//! repository maps it: [`format`](mod@format) (what the device writes and a capture
//! holds: the buffer layout, the launch shape, the one view of a launch's
//! buffer, region names, capture files), [`decode`] (buffer to per-warp
//! timelines), [`export`] (timelines to Chrome and Perfetto traces,
//! summaries, filters and reports), [`analysis`], [`fill`], [`timeline`]
//! (placing launches on the host's clock), [`settings`] and [`sizing`]
//! (the environment's overrides and the buffer's budget), [`diagnostics`],
//! [`output`] and, with `cuda`, the device edge ([`session`]). The crate
//! root re-exports what a traced program names: the session, its
//! configuration and sampling, module loading, the capture and the error.
#![deny(missing_docs)]
// The docs name the device edge, which is not there without `cuda`.
#![cfg_attr(not(feature = "cuda"), allow(rustdoc::broken_intra_doc_links))]

pub mod format;

pub mod analysis;
pub mod decode;
pub mod diagnostics;
mod error;
pub mod export;
pub mod fill;
pub mod histogram;
pub mod output;
#[cfg(feature = "cuda")]
pub mod session;
pub mod settings;
pub mod sizing;
mod switch;
#[doc(hidden)]
pub mod synth;
pub mod threads;
pub mod timeline;

pub use error::{Error, Result};
pub use export::{export_launch, export_perfetto, ExportOptions};
pub use format::capture::{Capture, DeviceInfo, LaunchCapture};
pub use format::layout::KtraceArg;
pub use format::shape::{BlockSampling, WarpSampling};
#[cfg(feature = "cuda")]
pub use session::{
    load_module, load_module_pair, load_module_variant, open_device, FunctionPair, ModulePair,
    SessionPlan, TraceConfig, TraceSession,
};
pub use switch::{enabled, set_enabled, KernelModule};

/// Includes the Rust file that ktrace-build generated in `OUT_DIR`: the
/// region table `REGIONS` and a `kernels` module with one [`KernelModule`]
/// per kernel file. Needs no feature: loading the kernels
/// ([`load_module`]) is what needs `cuda`.
#[macro_export]
macro_rules! include_ktrace {
    () => {
        include!(concat!(env!("OUT_DIR"), "/ktrace.rs"));
    };
}
