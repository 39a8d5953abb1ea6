//! End to end on a GPU: a traced kernel launched twice through one
//! `TraceSession`, the outputs written, the capture read back and checked.
//!
//! Runs only when `KTRACE_TEST_CUBIN` names a cubin of `tests/gpu/probe.cu`
//! (the command that builds it is at the top of that file); skipped
//! otherwise, so CI without a GPU passes.

use std::sync::Arc;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use ktrace_runtime::layout::EventKind;
use ktrace_runtime::{
    decode, load_module, set_enabled, Capture, DecodeOptions, Error, KernelModule, TraceConfig,
    TraceSession,
};

const REGIONS: &[(u16, &str)] = &[(0, "outer"), (1, "spin"), (2, "tick")];

#[test]
fn traced_launches_on_a_gpu() {
    let Some(cubin) = std::env::var_os("KTRACE_TEST_CUBIN") else {
        eprintln!("KTRACE_TEST_CUBIN not set; GPU test skipped");
        return;
    };
    let image: &'static [u8] = Box::leak(std::fs::read(cubin).unwrap().into_boxed_slice());
    let module = KernelModule {
        name: "probe",
        traced: image,
        untraced: image,
    };
    let dir = std::env::temp_dir().join(format!("ktrace-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    set_enabled(Some(true));
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let f = load_module(&ctx, &module)
        .unwrap()
        .load_function("probe")
        .unwrap();
    let cfg = LaunchConfig {
        grid_dim: (264, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let config = TraceConfig {
        cap: 64,
        output: Some(dir.join("trace.json")),
        capture: Some(dir.join("run.ktrace")),
        ..TraceConfig::for_launch(&cfg)
    };
    let mut session = TraceSession::new(&stream, config, REGIONS).unwrap();
    assert!(session.is_enabled());
    let iters = 10u32;
    for launch in 0..2u32 {
        let arg = session.arg();
        assert_ne!(arg.buffer, 0);
        assert_eq!(arg.launch, launch);
        let spin = 4000u32 * (launch + 1);
        let mut sink = stream.alloc_zeros::<u64>(1).unwrap();
        let mut b = stream.launch_builder(&f);
        b.arg(&spin).arg(&iters).arg(&mut sink).arg(&arg);
        unsafe { b.launch(cfg) }.unwrap();
        session.finish_launch().unwrap();
    }
    let reports = session.finish().unwrap();
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert_eq!(r.warps, 264 * 4);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(r.trace_path.exists() && r.summary_path.exists());
    }
    assert!(dir.join("trace_launch1.json").exists());

    let cap = Capture::read(dir.join("run.ktrace")).unwrap();
    assert_eq!(cap.launches.len(), 2);
    assert!(cap.device.sm_count > 0 && cap.device.clock_khz > 0);
    eprintln!(
        "device {} ({} SMs, {} kHz)",
        cap.device.name, cap.device.sm_count, cap.device.clock_khz
    );
    for (i, l) in cap.launches.iter().enumerate() {
        let d = decode(&l.raw, &l.shape, &DecodeOptions::default()).unwrap();
        let spin_cycles = 4000 * (i as u64 + 1);
        let expect_ps = d.device_ratio.cycles_to_ps(i128::from(spin_cycles)) as i64;
        eprintln!(
            "launch {i}: clock {} MHz ({}), spin {spin_cycles} cycles = {} ps",
            d.device_ratio.mhz(),
            d.device_ratio_source.as_str(),
            expect_ps
        );
        let mut worst = i64::MIN;
        for w in &d.warps {
            assert!(w.flushed);
            assert_eq!(w.events.len(), 5 * iters as usize);
            assert!(w.events.windows(2).all(|p| p[0].t_ps <= p[1].t_ps));
            assert_eq!(
                w.events
                    .iter()
                    .filter(|e| e.kind == EventKind::Mark)
                    .count(),
                iters as usize
            );
            let spins: Vec<_> = w.spans.iter().filter(|s| s.region == 1).collect();
            let outers: Vec<_> = w.spans.iter().filter(|s| s.region == 0).collect();
            assert_eq!(
                (spins.len(), outers.len()),
                (iters as usize, iters as usize)
            );
            for (s, o) in spins.iter().zip(&outers) {
                assert!(o.start_ps <= s.start_ps && s.end_ps <= o.end_ps);
                let dur = s.dur_ps() as i64;
                assert!(
                    dur >= expect_ps && dur < expect_ps * 2,
                    "spin of {dur} ps, expected about {expect_ps}"
                );
            }
            // Short slots use the device-wide rate; their events may stray
            // past their own open and flush by the timer's granularity.
            let before = w.open_ps - w.events[0].t_ps;
            let after = w.events.last().unwrap().t_ps - w.flush_ps.unwrap();
            worst = worst.max(before).max(after);
        }
        eprintln!("launch {i}: events at most {worst} ps outside their warp's open..flush");
        assert!(worst < 2_000_000);
        let stats = &reports[i].summary.regions;
        eprintln!(
            "launch {i}: spin p50 {:.4} us p99 {:.4} us; outer p50 {:.4} us",
            stats[1].percentiles.p50, stats[1].percentiles.p99, stats[0].percentiles.p50
        );
    }

    // A buffer that cannot fit says how big it is and how to shrink it.
    let huge = TraceConfig {
        cap: 1 << 24,
        ..TraceConfig::new((1 << 20, 1, 1), (1024, 1, 1))
    };
    let e = TraceSession::new(&stream, huge, REGIONS).unwrap_err();
    assert!(matches!(e, Error::BufferTooLarge { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("cap") && msg.contains("Sampling"), "{msg}");
    eprintln!("{msg}");

    // Off: nothing allocated, a null buffer.
    set_enabled(Some(false));
    let off = TraceSession::new(&stream, TraceConfig::for_launch(&cfg), REGIONS).unwrap();
    assert!(!off.is_enabled());
    assert_eq!(off.arg().buffer, 0);
    assert!(off.finish().unwrap().is_empty());
    set_enabled(None);
    let _: &Arc<CudaContext> = &ctx;
    let _ = std::fs::remove_dir_all(&dir);
}
