//! Sites (layout version 4), the host's half: a site is one kernel launched
//! from one place whose launches never overlap (a stream, or a node of a
//! CUDA graph), traced into a ring of slabs in a persistent arena that a
//! host thread drains while the program runs. The device half is in
//! `ktrace.cuh` (`site_open`, `KTRACE_CLOSE_SITE_`); the protocol is in
//! `ktrace_layout.h` beside `ktrace_site`.
//!
//! Everything here is a plain function of bytes and numbers: which
//! launches a keep rule chooses ([`Keep`]), the site's first state
//! ([`initial_site`]), a model of what a sampled warp does to the site at
//! open and at flush ([`SiteModel`]), which kept launches have ended
//! ([`complete_kept`]) and which slabs to drain ([`drain_plan`]), and a
//! drained slab made into a launch of a capture ([`slab_launch`]). The
//! session (`session::continuous`) is the thin layer that moves the bytes.

use crate::error::{Error, Result};
use crate::format::buffer::LaunchBuffer;
use crate::format::capture::{LaunchCapture, LaunchOrigin};
use crate::format::layout::{site_counter_bytes, Site, SiteKeep, SlotMeta, META_BYTES, SITE_BYTES};
use crate::format::shape::LaunchShape;

/// Which launches of a site are traced. The device applies it as each
/// launch's warps open, with no host call per launch.
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
    /// The rule as the device reads it.
    pub fn rule(self) -> SiteKeep {
        let (from, until, every) = match self {
            Keep::All => (0, u32::MAX, 1),
            Keep::Every(n) => (0, u32::MAX, n.max(1)),
            Keep::Window { from, until, every } => (from, until.max(from), every.max(1)),
            Keep::Triggered => (0, 0, 1),
        };
        SiteKeep {
            from,
            until,
            base: 0,
            every,
        }
    }

    /// Whether the rule alone keeps launch `n`.
    pub fn keeps(self, n: u32) -> bool {
        kept_number(&self.rule(), n).is_some()
    }
}

/// The kept launch number of launch `n` under `rule`, if the rule keeps it.
pub fn kept_number(rule: &SiteKeep, n: u32) -> Option<u32> {
    let every = rule.every.max(1);
    (n >= rule.from && n < rule.until && (n - rule.from) % every == 0)
        .then(|| rule.base.wrapping_add((n - rule.from) / every))
}

/// Kept launches before launch `n` under `rule` (the rule of launch `n`,
/// which covers every launch from `rule.from`; `rule.base` counts those
/// kept before).
pub fn kept_before(rule: &SiteKeep, n: u32) -> u32 {
    let every = rule.every.max(1);
    let end = n.min(rule.until);
    rule.base.wrapping_add(if end > rule.from {
        (end - rule.from).div_ceil(every)
    } else {
        0
    })
}

/// A site's header before its first launch: `warps` sampled warps per
/// launch, `slab_count` slabs (a power of two), the keep rule. Its launch
/// counters start at zero.
pub fn initial_site(warps: u32, slab_count: u32, keep: Keep) -> Site {
    let rule = keep.rule();
    Site {
        keep: rule,
        warps,
        slab_count,
        triggered: u32::from(keep == Keep::Triggered),
        ..Site::default()
    }
}

/// Bytes of a site's header and launch counters: its slabs start there.
pub fn site_head_bytes(warps: u32) -> u64 {
    SITE_BYTES as u64 + site_counter_bytes(warps)
}

/// A site as the drain reads it: the header, and how many launches slot 0
/// has opened (its launch counter, the first after the header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteRead {
    /// The header.
    pub site: Site,
    /// Launches that slot 0's warp has opened.
    pub launches: u32,
}

impl SiteRead {
    /// Bytes read: the header and slot 0's counter.
    pub const BYTES: usize = SITE_BYTES + 4;

    /// Reads the header and slot 0's counter from their bytes.
    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let head: &[u8; SITE_BYTES] = b[..SITE_BYTES].try_into().expect("a site's header");
        let launches = u32::from_le_bytes(b[SITE_BYTES..].try_into().expect("a counter"));
        SiteRead {
            site: Site::from_bytes(head),
            launches,
        }
    }
}

