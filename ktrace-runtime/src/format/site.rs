//! Sites (layout version 4), the host's half: a site is one kernel launched
//! from one place whose launches never overlap (a stream, or a node of a
//! CUDA graph), traced into a ring of slabs in a persistent arena that a
//! host thread drains while the program runs. The device half is in
//! `ktrace.cuh` (`open_slot`, `close_site`, `advance_site`); the protocol is
//! in `ktrace_layout.h` beside `ktrace_site`.
//!
//! Everything here is a plain function of bytes and numbers: which
//! launches a keep rule chooses ([`Keep`]), the site's first state
//! ([`initial_site`]), a model of what the last warp of a launch does
//! ([`advance`]), the slabs that are ready to drain ([`ready_slabs`]) and a
//! drained slab made into a launch of a capture ([`slab_launch`]). The
//! session (`session::continuous`) is the thin layer that moves the bytes.

use crate::error::{Error, Result};
use crate::format::buffer::LaunchBuffer;
use crate::format::capture::{LaunchCapture, LaunchOrigin};
use crate::format::layout::{Site, SlotMeta, META_BYTES, SITE_BYTES, SLAB_NONE};
use crate::format::shape::LaunchShape;

/// Which launches of a site are traced. The device applies it at the end of
/// each launch, for the next one, with no host call per launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every launch.
    All,
    /// Launch 0 and every `n`-th after it (`n` ≥ 1).
    Every(u32),
    /// Launches `from..until` of the site, every `every`-th from `from`.
    Window {
        /// The first launch kept.
        from: u32,
        /// The launch after the last one kept.
        until: u32,
        /// Keep every `every`-th launch of the window (≥ 1).
        every: u32,
    },
    /// None, except those asked for with `capture_next`.
    Triggered,
}

impl Keep {
    /// The rule's window and stride: `(keep_from, keep_until, every)`.
    pub fn window(self) -> (u32, u32, u32) {
        match self {
            Keep::All => (0, u32::MAX, 1),
            Keep::Every(n) => (0, u32::MAX, n.max(1)),
            Keep::Window { from, until, every } => (from, until, every.max(1)),
            Keep::Triggered => (0, 0, 1),
        }
    }

    /// Whether the rule alone keeps launch `epoch`.
    pub fn keeps(self, epoch: u32) -> bool {
        let (from, until, every) = self.window();
        epoch >= from && epoch < until && (epoch - from) % every == 0
    }
}

/// A site's state before its first launch: `warps` sampled warps per
/// launch, `slab_count` slabs, the keep rule; launch 0 writes slab 0 if the
/// rule keeps it.
pub fn initial_site(warps: u32, slab_count: u32, keep: Keep) -> Site {
    let (keep_from, keep_until, every) = keep.window();
    Site {
        slab: if keep.keeps(0) { 0 } else { SLAB_NONE },
        warps,
        slab_count,
        every,
        keep_from,
        keep_until,
        ..Site::default()
    }
}

/// What the last warp of a launch does to its site (`advance_site` in
/// `ktrace.cuh`), for tests and for reading a site's counters.
pub fn advance(s: &Site) -> Site {
    let mut n = *s;
    n.kept = s.kept + u32::from(s.slab != SLAB_NONE);
    n.epoch = s.epoch.wrapping_add(1);
    let every = s.every.max(1);
    let mut chosen =
        n.epoch >= s.keep_from && n.epoch < s.keep_until && (n.epoch - s.keep_from) % every == 0;
    if !chosen && s.triggers_used != s.triggers_asked {
        chosen = true;
        n.triggers_used = s.triggers_used + 1;
    }
    n.slab = SLAB_NONE;
    if chosen {
        if n.kept.wrapping_sub(s.drained) < s.slab_count {
            n.slab = n.kept % s.slab_count;
        } else {
            n.dropped = s.dropped + 1;
        }
    }
    n.flushed = 0;
    n
}

/// The slabs of `site` that are complete and not yet drained, as indices
/// into its ring in the order they were written: `drained..kept`, modulo
/// the ring. Fails on a state no device writes (more slabs waiting than the
/// ring has).
pub fn ready_slabs(site: &Site) -> Result<Vec<u32>> {
    let waiting = site.kept.wrapping_sub(site.drained);
    if site.slab_count == 0 || waiting > site.slab_count {
        return Err(Error::Corrupt(format!(
            "site with {} slabs says {waiting} are waiting (kept {}, drained {})",
            site.slab_count, site.kept, site.drained
        )));
    }
    Ok((0..waiting)
        .map(|k| site.drained.wrapping_add(k) % site.slab_count)
        .collect())
}

