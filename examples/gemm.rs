//! A warp-specialized bf16 GEMM (TMA, mbarriers, wgmma on sm_90a) traced per
//! k-tile: producer "wait_empty" and "load", consumers "wait_full" and
//! "mma", and "epilogue" per tile. Checks C against an fp32 reference and
//! prints TFLOP/s.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example gemm [-- M N K]`
//! `cargo run --release -p ktrace-examples --example gemm -- --bench [REPS] [M N K]` times the
//! traced kernel (tracing all warps, and with a null buffer) against the
//! untraced one, alternating launches, and prints the medians: the default
//! build (store recorder), the build with the newest-N shared-memory
//! recorder (`gemm_newest.cu`, 64 events kept per warp), the store recorder
//! with time anchors by the event count (`gemm_count`) and by the clock
//! (`gemm_clock`), the untraced
//! kernel with 7,168 bytes more shared memory and with its producer at 40
//! registers instead of 24 (the `gemm_p40` variant), and the newest-N build without
//! the skip branch (`gemm_newest_nobranch.cu`, producer at 40) against the
//! latter.

use ktrace_examples::gemm::{cap_for, load_gemm_module_variant, load_gemm_variant, Problem};
use ktrace_examples::{announce, fail, gpu, kernels, median, time_ms, trace_config, REGIONS};
use ktrace_runtime::{KtraceArg, TraceSession, WarpSampling};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = args.first().is_some_and(|a| a == "--bench");
    let rest: Vec<usize> = args
        .iter()
        .skip(bench as usize)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (reps, dims) = if bench && (rest.len() == 1 || rest.len() == 4) {
        (rest[0], &rest[1..])
    } else {
        (60, &rest[..])
    };
    let (m, n, k) = match dims {
        [m, n, k] => (*m, *n, *k),
        _ => (8192, 8192, 8192),
    };
    announce("gemm");
    let (ctx, stream) = gpu();
    let (mut p, (ha, hb)) = Problem::new(&ctx, &stream, m, n, k)?;
    let flops = 2.0 * (m * n * k) as f64;

    if bench {
        // Both builds side by side, launches alternating.
        let untraced = load_gemm_variant(&ctx, false)?;
        let traced = load_gemm_variant(&ctx, true)?;
        ktrace_runtime::set_enabled(Some(true));
        let mut tc = trace_config("gemm_bench", &p.cfg);
        tc.cap = cap_for(&p);
        tc.quiet = true;
        let session = TraceSession::new(&stream, tc, REGIONS)?;
        let newest = load_gemm_module_variant(&ctx, &kernels::GEMM_NEWEST, true)?;
        let newest_nb = load_gemm_module_variant(&ctx, &kernels::GEMM_NEWEST_NOBRANCH, true)?;
        // The store recorder with time anchors by the event count
        // (KTRACE_ANCHORS_COUNT), on the default session's buffer.
        let count = load_gemm_module_variant(&ctx, &kernels::GEMM_COUNT, true)?;
        // Time anchors by the clock (KTRACE_ANCHORS_CLOCK), on the same
        // buffer.
        let clock = load_gemm_module_variant(&ctx, &kernels::GEMM_CLOCK, true)?;
        // The untraced kernel with its producer at 40 registers and its
        // consumers at 232 (the gemm_p40 variant), the base of the no-branch rows,
        // which are built so.
        let p40 = load_gemm_module_variant(&ctx, &kernels::GEMM_P40, false)?;
        // The untraced kernel given as much more (unused) shared memory as
        // the newest-N recorder takes (12 warps x 528 bytes, rounded up to
        // a multiple of 1,024): what that alone costs.
        const PAD: u32 = (12 * 528u32).div_ceil(1024) * 1024;
        let padded = load_gemm_variant(&ctx, false)?;
        padded.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            (p.cfg.shared_mem_bytes + PAD) as i32,
        )?;
        let mut tcn = trace_config("gemm_bench_newest", &p.cfg);
        tcn.cap = 64;
        tcn.quiet = true;
        let session_n = TraceSession::new(&stream, tcn, REGIONS)?;
        let on = session.arg();
        let on_n = session_n.arg();
        let off = KtraceArg::OFF;
        for _ in 0..5 {
            p.launch(&stream, &untraced, &off)?;
            p.launch(&stream, &traced, &on)?;
            p.launch(&stream, &newest, &on_n)?;
            p.launch(&stream, &newest_nb, &on_n)?;
            p.launch(&stream, &p40, &off)?;
            p.launch(&stream, &count, &on)?;
            p.launch(&stream, &clock, &on)?;
        }
        let (mut tu, mut tt, mut t0) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tn, mut tn0, mut tp) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tb, mut tb0, mut t40) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tc, mut tc0) = (Vec::new(), Vec::new());
        let (mut ts, mut ts0) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            tu.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &untraced, &off)
            })?);
            tt.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &traced, &on)
            })?);
            t0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &traced, &off)
            })?);
            tn.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &newest, &on_n)
            })?);
            tn0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &newest, &off)
            })?);
            tb.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &newest_nb, &on_n)
            })?);
            tb0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &newest_nb, &off)
            })?);
            t40.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &p40, &off)
            })?);
            tc.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &count, &on)
            })?);
            tc0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &count, &off)
            })?);
            ts.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &clock, &on)
            })?);
            ts0.extend(time_ms(&ctx, &stream, 0, 1, || {
                p.launch(&stream, &clock, &off)
            })?);
            p.cfg.shared_mem_bytes += PAD;
            let t = time_ms(&ctx, &stream, 0, 1, || p.launch(&stream, &padded, &off));
            p.cfg.shared_mem_bytes -= PAD;
            tp.extend(t?);
        }
        let (mu, mt, m0) = (median(&mut tu), median(&mut tt), median(&mut t0));
        let (mn, mn0, mp) = (median(&mut tn), median(&mut tn0), median(&mut tp));
        let (mb, mb0, m40) = (median(&mut tb), median(&mut tb0), median(&mut t40));
        let (mc, mc0) = (median(&mut tc), median(&mut tc0));
        let (ms, ms0) = (median(&mut ts), median(&mut ts0));
        let tf = |ms: f32| flops / (ms as f64 * 1e-3) / 1e12;
        println!("gemm {m}x{n}x{k}, {reps} alternating launches each, medians:");
        println!(
            "  untraced                       {mu:.4} ms  {:.1} TFLOP/s",
            tf(mu)
        );
        let row_against = |label: &str, ms: f32, base: f32| {
            println!(
                "  {label:<30} {ms:.4} ms  {:.1} TFLOP/s  {:+.2}%",
                tf(ms),
                100.0 * (ms / base - 1.0)
            )
        };
        let row = |label: &str, ms: f32| row_against(label, ms, mu);
        row("traced, all warps", mt);
        row("traced, null buffer", m0);
        row("anchors by count, all warps", mc);
        row("anchors by count, null buffer", mc0);
        row("anchors by clock, all warps", ms);
        row("anchors by clock, null buffer", ms0);
        row("newest-64, all warps", mn);
        row("newest-64, null buffer", mn0);
        row(&format!("untraced, +{PAD} B smem"), mp);
        row("untraced, producer at 40", m40);
        println!("  producer at 40 registers, against its untraced build ({m40:.4} ms):");
        row_against("newest-64 no-branch, all", mb, m40);
        row_against("newest-64 no-branch, null", mb0, m40);
        let err = p.check(&ctx, &stream, &ha, &hb)?;
        println!("  result check: relative error {err:.2e}");
        if err > 1e-2 {
            fail("GEMM result is wrong");
        }
        session.discard(); // the timed launches wrote nothing to keep
        session_n.discard();
        return Ok(());
    }

    let f = load_gemm_variant(&ctx, ktrace_runtime::enabled())?;
    // Untraced timing (or traced with a null buffer when KTRACE=1: the timed
    // runs never write a trace).
    let mut t = time_ms(&ctx, &stream, 5, 30, || {
        p.launch(&stream, &f, &KtraceArg::OFF)
    })?;
    let ms = median(&mut t);
    println!(
        "gemm {m}x{n}x{k}: {ms:.4} ms, {:.1} TFLOP/s (median of 30)",
        flops / (ms as f64 * 1e-3) / 1e12
    );
    // Poison C, then the (traced) run that is checked.
    let nan = vec![0x7fc0u16; m * n];
    stream.memcpy_htod(&nan, &mut p.c)?;
    let mut tc = trace_config("gemm", &p.cfg);
    tc.cap = cap_for(&p);
    if let Ok(v) = std::env::var("GEMM_TRACE_WARPS") {
        let list: Vec<u32> = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        tc.warps = WarpSampling::List(list);
    }
    let mut session = TraceSession::new(&stream, tc, REGIONS)?;
    let arg = session.arg();
    p.launch(&stream, &f, &arg)?;
    session.finish_launch()?;
    let err = p.check(&ctx, &stream, &ha, &hb)?;
    println!("gemm: relative error against the fp32 reference {err:.2e} (bf16 output)");
    if err > 1e-2 {
        fail("GEMM result is wrong");
    }
    session.finish()?;
    Ok(())
}
