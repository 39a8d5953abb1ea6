//! A kernel launched after itself with programmatic dependent launch
//! (PDL), traced through one site of a [`ContinuousSession`]: each launch
//! lets the next one start once its warps have opened their trace context
//! (`examples/kernels/pdl.cu`), so consecutive launches of the site run at
//! the same time. The site is marked `overlapping`, so the drain hands a
//! launch over once every warp of its slab has finished, not once the
//! next launch has opened.
//!
//! `cargo run --release -p ktrace-examples --example pdl_loop -- [--launches N] [--replays R]
//! [--blocks B] [--spin S] [--no-pdl] [--not-overlapping] [--early-trigger]`:
//! `N` plain launches of `B` blocks of 128 threads (2,000 of 66 by
//! default), each spinning `S` iterations (100,000), on one stream, then
//! `R` replays (200) of a CUDA graph captured from four such launches; the
//! capture is `pdl_loop.ktrace`. `--no-pdl` launches without the PDL attribute (no launch
//! overlaps the one before it); `--not-overlapping` marks the site as an
//! ordinary one, to show what the drain hands over then (launches whose
//! warps had not all finished); `--early-trigger` launches a kernel whose
//! warps trigger the next launch right after their own open, without the
//! block's barrier that makes every warp of the block open first (a block
//! triggers at its first thread that does): warps of the next launch then
//! take tickets before warps of this one, and records land in the wrong
//! launch, which the session reports (slabs holding more than one
//! `%gridid`).
//!
//! Each traced warp records its launch's tag as a value at its start and
//! at its end: the plain launch's number, or for a graph's node `j`
//! 1,000,000 + `j`. The check: every drained launch is whole (each slot
//! opened and flushed by that launch), every value is its own launch's
//! (plain: the launch number; a graph's node `j`: launch number − N ≡ `j`
//! mod 4), every launch is drained or counted as dropped, and with PDL
//! launches did start before the one before them ended. Prints those
//! counts and exits with status 1 if the check fails.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr};
use ktrace_examples::{fail, gpu, is_whole, kernels, REGIONS};
use ktrace_runtime::format::buffer::EntryKind;
use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::format::layout::KtraceArg;
use ktrace_runtime::session::continuous::{ContinuousConfig, ContinuousSession, SiteConfig};

type Error = Box<dyn std::error::Error>;

const BLOCK: u32 = 128;
const GRAPH_TAG: u32 = 1_000_000;
const GRAPH_NODES: u32 = 4;

/// Launches `pdl_probe` on `stream` with `tag`, allowing the next launch
/// to start early when `pdl` (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`).
fn launch(
    f: &CudaFunction,
    stream: &Arc<CudaStream>,
    (grid, spin): (u32, i32),
    tag: u32,
    sink: &CudaSlice<u32>,
    arg: &KtraceArg,
    pdl: bool,
) -> Result<(), Error> {
    let (sink_ptr, _guard) = sink.device_ptr(stream);
    let mut tag = tag;
    let mut spin = spin;
    let mut sink_ptr = sink_ptr;
    let mut arg = *arg;
    let mut params: [*mut std::ffi::c_void; 4] = [
        (&mut tag as *mut u32).cast(),
        (&mut spin as *mut i32).cast(),
        (&mut sink_ptr as *mut sys::CUdeviceptr).cast(),
        (&mut arg as *mut KtraceArg).cast(),
    ];
    // SAFETY: a plain attribute value; the union is read as its int.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: BLOCK,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(pdl),
    };
    // SAFETY: the parameters match pdl_probe's signature and live until
    // the call returns (the driver copies them).
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            f.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(|e| format!("launching pdl_probe: {e:?}"))?;
    Ok(())
}

/// What the capture shows: records checked and wrong, launches not whole,
/// and launches that started before the launch before them ended.
struct Checked {
    values: u64,
    wrong: u64,
    partial: usize,
    overlapped: usize,
}

