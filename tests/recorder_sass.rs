//! The SASS of each recorder design, read in the steady-state loop of the
//! recorder microbenchmark (examples/bench: 8 dependent FMAs per iteration
//! and 1, 2 or 4 events), and checked:
//!
//! - the user's FMAs stay between the clock reads where the source puts
//!   them (the compiler moved none across an event);
//! - a sampled-out warp (tracing off at run time, or its warp or block not
//!   sampled) runs exactly one instruction per marker site, the skip
//!   branch, and nothing per loop iteration, at a marker with a value
//!   (`KTRACE_M_V`) too;
//! - an event's common path (no anchor due, nothing to write out) is at
//!   most a given number of instructions, with the expected global stores
//!   (one for the store recorder, none for the others) and no reconvergence
//!   barrier; the newest-N recorder's is exactly the skip branch, the clock
//!   read, the tag, the entry's address, its increment and one `STS.64`,
//!   and the never-taken branch to a trap where ptxas keeps it.
//!
//! The same off-path count on the examples' main loops (the gemm, the
//! SGEMM benchmark, the warp-specialized consumer with the default
//! recorder), held to what the builds give now.
//!
//! Prints the table: the event's common path, and what the whole loop
//! costs per event against the untraced loop (the compiler's changes
//! around the events included). Needs cuobjdump (scripts/setup-cuda.sh);
//! skipped with a message without it, unless `KTRACE_REQUIRE_NVCC` is set.

use std::path::Path;

use ktrace_build::test_support::cuda_tools;

mod common;

type Code = Vec<(u64, String)>;

fn sass(tool: &Path, cubin: &Path, function: &str) -> Code {
    common::sass(tool, cubin, Some(function))
}

/// The target of a branch instruction (`BRA 0x…`, predicated or not).
fn target(ins: &str) -> Option<u64> {
    let t = ins.split("BRA ").nth(1)?;
    u64::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok()
}

/// Whether an instruction is the user's math: an FMA or a `wgmma`.
fn is_math(ins: &str) -> bool {
    ins.contains("FFMA") || ins.contains("HGMMA")
}

/// The loop with the most FFMAs (or `wgmma`s): the indices of its first
/// and last (the backward branch) instructions.
fn main_loop(code: &Code) -> (usize, usize) {
    let mut best = (0, 0, 0);
    for (i, (addr, ins)) in code.iter().enumerate() {
        let Some(t) = target(ins).filter(|t| t < addr) else {
            continue;
        };
        let start = code.iter().position(|(a, _)| *a == t).unwrap();
        let fma = code[start..=i].iter().filter(|(_, s)| is_math(s)).count();
        if fma > best.2 {
            best = (start, i, fma);
        }
    }
    assert!(best.2 > 0, "no FMA loop found");
    (best.0, best.1)
}

/// Whether `code[i]` is an event's skip branch: a forward branch followed,
/// within three instructions and before any other branch, by the event's
/// clock read.
fn is_skip(code: &Code, i: usize) -> bool {
    target(&code[i].1).is_some_and(|t| t > code[i].0)
        && code[i + 1..]
            .iter()
            .take(3)
            .take_while(|(_, s)| !s.contains("BRA"))
            .any(|(_, s)| s.contains("SR_CLOCKLO"))
}

/// Whether instructions `from..to` (indices) hold a recorder's rare work:
/// a time anchor, a copy of a staged half, or an inner loop (the ring
/// recorder's group store).
fn rare(code: &Code, from: usize, to: usize) -> bool {
    code[from..to].iter().any(|(a, s)| {
        s.contains("SR_GLOBALTIMER")
            || s.contains("UBLKCP")
            || target(s).is_some_and(|t| t < *a && t >= code[from].0)
    })
}

fn index_of(code: &Code, addr: u64) -> usize {
    code.iter()
        .position(|(a, _)| *a == addr)
        .unwrap_or_else(|| panic!("no instruction at {addr:#x}"))
}

/// The instructions a warp runs from `from` to index `to` (exclusive):
/// past each event (skip branches taken) when `skip`, else through each
/// event's common path (forward branches over rare work taken, the others
/// not).
fn walk(code: &Code, from: usize, to: usize, skip: bool) -> Vec<String> {
    let mut path = Vec::new();
    let mut i = from;
    while i < to {
        let (addr, ins) = &code[i];
        path.push(ins.clone());
        if let Some(t) = target(ins).filter(|t| t > addr) {
            let j = index_of(code, t);
            // A branch to a trap is never taken (the newest-N recorder's
            // guard against if-conversion, where ptxas keeps it).
            let to_trap = code[j].1.contains("TRAP");
            if (skip && is_skip(code, i)) || (!to_trap && !is_skip(code, i) && rare(code, i + 1, j))
            {
                i = j;
                continue;
            }
        }
        i += 1;
    }
    path
}

