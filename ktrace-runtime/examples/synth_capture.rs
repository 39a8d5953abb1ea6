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
use ktrace_runtime::format::regions::Regions;
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
        ..Default::default()
    };
    if let Err(e) = cap.save(&out) {
        eprintln!("synth_capture: {e}");
        std::process::exit(1);
    }
    println!("{out}: {} launches", cap.launches.len());
}