fn check(capture: &Capture, plain: u32) -> Result<Checked, Error> {
    let mut c = Checked {
        values: 0,
        wrong: 0,
        partial: 0,
        overlapped: 0,
    };
    let mut previous_end: Option<(u32, u64)> = None;
    for l in &capture.launches {
        let epoch = l.origin.expect("a site's launch").epoch;
        let b = l.buffer()?;
        c.partial += usize::from(!is_whole(l)?);
        let start = b.slots().map(|s| s.meta().init_globaltimer).min();
        let end = b.slots().map(|s| s.meta().final_globaltimer).max();
        if let (Some((e, prev)), Some(start)) = (previous_end, start) {
            c.overlapped += usize::from(e + 1 == epoch && start < prev);
        }
        previous_end = end.map(|end| (epoch, end));
        for slot in b.slots().filter(|s| s.meta().is_flushed()) {
            for i in 0..slot.stored_entries() {
                let e = slot.entry(i);
                if slot.kind_of(&e) != EntryKind::Value {
                    continue;
                }
                c.values += 1;
                let right = if epoch < plain {
                    e.clock == epoch
                } else {
                    e.clock.wrapping_sub(GRAPH_TAG) == (epoch - plain) % GRAPH_NODES
                };
                c.wrong += u64::from(!right);
            }
        }
    }
    Ok(c)
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let number = |flag: &str, default: u32| -> u32 {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1)?.parse().ok())
            .unwrap_or(default)
    };
    let launches = number("--launches", 2000);
    let replays = number("--replays", 200);
    let grid = number("--blocks", 66);
    let spin = number("--spin", 100_000) as i32;
    let early = args.iter().any(|a| a == "--early-trigger");
    let pdl = !args.iter().any(|a| a == "--no-pdl");
    let overlapping = !args.iter().any(|a| a == "--not-overlapping");
    let (ctx, _default) = gpu();
    let stream = ctx.new_stream()?;
    // Graph capture and cudarc's cross-stream events do not mix.
    unsafe { ctx.disable_event_tracking() };
    let module = ktrace_runtime::load_module_variant(&ctx, &kernels::PDL, true)?;
    let f = module.load_function(if early {
        "pdl_probe_early"
    } else {
        "pdl_probe"
    })?;
    let path = "pdl_loop.ktrace";
    let config = ContinuousConfig {
        capture: path.into(),
        arena_bytes: 256 << 20,
        ..ContinuousConfig::default()
    };
    let mut session = ContinuousSession::new(&stream, config, REGIONS)?;
    let mut site = SiteConfig::new("pdl_probe", (grid, 1, 1), (BLOCK, 1, 1));
    site.cap = 32;
    site.slabs = 256;
    site.overlapping = overlapping;
    let arg = session.site(site)?.arg();
    let sink = stream.alloc_zeros::<u32>(1)?;
    let started = Instant::now();
    for i in 0..launches {
        launch(&f, &stream, (grid, spin), i, &sink, &arg, pdl)?;
    }
    stream.synchronize()?;
    let plain_s = started.elapsed().as_secs_f64();
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(|e| format!("begin capture: {e:?}"))?;
    for j in 0..GRAPH_NODES {
        launch(&f, &stream, (grid, spin), GRAPH_TAG + j, &sink, &arg, pdl)?;
    }
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(|e| format!("end capture: {e:?}"))?
        .expect("a graph");
    for _ in 0..replays {
        graph.launch()?;
    }
    stream.synchronize()?;
    let report = session.finish()?;
    let capture = Capture::read(path)?;
    let c = check(&capture, launches)?;
    let total = u64::from(launches) + u64::from(replays * GRAPH_NODES);
    let site = &report.sites[0];
    println!(
        "pdl_loop: {} (site {}): {launches} plain launches in {plain_s:.3} s, then {replays} \
         replays of a {GRAPH_NODES}-launch graph",
        if pdl { "PDL" } else { "no PDL" },
        if overlapping {
            "overlapping"
        } else {
            "not overlapping"
        },
    );
    println!(
        "pdl_loop: {} drained, {} dropped of {total}; {} records checked, {} wrong; {} drained \
         launches not whole, {} stale slots; {} launches started before the one before them ended",
        capture.launches.len(),
        site.dropped,
        c.values,
        c.wrong,
        c.partial,
        report.stale_slots,
        c.overlapped
    );
    let accounted = capture.launches.len() as u64 + site.dropped == total;
    if !overlapping || early {
        // The drain as for launches that never overlap may hand over
        // launches still running, and an early trigger mixes launches:
        // shown, not checked.
        println!("pdl_loop: not checked (the site was not marked overlapping, or the kernel triggers early)");
        return Ok(());
    }
    if c.wrong > 0 || c.values == 0 || c.partial > 0 || !accounted || (pdl && c.overlapped == 0) {
        fail("PDL check failed");
    }
    println!("pdl_loop: ok");
    Ok(())
}
