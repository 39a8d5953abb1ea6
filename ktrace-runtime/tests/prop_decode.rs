//! Property tests of decoding on random valid buffers written in the device
//! layout (through `synth`, itself built on the `layout` types that the
//! layout test checks against the C header).
//!
//! Each case draws a launch shape (grid, block, capacity, warp and block
//! sampling) and, for every slot, a warp that was never opened, flushed, or
//! opened but never flushed, with 0 to 3 × cap events at strictly
//! increasing clocks. Checked:
//!
//! - the decoded events are the kept ones: per flushed warp the newest
//!   `min(count, cap)` in recording order, per never-flushed warp all of
//!   them when fewer than `cap` (else none); so the launch's event count is
//!   the sum of those;
//! - per warp, events are in time order;
//! - every complete span has begin ≤ end, and the spans are exactly the
//!   begin/end pairs a per-region stack matches;
//! - dropped events add up: sum of `dropped` = sum of `max(count - cap, 0)`;
//! - warp and block sampling put slot `s` at the right (block, warp), and
//!   the decoded warp in each slot is the one written there.

use std::collections::BTreeMap;

use ktrace_runtime::diagnostics::Diagnostic;
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
use ktrace_runtime::{
    decode::decode, decode::DecodeOptions, format::shape::LaunchShape, BlockSampling, WarpSampling,
};
use proptest::prelude::*;

/// The (block, warp) of every slot, in slot order, worked out from the
/// sampling rules of `docs/capture-format.md` without `LaunchShape`.
fn expected_slots(shape: &LaunchShape) -> Vec<(u64, u32)> {
    let total = u64::from(shape.grid[0]) * u64::from(shape.grid[1]) * u64::from(shape.grid[2]);
    let blocks: Vec<u64> = (0..total)
        .filter(|b| b % u64::from(shape.block_stride) == 0)
        .take(shape.blocks_traced as usize)
        .collect();
    let warps: Vec<u32> = (0..32).filter(|w| shape.warp_mask >> w & 1 == 1).collect();
    blocks
        .iter()
        .flat_map(|&b| warps.iter().map(move |&w| (b, w)))
        .collect()
}

#[derive(Clone, Debug)]
struct ShapeChoice {
    grid: [u32; 3],
    block: [u32; 3],
    cap: u32,
    warps: WarpSampling,
    blocks: BlockSampling,
}

impl ShapeChoice {
    fn shape(&self) -> LaunchShape {
        LaunchShape::new(self.grid, self.block, self.cap, &self.warps, self.blocks)
            .unwrap_or_else(|e| panic!("{self:?} should be a valid shape: {e}"))
    }
}

fn shape_choice() -> impl Strategy<Value = ShapeChoice> {
    (
        (1u32..=4, 1u32..=3, 1u32..=2),
        (1u32..=128, 1u32..=2),
        prop_oneof![Just(32u32), Just(64)],
        (0u8..3, any::<u32>()),
        (0u8..4, 1u32..=4, 1u32..=12),
    )
        .prop_map(|(grid, (bx, by), cap, (wk, bits), (bk, stride, max))| {
            let warps_per_block = (bx * by).div_ceil(32);
            let valid = (1u32 << warps_per_block) - 1;
            let mask = match bits & valid {
                0 => valid,
                m => m,
            };
            let warps = match wk {
                0 => WarpSampling::All,
                1 => WarpSampling::Mask(mask),
                _ => WarpSampling::List((0..32).filter(|w| mask >> w & 1 == 1).collect()),
            };
            let blocks = match bk {
                0 => BlockSampling::All,
                1 => BlockSampling::Stride(stride),
                2 => BlockSampling::First(max),
                _ => BlockSampling::StrideMax { stride, max },
            };
            ShapeChoice {
                grid: [grid.0, grid.1, grid.2],
                block: [bx, by, 1],
                cap,
                warps,
                blocks,
            }
        })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unopened,
    Flushed,
    NeverFlushed,
}

/// One slot's warp: its state, its open clock and its events as
/// (cycles since the previous event, region, kind).
#[derive(Clone, Debug)]
struct WarpPlan {
    state: State,
    init_clk: u64,
    events: Vec<(u64, u16, EventKind)>,
}

