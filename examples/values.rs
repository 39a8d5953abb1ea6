//! Values recorded with events on the GPU, with each recorder: every warp
//! runs 100 steps (20 with the newest-N recorder, whose ring keeps 128
//! entries), each a span of "step" whose begin records the step `i`
//! and whose end records `2i + 1`, a "quarter" mark with `i / 4` every
//! fourth step, and (store and both shared-memory recorders) a "lane0 step"
//! span recorded by lane 0 alone with the warp's index as its value. The
//! example decodes each capture and checks every value; it exits non-zero
//! on the first mismatch. With `--out DIR` it also writes the captures
//! there (`values_<recorder>.ktrace`).
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example values [-- --out DIR]`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, REGIONS};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::{
    decode::decode, decode::DecodeOptions, KernelModule, TraceConfig, TraceSession,
};

const STEPS: i32 = 100;
const BLOCKS: u32 = 264;
const THREADS: u32 = 128;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Always traced: the example checks what was recorded.
    ktrace_runtime::set_enabled(Some(true));
    announce("values");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out_dir = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    let (ctx, stream) = gpu();
    // (recorder, module, lane-0 span recorded, steps): the newest-N
    // build keeps 128 entries per warp, all of a 20-step run's 93.
    let recorders: [(&str, KernelModule, bool, i32); 5] = [
        ("store", kernels::VALUES, true, STEPS),
        ("ring", kernels::VALUES_RING, false, STEPS),
        ("smem", kernels::VALUES_SMEM, true, STEPS),
        ("newest", kernels::VALUES_NEWEST, true, 20),
        (
            "newest no-branch",
            kernels::VALUES_NEWEST_NOBRANCH,
            true,
            20,
        ),
    ];
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let id = |name: &str| REGIONS.iter().find(|r| r.1 == name).map(|r| r.0).unwrap();
    let (step, quarter, lane0) = (id("step"), id("quarter"), id("lane0 step"));
    for (name, module, has_lane0, steps_run) in recorders {
        let m = ktrace_runtime::load_module(&ctx, &module)?;
        let f = m.load_function("values_probe")?;
        let mut sink = stream.alloc_zeros::<u32>((BLOCKS * THREADS) as usize)?;
        let mut tc = TraceConfig::for_launch(&cfg);
        tc.cap = 512;
        tc.quiet = true;
        tc.capture = out_dir
            .as_ref()
            .map(|d| d.join(format!("values_{name}.ktrace")));
        let mut session = TraceSession::new(&stream, tc, REGIONS)?;
        let arg = session.arg();
        let mut l = stream.launch_builder(&f);
        l.arg(&steps_run).arg(&mut sink).arg(&arg);
        unsafe { l.launch(cfg) }?;
        stream.synchronize()?;
        session.finish_launch()?;
        let launch = &session.launches()[0];
        let d = decode(launch.buffer()?, &DecodeOptions::default());
        if !d.diagnostics.is_empty() {
            fail(&format!("{name}: diagnostics {:?}", d.diagnostics));
        }
        let warps = (BLOCKS * THREADS / 32) as usize;
        if d.warps.len() != warps {
            fail(&format!(
                "{name}: {} warps decoded, {warps} expected",
                d.warps.len()
            ));
        }
        let mut values = 0u64;
        for w in &d.warps {
            let steps: Vec<_> = w.spans.iter().filter(|s| s.region == step).collect();
            if steps.len() != steps_run as usize {
                fail(&format!("{name}: warp {:?}: {} steps", w.id, steps.len()));
            }
            for (i, s) in steps.iter().enumerate() {
                if (s.begin_value, s.end_value) != (Some(i as u32), Some(2 * i as u32 + 1)) {
                    fail(&format!(
                        "{name}: warp {:?} step {i}: values {:?}",
                        w.id,
                        (s.begin_value, s.end_value)
                    ));
                }
                values += 2;
            }
            let marks: Vec<_> = w
                .events
                .iter()
                .filter(|e| e.region == quarter && e.kind == EventKind::Mark)
                .map(|e| e.value)
                .collect();
            let want: Vec<_> = (0..steps_run as u32 / 4).map(Some).collect();
            if marks != want {
                fail(&format!("{name}: warp {:?}: quarter marks {marks:?}", w.id));
            }
            values += marks.len() as u64;
            if has_lane0 {
                let gw = w.id.block * (THREADS / 32) + u32::from(w.id.warp);
                let l0: Vec<_> = w.spans.iter().filter(|s| s.region == lane0).collect();
                if l0.len() != 1 || l0[0].begin_value != Some(gw) || l0[0].end_value.is_some() {
                    fail(&format!("{name}: warp {:?}: lane0 span {l0:?}", w.id));
                }
                values += 1;
            }
        }
        println!("values: {name} recorder: {warps} warps, {values} values, every one as recorded");
        session.finish()?;
    }
    Ok(())
}
