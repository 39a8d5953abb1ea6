//! Stall reasons per region, on a kernel of four regions of known
//! character (`examples/kernels/stalls.cu`): a dependent global-load chain,
//! a dependent FMA chain, a barrier behind a slow warp and 32-way shared
//! memory bank conflicts. With `KTRACE_STALLS=1` CUPTI samples the launch
//! (the untraced build unless `KTRACE=1`); the example prints the table
//! and fails unless each region's top reason is the one its code causes.
//!
//! `KTRACE_STALLS=1 cargo run --release -p ktrace-examples --example stalls`, then
//! `ktrace stalls stalls.ktrace`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, sm_count, trace_config, Rng, REGIONS};
use ktrace_runtime::analysis::stalls::stall_tables;
use ktrace_runtime::TraceSession;

const THREADS: u32 = 128;
/// Chain length: 64 MiB of indices, past the 50 MiB L2.
const N: usize = 1 << 24;
const ROUNDS: i32 = 8;

/// Each planted region and the reasons its code stalls on (any of them
/// may come first).
const EXPECTED: [(&str, &[&str]); 5] = [
    ("chase", &["long_scoreboard"]),
    ("fma_chain", &["wait"]),
    ("slow_warp", &["wait"]),
    ("barrier", &["barrier"]),
    ("bank_conflicts", &["short_scoreboard", "mio_throttle"]),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("stalls");
    let (ctx, stream) = gpu();
    let blocks = sm_count(&ctx)?;
    // One cycle through every index (Sattolo's shuffle).
    let mut chain: Vec<u32> = (0..N as u32).collect();
    let mut rng = Rng::new(7);
    for i in (1..N).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        chain.swap(i, j);
    }
    let threads = (blocks * THREADS) as usize;
    let d_chain = stream.clone_htod(&chain)?;
    let mut out = stream.alloc_zeros::<u32>(2 * threads)?;
    let module = ktrace_runtime::load_module(&ctx, &kernels::STALLS)?;
    let f = module.load_function("planted")?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut session = TraceSession::new(&stream, trace_config("stalls", &cfg), REGIONS)?;
    let (arg, n, rounds) = (session.arg(), N as u32, ROUNDS);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&d_chain)
        .arg(&n)
        .arg(&mut out)
        .arg(&rounds)
        .arg(&arg);
    unsafe { launch.launch(cfg) }?;
    session.finish_launch()?;
    let got = stream.clone_dtoh(&out)?;
    // Where each thread's chase ended, against the host's walk.
    for t in (0..threads).step_by(61) {
        let mut p = (t as u64 * 977 % N as u64) as u32;
        for _ in 0..ROUNDS * 64 {
            p = chain[p as usize];
        }
        if got[2 * t] != p {
            fail(&format!(
                "thread {t}: the chase ended at {}, expected {p}",
                got[2 * t]
            ));
        }
    }
    let capture = session.capture();
    session.finish()?;
    if capture.stalls.is_empty() {
        println!("stalls: no PC samples (set KTRACE_STALLS=1 to sample)");
        return Ok(());
    }
    let tables = stall_tables(&capture.stalls, &capture.regions, None);
    let Some(table) = tables.first() else {
        fail("no stall table");
    };
    println!(
        "stalls: {} samples in {} (traced build: {})",
        table.samples, table.kernel, table.traced
    );
    let mut wrong = Vec::new();
    for (name, expected) in EXPECTED {
        let row = table.regions.iter().find(|r| r.name == name);
        let top: Vec<String> = row
            .map(|r| {
                r.reasons
                    .iter()
                    .map(|(n, _, s)| format!("{n} {s:.1}%"))
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "  {name:<16} {:>5.1}% of samples: {}",
            row.map_or(0.0, |r| r.share),
            top.join(", ")
        );
        let first = row.and_then(|r| r.reasons.first()).map(|r| r.0.as_str());
        if !first.is_some_and(|f| expected.contains(&f)) {
            wrong.push(format!(
                "{name}: top reason {first:?}, expected one of {expected:?}"
            ));
        }
    }
    if !wrong.is_empty() {
        fail(&wrong.join("; "));
    }
    println!("stalls: every planted region stalls on its expected reason");
    Ok(())
}
