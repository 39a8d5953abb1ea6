//! Per-region statistics of matched begin/end spans.
//!
//! Durations are in microseconds. Percentiles are exact, computed from the
//! sorted durations by linear interpolation between the closest ranks (the
//! "linear" method of NumPy and R type 7: the p-th percentile of `n` sorted
//! values sits at rank `p/100 * (n-1)`). The histogram has equal-width bins
//! from the minimum to the maximum duration.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::region_slots::RegionSlots;
use super::sort::{sort_durations, sort_durations_on};
use crate::decode::WarpTrace;
use crate::format::regions::Regions;

/// Extra breakdowns in the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Breakdown {
    /// Launch-wide statistics only.
    #[default]
    None,
    /// Also per block.
    PerBlock,
    /// Also per block and per warp.
    PerWarp,
}

/// Summary choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryOptions {
    /// Histogram bins (default 128).
    pub hist_bins: usize,
    /// Extra breakdowns.
    pub breakdown: Breakdown,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            hist_bins: 128,
            breakdown: Breakdown::None,
        }
    }
}

/// Percentiles of a region's durations, in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Percentiles {
    pub p5: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
}

/// A histogram of durations: `bins` equal bins from `min` to `max` µs, each
/// with the fraction of spans that fall in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Number of bins.
    pub bins: usize,
    /// Lower edge of the first bin, µs.
    pub min: f64,
    /// Upper edge of the last bin, µs.
    pub max: f64,
    /// Fraction of spans per bin.
    pub prob: Vec<f64>,
}

/// Statistics of one region's spans.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionStats {
    /// Region id.
    pub region: u16,
    /// Region name.
    pub name: String,
    /// Number of spans.
    pub count: u64,
    /// Mean duration, µs.
    pub mean_dur: f64,
    /// Coefficient of variation (sample standard deviation over mean); null
    /// with fewer than two spans or a zero mean.
    pub cv_dur: Option<f64>,
    /// Shortest, µs.
    pub min_dur: f64,
    /// Longest, µs.
    pub max_dur: f64,
    /// Population variance, µs².
    pub var_dur_pop: f64,
    /// Sample variance, µs² (0 with one span).
    pub var_dur_sample: f64,
    /// Percentiles, µs.
    pub percentiles: Percentiles,
    /// Histogram.
    pub hist: Histogram,
}

/// Count and total, min and max duration of a region in one block or warp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionTotals {
    /// Region id.
    pub region: u16,
    /// Region name.
    pub name: String,
    /// Number of spans.
    pub count: u64,
    /// Sum of durations, µs.
    pub total_dur: f64,
    /// Mean duration, µs.
    pub mean_dur: f64,
    /// Shortest, µs.
    pub min_dur: f64,
    /// Longest, µs.
    pub max_dur: f64,
}

/// Per-block (and optionally per-warp) totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockBreakdown {
    /// Linear block index.
    pub block: u32,
    /// SM of the block's first traced warp.
    pub sm: u16,
    /// Totals per region.
    pub regions: Vec<RegionTotals>,
    /// Per warp, when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warps: Option<Vec<WarpBreakdown>>,
}

/// Per-warp totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WarpBreakdown {
    /// Warp index within the block.
    pub warp: u16,
    /// Totals per region.
    pub regions: Vec<RegionTotals>,
}

