//! Synthetic trace buffers in the exact device layout, for tests, benchmarks
//! and fuzzers. Writes slots the way `ktrace.cuh` does, through the
//! [`layout`](crate::format::layout) types (themselves checked against the C header).

use crate::decode::TimedEvent;
use crate::format::buffer::LaunchBuffer;
use crate::format::capture::{Capture, LaunchCapture};
use crate::format::layout::{
    Event, EventKind, SlotMeta, FLUSH_MAGIC, LAYOUT_VERSION, META_BYTES, OPEN_MAGIC,
    OPEN_SHARED_MAGIC, OPEN_STAMP_MAGIC, STAMP_BITS, STAMP_LOW_BIT, STAMP_TYPE_BITS,
};
use crate::format::shape::LaunchShape;

/// A zeroed buffer for a launch shape, filled warp by warp.
#[derive(Clone, Debug)]
pub struct SynthLaunch {
    /// The shape.
    pub shape: LaunchShape,
    /// The buffer bytes.
    pub raw: Vec<u8>,
    /// The layout version the buffer is read as (default this build's).
    pub layout_version: u32,
}

/// One warp's recording: when it opened, its clock rate, its events and
/// whether (and when) it flushed.
#[derive(Clone, Debug)]
pub struct SynthWarp {
    /// Linear block index.
    pub block: u32,
    /// Warp index within the block.
    pub warp: u32,
    /// SM id.
    pub sm: u16,
    /// `%globaltimer` at open, ns.
    pub init_gt: u64,
    /// `%clock64` at open.
    pub init_clk: u64,
    /// Clock rate: `cycles` cycles per `ns` nanoseconds.
    pub ns: u64,
    /// See `ns`.
    pub cycles: u64,
    /// Events: (cycles after open, region, kind). Written in time order
    /// (events at the same cycle in the order given).
    pub events: Vec<(u64, u16, EventKind)>,
    /// Values recorded with events: `(at, region, kind, value)` follows the
    /// event with that time, region and kind (layout version 3).
    pub values: Vec<(u64, u16, EventKind, u32)>,
    /// Flush time in cycles after open; `None` never flushes.
    pub flush_at: Option<u64>,
    /// Time anchors as the device records them (layout version 2): after
    /// the first event and after every event this many cycles or more past
    /// the last anchor. `None`: no anchors (layout version 1).
    pub anchor_cycles: Option<u64>,
    /// From this many cycles after open, the clock runs at `ns`/`cycles` of
    /// this instead: (cycle, ns, cycles).
    pub rate_change: Option<(u64, u64, u64)>,
    /// Opens with `KTRACE_OPEN_SHARED_MAGIC` (layout version 5): its times
    /// go through its SM's anchors.
    pub shares_anchors: bool,
    /// Time anchors by the count (`KTRACE_ANCHORS_COUNT`): after every
    /// event whose entry index is a multiple of this.
    pub anchor_events: Option<u32>,
    /// Built with `KTRACE_ANCHORS_STAMP` (layout version 6): opens with
    /// `KTRACE_OPEN_STAMP_MAGIC` and stamps every event with its
    /// globaltimer bits instead of recording anchors.
    pub stamps: bool,
}

/// A globaltimer value of the size real GPUs report.
pub const BASE_GT: u64 = 1_800_000_000_000_000_000;

impl SynthWarp {
    /// Warp `warp` of block `block` at 2 GHz, opened at a realistic
    /// globaltimer, flushed 100 cycles after its last event.
    pub fn new(block: u32, warp: u32) -> Self {
        SynthWarp {
            block,
            warp,
            sm: (block % 132) as u16,
            init_gt: BASE_GT + u64::from(block) * 1000 + u64::from(warp) * 10,
            init_clk: 1_000_000 + u64::from(block) * 7919,
            ns: 1,
            cycles: 2,
            events: Vec::new(),
            values: Vec::new(),
            flush_at: Some(0),
            anchor_cycles: None,
            rate_change: None,
            shares_anchors: false,
            anchor_events: None,
            stamps: false,
        }
    }

