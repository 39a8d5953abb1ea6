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
//! wrapping 32-bit difference. The chain is anchored to the `%clock64` read
//! at open when the ring kept every entry, and backwards from the `%clock64`
//! read at flush when older entries were dropped.
//!
//! Cycles become time through points `(%clock64, %globaltimer)`. Since
//! layout version 2 a warp records *time anchors* in its ring — a
//! `%globaltimer` reading right after an event's clock, after its first
//! event and then about once per `KTRACE_ANCHOR_CYCLES` — and
//! [`TimeModel::Anchors`] maps cycles piecewise-linearly through the open
//! pair, the anchors and the flush pair, so times stay right while the SM
//! clock moves under load. Points that disagree with their neighbours are
//! dropped, and a gap of 2^32 cycles or more that the anchors reveal is
//! placed where it happened. [`TimeModel::TwoPoint`] (and every layout
//! version 1 buffer) uses one rate per warp: the slot's own
//! `(final_globaltimer - init_globaltimer) / (final_clock64 - init_clock64)`,
//! or, for a slot whose open-to-flush span is shorter than
//! [`DecodeOptions::short_span_ns`], the device-wide median rate. The
//! globaltimer advances in coarse steps (32 ns on recent GPUs).
//! `docs/capture-format.md` ("Time") specifies all of it.
//!
//! All arithmetic is on integers (`i128` intermediates). Times are in
//! picoseconds (`i64`) relative to a per-launch origin, the earliest
//! `init_globaltimer` of any opened slot; absolute globaltimer values are
//! never put in a floating-point number.
//!
//! # Never-flushed warps
//!
//! A warp that opened but never flushed has no count and no final timers.
//! The decoder recovers the leading run of written (non-zero) entries from
//! the start of its ring, up to the first clock that steps back, placed
//! through its open and anchors (or with the device-wide rate from the open
//! timers), as long as that run is shorter than the ring (a full ring may
//! have wrapped and its order is unknown: then nothing is recovered). Either
//! way the warp is reported with [`Diagnostic::NeverFlushed`].
//!
//! # Where each step lives
//!
//! `ring.rs` walks a slot's ring and unwraps its clock; `calibrate.rs` picks
//! each slot's clock rate and maps a warp's cycles to picoseconds
//! ([`ClockRatio`]); `spans.rs` matches begins with ends. This file holds the
//! [`Decoder`] that runs them and the types it returns.

mod anchors;
mod calibrate;
mod events;
mod ring;
mod sm_anchors;
mod spans;
mod stamps;
mod warp_clock;

pub use calibrate::{
    describe_clock, ClockRatio, ClockStats, RatioSource, TimeModel, CLOCK_WINDOW_NS,
};

use crate::diagnostics::{Diagnostic, Diagnostics, WarpId};
use crate::format::buffer::{LaunchBuffer, SlotView};
use crate::format::capture::DeviceInfo;
use crate::format::layout::{Event, EventKind, SlotMeta};
use crate::format::shape::LaunchShape;
use anchors::{anchor_points, point_diagnostics, LONG_WARP_NS};
use calibrate::{calibrate, check_points, events_fit_open_to_flush, ps_since, TimerPoint};
use events::RingEvents;
use ring::{Kept, Slot};
use sm_anchors::SmPoints;
use spans::match_spans;
use warp_clock::WarpClock;

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
    /// How cycles become time. Default [`TimeModel::Anchors`] (buffers of
    /// layout version 1 have no anchors: they always use
    /// [`TimeModel::TwoPoint`]).
    pub time_model: TimeModel,
}

impl DecodeOptions {
    /// These options for a launch on `device`: the nominal clock is the
    /// device's when [`nominal_clock_khz`](Self::nominal_clock_khz) is 0.
    pub fn for_device(&self, device: &DeviceInfo) -> DecodeOptions {
        let mut d = *self;
        if d.nominal_clock_khz == 0 {
            d.nominal_clock_khz = u64::from(device.clock_khz);
        }
        d
    }
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            short_span_ns: 10_000,
            nominal_clock_khz: 0,
            time_model: TimeModel::default(),
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
    /// The 32-bit value recorded with the event (`KTRACE_B_V` and the
    /// like), if any.
    pub value: Option<u32>,
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
    /// The value recorded with the begin, if any.
    pub begin_value: Option<u32>,
    /// The value recorded with the end, if any.
    pub end_value: Option<u32>,
}