/// The summary file's content (`trace_summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The trace file this summarises.
    pub trace: String,
    /// Always "ns", as in the trace.
    #[serde(rename = "displayTimeUnit")]
    pub display_time_unit: String,
    /// Factor from nanoseconds to the unit of durations here (µs): 0.001.
    /// Kept for readers of older summaries; `unit` says the same.
    pub scale: f64,
    /// The unit of every duration here: always "us" (microseconds).
    #[serde(default = "micros")]
    pub unit: String,
    /// Blocks in the grid.
    pub blocks: u64,
    /// Warps per block.
    pub warps_per_block: u32,
    /// Per-warp event capacity.
    pub per_warp_cap: u32,
    /// Launch index.
    pub launch: u32,
    /// Blocks traced.
    pub blocks_traced: u32,
    /// Warps traced per traced block.
    pub warps_traced: u32,
    /// The launch's kernel time as traced, µs: from the first event to the
    /// last event of any traced warp (null when there is no event).
    #[serde(default)]
    pub kernel_time: Option<f64>,
    /// How percentiles are computed.
    pub percentile_method: String,
    /// Per-region statistics, by region id.
    pub regions: Vec<RegionStats>,
    /// How cycles became time, and the SM clock the anchors measured.
    #[serde(default)]
    pub clock: ClockSummary,
    /// Diagnostics (counts per kind and the first messages).
    pub diagnostics: serde_json::Value,
    /// Per-block breakdown, when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per_block: Option<Vec<BlockBreakdown>>,
    /// The filter applied, when the summary covers only what it kept
    /// ([`SummaryScope::Kept`](super::filter::SummaryScope::Kept)); absent
    /// when the summary covers the whole launch.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub filter: Option<serde_json::Value>,
    /// Where a Perfetto export placed the launch: `axis` (`host_realtime`
    /// or `globaltimer`), and on the host's axis `gpu_ahead_ns` (the offset
    /// subtracted from the GPU's `%globaltimer`, interpolated at the
    /// launch's origin), `uncertainty_ns` (what the clock syncs prove) and
    /// `clock_syncs`. Absent from Chrome exports, whose times count from
    /// the launch's first event.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub placement: Option<serde_json::Value>,
}

fn micros() -> String {
    "us".into()
}

/// The time model of a launch and the SM clock over it, for the summary
/// header, `otherData` and `ktrace summary`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockSummary {
    /// "anchors" (piecewise through the warps' time anchors) or
    /// "two_point" (one rate per warp).
    pub time_model: String,
    /// Time anchors used, over all warps.
    pub anchors: u64,
    /// Slowest SM clock over any window of 10 µs between anchors, MHz.
    pub slowest_mhz: Option<u64>,
    /// Fastest, MHz.
    pub fastest_mhz: Option<u64>,
    /// Mean over those windows, MHz.
    pub mean_mhz: Option<u64>,
    /// The same in one sentence.
    pub text: String,
}

