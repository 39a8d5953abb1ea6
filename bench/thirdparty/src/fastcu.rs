//! pranjalssh/fast.cu's `matmulKernel12<128,256,64,384,3,128,2,1>`
//! (kernels/fastcu_matmul12.cu) as its runner (`runKernel12`) sets it up,
//! ported from C++: bf16 A (M x K) and B (N x K), both K-major, C = A * B^T
//! stored N x M (C[n * M + m]), M = N = K = 8192; three TMA descriptors
//! (`create_tensor_map`), the Hilbert-curve schedule of the 64 clusters
//! (`createHilbert`), 128 blocks of 384 threads in clusters of 2 (the
//! kernel's `__cluster_dims__`), 221,824 bytes of dynamic shared memory.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUtensorMap};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg,
};
use ktrace_runtime::KtraceArg;

use crate::problem::{Check, Problem, Result, Rng, SAMPLES};

/// M = N = K.
const SIZE: usize = 8192;
const BM: usize = 128;
const BN: usize = 256;
const BK: usize = 64;
const THREADS: u32 = 384;
const NUM_SM: usize = 128;
const CLUSTER_M: usize = 2;
const CLUSTER_N: usize = 1;
/// Consumer warpgroups (the producer is the third).
const CONSUMERS: usize = THREADS as usize / 128 - 1;
/// Schedule entries per cluster (`SPACE_LEN`).
const SPACE_LEN: usize = 128;
/// `sizeof(SMem<128, 256, 64, 3>)`: A 49,152 + B 98,304 + C 73,728 bytes,
/// the full and empty barriers (48) and the schedule (512), aligned to 128.
const SMEM_BYTES: u32 = 221_824;

/// A TMA descriptor passed by value as a `__grid_constant__` parameter.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct TensorMap(CUtensorMap);
// SAFETY: CUtensorMap is plain bytes, passed to the kernel by value.
unsafe impl DeviceRepr for TensorMap {}

/// `create_tensor_map<BlockMajorSize, BlockMinorSize, swizzle, padding>`:
/// a 3-D map of a `height` x `width` bf16 matrix as 64-column slabs.
fn tensor_map(
    ptr: u64,
    height: usize,
    width: usize,
    block_major: u32,
    block_minor: u32,
    swizzle: bool,
    padding: bool,
) -> Result<TensorMap> {
    if !width.is_multiple_of(64) || block_minor < 64 {
        return Err(format!(
            "tensor map: width {width} and box {block_minor} must be multiples of 64"
        )
        .into());
    }
    let mut map = MaybeUninit::<CUtensorMap>::uninit();
    let shape = [64u64, height as u64, (width / 64) as u64, 1, 1];
    let stride = [(2 * width) as u64, 64 * 2, 0, 0, 0];
    let boxes = [
        if padding { 72 } else { 64 },
        block_major,
        block_minor / 64,
        1,
        1,
    ];
    let elem = [1u32; 5];
    // SAFETY: every pointer is to a live array of the rank's length or more.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            3,
            ptr as *mut c_void,
            shape.as_ptr(),
            stride.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            if swizzle {
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B
            } else {
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE
            },
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::cudaError_enum::CUDA_SUCCESS {
        return Err(format!("cuTensorMapEncodeTiled: {r:?}").into());
    }
    // SAFETY: the driver wrote the map.
    Ok(TensorMap(unsafe { map.assume_init() }))
}

/// `rot`: rotates and flips a quadrant.
fn rot(n: i32, x: &mut i32, y: &mut i32, rx: i32, ry: i32) {
    if ry == 0 {
        if rx == 1 {
            *x = n - 1 - *x;
            *y = n - 1 - *y;
        }
        std::mem::swap(x, y);
    }
}

