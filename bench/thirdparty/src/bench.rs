//! `tp_bench ROUNDS PASSES [FILTER]`: per kernel, the untraced build (twice:
//! the second is the noise floor) and each design's traced build with every
//! warp traced (`every`), with tracing off (`off`: the traced build given
//! the null argument) and with every warp of 1 block in 33 traced
//! (`1in33`), timed in rotated rounds; then each design's `every` launched
//! once more through a real session, checked and decoded (src/capture.rs).

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};
use ktrace_runtime::{BlockSampling, FunctionPair, KtraceArg, TraceConfig, TraceSession};

use crate::designs::{DESIGNS, KERNELS};
use crate::fastcu::Fastcu;
use crate::hgemm::Hgemm;
use crate::problem::{Problem, Result};
use crate::sgemm::Sgemm;
use crate::softmax::Softmax;
use crate::timing::{medians, row, Config, WARMUP_ROUNDS};
use crate::{capture, MODULES, REGIONS};

/// Blocks of the sampled configuration: every 33rd.
const STRIDE: u32 = 33;

/// One kernel with its builds and its two trace buffers, set up once.
struct Kernel {
    problem: Box<dyn Problem>,
    /// `(design, both builds)` of the designs FILTER keeps.
    designs: Vec<(&'static str, FunctionPair)>,
    /// The untraced build.
    untraced: cudarc::driver::CudaFunction,
    /// Every warp of every block traced, and every warp of 1 block in 33:
    /// buffers allocated once, their arguments given to every traced
    /// launch, never copied back (`discard` at the end).
    every: TraceSession,
    some: TraceSession,
}

impl Kernel {
    fn new(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        problem: Box<dyn Problem>,
        filter: Option<&str>,
    ) -> Result<Self> {
        let name = problem.name();
        let keep = |design: &str| filter.is_none_or(|f| name.contains(f) || design.contains(f));
        let mut designs = Vec::new();
        for (kernel, design, module) in MODULES {
            if *kernel != name || !keep(design) {
                continue;
            }
            let pair =
                ktrace_runtime::load_module_pair(ctx, module)?.load_function(problem.function())?;
            problem.prepare(pair.traced())?;
            problem.prepare(pair.untraced())?;
            designs.push((*design, pair));
        }
        // Every design's untraced build is the same kernel (the markers
        // compile to nothing; scripts/sass_check.sh): the first design's
        // serves, whichever designs FILTER keeps.
        let base = MODULES
            .iter()
            .find(|(k, _, _)| *k == name)
            .ok_or_else(|| format!("{name}: no design is on in src/designs.rs"))?;
        let untraced = ktrace_runtime::load_module_variant(ctx, &base.2, false)?
            .load_function(problem.function())?;
        problem.prepare(&untraced)?;
        let session = |blocks| -> Result<TraceSession> {
            let mut tc = TraceConfig::for_launch(&problem.config()).kernel(name);
            tc.cap = problem.cap();
            tc.blocks = blocks;
            tc.quiet = true;
            tc.clock_sync = false;
            Ok(TraceSession::new(stream, tc, REGIONS)?)
        };
        ktrace_runtime::set_enabled(Some(true));
        let every = session(BlockSampling::All)?;
        let some = session(BlockSampling::Stride(STRIDE))?;
        Ok(Kernel {
            untraced,
            problem,
            designs,
            every,
            some,
        })
    }

    /// The configurations, in the tables' order.
    fn configs(&self) -> Vec<Config> {
        let (every, some) = (self.every.arg(), self.some.arg());
        let mut c = vec![
            Config {
                design: "untraced",
                label: "-",
                function: self.untraced.clone(),
                arg: KtraceArg::OFF,
            },
            Config {
                design: "untraced",
                label: "copy",
                function: self.untraced.clone(),
                arg: KtraceArg::OFF,
            },
        ];
        for (design, pair) in &self.designs {
            for (label, arg) in [("every", every), ("off", KtraceArg::OFF), ("1in33", some)] {
                c.push(Config {
                    design,
                    label,
                    function: pair.traced().clone(),
                    arg,
                });
            }
        }
        c
    }