    /// Warp `warp` of block `block` on `other`'s SM, opened `offset` cycles
    /// after `other` on the same clock (its open globaltimer and rates are
    /// `other`'s at that cycle), with no events yet.
    pub fn beside(other: &SynthWarp, block: u32, warp: u32, offset: u64) -> Self {
        let mut w = SynthWarp::new(block, warp);
        w.sm = other.sm;
        w.init_clk = other.init_clk + offset;
        w.init_gt = other.init_gt + other.ns_at(offset);
        (w.ns, w.cycles) = (other.ns, other.cycles);
        w.rate_change = other.rate_change.map(|(at, ns, cycles)| {
            if at > offset {
                (at - offset, ns, cycles)
            } else {
                (0, ns, cycles)
            }
        });
        w
    }

    /// Opens with `KTRACE_OPEN_SHARED_MAGIC` and records no anchors: its
    /// times go through its SM's points alone (a `KTRACE_ANCHORS_COUNT`
    /// warp whose ring kept no anchor).
    pub fn shared(mut self) -> Self {
        self.shares_anchors = true;
        self.anchor_cycles = None;
        self.anchor_events = None;
        self
    }

    /// Built with `KTRACE_ANCHORS_COUNT`: opens with
    /// `KTRACE_OPEN_SHARED_MAGIC` and records an anchor after every event
    /// whose entry index is a multiple of `events`.
    pub fn count_anchors(mut self, events: u32) -> Self {
        self.shares_anchors = true;
        self.anchor_cycles = None;
        self.anchor_events = Some(events);
        self
    }

    /// Built with `KTRACE_ANCHORS_STAMP`: every event stamped with bits
    /// 5..17 of its globaltimer, no anchor entries.
    pub fn stamped(mut self) -> Self {
        self.stamps = true;
        self.anchor_cycles = None;
        self.anchor_events = None;
        self.shares_anchors = false;
        self
    }

    /// Records time anchors every `cycles` cycles, as the device does.
    pub fn anchors(mut self, cycles: u64) -> Self {
        self.anchor_cycles = Some(cycles);
        self
    }

    /// From `at` cycles after open, the clock runs at `cycles` cycles per
    /// `ns` nanoseconds.
    pub fn rate_from(mut self, at: u64, ns: u64, cycles: u64) -> Self {
        self.rate_change = Some((at, ns, cycles));
        self
    }

    /// Sets the SM.
    pub fn sm(mut self, sm: u16) -> Self {
        self.sm = sm;
        self
    }

    /// Sets the open timers.
    pub fn open_at(mut self, gt: u64, clk: u64) -> Self {
        self.init_gt = gt;
        self.init_clk = clk;
        self
    }

    /// Sets the clock rate: `cycles` cycles per `ns` nanoseconds.
    pub fn rate(mut self, ns: u64, cycles: u64) -> Self {
        self.ns = ns;
        self.cycles = cycles;
        self
    }

    /// Records an event `at` cycles after open.
    pub fn event(mut self, at: u64, region: u16, kind: EventKind) -> Self {
        self.events.push((at, region, kind));
        if let Some(f) = self.flush_at.as_mut() {
            *f = (*f).max(at + 100);
        }
        self
    }

    /// Records an event with a 32-bit value (`KTRACE_B_V` and the like).
    pub fn event_value(mut self, at: u64, region: u16, kind: EventKind, value: u32) -> Self {
        self.values.push((at, region, kind, value));
        self.event(at, region, kind)
    }

    /// Records a begin.
    pub fn begin(self, at: u64, region: u16) -> Self {
        self.event(at, region, EventKind::Begin)
    }

    /// Records an end.
    pub fn end(self, at: u64, region: u16) -> Self {
        self.event(at, region, EventKind::End)
    }

    /// Records a mark.
    pub fn mark(self, at: u64, region: u16) -> Self {
        self.event(at, region, EventKind::Mark)
    }

    /// Records a begin at `start` and an end at `end`.
    pub fn span(self, start: u64, end: u64, region: u16) -> Self {
        self.begin(start, region).end(end, region)
    }

