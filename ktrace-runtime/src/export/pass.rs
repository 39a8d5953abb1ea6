//! The pass over a launch's warps that [`write_trace`], the Perfetto
//! export and [`summarize_launch`] share: the filter applied to each warp,
//! what it keeps handed to a writer, the summary fed with the whole warp or
//! what was kept. A pass can be split into parts, each filled with a run of
//! warps (on another thread) and merged back in slot order, which gives
//! what one pass over all the warps gives.
//!
//! [`write_trace`]: super::write_trace
//! [`summarize_launch`]: super::summarize_launch

use std::borrow::Cow;
use std::path::Path;

use super::collect::LaunchCollector;
use super::filter::{FilterError, LaunchFilter, SummaryScope};
use super::summary::Summary;
use super::ExportOptions;
use crate::decode::{Decoder, WarpTrace};
use crate::diagnostics::Diagnostics;
use crate::fill::RingFill;
use crate::format::regions::Regions;

/// What a run of warps gave: the summary's part, the latest event and the
/// warps kept.
pub(crate) struct PassPart<'d> {
    collector: LaunchCollector<'d>,
    /// The latest event of the warps added, ps from the origin.
    last_event: Option<i64>,
    /// Warps the filter kept.
    pub warps_kept: usize,
    /// How full the warps' rings were.
    pub fill: RingFill,
}

impl<'d> PassPart<'d> {
    /// An empty part of the same launch.
    pub fn part(&self) -> Self {
        PassPart {
            collector: self.collector.part(),
            last_event: None,
            warps_kept: 0,
            fill: RingFill {
                cap: self.fill.cap,
                ..RingFill::default()
            },
        }
    }

    /// Adds the ring fill of warp `i` of `dec` (whatever the filter keeps).
    pub fn add_fill(&mut self, dec: &Decoder<'_>, i: usize) {
        if let Some(slot) = dec.slot_view(i) {
            self.fill.add_slot(&slot);
        }
    }

    /// Applies `filter` to `warp`, adds the warp (or what was kept) to the
    /// summary and returns what the trace is to hold, if anything.
    pub fn add_warp<'w>(
        &mut self,
        filter: Option<&LaunchFilter>,
        warp: &'w WarpTrace,
    ) -> Option<Cow<'w, WarpTrace>> {
        if let Some(e) = warp.events.last() {
            self.last_event = Some(self.last_event.map_or(e.t_ps, |l| l.max(e.t_ps)));
        }
        let kept = match filter {
            None => Some(Cow::Borrowed(warp)),
            Some(f) => f.apply(warp),
        };
        let scope = filter.map_or(SummaryScope::Launch, |f| f.spec().summary);
        match (scope, &kept) {
            (SummaryScope::Launch, _) => self.collector.add_warp(warp),
            (SummaryScope::Kept, Some(k)) => self.collector.add_warp(k),
            (SummaryScope::Kept, None) => {}
        }
        self.warps_kept += usize::from(kept.is_some());
        kept
    }

    /// Adds `part`'s warps as if they had come after those added here.
    pub fn merge(&mut self, part: PassPart<'_>) {
        self.collector.merge(part.collector);
        if let Some(l) = part.last_event {
            self.last_event = Some(self.last_event.map_or(l, |m| m.max(l)));
        }
        self.warps_kept += part.warps_kept;
        self.fill.merge(&part.fill);
    }
}

/// The pass over a whole launch: its filter and what its warps gave.
pub(crate) struct FilteredPass<'d> {
    /// The launch's filter, if any.
    pub filter: Option<LaunchFilter>,
    /// What the warps added so far gave.
    pub part: PassPart<'d>,
    /// Threads that may sort the durations at the end (0: one per core).
    threads: usize,
}

impl<'d> FilteredPass<'d> {
    /// A pass over the warps of `dec`, named after `regions`.
    pub fn new(
        filter: Option<LaunchFilter>,
        dec: &'d Decoder<'d>,
        regions: &Regions,
        opts: &ExportOptions,
    ) -> Self {
        FilteredPass {
            filter,
            part: PassPart {
                collector: LaunchCollector::new(dec, regions, opts.summary),
                last_event: None,
                warps_kept: 0,
                fill: RingFill {
                    cap: dec.shape().cap(),
                    ..RingFill::default()
                },
            },
            threads: opts.threads,
        }
    }

    /// [`PassPart::add_warp`] with the launch's filter.
    pub fn add_warp<'w>(&mut self, warp: &'w WarpTrace) -> Option<Cow<'w, WarpTrace>> {
        self.part.add_warp(self.filter.as_ref(), warp)
    }

    /// Warps the filter kept.
    pub fn warps_kept(&self) -> usize {
        self.part.warps_kept
    }

    /// How full the rings of the warps added so far were.
    pub fn fill(&self) -> RingFill {
        self.part.fill
    }

    /// The summary (recording the filter when it covers only what was
    /// kept), the diagnostics and the filter's record for `otherData`;
    /// fails when the window starts after the launch's last event.
    pub fn finish(
        self,
        trace_name: &Path,
    ) -> std::result::Result<(Summary, Diagnostics, Option<serde_json::Value>), FilterError> {
        if let Some(f) = &self.filter {
            f.check_end(self.part.last_event)?;
        }
        let record = self
            .filter
            .as_ref()
            .map(|f| f.to_json(self.part.warps_kept));
        let threads = crate::threads::thread_count(self.threads);
        let (mut summary, diagnostics) = self.part.collector.finish_on(trace_name, threads);
        if let Some(f) = &self.filter {
            if f.spec().summary == SummaryScope::Kept {
                summary.filter = record.clone();
            }
        }
        Ok((summary, diagnostics, record))
    }
}
