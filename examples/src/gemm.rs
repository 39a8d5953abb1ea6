//! The warp-specialized bf16 GEMM of `examples/kernels/gemm.cu`: inputs,
//! TMA descriptors, launch and the check against an fp32 reference. Shared
//! by the `gemm` example and the `dvfs` example (which runs it as load on a
//! second stream).

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUtensorMap};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use ktrace_runtime::KtraceArg;

use crate::{fail, kernels, sm_count, Rng};

// Mirrors examples/kernels/gemm.cu.
/// Tile rows.
pub const BM: usize = 128;
/// Tile columns.
pub const BN: usize = 256;
/// Tile depth.
pub const BK: usize = 64;
/// Threads per CTA.
pub const THREADS: u32 = 384;
/// Dynamic shared memory per CTA.
pub const SMEM_BYTES: u32 = 197_760;

/// A TMA descriptor passed by value as a `__grid_constant__` parameter.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct TensorMap(CUtensorMap);
// SAFETY: CUtensorMap is plain bytes, passed to the kernel by value.
unsafe impl DeviceRepr for TensorMap {}

fn tensor_map(ptr: u64, rows: usize, k: usize, box_rows: u32) -> TensorMap {
    let mut map = MaybeUninit::<CUtensorMap>::uninit();
    let dims = [k as u64, rows as u64];
    let strides = [(k * 2) as u64];
    let boxes = [BK as u32, box_rows];
    let elem = [1u32, 1];
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            2,
            ptr as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::cudaError_enum::CUDA_SUCCESS {
        fail(&format!("cuTensorMapEncodeTiled: {r:?}"));
    }
    TensorMap(unsafe { map.assume_init() })
}

fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}
fn from_bf16(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// The bf16 inputs A and B as the host made them.
pub type HostInputs = (Vec<u16>, Vec<u16>);

pub struct Problem {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of C (rows of B, which is stored N x K).
    pub n: usize,
    /// The reduction dimension.
    pub k: usize,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    /// The output, bf16.
    pub c: CudaSlice<u16>,
    a_map: TensorMap,
    b_map: TensorMap,
    /// The launch configuration (one persistent CTA per SM at most).
    pub cfg: LaunchConfig,
}

impl Problem {
    /// Random bf16 inputs of the given shape on the device.
    pub fn new(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<(Self, HostInputs), Box<dyn std::error::Error>> {
        if !m.is_multiple_of(BM) || !n.is_multiple_of(BN) || !k.is_multiple_of(BK) || k == 0 {
            fail(&format!("M, N, K must be multiples of {BM}, {BN}, {BK}"));
        }
        let mut rng = Rng::new(0x6b74_7261_6365 ^ (m * n * k) as u64);
        let ha: Vec<u16> = (0..m * k).map(|_| bf16(rng.unit())).collect();
        let hb: Vec<u16> = (0..n * k).map(|_| bf16(rng.unit())).collect();
        let a = stream.clone_htod(&ha)?;
        let b = stream.clone_htod(&hb)?;
        let c = stream.alloc_zeros::<u16>(m * n)?;
        let (pa, _ga) = a.device_ptr(stream);
        let (pb, _gb) = b.device_ptr(stream);
        let a_map = tensor_map(pa, m, k, BM as u32);
        let b_map = tensor_map(pb, n, k, BN as u32);
        let tiles = (m / BM) * (n / BN);
        let grid = (sm_count(ctx)? as usize).min(tiles) as u32;
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SMEM_BYTES,
        };
        drop((_ga, _gb));
        Ok((
            Problem {
                m,
                n,
                k,
                a,
                b,
                c,
                a_map,
                b_map,
                cfg,
            },
            (ha, hb),
        ))
    }

    /// Launches the kernel `f` (traced or untraced build) on `stream`.
    pub fn launch(
        &mut self,
        stream: &Arc<CudaStream>,
        f: &CudaFunction,
        trace: &KtraceArg,
    ) -> Result<(), cudarc::driver::DriverError> {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let mut l = stream.launch_builder(f);
        l.arg(&self.a_map)
            .arg(&self.b_map)
            .arg(&mut self.c)
            .arg(&m)
            .arg(&n)
            .arg(&k)
            .arg(trace);
        unsafe { l.launch(self.cfg) }.map(|_| ())
    }

    /// Relative Frobenius error of C against the fp32 reference, and
    /// whether every element was written.
    pub fn check(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        ha: &[u16],
        hb: &[u16],
    ) -> Result<f64, Box<dyn std::error::Error>> {
        let module = ktrace_runtime::load_module(ctx, &kernels::GEMM_REFERENCE)?;
        let f = module.load_function("gemm_reference")?;
        let mut r = stream.alloc_zeros::<f32>(self.m * self.n)?;
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let cfg = LaunchConfig {
            grid_dim: ((self.n / 32) as u32, (self.m / 32) as u32, 1),
            block_dim: (32, 32, 1),
            shared_mem_bytes: 0,
        };
        let mut l = stream.launch_builder(&f);
        l.arg(&self.a)
            .arg(&self.b)
            .arg(&mut r)
            .arg(&m)
            .arg(&n)
            .arg(&k);
        unsafe { l.launch(cfg) }?;
        let c = stream.clone_dtoh(&self.c)?;
        let r = stream.clone_dtoh(&r)?;
        let (mut num, mut den) = (0f64, 0f64);
        for (i, (&x, &y)) in c.iter().zip(&r).enumerate() {
            let x = from_bf16(x) as f64;
            if !x.is_finite() {
                fail(&format!(
                    "C[{}][{}] is {x} (unwritten or wrong)",
                    i / self.n,
                    i % self.n
                ));
            }
            num += (x - y as f64).powi(2);
            den += (y as f64).powi(2);
        }
        // A few elements in f64 on the CPU, against the GPU reference too.
        let mut rng = Rng::new(7);
        for _ in 0..16 {
            let (i, j) = (
                (rng.next_u64() as usize) % self.m,
                (rng.next_u64() as usize) % self.n,
            );
            let exact: f64 = (0..self.k)
                .map(|kk| {
                    from_bf16(ha[i * self.k + kk]) as f64 * from_bf16(hb[j * self.k + kk]) as f64
                })
                .sum();
            let scale = (self.k as f64).sqrt() / 3.0;
            if (exact - r[i * self.n + j] as f64).abs() > 1e-3 * scale {
                fail(&format!(
                    "reference C[{i}][{j}] = {} but f64 gives {exact}",
                    r[i * self.n + j]
                ));
            }
        }
        Ok((num / den).sqrt())
    }
}

/// Loads the GEMM kernel from a cubin image and allows its shared memory.
pub fn load_gemm(
    ctx: &Arc<CudaContext>,
    image: &'static [u8],
) -> Result<CudaFunction, Box<dyn std::error::Error>> {
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image.to_vec()))?;
    gemm_function(&module)
}

