//! Text of `ktrace analyze` and of the roles part of `ktrace diff`.

use std::fmt::Write;

use ktrace_runtime::analysis::{
    Analysis, BusySeries, Imbalance, OccurrenceSpread, Role, RoleComparison, WaitPatterns,
};

use crate::table::{dur, table_text};

/// Columns of a busy series' sparkline at most.
const SPARK_COLUMNS: usize = 60;

/// A duration given in ns, with a unit that suits it.
fn dur_ns(ns: f64) -> String {
    dur(ns / 1e3)
}

/// A signed duration in ns.
fn delta_ns(ns: f64) -> String {
    if ns > 0.0 {
        format!("+{}", dur_ns(ns))
    } else if ns < 0.0 {
        format!("-{}", dur_ns(-ns))
    } else {
        "0".into()
    }
}

fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// Ascending integers as ranges: `0`, `4-11`, `0,2,4-7`.
fn ranges(v: &[u16]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The text of one launch's analysis.
pub(crate) fn analysis_text(a: &Analysis) -> String {
    let mut out = String::new();
    let kernel = if a.kernel.is_empty() {
        String::new()
    } else {
        format!(" ({})", a.kernel)
    };
    let _ = writeln!(
        out,
        "launch {}{kernel}: grid {:?}, block {:?}; {} warps traced, {} with events, in {} blocks; \
         kernel time {} (first to last event)",
        a.launch,
        a.grid,
        a.block,
        a.warps_traced,
        a.warps_with_events,
        a.blocks_with_events,
        dur_ns(a.kernel_time_ns)
    );
    let wait = if a.wait_regions.is_empty() {
        "none".to_string()
    } else {
        a.wait_regions.join(", ")
    };
    let _ = writeln!(
        out,
        "active time: {}; wait regions ({}): {wait}",
        match a.active_window {
            ktrace_runtime::analysis::ActiveWindow::Events => "a warp's first to last event",
            ktrace_runtime::analysis::ActiveWindow::OpenToFlush => "a warp's open to flush",
        },
        a.wait_patterns.join(", ")
    );
    roles_text(&mut out, a);
    imbalance_text(&mut out, a);
    busy_text(&mut out, a);
    if !a.notes.is_empty() {
        let _ = writeln!(out, "\nnotes");
        for n in &a.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    out
}

fn roles_text(out: &mut String, a: &Analysis) {
    let _ = writeln!(out, "\nwarp roles (warps grouped by the regions they run)");
    let mut rows = vec![vec![
        "role".to_string(),
        "warps".into(),
        "blocks".into(),
        "warp in block".into(),
        "active/warp".into(),
        "outside regions".into(),
        "wait share".into(),
        "(min-max)".into(),
    ]];
    for r in &a.roles {
        let mut row = vec![
            r.name.clone(),
            r.warps.to_string(),
            r.blocks.to_string(),
            ranges(&r.warp_indices),
        ];
        if r.active_per_warp_ns > 0.0 {
            row.extend([
                dur_ns(r.active_per_warp_ns),
                pct(r.outside_share),
                pct(r.wait_share),
                format!("{}-{}", pct(r.wait_share_min), pct(r.wait_share_max)),
            ]);
        } else {
            row.extend([
                "no active time".into(),
                "-".into(),
                "-".into(),
                String::new(),
            ]);
        }
        rows.push(row);
    }
    out.push_str(&table_text(&rows, "  "));
    for r in a.roles.iter().filter(|r| !r.region_times.is_empty()) {
        role_regions_text(out, r);
    }
}

fn role_regions_text(out: &mut String, r: &Role) {
    let warps = if r.warps == 1 { "warp" } else { "warps" };
    let _ = writeln!(out, "\n  {} ({} {warps}): time per warp", r.name, r.warps);
    let mut rows = vec![vec![
        "region".to_string(),
        "spans/warp".into(),
        "time/warp".into(),
        "share".into(),
        "mean span".into(),
    ]];
    for t in &r.region_times {
        rows.push(vec![
            if t.wait {
                format!("{} (wait)", t.region)
            } else {
                t.region.clone()
            },
            format!("{:.1}", t.spans_per_warp),
            dur_ns(t.per_warp_ns),
            pct(t.share),
            dur_ns(t.mean_span_ns),
        ]);
    }
    rows.push(vec![
        "(outside any region)".into(),
        String::new(),
        dur_ns(r.outside_per_warp_ns),
        pct(r.outside_share),
        String::new(),
    ]);
    out.push_str(&table_text(&rows, "    "));
}

/// The tail, the slowest blocks and the spread of repeated regions.
fn imbalance_text(out: &mut String, a: &Analysis) {
    let im = &a.imbalance;
    let _ = writeln!(out, "\nimbalance");
    let Some(t) = &im.tail else {
        let _ = writeln!(out, "  no block has an event");
        return;
    };
    let _ = writeln!(
        out,
        "  tail: the last block ({}, SM {}) ends at {}, the median block at {} ({} blocks): \
         {} after the median, {} of the launch",
        t.last_block,
        t.last_sm,
        dur_ns(t.last_end_ns),
        dur_ns(t.median_end_ns),
        t.blocks,
        dur_ns(t.tail_ns),
        pct(t.tail_share)
    );
    slow_blocks_text(out, im);
    occurrences_text(out, im);
}

/// The slowest blocks, a row each.
fn slow_blocks_text(out: &mut String, im: &Imbalance) {
    let _ = writeln!(
        out,
        "  slowest blocks (times from launch start; excess: the block's slowest warp in a region \
         against the median block's)"
    );
    let mut rows = vec![vec![
        "block".to_string(),
        "SM".into(),
        "start".into(),
        "end".into(),
        "over median end".into(),
        "late start".into(),
        "cause".into(),
        "excess".into(),
        "largest non-wait".into(),
        "excess".into(),
    ]];
    for b in &im.slowest_blocks {
        rows.push(vec![
            b.block.to_string(),
            b.sm.to_string(),
            dur_ns(b.start_ns),
            dur_ns(b.end_ns),
            delta_ns(b.end_over_median_ns),
            delta_ns(b.late_start_ns),
            b.cause.clone().unwrap_or_else(|| "-".into()),
            if b.cause.is_some() {
                delta_ns(b.cause_excess_ns)
            } else {
                "-".into()
            },
            b.work_cause.clone().unwrap_or_else(|| "-".into()),
            if b.work_cause.is_some() {
                delta_ns(b.work_excess_ns)
            } else {
                "-".into()
            },
        ]);
    }
    out.push_str(&table_text(&rows, "    "));
}

/// Per region, its worst occurrence across warps (longest span, latest
/// end); nothing when no region repeats.
fn occurrences_text(out: &mut String, im: &Imbalance) {
    if im.occurrences.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  per region, the k-th span of each warp compared across warps (worst k shown)"
    );
    let mut rows = vec![vec![
        "region".to_string(),
        "occurrences".into(),
        "longest vs median span".into(),
        "at k".into(),
        "latest vs median end".into(),
        "at k".into(),
        "latest block".into(),
    ]];
    let mut i = 0;
    while i < im.occurrences.len() {
        let name = &im.occurrences[i].region;
        let mut j = i;
        while j < im.occurrences.len() && im.occurrences[j].region == *name {
            j += 1;
        }
        let occ = &im.occurrences[i..j];
        let by = |f: fn(&OccurrenceSpread) -> f64| {
            occ.iter()
                .max_by(|x, y| f(x).total_cmp(&f(y)).then(y.occurrence.cmp(&x.occurrence)))
                .unwrap_or(&occ[0])
        };
        let d = by(|o| o.dur_max_ns - o.dur_median_ns);
        let e = by(|o| o.end_max_ns - o.end_median_ns);
        rows.push(vec![
            name.clone(),
            occ.len().to_string(),
            format!("{} vs {}", dur_ns(d.dur_max_ns), dur_ns(d.dur_median_ns)),
            d.occurrence.to_string(),
            delta_ns(e.end_max_ns - e.end_median_ns),
            e.occurrence.to_string(),
            format!("{} (warp {})", e.latest_block, e.latest_warp),
        ]);
        i = j;
    }
    out.push_str(&table_text(&rows, "    "));
}

/// A series as at most [`SPARK_COLUMNS`] characters, each the mean of its
/// bins, scaled to the series' peak.
fn sparkline(s: &BusySeries) -> String {
    const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let n = s.values.len();
    if n == 0 || s.peak <= 0.0 {
        return String::new();
    }
    let cols = n.min(SPARK_COLUMNS);
    (0..cols)
        .map(|c| {
            let (lo, hi) = (c * n / cols, ((c + 1) * n / cols).max(c * n / cols + 1));
            let mean = s.values[lo..hi].iter().sum::<f64>() / (hi - lo) as f64;
            let level = (mean / s.peak * 8.0).round() as usize;
            LEVELS[level.min(8)]
        })
        .collect()
}

fn busy_text(out: &mut String, a: &Analysis) {
    let b = &a.busy;
    if b.series.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nwarps inside each region over the launch ({} bins of {}; each line scaled to its peak)",
        b.bins,
        dur_ns(b.bin_ns)
    );
    let mut rows = vec![vec![
        "region".to_string(),
        "peak".into(),
        "mean".into(),
        "over time".into(),
    ]];
    for s in &b.series {
        rows.push(vec![
            s.region.clone(),
            format!("{:.1}", s.peak),
            format!("{:.1}", s.mean),
            format!("|{}|", sparkline(s)),
        ]);
    }
    out.push_str(&table_text(&rows, "  "));
}

