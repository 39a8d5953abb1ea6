//! Sizing the trace buffer within a memory budget, before a session
//! allocates it.
//!
//! The buffer holds one ring per traced warp, so its size grows with the
//! grid: at the default cap of 4096 entries a saxpy over 2^20 elements
//! (32,768 warps) would take 1 GiB. When a request exceeds the budget
//! (default [`DEFAULT_BUDGET`], `KTRACE_BUDGET_MB`), [`fit_buffer`] lowers an
//! automatic cap, halving it down to [`CAP_FLOOR`], and if that is not
//! enough traces one block in every `N` (an unchosen
//! [`BlockSampling::All`] only). A cap or a block sampling the user chose is
//! kept even over the budget. [`Sizing::message`] says what was chosen and
//! why; the session prints it.

use crate::error::{Error, Result};
use crate::format::layout::MIN_CAP;
use crate::format::shape::{BlockSampling, LaunchShape, WarpSampling};

/// The automatic per-warp cap when the buffer fits the budget.
pub const DEFAULT_CAP: u32 = 4096;
/// The lowest an automatic cap goes before blocks are sampled.
pub const CAP_FLOOR: u32 = 256;
/// The default budget: 256 MiB.
pub const DEFAULT_BUDGET: u64 = 256 << 20;

const _: () = assert!(CAP_FLOOR >= MIN_CAP && CAP_FLOOR <= DEFAULT_CAP);

/// What a session asks of the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeRequest<'a> {
    /// Grid dimensions in blocks.
    pub grid: [u32; 3],
    /// Block dimensions in threads.
    pub block: [u32; 3],
    /// Per-warp capacity; 0 is automatic ([`DEFAULT_CAP`], lowered to fit).
    pub cap: u32,
    /// Traced warps of a traced block.
    pub warps: &'a WarpSampling,
    /// Traced blocks.
    pub blocks: BlockSampling,
    /// Whether `blocks` was chosen (by the configuration or
    /// `KTRACE_BLOCKS`); only an unchosen `All` is sampled to fit.
    pub blocks_chosen: bool,
    /// The most bytes an automatically sized buffer may take.
    pub budget: u64,
}

/// How the buffer relates to the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// As asked, within the budget.
    AsAsked,
    /// The automatic cap was lowered to fit.
    CapLowered,
    /// The automatic cap is at [`CAP_FLOOR`] and one block in every
    /// `block_stride` is traced.
    BlocksSampled,
    /// Over the budget, kept because the cap was chosen.
    OverWithChosenCap,
    /// Over the budget with the cap at [`CAP_FLOOR`], kept because the
    /// block sampling was chosen.
    OverWithChosenBlocks,
}

/// The buffer a session allocates, and how it came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// The launch shape allocated (its `launch` is 0).
    pub shape: LaunchShape,
    /// How it relates to the budget.
    pub fit: Fit,
    /// The budget, in bytes.
    pub budget: u64,
    /// The cap asked for ([`DEFAULT_CAP`] when automatic).
    pub asked_cap: u32,
    /// Bytes of the buffer as asked; `None` when that overflows 64 bits.
    pub asked_bytes: Option<u64>,
}

fn shape_for(req: &SizeRequest<'_>, cap: u32, blocks: BlockSampling) -> Result<LaunchShape> {
    LaunchShape::new(req.grid, req.block, cap, req.warps, blocks)
}

fn within(shape: &LaunchShape, budget: u64) -> bool {
    shape.buffer_bytes().is_some_and(|b| b <= budget)
}

