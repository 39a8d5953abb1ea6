//! The shape of one traced launch: grid, block, capacity and sampling, and
//! everything derived from them (slot count, buffer size, slot positions).

use crate::error::Error;
use crate::format::layout::{self, KtraceArg, MAX_CAP, MIN_CAP, WARP_SIZE};

/// Which warps of a traced block are traced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WarpSampling {
    /// Every warp of the block.
    #[default]
    All,
    /// Warp `w` is traced when bit `w` is set.
    Mask(u32),
    /// The listed warp indices (each below 32).
    List(Vec<u32>),
}

/// Which blocks of the grid are traced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockSampling {
    /// Every block.
    #[default]
    All,
    /// Blocks whose linear index is a multiple of `n`.
    Stride(u32),
    /// The first `n` blocks (linear index below `n`).
    First(u32),
    /// Blocks whose linear index is a multiple of `stride`, at most `max` of
    /// them (the first `max` such blocks).
    StrideMax {
        /// Trace every `stride`-th block.
        stride: u32,
        /// Trace at most this many blocks.
        max: u32,
    },
}

/// The shape of one traced launch, as the device sees it through
/// [`KtraceArg`] and as a capture file records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Grid dimensions in blocks (x, y, z).
    pub grid: [u32; 3],
    /// Block dimensions in threads (x, y, z).
    pub block: [u32; 3],
    /// The per-warp capacity is `1 << cap_log2` events.
    pub cap_log2: u32,
    /// Bit `w` set: warp `w` of a traced block is traced. Only bits below
    /// [`LaunchShape::warps_per_block`] may be set.
    pub warp_mask: u32,
    /// Blocks whose linear index is a multiple of this are traced (at least 1).
    pub block_stride: u32,
    /// Number of traced blocks that have a slot.
    pub blocks_traced: u32,
    /// Launch index within the session.
    pub launch: u32,
}

/// Threads per block above which CUDA refuses a launch.
const MAX_THREADS_PER_BLOCK: u64 = 1024;

impl LaunchShape {
    /// A shape from a launch's grid and block and the sampling choices.
    ///
    /// `cap` is the per-warp event capacity: a power of two from
    /// [`MIN_CAP`] to [`MAX_CAP`].
    pub fn new(
        grid: [u32; 3],
        block: [u32; 3],
        cap: u32,
        warps: &WarpSampling,
        blocks: BlockSampling,
    ) -> Result<Self, Error> {
        let cap_log2 = cap_log2(cap)?;
        let threads = block_threads(block)?;
        let warp_mask = sampled_warp_mask(warps, threads)?;
        let total = grid_blocks(grid)?;
        let (block_stride, blocks_traced) = sampled_blocks(blocks, total)?;
        let shape = LaunchShape {
            grid,
            block,
            cap_log2,
            warp_mask,
            block_stride,
            blocks_traced,
            launch: 0,
        };
        Ok(shape)
    }

    /// Checks a shape read from elsewhere (a capture file): the same rules as
    /// [`LaunchShape::new`], and a buffer size that fits in memory.
    pub fn validate(&self) -> Result<(), Error> {
        let threads = self.threads_per_block();
        if threads == 0 || threads > MAX_THREADS_PER_BLOCK {
            return Err(Error::Config(format!(
                "block {:?} has {threads} threads; a CUDA block has 1 to {MAX_THREADS_PER_BLOCK}",
                self.block
            )));
        }
        if self.cap_log2 < MIN_CAP.trailing_zeros() || self.cap_log2 > MAX_CAP.trailing_zeros() {
            return Err(Error::Config(format!(
                "cap_log2 {} is outside {}..={}",
                self.cap_log2,
                MIN_CAP.trailing_zeros(),
                MAX_CAP.trailing_zeros()
            )));
        }
        if self.warp_mask & !low_bits(self.warps_per_block()) != 0 || self.warp_mask == 0 {
            return Err(Error::Config(format!(
                "warp mask {:#x} does not fit a block of {} warps",
                self.warp_mask,
                self.warps_per_block()
            )));
        }
        if self.block_stride == 0 {
            return Err(Error::Config("block stride 0".into()));
        }
        let total = self.total_blocks();
        if total == 0 || total > u64::from(u32::MAX) {
            return Err(Error::Config(format!(
                "grid {:?} has {total} blocks",
                self.grid
            )));
        }
        // Slots for blocks that cannot exist would decode into events of
        // blocks the grid does not have.
        let sampled = total.div_ceil(u64::from(self.block_stride));
        if u64::from(self.blocks_traced) > sampled {
            return Err(Error::Config(format!(
                "{} traced blocks, but a grid of {total} blocks sampled every {} has {sampled}",
                self.blocks_traced, self.block_stride
            )));
        }
        if self.buffer_bytes().is_none() {
            return Err(Error::Config("the buffer size overflows".into()));
        }
        Ok(())
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        dim_product(self.block)
    }

