//! Counts the SASS instructions and memory operations each event costs in
//! the steady-state loop of the recorder microbenchmark (examples/bench),
//! for each recorder design, and prints the table. Needs cuobjdump
//! (scripts/setup-cuda.sh); skipped with a message without it, unless
//! `KTRACE_REQUIRE_NVCC` is set.

use std::path::Path;

use ktrace_build::test_support::cuda_tools;

mod common;

fn sass(tool: &Path, cubin: &Path, function: &str) -> Vec<(u64, String)> {
    common::sass(tool, cubin, Some(function))
}

/// The loop with the most FFMAs: (instructions, FFMAs, global stores, and
/// the FFMAs between consecutive clock reads).
fn main_loop(code: &[(u64, String)]) -> (usize, usize, usize, Vec<usize>) {
    let mut best = (0, 0, 0, Vec::new());
    for (i, (addr, ins)) in code.iter().enumerate() {
        let Some(target) = ins.split("BRA ").nth(1) else {
            continue;
        };
        let Ok(target) = u64::from_str_radix(target.trim().trim_start_matches("0x"), 16) else {
            continue;
        };
        if target >= *addr {
            continue;
        }
        // Code skipped by a forward branch over an inner loop (the ring
        // recorder's group store, run once per 32 events) is not executed per
        // event: leave it out.
        let range = &code[..=i];
        let target_of = |s: &str| {
            u64::from_str_radix(s.split("BRA ").nth(1)?.trim().trim_start_matches("0x"), 16).ok()
        };
        let backward: Vec<u64> = range
            .iter()
            .filter(|(a, s)| *a >= target && target_of(s).is_some_and(|t| t < *a && t > target))
            .map(|(a, _)| *a)
            .collect();
        let forward: Vec<(u64, u64)> = range
            .iter()
            .filter(|(a, _)| *a >= target)
            .filter_map(|(a, s)| target_of(s).filter(|t| t > a).map(|t| (*a, t)))
            .collect();
        // Time anchors (a globaltimer read and one more store) run once per
        // KTRACE_ANCHOR_CYCLES, not per event: code skipped by a forward
        // branch over them is left out too.
        let anchors: Vec<u64> = range
            .iter()
            .filter(|(a, s)| *a >= target && s.contains("SR_GLOBALTIMER"))
            .map(|(a, _)| *a)
            .collect();
        // For each inner loop and anchor, the smallest forward branch that
        // skips it.
        let skipped: Vec<(u64, u64)> = backward
            .iter()
            .chain(&anchors)
            .filter_map(|b| {
                forward
                    .iter()
                    .filter(|(a, t)| a < b && b < t)
                    .min_by_key(|(a, t)| t - a)
                    .copied()
            })
            .collect();
        let body: Vec<&String> = range
            .iter()
            .filter(|(a, _)| *a >= target && !skipped.iter().any(|(lo, hi)| a > lo && a < hi))
            .map(|(_, s)| s)
            .collect();
        let ffma = body.iter().filter(|s| s.contains("FFMA")).count();
        if ffma > best.1 {
            let stg = body.iter().filter(|s| s.contains("STG")).count();
            let mut gaps = Vec::new();
            let mut run = None;
            for s in &body {
                if s.contains("SR_CLOCKLO") {
                    if let Some(r) = run {
                        gaps.push(r);
                    }
                    run = Some(0);
                } else if s.contains("FFMA") {
                    run = run.map(|r| r + 1);
                }
            }
            best = (body.len(), ffma, stg, gaps);
        }
    }
    best
}

#[test]
fn instructions_per_event_in_the_benchmark_loop() {
    let Some([tool]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    println!("design       events/iter  instr/iter untraced  instr/iter traced  instr/event  STG/event (1/32 = one group store per 32 events)");
    for design in ["store", "ring"] {
        let u = dir.join(format!("recorder_{design}.untraced.cubin"));
        let t = dir.join(format!("recorder_{design}.traced.cubin"));
        let (base_n, base_f, _, _) = main_loop(&sass(&tool, &u, "bench_e0"));
        assert!(base_f >= 8, "{design}: no FMA loop found");
        let base = base_n as f64 / (base_f as f64 / 8.0);
        for ev in [1usize, 2, 4] {
            let f = format!("bench_e{ev}");
            let (un, uf, _, _) = main_loop(&sass(&tool, &u, &f));
            let per_iter_u = un as f64 / (uf as f64 / 8.0);
            assert_eq!(
                per_iter_u, base,
                "{design} {f}: untraced loop differs from the marker-free one"
            );
            let (tn, tf, ts, gaps) = main_loop(&sass(&tool, &t, &f));
            // The user's FMAs stay where the source puts them between the
            // markers: the compiler did not move them across a clock read.
            let pattern: &[usize] = match ev {
                1 => &[8],
                2 => &[8, 0],
                _ => &[4, 4, 0, 0],
            };
            let start = (0..pattern.len()).find(|&o| {
                gaps.iter()
                    .enumerate()
                    .all(|(i, g)| *g == pattern[(i + o) % pattern.len()])
            });
            assert!(
                gaps.len() >= pattern.len() && start.is_some(),
                "{design} {f}: FMAs between clock reads {gaps:?}, expected repeats of {pattern:?}"
            );
            let iters = tf as f64 / 8.0;
            let per_iter_t = tn as f64 / iters;
            let per_event = (per_iter_t - base) / ev as f64;
            let stg = ts as f64 / iters / ev as f64;
            println!("{design:<12} {ev:>11} {per_iter_u:>20.1} {per_iter_t:>18.1} {per_event:>12.2} {stg:>10.3}");
            assert!(
                per_event > 0.0 && per_event < 16.0,
                "{design} {f}: {per_event} instructions per event"
            );
        }
    }
}
