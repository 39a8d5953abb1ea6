//! A warp-specialized bf16 GEMM (TMA, mbarriers, wgmma on sm_90a) traced per
//! k-tile: producer "wait_empty" and "load", consumers "wait_full" and
//! "mma", and "epilogue" per tile. Checks C against an fp32 reference and
//! prints TFLOP/s.
//!
//! `KTRACE=1 cargo run --release --example gemm [-- M N K]`
//! `cargo run --release --example gemm -- --bench [REPS] [M N K]` times the
//! traced kernel (tracing all warps, and with a null buffer) against the
//! untraced one, alternating launches, and prints the medians.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUtensorMap};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use ktrace_examples::{
    announce, fail, gpu, kernels, median, sm_count, time_ms, trace_config, Rng, REGIONS,
};
use ktrace_runtime::{KtraceArg, TraceSession, WarpSampling};

// Mirrors examples/kernels/gemm.cu.
const BM: usize = 128;
const BN: usize = 256;
const BK: usize = 64;
const THREADS: u32 = 384;
const SMEM_BYTES: u32 = 197_760;

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
type HostInputs = (Vec<u16>, Vec<u16>);

struct Problem {
    m: usize,
    n: usize,
    k: usize,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    a_map: TensorMap,
    b_map: TensorMap,
    cfg: LaunchConfig,
}

impl Problem {
    fn new(
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

    fn launch(
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
    fn check(
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = args.first().is_some_and(|a| a == "--bench");
    let rest: Vec<usize> = args
        .iter()
        .skip(bench as usize)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (reps, dims) = if bench && (rest.len() == 1 || rest.len() == 4) {
        (rest[0], &rest[1..])
    } else {
        (60, &rest[..])
    };
    let (m, n, k) = match dims {
        [m, n, k] => (*m, *n, *k),
        _ => (8192, 8192, 8192),
    };
    announce("gemm");
    let (ctx, stream) = gpu();
    let (mut p, (ha, hb)) = Problem::new(&ctx, &stream, m, n, k)?;
    let flops = 2.0 * (m * n * k) as f64;
    let load = |img: &'static [u8]| -> Result<CudaFunction, Box<dyn std::error::Error>> {
        let module = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(img.to_vec()))?;
        let f = module.load_function("ktrace_gemm_bf16_tn")?;
        f.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            SMEM_BYTES as i32,
        )?;
        Ok(f)
    };

    if bench {
        // Both builds side by side, launches alternating.
        let untraced = load(kernels::GEMM.untraced)?;
        let traced = load(kernels::GEMM.traced)?;
        ktrace_runtime::set_enabled(Some(true));
        let mut tc = trace_config("gemm_bench", &p.cfg);
        tc.cap = cap_for(&p);
        tc.quiet = true;
        let session = TraceSession::new(&stream, tc, REGIONS)?;
        let on = session.arg();
        let off = KtraceArg::OFF;
        for _ in 0..5 {
            p.launch(&stream, &untraced, &off)?;
            p.launch(&stream, &traced, &on)?;
        }
        let (mut tu, mut tt, mut t0) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            tu.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &untraced, &off)
            })?);
            tt.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &traced, &on)
            })?);
            t0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &traced, &off)
            })?);
        }
        let (mu, mt, m0) = (median(&mut tu), median(&mut tt), median(&mut t0));
        let tf = |ms: f32| flops / (ms as f64 * 1e-3) / 1e12;
        println!("gemm {m}x{n}x{k}, {reps} alternating launches each, medians:");
        println!(
            "  untraced                 {mu:.4} ms  {:.1} TFLOP/s",
            tf(mu)
        );
        println!(
            "  traced, all warps        {mt:.4} ms  {:.1} TFLOP/s  {:+.2}%",
            tf(mt),
            100.0 * (mt / mu - 1.0)
        );
        println!(
            "  traced, null buffer      {m0:.4} ms  {:.1} TFLOP/s  {:+.2}%",
            tf(m0),
            100.0 * (m0 / mu - 1.0)
        );
        let err = p.check(&ctx, &stream, &ha, &hb)?;
        println!("  result check: relative error {err:.2e}");
        if err > 1e-2 {
            fail("GEMM result is wrong");
        }
        std::mem::forget(session);
        return Ok(());
    }

    let module = ktrace_runtime::load_module(&ctx, &kernels::GEMM)?;
    drop(module);
    let f = load(kernels::GEMM.image(ktrace_runtime::enabled()))?;
    // Untraced timing (or traced with a null buffer when KTRACE=1: the timed
    // runs never write a trace).
    let mut t = time_ms(&ctx, &stream, 5, 30, || {
        p.launch(&stream, &f, &KtraceArg::OFF)
    })?;
    let ms = median(&mut t);
    println!(
        "gemm {m}x{n}x{k}: {ms:.4} ms, {:.1} TFLOP/s (median of 30)",
        flops / (ms as f64 * 1e-3) / 1e12
    );
    // Poison C, then the (traced) run that is checked.
    let nan = vec![0x7fc0u16; m * n];
    stream.memcpy_htod(&nan, &mut p.c)?;
    let mut tc = trace_config("gemm", &p.cfg);
    tc.cap = cap_for(&p);
    if let Ok(v) = std::env::var("GEMM_TRACE_WARPS") {
        let list: Vec<u32> = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        tc.warps = WarpSampling::List(list);
    }
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();
    p.launch(&stream, &f, &arg)?;
    session.finish_launch()?;
    let err = p.check(&ctx, &stream, &ha, &hb)?;
    println!("gemm: relative error against the fp32 reference {err:.2e} (bf16 output)");
    if err > 1e-2 {
        fail("GEMM result is wrong");
    }
    session.finish()?;
    Ok(())
}

/// Events per consumer warp: T * (KT * 4 + 2), T tiles per CTA.
fn cap_for(p: &Problem) -> u32 {
    let tiles = (p.m / BM) * (p.n / BN);
    let per_cta = tiles.div_ceil(p.cfg.grid_dim.0 as usize);
    let events = per_cta * ((p.k / BK) * 4 + 2);
    (events as u32).next_power_of_two().max(32)
}
