//! `ktrace summary`: region statistics of a capture, or one region's spans
//! and marks by the value recorded with them (`--by-value`).

use ktrace_runtime::decode::Decoder;
use ktrace_runtime::export::summary::{by_value, Summary};
use ktrace_runtime::export::{summarize_launch, ExportOptions};
use ktrace_runtime::fill::ring_fill;
use ktrace_runtime::format::capture::{Capture, LaunchCapture};

use super::read_picked_on;
use crate::cli::SummaryArgs;
use crate::error::CliError;
use crate::table::{dur, print_table};

/// `ktrace summary`.
pub fn run(args: SummaryArgs) -> Result<(), CliError> {
    let threads = args.threads.threads()?;
    let cap = read_picked_on(
        &args.capture,
        args.launch,
        &args.select.selection(),
        threads,
    )?;
    let launches = &cap.launches;
    if let Some(region) = &args.by_value {
        let id = region_id(&cap, region)?;
        for l in launches {
            print_by_value(&cap, l, id, region)?;
        }
        return Ok(());
    }
    let opts = ExportOptions {
        threads,
        ..ExportOptions::default()
    };
    for l in launches {
        let (s, d) = summarize_launch(l, &cap.device, &cap.regions, &opts)?;
        print_summary(&cap, l, &s);
        for (kind, n) in d.counts() {
            println!("  warning: {n} x {kind}");
        }
        for m in d.items().iter().take(5) {
            println!("    {m}");
        }
        println!();
    }
    Ok(())
}

/// The id of the region named `name` in `cap`'s table.
fn region_id(cap: &Capture, name: &str) -> Result<u16, CliError> {
    cap.regions
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(id, _)| id)
        .ok_or_else(|| {
            let known: Vec<&str> = cap.regions.iter().map(|(_, n)| n).collect();
            CliError::Usage(format!(
                "no region \"{name}\" in the capture; its regions: {}",
                known.join(", ")
            ))
        })
}

/// `ktrace summary --by-value`: one row per value of the region in `l`.
fn print_by_value(
    cap: &Capture,
    l: &LaunchCapture,
    region: u16,
    name: &str,
) -> Result<(), CliError> {
    let opts = ExportOptions::default();
    let dec = Decoder::new(l.buffer()?, &opts.decode_for(&cap.device));
    let warps: Vec<_> = dec.warps().collect();
    let groups = by_value(&warps, region, name, 1);
    println!("launch {}: \"{name}\" by value", l.shape.launch);
    if groups.iter().all(|g| g.value.is_none()) {
        println!(
            "  no value was recorded with \"{name}\" (record one with KTRACE_B_V, KTRACE_E_V or KTRACE_M_V)"
        );
    }
    let mut rows = vec![["value", "spans", "mean", "p50", "p90", "max", "marks"]
        .map(String::from)
        .to_vec()];
    for g in &groups {
        let st = &g.spans;
        let d = |us: f64| if st.count == 0 { "-".into() } else { dur(us) };
        rows.push(vec![
            g.value.map_or("(none)".into(), |v| v.to_string()),
            st.count.to_string(),
            d(st.mean_dur),
            d(st.percentiles.p50),
            d(st.percentiles.p90),
            d(st.max_dur),
            g.marks.to_string(),
        ]);
    }
    print_table(&rows);
    println!();
    Ok(())
}

/// The launch's header line, its clock and ring fill, and a row per region.
fn print_summary(cap: &Capture, l: &LaunchCapture, s: &Summary) {
    let sh = &l.shape;
    let kernel_time = s.kernel_time.map_or("no events".into(), |us| {
        format!("{} (first to last event)", dur(us))
    });
    println!(
        "launch {}: grid {:?}, block {:?}, {} of {} blocks x {} warps traced, cap {}, device {}; \
         kernel time {kernel_time}",
        sh.launch,
        sh.grid,
        sh.block,
        sh.blocks_traced,
        sh.total_blocks(),
        sh.warps_traced(),
        sh.cap(),
        if cap.device.name.is_empty() {
            "?"
        } else {
            &cap.device.name
        }
    );
    println!("{}", s.clock.text);
    if let Ok(fill) = l.buffer().as_ref().map(ring_fill) {
        println!("{fill}");
    }
    let mut rows = vec![vec![
        "region".to_string(),
        "count".into(),
        "mean".into(),
        "p50".into(),
        "p99".into(),
        "max".into(),
    ]];
    for r in &s.regions {
        rows.push(vec![
            r.name.clone(),
            r.count.to_string(),
            dur(r.mean_dur),
            dur(r.percentiles.p50),
            dur(r.percentiles.p99),
            dur(r.max_dur),
        ]);
    }
    if s.regions.is_empty() {
        println!("  no complete regions");
    } else {
        print_table(&rows);
    }
}
