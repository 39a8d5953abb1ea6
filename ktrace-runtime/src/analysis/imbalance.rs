//! Imbalance: how far warps and blocks drift apart, which blocks finish
//! last and why, and how long the tail is.
//!
//! - **Per occurrence**: the k-th span of a region in a warp (k counting
//!   from 0 by start time) is one iteration of a loop around it. Across all
//!   the warps that have a k-th span, the spread of its duration and of its
//!   end (from launch start) says whether iteration k takes longer in some
//!   warps (duration spread) and whether warps fall behind (end spread).
//!   The samples are warps: with several warps of a block in a region, each
//!   counts, and the warp with the latest end is named.
//! - **Blocks**: a block starts at its warps' first event and ends at their
//!   last. A block's time in a region is the largest time in that region of
//!   any of its warps (the block waits for its slowest warp); its
//!   *excess* in the region is that minus the median of the same over the
//!   blocks that run the region. The *cause* of a slow block is its region
//!   with the largest positive excess (a region that is not a wait wins a
//!   tie). When that is a wait region, the block waited longer than the
//!   others, for something it waits on; the region that is not a wait with
//!   the largest positive excess is given beside it (`work_cause`), since a
//!   wait grows because of what it waits for. A block that started late
//!   (`late_start_ns`) may be slow with no excess at all: it ran in a later
//!   wave.
//! - **Tail**: the last block's end against the median block end.

use serde::{Deserialize, Serialize};

use super::{median, Context, WarpView};

/// The imbalance part of an analysis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Imbalance {
    /// Per region and occurrence index, the spread across warps; by region
    /// name, then occurrence.
    pub occurrences: Vec<OccurrenceSpread>,
    /// The slowest blocks, latest end first.
    pub slowest_blocks: Vec<SlowBlock>,
    /// The tail; absent when no block has an event.
    pub tail: Option<Tail>,
}

/// The spread of one occurrence of a region across warps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OccurrenceSpread {
    /// Region name.
    pub region: String,
    /// Region id.
    pub id: u16,
    /// Occurrence index: the k-th span of the region in a warp, from 0.
    pub occurrence: u32,
    /// Warps with such a span.
    pub warps: u64,
    /// Blocks with such a span.
    pub blocks: u64,
    /// Shortest duration, ns.
    pub dur_min_ns: f64,
    /// Median duration, ns.
    pub dur_median_ns: f64,
    /// Longest duration, ns.
    pub dur_max_ns: f64,
    /// Earliest end, ns from launch start.
    pub end_min_ns: f64,
    /// Median end, ns from launch start.
    pub end_median_ns: f64,
    /// Latest end, ns from launch start.
    pub end_max_ns: f64,
    /// Block of the warp with the latest end.
    pub latest_block: u32,
    /// That warp's index in its block.
    pub latest_warp: u16,
    /// That warp's SM.
    pub latest_sm: u16,
    /// Block of the warp with the longest duration.
    pub longest_block: u32,
    /// That warp's index in its block.
    pub longest_warp: u16,
}

/// One of the slowest blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowBlock {
    /// Linear block index.
    pub block: u32,
    /// SM of the block's lowest traced warp with events.
    pub sm: u16,
    /// The block's warps with events.
    pub warps: u64,
    /// First event of the block, ns from launch start.
    pub start_ns: f64,
    /// Last event of the block, ns from launch start.
    pub end_ns: f64,
    /// End minus the median block end, ns.
    pub end_over_median_ns: f64,
    /// Start minus the median block start, ns.
    pub late_start_ns: f64,
    /// The region that made the block slow: the one with the largest
    /// positive excess over the median block; absent when none has one.
    pub cause: Option<String>,
    /// The cause's excess over the median block, ns (0 without a cause).
    pub cause_excess_ns: f64,
    /// Whether the cause is a wait region.
    pub cause_is_wait: bool,
    /// The region that is not a wait with the largest positive excess (the
    /// cause itself when that is not a wait); absent when none has one.
    pub work_cause: Option<String>,
    /// Its excess, ns (0 without one).
    pub work_excess_ns: f64,
    /// The largest positive excess of a wait region, ns (0 when none).
    pub wait_excess_ns: f64,
}

