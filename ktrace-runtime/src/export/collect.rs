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
use crate::regions::Regions;

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
        }
    }

    /// Adds one warp: its spans, its diagnostics, and the region ids of all
    /// its events (whether or not an output shows them) that the table
    /// lacks.
    pub fn add_warp(&mut self, w: &WarpTrace) {
        self.summary.add_warp(w);
        self.diagnostics.extend(w.diagnostics.iter().cloned());
        self.clock.merge(&w.clock);
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
        let mut diagnostics = self.diagnostics;
        diagnostics.extend(
            self.unknown
                .into_iter()
                .map(|region| Diagnostic::UnknownRegion { region }),
        );
        let s = self.decoder.shape();
        let (regions, per_block) = self.summary.finish();
        let summary = Summary {
            trace: trace.display().to_string(),
            display_time_unit: "ns".into(),
            scale: 1e-3,
            blocks: s.total_blocks(),
            warps_per_block: s.warps_per_block(),
            per_warp_cap: s.cap(),
            launch: s.launch,
            blocks_traced: s.blocks_traced,
            warps_traced: s.warps_traced(),
            percentile_method: "linear".into(),
            regions,
            clock: ClockSummary::new(self.decoder.time_model(), &self.clock),
            diagnostics: diagnostics.to_json(DIAGNOSTICS_IN_FILES),
            per_block,
        };
        (summary, diagnostics)
    }
}
