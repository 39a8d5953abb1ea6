//! Decoding a raw trace buffer into per-warp timelines.
//!
//! Decoding is a pure function of the buffer bytes and the [`LaunchShape`].
//! It runs in two steps so that exporters can stream warp by warp:
//! [`Decoder::new`] reads every slot's metadata once (time origin, clock
//! rates, launch-wide diagnostics), then [`Decoder::warp`] decodes one warp's
//! events on demand.
//!
//! # Time
//!
//! Events carry the raw low 32 bits of the SM's `%clock`. Within a warp they
//! are unwrapped by monotonicity: each event is the previous one plus the
//! wrapping 32-bit difference, so a warp may run past 2^32 cycles as long as
//! no two consecutive events are 2^32 cycles apart. The chain is anchored to
//! the `%clock64` read at open when the ring kept every event, and backwards
//! from the `%clock64` read at flush when older events were dropped.
//!
//! Cycles become time through the slot's own timer pairs,
//! `(final_globaltimer - init_globaltimer) / (final_clock64 - init_clock64)`,
//! kept as an exact ratio of integers. The globaltimer advances in coarse
//! steps (32 ns on recent GPUs), so a slot whose open-to-flush span is shorter
//! than [`DecodeOptions::short_span_ns`] uses the device-wide rate instead:
//! the median rate of the slots that are long enough, or of all slots with a
//! usable timer pair when none is.
//!
//! All arithmetic is on integers (`i128` intermediates). Times are in
//! picoseconds (`i64`) relative to a per-launch origin, the earliest
//! `init_globaltimer` of any opened slot; absolute globaltimer values are
//! never put in a floating-point number.
//!
//! # Never-flushed warps
//!
//! A warp that opened but never flushed has no count and no final timers.
//! The decoder recovers the leading run of written (non-zero) events from the
//! start of its ring, placed with the device-wide rate from the open timers,
//! as long as that run is shorter than the ring (a full ring may have wrapped
//! and its order is unknown: then no event is recovered). Either way the warp
//! is reported with [`Diagnostic::NeverFlushed`].

use std::cmp::Ordering;

use crate::diagnostics::{Diagnostic, Diagnostics, WarpId};
use crate::error::{Error, Result};
use crate::layout::{Event, EventKind, SlotMeta, EVENT_BYTES, META_BYTES};
use crate::shape::LaunchShape;

/// A clock rate as an exact ratio: `ns` nanoseconds per `cycles` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRatio {
    /// Nanoseconds.
    pub ns: u64,
    /// Cycles in that many nanoseconds (never 0).
    pub cycles: u64,
}

impl ClockRatio {
    /// The rate of a clock of `khz` kilohertz (1 GHz if `khz` is 0).
    pub fn from_khz(khz: u64) -> Self {
        ClockRatio {
            ns: 1_000_000,
            cycles: if khz == 0 { 1_000_000 } else { khz },
        }
    }

    /// Compares nanoseconds per cycle, exactly.
    pub fn cmp_period(&self, other: &ClockRatio) -> Ordering {
        let a = u128::from(self.ns) * u128::from(other.cycles);
        let b = u128::from(other.ns) * u128::from(self.cycles);
        a.cmp(&b)
    }

    /// Picoseconds in `cycles` cycles, rounded to nearest (saturating).
    pub fn cycles_to_ps(&self, cycles: i128) -> i128 {
        // The same rounding in 64-bit arithmetic when nothing overflows:
        // 128-bit division is a library call, slow per event.
        if let Some(v) = self.cycles_to_ps_u64(cycles) {
            return v;
        }
        self.cycles_to_ps_wide(cycles)
    }

