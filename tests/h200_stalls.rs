//! Real PC samples from an H200, read in CI: the planted kernel of
//! `examples/kernels/stalls.cu` and the gemm example (2048³), both
//! untraced, sampled with `KTRACE_STALLS=1` (`.ktrace` fixtures), and
//! Nsight Compute's per-instruction samples of the same kernels
//! (`ncu --section SourceCounters --section WarpStateStats --page source
//! --csv --print-source sass`, trimmed to the all-samples columns).
//!
//! Holds: each planted region's top reason is the one its code causes;
//! ktrace's per-instruction samples correlate with ncu's (Pearson ≥ 0.9)
//! and each region's share agrees with the share ncu's samples give it
//! through the same map (within 5 percentage points); the build's map
//! names the opcodes ncu disassembled at every offset.

use std::collections::BTreeMap;
use std::path::Path;

use ktrace_examples::{kernels, REGIONS};
use ktrace_runtime::analysis::stalls::{stall_tables, StallTable};
use ktrace_runtime::format::pc_map::PcMap;
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::format::stalls::{PcSample, StallSamples};
use ktrace_runtime::Capture;

fn read(name: &str) -> Capture {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data")
        .join(name);
    Capture::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One instruction of ncu's source page.
struct NcuRow {
    offset: u64,
    opcode: String,
    samples: u64,
    /// Per stall column (`long_sb` …), its samples.
    reasons: Vec<(String, u32)>,
}

/// Splits one CSV line (fields in double quotes may hold commas).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn ncu(name: &str) -> Vec<NcuRow> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/data")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines().skip(1);
    let header = fields(lines.next().unwrap());
    lines
        .map(|l| {
            let f = fields(l);
            let samples: u64 = f[2].parse().unwrap();
            let op = f[1]
                .split_whitespace()
                .find(|w| !w.starts_with('@'))
                .unwrap_or("")
                .trim_end_matches(';')
                .to_string();
            NcuRow {
                offset: u64::from_str_radix(f[0].trim_start_matches("0x"), 16).unwrap(),
                opcode: op,
                samples,
                reasons: {
                    let mut r: Vec<(String, u32)> = header[3..]
                        .iter()
                        .zip(&f[3..])
                        .map(|(h, v)| {
                            (
                                h.trim_start_matches("stall_").to_string(),
                                v.parse().unwrap(),
                            )
                        })
                        .collect();
                    // Samples of reasons the page has no column for (the
                    // gemm's wgmma waits).
                    let named: u64 = r.iter().map(|(_, n)| u64::from(*n)).sum();
                    r.push(("other".into(), (samples - named) as u32));
                    r
                },
            }
        })
        .collect()
}

/// ncu's names of the reasons whose placement differs, as CUPTI names them.
fn cupti_name(ncu: &str) -> String {
    match ncu {
        "long_sb" => "long_scoreboard",
        "short_sb" => "short_scoreboard",
        "mio" => "mio_throttle",
        "lg" => "lg_throttle",
        "math" => "math_pipe_throttle",
        "tex" => "tex_throttle",
        "imc" => "imc_miss",
        "no_inst" => "no_instructions",
        "sleep" => "sleeping",
        other => other,
    }
    .to_string()
}

/// ncu's samples as ktrace's, placed by `map`.
fn ncu_samples(rows: &[NcuRow], function: &str, map: &PcMap) -> StallSamples {
    let reasons: Vec<String> = rows[0].reasons.iter().map(|(n, _)| cupti_name(n)).collect();
    StallSamples {
        kernel: "ncu".into(),
        reasons,
        pcs: rows
            .iter()
            .map(|r| {
                let counts = r
                    .reasons
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, n))| *n > 0)
                    .map(|(i, (_, n))| (i as u32, *n))
                    .collect();
                PcSample::placed(function, r.offset, counts, map)
            })
            .collect(),
        ..Default::default()
    }
}

