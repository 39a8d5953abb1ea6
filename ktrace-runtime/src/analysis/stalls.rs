//! Why a region is slow: the PC samples of a kernel's launches gathered
//! per region, with each region's share of the kernel's samples, its top
//! stall reasons and its hottest instructions. A pure function of the
//! samples a capture holds ([`StallSamples`]); `ktrace stalls`, `ktrace
//! analyze --json` and the report print it.
//!
//! A sample counts towards every region around its instruction, so nested
//! regions' shares add up to more than their parent's. A warp waiting at a
//! barrier (or a memory barrier) is sampled past it: those reasons
//! ([`WAITS_AFTER`]) count in the regions of the barrier instruction just
//! before the one sampled, when there is one. Samples on a
//! marker's own instructions (a traced build's) and on instructions the
//! map could not place are kept apart; so are those outside every region.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::pattern::NamePattern;
use crate::format::pc_map::PcKind;
use crate::format::regions::Regions;
use crate::format::stalls::{StallSamples, WAITS_AFTER};

/// How many instructions a region lists as its hottest.
pub const HOTTEST: usize = 5;
/// How many reasons a region lists.
pub const TOP_REASONS: usize = 4;

/// The stall table of one kernel (one build of it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StallTable {
    /// The kernel's name.
    pub kernel: String,
    /// Whether the traced build was sampled.
    pub traced: bool,
    /// The launches gathered.
    pub launches: Vec<u32>,
    /// The sampling period, `2^period_log2` cycles.
    pub period_log2: u32,
    /// Samples in the kernel (each sample once, `_not_issued` repeats left
    /// out).
    pub samples: u64,
    /// Samples CUPTI dropped.
    pub dropped: u64,
    /// Why there is no map, when there is none.
    pub unmapped: Option<String>,
    /// The regions with samples, most samples first.
    pub regions: Vec<RegionStalls>,
    /// User code outside every region.
    pub outside: RegionStalls,
    /// ktrace's own marker instructions (the traced build's cost).
    pub markers: RegionStalls,
    /// Instructions without line information.
    pub unplaced: RegionStalls,
}

/// The samples of one region, or of one of the table's other groups.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionStalls {
    /// The region's name (`(outside regions)`, `(ktrace markers)`,
    /// `(not placed)` for the other groups).
    pub name: String,
    /// Samples at its instructions.
    pub samples: u64,
    /// Its share of the kernel's samples, in percent.
    pub share: f64,
    /// Its reasons, most samples first (at most [`TOP_REASONS`]), with
    /// their share of the region's samples in percent.
    pub reasons: Vec<(String, u64, f64)>,
    /// Its hottest instructions (at most [`HOTTEST`]).
    pub hottest: Vec<HotInstruction>,
}

/// One sampled instruction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotInstruction {
    /// The function.
    pub function: String,
    /// Offset in the function.
    pub offset: u64,
    /// Opcode.
    pub opcode: String,
    /// `file:line`, or empty.
    pub source: String,
    /// Samples at it.
    pub samples: u64,
    /// Its reason with the most samples.
    pub reason: String,
}

/// Per instruction: its counts per reason name, and where they belong.
struct Pc {
    counts: BTreeMap<String, u64>,
    /// The instruction's own regions and kind.
    here: (Vec<u16>, PcKind),
    /// The regions and kind of the barrier before it, where the samples
    /// of [`WAITS_AFTER`] reasons belong.
    before: (Vec<u16>, PcKind),
    opcode: String,
    source: String,
}

impl Pc {
    /// Where the samples of `reason` at this instruction belong.
    fn placement(&self, reason: &str) -> (&[u16], PcKind) {
        let p = if WAITS_AFTER.contains(&reason) && self.before.1 != PcKind::Unknown {
            &self.before
        } else {
            &self.here
        };
        (&p.0, p.1)
    }
}

/// Which placements a group takes.
type Keep<'a> = &'a dyn Fn(&[u16], PcKind) -> bool;

/// The stall tables of the samples: one per kernel and build, the
/// launches of each gathered, in the order first sampled. `region`, when
/// given, keeps only the regions whose names match it.
pub fn stall_tables(
    samples: &[StallSamples],
    regions: &Regions,
    region: Option<&str>,
) -> Vec<StallTable> {
    let mut order: Vec<(String, bool)> = Vec::new();
    for s in samples {
        let key = (s.kernel.clone(), s.traced);
        if !order.contains(&key) {
            order.push(key);
        }
    }
    order
        .into_iter()
        .map(|(kernel, traced)| {
            let group: Vec<&StallSamples> = samples
                .iter()
                .filter(|s| s.kernel == kernel && s.traced == traced)
                .collect();
            table(kernel, traced, &group, regions, region)
        })
        .collect()
}