    #[inline]
    fn cycles_to_ps_u64(&self, cycles: i128) -> Option<i128> {
        let num = self.ns.checked_mul(1000)?;
        let den = self.cycles.max(1);
        let m = u64::try_from(cycles.unsigned_abs())
            .ok()?
            .checked_mul(num)?;
        let (a, b) = (m / den, m % den);
        if cycles >= 0 {
            // q = a, r = b; round half up.
            Some(i128::from(a) + i128::from(b >= den - b))
        } else if b == 0 {
            Some(-i128::from(a))
        } else {
            // floor(-m / den) = -(a + 1), remainder den - b.
            let r = den - b;
            Some(-i128::from(a) - 1 + i128::from(r >= den - r))
        }
    }

    fn cycles_to_ps_wide(&self, cycles: i128) -> i128 {
        let num = i128::from(self.ns) * 1000;
        let den = i128::from(self.cycles.max(1));
        match cycles.checked_mul(num) {
            Some(p) => {
                let q = p.div_euclid(den);
                let r = p.rem_euclid(den);
                if 2 * r >= den {
                    q + 1
                } else {
                    q
                }
            }
            None if cycles < 0 => i128::from(i64::MIN),
            None => i128::from(i64::MAX),
        }
    }

    /// The clock rate in MHz, rounded down.
    pub fn mhz(&self) -> u64 {
        let v = u128::from(self.cycles) * 1000 / u128::from(self.ns.max(1));
        u64::try_from(v).unwrap_or(u64::MAX)
    }

    /// The clock rate in GHz, for display.
    pub fn ghz(&self) -> f64 {
        self.cycles as f64 / self.ns.max(1) as f64
    }

    /// Whether `self` is off `reference` by more than 1%.
    fn off_by_more_than_1pc(&self, reference: &ClockRatio) -> bool {
        let a = u128::from(self.ns) * u128::from(reference.cycles);
        let b = u128::from(reference.ns) * u128::from(self.cycles);
        match a.abs_diff(b).checked_mul(100) {
            Some(d) => d > b,
            None => true,
        }
    }
}

/// Where a warp's clock rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatioSource {
    /// The slot's own timer pairs.
    Slot,
    /// The device-wide median (the slot was too short, or never flushed).
    DeviceWide,
    /// The device's nominal clock rate (no slot had a usable timer pair).
    Nominal,
}

impl RatioSource {
    /// A short name for output files.
    pub fn as_str(self) -> &'static str {
        match self {
            RatioSource::Slot => "slot",
            RatioSource::DeviceWide => "device_median",
            RatioSource::Nominal => "nominal",
        }
    }
}

/// Decoding choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// A slot whose globaltimer span (open to flush) is shorter than this
    /// uses the device-wide clock rate. Default 10 µs: `%globaltimer` steps
    /// by 32 ns, so a slot's own rate is then within 0.64%, while the SM
    /// clock moves by more than that over a launch (seen on an H200: slot
    /// rates 1% apart), and a slot's own rate keeps its events between its
    /// open and flush times.
    pub short_span_ns: u64,
    /// The device's nominal clock rate in kHz, used only when no slot has a
    /// usable timer pair (0: assume 1 GHz).
    pub nominal_clock_khz: u64,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            short_span_ns: 10_000,
            nominal_clock_khz: 0,
        }
    }
}

/// One decoded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedEvent {
    /// Time in picoseconds from the launch origin.
    pub t_ps: i64,
    /// Region id.
    pub region: u16,
    /// Begin, end or mark.
    pub kind: EventKind,
}

/// A begin matched with its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Region id.
    pub region: u16,
    /// Begin time in picoseconds from the launch origin.
    pub start_ps: i64,
    /// End time in picoseconds from the launch origin.
    pub end_ps: i64,
}

impl Span {
    /// Duration in picoseconds.
    pub fn dur_ps(&self) -> u64 {
        self.end_ps.saturating_sub(self.start_ps).max(0) as u64
    }
}