/// The instructions of `code[from..=to]` counted once each, every event's
/// skip branch taken (what a warp that records nothing has in front of it
/// there), and the number of marker sites.
fn without_events(code: &Code, from: usize, to: usize) -> (usize, usize) {
    let (mut count, mut sites, mut i) = (0, 0, from);
    while i <= to {
        count += 1;
        if is_skip(code, i) {
            sites += 1;
            i = index_of(code, target(&code[i].1).unwrap());
        } else {
            i += 1;
        }
    }
    (count, sites)
}

/// The common path of each event in the loop: from its skip branch to
/// where the skip branch lands.
fn events(code: &Code, from: usize, to: usize) -> Vec<Vec<String>> {
    (from..to)
        .filter(|&i| is_skip(code, i))
        .map(|i| {
            let join = index_of(code, target(&code[i].1).unwrap());
            let mut path = vec![code[i].1.clone()];
            path.extend(walk(code, i + 1, join, false));
            path
        })
        .collect()
}

/// Asserts that the benchmark's FMAs sit between the clock reads of
/// `path` (the loop as a traced warp runs it) as the source puts them: 8
/// per event at one event per iteration, 8 and 0 at two (a region around
/// all 8), 4, 4, 0 and 0 at four (nested regions).
fn assert_fmas_in_place(design: &str, ev: usize, path: &[String]) {
    let mut gaps = Vec::new();
    let mut run = None;
    for s in path {
        if s.contains("SR_CLOCKLO") {
            if let Some(r) = run {
                gaps.push(r);
            }
            run = Some(0);
        } else if s.contains("FFMA") {
            run = run.map(|r| r + 1);
        }
    }
    let pattern: &[usize] = match ev {
        1 => &[8],
        2 => &[8, 0],
        _ => &[4, 4, 0, 0],
    };
    let aligned = (0..pattern.len()).any(|o| {
        gaps.iter()
            .enumerate()
            .all(|(i, g)| *g == pattern[(i + o) % pattern.len()])
    });
    assert!(
        gaps.len() >= pattern.len() && aligned,
        "{design} bench_e{ev}: FMAs between clock reads {gaps:?}, expected repeats of {pattern:?}"
    );
}

struct Design {
    name: &'static str,
    /// Most instructions an event's common path may take.
    max_event: usize,
    /// Global stores on an event's common path.
    stores: usize,
}

/// A kernel's main loop in its untraced and traced builds: the SASS, each
/// loop's first and last instruction, the iterations each holds (counted
/// in the user's math, `per_iter` FMAs or `wgmma`s an iteration: the
/// loops may be unrolled differently) and the untraced loop's
/// instructions per iteration.
struct BenchLoop {
    uc: Code,
    tc: Code,
    us: usize,
    ue: usize,
    ts: usize,
    te: usize,
    u_iters: f64,
    t_iters: f64,
    untraced: f64,
}

impl BenchLoop {
    fn new(tool: &Path, untraced: &Path, traced: &Path, function: &str, per_iter: f64) -> Self {
        let uc = sass(tool, untraced, function);
        let tc = sass(tool, traced, function);
        let (us, ue) = main_loop(&uc);
        let (ts, te) = main_loop(&tc);
        let iters = |c: &Code, s: usize, e: usize| {
            c[s..=e].iter().filter(|(_, x)| is_math(x)).count() as f64 / per_iter
        };
        let (u_iters, t_iters) = (iters(&uc, us, ue), iters(&tc, ts, te));
        let untraced = (ue - us + 1) as f64 / u_iters;
        BenchLoop {
            uc,
            tc,
            us,
            ue,
            ts,
            te,
            u_iters,
            t_iters,
            untraced,
        }
    }

    /// The traced loop's skip branches per iteration.
    fn sites(&self) -> f64 {
        (self.ts..=self.te)
            .filter(|&i| is_skip(&self.tc, i))
            .count() as f64
            / self.t_iters
    }
}

