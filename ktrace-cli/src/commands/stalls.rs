//! `ktrace stalls`: why each region is slow, from the PC samples a capture
//! holds (`KTRACE_STALLS`): per region its samples, its share of the
//! kernel's, its top stall reasons and its hottest instructions.

use std::fmt::Write as _;

use ktrace_runtime::analysis::stalls::{stall_tables, RegionStalls, StallTable};
use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::format::pattern::NamePattern;

use crate::cli::StallsArgs;
use crate::error::CliError;

/// What `ktrace stalls --json` writes.
#[derive(serde::Serialize)]
struct StallsDoc<'a> {
    schema: &'static str,
    capture: String,
    device: String,
    kernels: &'a [StallTable],
}

/// The schema name of `ktrace stalls --json` (and of the `stalls` member
/// of `ktrace analyze --json`).
pub const SCHEMA: &str = "ktrace.stalls/1";

/// `ktrace stalls`.
pub fn run(args: StallsArgs) -> Result<(), CliError> {
    let cap = Capture::read(&args.capture).map_err(|e| CliError::reading(&args.capture, e))?;
    let tables = tables(&cap, &args.kernels, args.region.as_deref());
    if tables.is_empty() {
        return Err(CliError::NoStalls {
            path: args.capture.clone(),
            launches: cap.launches.len(),
            sampled: cap.stalls.iter().map(|s| s.kernel.clone()).collect(),
        });
    }
    let text = if args.json {
        let doc = StallsDoc {
            schema: SCHEMA,
            capture: args.capture.display().to_string(),
            device: cap.device.label(),
            kernels: &tables,
        };
        let mut t = serde_json::to_string_pretty(&doc)
            .unwrap_or_else(|e| unreachable!("plain data serialises: {e}"));
        t.push('\n');
        t
    } else {
        tables.iter().map(table_text).collect::<Vec<_>>().join("\n")
    };
    super::emit(text, args.output.as_deref())
}

/// The stall tables of the capture's samples of kernels matching
/// `kernels` (every kernel when empty), keeping regions that match
/// `region`.
pub fn tables(cap: &Capture, kernels: &[String], region: Option<&str>) -> Vec<StallTable> {
    let samples: Vec<_> = cap
        .stalls
        .iter()
        .filter(|s| {
            kernels.is_empty()
                || kernels
                    .iter()
                    .any(|k| NamePattern::new(k).matches(&s.kernel))
        })
        .cloned()
        .collect();
    stall_tables(&samples, &cap.regions, region)
}

/// One kernel's table as text.
pub fn table_text(t: &StallTable) -> String {
    let mut s = String::new();
    let build = if t.traced { "traced" } else { "untraced" };
    let launches: Vec<String> = t.launches.iter().map(u32::to_string).collect();
    let _ = writeln!(
        s,
        "{} ({build} build), launch {}: {} samples, one every 2^{} cycles per SM{}",
        if t.kernel.is_empty() {
            "(kernel)"
        } else {
            &t.kernel
        },
        launches.join(","),
        t.samples,
        t.period_log2,
        if t.dropped > 0 {
            format!(" ({} dropped)", t.dropped)
        } else {
            String::new()
        }
    );
    if let Some(why) = &t.unmapped {
        let _ = writeln!(s, "note: instructions not placed in regions: {why}");
    }
    let _ = writeln!(
        s,
        "{:<24} {:>9} {:>7}  top stall reasons",
        "region", "samples", "share"
    );
    let others = [&t.outside, &t.markers, &t.unplaced];
    for r in t
        .regions
        .iter()
        .chain(others.into_iter().filter(|r| r.samples > 0))
    {
        let _ = writeln!(
            s,
            "{:<24} {:>9} {:>6.1}%  {}",
            r.name,
            r.samples,
            r.share,
            reasons_text(r)
        );
    }
    let _ = writeln!(
        s,
        "hottest instructions (offset, opcode, source, samples, top reason):"
    );
    for r in t
        .regions
        .iter()
        .chain(others.into_iter().filter(|r| r.samples > 0))
    {
        let _ = writeln!(s, "  {}", r.name);
        for h in &r.hottest {
            let _ = writeln!(
                s,
                "    {}+{:#06x}  {:<18} {:<28} {:>8}  {}",
                h.function, h.offset, h.opcode, h.source, h.samples, h.reason
            );
        }
    }
    s
}

fn reasons_text(r: &RegionStalls) -> String {
    r.reasons
        .iter()
        .map(|(name, _, share)| format!("{name} {share:.1}%"))
        .collect::<Vec<_>>()
        .join(", ")
}
