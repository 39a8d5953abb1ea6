//! Checking a filter against one launch (its shape, the device, the region
//! table) and applying it to the launch's warps, spans and events.

use std::borrow::Cow;

use super::spec::{us, FilterError, FilterPart, RegionNames, TraceFilter};
use crate::decode::{Span, TimedEvent, WarpTrace};
use crate::diagnostics::WarpId;
use crate::format::capture::DeviceInfo;
use crate::format::ids::IdList;
use crate::format::layout::EventKind;
use crate::format::pattern::NamePattern;
use crate::format::regions::Regions;
use crate::format::shape::LaunchShape;

/// `first-last`, or one number when they are equal.
fn span_text(first: u64, last: u64) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

impl RegionNames {
    /// The ids of `regions` that the names select, by id; fails on a name
    /// or pattern that selects none, listing the table's names.
    pub fn resolve(&self, regions: &Regions) -> Result<Vec<u16>, FilterError> {
        let mut ids = Vec::new();
        for n in self.names() {
            let pattern = NamePattern::new(n);
            let before = ids.len();
            ids.extend(
                regions
                    .iter()
                    .filter(|(_, name)| pattern.matches(name))
                    .map(|(id, _)| id),
            );
            if ids.len() == before {
                let known: Vec<&str> = regions.iter().map(|(_, name)| name).collect();
                let what = if pattern.is_glob() {
                    format!("no region name matches {n:?}")
                } else {
                    format!("no region is named {n:?}")
                };
                let problem = if known.is_empty() {
                    format!("{what}: the capture's region table is empty")
                } else {
                    format!("{what}; the capture's regions: {}", known.join(", "))
                };
                return Err(FilterError::new(
                    FilterPart::Regions,
                    &self.to_string(),
                    problem,
                ));
            }
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}

impl TraceFilter {
    /// The filter for one launch, checked against it: every block inside
    /// the grid and at least one of them traced, every warp inside a block
    /// and one of them traced, every SM inside the device (when the capture
    /// says how many it has), every region name in the table.
    /// `first_event_ps` is the launch's first event (from the launch
    /// origin, [`Decoder::first_event_of_launch`]): where the window's
    /// times start.
    ///
    /// Whether the window starts before the launch's end is known only
    /// once every warp is decoded: [`LaunchFilter::check_end`] tells.
    ///
    /// [`Decoder::first_event_of_launch`]: crate::decode::Decoder::first_event_of_launch
    pub fn for_launch(
        &self,
        shape: &LaunchShape,
        device: &DeviceInfo,
        regions: &Regions,
        first_event_ps: i64,
    ) -> Result<LaunchFilter, FilterError> {
        if let Some(b) = &self.blocks {
            check_blocks(b, shape)?;
        }
        if let Some(w) = &self.warps {
            check_warps(w, shape)?;
        }
        if let (Some(s), n) = (&self.sms, device.sm_count) {
            if n > 0 {
                check_below(s, FilterPart::Sms, u64::from(n), |v| {
                    format!(
                        "SM {v} is outside the device's {n} SMs ({})",
                        span_text(0, u64::from(n) - 1)
                    )
                })?;
            }
        }
        let region_ids = match &self.regions {
            Some(r) => Some(r.resolve(regions)?),
            None => None,
        };
        let region_keep = region_ids.as_ref().map(|ids| {
            let top = ids.last().map_or(0, |&i| usize::from(i) + 1);
            let mut keep = vec![false; top];
            for &i in ids {
                keep[usize::from(i)] = true;
            }
            keep
        });
        let window = self.time.map(|t| {
            (
                t.start_ps
                    .map_or(i64::MIN, |s| first_event_ps.saturating_add(s)),
                t.end_ps
                    .map_or(i64::MAX, |e| first_event_ps.saturating_add(e)),
            )
        });
        Ok(LaunchFilter {
            spec: self.clone(),
            t0: first_event_ps,
            window,
            region_ids: region_ids.unwrap_or_default(),
            region_keep,
        })
    }
}

/// Fails, naming the first number of `list` at or above `limit`, with
/// `outside(number)` saying why.
fn check_below(
    list: &IdList,
    part: FilterPart,
    limit: u64,
    outside: impl Fn(u32) -> String,
) -> Result<(), FilterError> {
    for r in list.ranges() {
        for v in [Some(r.first), r.last].into_iter().flatten() {
            if u64::from(v) >= limit {
                return Err(FilterError::new(part, &list.to_string(), outside(v)));
            }
        }
    }
    Ok(())
}

/// The blocks a launch traced, in words.
fn traced_blocks(shape: &LaunchShape) -> String {
    let n = u64::from(shape.blocks_traced);
    let stride = u64::from(shape.block_stride.max(1));
    match n {
        0 => "no block".into(),
        1 => "block 0 only".into(),
        _ if stride == 1 => format!("blocks {}", span_text(0, n - 1)),
        _ => format!(
            "one block in {stride}: {n} blocks, 0, {stride}, ... {}",
            (n - 1) * stride
        ),
    }
}

fn check_blocks(list: &IdList, shape: &LaunchShape) -> Result<(), FilterError> {
    let total = shape.total_blocks();
    check_below(list, FilterPart::Blocks, total, |v| {
        format!(
            "block {v} is outside the grid of {total} blocks ({})",
            span_text(0, total.saturating_sub(1))
        )
    })?;
    // Traced blocks are k * stride for k below blocks_traced.
    let stride = u64::from(shape.block_stride.max(1));
    let traced = u64::from(shape.blocks_traced);
    let any = list.ranges().iter().any(|r| {
        let k = u64::from(r.first).div_ceil(stride);
        let last = r.last.map_or(u64::MAX, u64::from);
        k < traced && k * stride <= last
    });
    if !any {
        return Err(FilterError::new(
            FilterPart::Blocks,
            &list.to_string(),
            format!(
                "none of these blocks was traced: the launch traced {}",
                traced_blocks(shape)
            ),
        ));
    }
    Ok(())
}

fn check_warps(list: &IdList, shape: &LaunchShape) -> Result<(), FilterError> {
    let per_block = shape.warps_per_block();
    check_below(list, FilterPart::Warps, u64::from(per_block), |v| {
        format!(
            "warp {v} is outside a block of {per_block} warps ({})",
            span_text(0, u64::from(per_block).saturating_sub(1))
        )
    })?;
    let traced: Vec<u32> = (0..32)
        .filter(|w| (shape.warp_mask >> w) & 1 == 1)
        .collect();
    if !traced.iter().any(|&w| list.contains(w)) {
        let names: Vec<String> = traced.iter().map(u32::to_string).collect();
        return Err(FilterError::new(
            FilterPart::Warps,
            &list.to_string(),
            format!(
                "none of these warps was traced: the launch traced warps {}",
                names.join(",")
            ),
        ));
    }
    Ok(())
}

/// A [`TraceFilter`] checked against one launch, ready to apply to its warps.
#[derive(Clone, Debug)]
pub struct LaunchFilter {
    spec: TraceFilter,
    /// The launch's first event, ps from the origin.
    t0: i64,
    /// The window in ps from the launch origin, both edges inside.
    window: Option<(i64, i64)>,
    /// The region ids kept, by id.
    region_ids: Vec<u16>,
    /// Whether region id `i` is kept, up to the highest kept id.
    region_keep: Option<Vec<bool>>,
}

impl LaunchFilter {
    /// The filter this was made from.
    pub fn spec(&self) -> &TraceFilter {
        &self.spec
    }

    /// The window in picoseconds from the launch origin (both edges
    /// inside), if there is one.
    pub fn window_ps(&self) -> Option<(i64, i64)> {
        self.window
    }

    /// The region ids kept, by id (empty when every region is kept).
    pub fn region_ids(&self) -> &[u16] {
        &self.region_ids
    }

    /// Whether the filter keeps everything.
    pub fn keeps_all(&self) -> bool {
        self.spec.keeps_all()
    }

    /// Whether the warp `id` is in the block, SM and warp lists.
    pub fn keeps_warp(&self, id: WarpId) -> bool {
        let s = &self.spec;
        s.blocks.as_ref().map_or(true, |l| l.contains(id.block))
            && s.sms
                .as_ref()
                .map_or(true, |l| l.contains(u32::from(id.sm)))
            && s.warps
                .as_ref()
                .map_or(true, |l| l.contains(u32::from(id.warp)))
    }

    fn keeps_region(&self, region: u16) -> bool {
        self.region_keep
            .as_ref()
            .map_or(true, |k| k.get(usize::from(region)).is_some_and(|&b| b))
    }

    fn in_window(&self, t: i64) -> bool {
        self.window.map_or(true, |(lo, hi)| lo <= t && t <= hi)
    }

    fn keeps_span(&self, s: &Span) -> bool {
        self.keeps_region(s.region)
            && self
                .window
                .map_or(true, |(lo, hi)| s.start_ps <= hi && s.end_ps >= lo)
    }

    /// What the filter keeps of `warp`: `None` when the warp is not in the
    /// lists, or when a time window or region names leave nothing of it;
    /// otherwise the warp, borrowed when everything is kept, or a copy with
    /// the spans and events kept (see the [module docs](crate::export::filter)).
    pub fn apply<'w>(&self, warp: &'w WarpTrace) -> Option<Cow<'w, WarpTrace>> {
        if !self.keeps_warp(warp.id) {
            return None;
        }
        if self.window.is_none() && self.region_keep.is_none() {
            return Some(Cow::Borrowed(warp));
        }
        let spans: Vec<Span> = warp
            .spans
            .iter()
            .filter(|s| self.keeps_span(s))
            .copied()
            .collect();
        let events = self.kept_events(warp, &spans);
        if spans.is_empty() && events.is_empty() {
            return None;
        }
        if spans.len() == warp.spans.len() && events.len() == warp.events.len() {
            return Some(Cow::Borrowed(warp));
        }
        Some(Cow::Owned(WarpTrace {
            slot: warp.slot,
            id: warp.id,
            flushed: warp.flushed,
            recorded: warp.recorded,
            dropped: warp.dropped,
            ratio: warp.ratio,
            ratio_source: warp.ratio_source,
            open_ps: warp.open_ps,
            flush_ps: warp.flush_ps,
            events,
            spans,
            diagnostics: warp.diagnostics.clone(),
            clock: warp.clock,
        }))
    }