/// The last block against the median one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    /// Blocks with events.
    pub blocks: u64,
    /// Median block end, ns from launch start.
    pub median_end_ns: f64,
    /// Last block end (the launch's last event), ns from launch start.
    pub last_end_ns: f64,
    /// The block that ended last.
    pub last_block: u32,
    /// Its SM.
    pub last_sm: u16,
    /// Last end minus median end, ns.
    pub tail_ns: f64,
    /// `tail_ns` over `last_end_ns`: the share of the launch after half the
    /// blocks were done.
    pub tail_share: f64,
}

/// A block, from its warps.
struct BlockTimes {
    block: u32,
    sm: u16,
    warps: u64,
    start: i64,
    end: i64,
    /// Per region id, the largest time in it of one warp, ps; by id.
    regions: Vec<(u16, i64)>,
}

pub(super) fn imbalance(views: &[WarpView], ctx: &Context) -> (Imbalance, Vec<String>) {
    let (occurrences, notes) = occurrences(views, ctx);
    let blocks = blocks(views);
    if blocks.is_empty() {
        return (
            Imbalance {
                occurrences,
                ..Imbalance::default()
            },
            notes,
        );
    }
    let median_end = median(&mut blocks.iter().map(|b| b.end as f64).collect::<Vec<_>>());
    let median_start = median(&mut blocks.iter().map(|b| b.start as f64).collect::<Vec<_>>());
    let mut ids: Vec<u16> = blocks
        .iter()
        .flat_map(|b| b.regions.iter().map(|r| r.0))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let region_medians: Vec<(u16, f64)> = ids
        .iter()
        .map(|&id| {
            let mut v: Vec<f64> = blocks
                .iter()
                .filter_map(|b| b.regions.iter().find(|r| r.0 == id))
                .map(|r| r.1 as f64)
                .collect();
            (id, median(&mut v))
        })
        .collect();

    let mut order: Vec<&BlockTimes> = blocks.iter().collect();
    order.sort_by(|a, b| b.end.cmp(&a.end).then(a.block.cmp(&b.block)));
    let slowest_blocks = order
        .iter()
        .take(ctx.opts.slow_blocks)
        .map(|b| slow_block(b, &region_medians, median_end, median_start, ctx))
        .collect();
    let last = order[0];
    let last_end = ctx.at(last.end);
    let median_end_ns = (median_end - ctx.t0 as f64) / 1000.0;
    let tail = Tail {
        blocks: blocks.len() as u64,
        median_end_ns,
        last_end_ns: last_end,
        last_block: last.block,
        last_sm: last.sm,
        tail_ns: last_end - median_end_ns,
        tail_share: super::share(last_end - median_end_ns, last_end),
    };
    (
        Imbalance {
            occurrences,
            slowest_blocks,
            tail: Some(tail),
        },
        notes,
    )
}

fn slow_block(
    b: &BlockTimes,
    region_medians: &[(u16, f64)],
    median_end: f64,
    median_start: f64,
    ctx: &Context,
) -> SlowBlock {
    // (excess ps, region id), by excess then lower id first.
    let mut excess: Vec<(f64, u16)> = b
        .regions
        .iter()
        .map(|&(id, ps)| {
            let m = region_medians
                .iter()
                .find(|r| r.0 == id)
                .map_or(0.0, |r| r.1);
            (ps as f64 - m, id)
        })
        .filter(|e| e.0 > 0.0)
        .collect();
    // Largest excess first; at equal excess a region that is not a wait,
    // then the lower id.
    excess.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(ctx.is_wait(a.1).cmp(&ctx.is_wait(b.1)))
            .then(a.1.cmp(&b.1))
    });
    let work = excess.iter().find(|e| !ctx.is_wait(e.1));
    let wait = excess.iter().find(|e| ctx.is_wait(e.1));
    let cause = excess.first();
    SlowBlock {
        block: b.block,
        sm: b.sm,
        warps: b.warps,
        start_ns: ctx.at(b.start),
        end_ns: ctx.at(b.end),
        end_over_median_ns: (b.end as f64 - median_end) / 1000.0,
        late_start_ns: (b.start as f64 - median_start) / 1000.0,
        cause: cause.map(|c| ctx.name(c.1)),
        cause_excess_ns: cause.map_or(0.0, |c| c.0 / 1000.0),
        cause_is_wait: cause.is_some_and(|c| ctx.is_wait(c.1)),
        work_cause: work.map(|c| ctx.name(c.1)),
        work_excess_ns: work.map_or(0.0, |c| c.0 / 1000.0),
        wait_excess_ns: wait.map_or(0.0, |c| c.0 / 1000.0),
    }
}