/// The decoded timeline of one warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpTrace {
    /// Slot index in the buffer.
    pub slot: u64,
    /// Block, warp and SM.
    pub id: WarpId,
    /// Whether the warp flushed.
    pub flushed: bool,
    /// Events the warp recorded (the slot's count; 0 if never flushed).
    pub recorded: u32,
    /// Events lost to ring overflow.
    pub dropped: u64,
    /// The clock rate used for this warp.
    pub ratio: ClockRatio,
    /// Where that rate came from.
    pub ratio_source: RatioSource,
    /// When the warp opened, in picoseconds from the launch origin.
    pub open_ps: i64,
    /// When it flushed, if it did.
    pub flush_ps: Option<i64>,
    /// Events in time order; at equal times begin, then mark, then end.
    pub events: Vec<TimedEvent>,
    /// Begins matched with ends (per region, innermost first), by start time.
    pub spans: Vec<Span>,
    /// What went wrong in this warp.
    pub diagnostics: Vec<Diagnostic>,
}

impl WarpTrace {
    /// The marks, in time order.
    pub fn marks(&self) -> impl Iterator<Item = &TimedEvent> {
        self.events.iter().filter(|e| e.kind == EventKind::Mark)
    }
}

/// A whole launch, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedLaunch {
    /// The launch shape.
    pub shape: LaunchShape,
    /// Absolute `%globaltimer` of the time origin, in nanoseconds.
    pub origin_globaltimer: u64,
    /// The device-wide clock rate.
    pub device_ratio: ClockRatio,
    /// Where that came from.
    pub device_ratio_source: RatioSource,
    /// Every opened slot, in slot order.
    pub warps: Vec<WarpTrace>,
    /// Launch-wide diagnostics followed by every warp's.
    pub diagnostics: Diagnostics,
}

#[derive(Clone, Copy, Debug)]
struct SlotPlan {
    slot: u64,
    ratio: ClockRatio,
    source: RatioSource,
}

/// Metadata pass over a buffer; decodes warps on demand.
#[derive(Debug)]
pub struct Decoder<'a> {
    raw: &'a [u8],
    shape: LaunchShape,
    origin: u64,
    device_ratio: ClockRatio,
    device_source: RatioSource,
    plans: Vec<SlotPlan>,
    diagnostics: Diagnostics,
}

enum Anchor {
    Init,
    Final,
}

impl<'a> Decoder<'a> {
    /// Reads every slot's metadata. Fails only if the buffer length does not
    /// match the shape or the shape is invalid.
    pub fn new(raw: &'a [u8], shape: &LaunchShape, opts: &DecodeOptions) -> Result<Self> {
        shape.validate()?;
        let expected = shape.buffer_bytes().unwrap_or(u64::MAX);
        if raw.len() as u64 != expected {
            return Err(Error::BufferSize {
                expected,
                actual: raw.len() as u64,
            });
        }
        let slot_bytes = shape.slot_bytes() as usize;
        let mut diagnostics = Diagnostics::new();
        let mut opened: Vec<(u64, SlotMeta)> = Vec::new();
        for slot in 0..shape.slot_count() {
            let meta = read_meta(raw, slot as usize * slot_bytes);
            if !meta.is_opened() {
                continue;
            }
            let (block, warp) = shape.slot_position(slot);
            if u64::from(meta.block_linear) != block || u32::from(meta.warp) != warp {
                diagnostics.push(Diagnostic::SlotMismatch {
                    slot,
                    expected: (block, warp),
                    found: warp_id(&meta),
                });
            }
            opened.push((slot, meta));
        }
        let origin = opened
            .iter()
            .map(|(_, m)| m.init_globaltimer)
            .min()
            .unwrap_or(0);

        // Clock rates: the slot's own where its span is long enough.
        let own: Vec<Option<ClockRatio>> = opened.iter().map(|(_, m)| slot_ratio(m)).collect();
        let long = |m: &SlotMeta| {
            m.final_globaltimer.saturating_sub(m.init_globaltimer) >= opts.short_span_ns
        };
        let mut long_rates: Vec<ClockRatio> = opened
            .iter()
            .zip(&own)
            .filter(|((_, m), r)| r.is_some() && long(m))
            .filter_map(|(_, r)| *r)
            .collect();
        let (device_ratio, device_source) = if !long_rates.is_empty() {
            (median(&mut long_rates), RatioSource::DeviceWide)
        } else {
            let mut all: Vec<ClockRatio> = own.iter().filter_map(|r| *r).collect();
            if all.is_empty() {
                let r = ClockRatio::from_khz(opts.nominal_clock_khz);
                if !opened.is_empty() {
                    diagnostics.push(Diagnostic::NoClockCalibration {
                        assumed_khz: if opts.nominal_clock_khz == 0 {
                            1_000_000
                        } else {
                            opts.nominal_clock_khz
                        },
                    });
                }
                (r, RatioSource::Nominal)
            } else {
                (median(&mut all), RatioSource::DeviceWide)
            }
        };

        let mut plans = Vec::with_capacity(opened.len());
        for ((slot, meta), r) in opened.iter().zip(&own) {
            let (ratio, source) = match r {
                Some(r) if long(meta) => {
                    if r.off_by_more_than_1pc(&device_ratio) {
                        diagnostics.push(Diagnostic::ClockRateOutlier {
                            warp: warp_id(meta),
                            slot_mhz: r.mhz(),
                            median_mhz: device_ratio.mhz(),
                        });
                    }
                    (*r, RatioSource::Slot)
                }
                _ => (device_ratio, device_source),
            };
            plans.push(SlotPlan {
                slot: *slot,
                ratio,
                source,
            });
        }
        Ok(Decoder {
            raw,
            shape: *shape,
            origin,
            device_ratio,
            device_source,
            plans,
            diagnostics,
        })
    }