/// Loads the traced (`traced`) or untraced build of the GEMM kernel,
/// whatever `KTRACE` says, and allows its shared memory.
pub fn load_gemm_variant(
    ctx: &Arc<CudaContext>,
    traced: bool,
) -> Result<CudaFunction, Box<dyn std::error::Error>> {
    load_gemm_module_variant(ctx, &kernels::GEMM, traced)
}

/// Loads the traced (`traced`) or untraced build of `module`, one of the
/// GEMM kernel's builds (`kernels::GEMM`, or `kernels::GEMM_NEWEST` with the
/// newest-N recorder), and allows its shared memory.
pub fn load_gemm_module_variant(
    ctx: &Arc<CudaContext>,
    module: &ktrace_runtime::KernelModule,
    traced: bool,
) -> Result<CudaFunction, Box<dyn std::error::Error>> {
    let module = ktrace_runtime::load_module_variant(ctx, module, traced)?;
    gemm_function(&module)
}

fn gemm_function(module: &Arc<CudaModule>) -> Result<CudaFunction, Box<dyn std::error::Error>> {
    let f = module.load_function("ktrace_gemm_bf16_tn")?;
    f.set_attribute(
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        SMEM_BYTES as i32,
    )?;
    Ok(f)
}

/// Ring entries per consumer warp: T * (KT * 4 + 2) events, T tiles per
/// CTA, and as many time anchors at most.
pub fn cap_for(p: &Problem) -> u32 {
    let tiles = (p.m / BM) * (p.n / BN);
    let per_cta = tiles.div_ceil(p.cfg.grid_dim.0 as usize);
    let events = per_cta * ((p.k / BK) * 4 + 2);
    // Room for a time anchor after every event, at most.
    (2 * events as u32).next_power_of_two().max(32)
}
