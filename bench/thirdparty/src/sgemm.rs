//! siboehm/SGEMM_CUDA's `sgemmWarptiling<128,128,16,64,64,4,8,4,128>`
//! (kernels/sgemm_warptiling.cu) as its runner configures it: fp32, row-major
//! A (M x K), B (K x N) and C (M x N), M = N = K = 4096, 128 threads per
//! block, grid (N / 128, M / 128).
//!
//! alpha = 1 and beta = 0, so that C = A * B after every launch. The
//! runner uses alpha = 0.5 and beta = 3 on a random C, which a timing loop
//! would grow by 3x a launch into infinities; alpha and beta are kernel
//! arguments, so the machine code is the same (the kernel still reads C).

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use ktrace_runtime::KtraceArg;

use crate::problem::{Check, Problem, Result, Rng, SAMPLES};

/// M = N = K.
const N: usize = 4096;
/// The block tile (BM = BN) and depth (BK).
const TILE: usize = 128;
const BK: usize = 16;
const THREADS: u32 = 128;

/// The SGEMM on random inputs in [-1, 1).
pub struct Sgemm {
    stream: Arc<CudaStream>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    host_a: Vec<f32>,
    host_b: Vec<f32>,
}

impl Sgemm {
    /// Inputs made on the host and copied to the device.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        let mut rng = Rng::new(0x0053_4745_4d4d);
        let host_a: Vec<f32> = (0..N * N).map(|_| rng.unit()).collect();
        let host_b: Vec<f32> = (0..N * N).map(|_| rng.unit()).collect();
        Ok(Sgemm {
            stream: stream.clone(),
            a: stream.clone_htod(&host_a)?,
            b: stream.clone_htod(&host_b)?,
            c: stream.alloc_zeros::<f32>(N * N)?,
            host_a,
            host_b,
        })
    }

    fn warps() -> u64 {
        ((N / TILE) * (N / TILE)) as u64 * u64::from(THREADS / 32)
    }
}

impl Problem for Sgemm {
    fn name(&self) -> &'static str {
        "sgemm"
    }

    fn function(&self) -> &'static str {
        "sgemm_warptiling"
    }

    fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((N / TILE) as u32, (N / TILE) as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn cap(&self) -> u32 {
        4096
    }

    fn flops(&self) -> f64 {
        2.0 * (N as f64).powi(3)
    }

    fn max_events_per_warp(&self) -> u64 {
        // A "load" and a "compute" pair per k-tile.
        (N / BK) as u64 * 4
    }

    fn expected_events(&self) -> u64 {
        Self::warps() * self.max_events_per_warp()
    }

    fn prepare(&self, _f: &CudaFunction) -> Result<()> {
        Ok(())
    }

    fn launch(
        &mut self,
        f: &CudaFunction,
        arg: &KtraceArg,
    ) -> std::result::Result<(), DriverError> {
        let n = N as i32;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let cfg = self.config();
        let mut l = self.stream.launch_builder(f);
        l.arg(&n)
            .arg(&n)
            .arg(&n)
            .arg(&alpha)
            .arg(&self.a)
            .arg(&self.b)
            .arg(&beta)
            .arg(&mut self.c)
            .arg(arg);
        unsafe { l.launch(cfg) }.map(|_| ())
    }

    fn clear_output(&mut self) -> Result<()> {
        Ok(self.stream.memset_zeros(&mut self.c)?)
    }

    fn check(&self) -> Result<Check> {
        let c = self.stream.clone_dtoh(&self.c)?;
        let mut rng = Rng::new(512);
        let samples = (0..SAMPLES).map(|_| {
            let (i, j) = (rng.below(N), rng.below(N));
            let (mut exact, mut terms) = (0f64, 0f64);
            for k in 0..N {
                let t = f64::from(self.host_a[i * N + k]) * f64::from(self.host_b[k * N + j]);
                exact += t;
                terms += t.abs();
            }
            (f64::from(c[i * N + j]), exact, terms)
        });
        // fp32 sums of 4,096 products: a few ulps of the terms' size.
        Ok(Check::of(samples.collect::<Vec<_>>(), 1e-5))
    }
}