    /// The launch shape.
    pub fn shape(&self) -> &LaunchShape {
        &self.shape
    }

    /// Absolute `%globaltimer` of the time origin (earliest open), in ns.
    pub fn origin_globaltimer(&self) -> u64 {
        self.origin
    }

    /// The device-wide clock rate and where it came from.
    pub fn device_ratio(&self) -> (ClockRatio, RatioSource) {
        (self.device_ratio, self.device_source)
    }

    /// Diagnostics found in the metadata pass (per-warp ones come with each
    /// [`WarpTrace`]).
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// Number of opened slots (decodable warps).
    pub fn warp_count(&self) -> usize {
        self.plans.len()
    }

    /// Decodes the `i`-th opened slot (in slot order), or `None` past the end.
    pub fn warp(&self, i: usize) -> Option<WarpTrace> {
        let plan = *self.plans.get(i)?;
        Some(self.decode_slot(&plan))
    }

    /// Decodes every warp in slot order, one at a time.
    pub fn warps(&self) -> impl Iterator<Item = WarpTrace> + '_ {
        self.plans.iter().map(move |p| self.decode_slot(p))
    }

    /// The time of the `i`-th warp's earliest event, without keeping events.
    pub fn first_event_ps(&self, i: usize) -> Option<i64> {
        let plan = self.plans.get(i)?;
        let mut first = None;
        // Times never decrease in ring order: the first valid event is the
        // earliest, and the walk stops there.
        self.for_each_event(plan, |_, e, t| {
            if EventKind::from_raw(e.kind).is_some() {
                first = Some(t);
                false
            } else {
                true
            }
        });
        first
    }

    /// The earliest event of the launch, in picoseconds from the origin.
    pub fn first_event_of_launch(&self) -> Option<i64> {
        (0..self.plans.len())
            .filter_map(|i| self.first_event_ps(i))
            .min()
    }

    /// Decodes everything at once.
    pub fn decode_all(&self) -> DecodedLaunch {
        let mut diagnostics = self.diagnostics.clone();
        let warps: Vec<WarpTrace> = self.warps().collect();
        for w in &warps {
            diagnostics.extend(w.diagnostics.iter().cloned());
        }
        DecodedLaunch {
            shape: self.shape,
            origin_globaltimer: self.origin,
            device_ratio: self.device_ratio,
            device_ratio_source: self.device_source,
            warps,
            diagnostics,
        }
    }

    fn meta(&self, slot: u64) -> SlotMeta {
        read_meta(self.raw, slot as usize * self.shape.slot_bytes() as usize)
    }

    fn event(&self, slot: u64, index: u32) -> Event {
        let off = slot as usize * self.shape.slot_bytes() as usize
            + META_BYTES
            + index as usize * EVENT_BYTES;
        let mut b = [0u8; EVENT_BYTES];
        b.copy_from_slice(&self.raw[off..off + EVENT_BYTES]);
        Event::from_bytes(&b)
    }

    /// Kept events of a slot: (ring index of the oldest, how many, anchor).
    fn ring(&self, slot: u64, meta: &SlotMeta) -> (u32, u32, Anchor) {
        let cap = self.shape.cap();
        if meta.is_flushed() {
            let n = meta.count.min(cap);
            if meta.count > cap {
                (meta.count & (cap - 1), n, Anchor::Final)
            } else {
                (0, n, Anchor::Init)
            }
        } else {
            let mut k = 0;
            while k < cap && self.event(slot, k) != Event::default() {
                k += 1;
            }
            if k < cap {
                (0, k, Anchor::Init)
            } else {
                (0, 0, Anchor::Init)
            }
        }
    }

    /// Calls `f(ring position, event, time in ps)` for every kept event, in
    /// ring order (oldest first), until `f` returns false.
    fn for_each_event(&self, plan: &SlotPlan, mut f: impl FnMut(u32, Event, i64) -> bool) {
        let meta = self.meta(plan.slot);
        let (start, n, anchor) = self.ring(plan.slot, &meta);
        if n == 0 {
            return;
        }
        let cap = self.shape.cap();
        let at = |i: u32| self.event(plan.slot, (start + i) & (cap - 1));
        let origin_ps = |gt: u64| i128::from(gt) * 1000 - i128::from(self.origin) * 1000;
        // Where the walk starts: the anchor's time, the cycle offset of the
        // oldest kept event from it, and the clock value before that event.
        let (base, mut cyc, mut prev): (i128, i128, u32) = match anchor {
            Anchor::Init => (
                origin_ps(meta.init_globaltimer),
                0,
                meta.init_clock64 as u32,
            ),
            Anchor::Final => {
                // Walk backwards from the flush to find the oldest kept
                // event's offset; the forward walk below reports in order.
                let last = at(n - 1);
                let mut cyc: i128 =
                    -i128::from((meta.final_clock64 as u32).wrapping_sub(last.clock));
                let mut next = last.clock;
                for i in (0..n - 1).rev() {
                    let e = at(i);
                    cyc -= i128::from(next.wrapping_sub(e.clock));
                    next = e.clock;
                }
                (origin_ps(meta.final_globaltimer), cyc, at(0).clock)
            }
        };
        for i in 0..n {
            let e = at(i);
            cyc += i128::from(e.clock.wrapping_sub(prev));
            prev = e.clock;
            if !f(i, e, clamp(base + plan.ratio.cycles_to_ps(cyc))) {
                return;
            }
        }
    }

    fn decode_slot(&self, plan: &SlotPlan) -> WarpTrace {
        let meta = self.meta(plan.slot);
        let id = warp_id(&meta);
        let cap = self.shape.cap();
        let mut diagnostics = Vec::new();
        let flushed = meta.is_flushed();
        let recorded = if flushed { meta.count } else { 0 };
        let dropped = u64::from(recorded.saturating_sub(cap));
        if dropped > 0 {
            diagnostics.push(Diagnostic::Dropped {
                warp: id,
                recorded,
                kept: cap,
            });
        }

        let mut events = Vec::with_capacity(recorded.min(cap) as usize);
        let mut unknown: Option<(u16, u32)> = None;
        let mut raw_count = 0u32;
        // Whether the events come in (time, begin-mark-end) order already.
        let mut in_order = true;
        let mut last = (i64::MIN, 0u8);
        self.for_each_event(plan, |_, e, t| {
            raw_count += 1;
            match EventKind::from_raw(e.kind) {
                Some(kind) => {
                    let key = (t, kind.tie_rank());
                    in_order &= last <= key;
                    last = key;
                    events.push(TimedEvent {
                        t_ps: t,
                        region: e.region,
                        kind,
                    })
                }
                None => {
                    let u = unknown.get_or_insert((e.kind, 0));
                    u.1 += 1;
                }
            }
            true
        });
        if !flushed {
            diagnostics.push(Diagnostic::NeverFlushed {
                warp: id,
                recovered: raw_count,
            });
        }
        if let Some((kind, count)) = unknown {
            diagnostics.push(Diagnostic::UnknownEventType {
                warp: id,
                kind,
                count,
            });
        }

        let open_ps =
            clamp(i128::from(meta.init_globaltimer) * 1000 - i128::from(self.origin) * 1000);
        let flush_ps = flushed.then(|| {
            clamp(i128::from(meta.final_globaltimer) * 1000 - i128::from(self.origin) * 1000)
        });
        if flushed && meta.final_clock64 > meta.init_clock64 && !events.is_empty() {
            // The unwrapped chain must stay within open..flush.
            let span = meta.final_clock64 - meta.init_clock64;
            // Slack for the coarse globaltimer; a real inconsistency is a
            // gap of 2^32 cycles, seconds long.
            let tol = plan.ratio.cycles_to_ps(i128::from(span) / 100) + 2_000_000;
            let lo = open_ps as i128 - tol;
            let hi = flush_ps.unwrap_or(i64::MAX) as i128 + tol;
            let first = i128::from(events.first().map_or(0, |e| e.t_ps));
            let last = i128::from(events.last().map_or(0, |e| e.t_ps));
            if first < lo || last > hi {
                diagnostics.push(Diagnostic::ClockInconsistent { warp: id });
            }
        }

        // Times never decrease in ring order; only events at the same time
        // may need reordering (begin, mark, end), and usually none do.
        if !in_order {
            events.sort_by_key(|e| (e.t_ps, e.kind.tie_rank()));
        }
        let spans = match_spans(&events, id, &mut diagnostics);

        WarpTrace {
            slot: plan.slot,
            id,
            flushed,
            recorded,
            dropped,
            ratio: plan.ratio,
            ratio_source: plan.source,
            open_ps,
            flush_ps,
            events,
            spans,
            diagnostics,
        }
    }
}

