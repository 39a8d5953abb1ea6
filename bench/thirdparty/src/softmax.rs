//! karpathy/llm.c's `softmax_forward_kernel4` (kernels/softmax_llmc.cu) as
//! its launcher `softmax_forward4` configures it: one block of 1,024
//! threads per row, 32 floats of dynamic shared memory, on N = 16,384 rows
//! of C = 4,096 fp32 values: 524,288 warps a launch, each short-lived (four
//! elements per thread and phase) and memory-bound.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use ktrace_runtime::KtraceArg;

use crate::problem::{Check, Problem, Result, Rng, SAMPLES};

/// Rows.
const N: usize = 16_384;
/// Values per row.
const C: usize = 4_096;
const THREADS: u32 = 1_024;

/// The softmax on random inputs in [-4, 4).
pub struct Softmax {
    stream: Arc<CudaStream>,
    inp: CudaSlice<f32>,
    out: CudaSlice<f32>,
    host_inp: Vec<f32>,
}

impl Softmax {
    /// Inputs made on the host and copied to the device.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        let mut rng = Rng::new(0x0053_4f46_544d);
        let host_inp: Vec<f32> = (0..N * C).map(|_| 4.0 * rng.unit()).collect();
        Ok(Softmax {
            stream: stream.clone(),
            inp: stream.clone_htod(&host_inp)?,
            out: stream.alloc_zeros::<f32>(N * C)?,
            host_inp,
        })
    }

    fn warps() -> u64 {
        N as u64 * u64::from(THREADS / 32)
    }
}

impl Problem for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }

    fn function(&self) -> &'static str {
        "softmax_forward_kernel4"
    }

    fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (N as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: THREADS / 32 * 4,
        }
    }

    fn cap(&self) -> u32 {
        32
    }

    fn flops(&self) -> f64 {
        // A max, an exp (counted as one), a sum and a division per value.
        4.0 * (N * C) as f64
    }

    fn max_events_per_warp(&self) -> u64 {
        // "max", "exp" and "normalize", a begin and an end each.
        6
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
        let (n, c) = (N as i32, C as i32);
        let cfg = self.config();
        let mut l = self.stream.launch_builder(f);
        l.arg(&mut self.out).arg(&self.inp).arg(&n).arg(&c).arg(arg);
        unsafe { l.launch(cfg) }.map(|_| ())
    }

    fn clear_output(&mut self) -> Result<()> {
        Ok(self.stream.memset_zeros(&mut self.out)?)
    }

    fn check(&self) -> Result<Check> {
        let out = self.stream.clone_dtoh(&self.out)?;
        let mut rng = Rng::new(4096);
        let samples: Vec<(f64, f64, f64)> = (0..SAMPLES)
            .map(|_| {
                let (i, j) = (rng.below(N), rng.below(C));
                let row = &self.host_inp[i * C..(i + 1) * C];
                let max = row
                    .iter()
                    .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
                let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
                let exact = (f64::from(row[j]) - max).exp() / sum;
                // The error against the value itself: softmax has no
                // cancelling sum.
                (f64::from(out[i * C + j]), exact, exact)
            })
            .collect();
        // fp32 exponentials and sums of 4,096 positive terms.
        Ok(Check::of(samples, 1e-5))
    }
}
