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
use crate::format::layout::{
    site_counter_bytes, site_step_bytes, Site, SiteKeep, SlotMeta, KEEP_HELD_CLOSED,
    KEEP_HELD_OPEN, KEEP_OPEN_END, KEEP_TRIGGERED, META_BYTES, MIN_CAP, SITE_BYTES, SLAB_NEWEST,
};
use crate::format::shape::LaunchShape;

pub use crate::format::contents::WhenFull;

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
    /// The launches of host steps `from..until`: the session opens the
    /// window at the first `step` whose index is in `from..until` and
    /// closes it at the next step outside it, each in the order of the
    /// session's stream (exact for launches on that stream: those enqueued
    /// in the steps of the window).
    Steps {
        /// The index of the first step kept.
        from: u64,
        /// The index of the step after the last one kept.
        until: u64,
    },
    /// The launches that start between `from` and `until` after the
    /// session started (when `ContinuousSession::new` returned), to within
    /// a drain poll: the drain thread opens the window at `from` and
    /// closes it at `until`.
    Seconds {
        /// When the window opens, from the session's start.
        from: std::time::Duration,
        /// When it closes.
        until: std::time::Duration,
    },
}

impl Keep {
    /// The rule as the device reads it.
    pub fn rule(self) -> SiteKeep {
        let (from, until, every) = match self {
            Keep::All => (0, u32::MAX, 1),
            Keep::Every(n) => (0, u32::MAX, n.max(1)),
            Keep::Window { from, until, every } => (from, until.max(from), every.max(1)),
            Keep::Triggered | Keep::Steps { .. } | Keep::Seconds { .. } => (0, 0, 1),
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

/// The rule launch `n` of a held site applies, when the host's `triggered`
/// asks it to change the rule `read`: an open (`KEEP_HELD_OPEN`) starts an
/// open-ended window at `n`, launch `n` included, unless one is open; a
/// close (`KEEP_HELD_CLOSED`) ends an open one before `n`. `None`: the rule
/// stays as read. As `site_open` in `ktrace.cuh`.
pub fn held_rule(read: &SiteKeep, triggered: u32, n: u32) -> Option<SiteKeep> {
    match triggered {
        KEEP_HELD_OPEN if read.until != KEEP_OPEN_END => Some(SiteKeep {
            from: n,
            until: KEEP_OPEN_END,
            base: read.base.wrapping_add(read.until.wrapping_sub(read.from)),
            every: 1,
        }),
        KEEP_HELD_CLOSED if read.until == KEEP_OPEN_END => Some(SiteKeep { until: n, ..*read }),
        _ => None,
    }
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
        triggered: match keep {
            Keep::Triggered => KEEP_TRIGGERED,
            Keep::Steps { .. } | Keep::Seconds { .. } => KEEP_HELD_CLOSED,
            _ => 0,
        },
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

    /// The same site, keeping the newest launches when its ring is full
    /// ([`WhenFull::KeepNewest`]: [`SLAB_NEWEST`] set in `slab_count`).
    pub fn keeping_newest(mut self) -> Self {
        self.site.slab_count |= SLAB_NEWEST;
        self
    }

    /// The warp of `slot` opens: takes its ticket and returns its launch
    /// and the slab it writes (`None`: it records nothing, and if its
    /// launch was kept it counted itself in `dropped`).
    pub fn open(&mut self, slot: usize) -> (u32, Option<u32>) {
        let n = self.counters[slot];
        self.counters[slot] = n.wrapping_add(1);
        let s = &mut self.site;
        let read = SiteKeep {
            every: s.keep.every.max(1),
            ..s.keep
        };
        let held = held_rule(&read, s.triggered, n);
        let rule = held.unwrap_or(read);
        if slot == 0 {
            s.done_launch = n;
            s.done_kept = kept_before(&rule, n);
            let granted = rule.base.wrapping_add(rule.until.wrapping_sub(rule.from));
            if let Some(h) = held {
                s.keep = h;
            } else if s.triggered == KEEP_TRIGGERED && s.triggers_asked != granted {
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
            // As the device: with SLAB_NEWEST set the test always holds.
            if k.wrapping_sub(s.drained) < s.slab_count {
                Some(k & (s.slab_count - 1) & !SLAB_NEWEST)
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

/// Kept launches of the site that a warp has opened, or may be opening:
/// those before slot 0's launch counter (`launches`, which slot 0's warp
/// raised at its open) under the rule as read. The launch after them may
/// have begun too (its other warps can open before slot 0's); none later,
/// since the site's launches never overlap.
pub fn opened_kept(now: &SiteRead) -> u32 {
    kept_before(&now.site.keep, now.launches)
}

/// Whether the warps of the launch a slab holds have all finished, for a
/// site whose launches may overlap (`KTRACE_ARG_OVERLAP`): `metas` are the
/// slab's slots' metadata. The slab's launch is the newest that any slot
/// was opened for; a slot that holds an older one (its warp dropped the
/// launch) stays as it is and is not waited for. A slab with no slot
/// opened holds no launch and has nothing to wait for.
pub fn slab_finished(metas: &[SlotMeta]) -> bool {
    let mut opened = metas.iter().filter(|m| m.is_opened());
    let Some(first) = opened.next() else {
        return true;
    };
    let newest = opened.fold(first.launch, |n, m| {
        if (m.launch.wrapping_sub(n) as i32) > 0 {
            m.launch
        } else {
            n
        }
    });
    metas
        .iter()
        .filter(|m| m.is_opened() && m.launch == newest)
        .all(SlotMeta::finished)
}

/// Kept launches of a site whose launches may overlap that have ended:
/// those of `drained..complete` ([`complete_kept`]) up to the first whose
/// slab has not finished (`finished(slab)`, [`slab_finished`]) in a ring
/// of `slab_count` slabs. A later launch's open says that every warp of
/// the launches before it has opened, not that they have ended. Launches
/// more than a ring past `drained` were dropped whole (see [`drain_plan`])
/// and have nothing to wait for.
pub fn finished_until(
    slab_count: u32,
    drained: u32,
    complete: u32,
    finished: impl Fn(u32) -> bool,
) -> u32 {
    let waiting = complete.wrapping_sub(drained);
    if waiting as i32 <= 0 {
        return complete;
    }
    for k in 0..waiting.min(slab_count) {
        let launch = drained.wrapping_add(k);
        if !finished(launch & (slab_count - 1)) {
            return launch;
        }
    }
    complete
}

/// The oldest kept launch whose slab no running launch can be writing,
/// `opened` kept launches opened ([`opened_kept`]): the launch writing
/// now is kept launch `opened` at most, and writes over the slab of
/// `opened - slab_count`.
fn intact_from(opened: u32, slab_count: u32) -> u32 {
    opened.wrapping_add(1).wrapping_sub(slab_count)
}

/// The drain plan of a site that keeps the newest launches
/// ([`WhenFull::KeepNewest`]), for kept launches `drained..complete` of a
/// ring of `slab_count` slabs, `opened` of them opened ([`opened_kept`]),
/// copying at most `most`. Kept launch `k` is in slab `k % slab_count`;
/// the launch that may be writing now is kept launch `opened` at most, so
/// the slab of `k` is intact only while `k + slab_count > opened`. The
/// launches before the first such one were overwritten or may be: they are
/// counted in `dropped` and skipped. The copies are checked again after
/// they are made ([`overwritten_during`]).
pub fn newest_plan(
    slab_count: u32,
    drained: u32,
    complete: u32,
    opened: u32,
    most: u32,
) -> Result<DrainPlan> {
    if !slab_count.is_power_of_two() {
        return Err(Error::Corrupt(format!(
            "a site's ring of {slab_count} slabs (not a power of two)"
        )));
    }
    let ended = complete.wrapping_sub(drained) as i32;
    if ended <= 0 {
        return Ok(DrainPlan {
            copy: Vec::new(),
            dropped: 0,
            drained,
        });
    }
    // The launches that may have been written over are skipped, but never
    // past those that have ended.
    let skip =
        (intact_from(opened, slab_count).wrapping_sub(drained) as i32).clamp(0, ended) as u32;
    let start = drained.wrapping_add(skip);
    let n = complete
        .wrapping_sub(start)
        .min(most.max(1))
        .min(slab_count);
    Ok(DrainPlan {
        copy: (0..n)
            .map(|i| start.wrapping_add(i) & (slab_count - 1))
            .collect(),
        dropped: skip,
        drained: start.wrapping_add(n),
    })
}

/// Of `copied` kept launches copied from a ring of `slab_count` slabs, the
/// oldest being kept launch `first`, how many a launch may have written
/// over while they were copied: those not intact by the site's state read
/// after the copies, `opened` ([`opened_kept`]) kept launches opened (see
/// [`newest_plan`]). They are the oldest `n` of the copies.
pub fn overwritten_during(first: u32, copied: u32, slab_count: u32, opened: u32) -> u32 {
    let lost = intact_from(opened, slab_count).wrapping_sub(first);
    if lost as i32 > 0 {
        lost.min(copied)
    } else {
        0
    }
}

/// Slabs of a site's ring: `asked` if not 0 (it must be a power of two),
/// else as many slabs of `slab_bytes` (and their steps, 8 bytes each) as
/// fit in half of `left` bytes after the site's header and counters
/// (`head_bytes`) and the steps' padding, at most 1,024, rounded down to a
/// power of two (0 if none fits).
pub fn ring_slabs(
    asked: u32,
    left: u64,
    head_bytes: u64,
    slab_bytes: u64,
) -> std::result::Result<u32, String> {
    match asked {
        0 => {
            let fit = ((left / 2).saturating_sub(head_bytes + 128) / slab_bytes.saturating_add(8))
                .min(1024);
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

/// Bytes of a site with `slab_count` slabs of `shape`: its slabs' steps
/// ([`site_step_bytes`]), the 128-byte `ktrace_site`, its launch counters,
/// then its slabs.
pub fn site_bytes(shape: &LaunchShape, slab_count: u32) -> Option<u64> {
    let warps = u32::try_from(shape.slot_count()).ok()?;
    shape
        .buffer_bytes()?
        .checked_mul(u64::from(slab_count))?
        .checked_add(site_head_bytes(warps))?
        .checked_add(site_step_bytes(slab_count))
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

/// One drained slab's bytes at the smallest capacity that holds what its
/// warps recorded: a power of two, at least [`MIN_CAP`], at least the
/// entries any slot stores ([`SlotView::stored_entries`]: all of its ring
/// for a warp whose ring wrapped or that opened and did not flush, so such
/// a slab keeps its capacity), with each slot's metadata and the start of
/// its ring. The drain copies slabs out of pinned memory this way, so that
/// a cap far above what a warp records costs neither the host's copies nor
/// the capture's bytes; the decoder reads the result as any launch of that
/// capacity. Fails on bytes that are not `shape`'s buffer.
///
/// [`SlotView::stored_entries`]: crate::format::buffer::SlotView::stored_entries
pub fn fitted_slab(raw: &[u8], shape: &LaunchShape) -> Result<(LaunchShape, Vec<u8>)> {
    let view = LaunchBuffer::new(raw, shape, crate::format::layout::LAYOUT_VERSION)?;
    let most = view.slots().map(|s| s.stored_entries()).max().unwrap_or(0);
    let cap = shape.cap();
    // At most the cap, a power of two: so is the fit.
    let fit = most.next_power_of_two().max(MIN_CAP);
    if fit >= cap {
        return Ok((*shape, raw.to_vec()));
    }
    let fitted = LaunchShape {
        cap_log2: fit.trailing_zeros(),
        ..*shape
    };
    let keep = fitted.slot_bytes() as usize;
    let mut out = Vec::with_capacity(keep * shape.slot_count() as usize);
    for slot in raw.chunks_exact(shape.slot_bytes() as usize) {
        out.extend_from_slice(&slot[..keep]);
    }
    Ok((fitted, out))
}

/// Makes the raw bytes of one drained slab into a launch of a capture:
/// the launch is the newest stamp among its opened and flushed slots newer
/// than `after` (the launch drained from this slab before, if any); every
/// other slot is cleared and counted in the report. `None` when no slot is
/// newer: the launch was dropped (the slab still held the older one).
/// `launch` is the launch's index in the capture, `site` the site's index,
/// `step` the slab's step as slot 0's warp wrote it (the host's step + 1,
/// 0 before the first): the launch's step when slot 0 holds the launch.
pub fn slab_launch(
    mut raw: Vec<u8>,
    shape: &LaunchShape,
    site: u32,
    launch: u32,
    kernel: &str,
    after: Option<u32>,
    step: u64,
) -> Result<(Option<LaunchCapture>, SlabReport)> {
    let shape = LaunchShape { launch, ..*shape };
    let newer = |m: &SlotMeta| m.is_flushed() && opened_after(m, after);
    let (epoch, grids, first) = {
        let view = LaunchBuffer::new(&raw, &shape, crate::format::layout::LAYOUT_VERSION)?;
        let first = view.slots().next().map(|s| *s.meta());
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
        (epoch, grids, first)
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
    // Slot 0 wrote the step when it opened for this launch; a slab whose
    // slot 0 holds another launch, or none, says nothing of this one's.
    let step = first
        .filter(|m| newer(m) && m.launch == epoch && step != 0)
        .map(|_| step - 1);
    let launch = LaunchCapture {
        kernel: kernel.to_string(),
        origin: Some(LaunchOrigin {
            site,
            epoch,
            grid_id: grids.first().copied().unwrap_or(0),
            step,
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
mod tests;