    /// Flushes `at` cycles after open.
    pub fn flush_at(mut self, at: u64) -> Self {
        self.flush_at = Some(at);
        self
    }

    /// Never flushes.
    pub fn never_flushed(mut self) -> Self {
        self.flush_at = None;
        self
    }

    /// Nanoseconds from open to `cycles` cycles after it at this warp's
    /// rate (and its rate change), rounded down.
    pub fn ns_at(&self, cycles: u64) -> u64 {
        let at = |c: u64, ns: u64, cy: u64| {
            (u128::from(c) * u128::from(ns) / u128::from(cy.max(1))) as u64
        };
        match self.rate_change {
            Some((from, ns, cy)) if cycles > from => {
                at(from, self.ns, self.cycles) + at(cycles - from, ns, cy)
            }
            _ => at(cycles, self.ns, self.cycles),
        }
    }

    /// Largest |decoded − true| time, in ps, of `events`: a decoded trace of
    /// this warp's newest `events.len()` events (all of them when the ring
    /// kept everything), timed from `origin_ns`, the launch's origin
    /// globaltimer.
    ///
    /// # Panics
    /// When `events` is empty or longer than the warp's events.
    pub fn worst_error_ps(&self, origin_ns: u64, events: &[TimedEvent]) -> i64 {
        let mut truth: Vec<u64> = self.events.iter().map(|e| e.0).collect();
        truth.sort_unstable();
        let newest = &truth[truth.len() - events.len()..];
        events
            .iter()
            .zip(newest)
            .map(|(e, &at)| {
                let t = (self.init_gt + self.ns_at(at) - origin_ns) as i64 * 1000;
                (e.t_ps - t).abs()
            })
            .max()
            .expect("at least one event")
    }

    /// The ring entries the device writes: events, time anchors after the
    /// events that take one, and values after the events recorded with one.
    fn entries(&self) -> Vec<Event> {
        let mut events = self.events.clone();
        events.sort_by_key(|e| e.0);
        let mut out = Vec::with_capacity(2 * events.len());
        let mut last_anchor: Option<u64> = None;
        for &(at, region, kind) in &events {
            let index = out.len() as u64;
            let stamp = if self.stamps {
                let gt = self.init_gt + self.ns_at(at);
                let bits = (gt >> STAMP_LOW_BIT) & ((1 << STAMP_BITS) - 1);
                (bits as u16) << STAMP_TYPE_BITS
            } else {
                0
            };
            out.push(Event {
                clock: (self.init_clk + at) as u32,
                region,
                kind: kind.raw() | stamp,
            });
            let due = match (self.anchor_cycles, self.anchor_events) {
                (Some(p), _) => last_anchor.map_or(true, |a| at - a >= p),
                (None, Some(n)) => index % u64::from(n) == 0,
                (None, None) => false,
            };
            if due {
                let gt = self.init_gt + self.ns_at(at);
                out.push(Event {
                    clock: gt as u32,
                    region: (gt >> 32) as u16,
                    kind: crate::format::layout::EVENT_ANCHOR,
                });
                last_anchor = Some(at);
            }
            // A value follows its event and the event's anchor.
            if let Some(v) = self
                .values
                .iter()
                .find(|v| (v.0, v.1, v.2) == (at, region, kind))
            {
                out.push(Event {
                    clock: v.3,
                    region,
                    kind: crate::format::layout::EVENT_VALUE,
                });
            }
        }
        out
    }
}

impl SynthLaunch {
    /// A zeroed buffer for `shape`.
    pub fn new(shape: LaunchShape) -> Self {
        let bytes = shape.buffer_bytes().unwrap_or(0) as usize;
        SynthLaunch {
            shape,
            raw: vec![0; bytes],
            layout_version: LAYOUT_VERSION,
        }
    }

    /// The same launch read as layout version `version`.
    pub fn layout(mut self, version: u32) -> Self {
        self.layout_version = version;
        self
    }