#[test]
fn events_and_sampled_out_sites_in_the_benchmark_loop() {
    let Some([tool]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let designs = [
        // Stamped events (the default): no anchor test; a second timer
        // read, and the stamp's mask and multiply-add into the tag.
        Design {
            name: "store",
            max_event: 10,
            stores: 1,
        },
        Design {
            name: "store_count",
            max_event: 10,
            stores: 1,
        },
        // Time anchors by the clock: the anchor test and its branch.
        Design {
            name: "store_clock",
            max_event: 10,
            stores: 1,
        },
        Design {
            name: "ring",
            max_event: 10,
            stores: 0,
        },
        Design {
            name: "smem",
            max_event: 8,
            stores: 0,
        },
        Design {
            name: "smem_noanchor",
            max_event: 8,
            stores: 0,
        },
        Design {
            name: "newest",
            max_event: 7,
            stores: 0,
        },
        Design {
            name: "newest_pin",
            max_event: 7,
            stores: 0,
        },
    ];
    println!(
        "{:<14} {:>6} {:>12} {:>14} {:>13} {:>16}",
        "design", "ev/it", "event path", "loop/event", "off/site", "common path of one event"
    );
    for d in &designs {
        let u = dir.join(format!("recorder_{}.untraced.cubin", d.name));
        let t = dir.join(format!("recorder_{}.traced.cubin", d.name));
        for ev in [1usize, 2, 4] {
            let f = format!("bench_e{ev}");
            let b = BenchLoop::new(&tool, &u, &t, &f, 8.0);
            let (tc, ts, te, t_iters, untraced) = (&b.tc, b.ts, b.te, b.t_iters, b.untraced);

            // Sampled out: the skip branch at each site, nothing else.
            let sites = b.sites();
            assert_eq!(
                sites, ev as f64,
                "{} {f}: marker sites per iteration",
                d.name
            );
            let off = walk(tc, ts, te + 1, true).len() as f64 / t_iters;
            let off_site = (off - untraced) / sites;
            assert_eq!(
                off_site, 1.0,
                "{} {f}: a sampled-out warp runs {off} instructions per iteration against \
                 {untraced} untraced ({sites} sites)",
                d.name
            );

            // Traced: the FMAs between consecutive clock reads, as in the
            // source, on the path the loop takes.
            let on = walk(tc, ts, te + 1, false);
            assert_fmas_in_place(d.name, ev, &on);
            let loop_event = (on.len() as f64 / t_iters - untraced) / ev as f64;

            // One event's common path.
            let paths = events(tc, ts, te + 1);
            let longest = paths.iter().max_by_key(|p| p.len()).unwrap();
            for p in &paths {
                let stg = p.iter().filter(|s| s.contains("STG")).count();
                assert!(
                    p.len() <= d.max_event && stg == d.stores,
                    "{} {f}: an event takes {} instructions and {stg} global stores (at most \
                     {} and exactly {} expected): {p:?}",
                    d.name,
                    p.len(),
                    d.max_event,
                    d.stores
                );
                assert!(
                    !p.iter().any(|s| s.contains("BSSY") || s.contains("BSYNC")),
                    "{} {f}: a reconvergence barrier on the event's path: {p:?}",
                    d.name
                );
                if d.name.starts_with("newest") {
                    // 6 instructions, and the never-taken branch to the
                    // trap where ptxas keeps it.
                    let sts = p.iter().filter(|s| s.starts_with("STS.64")).count();
                    let branches = p.iter().filter(|s| s.contains("BRA")).count();
                    assert!(
                        p.len() == 5 + branches && branches <= 2 && sts == 1,
                        "{} {f}: not a 6-instruction event with one STS.64: {p:?}",
                        d.name
                    );
                }
            }
            println!(
                "{:<14} {ev:>6} {:>12} {loop_event:>14.2} {off_site:>13.2}   {}",
                d.name,
                longest.len(),
                longest.join(" | ")
            );
        }

        // A value site (`KTRACE_M_V("tick", i)`, bench_v1): its event and
        // value entry are one block, so a sampled-out warp runs one
        // instruction there too (the skip branch), besides what keeping
        // the value's operand costs the loop (the loop index, which the
        // untraced loop does not keep: one add per unrolled copy of 4
        // iterations), and the FMAs stay in place.
        let b = BenchLoop::new(&tool, &u, &t, "bench_v1", 8.0);
        let (uc, tc, us, ue, ts, te) = (&b.uc, &b.tc, b.us, b.ue, b.ts, b.te);
        let (u_iters, t_iters, untraced) = (b.u_iters, b.t_iters, b.untraced);
        let sites = b.sites();
        assert_eq!(
            sites, 1.0,
            "{} bench_v1: skip branches per iteration",
            d.name
        );
        let off = walk(tc, ts, te + 1, true).len() as f64 / t_iters;
        let skips = walk(tc, ts, te + 1, true)
            .iter()
            .filter(|x| x.contains("BRA"))
            .count() as f64
            / t_iters;
        let loop_branches = uc[us..=ue]
            .iter()
            .filter(|(_, x)| x.contains("BRA"))
            .count() as f64
            / u_iters;
        assert!(
            skips - loop_branches == 1.0 && off - untraced <= 1.25,
            "{} bench_v1: a sampled-out warp runs {off} instructions per iteration against \
             {untraced} untraced, {skips} branches against {loop_branches}",
            d.name
        );
        assert_fmas_in_place(d.name, 1, &walk(tc, ts, te + 1, false));
        println!(
            "{:<14} {:>6} {:>12} {:>14} {:>13.2}",
            d.name,
            "1v",
            "",
            "",
            off - untraced
        );
    }
}

/// The newest-N recorder built with `KTRACE_NEWEST_BRANCH 0`: no branch in
/// the loop beyond the untraced loop's, one clock read and one `STS.64`
/// predicated on the storing lane per event, at most 6 instructions per
/// event in the loop against the untraced loop (the event's 5: the clock
/// read, the tag, the entry's address, its increment and the store; and
/// what ptxas adds around them, such as recomputing the store's predicate
/// once in two iterations), and the FMAs in place.
#[test]
fn events_without_the_skip_branch() {
    let Some([tool]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let u = dir.join("recorder_newest_nobranch.untraced.cubin");
    let t = dir.join("recorder_newest_nobranch.traced.cubin");
    for ev in [1usize, 2, 4] {
        let f = format!("bench_e{ev}");
        let b = BenchLoop::new(&tool, &u, &t, &f, 8.0);
        let (uc, tc, us, ue, ts, te) = (&b.uc, &b.tc, b.us, b.ue, b.ts, b.te);
        let (u_iters, t_iters, untraced) = (b.u_iters, b.t_iters, b.untraced);
        let count = |c: &Code, s: usize, e: usize, what: &str| {
            c[s..=e].iter().filter(|(_, x)| x.contains(what)).count() as f64
        };
        let per_iter = |c: &Code, s: usize, e: usize, n: f64, what: &str| count(c, s, e, what) / n;
        assert_eq!(
            per_iter(tc, ts, te, t_iters, "BRA"),
            per_iter(uc, us, ue, u_iters, "BRA"),
            "{f}: branches per iteration, traced against untraced"
        );
        let clocks = per_iter(tc, ts, te, t_iters, "SR_CLOCKLO");
        let stores = tc[ts..=te]
            .iter()
            .filter(|(_, x)| x.contains("STS.64"))
            .collect::<Vec<_>>();
        assert_eq!(clocks, ev as f64, "{f}: clock reads per iteration");
        assert_eq!(
            stores.len() as f64 / t_iters,
            ev as f64,
            "{f}: STS.64 per iteration"
        );
        assert!(
            stores.iter().all(|(_, x)| x.starts_with('@')),
            "{f}: a store not predicated on the storing lane: {stores:?}"
        );
        let per_event = ((te - ts + 1) as f64 / t_iters - untraced) / ev as f64;
        assert!(
            per_event <= 6.0,
            "{f}: {per_event} instructions per event in the loop (at most 6 expected)"
        );
        let on: Vec<String> = tc[ts..=te].iter().map(|(_, x)| x.clone()).collect();
        assert_fmas_in_place("newest_nobranch", ev, &on);
        println!("newest_nobranch bench_e{ev}: {per_event:.2} instructions per event in the loop");
    }
}

/// The same check on the examples' main loops: the gemm's consumer
/// mainloop (`wgmma`), the SGEMM benchmark's k-loop and the
/// warp-specialized consumer's tile loop (default store recorder), each
/// against its untraced build, per unit of the user's math (the loops may
/// be unrolled differently). What a sampled-out site adds there includes
/// the compiler's changes to the loop around the markers: one instruction
/// per site is the target; the bounds are what the builds give now, so
/// that a change that makes them dearer fails (docs/lab/performance-notes.md, "Off
/// and sampled-out paths", says where the rest comes from).
#[test]
fn sampled_out_sites_in_the_examples_main_loops() {
    let Some([tool]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    // The SGEMM benchmark's default build (stamped events) has one event
    // of its loop predicated instead of branched over (the build warns):
    // a sampled-out site issues it whole, 4.33 instructions a site against
    // 1.25 with time anchors by the clock (`sgemm_bench_clock`), whose
    // events keep their branch. On an H100 its null-buffer launches cost
    // no more for it (+2.98% against +3.18%; docs/performance.md).
    for (module, function, max) in [
        ("gemm", "ktrace_gemm_bf16_tn", 1.25),
        ("sgemm_bench", "sgemm_bench", 4.5),
        ("sgemm_bench_clock", "sgemm_bench", 1.25),
        ("warp_specialized_store", "warp_specialized", 4.0),
    ] {
        let b = BenchLoop::new(
            &tool,
            &dir.join(format!("{module}.untraced.cubin")),
            &dir.join(format!("{module}.traced.cubin")),
            function,
            1.0,
        );
        let (off, sites) = without_events(&b.tc, b.ts, b.te);
        assert!(sites > 0, "{module}: no marker site in the main loop");
        let per_site = (off as f64 / b.t_iters - b.untraced) * b.t_iters / sites as f64;
        println!(
            "{module:<24} main loop: {} instructions untraced, {off} sampled out with {sites} \
             sites ({} / {} math): {per_site:.2} per site",
            b.ue - b.us + 1,
            b.t_iters,
            b.u_iters
        );
        assert!(
            per_site <= max,
            "{module}: a sampled-out site adds {per_site:.2} instructions to the main loop \
             (at most {max})"
        );
    }
}

/// `KTRACE_NULL_EARLY_OUT 1` (the `serving_null_early_out` variant of the
/// serving kernels): a launch with the null argument runs, in every warp,
/// a test of the argument and a branch over the open before the kernel's
/// own code: no thread or block index read, no vote, shuffle, division
/// or timer read. The default build reads the thread index and runs the
/// open's vote there.
#[test]
fn the_null_early_out_tests_the_argument_before_anything_else() {
    let Some([tool]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    // Up to and including the first branch.
    let entry = |module: &str, function: &str| -> Vec<String> {
        let code = sass(&tool, &dir.join(format!("{module}.traced.cubin")), function);
        let end = code
            .iter()
            .position(|(_, i)| i.contains("BRA "))
            .unwrap_or_else(|| panic!("{module} {function}: no branch"));
        code[..=end].iter().map(|(_, i)| i.clone()).collect()
    };
    let dear = [
        "MUFU",
        "VOTE",
        "SHFL",
        "SR_CLOCK",
        "SR_GLOBALTIMER",
        "SR_TID",
        "SR_CTAID",
    ];
    for function in [
        "serve_matvec",
        "serve_rowsum",
        "serve_scale",
        "record_burst",
        "launch_probe",
    ] {
        let early = entry("serving_null_early_out", function);
        assert!(
            early.len() <= 12,
            "{function}: {} instructions before the null argument's branch: {early:?}",
            early.len()
        );
        let branch = early.last().unwrap();
        assert!(
            branch.starts_with('@'),
            "{function}: {branch} is not conditional"
        );
        assert!(
            early.iter().any(|i| i.contains("ULDC.64")),
            "{function}: the branch does not test a 64-bit parameter: {early:?}"
        );
        for i in &early {
            assert!(
                !dear.iter().any(|d| i.contains(d)),
                "{function}: {i} before the null argument's branch"
            );
        }
        let default = entry("serving", function);
        for d in ["VOTE.ANY", "SR_TID"] {
            assert!(
                default.iter().any(|i| i.contains(d)),
                "{function}: the default build's open runs no {d} before its first branch \
                 (the check above would not tell the builds apart): {default:?}"
            );
        }
    }
}

/// The build's check for marker events that ptxas predicated inside a
/// loop instead of branching over them (`ktrace_build::predicated`, a
/// `cargo:warning`): of every example build, only the SGEMM benchmark's
/// default (stamped) build and its build without anchors have one, in
/// its main loop; its build with time anchors by the clock has none.
/// Skipped with a message where the build had no `nvdisasm` to look with.
#[test]
fn predicated_events_in_loops_are_reported_only_where_known() {
    let dir = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let mut reported = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the kernels' directory") {
        let traced = entry.expect("an entry").path();
        let name = traced.file_name().unwrap().to_string_lossy().to_string();
        let Some(module) = name.strip_suffix(".traced.cubin") else {
            continue;
        };
        let untraced = dir.join(format!("{module}.untraced.cubin"));
        let Some(found) = ktrace_build::predicated::module_growth(&traced, &untraced) else {
            println!("skipped: no predicated-event report beside {name} (no nvdisasm at build)");
            return;
        };
        for p in found {
            reported.push((module.to_string(), p.function, p.events));
        }
    }
    println!("predicated events: {reported:?}");
    reported.sort();
    let expected = [
        ("sgemm_bench".to_string(), "sgemm_bench".to_string(), 1),
        (
            "sgemm_bench_noanchor".to_string(),
            "sgemm_bench".to_string(),
            1,
        ),
    ];
    assert_eq!(
        reported, expected,
        "predicated events in loops, by module and function"
    );
}
