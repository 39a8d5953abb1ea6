//! Writes a synthetic capture that exercises the trace layouts: regions
//! that overlap without nesting, nested and repeated regions, zero-length
//! spans, marks at span boundaries, unmatched begins and ends, half
//! nanoseconds, several SMs and two launches. `scripts/check-pftrace.py`
//! compares its Perfetto and Chrome exports.
//!
//! ```text
//! cargo run -p ktrace-runtime --example synth_capture -- OUT.ktrace [SEED]
//! ```

use ktrace_runtime::format::capture::{Capture, DeviceInfo};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::format::pc_map::PcMap;
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::format::stalls::{PcSample, StallSamples};
use ktrace_runtime::synth::{sample_launch, xorshift64, SynthLaunch, SynthWarp};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: synth_capture OUT.ktrace [SEED]");
        std::process::exit(2);
    };
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut next = xorshift64(0x9e37_79b9_7f4a_7c15 ^ seed);

    // Synthetic buffers without anchors: layout version 1.
    let mut launch = SynthLaunch::all_traced(8, 128, 256).layout(1);
    // Block 0, warp 0: the cases by hand. Region 1 over 100..300 and
    // region 2 over 200..400 cycles overlap without nesting; odd cycle
    // counts are half nanoseconds at 2 GHz.
    launch.write(
        &SynthWarp::new(0, 0)
            .begin(100, 1)
            .mark(100, 5)
            .begin(150, 3)
            .begin(151, 3)
            .end(181, 3)
            .end(190, 3)
            .begin(200, 2)
            .begin(250, 4)
            .end(280, 4)
            .end(300, 1)
            .mark(300, 5)
            .begin(301, 6)
            .end(301, 6)
            .end(400, 2)
            .begin(401, 0)
            .flush_at(1000),
    );
    // Every other warp: random begins, ends and marks of six regions, so
    // spans nest, repeat, overlap and go unmatched at random.
    for block in 0..8u32 {
        for warp in 0..4u32 {
            if block == 0 && warp == 0 {
                continue;
            }
            let mut w = SynthWarp::new(block, warp).sm((block % 3) as u16 * 5);
            let mut at = 10 + next() % 50;
            for _ in 0..(40 + next() % 150) {
                let r = next();
                let kind = match r % 7 {
                    0..=2 => EventKind::Begin,
                    3..=5 => EventKind::End,
                    _ => EventKind::Mark,
                };
                w = w.event(at, (r >> 8) as u16 % 6, kind);
                // Same cycle now and then.
                at += [0, 1, 3, 17, 120][(r >> 20) as usize % 5];
            }
            launch.write(&w.flush_at(at + 100));
        }
    }
    let cap = Capture {
        device: DeviceInfo {
            name: "Synthetic GPU".into(),
            sm_count: 132,
            clock_khz: 2_000_000,
            ..DeviceInfo::default()
        },
        regions: Regions::from_table(&[
            (0, "kernel"),
            (1, "load"),
            (2, "mma"),
            (3, "inner"),
            (4, "wait"),
            (5, "tick"),
            (6, "zero"),
        ]),
        launches: vec![launch.into_capture(), sample_launch(1, 50)],
        clock_syncs: Vec::new(),
        stalls: vec![stall_samples()],
        ..Default::default()
    };
    if let Err(e) = cap.save(&out) {
        eprintln!("synth_capture: {e}");
        std::process::exit(1);
    }
    println!("{out}: {} launches", cap.launches.len());
}

/// PC samples of launch 0's kernel: instructions in "load", "mma" (one of
/// them nested in "inner"), "wait", outside regions and a marker's, so the
/// report draws its stall lines.
fn stall_samples() -> StallSamples {
    let map = PcMap::parse(
        "ktrace-pcmap 1\nfile 0 /k/synth.cu\nfile 1 /inc/ktrace/store.cuh\nfunction synth\n\
         0000 - u 0:3 LDC\n0010 1 u 0:10 LDG.E.128\n0020 2 u 0:14 HMMA.16816.F32\n\
         0030 2,3 u 0:15 HMMA.16816.F32\n0040 4 u 0:20 BAR.SYNC\n0050 4 u 0:21 NOP\n\
         0060 - m 1:40 CS2R\n",
    )
    .expect("a map");
    let reasons = [
        "long_scoreboard",
        "math_pipe_throttle",
        "barrier",
        "wait",
        "selected",
    ];
    let pc = |offset: u64, counts: &[(u32, u32)]| {
        PcSample::placed("synth", offset, counts.to_vec(), &map)
    };
    StallSamples {
        launch: 0,
        kernel: String::new(),
        period_log2: 10,
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
        total_samples: 420,
        pcs: vec![
            pc(0x00, &[(4, 5)]),
            pc(0x10, &[(0, 90), (3, 10)]),
            pc(0x20, &[(1, 80), (4, 20)]),
            pc(0x30, &[(1, 60), (3, 5)]),
            pc(0x50, &[(2, 120)]),
            pc(0x60, &[(3, 30)]),
        ],
        ..Default::default()
    }
}