fn event() -> impl Strategy<Value = (u64, u16, EventKind)> {
    (
        // Mostly short gaps; some long ones (the 32-bit clock wraps).
        prop_oneof![9 => 1u64..2_000, 1 => 1u64..(1 << 31)],
        // Region 0 with a begin at a zero clock would be an all-zero event,
        // which ends the recovery of a never-flushed warp: use 1 and up.
        1u16..6,
        prop_oneof![
            Just(EventKind::Begin),
            Just(EventKind::End),
            Just(EventKind::Mark)
        ],
    )
}

fn warp_plan(cap: u32) -> impl Strategy<Value = WarpPlan> {
    let cap = cap as usize;
    (
        prop_oneof![
            1 => Just(State::Unopened),
            6 => Just(State::Flushed),
            2 => Just(State::NeverFlushed),
        ],
        any::<u32>(),
        prop_oneof![
            3 => prop::collection::vec(event(), 0..cap),
            1 => prop::collection::vec(event(), cap..=cap + 1),
            2 => prop::collection::vec(event(), cap + 1..=3 * cap),
        ],
    )
        .prop_map(|(state, clk, events)| WarpPlan {
            state,
            init_clk: 1_000_000 + u64::from(clk),
            events,
        })
}

fn case() -> impl Strategy<Value = (ShapeChoice, Vec<WarpPlan>)> {
    shape_choice().prop_flat_map(|c| {
        let shape = c.shape();
        let slots = shape.slot_count() as usize;
        let plans = prop::collection::vec(warp_plan(shape.cap()), slots);
        (Just(c), plans)
    })
}

