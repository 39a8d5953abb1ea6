//! Time points from stamped events (layout version 6, a warp built with
//! `KTRACE_ANCHORS_STAMP`): each event carries bits
//! [`STAMP_LOW_BIT`]..[`STAMP_LOW_BIT`] + [`STAMP_BITS`] of the
//! `%globaltimer` read right after its `%clock`, so every event is its own
//! time anchor and the ring holds no anchor entries.
//!
//! A stamp wraps every 2^18 ns (262 us). Each event's full timer reading is
//! the value with its stamp nearest to the time the clock predicts from the
//! event before it (at the device-wide rate, over a gap that is usually a
//! few hundred cycles), and never after the warp's flush. The bits below
//! the stamp are the open reading's: the timer moves in 32 ns steps, so they
//! do not change. Of those readings, one per [`ANCHOR_CYCLES_DEFAULT`]
//! cycles becomes a time point, as far apart as the default build's
//! anchors, so that 32 ns steps do not make the rate between points noisy.

use super::calibrate::{ClockRatio, TimerPair, TimerPoint};
use super::ring::{Kept, Slot};
use crate::format::layout::{ANCHOR_CYCLES_DEFAULT, STAMP_BITS, STAMP_LOW_BIT};

/// Nanoseconds after which a stamp repeats.
const PERIOD_NS: i128 = 1 << (STAMP_LOW_BIT + STAMP_BITS);

/// The unwrapping of one warp's stamps, event by event, oldest first.
pub(super) struct Stamps {
    /// The latest event's (or the chain start's) clock and full timer.
    last: TimerPoint,
    /// The timer bits below the stamp.
    low: u64,
    /// The flush's timer reading, if the warp flushed: no event is later.
    flush: Option<u64>,
    /// The clock of the last event made a time point.
    taken: Option<i128>,
    rate: ClockRatio,
}

impl Stamps {
    /// The unwrapping of `slot`'s stamps over the entries `kept` holds, at
    /// the device-wide `rate`. A ring that kept everything starts from the
    /// open pair; one that overwrote its oldest entries from its oldest
    /// kept event, whose reading is unwrapped back from the flush pair.
    pub fn new(slot: &Slot<'_>, kept: &Kept, rate: &ClockRatio) -> Self {
        let meta = &slot.meta;
        let mut stamps = Stamps {
            last: TimerPair::open(meta).into(),
            low: meta.init_globaltimer & ((1 << STAMP_LOW_BIT) - 1),
            flush: meta.is_flushed().then_some(meta.final_globaltimer),
            taken: None,
            rate: *rate,
        };
        if !kept.starts_at_open() {
            let mut stamped = Vec::new();
            slot.walk(kept, |i, _, clock| {
                if let Some(s) = slot.stamp(kept, i) {
                    stamped.push((clock, s));
                }
                true
            });
            let mut next: TimerPoint = TimerPair::flush(meta).into();
            for &(clock, s) in stamped.iter().rev() {
                next = TimerPoint {
                    clock,
                    globaltimer: stamps.nearest(&next, clock, s),
                };
            }
            stamps.last = next;
        }
        stamps
    }

    /// The reading stamped `stamp` nearest to what the rate predicts at
    /// `clock` from `from`.
    fn nearest(&self, from: &TimerPoint, clock: i128, stamp: u16) -> u64 {
        let predicted =
            i128::from(from.globaltimer) + self.rate.cycles_to_ps(clock - from.clock) / 1000;
        let base = i128::from((u64::from(stamp) << STAMP_LOW_BIT) | self.low);
        let turns = (predicted - base + PERIOD_NS / 2).div_euclid(PERIOD_NS);
        u64::try_from(base + turns * PERIOD_NS).unwrap_or(0)
    }

    /// The full reading of the event at `clock` stamped `stamp` (the next
    /// event of the walk), and the time point it gives when it is
    /// [`ANCHOR_CYCLES_DEFAULT`] cycles or more after the last one (the
    /// first always is).
    pub fn point(&mut self, clock: i128, stamp: u16) -> Option<TimerPoint> {
        let mut globaltimer = self.nearest(&self.last, clock, stamp);
        if let Some(flush) = self.flush {
            let period = PERIOD_NS as u64;
            while globaltimer > flush && globaltimer - period >= self.last.globaltimer {
                globaltimer -= period;
            }
        }
        self.last = TimerPoint { clock, globaltimer };
        let due = self
            .taken
            .map_or(true, |t| clock - t >= i128::from(ANCHOR_CYCLES_DEFAULT));
        due.then(|| {
            self.taken = Some(clock);
            self.last
        })
    }
}
