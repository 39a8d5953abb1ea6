//! Run-time faults, each of which must end in a clear error or diagnostic,
//! never a hang or a plausible-looking wrong trace. One case per process
//! (a trapped kernel leaves the CUDA context unusable):
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example faults -- CASE` with CASE one of
//! `trap`, `too-large`, `no-flush`, `two-streams`. Exits 0 when the fault
//! was reported as it should be.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{fail, gpu, kernels, REGIONS};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::{
    decode::decode, decode::DecodeOptions, decode::DecodedLaunch, diagnostics::Diagnostic, Error,
    TraceConfig, TraceSession,
};

/// The session's first launch, decoded.
fn decode_first(s: &TraceSession) -> ktrace_runtime::Result<DecodedLaunch> {
    let l = &s.launches()[0];
    Ok(decode(l.buffer()?, &DecodeOptions::default()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    ktrace_runtime::set_enabled(Some(true));
    let case = std::env::args().nth(1).unwrap_or_default();
    let (ctx, stream) = gpu();
    let module = ktrace_runtime::load_module(&ctx, &kernels::FAULTS)?;
    let cfg = |blocks: u32, threads: u32| LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let quiet = |c: &LaunchConfig, out: &str| {
        let mut tc = TraceConfig::for_launch(c);
        tc.cap = 32;
        tc.output = Some(out.into());
        tc
    };
    match case.as_str() {
        "trap" => {
            let c = cfg(264, 128);
            let out = "faults_trap.json";
            let mut s = TraceSession::new(&stream, quiet(&c, out), REGIONS)?;
            let f = module.load_function("fault_illegal_address")?;
            let arg = s.arg();
            let bad_ptr: u64 = 0x10;
            let bad_block = 100i32;
            let mut l = stream.launch_builder(&f);
            l.arg(&bad_ptr).arg(&bad_block).arg(&arg);
            unsafe { l.launch(c) }?;
            match s.finish_launch() {
                Err(e @ Error::Driver { .. }) => println!("trap: reported as it should be: {e}"),
                Err(e) => fail(&format!("trap: unexpected error {e}")),
                Ok(()) => fail("trap: the trapped launch was accepted as a good trace"),
            }
            if s.launches().is_empty() && !std::path::Path::new(out).exists() {
                println!("trap: no launch kept, no trace written");
            } else {
                fail("trap: a partial buffer was kept or written");
            }
            std::mem::forget(s); // the context is gone; nothing to write
        }
        "too-large" => {
            let c = cfg(1 << 20, 1024);
            let mut tc = quiet(&c, "faults_large.json");
            tc.cap = 1 << 16;
            match TraceSession::new(&stream, tc, REGIONS) {
                Err(e @ Error::BufferTooLarge { .. }) => {
                    println!("too-large: reported as it should be: {e}")
                }
                Err(e) => fail(&format!("too-large: unexpected error {e}")),
                Ok(_) => fail("too-large: a 17 TB buffer was allocated"),
            }
        }
        "no-flush" => {
            let c = cfg(132, 128);
            let mut s = TraceSession::new(&stream, quiet(&c, "faults_no_flush.json"), REGIONS)?;
            let f = module.load_function("fault_no_flush")?;
            let mut o = stream.alloc_zeros::<f32>(132 * 128)?;
            let arg = s.arg();
            let mut l = stream.launch_builder(&f);
            l.arg(&mut o).arg(&arg);
            unsafe { l.launch(c) }?;
            s.finish_launch()?;
            let d = decode_first(&s)?;
            let never = d
                .diagnostics
                .items()
                .iter()
                .filter(|x| matches!(x, Diagnostic::NeverFlushed { .. }))
                .count();
            let unflushed_warps = d.warps.iter().filter(|w| !w.flushed).count();
            println!("no-flush: {never} never-flushed diagnostics, {unflushed_warps} warps without a flush (expected 132)");
            if never != 132
                || unflushed_warps != 132
                || d.warps.iter().any(|w| w.flushed && w.id.warp == 1)
            {
                fail("no-flush: never-flushed warps not reported one by one");
            }
            s.finish()?;
        }
        "two-streams" => {
            let s2 = ctx.new_stream()?;
            let c = cfg(132, 128);
            let mut a = TraceSession::new(&stream, quiet(&c, "faults_stream_a.json"), REGIONS)?;
            let mut b = TraceSession::new(&s2, quiet(&c, "faults_stream_b.json"), REGIONS)?;
            let fa = module.load_function("fault_stream_a")?;
            let fb = module.load_function("fault_stream_b")?;
            let ns: u64 = 200_000;
            let (arg_a, arg_b) = (a.arg(), b.arg());
            let mut la = stream.launch_builder(&fa);
            la.arg(&ns).arg(&arg_a);
            let mut lb = s2.launch_builder(&fb);
            lb.arg(&ns).arg(&arg_b);
            unsafe { la.launch(c) }?;
            unsafe { lb.launch(c) }?;
            a.finish_launch()?;
            b.finish_launch()?;
            for (sess, want) in [(&a, "stream a"), (&b, "stream b")] {
                let d = decode_first(sess)?;
                let id = REGIONS.iter().find(|r| r.1 == want).unwrap().0;
                let ok = d.warps.len() == 132 * 4
                    && d.warps.iter().all(|w| {
                        w.events.len() == 2
                            && w.events.iter().all(|e| e.region == id)
                            && w.events[0].kind == EventKind::Begin
                    })
                    && d.warps
                        .iter()
                        .all(|w| w.spans.len() == 1 && w.spans[0].dur_ps() >= 199_000_000);
                println!(
                    "two-streams: {want}: {} warps, each one {want} span of >= 200 us: {ok}",
                    d.warps.len()
                );
                if !ok {
                    fail("two-streams: a session saw the other's events or lost its own");
                }
            }
            a.finish()?;
            b.finish()?;
        }
        _ => fail("usage: faults trap|too-large|no-flush|two-streams"),
    }
    Ok(())
}