impl ClockSummary {
    /// The summary of a launch decoded with `model` whose warps' clocks
    /// merged into `stats`.
    pub fn new(model: crate::decode::TimeModel, stats: &crate::decode::ClockStats) -> Self {
        let text = match model {
            crate::decode::TimeModel::Anchors => crate::decode::describe_clock(stats),
            crate::decode::TimeModel::TwoPoint => {
                "one clock rate per warp (open and flush timer pairs); no time anchors used".into()
            }
        };
        ClockSummary {
            time_model: model.as_str().into(),
            anchors: stats.anchors,
            slowest_mhz: stats.range.map(|r| r.0.mhz()),
            fastest_mhz: stats.range.map(|r| r.1.mhz()),
            mean_mhz: stats.mean().map(|r| r.mhz()),
            text,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Acc {
    count: u64,
    total: u128,
    min: u64,
    max: u64,
}

impl Acc {
    fn new() -> Self {
        Acc {
            count: 0,
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }
    fn add(&mut self, d: u64) {
        self.count += 1;
        self.total += u128::from(d);
        self.min = self.min.min(d);
        self.max = self.max.max(d);
    }
}

type Totals = BTreeMap<u16, Acc>;

/// Adds `from`'s totals into `into`, region by region.
fn merge_totals(into: &mut Totals, from: Totals) {
    for (region, a) in from {
        let t = into.entry(region).or_insert_with(Acc::new);
        t.count += a.count;
        t.total += a.total;
        t.min = t.min.min(a.min);
        t.max = t.max.max(a.max);
    }
}

/// Collects span durations warp by warp.
///
/// Every span's duration is kept (8 bytes a span), since exact percentiles
/// need them all.
#[derive(Debug)]
pub struct SummaryBuilder {
    opts: SummaryOptions,
    regions: Regions,
    /// Indices of region ids into `durations`.
    slots: RegionSlots,
    /// Durations in ps, per region index.
    durations: Vec<Vec<u64>>,
    blocks: BTreeMap<u32, (u16, Totals, BTreeMap<u16, Totals>)>,
}

fn us(ps: f64) -> f64 {
    ps / 1e6
}

impl SummaryBuilder {
    /// An empty builder for spans of the regions in `regions` (which
    /// also names them in the statistics).
    pub fn new(regions: &Regions, opts: SummaryOptions) -> Self {
        SummaryBuilder {
            opts,
            regions: regions.clone(),
            slots: RegionSlots::new(regions),
            durations: Vec::new(),
            blocks: BTreeMap::new(),
        }
    }

    /// Adds one warp's spans.
    pub fn add_warp(&mut self, w: &WarpTrace) {
        for s in &w.spans {
            let i = self.slots.index(s.region);
            match self.durations.get_mut(i) {
                Some(d) => d.push(s.dur_ps()),
                None => self.push_new_region(i, s.dur_ps()),
            }
        }
        if self.opts.breakdown == Breakdown::None {
            return;
        }
        let entry = self
            .blocks
            .entry(w.id.block)
            .or_insert_with(|| (w.id.sm, Totals::new(), BTreeMap::new()));
        for s in &w.spans {
            entry
                .1
                .entry(s.region)
                .or_insert_with(Acc::new)
                .add(s.dur_ps());
            if self.opts.breakdown == Breakdown::PerWarp {
                entry
                    .2
                    .entry(w.id.warp)
                    .or_default()
                    .entry(s.region)
                    .or_insert_with(Acc::new)
                    .add(s.dur_ps());
            }
        }
    }

    /// An empty builder with the same regions and choices: a part to fill
    /// on another thread and [`SummaryBuilder::merge`] back.
    pub fn part(&self) -> Self {
        SummaryBuilder::new(&self.regions, self.opts)
    }

    /// Adds what `part` holds as if its warps had been added here after
    /// those added so far: each region's durations appended in their
    /// order, the blocks' totals summed (a block first seen in `part` keeps
    /// its SM from there).
    pub fn merge(&mut self, mut part: SummaryBuilder) {
        let ids: Vec<(u16, usize)> = part.by_region().collect();
        for (id, j) in ids {
            let d = std::mem::take(&mut part.durations[j]);
            let i = self.slots.index(id);
            if i >= self.durations.len() {
                self.durations.resize_with(i + 1, Vec::new);
            }
            if self.durations[i].is_empty() {
                self.durations[i] = d;
            } else {
                self.durations[i].extend_from_slice(&d);
            }
        }
        for (block, (sm, totals, warps)) in part.blocks {
            let entry = self
                .blocks
                .entry(block)
                .or_insert_with(|| (sm, Totals::new(), BTreeMap::new()));
            merge_totals(&mut entry.1, totals);
            for (warp, t) in warps {
                merge_totals(entry.2.entry(warp).or_default(), t);
            }
        }
    }

    /// Adds a duration of a region that `durations` does not reach yet.
    #[cold]
    #[inline(never)]
    fn push_new_region(&mut self, index: usize, dur_ps: u64) {
        self.durations.resize_with(index + 1, Vec::new);
        self.durations[index].push(dur_ps);
    }

    /// Every region that has durations: (id, index into `durations`), by id.
    fn by_region(&self) -> impl Iterator<Item = (u16, usize)> + '_ {
        self.slots
            .by_id(self.durations.len())
            .filter(|&(_, i)| !self.durations[i].is_empty())
    }

    /// Per-region statistics of everything added, by region id.
    pub fn region_stats(&self) -> Vec<RegionStats> {
        self.by_region()
            .map(|(id, i)| {
                let name = self.regions.name(id);
                region_stats(id, &name, &self.durations[i], self.opts.hist_bins)
            })
            .collect()
    }

    /// Per-region statistics and the per-block breakdown (as
    /// [`SummaryBuilder::region_stats`] and [`SummaryBuilder::breakdown`]),
    /// sorting the durations in place instead of copying them, and freeing
    /// each region's as soon as its statistics are done.
    pub fn finish(self) -> (Vec<RegionStats>, Option<Vec<BlockBreakdown>>) {
        self.finish_on(1)
    }

    /// [`SummaryBuilder::finish`], each region's durations sorted on up to
    /// `threads` threads (the statistics are the same).
    pub fn finish_on(mut self, threads: usize) -> (Vec<RegionStats>, Option<Vec<BlockBreakdown>>) {
        let breakdown = self.breakdown();
        let order: Vec<(u16, usize)> = self.by_region().collect();
        let mut stats = Vec::with_capacity(order.len());
        let mut scratch = Vec::new();
        for (id, i) in order {
            let mut d = std::mem::take(&mut self.durations[i]);
            sort_durations_on(&mut d, threads, &mut scratch);
            let name = self.regions.name(id);
            stats.push(sorted_region_stats(id, &name, &d, self.opts.hist_bins));
        }
        (stats, breakdown)
    }

    /// The per-block breakdown, if one was asked for.
    pub fn breakdown(&self) -> Option<Vec<BlockBreakdown>> {
        if self.opts.breakdown == Breakdown::None {
            return None;
        }
        let totals = |t: &Totals| -> Vec<RegionTotals> {
            t.iter()
                .map(|(&id, a)| RegionTotals {
                    region: id,
                    name: self.regions.name(id).into_owned(),
                    count: a.count,
                    total_dur: us(a.total as f64),
                    mean_dur: us(a.total as f64 / a.count as f64),
                    min_dur: us(a.min as f64),
                    max_dur: us(a.max as f64),
                })
                .collect()
        };
        Some(
            self.blocks
                .iter()
                .map(|(&block, (sm, t, warps))| BlockBreakdown {
                    block,
                    sm: *sm,
                    regions: totals(t),
                    warps: (self.opts.breakdown == Breakdown::PerWarp).then(|| {
                        warps
                            .iter()
                            .map(|(&warp, t)| WarpBreakdown {
                                warp,
                                regions: totals(t),
                            })
                            .collect()
                    }),
                })
                .collect(),
        )
    }
}

/// A region's spans and marks that carry one value (`KTRACE_B_V` and the
/// like), or none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueGroup {
    /// The value: a span's begin value, or else its end value
    /// ([`crate::decode::Span::value`]); a mark's value. `None`: recorded
    /// without one.
    pub value: Option<u32>,
    /// Statistics of the spans with this value (`count` 0 when only marks
    /// have it).
    pub spans: RegionStats,
    /// Marks with this value.
    pub marks: u64,
}

/// Groups `region`'s spans and marks in `warps` by their value: one group
/// per value, in increasing order, then the group without a value (if
/// any). Durations as in [`region_stats`], with `bins` histogram bins.
pub fn by_value<'a>(
    warps: impl IntoIterator<Item = &'a WarpTrace>,
    region: u16,
    name: &str,
    bins: usize,
) -> Vec<ValueGroup> {
    let mut groups: BTreeMap<(bool, u32), (Vec<u64>, u64)> = BTreeMap::new();
    // (false, v) sorts before (true, 0): values first, then "none".
    let key = |v: Option<u32>| v.map_or((true, 0), |v| (false, v));
    for w in warps {
        for s in w.spans.iter().filter(|s| s.region == region) {
            groups.entry(key(s.value())).or_default().0.push(s.dur_ps());
        }
        for m in w.marks().filter(|m| m.region == region) {
            groups.entry(key(m.value)).or_default().1 += 1;
        }
    }
    groups
        .into_iter()
        .map(|((none, v), (durations, marks))| ValueGroup {
            value: (!none).then_some(v),
            spans: region_stats(region, name, &durations, bins),
            marks,
        })
        .collect()
}

/// Statistics of one region's durations (in picoseconds, any order).
pub fn region_stats(region: u16, name: &str, durations_ps: &[u64], bins: usize) -> RegionStats {
    let mut d: Vec<u64> = durations_ps.to_vec();
    sort_durations(&mut d);
    sorted_region_stats(region, name, &d, bins)
}

/// Statistics of one region's durations, sorted ascending (picoseconds).
fn sorted_region_stats(region: u16, name: &str, d: &[u64], bins: usize) -> RegionStats {
    let n = d.len();
    let bins = bins.max(1);
    if n == 0 {
        return empty_region_stats(region, name, bins);
    }
    let total: u128 = d.iter().map(|&x| u128::from(x)).sum();
    let mean_ps = total as f64 / n as f64;
    let ss: f64 = d
        .iter()
        .map(|&x| {
            let dev = us(x as f64 - mean_ps);
            dev * dev
        })
        .sum();
    let var_pop = ss / n as f64;
    let var_sample = if n > 1 { ss / (n - 1) as f64 } else { 0.0 };
    let mean = us(mean_ps);
    let cv = (n > 1 && mean > 0.0).then(|| var_sample.sqrt() / mean);
    let (min, max) = (d[0], d[n - 1]);
    let hist = histogram(d, bins);
    RegionStats {
        region,
        name: name.to_string(),
        count: n as u64,
        mean_dur: mean,
        cv_dur: cv,
        min_dur: us(min as f64),
        max_dur: us(max as f64),
        var_dur_pop: var_pop,
        var_dur_sample: var_sample,
        percentiles: sorted_percentiles(d),
        hist: Histogram {
            bins,
            min: us(min as f64),
            max: us(max as f64),
            prob: hist.iter().map(|&c| c as f64 / n as f64).collect(),
        },
    }
}

/// The statistics of a region without spans: all zero, an empty histogram
/// of `bins` bins.
fn empty_region_stats(region: u16, name: &str, bins: usize) -> RegionStats {
    RegionStats {
        region,
        name: name.to_string(),
        count: 0,
        mean_dur: 0.0,
        cv_dur: None,
        min_dur: 0.0,
        max_dur: 0.0,
        var_dur_pop: 0.0,
        var_dur_sample: 0.0,
        percentiles: Percentiles {
            p5: 0.0,
            p10: 0.0,
            p25: 0.0,
            p50: 0.0,
            p75: 0.0,
            p90: 0.0,
            p95: 0.0,
            p99: 0.0,
        },
        hist: Histogram {
            bins,
            min: 0.0,
            max: 0.0,
            prob: vec![0.0; bins],
        },
    }
}

/// The percentiles of `d` (sorted ascending, not empty), in µs, each
/// interpolated linearly between the two nearest ranks.
fn sorted_percentiles(d: &[u64]) -> Percentiles {
    let n = d.len();
    let pct = |p: u64| -> f64 {
        // Rank p/100 * (n-1), split into integer and fraction exactly.
        let num = p * (n as u64 - 1);
        let lo = (num / 100) as usize;
        let frac = (num % 100) as f64 / 100.0;
        let a = d[lo] as f64;
        let b = d[(lo + 1).min(n - 1)] as f64;
        us(a + (b - a) * frac)
    };
    Percentiles {
        p5: pct(5),
        p10: pct(10),
        p25: pct(25),
        p50: pct(50),
        p75: pct(75),
        p90: pct(90),
        p95: pct(95),
        p99: pct(99),
    }
}

/// Counts per bin of `d` (sorted ascending, not empty) in `bins` equal
/// bins from its minimum to its maximum.
fn histogram(d: &[u64], bins: usize) -> Vec<u64> {
    let (n, min, max) = (d.len(), d[0], d[d.len() - 1]);
    // Bin of x: floor((x - min) * bins / (max - min)), the last bin also
    // holding max. The durations are sorted, so each bin is a run: bin b
    // starts at the first x with x - min >= ceil(b * (max - min) / bins).
    let mut hist = vec![0u64; bins];
    if max > min {
        let range = u128::from(max - min);
        let mut start = 0;
        for (b, h) in hist.iter_mut().enumerate() {
            let end = if b + 1 == bins {
                n
            } else {
                let edge = ((b as u128 + 1) * range).div_ceil(bins as u128);
                d.partition_point(|&x| u128::from(x - min) < edge)
            };
            *h = (end - start) as u64;
            start = end;
        }
    } else {
        hist[0] = n as u64;
    }
    hist
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stray_region_ids_come_after_the_table_in_id_order() {
        use crate::decode::{decode, DecodeOptions};
        use crate::synth::{SynthLaunch, SynthWarp};

        let l = SynthLaunch::all_traced(1, 32, 32).with(
            SynthWarp::new(0, 0)
                .span(0, 100, 0xffff)
                .span(100, 300, 300)
                .span(300, 400, 1)
                .span(400, 600, 0xffff)
                .flush_at(1000),
        );
        let d = decode(l.buffer(), &DecodeOptions::default());
        let regions = Regions::from_table(&[(1, "mma")]);
        let mut b = SummaryBuilder::new(&regions, SummaryOptions::default());
        b.add_warp(&d.warps[0]);
        // 64 direct slots, then one per stray id: not 0x10000.
        assert_eq!(b.durations.len(), 66);
        let stats = b.region_stats();
        let got: Vec<(u16, &str, u64)> = stats
            .iter()
            .map(|s| (s.region, s.name.as_str(), s.count))
            .collect();
        assert_eq!(
            got,
            [
                (1, "mma", 1),
                (300, "region 300", 1),
                (0xffff, "region 65535", 2)
            ]
        );
        assert_eq!(b.finish().0, stats);
    }

    #[test]
    fn percentiles_linear() {
        // 1..=10 µs.
        let d: Vec<u64> = (1..=10).map(|x| x * 1_000_000).collect();
        let s = region_stats(0, "r", &d, 10);
        assert_eq!(s.count, 10);
        assert_eq!(s.mean_dur, 5.5);
        assert_eq!(s.min_dur, 1.0);
        assert_eq!(s.max_dur, 10.0);
        assert_eq!(s.percentiles.p50, 5.5);
        assert!((s.percentiles.p90 - 9.1).abs() < 1e-12);
        assert!((s.percentiles.p5 - 1.45).abs() < 1e-12);
        assert!((s.var_dur_pop - 8.25).abs() < 1e-12);
        assert!((s.var_dur_sample - 55.0 / 6.0).abs() < 1e-12);
        assert!((s.hist.prob.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(s.hist.prob[9], 0.1);
    }

    #[test]
    fn radix_sort_and_runs_histogram_match_the_direct_forms() {
        let mut next = crate::synth::xorshift64(0x9e37_79b9_7f4a_7c15);
        for (n, bits, bins) in [
            (20_000, 20, 128),
            (70_000, 36, 7),
            (40_000, 64, 128),
            (30_000, 3, 1000),
            (17, 12, 5),
        ] {
            let d: Vec<u64> = (0..n)
                .map(|_| 1_000 + (next() >> (64 - bits)))
                .chain([u64::MAX >> (64 - bits)])
                .collect();
            let mut sorted = d.clone();
            sorted.sort_unstable();
            let mut radix = d.clone();
            sort_durations(&mut radix);
            assert_eq!(radix, sorted);
            let s = region_stats(1, "r", &d, bins);
            let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
            let mut hist = vec![0u64; bins];
            for &x in &d {
                let i = ((u128::from(x - min) * bins as u128) / u128::from(max - min)) as usize;
                hist[i.min(bins - 1)] += 1;
            }
            let prob: Vec<f64> = hist.iter().map(|&c| c as f64 / d.len() as f64).collect();
            assert_eq!(s.hist.prob, prob);
        }
        let same = vec![5u64; 20_000];
        let s = region_stats(0, "r", &same, 4);
        assert_eq!(s.hist.prob, vec![1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn single_span() {
        let s = region_stats(3, "x", &[20_202], 4);
        assert_eq!(s.cv_dur, None);
        assert_eq!(s.percentiles.p99, 0.020202);
        assert_eq!(s.hist.prob, vec![1.0, 0.0, 0.0, 0.0]);
    }
}