    /// The events of `warp` kept: those of kept regions inside the window,
    /// and the begins and ends of the kept spans `spans` outside it.
    fn kept_events(&self, warp: &WarpTrace, spans: &[Span]) -> Vec<TimedEvent> {
        // The begins and ends outside the window that kept spans need:
        // (time, region, is an end), each to be taken once.
        let mut edges: Vec<(i64, u16, bool)> = Vec::new();
        if let Some((lo, hi)) = self.window {
            for s in spans {
                if s.start_ps < lo {
                    edges.push((s.start_ps, s.region, false));
                }
                if s.end_ps > hi {
                    edges.push((s.end_ps, s.region, true));
                }
            }
        }
        edges.sort_unstable();
        let mut taken = vec![false; edges.len()];
        let mut take = |e: &TimedEvent| -> bool {
            let key = (e.t_ps, e.region, e.kind == EventKind::End);
            let mut i = edges.partition_point(|x| *x < key);
            while i < edges.len() && edges[i] == key {
                if !taken[i] {
                    taken[i] = true;
                    return true;
                }
                i += 1;
            }
            false
        };
        warp.events
            .iter()
            .filter(|e| {
                self.keeps_region(e.region)
                    && (self.in_window(e.t_ps)
                        || (e.kind != EventKind::Mark && !edges.is_empty() && take(e)))
            })
            .copied()
            .collect()
    }

