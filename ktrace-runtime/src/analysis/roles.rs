//! Warp roles: warps grouped by the set of regions they run.
//!
//! A warp-specialized kernel gives its warps different work (a producer
//! warp loads, consumer warps compute); their traces then use different
//! regions, and the set of regions a warp has spans of names its role.
//! Marks do not count: a role is what a warp spends time in.
//!
//! Shares are ratios of totals over the role's warps (time in the region
//! over active time, both summed over the warps), so a warp with a longer
//! life weighs more; `wait_share_min` and `wait_share_max` give the spread
//! of the per-warp wait shares.

use serde::{Deserialize, Serialize};

use super::{ns, share, Context, WarpView};

/// A group of warps that run the same set of regions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Role {
    /// The role's regions' names in name order joined by `+`
    /// (`"load+wait_empty"`); `"(no regions)"` for warps without spans.
    pub name: String,
    /// The role's regions' names, in name order.
    pub regions: Vec<String>,
    /// Warps in the role.
    pub warps: u64,
    /// Blocks with a warp in the role.
    pub blocks: u64,
    /// The role's warps' indices within their blocks, ascending, each once.
    pub warp_indices: Vec<u16>,
    /// Mean active time per warp, ns.
    pub active_per_warp_ns: f64,
    /// Mean time outside any region per warp, ns.
    pub outside_per_warp_ns: f64,
    /// Time outside any region over active time.
    pub outside_share: f64,
    /// Mean time in wait regions per warp, ns (the union of their spans).
    pub wait_per_warp_ns: f64,
    /// Time in wait regions over active time.
    pub wait_share: f64,
    /// Lowest wait share of one warp of the role (0 without active time).
    pub wait_share_min: f64,
    /// Highest wait share of one warp of the role.
    pub wait_share_max: f64,
    /// Time per region, in name order.
    pub region_times: Vec<RoleRegion>,
}

/// A role's time in one region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleRegion {
    /// Region name.
    pub region: String,
    /// Region id.
    pub id: u16,
    /// Whether the region matches a wait pattern.
    pub wait: bool,
    /// Spans of the region in the role's warps.
    pub spans: u64,
    /// Spans per warp.
    pub spans_per_warp: f64,
    /// Time in the region over all the role's warps, ns.
    pub total_ns: f64,
    /// Mean time in the region per warp, ns.
    pub per_warp_ns: f64,
    /// Time in the region over the role's active time.
    pub share: f64,
    /// Mean span duration, ns (time in the region over spans).
    pub mean_span_ns: f64,
}

struct Acc<'v> {
    names: Vec<String>,
    warps: Vec<&'v WarpView<'v>>,
}

/// The roles of `views`, ordered by their lowest warp index in a block,
/// then by name.
pub(super) fn roles(views: &[WarpView], ctx: &Context) -> Vec<Role> {
    let mut groups: Vec<Acc> = Vec::new();
    for v in views {
        let mut names: Vec<String> = v.regions.iter().map(|r| ctx.name(r.id)).collect();
        names.sort();
        names.dedup();
        match groups.iter_mut().find(|g| g.names == names) {
            Some(g) => g.warps.push(v),
            None => groups.push(Acc {
                names,
                warps: vec![v],
            }),
        }
    }
    let mut roles: Vec<Role> = groups.iter().map(|g| role(g, ctx)).collect();
    roles.sort_by(|a, b| (a.warp_indices.first(), &a.name).cmp(&(b.warp_indices.first(), &b.name)));
    roles
}

fn role(g: &Acc, ctx: &Context) -> Role {
    let n = g.warps.len() as f64;
    let active: i64 = g.warps.iter().map(|v| v.active_ps).sum();
    let outside: i64 = g.warps.iter().map(|v| v.active_ps - v.any_ps).sum();
    let wait: i64 = g.warps.iter().map(|v| v.wait_ps).sum();
    let per_warp: Vec<f64> = g
        .warps
        .iter()
        .map(|v| share(v.wait_ps as f64, v.active_ps as f64))
        .collect();
    let mut blocks: Vec<u32> = g.warps.iter().map(|v| v.id.block).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let mut warp_indices: Vec<u16> = g.warps.iter().map(|v| v.id.warp).collect();
    warp_indices.sort_unstable();
    warp_indices.dedup();
    let mut ids: Vec<u16> = g
        .warps
        .iter()
        .flat_map(|v| v.regions.iter().map(|r| r.id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut region_times: Vec<RoleRegion> = ids
        .into_iter()
        .map(|id| {
            let (spans, ps) = g
                .warps
                .iter()
                .filter_map(|v| v.region(id))
                .fold((0u64, 0i64), |(n, t), r| (n + r.spans, t + r.ps));
            RoleRegion {
                region: ctx.name(id),
                id,
                wait: ctx.is_wait(id),
                spans,
                spans_per_warp: spans as f64 / n,
                total_ns: ns(ps),
                per_warp_ns: ns(ps) / n,
                share: share(ps as f64, active as f64),
                mean_span_ns: if spans > 0 {
                    ns(ps) / spans as f64
                } else {
                    0.0
                },
            }
        })
        .collect();
    region_times.sort_by(|a, b| (&a.region, a.id).cmp(&(&b.region, b.id)));
    Role {
        name: if g.names.is_empty() {
            "(no regions)".into()
        } else {
            g.names.join("+")
        },
        regions: g.names.clone(),
        warps: g.warps.len() as u64,
        blocks: blocks.len() as u64,
        warp_indices,
        active_per_warp_ns: ns(active) / n,
        outside_per_warp_ns: ns(outside) / n,
        outside_share: share(outside as f64, active as f64),
        wait_per_warp_ns: ns(wait) / n,
        wait_share: share(wait as f64, active as f64),
        wait_share_min: per_warp.iter().copied().fold(f64::INFINITY, f64::min),
        wait_share_max: per_warp.iter().copied().fold(0.0, f64::max),
        region_times,
    }
}
