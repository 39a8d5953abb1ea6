//! Matching a warp's begins with their ends.

use super::{Span, TimedEvent};
use crate::diagnostics::{Diagnostic, WarpId};
use crate::format::layout::EventKind;

/// The warp's spans, by start time (outer before inner at equal starts):
/// each begin matched with the next end of its region, innermost first.
/// Ends without a begin and begins without an end are left out and
/// reported in `diags`, per region, by region id.
pub(super) fn match_spans(
    events: &[TimedEvent],
    id: WarpId,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Span> {
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
                begin_value: e.value,
                end_value: None,
            });
        } else if o.1 != NONE {
            let top = o.1 as usize;
            spans[top].end_ps = e.t_ps;
            spans[top].end_value = e.value;
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
