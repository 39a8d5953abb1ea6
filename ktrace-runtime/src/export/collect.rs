//! The one pass over a launch's decoded warps that every export shares:
//! the summary's span durations and the launch's diagnostics, with one rule
//! for region ids the table lacks. `ktrace summary` ([`summarize_launch`])
//! and `ktrace export` ([`write_trace`]) both run it, so they report the same
//! diagnostics for one capture.
//!
//! [`summarize_launch`]: super::summarize_launch
//! [`write_trace`]: super::write_trace

use std::collections::BTreeSet;
use std::path::Path;

use super::summary::{ClockSummary, Summary, SummaryBuilder, SummaryOptions};
use super::DIAGNOSTICS_IN_FILES;
use crate::decode::{ClockStats, Decoder, WarpTrace};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::format::regions::Regions;

/// Gathers, warp by warp, what the summary and the diagnostics need.
pub(crate) struct LaunchCollector<'d> {
    decoder: &'d Decoder<'d>,
    summary: SummaryBuilder,
    diagnostics: Diagnostics,
    /// Whether the table names region id `i`, for every id up to its highest.
    known: Vec<bool>,
    /// Region ids of decoded events that the table does not name.
    unknown: BTreeSet<u16>,
    /// The SM clock, as the warps' anchors measured it.
    clock: ClockStats,
    /// The earliest and the latest event of any warp, in ps.
    events_span: Option<(i64, i64)>,
}

impl<'d> LaunchCollector<'d> {
    /// Starts with the decoder's launch-wide diagnostics.
    pub fn new(decoder: &'d Decoder<'d>, regions: &Regions, opts: SummaryOptions) -> Self {
        let mut known = Vec::new();
        for (id, _) in regions.iter() {
            let id = usize::from(id);
            known.resize(known.len().max(id + 1), false);
            known[id] = true;
        }
        LaunchCollector {
            decoder,
            summary: SummaryBuilder::new(regions, opts),
            diagnostics: decoder.diagnostics().clone(),
            known,
            unknown: BTreeSet::new(),
            clock: ClockStats::default(),
            events_span: None,
        }
    }

    /// An empty collector for the same launch, without the decoder's
    /// diagnostics: a part that another thread fills with a run of warps
    /// and [`LaunchCollector::merge`] adds back.
    pub fn part(&self) -> Self {
        LaunchCollector {
            decoder: self.decoder,
            summary: self.summary.part(),
            diagnostics: Diagnostics::new(),
            known: self.known.clone(),
            unknown: BTreeSet::new(),
            clock: ClockStats::default(),
            events_span: None,
        }
    }

    /// Adds a part's warps as if they had been added here after those
    /// added so far.
    pub fn merge(&mut self, part: LaunchCollector<'_>) {
        self.summary.merge(part.summary);
        self.diagnostics.append(part.diagnostics);
        self.clock.merge(&part.clock);
        if let Some((lo, hi)) = part.events_span {
            let (a, b) = self.events_span.unwrap_or((lo, hi));
            self.events_span = Some((a.min(lo), b.max(hi)));
        }
        self.unknown.extend(part.unknown);
    }

    /// Adds one warp: its spans, its diagnostics, and the region ids of all
    /// its events (whether or not an output shows them) that the table
    /// lacks.
    pub fn add_warp(&mut self, w: &WarpTrace) {
        self.summary.add_warp(w);
        self.diagnostics.extend(w.diagnostics.iter().cloned());
        self.clock.merge(&w.clock);
        // Events are in time order.
        if let (Some(first), Some(last)) = (w.events.first(), w.events.last()) {
            let (lo, hi) = self.events_span.unwrap_or((first.t_ps, last.t_ps));
            self.events_span = Some((lo.min(first.t_ps), hi.max(last.t_ps)));
        }
        for e in &w.events {
            if !self.known.get(usize::from(e.region)).is_some_and(|&k| k) {
                self.unknown.insert(e.region);
            }
        }
    }

    /// The summary (naming the trace file `trace`) and every diagnostic:
    /// the decoder's, every warp's in slot order, then one
    /// [`Diagnostic::UnknownRegion`] per unknown region id, by id.
    pub fn finish(self, trace: &Path) -> (Summary, Diagnostics) {
        self.finish_on(trace, 1)
    }

    /// [`LaunchCollector::finish`], the durations sorted on up to
    /// `threads` threads.
    pub fn finish_on(self, trace: &Path, threads: usize) -> (Summary, Diagnostics) {
        let mut diagnostics = self.diagnostics;
        diagnostics.extend(
            self.unknown
                .into_iter()
                .map(|region| Diagnostic::UnknownRegion { region }),
        );
        let s = self.decoder.shape();
        let (regions, per_block) = self.summary.finish_on(threads);
        let summary = Summary {
            trace: trace.display().to_string(),
            display_time_unit: "ns".into(),
            scale: 1e-3,
            unit: "us".into(),
            blocks: s.total_blocks(),
            warps_per_block: s.warps_per_block(),
            per_warp_cap: s.cap(),
            launch: s.launch,
            blocks_traced: s.blocks_traced,
            warps_traced: s.warps_traced(),
            kernel_time: self
                .events_span
                .map(|(first, last)| (i128::from(last) - i128::from(first)) as f64 / 1e6),
            percentile_method: "linear".into(),
            regions,
            clock: ClockSummary::new(self.decoder.time_model(), &self.clock),
            diagnostics: diagnostics.to_json(DIAGNOSTICS_IN_FILES),
            per_block,
            filter: None,
            placement: None,
        };
        (summary, diagnostics)
    }
}

#[cfg(test)]
mod tests {
    use crate::export::{summarize_launch, ExportOptions};
    use crate::format::capture::DeviceInfo;
    use crate::format::regions::Regions;
    use crate::synth::{SynthLaunch, SynthWarp};

    #[test]
    fn the_summary_states_its_unit_and_the_kernel_time() {
        // 2 cycles a ns: block 0's first event at 50 ns, block 1 (opened
        // 1000 ns later) ends at 1000 + 300 ns.
        let launch = SynthLaunch::all_traced(2, 32, 32)
            .with(SynthWarp::new(0, 0).span(100, 300, 0))
            .with(SynthWarp::new(1, 0).span(200, 600, 0))
            .into_capture();
        let regions = Regions::from_table(&[(0, "r")]);
        let device = DeviceInfo::default();
        let opts = ExportOptions::default();
        let (s, _) = summarize_launch(&launch, &device, &regions, &opts).unwrap();
        assert_eq!((s.unit.as_str(), s.scale), ("us", 1e-3));
        assert_eq!(s.kernel_time, Some(1.25));
        let empty = SynthLaunch::all_traced(1, 32, 32).into_capture();
        let (s, _) = summarize_launch(&empty, &device, &regions, &opts).unwrap();
        assert_eq!(s.kernel_time, None);
    }
}