/// A model of a site on the device, header and launch counters, for tests
/// and for reading a site's counters: what each sampled warp does at open
/// ([`SiteModel::open`], `site_open` in `ktrace.cuh`) and at flush.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteModel {
    /// The header.
    pub site: Site,
    /// One launch counter per slot.
    pub counters: Vec<u32>,
}

impl SiteModel {
    /// A site before its first launch (see [`initial_site`]).
    pub fn new(warps: u32, slab_count: u32, keep: Keep) -> Self {
        SiteModel {
            site: initial_site(warps, slab_count, keep),
            counters: vec![0; warps as usize],
        }
    }

    /// The warp of `slot` opens: takes its ticket and returns its launch
    /// and the slab it writes (`None`: it records nothing, and if its
    /// launch was kept it counted itself in `dropped`).
    pub fn open(&mut self, slot: usize) -> (u32, Option<u32>) {
        let n = self.counters[slot];
        self.counters[slot] = n.wrapping_add(1);
        let s = &mut self.site;
        let rule = SiteKeep {
            every: s.keep.every.max(1),
            ..s.keep
        };
        if slot == 0 {
            s.done_launch = n;
            s.done_kept = kept_before(&rule, n);
            let granted = rule.base.wrapping_add(rule.until.wrapping_sub(rule.from));
            if s.triggered != 0 && s.triggers_asked != granted {
                // A window that still holds launch n or a later one grows;
                // one that ended makes way for a new one from n + 1.
                let more = s.triggers_asked.wrapping_sub(granted);
                s.keep = if rule.until <= n {
                    SiteKeep {
                        from: n.wrapping_add(1),
                        until: n.wrapping_add(1).wrapping_add(more),
                        base: granted,
                        every: 1,
                    }
                } else {
                    SiteKeep {
                        until: rule.until.wrapping_add(more),
                        ..rule
                    }
                };
            }
        }
        let slab = kept_number(&rule, n).and_then(|k| {
            if k.wrapping_sub(s.drained) < s.slab_count {
                Some(k & (s.slab_count - 1))
            } else {
                s.dropped = s.dropped.wrapping_add(1);
                None
            }
        });
        (n, slab)
    }

    /// A warp that recorded flushes: counts itself.
    pub fn flush(&mut self) {
        self.site.flushed = self.site.flushed.wrapping_add(1);
    }

    /// What the drain reads.
    pub fn read(&self) -> SiteRead {
        SiteRead {
            site: self.site,
            launches: self.counters.first().copied().unwrap_or(0),
        }
    }
}

/// Kept launches of the site whose slabs are complete, from its state
/// `now` and the state read a poll before (`before`). Every launch before
/// `done_launch` has ended (a warp of that launch has opened), so the kept
/// ones among them, `done_kept`, are complete. When the device changed
/// nothing between the two reads and every warp of the kept launches so
/// far (those before the next one slot 0 will open) has flushed or
/// dropped, those are complete too, the newest included.
pub fn complete_kept(before: Option<&SiteRead>, now: &SiteRead) -> u32 {
    let s = &now.site;
    let next = now.launches;
    let total = kept_before(&s.keep, next);
    let accounted = s.flushed.wrapping_add(s.dropped);
    let device = |r: &SiteRead| {
        let s = &r.site;
        (
            r.launches,
            s.flushed,
            s.dropped,
            s.keep,
            s.done_launch,
            s.done_kept,
        )
    };
    let quiet = before.map(device) == Some(device(now))
        && accounted.wrapping_sub(total.wrapping_mul(s.warps)) as i32 >= 0;
    if quiet {
        total
    } else {
        s.done_kept
    }
}

