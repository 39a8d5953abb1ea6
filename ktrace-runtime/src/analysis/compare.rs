//! The roles of two analyses side by side (before, after), for `ktrace
//! diff`. Roles match by name (their regions' names), so a role whose
//! region set changed shows as gone from A and new in B.

use serde::{Deserialize, Serialize};

use super::{Analysis, Role};

/// One role in A and B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleComparison {
    /// The role's name.
    pub role: String,
    /// Warps in A (absent: no such role in A).
    pub warps_a: Option<u64>,
    /// Warps in B.
    pub warps_b: Option<u64>,
    /// Mean active time per warp in A, ns.
    pub active_per_warp_a_ns: Option<f64>,
    /// The same in B.
    pub active_per_warp_b_ns: Option<f64>,
    /// Wait share in A.
    pub wait_share_a: Option<f64>,
    /// Wait share in B.
    pub wait_share_b: Option<f64>,
    /// B's wait share minus A's (absent unless both have the role).
    pub wait_share_change: Option<f64>,
    /// Per region of the role (A's order, then regions only in B).
    pub regions: Vec<RoleRegionComparison>,
}

/// One region of a role in A and B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleRegionComparison {
    /// Region name.
    pub region: String,
    /// Mean time per warp in A, ns.
    pub per_warp_a_ns: Option<f64>,
    /// Mean time per warp in B, ns.
    pub per_warp_b_ns: Option<f64>,
    /// B minus A, ns (absent unless both have it).
    pub delta_ns: Option<f64>,
    /// B over A minus 1 (absent unless both have it and A's is not 0).
    pub change: Option<f64>,
}

/// The roles of `a` and `b`, matched by name: A's roles in A's order, then
/// those only in B.
pub fn compare_roles(a: &Analysis, b: &Analysis) -> Vec<RoleComparison> {
    let mut names: Vec<&str> = a.roles.iter().map(|r| r.name.as_str()).collect();
    for r in &b.roles {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    names
        .into_iter()
        .map(|n| {
            let ra = a.roles.iter().find(|r| r.name == n);
            let rb = b.roles.iter().find(|r| r.name == n);
            compare(n, ra, rb)
        })
        .collect()
}

fn compare(name: &str, a: Option<&Role>, b: Option<&Role>) -> RoleComparison {
    let mut regions: Vec<&str> = Vec::new();
    for r in a.iter().chain(b.iter()) {
        for t in &r.region_times {
            if !regions.contains(&t.region.as_str()) {
                regions.push(&t.region);
            }
        }
    }
    let per_warp = |r: Option<&Role>, region: &str| {
        r.and_then(|r| r.region_times.iter().find(|t| t.region == region))
            .map(|t| t.per_warp_ns)
    };
    let both = |x: Option<f64>, y: Option<f64>| x.zip(y);
    RoleComparison {
        role: name.to_string(),
        warps_a: a.map(|r| r.warps),
        warps_b: b.map(|r| r.warps),
        active_per_warp_a_ns: a.map(|r| r.active_per_warp_ns),
        active_per_warp_b_ns: b.map(|r| r.active_per_warp_ns),
        wait_share_a: a.map(|r| r.wait_share),
        wait_share_b: b.map(|r| r.wait_share),
        wait_share_change: both(a.map(|r| r.wait_share), b.map(|r| r.wait_share))
            .map(|(x, y)| y - x),
        regions: regions
            .into_iter()
            .map(|region| {
                let (x, y) = (per_warp(a, region), per_warp(b, region));
                RoleRegionComparison {
                    region: region.to_string(),
                    per_warp_a_ns: x,
                    per_warp_b_ns: y,
                    delta_ns: both(x, y).map(|(x, y)| y - x),
                    change: both(x, y)
                        .filter(|(x, _)| *x != 0.0)
                        .map(|(x, y)| y / x - 1.0),
                }
            })
            .collect(),
    }
}