/// `d2xy`: the point at distance `d` along the Hilbert curve of an n x n grid.
fn d2xy(n: i32, d: i32) -> (i32, i32) {
    let (mut x, mut y, mut t) = (0, 0, d);
    let mut s = 1;
    while s < n {
        let rx = 1 & (t / 2);
        let ry = 1 & (t ^ rx);
        rot(s, &mut x, &mut y, rx, ry);
        x += s * rx;
        y += s * ry;
        t /= 4;
        s *= 2;
    }
    (x, y)
}

/// `createHilbert`: deals the `m` x `n` cluster tiles, in Hilbert-curve
/// order, to `cores` clusters (round robin over the first 64, then the
/// balancing step), as `SPACE_LEN` entries per cluster, `(m << 16) | n`,
/// -1 after its last; `rows` rows in all (the rest -1 too).
fn create_hilbert(m: i32, n: i32, cores: usize, rows: usize) -> Result<Vec<i32>> {
    const FCORES: usize = 64;
    if m < 1 || n < 1 || cores < FCORES || rows < cores {
        return Err(format!("hilbert schedule: {m} x {n} tiles on {cores} clusters").into());
    }
    let largest = m.max(n);
    let dim = if largest == 1 {
        1
    } else {
        1 << (32 - (largest - 1).leading_zeros())
    };
    let mut pos: Vec<Vec<i32>> = vec![Vec::new(); cores];
    let mut core = 0;
    for i in 0..dim * dim {
        let (x, y) = d2xy(dim, i);
        if x < m && y < n {
            pos[core].push((x << 16) | y);
            core += 1;
            if core == FCORES {
                core = 0;
            }
        }
    }
    let mut core = FCORES;
    for i in 0..FCORES {
        if pos[cores - 1].len() + 1 >= pos[0].len() {
            break;
        }
        let moved = pos[i].pop().ok_or("hilbert schedule: empty cluster")?;
        pos[core].push(moved);
        core += 1;
        if core == cores {
            core = FCORES;
        }
    }
    let mut space = vec![-1i32; rows * SPACE_LEN];
    for (i, p) in pos.iter().enumerate() {
        if p.len() > SPACE_LEN {
            return Err(format!("hilbert schedule: {} tiles for one cluster", p.len()).into());
        }
        space[i * SPACE_LEN..i * SPACE_LEN + p.len()].copy_from_slice(p);
    }
    Ok(space)
}

fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// The GEMM on random bf16 inputs in [-1, 1).
pub struct Fastcu {
    stream: Arc<CudaStream>,
    // The maps hold these buffers' addresses: they live as long.
    _a: CudaSlice<u16>,
    _b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    space: CudaSlice<i32>,
    map_a: TensorMap,
    map_b: TensorMap,
    map_c: TensorMap,
    host_a: Vec<u16>,
    host_b: Vec<u16>,
    /// The most tiles one block computes.
    max_tiles: u64,
}

impl Fastcu {
    /// Inputs made on the host and copied to the device, the descriptors
    /// and the schedule, as `runKernel12` makes them.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        let mut rng = Rng::new(0x6661_7374_6375);
        let host_a: Vec<u16> = (0..SIZE * SIZE).map(|_| bf16(rng.unit())).collect();
        let host_b: Vec<u16> = (0..SIZE * SIZE).map(|_| bf16(rng.unit())).collect();
        let a = stream.clone_htod(&host_a)?;
        let b = stream.clone_htod(&host_b)?;
        let c = stream.alloc_zeros::<u16>(SIZE * SIZE)?;
        let (map_a, map_b, map_c) = {
            let (pa, _ga) = a.device_ptr(stream);
            let (pb, _gb) = b.device_ptr(stream);
            let (pc, _gc) = c.device_ptr(stream);
            (
                tensor_map(pa, SIZE, SIZE, BM as u32, BK as u32, true, false)?,
                tensor_map(pb, SIZE, SIZE, BN as u32, BK as u32, true, false)?,
                tensor_map(
                    pc,
                    SIZE,
                    SIZE,
                    BN as u32,
                    (BM / CONSUMERS) as u32,
                    false,
                    true,
                )?,
            )
        };
        let clusters = NUM_SM / CLUSTER_M / CLUSTER_N;
        let schedule = create_hilbert(
            SIZE.div_ceil(BM * CLUSTER_M) as i32,
            SIZE.div_ceil(BN * CLUSTER_N) as i32,
            clusters,
            NUM_SM,
        )?;
        let max_tiles = schedule
            .chunks(SPACE_LEN)
            .map(|row| row.iter().take_while(|&&t| t != -1).count())
            .max()
            .unwrap_or(0) as u64;
        Ok(Fastcu {
            stream: stream.clone(),
            space: stream.clone_htod(&schedule)?,
            _a: a,
            _b: b,
            c,
            map_a,
            map_b,
            map_c,
            host_a,
            host_b,
            max_tiles,
        })
    }

    fn k_tiles() -> u64 {
        (SIZE / BK) as u64
    }
}

