//! How many traced warps are inside each region over the launch.
//!
//! The launch, from its start to its last event, is cut into equal bins
//! (their edges rounded to the picosecond). A bin's value for a region is
//! the mean number of warps inside the region during the bin: the time the
//! warps spent in it within the bin, over the bin's length. A warp counts
//! at most once per region however its spans of that region nest.

use serde::{Deserialize, Serialize};

use super::{ns, Context, WarpView};

/// The busy series of a launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    /// Bins in each series (0 when the launch has no events or lasts no
    /// time).
    pub bins: u32,
    /// Length of a bin, ns (the launch's length over `bins`).
    pub bin_ns: f64,
    /// Start of the first bin, ns from launch start: always 0.
    pub start_ns: f64,
    /// End of the last bin, ns from launch start: the launch's last event.
    pub end_ns: f64,
    /// One series per region with spans, by region name.
    pub series: Vec<BusySeries>,
}

/// One region over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusySeries {
    /// Region name.
    pub region: String,
    /// Region id.
    pub id: u16,
    /// Whether the region matches a wait pattern.
    pub wait: bool,
    /// The highest bin value.
    pub peak: f64,
    /// Mean over the launch: the warps' total time in the region over the
    /// launch's length.
    pub mean: f64,
    /// Mean number of warps inside the region, per bin.
    pub values: Vec<f64>,
}

pub(super) fn busy(views: &[WarpView], ctx: &Context) -> Busy {
    let len = i128::from(ctx.t1 - ctx.t0);
    if len <= 0 {
        return Busy::default();
    }
    let bins = i128::from(ctx.opts.busy_bins.max(1)).min(len);
    let edge = |i: i128| ctx.t0 as i128 + len * i / bins;
    // Per region id: time inside per bin, ps.
    let mut acc: Vec<(u16, Vec<i128>)> = Vec::new();
    for v in views {
        for r in &v.regions {
            let i = match acc.iter().position(|a| a.0 == r.id) {
                Some(i) => i,
                None => {
                    acc.push((r.id, vec![0; bins as usize]));
                    acc.len() - 1
                }
            };
            let series = &mut acc[i].1;
            for &(s, e) in &r.intervals {
                let (s, e) = (i128::from(s), i128::from(e));
                let mut b = ((s - ctx.t0 as i128) * bins / len).clamp(0, bins - 1);
                while b < bins && edge(b) < e {
                    let overlap = e.min(edge(b + 1)) - s.max(edge(b));
                    if overlap > 0 {
                        series[b as usize] += overlap;
                    }
                    b += 1;
                }
            }
        }
    }
    let mut series: Vec<BusySeries> = acc
        .into_iter()
        .map(|(id, inside)| {
            let values: Vec<f64> = inside
                .iter()
                .enumerate()
                .map(|(b, &t)| {
                    let width = edge(b as i128 + 1) - edge(b as i128);
                    t as f64 / width as f64
                })
                .collect();
            let total: i128 = inside.iter().sum();
            BusySeries {
                region: ctx.name(id),
                id,
                wait: ctx.is_wait(id),
                peak: values.iter().copied().fold(0.0, f64::max),
                mean: total as f64 / len as f64,
                values,
            }
        })
        .collect();
    series.sort_by(|a, b| (&a.region, a.id).cmp(&(&b.region, b.id)));
    Busy {
        bins: bins as u32,
        bin_ns: len as f64 / 1000.0 / bins as f64,
        start_ns: 0.0,
        end_ns: ns(ctx.t1 - ctx.t0),
        series,
    }
}