/// Bytes of a site with `slab_count` slabs of `shape`: the 64-byte
/// `ktrace_site`, then its slabs.
pub fn site_bytes(shape: &LaunchShape, slab_count: u32) -> Option<u64> {
    shape
        .buffer_bytes()?
        .checked_mul(u64::from(slab_count))?
        .checked_add(SITE_BYTES as u64)
}

/// What a drained slab held besides its launch: slots that this launch's
/// warp did not write (they hold an older launch of the ring, or were never
/// written) and were cleared, so the launch reads them as never opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlabReport {
    /// Slots cleared because they held another launch's record.
    pub stale_slots: u64,
    /// Distinct `%gridid`s among the slab's slots beyond the first: more
    /// than one means launches of the site overlapped (two streams or
    /// programmatic dependent launch on one site), which a site forbids.
    pub extra_grids: u64,
}

/// Makes the raw bytes of one drained slab into a launch of a capture:
/// the launch's epoch is the newest stamp among its flushed slots (a
/// recording warp stamps its slot at flush); every slot with another stamp,
/// or not flushed, belongs to an older launch of the ring and is cleared
/// (counted in the report). `launch` is the launch's index in the capture,
/// `site` the site's index.
pub fn slab_launch(
    mut raw: Vec<u8>,
    shape: &LaunchShape,
    site: u32,
    launch: u32,
    kernel: &str,
) -> Result<(LaunchCapture, SlabReport)> {
    let shape = LaunchShape { launch, ..*shape };
    let (epoch, grids) = {
        let view = LaunchBuffer::new(&raw, &shape, crate::format::layout::LAYOUT_VERSION)?;
        let flushed: Vec<SlotMeta> = view
            .slots()
            .map(|s| *s.meta())
            .filter(|m| m.is_opened() && m.is_flushed())
            .collect();
        let epoch = flushed.iter().map(|m| m.launch).max();
        let mut grids: Vec<u64> = flushed
            .iter()
            .filter(|m| Some(m.launch) == epoch)
            .map(|m| m.grid_id)
            .collect();
        grids.sort_unstable();
        grids.dedup();
        (epoch, grids)
    };
    let mut report = SlabReport {
        extra_grids: grids.len().saturating_sub(1) as u64,
        ..SlabReport::default()
    };
    let slot_bytes = shape.slot_bytes() as usize;
    for slot in raw.chunks_exact_mut(slot_bytes) {
        let meta: &[u8; META_BYTES] = slot[..META_BYTES].try_into().expect("a slot's metadata");
        let m = SlotMeta::from_bytes(meta);
        let ours = m.is_opened() && m.is_flushed() && Some(m.launch) == epoch;
        if !ours && (m.is_opened() || m.is_flushed()) {
            slot[..META_BYTES].fill(0);
            report.stale_slots += 1;
        }
    }
    let launch = LaunchCapture {
        kernel: kernel.to_string(),
        origin: Some(LaunchOrigin {
            site,
            epoch: epoch.unwrap_or(0),
            grid_id: grids.first().copied().unwrap_or(0),
        }),
        ..LaunchCapture::new(shape, raw)
    };
    Ok((launch, report))
}

/// When a launch ran on the GPU, in ns of its `%globaltimer`: from the
/// earliest open to the latest flush of its slots that were opened and
/// flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSpan {
    /// The earliest `init_globaltimer`.
    pub begin_ns: u64,
    /// The latest `final_globaltimer`.
    pub end_ns: u64,
}

impl GpuSpan {
    /// `end_ns - begin_ns` (0 if a flush reads before an open).
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.begin_ns)
    }
}