/// Per instruction offset, its samples (each once, not-issued repeats
/// left out).
fn per_pc(s: &StallSamples) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for pc in &s.pcs {
        *m.entry(pc.offset).or_default() += s.pc_samples(pc);
    }
    m
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// Compares the capture's samples with ncu's: the map against ncu's
/// opcodes, the correlation per instruction, the share per region.
/// Returns the Pearson coefficient and the largest gap in shares.
fn cross_check(capture: &str, ncu_csv: &str, map_text: &str) -> (f64, f64) {
    let cap = read(capture);
    let ours = &cap.stalls[0];
    let function = ours.pcs[0].function.clone();
    let map = PcMap::parse(map_text).unwrap();
    assert!(
        map.has_function(&function),
        "the build's map has no {function}: {:?}",
        map.none
    );
    let rows = ncu(ncu_csv);
    for r in &rows {
        let info = map
            .get(&function, r.offset)
            .unwrap_or_else(|| panic!("{function}+{:#x}: not in the build's map", r.offset));
        assert_eq!(
            info.opcode, r.opcode,
            "{function}+{:#x}: the map and ncu disagree (built from other SASS than the H200 ran?)",
            r.offset
        );
    }
    let theirs = ncu_samples(&rows, &function, &map);
    let (a, b) = (per_pc(ours), per_pc(&theirs));
    let total_ncu: u64 = rows.iter().map(|r| r.samples).sum();
    assert_eq!(
        b.values().sum::<u64>(),
        total_ncu,
        "ncu's columns sum to its total"
    );
    let offsets: Vec<u64> = a
        .keys()
        .chain(b.keys())
        .copied()
        .filter(|o| a.get(o).copied().unwrap_or(0) + b.get(o).copied().unwrap_or(0) > 0)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let x: Vec<f64> = offsets
        .iter()
        .map(|o| a.get(o).copied().unwrap_or(0) as f64)
        .collect();
    let y: Vec<f64> = offsets
        .iter()
        .map(|o| b.get(o).copied().unwrap_or(0) as f64)
        .collect();
    let r = pearson(&x, &y);
    let t_ours: &StallTable = &stall_tables(std::slice::from_ref(ours), &cap.regions, None)[0];
    // ncu's samples are placed with this build's map, whose region ids are
    // this build's (`REGIONS`): a kernel added since the capture was
    // recorded renumbers regions. The rows are matched by name.
    let t_ncu = &stall_tables(&[theirs], &Regions::from_table(REGIONS), None)[0];
    let mut gap: f64 = 0.0;
    println!(
        "{capture}: {} instructions sampled, Pearson {r:.4}",
        offsets.len()
    );
    println!(
        "  region               ktrace   ncu      ({} and {} samples)",
        t_ours.samples, t_ncu.samples
    );
    for row in t_ours.regions.iter().chain([&t_ours.outside]) {
        let other = t_ncu
            .regions
            .iter()
            .chain([&t_ncu.outside])
            .find(|o| o.name == row.name)
            .map_or(0.0, |o| o.share);
        println!("  {:<20} {:>6.2}%  {:>6.2}%", row.name, row.share, other);
        gap = gap.max((row.share - other).abs());
    }
    (r, gap)
}

#[test]
fn each_planted_region_stalls_on_what_its_code_does() {
    let cap = read("h200_stalls_planted.ktrace");
    assert!(cap.device.name.contains("H200"), "{:?}", cap.device.name);
    assert!(cap.launches.is_empty(), "sampled with tracing off");
    let t = &stall_tables(&cap.stalls, &cap.regions, None)[0];
    assert!(!t.traced && t.unmapped.is_none(), "{t:?}");
    assert!(t.samples > 100_000, "{} samples", t.samples);
    let expected: [(&str, &[&str]); 5] = [
        ("chase", &["long_scoreboard"]),
        ("fma_chain", &["wait"]),
        ("slow_warp", &["wait"]),
        ("barrier", &["barrier"]),
        ("bank_conflicts", &["short_scoreboard", "mio_throttle"]),
    ];
    for (name, reasons) in expected {
        let row = t.regions.iter().find(|r| r.name == name).unwrap();
        let (top, _, share) = &row.reasons[0];
        println!("{name}: {:.1}% of samples, {top} {share:.1}%", row.share);
        assert!(reasons.contains(&top.as_str()), "{name}: top reason {top}");
        assert!(*share > 60.0, "{name}: {top} only {share:.1}%");
    }
    assert!(
        t.outside.share < 1.0,
        "outside regions: {:.2}%",
        t.outside.share
    );
    assert_eq!(
        t.markers.samples, 0,
        "the untraced build has no marker instructions"
    );
}

#[test]
fn planted_samples_agree_with_nsight_compute() {
    let (r, gap) = cross_check(
        "h200_stalls_planted.ktrace",
        "h200_ncu_planted.csv",
        kernels::STALLS.untraced_map,
    );
    assert!(r >= 0.9, "Pearson {r}");
    assert!(gap <= 5.0, "a region's share differs by {gap:.2} points");
}

#[test]
fn gemm_samples_agree_with_nsight_compute() {
    let (r, gap) = cross_check(
        "h200_stalls_gemm.ktrace",
        "h200_ncu_gemm.csv",
        kernels::GEMM.untraced_map,
    );
    assert!(r >= 0.9, "Pearson {r}");
    assert!(gap <= 5.0, "a region's share differs by {gap:.2} points");
}