impl Span {
    /// Duration in picoseconds.
    pub fn dur_ps(&self) -> u64 {
        self.end_ps.saturating_sub(self.start_ps).max(0) as u64
    }

    /// The span's value: the begin's, or else the end's.
    pub fn value(&self) -> Option<u32> {
        self.begin_value.or(self.end_value)
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
    /// The clock rate used for this warp (with time anchors, its mean from
    /// open to flush).
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
    /// The SM clock over the warp, as its time anchors measured it.
    pub clock: ClockStats,
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
    /// How cycles became time.
    pub time_model: TimeModel,
    /// The SM clock over the launch, as the warps' time anchors measured it.
    pub clock: ClockStats,
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
    buffer: LaunchBuffer<'a>,
    /// Whether times go through the time anchors: asked for, and the
    /// buffer's layout has them.
    anchored: bool,
    origin: u64,
    device_ratio: ClockRatio,
    device_source: RatioSource,
    plans: Vec<SlotPlan>,
    diagnostics: Diagnostics,
    /// The time points of each SM, for warps that share their SM's anchors.
    sm_points: SmPoints,
}

/// One warp's map from cycles to time and what building it found.
struct TimeBase {
    clock: WarpClock,
    /// (first ring position, cycles) to add from there on: gaps of 2^32
    /// cycles or more that the anchors placed.
    shifts: Vec<(u32, i128)>,
    stats: ClockStats,
    diagnostics: Vec<Diagnostic>,
    /// The unwrapped clock of the last event walked (set by the walk).
    last_clock: Option<i128>,
    /// Mapped through its SM's points (a warp that shares them, with some
    /// between its open and flush).
    through_sm: bool,
}

impl<'a> Decoder<'a> {
    /// Reads every slot's metadata of `buffer`.
    pub fn new(buffer: LaunchBuffer<'a>, opts: &DecodeOptions) -> Self {
        let shape = buffer.shape();
        let mut diagnostics = Diagnostics::new();
        let mut opened: Vec<(u64, SlotMeta)> = Vec::new();
        for view in buffer.slots() {
            let (slot, meta) = (view.index(), *view.meta());
            if !meta.is_opened() {
                continue;
            }
            if let Some(introduced) = meta
                .open_magic_layout()
                .filter(|&v| v > buffer.layout_version())
            {
                diagnostics.push(Diagnostic::OpenMagicOfLaterLayout {
                    slot,
                    magic: meta.open_magic,
                    introduced,
                    layout_version: buffer.layout_version(),
                });
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
        let anchored = buffer.layout_version() >= 2 && opts.time_model == TimeModel::Anchors;
        let origin = opened
            .iter()
            .map(|(_, m)| m.init_globaltimer)
            .min()
            .unwrap_or(0);
        let rates = calibrate(&opened, opts, anchored, &mut diagnostics);
        let sm_points = if anchored {
            SmPoints::new(&buffer, &opened, &rates.device_ratio)
        } else {
            SmPoints::default()
        };
        let plans = opened
            .iter()
            .zip(rates.slots)
            .map(|(&(slot, _), (ratio, source))| SlotPlan {
                slot,
                ratio,
                source,
            })
            .collect();
        Decoder {
            buffer,
            anchored,
            origin,
            device_ratio: rates.device_ratio,
            device_source: rates.device_source,
            plans,
            diagnostics,
            sm_points,
        }
    }

    /// How cycles become time in this decode: the model asked for, or
    /// [`TimeModel::TwoPoint`] for a buffer without anchors.
    pub fn time_model(&self) -> TimeModel {
        if self.anchored {
            TimeModel::Anchors
        } else {
            TimeModel::TwoPoint
        }
    }

    fn slot(&self, slot: u64) -> Slot<'a> {
        Slot::new(self.buffer.slot(slot))
    }

    /// The launch shape.
    pub fn shape(&self) -> &LaunchShape {
        self.buffer.shape()
    }

    /// The layout version the buffer is read as.
    pub fn layout_version(&self) -> u32 {
        self.buffer.layout_version()
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

    /// The `i`-th opened slot as the buffer holds it, or `None` past the end.
    pub fn slot_view(&self, i: usize) -> Option<SlotView<'a>> {
        let plan = self.plans.get(i)?;
        Some(self.buffer.slot(plan.slot))
    }

    /// Ring entries of the `i`-th opened slot: its count up to the cap when
    /// it flushed, else the cap (0 past the end). What decoding it reads,
    /// without reading the ring.
    pub fn kept_entries(&self, i: usize) -> u32 {
        let Some(plan) = self.plans.get(i) else {
            return 0;
        };
        let cap = self.buffer.shape().cap();
        let meta = *self.buffer.slot(plan.slot).meta();
        if meta.is_flushed() {
            meta.count.min(cap)
        } else {
            cap
        }
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
        let slot = self.slot(plan.slot);
        let kept = slot.kept();
        let mut first = None;
        // Times never decrease in ring order: the first valid event is the
        // earliest, and the walk stops there; the map needs only the points
        // up to it.
        self.for_each_event(&slot, &kept, plan, true, |e, t| {
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
        let mut clock = ClockStats::default();
        for w in &warps {
            diagnostics.extend(w.diagnostics.iter().cloned());
            clock.merge(&w.clock);
        }
        DecodedLaunch {
            shape: *self.buffer.shape(),
            origin_globaltimer: self.origin,
            device_ratio: self.device_ratio,
            device_ratio_source: self.device_source,
            warps,
            diagnostics,
            time_model: self.time_model(),
            clock,
        }
    }

    /// Calls `f(event, time in ps)` for every event and value `slot`'s ring
    /// kept, in ring order (oldest first), until `f` returns false. A value
    /// gets the time of the entry before it.
    fn for_each_event(
        &self,
        slot: &Slot<'_>,
        kept: &Kept,
        plan: &SlotPlan,
        prefix: bool,
        mut f: impl FnMut(Event, i64) -> bool,
    ) -> TimeBase {
        let mut base = self.time_base(slot, kept, plan, prefix);
        let mut last_clock = None;
        let mut clock = base.clock.cursor();
        let mut shifts = base.shifts.iter().peekable();
        let mut extra = 0i128;
        slot.walk(kept, |i, e, cycles| {
            if slot.is_anchor(&e) {
                return true;
            }
            if slot.is_value(&e) {
                return f(e, clock.ps(cycles + extra));
            }
            while let Some(&&(from, add)) = shifts.peek() {
                if from > i {
                    break;
                }
                extra += add;
                shifts.next();
            }
            last_clock = Some(cycles);
            f(e, clock.ps(cycles + extra))
        });
        base.last_clock = last_clock;
        base
    }

    /// The map from `slot`'s cycles to time; with `prefix`, built only from
    /// the points up to two anchors past the first valid event, which places
    /// that event exactly as the whole map does (for
    /// [`Decoder::first_event_ps`]; its statistics and diagnostics are
    /// partial).
    fn time_base(&self, slot: &Slot<'_>, kept: &Kept, plan: &SlotPlan, prefix: bool) -> TimeBase {
        if !self.anchored {
            return self.time_base_of(slot, kept, plan, (Vec::new(), 0, true));
        }
        let points = anchor_points(slot, kept, prefix.then_some(2), &self.device_ratio);
        self.time_base_of(slot, kept, plan, points)
    }

    /// [`Decoder::time_base`] from the warp's time points as
    /// [`anchor_points`] gives them (points, anchors in the ring, whether
    /// the walk reached the end), or none without anchors.
    fn time_base_of(
        &self,
        slot: &Slot<'_>,
        kept: &Kept,
        plan: &SlotPlan,
        (mut points, in_stream, complete): (Vec<(u32, TimerPoint)>, u64, bool),
    ) -> TimeBase {
        let meta = &slot.meta;
        let two_point = |diagnostics| TimeBase {
            clock: WarpClock::new(self.origin, slot.anchor(kept), plan.ratio),
            shifts: Vec::new(),
            stats: ClockStats::default(),
            diagnostics,
            last_clock: None,
            through_sm: false,
        };
        if !self.anchored {
            return two_point(Vec::new());
        }
        if meta.shares_anchors() {
            // Its own anchors (KTRACE_ANCHORS_COUNT) are among its SM's
            // points; here they give the warp's clock statistics.
            check_points(&mut points, &self.device_ratio, |_, _| {});
            let own: Vec<TimerPoint> = if in_stream > 0 {
                points.into_iter().map(|(_, p)| p).collect()
            } else {
                Vec::new()
            };
            return self.shared_time_base(slot, kept, plan, &own);
        }
        let mut shifts = Vec::new();
        let check = check_points(&mut points, &self.device_ratio, |from, add| {
            shifts.push((from, add))
        });
        if !complete && points.len() < 2 {
            // Anchors rejected in the prefix: the whole map decides.
            return self.time_base(slot, kept, plan, false);
        }
        let diagnostics = point_diagnostics(meta, &check, in_stream, kept.len);
        let points: Vec<TimerPoint> = points.into_iter().map(|(_, p)| p).collect();
        if points.len() < 2 {
            // One point: the open of a warp that never flushed nor
            // anchored, placed with the device-wide rate (as in version 1);
            // or the one point the check kept of an overflowed ring (an
            // anchor, when the flush pair it hangs from was rejected).
            let mut base = two_point(diagnostics);
            if let [p] = points[..] {
                base.clock = WarpClock::piecewise(self.origin, &[p], plan.ratio, plan.ratio);
            }
            base.stats.anchors = points.len() as u64;
            return base;
        }
        TimeBase {
            clock: self.piecewise(&points),
            shifts,
            stats: ClockStats::of_points(&points),
            diagnostics,
            last_clock: None,
            through_sm: false,
        }
    }

    /// The map through `points` (at least two). Outside them (the oldest
    /// kept events of an overflowed ring, the last events of a warp that
    /// never flushed) it goes on at the nearest segment's rate, or the
    /// launch's when that segment is too short for the globaltimer's 32 ns
    /// steps.
    fn piecewise(&self, points: &[TimerPoint]) -> WarpClock {
        let rate = |a: &TimerPoint, b: &TimerPoint| {
            let ns = b.globaltimer - a.globaltimer;
            if ns >= EXTRAPOLATION_SPAN_NS {
                ClockRatio {
                    ns,
                    cycles: (b.clock - a.clock) as u64,
                }
            } else {
                self.device_ratio
            }
        };
        let n = points.len();
        let before = rate(&points[0], &points[1]);
        let after = rate(&points[n - 2], &points[n - 1]);
        WarpClock::piecewise(self.origin, points, before, after)
    }

    /// The map of a warp that shares its SM's anchors: through its SM's
    /// points from its open to its flush, or, when the SM has none between
    /// them, through its open (or flush) pair at its own rate, as a warp
    /// without anchors. Its
    /// statistics are those of its own anchors (`own`; none unless built
    /// with `KTRACE_ANCHORS_COUNT`): the SM's other points are other warps'
    /// measurements, counted in theirs.
    fn shared_time_base(
        &self,
        slot: &Slot<'_>,
        kept: &Kept,
        plan: &SlotPlan,
        own: &[TimerPoint],
    ) -> TimeBase {
        let meta = &slot.meta;
        let points = self.sm_points.for_warp(meta);
        let inner = self.sm_points.inner(meta);
        let mut diagnostics = Vec::new();
        let span = meta.final_globaltimer.saturating_sub(meta.init_globaltimer);
        if meta.is_flushed() && inner == 0 && kept.len > 0 && span >= LONG_WARP_NS {
            diagnostics.push(Diagnostic::NoAnchors {
                warp: warp_id(meta),
                span_ns: span,
            });
        }
        let clock = if inner > 0 {
            self.piecewise(points)
        } else {
            WarpClock::new(self.origin, slot.anchor(kept), plan.ratio)
        };
        TimeBase {
            clock,
            shifts: Vec::new(),
            stats: ClockStats::of_points(own),
            diagnostics,
            last_clock: None,
            through_sm: inner > 0,
        }
    }

    fn decode_slot(&self, plan: &SlotPlan) -> WarpTrace {
        let slot = self.slot(plan.slot);
        let meta = slot.meta;
        let id = warp_id(&meta);
        let cap = self.buffer.shape().cap();
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
        let RingEvents {
            events,
            walked,
            unknown,
            stray,
            base,
            kept,
        } = self.timed_events(&slot, plan);
        let base = base.expect("for_each_event returns the time base");
        let ratio_source = self.ratio_source(&meta, plan, &base);
        diagnostics.extend(base.diagnostics);
        if !flushed {
            diagnostics.push(Diagnostic::NeverFlushed {
                warp: id,
                recovered: walked,
                discarded: kept.discarded,
            });
        }
        if let Some((kind, count)) = unknown {
            diagnostics.push(Diagnostic::UnknownEventType {
                warp: id,
                kind,
                count,
            });
        }
        if stray != (0, 0) {
            diagnostics.push(Diagnostic::StrayValue {
                warp: id,
                extra: stray.0,
                other_region: stray.1,
            });
        }
        let open_ps = ps_since(self.origin, meta.init_globaltimer);
        let flush_ps = flushed.then(|| ps_since(self.origin, meta.final_globaltimer));
        if let (true, Some(first), Some(last)) = (flushed, events.first(), events.last()) {
            if !events_fit_open_to_flush(&meta, &plan.ratio, self.origin, first.t_ps, last.t_ps) {
                diagnostics.push(Diagnostic::ClockInconsistent { warp: id });
            }
        }
        if let Some(turns) = self.unseen_turns(&slot, &kept, base.last_clock) {
            diagnostics.push(Diagnostic::ClockWrapUnplaced { warp: id, turns });
        }
        let spans = match_spans(&events, id, &mut diagnostics);
        WarpTrace {
            slot: plan.slot,
            id,
            flushed,
            recorded,
            dropped,
            ratio: plan.ratio,
            ratio_source,
            open_ps,
            flush_ps,
            events,
            spans,
            diagnostics,
            clock: base.stats,
        }
    }

    /// Where a warp's cycles-to-time map came from: its SM's points (as
    /// `base` says), its own anchors (two or more, a warp that does not
    /// share its SM's), else its plan's ratio.
    fn ratio_source(&self, meta: &SlotMeta, plan: &SlotPlan, base: &TimeBase) -> RatioSource {
        if base.through_sm {
            RatioSource::SmAnchors
        } else if self.anchored && !meta.shares_anchors() && base.stats.anchors >= 2 {
            RatioSource::Anchors
        } else {
            plan.source
        }
    }

    /// Whole turns of 2^32 cycles between a flushed warp's last event and
    /// its flush that no anchor accounts for, when the two-point model is
    /// used on a ring that kept every event: two events were 2^32 cycles or
    /// more apart, and every time after the gap is early by that much.
    fn unseen_turns(&self, slot: &Slot<'_>, kept: &Kept, last_clock: Option<i128>) -> Option<u64> {
        let own_anchors = self.anchored && !slot.meta.shares_anchors();
        if own_anchors || !slot.meta.is_flushed() || !kept.starts_at_open() {
            return None;
        }
        let gap = i128::from(slot.meta.final_clock64) - last_clock?;
        let turns = gap >> 32;
        (turns > 0).then_some(turns as u64)
    }
}

/// The shortest segment whose rate the map continues with outside a warp's
/// points: 32 ns steps make it 3% off at most, over the few microseconds
/// between an anchor and the events past it.
const EXTRAPOLATION_SPAN_NS: u64 = 1_000;

/// Decodes a whole buffer at once: [`Decoder::new`] then
/// [`Decoder::decode_all`].
pub fn decode(buffer: LaunchBuffer<'_>, opts: &DecodeOptions) -> DecodedLaunch {
    Decoder::new(buffer, opts).decode_all()
}

/// Which warp a slot's metadata names.
fn warp_id(m: &SlotMeta) -> WarpId {
    WarpId {
        block: m.block_linear,
        warp: m.warp,
        sm: m.smid,
    }
}