/// The roles part of `ktrace diff`.
pub(crate) fn role_diff_text(roles: &[RoleComparison], wait: &WaitPatterns) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "warp roles (A -> B): time per warp; wait share = time in {wait} over active time"
    );
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_string(), f);
    for r in roles {
        let warps = |w: Option<u64>| w.map_or("-".to_string(), |w| w.to_string());
        let _ = writeln!(
            out,
            "\n  {}: warps {} -> {}, active/warp {} -> {}, wait share {} -> {} ({})",
            r.role,
            warps(r.warps_a),
            warps(r.warps_b),
            opt(r.active_per_warp_a_ns, dur_ns),
            opt(r.active_per_warp_b_ns, dur_ns),
            opt(r.wait_share_a, pct),
            opt(r.wait_share_b, pct),
            match (r.warps_a, r.warps_b, r.wait_share_change) {
                (None, _, _) => "only in B".to_string(),
                (_, None, _) => "only in A".to_string(),
                (_, _, Some(c)) => format!("{:+.1} points", c * 100.0),
                _ => "-".to_string(),
            }
        );
        let mut rows = vec![vec![
            "region".to_string(),
            "A".into(),
            "B".into(),
            "delta".into(),
            "change".into(),
        ]];
        for t in &r.regions {
            rows.push(vec![
                t.region.clone(),
                opt(t.per_warp_a_ns, dur_ns),
                opt(t.per_warp_b_ns, dur_ns),
                opt(t.delta_ns, delta_ns),
                match (t.per_warp_a_ns, t.per_warp_b_ns, t.change) {
                    (_, _, Some(c)) => format!("{:+.1}%", c * 100.0),
                    (None, Some(_), _) => "new".into(),
                    (Some(_), None, _) => "gone".into(),
                    _ => "-".into(),
                },
            ]);
        }
        if r.regions.is_empty() {
            let _ = writeln!(out, "    no regions");
        } else {
            out.push_str(&table_text(&rows, "    "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_indices_print_as_ranges() {
        assert_eq!(ranges(&[0]), "0");
        assert_eq!(ranges(&[4, 5, 6, 7, 8, 9, 10, 11]), "4-11");
        assert_eq!(ranges(&[0, 2, 4, 5, 6, 7]), "0,2,4-7");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn sparklines_scale_to_the_peak() {
        let s = BusySeries {
            region: "mma".into(),
            id: 0,
            wait: false,
            peak: 2.0,
            mean: 1.0,
            values: vec![0.0, 1.0, 2.0, 2.0],
        };
        assert_eq!(sparkline(&s), " ▄██");
        let long = BusySeries {
            values: (0..120).map(|i| if i < 60 { 0.0 } else { 2.0 }).collect(),
            ..s
        };
        let line = sparkline(&long);
        assert_eq!(line.chars().count(), SPARK_COLUMNS);
        assert!(line.starts_with("      ") && line.ends_with("████"));
    }
}