/// Every block with an event, by block index.
fn blocks(views: &[WarpView]) -> Vec<BlockTimes> {
    let mut with_events: Vec<&WarpView> = views.iter().filter(|v| v.first.is_some()).collect();
    with_events.sort_by_key(|v| (v.id.block, v.id.warp));
    let mut out: Vec<BlockTimes> = Vec::new();
    for v in with_events {
        let (first, last) = (v.first.unwrap_or(0), v.last.unwrap_or(0));
        let b = match out.last_mut() {
            Some(b) if b.block == v.id.block => b,
            _ => {
                out.push(BlockTimes {
                    block: v.id.block,
                    sm: v.id.sm,
                    warps: 0,
                    start: first,
                    end: last,
                    regions: Vec::new(),
                });
                out.last_mut().unwrap_or_else(|| unreachable!())
            }
        };
        b.warps += 1;
        b.start = b.start.min(first);
        b.end = b.end.max(last);
        for r in &v.regions {
            match b.regions.iter_mut().find(|x| x.0 == r.id) {
                Some(x) => x.1 = x.1.max(r.ps),
                None => b.regions.push((r.id, r.ps)),
            }
        }
    }
    out
}

/// One sample of an occurrence: (duration ps, end ps, warp).
type Sample = (i64, i64, crate::diagnostics::WarpId);

fn occurrences(views: &[WarpView], ctx: &Context) -> (Vec<OccurrenceSpread>, Vec<String>) {
    let cap = ctx.opts.max_occurrences as usize;
    // Per region id: samples per occurrence index, and the most spans of
    // the region in one warp.
    let mut per_region: Vec<(u16, Vec<Vec<Sample>>, usize)> = Vec::new();
    for v in views {
        for r in &v.regions {
            let i = match per_region.iter().position(|p| p.0 == r.id) {
                Some(i) => i,
                None => {
                    per_region.push((r.id, Vec::new(), 0));
                    per_region.len() - 1
                }
            };
            let entry = &mut per_region[i];
            entry.2 = entry.2.max(r.spans as usize);
            let spans = v.trace.spans.iter().filter(|s| s.region == r.id).take(cap);
            for (k, s) in spans.enumerate() {
                if entry.1.len() <= k {
                    entry.1.resize_with(k + 1, Vec::new);
                }
                entry.1[k].push((s.end_ps - s.start_ps, s.end_ps, v.id));
            }
        }
    }
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    per_region.sort_by_key(|p| (ctx.name(p.0), p.0));
    for (id, occ, most) in per_region {
        if most > cap {
            notes.push(format!(
                "region {:?} runs up to {most} times in a warp: the imbalance table lists its \
                 first {cap} occurrences",
                ctx.name(id)
            ));
        }
        for (k, samples) in occ.into_iter().enumerate() {
            rows.push(spread(id, k as u32, &samples, ctx));
        }
    }
    (rows, notes)
}

fn spread(id: u16, k: u32, samples: &[Sample], ctx: &Context) -> OccurrenceSpread {
    let mut durs: Vec<f64> = samples.iter().map(|s| s.0 as f64).collect();
    let mut ends: Vec<f64> = samples.iter().map(|s| s.1 as f64).collect();
    let latest = samples
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.block.cmp(&a.2.block)))
        .map_or(samples[0].2, |s| s.2);
    let longest = samples
        .iter()
        .max_by(|a, b| a.0.cmp(&b.0).then(b.2.block.cmp(&a.2.block)))
        .map_or(samples[0].2, |s| s.2);
    let mut blocks: Vec<u32> = samples.iter().map(|s| s.2.block).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let dur_median = median(&mut durs);
    let end_median = median(&mut ends);
    let t0 = ctx.t0 as f64;
    OccurrenceSpread {
        region: ctx.name(id),
        id,
        occurrence: k,
        warps: samples.len() as u64,
        blocks: blocks.len() as u64,
        dur_min_ns: durs[0] / 1000.0,
        dur_median_ns: dur_median / 1000.0,
        dur_max_ns: durs[durs.len() - 1] / 1000.0,
        end_min_ns: (ends[0] - t0) / 1000.0,
        end_median_ns: (end_median - t0) / 1000.0,
        end_max_ns: (ends[ends.len() - 1] - t0) / 1000.0,
        latest_block: latest.block,
        latest_warp: latest.warp,
        latest_sm: latest.sm,
        longest_block: longest.block,
        longest_warp: longest.warp,
    }
}