    /// `  sgemm: 14 configurations; trace cap ...`.
    fn header(&self) -> String {
        let mib = |b: u64| format!("{:.0} MiB", b as f64 / f64::from(1 << 20));
        format!(
            "  {}: {} configurations; trace cap {} entries per warp ({} events per warp at most), \
             buffers {} (every warp) + {} (1 block in {STRIDE})",
            self.problem.name(),
            2 + 3 * self.designs.len(),
            self.problem.cap(),
            self.problem.max_events_per_warp(),
            mib(self.every.sizing().bytes()),
            mib(self.some.sizing().bytes())
        )
    }
}

/// Runs `passes` passes of `rounds` rounds over the kernels and designs
/// that `filter` keeps (a substring of a kernel's or a design's name).
pub fn run(rounds: usize, passes: usize, filter: Option<&str>) -> Result<()> {
    let ctx = ktrace_runtime::open_device(0)?;
    let stream = ctx.default_stream();
    let (major, minor) = (
        ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    if (major, minor) != (9, 0) {
        return Err(format!(
            "{}: compute capability {major}.{minor}; the kernels are built for sm_90a (H100, H200)",
            ctx.name()?
        )
        .into());
    }
    let clock_khz = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?
        .max(0) as u64;
    let mut kernels = Vec::new();
    for (name, _) in KERNELS {
        let wanted = filter.is_none_or(|f| {
            name.contains(f)
                || DESIGNS
                    .iter()
                    .any(|(d, on, _)| on.contains(name) && d.contains(f))
        });
        if !wanted {
            continue;
        }
        let problem: Box<dyn Problem> = match *name {
            "sgemm" => Box::new(Sgemm::new(&stream)?),
            "fastcu" => Box::new(Fastcu::new(&stream)?),
            "softmax" => Box::new(Softmax::new(&stream)?),
            "hgemm" => Box::new(Hgemm::new(&stream)?),
            other => {
                return Err(format!(
                    "src/designs.rs names a kernel {other} that main does not know"
                )
                .into())
            }
        };
        kernels.push(Kernel::new(&ctx, &stream, problem, filter)?);
    }
    if kernels.is_empty() {
        return Err(format!(
            "FILTER {:?} matches no kernel and no design that is on",
            filter.unwrap_or("")
        )
        .into());
    }
    println!("{}, CUDA driver API {}", ctx.name()?, driver_version());
    for pass in 1..=passes {
        println!("=== pass {pass} of {passes}");
        for k in &kernels {
            println!("{}", k.header());
        }
        println!(
            "median of {rounds} launches per configuration and pass, each launch timed with CUDA \
             events (after {WARMUP_ROUNDS} untimed rounds); pct: against the untraced build's \
             median of the same pass"
        );
        for k in &mut kernels {
            let configs = k.configs();
            let ms = medians(&ctx, k.problem.as_mut(), &configs, rounds)?;
            let name = k.problem.name();
            for (c, &t) in configs.iter().zip(&ms) {
                println!("{}", row(name, c.design, c.label, t, ms[0]));
            }
            println!(
                "{name:<7} untraced: {:.1} TFLOP/s (per pass)",
                k.problem.flops() / (ms[0] * 1e-3) / 1e12
            );
            // Each kernel's captures right after its own timed launches,
            // so that they run at the clock that kernel keeps the GPU at,
            // not at the one the next kernel leaves behind.
            for (design, pair) in &k.designs {
                let line = capture::line(
                    &stream,
                    k.problem.as_mut(),
                    pair,
                    design,
                    clock_khz,
                    REGIONS,
                );
                println!("{line}");
            }
        }
    }
    for k in kernels {
        k.every.discard();
        k.some.discard();
    }
    Ok(())
}

/// The CUDA version the driver supports, `13.0`, or `?`.
fn driver_version() -> String {
    let mut v = 0i32;
    // SAFETY: writes one int.
    let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    if r == cudarc::driver::sys::cudaError_enum::CUDA_SUCCESS {
        format!("{}.{}", v / 1000, (v % 1000) / 10)
    } else {
        "?".into()
    }
}
