//! Synthetic launches of a realistic shape, shared by the criterion benches
//! (`benches/host.rs`) and the end-to-end driver (`examples/host_bench.rs`).
//!
//! The shape is that of a persistent-style GEMM on a 132-SM GPU: blocks of
//! 8 warps (256 threads), launched in waves of 132 blocks, every warp
//! traced, a ring of 1024 events per warp (the buffer of the reference
//! measurement: 132 blocks x 8 warps x 1024 events = 8.7 MB). Larger
//! captures add waves of blocks, so 10 M events is 1320 blocks and 100 M
//! events 13200 blocks, each warp with the same ~950 events.
//!
//! Each warp records a `kernel` span around everything, a `prologue` span,
//! then a main loop whose iterations are a `mainloop` span holding a
//! `load_tile` span, an `mma` span and a `sync` mark (7 events), then an
//! `epilogue` span and marks to reach its event count. Cycles between events
//! are jittered (xorshift), the SM clock runs at 1.98 GHz, each SM's
//! `%clock64` starts at its own large value (so the 32-bit event clocks
//! wrap), and the ring never overflows.

#![allow(dead_code)]

use ktrace_runtime::format::capture::{Capture, DeviceInfo, LaunchCapture};
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use ktrace_runtime::synth::{SynthLaunch, SynthWarp, BASE_GT};

/// SMs of the synthetic device; blocks per wave.
pub const SMS: u32 = 132;
/// Warps per block (all traced).
pub const WARPS: u32 = 8;
/// Events per warp of the reference shape (rounded to reach the target).
pub const EVENTS_PER_WARP: u64 = 1000;
/// Clock rate, kHz.
pub const CLOCK_KHZ: u32 = 1_980_000;

/// Region names of the workload.
pub const REGIONS: &[(u16, &str)] = &[
    (0, "kernel"),
    (1, "prologue"),
    (2, "mainloop"),
    (3, "load_tile"),
    (4, "mma"),
    (5, "sync"),
    (6, "epilogue"),
];

/// How a target event count is laid out.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Blocks in the grid (a multiple of [`SMS`]).
    pub blocks: u32,
    /// Events recorded by every warp.
    pub events_per_warp: u32,
    /// Per-warp ring capacity.
    pub cap: u32,
}

impl Plan {
    /// Whole waves of 132 blocks, each warp with about 1000 events or fewer.
    pub fn for_events(events: u64) -> Plan {
        let per_wave = u64::from(SMS * WARPS);
        let waves = events.div_ceil(per_wave * EVENTS_PER_WARP).max(1);
        let blocks = (waves * u64::from(SMS)) as u32;
        let epw = (events / (u64::from(blocks) * u64::from(WARPS))).max(8) as u32;
        Plan {
            blocks,
            events_per_warp: epw,
            cap: epw.next_power_of_two().max(32),
        }
    }

    /// Events in the whole launch.
    pub fn events(&self) -> u64 {
        u64::from(self.blocks) * u64::from(WARPS) * u64::from(self.events_per_warp)
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
}

/// One warp's recording.
pub fn warp(block: u32, warp: u32, events: u32) -> SynthWarp {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (u64::from(block) << 8 | u64::from(warp)));
    let sm = block % SMS;
    let wave = u64::from(block / SMS);
    // Waves about 70 us apart, blocks of a wave starting within 2 us.
    let start_ns = wave * 70_000 + rng.range(0, 2_000) + u64::from(warp) * 3;
    let sm_clock0 = (u64::from(sm) + 1) * 3_000_000_017;
    let init_clk = sm_clock0 + start_ns * u64::from(CLOCK_KHZ) / 1_000_000;
    let mut w = SynthWarp::new(block, warp)
        .sm(sm as u16)
        .open_at(BASE_GT + start_ns, init_clk)
        .rate(1_000_000, u64::from(CLOCK_KHZ));
    let mut t = rng.range(20, 200);
    // The cycle of the next event, then a jittered gap of lo..hi cycles.
    let mut at = |lo, hi| {
        let now = t;
        t += rng.range(lo, hi);
        now
    };
    let fixed = 4u32;
    let iters = events.saturating_sub(fixed) / 7;
    let rest = events - fixed.min(events) - iters * 7;
    w = w.begin(at(20, 60), 0);
    w = w.begin(at(300, 600), 1);
    w = w.end(at(10, 30), 1);
    for _ in 0..iters {
        w = w.begin(at(5, 15), 2);
        w = w.begin(at(150, 400), 3);
        w = w.end(at(5, 20), 3);
        w = w.begin(at(400, 700), 4);
        w = w.end(at(5, 20), 4);
        w = w.mark(at(10, 40), 5);
        w = w.end(at(5, 15), 2);
    }
    let mut marks = rest;
    if rest >= 2 {
        w = w.begin(at(200, 500), 6);
        w = w.end(at(5, 15), 6);
        marks -= 2;
    }
    for _ in 0..marks {
        w = w.mark(at(10, 40), 5);
    }
    w.end(at(5, 15), 0)
}

/// The launch shape for `plan`.
pub fn launch_shape(plan: &Plan) -> LaunchShape {
    LaunchShape::new(
        [plan.blocks, 1, 1],
        [32 * WARPS, 1, 1],
        plan.cap,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .expect("a valid shape")
}

/// The launch for `plan`.
pub fn launch(plan: &Plan) -> LaunchCapture {
    launch_as(plan, |w| w)
}

/// The launch for `plan`, each warp recorded as `build` makes it (with
/// time anchors, stamped events).
pub fn launch_as(plan: &Plan, build: fn(SynthWarp) -> SynthWarp) -> LaunchCapture {
    let mut l = SynthLaunch::new(launch_shape(plan));
    for b in 0..plan.blocks {
        for wi in 0..WARPS {
            let w = build(warp(b, wi, plan.events_per_warp));
            debug_assert_eq!(w.events.len() as u32, plan.events_per_warp);
            l.write(&w);
        }
    }
    l.into_capture()
}

/// A one-launch capture of about `events` events.
pub fn capture(events: u64) -> Capture {
    capture_as(events, |w| w)
}

/// [`capture`], each warp recorded as `build` makes it.
pub fn capture_as(events: u64, build: fn(SynthWarp) -> SynthWarp) -> Capture {
    Capture {
        device: DeviceInfo {
            name: "Synthetic H200".into(),
            sm_count: SMS,
            clock_khz: CLOCK_KHZ,
            ..DeviceInfo::default()
        },
        regions: Regions::from_table(REGIONS),
        launches: vec![launch_as(&Plan::for_events(events), build)],
        clock_syncs: Vec::new(),
        ..Default::default()
    }
}
