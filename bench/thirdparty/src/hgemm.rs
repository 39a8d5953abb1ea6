//! Bruce-Lee-LY/cuda_hgemm's `mmaAsyncStage3Kernel`
//! (kernels/hgemm_mma_stage3.cu) as its launcher `mmaAsyncStage3`
//! configures it: fp16 A (M x K, row-major) and B (N x K, K-major) into C
//! (M x N, row-major), C = A * B^T with fp16 accumulators, M = N = K =
//! 8192; 256 threads, grid (16, M / 256, N / 2048), 73,728 bytes of dynamic
//! shared memory. Inputs uniform in [-1, 1), as its tester draws them.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use ktrace_runtime::KtraceArg;

use crate::problem::{Check, Problem, Result, Rng, SAMPLES};

/// M = N = K.
const SIZE: usize = 8192;
const THREADS: u32 = 256;
/// The block tile: BLOCK_ROWS x BLOCK_COLS, and the blocks of a row of the
/// grid's x dimension (BLOCK_STRIDE).
const BLOCK_ROWS: usize = 256;
const BLOCK_COLS: usize = 128;
const BLOCK_STRIDE: usize = 16;
/// max(3 stages of (256 + 128) x 32 halves, 256 x 128 halves), in bytes.
const SMEM_BYTES: u32 = 73_728;

/// `x` rounded to the nearest fp16 (ties to even), as its bits.
pub fn f16(x: f32) -> u16 {
    let sign = ((x.to_bits() >> 16) & 0x8000) as u16;
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103_515_6e-5 {
        // Subnormal: a multiple of 2^-24.
        return sign | (a * 16_777_216.0).round_ties_even() as u16;
    }
    let bits = a.to_bits();
    let exp = (bits >> 23) as i32 - 127 + 15;
    let mant = bits & 0x7f_ffff;
    let mut h = ((exp as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

/// The value of the fp16 bits `h`.
pub fn from_f16(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f32::from(h & 0x3ff);
    sign * match exp {
        0 => mant * (-24f32).exp2(),
        31 if mant == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + mant / 1024.0) * ((exp - 15) as f32).exp2(),
    }
}

/// The HGEMM on random fp16 inputs.
pub struct Hgemm {
    stream: Arc<CudaStream>,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    host_a: Vec<u16>,
    host_b: Vec<u16>,
}

impl Hgemm {
    /// Inputs made on the host and copied to the device.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        let mut rng = Rng::new(0x0048_4745_4d4d);
        let host_a: Vec<u16> = (0..SIZE * SIZE).map(|_| f16(rng.unit())).collect();
        let host_b: Vec<u16> = (0..SIZE * SIZE).map(|_| f16(rng.unit())).collect();
        Ok(Hgemm {
            stream: stream.clone(),
            a: stream.clone_htod(&host_a)?,
            b: stream.clone_htod(&host_b)?,
            c: stream.alloc_zeros::<u16>(SIZE * SIZE)?,
            host_a,
            host_b,
        })
    }

    fn warps() -> u64 {
        let (grid, _, _) = Self::grid();
        u64::from(grid) * u64::from(THREADS / 32)
    }

    /// Blocks in all, and the grid's y and z.
    fn grid() -> (u32, u32, u32) {
        let y = (SIZE / BLOCK_ROWS) as u32;
        let z = (SIZE / (BLOCK_COLS * BLOCK_STRIDE)) as u32;
        (BLOCK_STRIDE as u32 * y * z, y, z)
    }
}

impl Problem for Hgemm {
    fn name(&self) -> &'static str {
        "hgemm"
    }

    fn function(&self) -> &'static str {
        "hgemm_mma_stage3"
    }

    fn config(&self) -> LaunchConfig {
        let (_, y, z) = Self::grid();
        LaunchConfig {
            grid_dim: (BLOCK_STRIDE as u32, y, z),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SMEM_BYTES,
        }
    }

    fn cap(&self) -> u32 {
        2048
    }

    fn flops(&self) -> f64 {
        2.0 * (SIZE as f64).powi(3)
    }

    fn max_events_per_warp(&self) -> u64 {
        // "mma", "load" and "wait" in each iteration of the main loop, whose
        // k-tiles (16 deep) run from the third stage's, two at a time.
        let k_tiles = (SIZE / 16) as u64;
        (k_tiles - 4) / 2 * 6
    }

    fn expected_events(&self) -> u64 {
        Self::warps() * self.max_events_per_warp()
    }

    fn prepare(&self, f: &CudaFunction) -> Result<()> {
        f.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            SMEM_BYTES as i32,
        )?;
        Ok(())
    }

    fn launch(
        &mut self,
        f: &CudaFunction,
        arg: &KtraceArg,
    ) -> std::result::Result<(), DriverError> {
        let n = SIZE as u64;
        let cfg = self.config();
        let mut l = self.stream.launch_builder(f);
        l.arg(&self.a)
            .arg(&self.b)
            .arg(&mut self.c)
            .arg(&n)
            .arg(&n)
            .arg(&n)
            .arg(arg);
        unsafe { l.launch(cfg) }.map(|_| ())
    }

    fn clear_output(&mut self) -> Result<()> {
        Ok(self.stream.memset_zeros(&mut self.c)?)
    }

    fn check(&self) -> Result<Check> {
        let c = self.stream.clone_dtoh(&self.c)?;
        let mut rng = Rng::new(8192);
        let samples = (0..SAMPLES).map(|_| {
            let (m, n) = (rng.below(SIZE), rng.below(SIZE));
            let (mut exact, mut terms) = (0f64, 0f64);
            for k in 0..SIZE {
                let t = f64::from(from_f16(self.host_a[m * SIZE + k]))
                    * f64::from(from_f16(self.host_b[n * SIZE + k]));
                exact += t;
                terms += t.abs();
            }
            (f64::from(from_f16(c[m * SIZE + n])), exact, terms)
        });
        // fp16 accumulators, rounded after every mma of 16 products: some
        // 1e-4 of sum |a*b| here; a wrong tile is off by |C| (~1e-2 of it).
        Ok(Check::of(samples.collect::<Vec<_>>(), 5e-3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp16_rounds_to_nearest_even_and_back() {
        assert_eq!(f16(1.0), 0x3c00);
        assert_eq!(f16(-2.0), 0xc000);
        assert_eq!(f16(0.0), 0);
        assert_eq!(f16(65504.0), 0x7bff);
        assert_eq!(f16(1e6), 0x7c00);
        // 1 + 2^-11 is a tie: to even (1.0); 1 + 3 * 2^-11 rounds up.
        assert_eq!(f16(1.0 + (-11f32).exp2()), 0x3c00);
        assert_eq!(f16(1.0 + 3.0 * (-11f32).exp2()), 0x3c02);
        // The smallest subnormal.
        assert_eq!(f16((-24f32).exp2()), 1);
        for x in [0.333_333_34f32, -0.75, 3.140_625, 6.1e-5, -1.0e-6] {
            let back = from_f16(f16(x));
            assert!((back - x).abs() <= x.abs() * 1e-3 + 6e-8, "{x} -> {back}");
        }
        assert_eq!(from_f16(0x3555), 0.333_251_95);
    }
}