    /// A view of the buffer, as decoding reads it.
    ///
    /// # Panics
    /// When the layout version is not one this build reads.
    pub fn buffer(&self) -> LaunchBuffer<'_> {
        LaunchBuffer::new(&self.raw, &self.shape, self.layout_version)
            .expect("a synthetic buffer fits its shape")
    }

    /// A zeroed buffer for `blocks` one-dimensional blocks of `threads`
    /// threads, every warp and block traced, rings of `cap` events.
    ///
    /// # Panics
    /// When `LaunchShape::new` refuses those numbers.
    pub fn all_traced(blocks: u32, threads: u32, cap: u32) -> Self {
        use crate::format::shape::{BlockSampling, WarpSampling};
        let shape = LaunchShape::new(
            [blocks, 1, 1],
            [threads, 1, 1],
            cap,
            &WarpSampling::All,
            BlockSampling::All,
        )
        .expect("a valid synthetic shape");
        Self::new(shape)
    }

    /// Writes a warp's slot as the device would. Returns false (writing
    /// nothing) when the shape does not trace that warp.
    pub fn write(&mut self, w: &SynthWarp) -> bool {
        let Some(slot) = self.shape.slot_of(u64::from(w.block), w.warp) else {
            return false;
        };
        let base = slot as usize * self.shape.slot_bytes() as usize;
        let cap = self.shape.cap() as usize;
        let mut meta = SlotMeta {
            init_globaltimer: w.init_gt,
            init_clock64: w.init_clk,
            block_linear: w.block,
            warp: w.warp as u16,
            smid: w.sm,
            open_magic: if w.stamps {
                OPEN_STAMP_MAGIC
            } else if w.shares_anchors {
                OPEN_SHARED_MAGIC
            } else {
                OPEN_MAGIC
            },
            ..SlotMeta::default()
        };
        // The device records in time order; keep the given order at ties.
        let entries = w.entries();
        for (i, e) in entries.iter().enumerate() {
            let off = base + META_BYTES + (i & (cap - 1)) * 8;
            self.raw[off..off + 8].copy_from_slice(&e.to_bytes());
        }
        if let Some(f) = w.flush_at {
            meta.final_globaltimer = w.init_gt + w.ns_at(f);
            meta.final_clock64 = w.init_clk + f;
            meta.count = entries.len() as u32;
            meta.flush_magic = FLUSH_MAGIC;
        }
        self.raw[base..base + META_BYTES].copy_from_slice(&meta.to_bytes());
        true
    }

    /// Writes a warp and returns the launch, for chaining.
    pub fn with(mut self, w: SynthWarp) -> Self {
        self.write(&w);
        self
    }

    /// The launch as a capture.
    pub fn into_capture(self) -> LaunchCapture {
        LaunchCapture {
            layout_version: self.layout_version,
            ..LaunchCapture::new(self.shape, self.raw)
        }
    }
}

/// Region table of [`sample_capture`]: region 5 is deliberately unnamed.
pub const SAMPLE_REGIONS: &[(u16, &str)] = &[(0, "load"), (1, "mma"), (2, "tick")];

