//! What a [`ContinuousSession`](super::ContinuousSession) tells at its end:
//! how full each site's rings were ([`SiteFill`]) and the lines it prints.

use crate::format::layout::{SlotMeta, MIN_CAP};

use super::ContinuousReport;
use crate::format::capture::SiteRecord;

/// How full a site's rings were, over the launches drained: what sizes
/// its slabs (a slab is a launch's sampled warps times the cap, copied
/// whole by the drain).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteFill {
    /// The site's per-warp cap, in entries.
    pub cap: u32,
    /// The most entries (events, anchors, values) one warp recorded.
    pub fullest: u32,
    /// Warps that recorded more than the cap (their oldest entries were
    /// overwritten).
    pub overflowed: u64,
}

impl SiteFill {
    /// Counts one slot of a drained launch (`meta`, if it flushed).
    pub fn add(&mut self, meta: &SlotMeta) {
        if meta.is_flushed() {
            self.fullest = self.fullest.max(meta.count);
            self.overflowed += u64::from(meta.count > self.cap);
        }
    }

    /// Adds `other`'s counts (of the same site).
    pub fn merge(&mut self, other: &SiteFill) {
        self.fullest = self.fullest.max(other.fullest);
        self.overflowed += other.overflowed;
    }

    /// The cap that would have held the fullest warp's entries, when it is
    /// at most half the site's: the slabs would be that much smaller, and
    /// the drain would copy that much less a launch. `None` otherwise, or
    /// when nothing was drained.
    pub fn smaller_cap(&self) -> Option<u32> {
        if self.fullest == 0 || self.overflowed > 0 {
            return None;
        }
        let need = self.fullest.max(MIN_CAP).checked_next_power_of_two()?;
        (need <= self.cap / 2).then_some(need)
    }
}

/// Prints what became of each site's launches, and what to change.
pub(super) fn print_report(r: &ContinuousReport) {
    eprintln!(
        "ktrace: {} launches drained ({} entries, {:.1} M entries/s over {:.1} s) -> {}",
        r.launches,
        r.records,
        r.records as f64 / r.seconds / 1e6,
        r.seconds,
        r.capture.display()
    );
    for (i, s) in r.sites.iter().enumerate() {
        eprintln!(
            "ktrace: site {} {}: {} launches, {} kept, {} {}",
            s.site,
            s.kernel,
            s.launches,
            s.kept,
            s.dropped,
            s.when_full.lost()
        );
        if s.launches == 0 {
            eprintln!(
                "ktrace: warning: site {} {}: no launch opened it (was its kernel launched with \
                 the site's argument, from the traced build?{})",
                s.site,
                s.kernel,
                if crate::switch::enabled() {
                    ""
                } else {
                    " KTRACE is not set, so load_module loads the untraced build: set KTRACE=1, \
                     or load the traced one with load_module_variant(ctx, &kernels::NAME, true)"
                }
            );
        }
        if let Some(f) = r.fills.get(i) {
            print_fill(s, f);
        }
        if s.dropped > 0 {
            eprintln!(
                "ktrace: warning: site {} {}: {} launches {}: the ring was full (drain \
                 slower than the launches; give the session a larger arena, the site a \
                 smaller cap, or keep fewer launches)",
                s.site,
                s.kernel,
                s.dropped,
                s.when_full.lost()
            );
        }
    }
    if r.stale_slots > 0 {
        eprintln!(
            "ktrace: warning: {} slots held no record of their launch (a sampled warp did not \
             open its context, or did not flush it)",
            r.stale_slots
        );
    }
    if r.overlaps > 0 {
        eprintln!(
            "ktrace: warning: {} launches held warps of another launch of their site: give \
             each stream its own site; with programmatic dependent launch, mark the site \
             overlapping and let no thread of a block trigger the next launch before every \
             sampled warp of the block has opened its context (a __syncthreads() between \
             KTRACE_OPEN and griddepcontrol.launch_dependents)",
            r.overlaps
        );
    }
}

/// The lines on how full a site's rings were: a smaller cap that would do,
/// or warps that overflowed.
fn print_fill(s: &SiteRecord, f: &SiteFill) {
    if let Some(cap) = f.smaller_cap() {
        eprintln!(
            "ktrace: site {} {}: its warps recorded at most {} entries of a cap of {}: \
             cap {cap} would have held them, in slabs about {}x smaller, which the \
             drain copies that much faster (SiteConfig::cap)",
            s.site,
            s.kernel,
            f.fullest,
            f.cap,
            f.cap / cap
        );
    }
    if f.overflowed > 0 {
        eprintln!(
            "ktrace: warning: site {} {}: {} warps recorded more than the cap of {} \
             entries (at most {}): their oldest entries were overwritten",
            s.site, s.kernel, f.overflowed, f.cap, f.fullest
        );
    }
}