/// Decodes a whole buffer at once: [`Decoder::new`] then
/// [`Decoder::decode_all`].
pub fn decode(raw: &[u8], shape: &LaunchShape, opts: &DecodeOptions) -> Result<DecodedLaunch> {
    Ok(Decoder::new(raw, shape, opts)?.decode_all())
}

fn match_spans(events: &[TimedEvent], id: WarpId, diags: &mut Vec<Diagnostic>) -> Vec<Span> {
    // Each begin adds a span to `spans` (so spans are in begin order, that
    // is by start time) whose end is filled in by the matching end. Per
    // region, the open spans form a stack (nested and repeated regions),
    // linked through `below`.
    const NONE: u32 = u32::MAX;
    // (region, top of its stack of open spans, depth)
    let mut open: Vec<(u16, u32, u32)> = Vec::new();
    let mut unmatched_end: Vec<(u16, u32)> = Vec::new();
    let mut spans: Vec<Span> = Vec::with_capacity(events.len() / 2);
    let mut below: Vec<u32> = Vec::with_capacity(events.len() / 2);
    for e in events {
        if e.kind == EventKind::Mark {
            continue;
        }
        let idx = match open.iter().position(|o| o.0 == e.region) {
            Some(i) => i,
            None => {
                open.push((e.region, NONE, 0));
                open.len() - 1
            }
        };
        let o = &mut open[idx];
        if e.kind == EventKind::Begin {
            below.push(o.1);
            o.1 = spans.len() as u32;
            o.2 += 1;
            spans.push(Span {
                region: e.region,
                start_ps: e.t_ps,
                end_ps: e.t_ps,
            });
        } else if o.1 != NONE {
            let top = o.1 as usize;
            spans[top].end_ps = e.t_ps;
            o.1 = below[top];
            o.2 -= 1;
        } else {
            match unmatched_end.iter_mut().find(|(r, _)| *r == e.region) {
                Some(u) => u.1 += 1,
                None => unmatched_end.push((e.region, 1)),
            }
        }
    }
    unmatched_end.sort_unstable();
    for (region, count) in unmatched_end {
        diags.push(Diagnostic::UnmatchedEnd {
            warp: id,
            region,
            count,
        });
    }
    open.sort_unstable_by_key(|o| o.0);
    let mut keep: Vec<bool> = Vec::new();
    for &(region, top, depth) in &open {
        if depth > 0 {
            diags.push(Diagnostic::UnmatchedBegin {
                warp: id,
                region,
                count: depth,
            });
            // Begins still open have no span.
            keep.resize(spans.len(), true);
            let mut t = top;
            while t != NONE {
                keep[t as usize] = false;
                t = below[t as usize];
            }
        }
    }
    if !keep.is_empty() {
        let mut k = keep.iter();
        spans.retain(|_| k.next().copied().unwrap_or(true));
    }
    // Outer spans before inner ones that start at the same time. Spans with
    // equal keys are equal, so any sort gives the same order.
    let key = |s: &Span| (s.start_ps, std::cmp::Reverse(s.end_ps), s.region);
    if !spans.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        spans.sort_by_key(key);
    }
    spans
}

