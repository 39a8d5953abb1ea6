//! Ground truth for ktrace's timing. Every warp busy-waits 1 µs, 10 µs,
//! 100 µs and 1 ms, each inside its own region, and measures each wait
//! itself with `%globaltimer`; the example compares the trace's durations
//! with those measurements, and the trace's time of a mark that every warp
//! records after a grid-wide barrier with the `%globaltimer` read beside it
//! (the cross-SM alignment of the per-warp calibration).
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example spin`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, sm_count, trace_config, REGIONS};
use ktrace_runtime::{decode::decode, decode::DecodeOptions, TraceSession};

const THREADS: u32 = 128;
const LENGTHS_NS: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];
const NAMES: [&str; 4] = ["spin 1us", "spin 10us", "spin 100us", "spin 1000us"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("spin");
    let (ctx, stream) = gpu();
    let sms = sm_count(&ctx)?;
    let blocks = 2 * sms; // co-resident: the kernel holds a grid-wide barrier
    let warps = (blocks * THREADS / 32) as usize;
    let module = ktrace_runtime::load_module(&ctx, &kernels::SPIN)?;
    let f = module.load_function("spin")?;

    let lengths = stream.clone_htod(&LENGTHS_NS)?;
    let mut truth = stream.alloc_zeros::<u64>(warps * 8)?;
    let mut marks = stream.alloc_zeros::<u64>(warps)?;
    let mut barrier = stream.alloc_zeros::<u32>(1)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut tc = trace_config("spin", &cfg);
    tc.cap = 32;
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&lengths)
        .arg(&mut truth)
        .arg(&mut marks)
        .arg(&mut barrier)
        .arg(&arg);
    unsafe { launch.launch(cfg) }?;
    stream.synchronize()?;
    let truth = stream.clone_dtoh(&truth)?;
    let marks = stream.clone_dtoh(&marks)?;

    // The kernel's own measurements must be right whether traced or not.
    for w in 0..warps {
        for (i, &len) in LENGTHS_NS.iter().enumerate() {
            let (t0, t1) = (truth[w * 8 + 2 * i], truth[w * 8 + 2 * i + 1]);
            if t1 < t0 + len || t1 > t0 + len + 50_000 {
                fail(&format!(
                    "warp {w}: wait {i} measured {} ns for {len} ns",
                    t1.wrapping_sub(t0)
                ));
            }
        }
    }
    println!("spin: {warps} warps on {sms} SMs waited {LENGTHS_NS:?} ns each; the kernel's own timings are consistent");
    if !session.is_enabled() {
        return Ok(());
    }
    session.finish_launch()?;
    let launch0 = &session.launches()[0];
    let decoded = decode(launch0.buffer()?, &DecodeOptions::default());
    session.finish()?;

    let id = |name: &str| REGIONS.iter().find(|r| r.1 == name).map(|r| r.0).unwrap();
    println!("\nregion        warps  truth (ns, median)  trace - truth (ns): median   p99|.|   max|.|   relative (median)");
    for (i, name) in NAMES.iter().enumerate() {
        let rid = id(name);
        let mut errs = Vec::new();
        let mut truths = Vec::new();
        for w in &decoded.warps {
            let gw = (w.id.block * (THREADS / 32) + w.id.warp as u32) as usize;
            let span = w.spans.iter().find(|s| s.region == rid);
            let Some(span) = span else {
                fail(&format!("warp {gw}: no {name} span in the trace"))
            };
            let t = (truth[gw * 8 + 2 * i + 1] - truth[gw * 8 + 2 * i]) as f64;
            errs.push(span.dur_ps() as f64 / 1000.0 - t);
            truths.push(t);
        }
        truths.sort_by(f64::total_cmp);
        let mut abs: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
        abs.sort_by(f64::total_cmp);
        errs.sort_by(f64::total_cmp);
        let med = errs[errs.len() / 2];
        let tmed = truths[truths.len() / 2];
        println!(
            "{name:<12} {:>6}  {tmed:>18.0}  {med:>26.1} {:>9.1} {:>9.1}   {:>+.2e}",
            errs.len(),
            abs[abs.len() * 99 / 100],
            abs[abs.len() - 1],
            med / tmed
        );
    }

    // Alignment: trace time of the "released" mark against %globaltimer.
    let released = id("released");
    let mut offsets = Vec::new();
    let mut mark_times = Vec::new();
    for w in &decoded.warps {
        let gw = (w.id.block * (THREADS / 32) + w.id.warp as u32) as usize;
        let Some(m) = w.marks().find(|e| e.region == released) else {
            fail(&format!("warp {gw}: no released mark"))
        };
        let gt_ns = marks[gw] as i64 - decoded.origin_globaltimer as i64;
        offsets.push(m.t_ps as f64 / 1000.0 - gt_ns as f64);
        mark_times.push(m.t_ps as f64 / 1000.0);
    }
    offsets.sort_by(f64::total_cmp);
    mark_times.sort_by(f64::total_cmp);
    let n = offsets.len();
    println!(
        "\nalignment over {n} warps on {sms} SMs: trace time of the mark minus %globaltimer beside it: median {:.1} ns, p1..p99 spread {:.1} ns, full spread {:.1} ns",
        offsets[n / 2],
        offsets[n * 99 / 100] - offsets[n / 100],
        offsets[n - 1] - offsets[0]
    );
    println!(
        "the mark itself (barrier release seen by every warp) spans {:.1} ns across the grid",
        mark_times[n - 1] - mark_times[0]
    );
    let (ratio, source) = (decoded.device_ratio, decoded.device_ratio_source);
    println!("clock: {} MHz ({})", ratio.mhz(), source.as_str());
    Ok(())
}
