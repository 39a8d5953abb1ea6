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
    let mut matcher = Matcher::new(events.len());
    for e in events {
        if e.kind != EventKind::Mark {
            matcher.add(e);
        }
    }
    matcher.report_unmatched_ends(id, diags);
    matcher.drop_open_begins(id, diags);
    let mut spans = matcher.spans;
    sort_outer_first(&mut spans);
    spans
}

/// No span: the bottom of a region's stack.
const NONE: u32 = u32::MAX;
/// Region ids found in `Matcher::open` without a search.
const DIRECT: usize = 64;

/// Begins and ends matched so far. Each begin adds a span to `spans` (so
/// spans are in begin order, that is by start time) whose end is filled in
/// by the matching end. Per region, the open spans form a stack (nested and
/// repeated regions), linked through `below`.
struct Matcher {
    /// (region, top of its stack of open spans, depth)
    open: Vec<(u16, u32, u32)>,
    /// For region ids below [`DIRECT`]: the index in `open` plus one (0:
    /// not there yet).
    direct: [u8; DIRECT],
    /// (region, ends without a begin)
    unmatched_end: Vec<(u16, u32)>,
    spans: Vec<Span>,
    /// Per span, the open span of its region below it.
    below: Vec<u32>,
}

impl Matcher {
    fn new(events: usize) -> Self {
        Matcher {
            open: Vec::new(),
            direct: [0; DIRECT],
            unmatched_end: Vec::new(),
            spans: Vec::with_capacity(events / 2),
            below: Vec::with_capacity(events / 2),
        }
    }

    /// Adds a begin or an end.
    fn add(&mut self, e: &TimedEvent) {
        let idx = match self.direct.get(usize::from(e.region)) {
            Some(&i) if i > 0 => usize::from(i - 1),
            _ => self.open_index(e.region),
        };
        let o = &mut self.open[idx];
        if e.kind == EventKind::Begin {
            self.below.push(o.1);
            o.1 = self.spans.len() as u32;
            o.2 += 1;
            self.spans.push(Span {
                region: e.region,
                start_ps: e.t_ps,
                end_ps: e.t_ps,
                begin_value: e.value,
                end_value: None,
            });
        } else if o.1 != NONE {
            let top = o.1 as usize;
            self.spans[top].end_ps = e.t_ps;
            self.spans[top].end_value = e.value;
            o.1 = self.below[top];
            o.2 -= 1;
        } else {
            match self.unmatched_end.iter_mut().find(|(r, _)| *r == e.region) {
                Some(u) => u.1 += 1,
                None => self.unmatched_end.push((e.region, 1)),
            }
        }
    }

    /// The index in `open` of `region`'s stack, made when new.
    #[cold]
    fn open_index(&mut self, region: u16) -> usize {
        let i = match self.open.iter().position(|o| o.0 == region) {
            Some(i) => i,
            None => {
                self.open.push((region, NONE, 0));
                self.open.len() - 1
            }
        };
        if let (Some(d), Ok(k)) = (
            self.direct.get_mut(usize::from(region)),
            u8::try_from(i + 1),
        ) {
            *d = k;
        }
        i
    }

    /// One [`Diagnostic::UnmatchedEnd`] per region with ends without a
    /// begin, by region id.
    fn report_unmatched_ends(&mut self, id: WarpId, diags: &mut Vec<Diagnostic>) {
        self.unmatched_end.sort_unstable();
        for &(region, count) in &self.unmatched_end {
            diags.push(Diagnostic::UnmatchedEnd {
                warp: id,
                region,
                count,
            });
        }
    }

    /// Removes the spans of begins still open, with one
    /// [`Diagnostic::UnmatchedBegin`] per region that has any, by region id.
    fn drop_open_begins(&mut self, id: WarpId, diags: &mut Vec<Diagnostic>) {
        self.open.sort_unstable_by_key(|o| o.0);
        let mut keep: Vec<bool> = Vec::new();
        for &(region, top, depth) in &self.open {
            if depth > 0 {
                diags.push(Diagnostic::UnmatchedBegin {
                    warp: id,
                    region,
                    count: depth,
                });
                // Begins still open have no span.
                keep.resize(self.spans.len(), true);
                let mut t = top;
                while t != NONE {
                    keep[t as usize] = false;
                    t = self.below[t as usize];
                }
            }
        }
        if !keep.is_empty() {
            let mut k = keep.iter();
            self.spans.retain(|_| k.next().copied().unwrap_or(true));
        }
    }
}

/// Sorts spans by start time, outer spans before inner ones that start at
/// the same time (nothing to do when they already are). Spans with equal
/// keys are equal, so any sort gives the same order.
fn sort_outer_first(spans: &mut [Span]) {
    let key = |s: &Span| (s.start_ps, std::cmp::Reverse(s.end_ps), s.region);
    if !spans.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        spans.sort_by_key(key);
    }
}