/// The span count a per-region stack of begins gives for `events`.
fn matched_pairs(events: &[(u16, EventKind)]) -> usize {
    let mut open: BTreeMap<u16, usize> = BTreeMap::new();
    let mut pairs = 0;
    for &(region, kind) in events {
        match kind {
            EventKind::Begin => *open.entry(region).or_default() += 1,
            EventKind::End => {
                if let Some(n) = open.get_mut(&region).filter(|n| **n > 0) {
                    *n -= 1;
                    pairs += 1;
                }
            }
            EventKind::Mark => {}
        }
    }
    pairs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn decoding_keeps_orders_and_counts_events((choice, plans) in case()) {
        let shape = choice.shape();
        let cap = shape.cap() as usize;
        let slots = expected_slots(&shape);
        prop_assert_eq!(slots.len() as u64, shape.slot_count());

        let mut launch = SynthLaunch::new(shape);
        // Per slot: the (region, kind) sequence the decoder must keep.
        let mut expected: BTreeMap<u64, Vec<(u16, EventKind)>> = BTreeMap::new();
        let mut want_dropped = 0u64;
        for (slot, (plan, &(block, warp))) in plans.iter().zip(&slots).enumerate() {
            if plan.state == State::Unopened {
                continue;
            }
            let mut w = SynthWarp::new(block as u32, warp)
                .open_at(ktrace_runtime::synth::BASE_GT + slot as u64 * 997, plan.init_clk);
            let mut at = 0;
            for &(gap, region, kind) in &plan.events {
                at += gap;
                w = w.event(at, region, kind);
            }
            let all: Vec<(u16, EventKind)> = plan.events.iter().map(|e| (e.1, e.2)).collect();
            let kept = match plan.state {
                State::Flushed => {
                    want_dropped += all.len().saturating_sub(cap) as u64;
                    all[all.len().saturating_sub(cap)..].to_vec()
                }
                _ => {
                    w = w.never_flushed();
                    if all.len() < cap { all } else { Vec::new() }
                }
            };
            prop_assert!(launch.write(&w), "slot {} ({}, {}) not traced", slot, block, warp);
            expected.insert(slot as u64, kept);
        }

        let d = decode(launch.clone().layout(1).buffer(), &DecodeOptions::default());

        // Every opened slot, and only those, decoded at its (block, warp).
        let decoded_slots: Vec<u64> = d.warps.iter().map(|w| w.slot).collect();
        prop_assert_eq!(decoded_slots, expected.keys().copied().collect::<Vec<_>>());
        for w in &d.warps {
            let (block, warp) = slots[w.slot as usize];
            prop_assert_eq!((u64::from(w.id.block), u32::from(w.id.warp)), (block, warp));
            prop_assert_eq!(shape.slot_position(w.slot), (block, warp));
        }

        // Event count: sum over warps of what the ring kept.
        let total: usize = d.warps.iter().map(|w| w.events.len()).sum();
        let want_total: usize = expected.values().map(Vec::len).sum();
        prop_assert_eq!(total, want_total);
        let flushed_total: usize = plans
            .iter()
            .filter(|p| p.state == State::Flushed)
            .map(|p| p.events.len().min(cap))
            .sum();
        let flushed_decoded: usize =
            d.warps.iter().filter(|w| w.flushed).map(|w| w.events.len()).sum();
        prop_assert_eq!(flushed_decoded, flushed_total);

        for w in &d.warps {
            let want = &expected[&w.slot];
            // The kept events, in recording order, which is time order.
            let got: Vec<(u16, EventKind)> = w.events.iter().map(|e| (e.region, e.kind)).collect();
            prop_assert_eq!(&got, want, "slot {}", w.slot);
            prop_assert!(
                w.events.windows(2).all(|p| p[0].t_ps < p[1].t_ps),
                "slot {}: events not in strictly increasing time", w.slot
            );
            // Spans: begin <= end, as many as a stack matches.
            prop_assert!(w.spans.iter().all(|s| s.start_ps <= s.end_ps));
            prop_assert_eq!(w.spans.len(), matched_pairs(want), "slot {}", w.slot);
            if w.flushed {
                prop_assert_eq!(w.recorded as usize, plans[w.slot as usize].events.len());
                prop_assert_eq!(w.dropped, w.recorded.saturating_sub(shape.cap()) as u64);
            } else {
                prop_assert_eq!(w.dropped, 0);
            }
        }

        // Dropped events add up, per warp and in the diagnostics.
        let dropped: u64 = d.warps.iter().map(|w| w.dropped).sum();
        prop_assert_eq!(dropped, want_dropped);
        prop_assert_eq!(d.diagnostics.dropped_events(), want_dropped);

        // A valid buffer gives no diagnostics but those its plan asks for.
        for diag in d.diagnostics.items() {
            prop_assert!(
                matches!(
                    diag,
                    Diagnostic::Dropped { .. }
                        | Diagnostic::NeverFlushed { .. }
                        | Diagnostic::UnmatchedBegin { .. }
                        | Diagnostic::UnmatchedEnd { .. }
                        | Diagnostic::NoClockCalibration { .. }
                ),
                "unexpected diagnostic: {}", diag
            );
        }
    }

    #[test]
    fn sampling_maps_slots_to_blocks_and_warps(choice in shape_choice()) {
        let shape = choice.shape();
        let slots = expected_slots(&shape);
        prop_assert_eq!(slots.len() as u64, shape.slot_count());
        let total = shape.total_blocks();
        let sampled = total.div_ceil(u64::from(shape.block_stride));
        let max = match choice.blocks {
            BlockSampling::First(n) | BlockSampling::StrideMax { max: n, .. } => u64::from(n),
            _ => u64::MAX,
        };
        prop_assert_eq!(u64::from(shape.blocks_traced), sampled.min(max));
        for (slot, &(block, warp)) in slots.iter().enumerate() {
            prop_assert_eq!(shape.slot_position(slot as u64), (block, warp));
            prop_assert_eq!(shape.slot_of(block, warp), Some(slot as u64));
        }
        // Untraced (block, warp) pairs have no slot.
        for block in 0..total + 2 {
            for warp in 0..33 {
                if !slots.contains(&(block, warp)) {
                    prop_assert_eq!(shape.slot_of(block, warp), None, "({}, {})", block, warp);
                }
            }
        }
        prop_assert_eq!(
            shape.buffer_bytes(),
            Some(shape.slot_count() * (64 + 8 * u64::from(shape.cap())))
        );
    }
}