    /// Warps per block (threads rounded up to whole warps).
    pub fn warps_per_block(&self) -> u32 {
        self.threads_per_block()
            .div_ceil(u64::from(WARP_SIZE))
            .min(32) as u32
    }

    /// Blocks in the grid.
    pub fn total_blocks(&self) -> u64 {
        dim_product(self.grid)
    }

    /// Traced warps per traced block.
    pub fn warps_traced(&self) -> u32 {
        self.warp_mask.count_ones()
    }

    /// Per-warp event capacity.
    pub fn cap(&self) -> u32 {
        1u32 << self.cap_log2.min(31)
    }

    /// Number of slots in the buffer: traced blocks times traced warps.
    pub fn slot_count(&self) -> u64 {
        u64::from(self.blocks_traced) * u64::from(self.warps_traced())
    }

    /// Bytes of one slot.
    pub fn slot_bytes(&self) -> u64 {
        layout::slot_bytes(self.cap_log2.min(31))
    }

    /// Bytes of the whole buffer, or `None` if that overflows 64 bits.
    pub fn buffer_bytes(&self) -> Option<u64> {
        self.slot_count().checked_mul(self.slot_bytes())
    }

    /// Where slot `slot` sits: the linear block index and the warp index the
    /// device writes there.
    pub fn slot_position(&self, slot: u64) -> (u64, u32) {
        let wt = u64::from(self.warps_traced().max(1));
        let block_slot = slot / wt;
        let warp_slot = (slot % wt) as u32;
        (
            block_slot * u64::from(self.block_stride),
            nth_set_bit(self.warp_mask, warp_slot),
        )
    }

    /// The slot of warp `warp` of block `block`, if that warp is traced.
    pub fn slot_of(&self, block: u64, warp: u32) -> Option<u64> {
        if warp >= 32 || (self.warp_mask >> warp) & 1 == 0 {
            return None;
        }
        let stride = u64::from(self.block_stride.max(1));
        if block % stride != 0 || block >= self.total_blocks() {
            return None;
        }
        let block_slot = block / stride;
        if block_slot >= u64::from(self.blocks_traced) {
            return None;
        }
        let warp_slot = (self.warp_mask & low_bits(warp)).count_ones();
        Some(block_slot * u64::from(self.warps_traced()) + u64::from(warp_slot))
    }

    /// The kernel argument for a buffer at device address `buffer`.
    pub fn arg(&self, buffer: u64) -> KtraceArg {
        KtraceArg {
            buffer,
            warp_mask: self.warp_mask,
            warps_traced: self.warps_traced(),
            block_stride: self.block_stride,
            blocks_traced: self.blocks_traced,
            cap_log2: self.cap_log2,
            launch: self.launch,
        }
    }
}

/// Threads in `block`, which CUDA must be able to launch.
fn block_threads(block: [u32; 3]) -> Result<u64, Error> {
    let threads = dim_product(block);
    if threads == 0 || threads > MAX_THREADS_PER_BLOCK {
        return Err(Error::Config(format!(
            "block {block:?} has {threads} threads; a CUDA block has 1 to {MAX_THREADS_PER_BLOCK}"
        )));
    }
    Ok(threads)
}

/// The warp mask that `warps` selects in a block of `threads` threads: not
/// empty, and only warps the block has.
fn sampled_warp_mask(warps: &WarpSampling, threads: u64) -> Result<u32, Error> {
    let warps_per_block = threads.div_ceil(u64::from(WARP_SIZE)) as u32;
    let valid = low_bits(warps_per_block);
    let warp_mask = match warps {
        WarpSampling::All => valid,
        WarpSampling::Mask(m) => *m,
        WarpSampling::List(ids) => {
            let mut m = 0u32;
            for &w in ids {
                if w >= 32 {
                    return Err(Error::Config(format!(
                        "warp {w} in the warp list: a block has at most 32 warps"
                    )));
                }
                m |= 1 << w;
            }
            m
        }
    };
    if warp_mask & !valid != 0 {
        return Err(Error::Config(format!(
            "warp mask {warp_mask:#x} selects warps that a block of {threads} threads \
             ({warps_per_block} warps) does not have"
        )));
    }
    if warp_mask == 0 {
        return Err(Error::Config(
            "the warp sampling selects no warp; trace at least one".into(),
        ));
    }
    Ok(warp_mask)
}