impl Problem for Fastcu {
    fn name(&self) -> &'static str {
        "fastcu"
    }

    fn function(&self) -> &'static str {
        "fastcu_matmul12"
    }

    fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (NUM_SM as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SMEM_BYTES,
        }
    }

    fn cap(&self) -> u32 {
        32768
    }

    fn flops(&self) -> f64 {
        2.0 * (SIZE as f64).powi(3)
    }

    fn max_events_per_warp(&self) -> u64 {
        // A consumer warp: "wait_full" and "mma" per k-tile, "epilogue" per
        // tile (the producer: "wait_empty" and "load" per k-tile).
        self.max_tiles * (Self::k_tiles() * 4 + 2)
    }

    fn expected_events(&self) -> u64 {
        // Every tile: the producer's lane 0 records 4 events per k-tile,
        // each of the 8 consumer warps 4 per k-tile and 2 for the epilogue.
        let tiles = ((SIZE / BM) * (SIZE / BN)) as u64;
        let consumer_warps = (CONSUMERS * 4) as u64;
        tiles * (Self::k_tiles() * 4 + consumer_warps * (Self::k_tiles() * 4 + 2))
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
        let s = SIZE as i32;
        let cfg = self.config();
        let mut l = self.stream.launch_builder(f);
        l.arg(&s)
            .arg(&s)
            .arg(&s)
            .arg(&self.map_c)
            .arg(&self.map_a)
            .arg(&self.map_b)
            .arg(&self.space)
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
            let (m, n) = (rng.below(SIZE), rng.below(SIZE));
            let (a, b) = (
                &self.host_a[m * SIZE..][..SIZE],
                &self.host_b[n * SIZE..][..SIZE],
            );
            let (mut exact, mut terms) = (0f64, 0f64);
            for (&x, &y) in a.iter().zip(b) {
                let t = f64::from(from_bf16(x)) * f64::from(from_bf16(y));
                exact += t;
                terms += t.abs();
            }
            (f64::from(from_bf16(c[n * SIZE + m])), exact, terms)
        });
        // bf16 output: rounding alone is up to 2^-9 of |C| <= sum |a*b|.
        Ok(Check::of(samples.collect::<Vec<_>>(), 1e-2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_deals_every_tile_once() {
        let space = create_hilbert(32, 32, 64, 128).unwrap();
        let mut seen = vec![false; 32 * 32];
        for row in space.chunks(SPACE_LEN).take(64) {
            let tiles: Vec<_> = row.iter().take_while(|&&t| t != -1).collect();
            assert_eq!(tiles.len(), 16);
            for &&t in &tiles {
                let (m, n) = ((t >> 16) as usize, (t & 0xffff) as usize);
                assert!(!seen[m * 32 + n]);
                seen[m * 32 + n] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(space[64 * SPACE_LEN..].iter().all(|&t| t == -1));
    }

    #[test]
    fn d2xy_walks_neighbours() {
        let mut prev = d2xy(8, 0);
        for d in 1..64 {
            let p = d2xy(8, d);
            assert_eq!((p.0 - prev.0).abs() + (p.1 - prev.1).abs(), 1);
            prev = p;
        }
    }
}