/// What a drain round does with a site's kept launches `drained..complete`:
/// copies the slabs of the first `copy` (ring indices in order, at most
/// `most`), counts `dropped` launches that found the ring full, and raises
/// the site's `drained` to `drained`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrainPlan {
    /// Ring indices of the slabs to copy, oldest first.
    pub copy: Vec<u32>,
    /// Kept launches dropped whole, without a slab to copy.
    pub dropped: u32,
    /// The site's `drained` after the round.
    pub drained: u32,
}

/// The drain plan for kept launches `drained..complete` of a ring of
/// `slab_count` slabs, copying at most `most` slabs. `written(slab)` says
/// whether ring index `slab` holds a launch newer than the one drained from
/// it before (a kept launch whose slab was still waiting left it as it
/// was). Only the first ring's worth of launches after `drained` can have
/// been written: one a whole ring or more past it was dropped by every
/// warp (each saw its slab waiting), so once a round has been through the
/// ring it skips those, and the ring is free for the launches that come
/// next. Fails on a ring that is not a power of two.
pub fn drain_plan(
    slab_count: u32,
    drained: u32,
    complete: u32,
    most: u32,
    written: impl Fn(u32) -> bool,
) -> Result<DrainPlan> {
    if !slab_count.is_power_of_two() {
        return Err(Error::Corrupt(format!(
            "a site's ring of {slab_count} slabs (not a power of two)"
        )));
    }
    let mut plan = DrainPlan {
        copy: Vec::new(),
        dropped: 0,
        drained,
    };
    let waiting = complete.wrapping_sub(drained);
    if waiting as i32 <= 0 {
        return Ok(plan);
    }
    let maybe = waiting.min(slab_count);
    let mut seen = 0;
    while seen < maybe {
        let slab = drained.wrapping_add(seen) & (slab_count - 1);
        if written(slab) {
            if plan.copy.len() as u32 == most.max(1) {
                break;
            }
            plan.copy.push(slab);
        } else {
            plan.dropped += 1;
        }
        seen += 1;
    }
    if seen == maybe {
        plan.dropped += waiting - maybe;
        plan.drained = complete;
    } else {
        plan.drained = drained.wrapping_add(seen);
    }
    Ok(plan)
}

/// Slabs of a site's ring: `asked` if not 0 (it must be a power of two),
/// else as many slabs of `slab_bytes` as fit in half of `left` bytes after
/// the site's header and counters (`head_bytes`), at most 1,024, rounded
/// down to a power of two (0 if none fits).
pub fn ring_slabs(
    asked: u32,
    left: u64,
    head_bytes: u64,
    slab_bytes: u64,
) -> std::result::Result<u32, String> {
    match asked {
        0 => {
            let fit = ((left / 2).saturating_sub(head_bytes) / slab_bytes.max(1)).min(1024);
            Ok(if fit == 0 {
                0
            } else {
                1u32 << (63 - fit.leading_zeros())
            })
        }
        n if n.is_power_of_two() => Ok(n),
        n => Err(format!("{n} slabs; a ring's slabs are a power of two")),
    }
}