    /// Fails when the window starts after the launch's last event
    /// (`last_event_ps`, from the launch origin), saying where the launch
    /// ends. A launch without events passes.
    pub fn check_end(&self, last_event_ps: Option<i64>) -> Result<(), FilterError> {
        let (Some(w), Some(last)) = (self.spec.time, last_event_ps) else {
            return Ok(());
        };
        match w.start_ps {
            Some(start) if self.t0.saturating_add(start) > last => Err(FilterError::new(
                FilterPart::Time,
                &w.to_string(),
                format!(
                    "the window starts after the launch's end: its last event is at {} us \
                     from its first",
                    us(last.saturating_sub(self.t0))
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The filter as `otherData` and the summary record it: each part as
    /// given (null when not set), the window in ps from the launch origin,
    /// the region ids kept, what the summary covers and how many warps were
    /// kept.
    pub fn to_json(&self, warps_kept: usize) -> serde_json::Value {
        let s = &self.spec;
        let text = |l: &Option<IdList>| l.as_ref().map(ToString::to_string);
        serde_json::json!({
            "time_us": s.time.map(|t| t.to_string()),
            "window_ps_from_origin": self.window.map(|(lo, hi)| {
                serde_json::json!([
                    (lo != i64::MIN).then_some(lo),
                    (hi != i64::MAX).then_some(hi),
                ])
            }),
            "spans_crossing_the_window": "kept whole",
            "blocks": text(&s.blocks),
            "sms": text(&s.sms),
            "warps": text(&s.warps),
            "regions": s.regions.as_ref().map(|r| r.names().to_vec()),
            "region_ids": s.regions.as_ref().map(|_| self.region_ids.clone()),
            "summary": s.summary.as_str(),
            "warps_kept": warps_kept,
        })
    }
}