/// Blocks in `grid`: at least one, and few enough for a 32-bit linear index.
fn grid_blocks(grid: [u32; 3]) -> Result<u64, Error> {
    let total = dim_product(grid);
    if total == 0 {
        return Err(Error::Config(format!("grid {grid:?} has no blocks")));
    }
    if total > u64::from(u32::MAX) {
        return Err(Error::Config(format!(
            "grid {grid:?} has {total} blocks; the linear block index is 32 bits"
        )));
    }
    Ok(total)
}

/// The block stride and the number of traced blocks that `blocks` selects
/// in a grid of `total` blocks.
fn sampled_blocks(blocks: BlockSampling, total: u64) -> Result<(u32, u32), Error> {
    let (stride, max) = match blocks {
        BlockSampling::All => (1, u32::MAX),
        BlockSampling::Stride(n) => (n, u32::MAX),
        BlockSampling::First(n) => (1, n),
        BlockSampling::StrideMax { stride, max } => (stride, max),
    };
    if stride == 0 {
        return Err(Error::Config(
            "block stride 0: use 1 to trace every block".into(),
        ));
    }
    if max == 0 {
        return Err(Error::Config(
            "the block sampling selects no block; trace at least one".into(),
        ));
    }
    let sampled = total.div_ceil(u64::from(stride));
    Ok((stride, sampled.min(u64::from(max)) as u32))
}

/// `log2(cap)`, or a clear error when `cap` is not a power of two in range.
pub fn cap_log2(cap: u32) -> Result<u32, Error> {
    if !cap.is_power_of_two() || !(MIN_CAP..=MAX_CAP).contains(&cap) {
        return Err(Error::Config(format!(
            "per-warp capacity {cap} must be a power of two from {MIN_CAP} to {MAX_CAP} \
             (e.g. 1024, 4096)"
        )));
    }
    Ok(cap.trailing_zeros())
}

/// x·y·z, saturating at `u64::MAX`.
fn dim_product(d: [u32; 3]) -> u64 {
    let p = u128::from(d[0]) * u128::from(d[1]) * u128::from(d[2]);
    u64::try_from(p).unwrap_or(u64::MAX)
}

fn low_bits(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

fn nth_set_bit(mask: u32, n: u32) -> u32 {
    let mut m = mask;
    for _ in 0..n {
        m &= m.wrapping_sub(1);
    }
    m.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_and_positions() {
        let s = LaunchShape::new(
            [10, 1, 1],
            [256, 1, 1],
            64,
            &WarpSampling::List(vec![1, 5]),
            BlockSampling::StrideMax { stride: 3, max: 3 },
        )
        .unwrap();
        assert_eq!(s.warps_per_block(), 8);
        assert_eq!(s.warps_traced(), 2);
        assert_eq!(s.blocks_traced, 3);
        assert_eq!(s.slot_position(0), (0, 1));
        assert_eq!(s.slot_position(3), (3, 5));
        assert_eq!(s.slot_position(5), (6, 5));
        assert_eq!(s.slot_of(6, 5), Some(5));
        assert_eq!(s.slot_of(9, 5), None);
        assert_eq!(s.slot_of(3, 2), None);
        assert_eq!(s.buffer_bytes(), Some(6 * (64 + 8 * 64)));
    }

    #[test]
    fn bad_configs() {
        let all = WarpSampling::All;
        assert!(LaunchShape::new([1, 1, 1], [32, 1, 1], 100, &all, BlockSampling::All).is_err());
        assert!(LaunchShape::new([1, 1, 1], [32, 1, 1], 16, &all, BlockSampling::All).is_err());
        assert!(LaunchShape::new([1, 1, 1], [2048, 1, 1], 32, &all, BlockSampling::All).is_err());
        assert!(LaunchShape::new([0, 1, 1], [32, 1, 1], 32, &all, BlockSampling::All).is_err());
        assert!(LaunchShape::new(
            [1, 1, 1],
            [32, 1, 1],
            32,
            &WarpSampling::Mask(2),
            BlockSampling::All
        )
        .is_err());
        assert!(
            LaunchShape::new([1, 1, 1], [32, 1, 1], 32, &all, BlockSampling::Stride(0)).is_err()
        );
        let e = cap_log2(48).unwrap_err().to_string();
        assert!(e.contains("power of two"), "{e}");
    }
}