/// Bytes of a site with `slab_count` slabs of `shape`: the 128-byte
/// `ktrace_site`, its launch counters, then its slabs.
pub fn site_bytes(shape: &LaunchShape, slab_count: u32) -> Option<u64> {
    let warps = u32::try_from(shape.slot_count()).ok()?;
    shape
        .buffer_bytes()?
        .checked_mul(u64::from(slab_count))?
        .checked_add(site_head_bytes(warps))
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

/// Whether the slot whose metadata is `m` was opened by a launch later than
/// `after` (the launch drained before from the slab that holds it; `None`:
/// none was), launch numbers wrapping.
pub fn opened_after(m: &SlotMeta, after: Option<u32>) -> bool {
    m.is_opened() && after.map_or(true, |a| m.launch.wrapping_sub(a) as i32 > 0)
}

/// Makes the raw bytes of one drained slab into a launch of a capture:
/// the launch is the newest stamp among its opened and flushed slots newer
/// than `after` (the launch drained from this slab before, if any); every
/// other slot is cleared and counted in the report. `None` when no slot is
/// newer: the launch was dropped (the slab still held the older one).
/// `launch` is the launch's index in the capture, `site` the site's index.
pub fn slab_launch(
    mut raw: Vec<u8>,
    shape: &LaunchShape,
    site: u32,
    launch: u32,
    kernel: &str,
    after: Option<u32>,
) -> Result<(Option<LaunchCapture>, SlabReport)> {
    let shape = LaunchShape { launch, ..*shape };
    let newer = |m: &SlotMeta| m.is_flushed() && opened_after(m, after);
    let (epoch, grids) = {
        let view = LaunchBuffer::new(&raw, &shape, crate::format::layout::LAYOUT_VERSION)?;
        let flushed: Vec<SlotMeta> = view
            .slots()
            .map(|s| *s.meta())
            .filter(|m| newer(m))
            .collect();
        let epoch = flushed
            .iter()
            .map(|m| m.launch)
            .max_by_key(|&l| l.wrapping_sub(after.unwrap_or(0)));
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
        let ours = newer(&m) && Some(m.launch) == epoch;
        if !ours && (m.is_opened() || m.is_flushed()) {
            slot[..META_BYTES].fill(0);
            if epoch.is_some() {
                report.stale_slots += 1;
            }
        }
    }
    let Some(epoch) = epoch else {
        return Ok((None, report));
    };
    let launch = LaunchCapture {
        kernel: kernel.to_string(),
        origin: Some(LaunchOrigin {
            site,
            epoch,
            grid_id: grids.first().copied().unwrap_or(0),
        }),
        ..LaunchCapture::new(shape, raw)
    };
    Ok((Some(launch), report))
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

    /// Runs one launch of every slot at `s`, every warp opening before any
    /// flushes, in the order `order` gives (the order does not matter to
    /// the site); each recording warp flushes. Returns the launch and the
    /// slab its warps wrote.
    fn launch_in(s: &mut SiteModel, order: &[usize]) -> (u32, Option<u32>) {
        let opens: Vec<(u32, Option<u32>)> = order.iter().map(|&w| s.open(w)).collect();
        for o in &opens {
            assert_eq!(o, &opens[0], "the warps of a launch agree");
            if o.1.is_some() {
                s.flush();
            }
        }
        opens[0]
    }

    fn launch(s: &mut SiteModel) -> (u32, Option<u32>) {
        let order: Vec<usize> = (0..s.counters.len()).collect();
        launch_in(s, &order)
    }

    /// The kept launches complete after two reads that agree.
    fn settled(s: &SiteModel) -> u32 {
        complete_kept(Some(&s.read()), &s.read())
    }

    #[test]
    fn tickets_name_the_launch_and_every_nth_keeps_those_in_order() {
        let mut s = SiteModel::new(3, 4, Keep::Every(3));
        let mut kept = Vec::new();
        for i in 0..30 {
            // Slot 0 opens first, last or in the middle.
            let order = [[0, 1, 2], [2, 1, 0], [1, 0, 2]][i as usize % 3];
            let (n, slab) = launch_in(&mut s, &order);
            assert_eq!(n, i);
            if let Some(slab) = slab {
                kept.push((n, slab));
            }
            // The host drains everything between launches.
            s.site.drained = settled(&s);
        }
        let launches: Vec<u32> = kept.iter().map(|k| k.0).collect();
        assert_eq!(launches, (0..30).step_by(3).collect::<Vec<_>>());
        let slabs: Vec<u32> = kept.iter().map(|k| k.1).collect();
        assert_eq!(slabs, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        assert_eq!(
            (s.read().launches, s.site.drained, s.site.dropped),
            (30, 10, 0)
        );
        assert_eq!(s.counters, [30, 30, 30]);
    }

    #[test]
    fn a_full_ring_drops_new_launches_and_counts_them() {
        let mut s = SiteModel::new(2, 4, Keep::All);
        let slabs: Vec<Option<u32>> = (0..10).map(|_| launch(&mut s).1).collect();
        assert_eq!(&slabs[..4], [Some(0), Some(1), Some(2), Some(3)]);
        assert!(slabs[4..].iter().all(Option::is_none));
        // Six launches of two warps each found their slab waiting.
        assert_eq!(s.site.dropped, 12);
        let complete = settled(&s);
        assert_eq!(complete, 10);
        let plan = drain_plan(s.site.slab_count, s.site.drained, complete, 64, |_| true).unwrap();
        assert_eq!(
            plan,
            DrainPlan {
                copy: vec![0, 1, 2, 3],
                dropped: 6,
                drained: 10
            }
        );
        s.site.drained = plan.drained;
        assert_eq!(launch(&mut s), (10, Some(2)));
    }

    #[test]
    fn a_round_copies_at_most_what_its_memory_holds() {
        let all = |_| true;
        let plan = drain_plan(8, 6, 12, 4, all).unwrap();
        assert_eq!(
            plan,
            DrainPlan {
                copy: vec![6, 7, 0, 1],
                dropped: 0,
                drained: 10
            }
        );
        // Nothing waiting, or a count behind `drained` (a stale read).
        assert_eq!(drain_plan(8, 6, 6, 4, all).unwrap().copy, Vec::<u32>::new());
        assert_eq!(drain_plan(8, 6, 5, 4, all).unwrap().drained, 6);
        assert!(drain_plan(6, 0, 3, 4, all).is_err());
    }

    #[test]
    fn far_behind_the_device_a_round_skips_what_was_dropped() {
        // Launches 0-3 fill a ring of 4; everything after was dropped while
        // the drain copied one slab a round.
        let holds = [true, true, true, true];
        let plan = drain_plan(4, 0, 100, 1, |s| holds[s as usize]).unwrap();
        assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![0], 0, 1));
        // Slabs 0-2 drained since, still holding those launches: slab 3,
        // then the ring is through and launches 4..200 were dropped.
        let holds = [false, false, false, true];
        let plan = drain_plan(4, 3, 200, 1, |s| holds[s as usize]).unwrap();
        assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![3], 196, 200));
        // Two slabs still hold their drained launches: dropped, skipped.
        let holds = [false, true, false, true];
        let plan = drain_plan(4, 8, 12, 1, |s| holds[s as usize]).unwrap();
        assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![1], 2, 11));
        let plan = drain_plan(4, 11, 12, 8, |s| holds[s as usize]).unwrap();
        assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![3], 0, 12));
    }

    #[test]
    fn a_ring_is_a_power_of_two_that_fits() {
        assert_eq!(ring_slabs(0, 1 << 30, 256, 17 << 10), Ok(1024));
        // 33.3 MB slabs in 2 GiB: 30 fit in half of it, so 16.
        assert_eq!(ring_slabs(0, 2 << 30, 256, 34_930_688), Ok(16));
        assert_eq!(ring_slabs(0, 100, 256, 1000), Ok(0));
        assert_eq!(ring_slabs(64, 0, 0, 1), Ok(64));
        assert!(ring_slabs(48, 1 << 30, 256, 1000).is_err());
    }

    #[test]
    fn a_window_keeps_its_launches() {
        let w = Keep::Window {
            from: 5,
            until: 9,
            every: 2,
        };
        let kept: Vec<u32> = (0..20).filter(|&e| w.keeps(e)).collect();
        assert_eq!(kept, [5, 7]);
        assert_eq!(kept_before(&w.rule(), 5), 0);
        assert_eq!(kept_before(&w.rule(), 6), 1);
        assert_eq!(kept_before(&w.rule(), 20), 2);
        let mut s = SiteModel::new(1, 4, w);
        let recorded: Vec<(u32, u32)> = (0..20)
            .filter_map(|_| {
                let (n, slab) = launch(&mut s);
                slab.map(|k| (n, k))
            })
            .collect();
        assert_eq!(recorded, [(5, 0), (7, 1)]);
        assert_eq!(settled(&s), 2);
    }

    #[test]
    fn triggers_keep_the_launches_after_the_next_one_opens() {
        let mut s = SiteModel::new(2, 8, Keep::Triggered);
        assert_eq!(launch(&mut s), (0, None));
        // Asked while launch 0 ran: launch 1's slot 0 grants launches 2
        // and 3.
        s.site.triggers_asked = 2;
        assert_eq!(launch(&mut s), (1, None));
        assert_eq!(launch(&mut s), (2, Some(0)));
        // Asked again before the window's last launch: launch 3 grants one
        // more from launch 4.
        s.site.triggers_asked = 3;
        assert_eq!(launch(&mut s), (3, Some(1)));
        assert_eq!(launch(&mut s), (4, Some(2)));
        assert_eq!(launch(&mut s), (5, None));
        s.site.triggers_asked = 4;
        assert_eq!(launch(&mut s), (6, None));
        assert_eq!(launch(&mut s), (7, Some(3)));
        assert_eq!(launch(&mut s), (8, None));
        assert_eq!(settled(&s), 4);
        assert_eq!(s.site.dropped, 0);
    }

    #[test]
    fn a_request_during_a_long_window_extends_it() {
        let mut s = SiteModel::new(1, 8, Keep::Triggered);
        s.site.triggers_asked = 3;
        assert_eq!(launch(&mut s), (0, None));
        assert_eq!(launch(&mut s), (1, Some(0)));
        // Asked while launches 2 and 3 are still to come: the window grows.
        s.site.triggers_asked = 4;
        let kept: Vec<Option<u32>> = (0..5).map(|_| launch(&mut s).1).collect();
        assert_eq!(kept, [Some(1), Some(2), Some(3), None, None]);
    }

    #[test]
    fn the_newest_kept_launch_completes_only_when_nothing_moves() {
        let mut s = SiteModel::new(2, 8, Keep::All);
        launch(&mut s);
        launch(&mut s);
        // Launch 2: slot 0 opened; launches 0 and 1 have ended.
        assert_eq!(s.open(0), (2, Some(2)));
        assert_eq!((s.site.done_launch, s.site.done_kept), (2, 2));
        assert_eq!(settled(&s), 2);
        // The other warp opens and both flush: all three are complete, but
        // only once two reads agree.
        s.open(1);
        s.flush();
        s.flush();
        let before = s.read();
        assert_eq!(complete_kept(None, &s.read()), 2);
        assert_eq!(complete_kept(Some(&before), &s.read()), 3);
        // Slot 1 opened launch 3 before slot 0: launch 3 is not complete.
        s.open(1);
        assert_eq!(settled(&s), 3);
        // A launch that keeps nothing completes nothing new.
        let mut t = SiteModel::new(
            1,
            8,
            Keep::Window {
                from: 0,
                until: 1,
                every: 1,
            },
        );
        launch(&mut t);
        launch(&mut t);
        assert_eq!(settled(&t), 1);
    }

    #[test]
    fn a_site_reads_back_from_its_bytes() {
        let mut s = SiteModel::new(3, 16, Keep::Every(2));
        launch(&mut s);
        let mut b = [0u8; SiteRead::BYTES];
        b[..SITE_BYTES].copy_from_slice(&s.site.to_bytes());
        b[SITE_BYTES..].copy_from_slice(&s.counters[0].to_le_bytes());
        assert_eq!(SiteRead::from_bytes(&b), s.read());
        assert_eq!(site_head_bytes(3), 256);
        assert_eq!(site_head_bytes(33), 128 + 256);
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
        let (l, r) = slab_launch(raw.clone(), &s, 2, 11, "gemm", Some(3)).unwrap();
        let l = l.expect("a launch");
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
        // Drained before as launch 7: a dropped launch left it as it was.
        let (none, r) = slab_launch(raw, &s, 2, 12, "gemm", Some(7)).unwrap();
        assert!(none.is_none());
        assert_eq!(r.stale_slots, 0);
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
        let (_, r) = slab_launch(raw, &s, 0, 0, "k", None).unwrap();
        assert_eq!(r.extra_grids, 1);
    }
}