/// Chooses the buffer for `req`: as asked when it fits the budget or the
/// cap was chosen; else a lower automatic cap; else, at [`CAP_FLOOR`], one
/// block in every `N` when the block sampling was not chosen.
///
/// Fails on a shape that cannot be traced, and on a budget that cannot
/// hold one block's warps at [`CAP_FLOOR`].
pub fn fit_buffer(req: &SizeRequest<'_>) -> Result<Sizing> {
    let asked_cap = if req.cap == 0 { DEFAULT_CAP } else { req.cap };
    let asked = shape_for(req, asked_cap, req.blocks)?;
    let sizing = |shape, fit| Sizing {
        shape,
        fit,
        budget: req.budget,
        asked_cap,
        asked_bytes: asked.buffer_bytes(),
    };
    if within(&asked, req.budget) {
        return Ok(sizing(asked, Fit::AsAsked));
    }
    if req.cap != 0 {
        return Ok(sizing(asked, Fit::OverWithChosenCap));
    }
    let mut shape = asked;
    while shape.cap() > CAP_FLOOR && !within(&shape, req.budget) {
        shape = shape_for(req, shape.cap() / 2, req.blocks)?;
    }
    if within(&shape, req.budget) {
        return Ok(sizing(shape, Fit::CapLowered));
    }
    if req.blocks_chosen {
        return Ok(sizing(shape, Fit::OverWithChosenBlocks));
    }
    let per_block = u64::from(shape.warps_traced()) * shape.slot_bytes();
    let max_blocks = req.budget / per_block;
    if max_blocks == 0 {
        return Err(Error::Config(format!(
            "a trace budget of {} cannot hold one block: {} warps at the smallest automatic \
             cap {CAP_FLOOR} take {}; raise the budget (KTRACE_BUDGET_MB)",
            bytes_text(req.budget),
            shape.warps_traced(),
            bytes_text(per_block)
        )));
    }
    let stride = shape.total_blocks().div_ceil(max_blocks);
    let stride = u32::try_from(stride).unwrap_or(u32::MAX);
    let sampled = shape_for(req, shape.cap(), BlockSampling::Stride(stride))?;
    Ok(sizing(sampled, Fit::BlocksSampled))
}

impl Sizing {
    /// Bytes of the buffer allocated.
    pub fn bytes(&self) -> u64 {
        self.shape.buffer_bytes().unwrap_or(u64::MAX)
    }

    /// One line (without the `ktrace: ` prefix) saying what was chosen
    /// and why, and how to choose otherwise; `None` when the buffer is as
    /// asked and within the budget.
    pub fn message(&self) -> Option<String> {
        let s = &self.shape;
        let (bytes, budget) = (bytes_text(self.bytes()), bytes_text(self.budget));
        let asked = self
            .asked_bytes
            .map_or("more than 64 bits count".into(), bytes_text);
        let warps = s.slot_count();
        let line = match self.fit {
            Fit::AsAsked => return None,
            Fit::CapLowered => format!(
                "trace buffer of {bytes}: per-warp cap {} entries instead of {}, to stay within \
                 the {budget} budget ({warps} warps at cap {} would take {asked}); set \
                 KTRACE_CAP or KTRACE_BUDGET_MB (MiB) to choose otherwise",
                s.cap(),
                self.asked_cap,
                self.asked_cap
            ),
            Fit::BlocksSampled => format!(
                "trace buffer of {bytes}: one block in every {} ({} of {} blocks) at per-warp \
                 cap {} entries, to stay within the {budget} budget (every block at cap {} \
                 would take {asked}); set KTRACE_BLOCKS, KTRACE_CAP or KTRACE_BUDGET_MB (MiB) \
                 to choose otherwise",
                s.block_stride,
                s.blocks_traced,
                s.total_blocks(),
                s.cap(),
                self.asked_cap
            ),
            Fit::OverWithChosenCap => format!(
                "trace buffer of {bytes} ({warps} warps at cap {}) is over the {budget} budget; \
                 kept because the cap was chosen (TraceConfig::cap or KTRACE_CAP); \
                 KTRACE_CAP=auto sizes it to the budget",
                s.cap()
            ),
            Fit::OverWithChosenBlocks => format!(
                "trace buffer of {bytes} ({warps} warps at the smallest automatic cap {}) is over \
                 the {budget} budget; kept because the block sampling was chosen \
                 (TraceConfig::blocks or KTRACE_BLOCKS); trace fewer blocks \
                 (KTRACE_BLOCKS=stride:N) or raise KTRACE_BUDGET_MB",
                s.cap()
            ),
        };
        Some(line)
    }
}