fn read_meta(raw: &[u8], off: usize) -> SlotMeta {
    let mut b = [0u8; META_BYTES];
    b.copy_from_slice(&raw[off..off + META_BYTES]);
    SlotMeta::from_bytes(&b)
}

fn warp_id(m: &SlotMeta) -> WarpId {
    WarpId {
        block: m.block_linear,
        warp: m.warp,
        sm: m.smid,
    }
}

fn slot_ratio(m: &SlotMeta) -> Option<ClockRatio> {
    if !m.is_flushed() {
        return None;
    }
    let ns = m.final_globaltimer.checked_sub(m.init_globaltimer)?;
    let cycles = m.final_clock64.checked_sub(m.init_clock64)?;
    (ns > 0 && cycles > 0).then_some(ClockRatio { ns, cycles })
}

fn median(rates: &mut [ClockRatio]) -> ClockRatio {
    rates.sort_by(|a, b| a.cmp_period(b));
    rates[(rates.len() - 1) / 2]
}

fn clamp(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_rounding() {
        // 1.98 GHz: 40 cycles are 20.2 ns.
        let r = ClockRatio {
            ns: 1_000_000,
            cycles: 1_980_000,
        };
        assert_eq!(r.cycles_to_ps(40), 20_202);
        assert_eq!(r.cycles_to_ps(-40), -20_202);
        assert_eq!(r.mhz(), 1980);
        let huge = ClockRatio {
            ns: u64::MAX,
            cycles: 1,
        };
        assert_eq!(
            huge.cycles_to_ps(i128::from(u64::MAX)),
            i128::from(i64::MAX)
        );
    }

    #[test]
    fn fast_rounding_matches_wide() {
        let mut next = crate::synth::xorshift64(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let r = ClockRatio {
                ns: next() >> (next() % 64),
                cycles: (next() >> (next() % 64)).max(1),
            };
            let c = (next() >> (next() % 64)) as i128;
            for cycles in [c, -c, c % 1000, -(c % 1000), 0] {
                assert_eq!(
                    r.cycles_to_ps(cycles),
                    r.cycles_to_ps_wide(cycles),
                    "{r:?} {cycles}"
                );
            }
        }
    }

    #[test]
    fn outlier_threshold() {
        let m = ClockRatio {
            ns: 100,
            cycles: 200,
        };
        assert!(!ClockRatio {
            ns: 100,
            cycles: 201
        }
        .off_by_more_than_1pc(&m));
        assert!(ClockRatio {
            ns: 100,
            cycles: 204
        }
        .off_by_more_than_1pc(&m));
    }
}
