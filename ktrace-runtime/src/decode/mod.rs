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
//!
//! # Where each step lives
//!
//! `ring.rs` walks a slot's ring and unwraps its clock; `calibrate.rs` picks
//! each slot's clock rate and maps a warp's cycles to picoseconds
//! ([`ClockRatio`]); `spans.rs` matches begins with ends. This file holds the
//! [`Decoder`] that runs them and the types it returns.

mod calibrate;
mod ring;
mod spans;

pub use calibrate::{ClockRatio, RatioSource};

use crate::diagnostics::{Diagnostic, Diagnostics, WarpId};
use crate::error::{Error, Result};
use crate::layout::{Event, EventKind, SlotMeta};
use crate::shape::LaunchShape;
use calibrate::{calibrate, events_fit_open_to_flush, ps_since, WarpClock};
use ring::Slot;
use spans::match_spans;

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
        let mut diagnostics = Diagnostics::new();
        let mut opened: Vec<(u64, SlotMeta)> = Vec::new();
        for slot in 0..shape.slot_count() {
            let meta = Slot::new(raw, shape, slot).meta;
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
        let rates = calibrate(&opened, opts, &mut diagnostics);
        let plans = opened
            .iter()
            .zip(rates.slots)
            .map(|(&(slot, _), (ratio, source))| SlotPlan {
                slot,
                ratio,
                source,
            })
            .collect();
        Ok(Decoder {
            raw,
            shape: *shape,
            origin,
            device_ratio: rates.device_ratio,
            device_source: rates.device_source,
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
        let slot = Slot::new(self.raw, &self.shape, plan.slot);
        let mut first = None;
        // Times never decrease in ring order: the first valid event is the
        // earliest, and the walk stops there.
        self.for_each_event(&slot, plan, |e, t| {
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

    /// Calls `f(event, time in ps)` for every event `slot`'s ring kept, in
    /// ring order (oldest first), until `f` returns false.
    fn for_each_event(
        &self,
        slot: &Slot<'_>,
        plan: &SlotPlan,
        mut f: impl FnMut(Event, i64) -> bool,
    ) {
        let kept = slot.kept();
        let clock = WarpClock::new(self.origin, slot.anchor(&kept), plan.ratio);
        slot.walk(&kept, |e, cycles| f(e, clock.ps(cycles)));
    }

    /// The events `slot`'s ring kept, in time order (at equal times begin,
    /// then mark, then end).
    fn timed_events(&self, slot: &Slot<'_>, plan: &SlotPlan) -> RingEvents {
        let mut out = RingEvents {
            events: Vec::with_capacity(slot.kept().len as usize),
            walked: 0,
            unknown: None,
        };
        // Whether the events come in (time, begin-mark-end) order already.
        let mut in_order = true;
        let mut last = (i64::MIN, 0u8);
        self.for_each_event(slot, plan, |e, t| {
            out.walked += 1;
            match EventKind::from_raw(e.kind) {
                Some(kind) => {
                    let key = (t, kind.tie_rank());
                    in_order &= last <= key;
                    last = key;
                    out.events.push(TimedEvent {
                        t_ps: t,
                        region: e.region,
                        kind,
                    })
                }
                None => {
                    let u = out.unknown.get_or_insert((e.kind, 0));
                    u.1 += 1;
                }
            }
            true
        });
        // Times never decrease in ring order; only events at the same time
        // may need reordering (begin, mark, end), and usually none do.
        if !in_order {
            out.events.sort_by_key(|e| (e.t_ps, e.kind.tie_rank()));
        }
        out
    }

    fn decode_slot(&self, plan: &SlotPlan) -> WarpTrace {
        let slot = Slot::new(self.raw, &self.shape, plan.slot);
        let meta = slot.meta;
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
        let RingEvents {
            events,
            walked,
            unknown,
        } = self.timed_events(&slot, plan);
        if !flushed {
            diagnostics.push(Diagnostic::NeverFlushed {
                warp: id,
                recovered: walked,
            });
        }
        if let Some((kind, count)) = unknown {
            diagnostics.push(Diagnostic::UnknownEventType {
                warp: id,
                kind,
                count,
            });
        }
        let open_ps = ps_since(self.origin, meta.init_globaltimer);
        let flush_ps = flushed.then(|| ps_since(self.origin, meta.final_globaltimer));
        if let (true, Some(first), Some(last)) = (flushed, events.first(), events.last()) {
            if !events_fit_open_to_flush(&meta, &plan.ratio, self.origin, first.t_ps, last.t_ps) {
                diagnostics.push(Diagnostic::ClockInconsistent { warp: id });
            }
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

/// What [`Decoder::timed_events`] read from a ring.
struct RingEvents {
    /// The valid events, in time order.
    events: Vec<TimedEvent>,
    /// Events walked, valid or not.
    walked: u32,
    /// The first unknown event type seen, and how many events had one.
    unknown: Option<(u16, u32)>,
}

/// Decodes a whole buffer at once: [`Decoder::new`] then
/// [`Decoder::decode_all`].
pub fn decode(raw: &[u8], shape: &LaunchShape, opts: &DecodeOptions) -> Result<DecodedLaunch> {
    Ok(Decoder::new(raw, shape, opts)?.decode_all())
}

/// Which warp a slot's metadata names.
fn warp_id(m: &SlotMeta) -> WarpId {
    WarpId {
        block: m.block_linear,
        warp: m.warp,
        sm: m.smid,
    }
}