/// Every sampled instruction of `group`, its counts summed over launches.
fn gather(group: &[&StallSamples]) -> BTreeMap<(String, u64), Pc> {
    let mut pcs: BTreeMap<(String, u64), Pc> = BTreeMap::new();
    for s in group {
        for p in &s.pcs {
            let pc = pcs
                .entry((p.function.clone(), p.offset))
                .or_insert_with(|| Pc {
                    counts: BTreeMap::new(),
                    here: (p.regions.clone(), p.kind),
                    before: (p.barrier_regions.clone(), p.barrier_kind),
                    opcode: p.opcode.clone(),
                    source: match &p.file {
                        Some(f) => format!("{}:{}", short_path(f), p.line),
                        None => String::new(),
                    },
                });
            for &(r, n) in &p.counts {
                if s.counts_reason(r) {
                    *pc.counts.entry(s.reasons[r as usize].clone()).or_default() += u64::from(n);
                }
            }
        }
    }
    pcs
}

fn table(
    kernel: String,
    traced: bool,
    group: &[&StallSamples],
    regions: &Regions,
    filter: Option<&str>,
) -> StallTable {
    let pcs = gather(group);
    let total: u64 = pcs.values().flat_map(|p| p.counts.values()).sum();
    let group_of = |name: &str, keep: Keep<'_>| region_stalls(name, &pcs, keep, total);
    let mut ids: Vec<u16> = pcs
        .values()
        .flat_map(|p| p.here.0.iter().chain(&p.before.0).copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let pattern = filter.map(NamePattern::new);
    let mut rows: Vec<RegionStalls> = ids
        .into_iter()
        .map(|id| (id, regions.name(id).into_owned()))
        .filter(|(_, name)| pattern.as_ref().map_or(true, |p| p.matches(name)))
        .map(|(id, name)| {
            group_of(&name, &|r: &[u16], k: PcKind| {
                k == PcKind::User && r.contains(&id)
            })
        })
        .filter(|r| r.samples > 0)
        .collect();
    rows.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    let first = group.first();
    StallTable {
        kernel,
        traced,
        launches: group.iter().map(|s| s.launch).collect(),
        period_log2: first.map_or(0, |s| s.period_log2),
        samples: total,
        dropped: group.iter().map(|s| s.dropped_samples).sum(),
        unmapped: group.iter().find_map(|s| s.unmapped.clone()),
        regions: rows,
        outside: group_of("(outside regions)", &|r: &[u16], k: PcKind| {
            k == PcKind::User && r.is_empty()
        }),
        markers: group_of("(ktrace markers)", &|_: &[u16], k: PcKind| {
            k == PcKind::Marker
        }),
        unplaced: group_of("(not placed)", &|_: &[u16], k: PcKind| k == PcKind::Unknown),
    }
}

/// The samples of `pcs` whose placement `keep` takes.
fn region_stalls(
    name: &str,
    pcs: &BTreeMap<(String, u64), Pc>,
    keep: Keep<'_>,
    total: u64,
) -> RegionStalls {
    let mut by_reason: BTreeMap<&str, u64> = BTreeMap::new();
    let mut hottest: Vec<HotInstruction> = Vec::new();
    for ((function, offset), p) in pcs {
        let kept: Vec<(&str, u64)> = p
            .counts
            .iter()
            .filter(|(r, &n)| {
                let (regions, kind) = p.placement(r);
                n > 0 && keep(regions, kind)
            })
            .map(|(r, &n)| (r.as_str(), n))
            .collect();
        if kept.is_empty() {
            continue;
        }
        for &(r, n) in &kept {
            *by_reason.entry(r).or_default() += n;
        }
        let top = kept
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|r| r.0.to_string())
            .unwrap_or_default();
        hottest.push(HotInstruction {
            function: function.clone(),
            offset: *offset,
            opcode: p.opcode.clone(),
            source: p.source.clone(),
            samples: kept.iter().map(|r| r.1).sum(),
            reason: top,
        });
    }
    let samples: u64 = by_reason.values().sum();
    let mut reasons: Vec<(String, u64, f64)> = by_reason
        .into_iter()
        .map(|(r, n)| (r.to_string(), n, percent(n, samples)))
        .collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    reasons.truncate(TOP_REASONS);
    hottest.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.offset.cmp(&b.offset)));
    hottest.truncate(HOTTEST);
    RegionStalls {
        name: name.to_string(),
        samples,
        share: percent(samples, total),
        reasons,
        hottest,
    }
}

fn percent(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

/// The file name with its directory, for tables: `kernels/gemm.cu`.
fn short_path(path: &str) -> &str {
    let mut cut = path.rmatch_indices('/').map(|(i, _)| i);
    cut.nth(1).map_or(path, |i| &path[i + 1..])
}

#[cfg(test)]
mod tests;