/// One launch of the sample: three blocks of two warps, ring of 32. `slow`
/// stretches the "mma" spans by that many cycles (for before/after diffs).
pub fn sample_launch(launch: u32, slow: u64) -> LaunchCapture {
    use crate::format::shape::{BlockSampling, WarpSampling};
    let mut shape = LaunchShape::new(
        [3, 1, 1],
        [64, 1, 1],
        32,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .unwrap_or_else(|_| unreachable!("the sample shape is valid"));
    shape.launch = launch;
    let mut busy = SynthWarp::new(1, 0).sm(9);
    for i in 0..20 {
        busy = busy.span(100 + i * 400, 100 + i * 400 + 30 + i * 2 + slow, 1);
    }
    // Synthetic buffers have no time anchors: layout version 1.
    SynthLaunch::new(shape)
        .layout(1)
        .with(
            SynthWarp::new(0, 0)
                .sm(4)
                .span(100, 400, 0)
                .begin(450, 1)
                .span(500, 540, 5)
                .mark(1000, 2)
                .end(1450 + slow, 1)
                .span(1500 + slow, 2600 + 2 * slow, 1),
        )
        .with(
            SynthWarp::new(0, 1)
                .sm(4)
                .span(120, 380, 0)
                .begin(460, 1)
                .mark(900, 2)
                .end(1400 + slow, 1),
        )
        .with(busy)
        .with(SynthWarp::new(1, 1).sm(9).span(100, 300, 0).never_flushed())
        .with(
            SynthWarp::new(2, 0)
                .sm(2)
                .open_at(BASE_GT + 2000, 77_000)
                .begin(40, 0)
                .span(60, 700 + slow, 1),
        )
        .into_capture()
}

/// A small capture of two launches (the second with slower "mma" spans)
/// covering nesting, marks, ring overflow, an unmatched begin, a
/// never-flushed warp, an unopened slot and an unnamed region.
pub fn sample_capture() -> crate::format::capture::Capture {
    crate::format::capture::Capture {
        device: crate::format::capture::DeviceInfo {
            name: "Synthetic GPU".into(),
            sm_count: 132,
            clock_khz: 1_980_000,
            ..Default::default()
        },
        regions: crate::format::regions::Regions::from_table(SAMPLE_REGIONS),
        launches: vec![sample_launch(0, 0), sample_launch(1, 200)],
        clock_syncs: Vec::new(),
        ..Default::default()
    }
}

/// Launch `launch` of `kernel`, whose slots say it ran from `begin_ns` to
/// `begin_ns + duration_ns` of `%globaltimer` (`duration_ns` at least 4):
/// two blocks of two warps at 1 GHz, rings of 32, layout version 1. Block
/// 0's warps open at `begin_ns` and 10 ns later, each with one "load" span
/// (region 0), and flush at the middle and at the end; block 1's warp 0
/// opens 500 ns before `begin_ns` and never flushes, its warp 1 never
/// opens. So 3 warps opened, 2 flushed.
pub fn timed_launch(launch: u32, kernel: &str, begin_ns: u64, duration_ns: u64) -> LaunchCapture {
    let mut l = SynthLaunch::all_traced(2, 64, 32).layout(1);
    l.shape.launch = launch;
    let half = duration_ns / 2;
    let first = SynthWarp::new(0, 0)
        .rate(1, 1)
        .open_at(begin_ns, 1_000)
        .span(1, half - 1, 0)
        .flush_at(half);
    let second = SynthWarp::new(0, 1)
        .rate(1, 1)
        .open_at(begin_ns + 10, 2_000)
        .span(1, duration_ns - 11, 0)
        .flush_at(duration_ns - 10);
    let stuck = SynthWarp::new(1, 0)
        .rate(1, 1)
        .open_at(begin_ns.saturating_sub(500), 3_000)
        .never_flushed();
    LaunchCapture {
        kernel: kernel.to_string(),
        ..l.with(first).with(second).with(stuck).into_capture()
    }
}

/// A capture of a continuous session, for tests of statistics across
/// launches: five launches of "gemm" (0-4: 1, 2, 3, 4 and 10 µs, 100 µs
/// apart from [`BASE_GT`], site 0 epochs 0-4), two of "norm" (5 and 6:
/// 0.5 µs at 50 and 250 µs, site 1), one of an unnamed kernel (7: 0.1 µs
/// at 600 µs), each as [`timed_launch`] makes it; one clock sync with the
/// GPU 1000 ns ahead of the host; host steps 10, 11 and 12 ("decode"), 250
/// µs each from the host time of `BASE_GT`; site 0 saw 9 launches, kept 5
/// and dropped 2, site 1 kept its 2.
pub fn continuous_capture() -> Capture {
    use crate::format::capture::{HostStep, LaunchOrigin, SiteRecord};
    let at = |launch: u32, kernel: &str, from_us: u64, ns: u64, origin: Option<(u32, u32)>| {
        let mut l = timed_launch(launch, kernel, BASE_GT + from_us * 1000, ns);
        l.origin = origin.map(|(site, epoch)| LaunchOrigin {
            site,
            epoch,
            grid_id: 7 + u64::from(site),
            step: None,
        });
        l
    };
    let mut launches = Vec::new();
    for (i, ns) in [1000, 2000, 3000, 4000, 10_000].into_iter().enumerate() {
        let i = i as u32;
        launches.push(at(i, "gemm", u64::from(i) * 100, ns, Some((0, i))));
    }
    launches.push(at(5, "norm", 50, 500, Some((1, 0))));
    launches.push(at(6, "norm", 250, 500, Some((1, 1))));
    launches.push(at(7, "", 600, 100, None));
    let host0 = BASE_GT - 1000;
    let step = |k: u64| HostStep {
        name: "decode".into(),
        index: 10 + k,
        begin_ns: host0 + k * 250_000,
        end_ns: host0 + (k + 1) * 250_000,
    };
    let site = |site: u32, kernel: &str, launches: u64, kept: u64, dropped: u64| SiteRecord {
        site,
        kernel: kernel.into(),
        launches,
        kept,
        dropped,
        when_full: Default::default(),
    };
    Capture {
        regions: crate::format::regions::Regions::from_table(SAMPLE_REGIONS),
        launches,
        clock_syncs: vec![crate::format::clock_sync::ClockSync {
            host_before_ns: BASE_GT - 1010,
            gpu_ns: BASE_GT,
            host_after_ns: BASE_GT - 990,
            boottime_ns: 0,
        }],
        steps: (0..3).map(step).collect(),
        sites: vec![site(0, "gemm", 9, 5, 2), site(1, "norm", 2, 2, 0)],
        ..sample_capture()
    }
}

/// A capture whose events carry region ids the table lacks: 9 and 7 in
/// spans, 300 only in a begin without an end (no span, so no Chrome
/// event), 0xffff in a mark; the table names 1 and 2. The Chrome writer
/// meets them in the order 9, 7, 0xffff.
pub fn unknown_regions_capture() -> crate::format::capture::Capture {
    let launch = SynthLaunch::all_traced(1, 64, 32)
        .layout(1)
        .with(
            SynthWarp::new(0, 0)
                .span(100, 200, 9)
                .span(300, 400, 1)
                .flush_at(1000),
        )
        .with(
            SynthWarp::new(0, 1)
                .begin(50, 300)
                .span(100, 200, 7)
                .mark(250, 0xffff)
                .span(300, 400, 2)
                .flush_at(1000),
        )
        .into_capture();
    crate::format::capture::Capture {
        regions: crate::format::regions::Regions::from_table(&[(1, "load"), (2, "mma")]),
        launches: vec![launch],
        ..sample_capture()
    }
}

/// A xorshift64 generator from `seed` (not 0): the same numbers on every
/// machine, for tests that sweep many inputs.
pub fn xorshift64(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The bytes of a hostile capture (format version 3): one launch of 4,096
/// empty warps whose header says each ring holds 2^24 entries, so its
/// `raw_len` claims 549,756,076,032 bytes (512 GiB) while the file is
/// 256 KiB. A reader must refuse it or read it without using that memory.
pub fn claims_512_gib_capture() -> Vec<u8> {
    use crate::format::shape::{BlockSampling, WarpSampling};
    let shape = LaunchShape::new(
        [4096, 1, 1],
        [32, 1, 1],
        32,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .expect("a valid shape");
    let cap = crate::format::capture::Capture {
        launches: vec![SynthLaunch::new(shape).into_capture()],
        ..Default::default()
    };
    let mut bytes = Vec::new();
    cap.write_to(&mut bytes).expect("writing to memory");
    // The launch header: launch 0, grid 4096 x 1 x 1, block 32 x 1 x 1,
    // cap_log2 5.
    let pattern: Vec<u8> = [0u32, 4096, 1, 1, 32, 1, 1, 5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let at = bytes
        .windows(pattern.len())
        .position(|w| w == pattern.as_slice())
        .expect("the launch header");
    let raw_len: u64 = 4096 * (64 + (8 << 24));
    bytes[at + 28..at + 32].copy_from_slice(&24u32.to_le_bytes());
    bytes[at + 48..at + 56].copy_from_slice(&raw_len.to_le_bytes());
    bytes
}