/// A launch's [`GpuSpan`] from its slots' metadata alone, without decoding;
/// `None` when no slot was opened and flushed.
pub fn gpu_span(buffer: &LaunchBuffer<'_>) -> Option<GpuSpan> {
    buffer
        .slots()
        .map(|s| *s.meta())
        .filter(|m| m.is_opened() && m.is_flushed())
        .fold(None, |span: Option<GpuSpan>, m| {
            Some(match span {
                None => GpuSpan {
                    begin_ns: m.init_globaltimer,
                    end_ns: m.final_globaltimer,
                },
                Some(g) => GpuSpan {
                    begin_ns: g.begin_ns.min(m.init_globaltimer),
                    end_ns: g.end_ns.max(m.final_globaltimer),
                },
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::layout::{FLUSH_MAGIC, OPEN_MAGIC};
    use crate::format::shape::{BlockSampling, WarpSampling};

    fn run(site: Site, launches: usize) -> Vec<Site> {
        let mut states = vec![site];
        for _ in 0..launches {
            let next = advance(states.last().unwrap());
            states.push(next);
        }
        states
    }

    #[test]
    fn every_nth_keeps_those_launches_in_order_and_drops_none_when_drained() {
        let mut s = initial_site(8, 4, Keep::Every(3));
        let mut kept = Vec::new();
        for _ in 0..30 {
            if s.slab != SLAB_NONE {
                kept.push((s.epoch, s.slab));
            }
            s = advance(&s);
            // The host drains everything between launches.
            s.drained = s.kept;
        }
        let epochs: Vec<u32> = kept.iter().map(|k| k.0).collect();
        assert_eq!(epochs, (0..30).step_by(3).collect::<Vec<_>>());
        let slabs: Vec<u32> = kept.iter().map(|k| k.1).collect();
        assert_eq!(slabs, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        assert_eq!((s.kept, s.dropped, s.epoch), (10, 0, 30));
    }

    #[test]
    fn a_full_ring_drops_new_launches_and_counts_them() {
        let states = run(initial_site(8, 4, Keep::All), 10);
        let last = states.last().unwrap();
        // Nothing drained: launches 0-3 fill the ring, 4-9 are dropped, and
        // so is launch 10, running now.
        assert_eq!((last.kept, last.dropped, last.slab), (4, 7, SLAB_NONE));
        assert_eq!(ready_slabs(last).unwrap(), [0, 1, 2, 3]);
        let mut drained = *last;
        drained.drained = 4;
        let next = advance(&drained);
        assert_eq!((next.slab, next.kept), (0, 4));
    }

    #[test]
    fn a_window_and_triggers_choose_launches() {
        let w = Keep::Window {
            from: 5,
            until: 9,
            every: 2,
        };
        let kept: Vec<u32> = (0..20).filter(|&e| w.keeps(e)).collect();
        assert_eq!(kept, [5, 7]);
        let mut s = initial_site(1, 8, Keep::Triggered);
        assert_eq!(s.slab, SLAB_NONE);
        s = advance(&s);
        s.triggers_asked = 2;
        let states = run(s, 4);
        let recorded: Vec<u32> = states
            .iter()
            .filter(|s| s.slab != SLAB_NONE)
            .map(|s| s.epoch)
            .collect();
        assert_eq!(recorded, [2, 3]);
        assert_eq!(states.last().unwrap().triggers_used, 2);
    }

    #[test]
    fn a_lying_site_is_refused() {
        let s = Site {
            slab_count: 2,
            kept: 5,
            drained: 1,
            ..Site::default()
        };
        assert!(ready_slabs(&s).is_err());
    }

    fn shape() -> LaunchShape {
        LaunchShape::new(
            [2, 1, 1],
            [64, 1, 1],
            32,
            &WarpSampling::All,
            BlockSampling::All,
        )
        .unwrap()
    }

    fn put_slot(raw: &mut [u8], shape: &LaunchShape, i: usize, launch: u32, grid: u64) {
        let m = SlotMeta {
            init_globaltimer: 1000 + i as u64,
            final_globaltimer: 2000 + i as u64,
            open_magic: OPEN_MAGIC,
            flush_magic: FLUSH_MAGIC,
            block_linear: (i / 2) as u32,
            warp: (i % 2) as u16,
            launch,
            grid_id: grid,
            ..SlotMeta::default()
        };
        let at = i * shape.slot_bytes() as usize;
        raw[at..at + META_BYTES].copy_from_slice(&m.to_bytes());
    }

    #[test]
    fn a_slab_becomes_a_launch_and_older_slots_are_cleared() {
        let s = shape();
        let mut raw = vec![0u8; s.buffer_bytes().unwrap() as usize];
        for i in 0..3 {
            put_slot(&mut raw, &s, i, 7, 42);
        }
        put_slot(&mut raw, &s, 3, 3, 40); // an older launch of the ring
        let (l, r) = slab_launch(raw, &s, 2, 11, "gemm").unwrap();
        assert_eq!(
            l.origin,
            Some(LaunchOrigin {
                site: 2,
                epoch: 7,
                grid_id: 42
            })
        );
        assert_eq!((l.shape.launch, l.kernel.as_str()), (11, "gemm"));
        assert_eq!(
            r,
            SlabReport {
                stale_slots: 1,
                extra_grids: 0
            }
        );
        let b = l.buffer().unwrap();
        assert_eq!(b.slots().filter(|s| s.meta().is_opened()).count(), 3);
        assert_eq!(
            gpu_span(&b),
            Some(GpuSpan {
                begin_ns: 1000,
                end_ns: 2002
            })
        );
    }

    #[test]
    fn overlapping_launches_in_one_slab_are_reported() {
        let s = shape();
        let mut raw = vec![0u8; s.buffer_bytes().unwrap() as usize];
        put_slot(&mut raw, &s, 0, 7, 42);
        put_slot(&mut raw, &s, 1, 7, 43);
        let (_, r) = slab_launch(raw, &s, 0, 0, "k").unwrap();
        assert_eq!(r.extra_grids, 1);
    }
}