/// A byte count in binary units: `256 MiB`, `1.00 GiB`, `66.0 KiB`.
pub fn bytes_text(b: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    match b {
        _ if b >= GIB => format!("{:.2} GiB", b as f64 / GIB as f64),
        _ if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        _ if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        _ if b >= KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        _ => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// saxpy over 2^20 elements: 4096 blocks of 256 threads.
    fn saxpy(cap: u32, blocks: BlockSampling, chosen: bool, budget: u64) -> Result<Sizing> {
        fit_buffer(&SizeRequest {
            grid: [4096, 1, 1],
            block: [256, 1, 1],
            cap,
            warps: &WarpSampling::All,
            blocks,
            blocks_chosen: chosen,
            budget,
        })
    }

    #[test]
    fn a_buffer_within_the_budget_is_as_asked() {
        let s = saxpy(0, BlockSampling::All, false, 2 << 30).unwrap();
        assert_eq!(
            (s.fit, s.shape.cap(), s.shape.block_stride),
            (Fit::AsAsked, 4096, 1)
        );
        assert_eq!(s.bytes(), 32_768 * (64 + 8 * 4096));
        assert_eq!(s.message(), None);
    }

    #[test]
    fn the_default_saxpy_lowers_the_cap() {
        let s = saxpy(0, BlockSampling::All, false, DEFAULT_BUDGET).unwrap();
        // 32,768 warps: cap 1024 takes 258 MiB, just over; 512 fits.
        assert_eq!(s.fit, Fit::CapLowered);
        assert_eq!((s.shape.cap(), s.shape.blocks_traced), (512, 4096));
        assert_eq!(s.asked_bytes, Some(1_075_838_976));
        assert!(s.bytes() <= DEFAULT_BUDGET);
        let m = s.message().unwrap();
        assert_eq!(
            m,
            "trace buffer of 130 MiB: per-warp cap 512 entries instead of 4096, to stay \
             within the 256 MiB budget (32768 warps at cap 4096 would take 1.00 GiB); set \
             KTRACE_CAP or KTRACE_BUDGET_MB (MiB) to choose otherwise"
        );
    }

    #[test]
    fn past_the_floor_blocks_are_sampled() {
        let s = saxpy(0, BlockSampling::All, false, 16 << 20).unwrap();
        assert_eq!(s.fit, Fit::BlocksSampled);
        assert_eq!(s.shape.cap(), CAP_FLOOR);
        // 8 warps x 2112 bytes a block: 992 blocks fit, so one in 5.
        assert_eq!((s.shape.block_stride, s.shape.blocks_traced), (5, 820));
        assert!(s.bytes() <= 16 << 20);
        let m = s.message().unwrap();
        assert!(
            m.contains("one block in every 5 (820 of 4096 blocks)"),
            "{m}"
        );
        assert!(
            m.contains("KTRACE_BLOCKS, KTRACE_CAP or KTRACE_BUDGET_MB"),
            "{m}"
        );
    }

    #[test]
    fn chosen_settings_are_kept_over_the_budget() {
        let s = saxpy(4096, BlockSampling::All, false, DEFAULT_BUDGET).unwrap();
        assert_eq!((s.fit, s.shape.cap()), (Fit::OverWithChosenCap, 4096));
        let m = s.message().unwrap();
        assert!(
            m.contains("over the 256 MiB budget") && m.contains("KTRACE_CAP=auto"),
            "{m}"
        );

        let s = saxpy(0, BlockSampling::All, true, 16 << 20).unwrap();
        assert_eq!(
            (s.fit, s.shape.cap()),
            (Fit::OverWithChosenBlocks, CAP_FLOOR)
        );
        assert_eq!(s.shape.blocks_traced, 4096);
        assert!(s.message().unwrap().contains("KTRACE_BLOCKS=stride:N"));

        let s = saxpy(0, BlockSampling::Stride(8), true, DEFAULT_BUDGET).unwrap();
        assert_eq!((s.fit, s.shape.cap()), (Fit::AsAsked, 4096));
    }

    #[test]
    fn a_budget_below_one_block_is_an_error_and_bad_shapes_too() {
        let e = saxpy(0, BlockSampling::All, false, 1000).unwrap_err();
        assert!(e.to_string().contains("cannot hold one block"), "{e}");
        assert!(saxpy(100, BlockSampling::All, false, DEFAULT_BUDGET).is_err());
    }

    #[test]
    fn byte_counts() {
        assert_eq!(bytes_text(256 << 20), "256 MiB");
        assert_eq!(bytes_text(3 << 29), "1.50 GiB");
        assert_eq!(bytes_text(67_584), "66.0 KiB");
        assert_eq!(bytes_text(12), "12 bytes");
    }
}
