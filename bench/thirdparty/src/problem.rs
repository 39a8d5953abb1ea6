//! What the bench needs of a kernel: its launch, its trace buffer's size,
//! the events it records, and a check of its result against a reference
//! computed on the host for sampled output elements.

use cudarc::driver::{CudaFunction, DriverError, LaunchConfig};
use ktrace_runtime::KtraceArg;

/// The bench's error: anything, said in one line.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Output elements checked against the host's reference.
pub const SAMPLES: usize = 512;

/// One kernel on its inputs, ready to launch on its stream.
pub trait Problem {
    /// The kernel's name in the tables (`sgemm`, `fastcu`).
    fn name(&self) -> &'static str;
    /// The `extern "C"` function in each module.
    fn function(&self) -> &'static str;
    /// Grid, block and dynamic shared memory.
    fn config(&self) -> LaunchConfig;
    /// Ring entries per warp: enough that no warp overflows.
    fn cap(&self) -> u32;
    /// Floating-point operations of one launch.
    fn flops(&self) -> f64;
    /// The most events a warp records in one launch.
    fn max_events_per_warp(&self) -> u64;
    /// The events every warp of a launch records together.
    fn expected_events(&self) -> u64;
    /// Sets what the function needs before its first launch (its dynamic
    /// shared memory).
    fn prepare(&self, f: &CudaFunction) -> Result<()>;
    /// Launches `f` (a build of the kernel) with `arg` on the stream.
    fn launch(&mut self, f: &CudaFunction, arg: &KtraceArg)
        -> std::result::Result<(), DriverError>;
    /// Zeroes the output, so that a check sees what the next launch wrote.
    fn clear_output(&mut self) -> Result<()>;
    /// Copies the output back and checks [`SAMPLES`] elements of it.
    fn check(&self) -> Result<Check>;
}

/// A result checked on sampled elements against a host reference in f64.
#[derive(Clone, Copy, Debug, Default)]
pub struct Check {
    /// The largest |got - exact| / |exact|.
    pub max_rel: f64,
    /// The largest |got - exact| / sum_k |a_k * b_k|: the error against
    /// the size of the terms, which a cancelling sum cannot inflate.
    pub max_scaled: f64,
    /// Elements that were not finite.
    pub non_finite: usize,
    /// The most `max_scaled` may be for the result to pass.
    pub tolerance: f64,
}

impl Check {
    /// Folds the sampled elements `(got, exact, sum of |terms|)`.
    pub fn of(samples: impl IntoIterator<Item = (f64, f64, f64)>, tolerance: f64) -> Check {
        let mut c = Check {
            tolerance,
            ..Check::default()
        };
        for (got, exact, terms) in samples {
            if !got.is_finite() {
                c.non_finite += 1;
                continue;
            }
            let err = (got - exact).abs();
            if exact != 0.0 {
                c.max_rel = c.max_rel.max(err / exact.abs());
            }
            if terms > 0.0 {
                c.max_scaled = c.max_scaled.max(err / terms);
            }
        }
        c
    }

    /// Whether every sampled element was finite and within the tolerance.
    pub fn ok(&self) -> bool {
        self.non_finite == 0 && self.max_scaled <= self.tolerance
    }

    /// `max rel err 2.68e-5 (max err / sum|a*b| 1.19e-7, non-finite 0): ok`.
    pub fn describe(&self) -> String {
        format!(
            "max rel err {:.2e} (max err / sum|a*b| {:.2e}, non-finite {}): {}",
            self.max_rel,
            self.max_scaled,
            self.non_finite,
            if self.ok() { "ok" } else { "FAIL" }
        )
    }
}

/// A small deterministic generator for inputs and samples (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
