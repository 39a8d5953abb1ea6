//! Windows and filters for big traces: which warps, which time window and
//! which regions an export writes.
//!
//! A [`TraceFilter`] is parsed from text, one part per option, without a
//! capture at hand: a time window in microseconds from the launch's first
//! event (`10..250.5`, either side optional), lists of blocks, SMs and warps
//! (`0-3,7,12-`: numbers and inclusive ranges, the last one open) and region
//! names (`load,wait*`, `*` matching any run of characters). Each part is
//! optional; a filter with no part keeps everything.
//!
//! [`TraceFilter::for_launch`] checks it against one launch (its shape, the
//! device, the region table) and gives a [`LaunchFilter`], which a writer
//! applies warp by warp with [`LaunchFilter::apply`]: `None` for a warp it
//! leaves out, or the warp with only the spans and events it keeps. Both the
//! Chrome writer ([`write_trace`](super::write_trace)) and any other writer
//! that goes warp by warp use it the same way:
//!
//! ```ignore
//! let filter = spec.for_launch(dec.shape(), device, regions, t0)?;
//! for warp in dec.warps() {
//!     if let Some(kept) = filter.apply(&warp) {
//!         writer.warp(&kept)?;
//!     }
//! }
//! filter.check_end(last_event_ps)?;
//! ```
//!
//! # What is kept
//!
//! - A warp is kept when its block, SM and warp index are in the lists that
//!   are given. With a time window or regions, a warp left with no span and
//!   no event is left out too.
//! - A span (a begin matched with its end) is kept when its region is
//!   named and it overlaps the window: it starts at or before the window's
//!   end and ends at or after the window's start. A span that crosses an
//!   edge of the window is kept **whole**, not clipped, so every duration in
//!   the output is a real one; its begin and end events are kept with it
//!   (for `--raw-events`), even where they lie outside the window.
//! - A mark, or a begin or end without a partner, is kept when its region
//!   is named and its time is inside the window (edges included).
//! - The warp's diagnostics, clock and metadata are kept as they are.

use std::borrow::Cow;
use std::fmt;

use crate::capture::DeviceInfo;
use crate::decode::{Span, TimedEvent, WarpTrace};
use crate::diagnostics::WarpId;
use crate::layout::EventKind;
use crate::regions::Regions;
use crate::shape::LaunchShape;

/// Which part of a filter an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterPart {
    /// The time window.
    Time,
    /// The block list.
    Blocks,
    /// The SM list.
    Sms,
    /// The warp list.
    Warps,
    /// The region names.
    Regions,
}

impl fmt::Display for FilterPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FilterPart::Time => "time window",
            FilterPart::Blocks => "block list",
            FilterPart::Sms => "SM list",
            FilterPart::Warps => "warp list",
            FilterPart::Regions => "region list",
        })
    }
}

/// A filter that cannot be parsed, or that does not fit a launch.
///
/// Displayed as `PART "INPUT": PROBLEM`, for example
/// `block list "0-9": block 9 is outside the grid of 3 blocks (0-2)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{part} {input:?}: {problem}")]
pub struct FilterError {
    /// The part of the filter.
    pub part: FilterPart,
    /// The text it was parsed from.
    pub input: String,
    /// What is wrong, in a sentence.
    pub problem: String,
}

impl FilterError {
    fn new(part: FilterPart, input: &str, problem: impl Into<String>) -> Self {
        FilterError {
            part,
            input: input.to_string(),
            problem: problem.into(),
        }
    }
}

/// Formats `ps` picoseconds as microseconds, exactly.
fn us(ps: i64) -> String {
    let mut v = Vec::new();
    super::chrome::write_us(&mut v, ps).expect("writing to memory cannot fail");
    String::from_utf8(v).expect("digits are UTF-8")
}

/// A time window in picoseconds from the launch's first event; a side left
/// open reaches the start or the end of the launch. Both edges are inside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// The start, or `None` from the launch's start.
    pub start_ps: Option<i64>,
    /// The end, or `None` to the launch's end.
    pub end_ps: Option<i64>,
}

impl TimeWindow {
    /// Parses `START..END` in microseconds from the launch's first event:
    /// `10..250.5`, `10..`, `..250.5` (`..` alone keeps every time). Each
    /// number is a plain decimal with at most six decimals (a picosecond).
    pub fn parse(text: &str) -> Result<Self, FilterError> {
        let err = |p: String| FilterError::new(FilterPart::Time, text, p);
        let Some((a, b)) = text.split_once("..") else {
            return Err(err(
                "expected START..END in microseconds from the launch's first event, \
                 either side optional (10..250.5, 10.., ..250.5)"
                    .into(),
            ));
        };
        let side = |s: &str| -> Result<Option<i64>, FilterError> {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                parse_us(s).map(Some).map_err(err)
            }
        };
        let w = TimeWindow {
            start_ps: side(a)?,
            end_ps: side(b)?,
        };
        if let (Some(s), Some(e)) = (w.start_ps, w.end_ps) {
            if e < s {
                return Err(err(format!(
                    "the window ends ({} us) before it starts ({} us)",
                    us(e),
                    us(s)
                )));
            }
        }
        Ok(w)
    }
}

impl fmt::Display for TimeWindow {
    /// `START..END` in microseconds, an open side left empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.start_ps {
            f.write_str(&us(s))?;
        }
        f.write_str("..")?;
        if let Some(e) = self.end_ps {
            f.write_str(&us(e))?;
        }
        Ok(())
    }
}

/// `s` (a decimal number of microseconds, trimmed) in picoseconds.
fn parse_us(s: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "{s:?} is not a number of microseconds (a plain decimal such as 250 or 250.5, \
             not negative)"
        )
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(bad());
    }
    if frac.len() > 6 {
        return Err(format!(
            "{s:?} has more than six decimals: times are kept to the picosecond \
             (0.000001 us)"
        ));
    }
    let too_big = || format!("{s:?} is too large a time");
    let int: i64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_big())?
    };
    let frac_ps: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().map_err(|_| bad())? * 10i64.pow(6 - frac.len() as u32)
    };
    int.checked_mul(1_000_000)
        .and_then(|p| p.checked_add(frac_ps))
        .ok_or_else(too_big)
}

/// One item of an [`IdList`]: a number (`first == last`) or an inclusive
/// range, open at the top when `last` is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRange {
    /// The first number.
    pub first: u32,
    /// The last number, or `None` for no limit.
    pub last: Option<u32>,
}

impl IdRange {
    fn contains(&self, v: u32) -> bool {
        v >= self.first && self.last.map_or(true, |l| v <= l)
    }
}

/// A list of numbers and inclusive ranges, such as `0-3,7,12-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdList {
    ranges: Vec<IdRange>,
}

impl IdList {
    /// Parses `LIST`: comma-separated numbers (`7`), inclusive ranges
    /// (`0-3`) and ranges open at the top (`12-`). `part` names the list in
    /// errors.
    pub fn parse(part: FilterPart, text: &str) -> Result<Self, FilterError> {
        let err = |p: String| FilterError::new(part, text, p);
        let form = "expected numbers and inclusive ranges, comma-separated, such as 0-3,7,12-";
        if text.trim().is_empty() {
            return Err(err(format!("the list is empty; {form}")));
        }
        let num = |s: &str| -> Result<u32, FilterError> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(format!("{s:?} is not a number; {form}")));
            }
            s.parse()
                .map_err(|_| err(format!("{s} is too large (at most {})", u32::MAX)))
        };
        let mut ranges = Vec::new();
        for item in text.split(',') {
            if item.trim().is_empty() {
                return Err(err(format!("an item is empty; {form}")));
            }
            let r = match item.split_once('-') {
                None => {
                    let v = num(item)?;
                    IdRange {
                        first: v,
                        last: Some(v),
                    }
                }
                Some((a, b)) => {
                    let first = num(a)?;
                    let last = if b.trim().is_empty() {
                        None
                    } else {
                        Some(num(b)?)
                    };
                    if let Some(l) = last.filter(|&l| l < first) {
                        return Err(err(format!(
                            "the range {first}-{l} is reversed (write {l}-{first})"
                        )));
                    }
                    IdRange { first, last }
                }
            };
            ranges.push(r);
        }
        Ok(IdList { ranges })
    }

    /// The numbers and ranges, as given.
    pub fn ranges(&self) -> &[IdRange] {
        &self.ranges
    }

    /// Whether `v` is in the list.
    pub fn contains(&self, v: u32) -> bool {
        self.ranges.iter().any(|r| r.contains(v))
    }

    /// Fails, naming the first number of the list at or above `limit`,
    /// with `outside(number)` saying why.
    fn check_below(
        &self,
        part: FilterPart,
        limit: u64,
        outside: impl Fn(u32) -> String,
    ) -> Result<(), FilterError> {
        for r in &self.ranges {
            for v in [Some(r.first), r.last].into_iter().flatten() {
                if u64::from(v) >= limit {
                    return Err(FilterError::new(part, &self.to_string(), outside(v)));
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for IdList {
    /// The list as parsed: `0-3,7,12-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match r.last {
                Some(l) if l == r.first => write!(f, "{l}")?,
                Some(l) => write!(f, "{}-{l}", r.first)?,
                None => write!(f, "{}-", r.first)?,
            }
        }
        Ok(())
    }
}

/// `first-last`, or one number when they are equal.
fn span_text(first: u64, last: u64) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// Region names, each a name of the region table or a pattern in which `*`
/// matches any run of characters (`wait*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionNames {
    names: Vec<String>,
}

impl RegionNames {
    /// Parses `NAME[,NAME...]`; spaces around each name are dropped.
    pub fn parse(text: &str) -> Result<Self, FilterError> {
        let err = |p: &str| FilterError::new(FilterPart::Regions, text, p);
        if text.trim().is_empty() {
            return Err(err(
                "the list is empty; expected region names, comma-separated (load,wait*)",
            ));
        }
        let mut names = Vec::new();
        for n in text.split(',') {
            let n = n.trim();
            if n.is_empty() {
                return Err(err(
                    "a name is empty; expected region names, comma-separated (load,wait*)",
                ));
            }
            names.push(n.to_string());
        }
        Ok(RegionNames { names })
    }

    /// The names and patterns, as given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The ids of `regions` that the names select, by id; fails on a name
    /// or pattern that selects none, listing the table's names.
    pub fn resolve(&self, regions: &Regions) -> Result<Vec<u16>, FilterError> {
        let mut ids = Vec::new();
        for n in &self.names {
            let before = ids.len();
            ids.extend(
                regions
                    .iter()
                    .filter(|(_, name)| glob_match(n, name))
                    .map(|(id, _)| id),
            );
            if ids.len() == before {
                let known: Vec<&str> = regions.iter().map(|(_, name)| name).collect();
                let what = if n.contains('*') {
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

impl fmt::Display for RegionNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names.join(","))
    }
}

/// Whether `name` matches `pattern`, in which `*` matches any run of
/// characters (none included) and every other character itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    // No `*`: the whole name.
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, middle)) = middle.split_last() else {
        return rest.is_empty();
    };
    for m in middle {
        match rest.find(m) {
            Some(i) => rest = &rest[i + m.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// What the summary beside a filtered trace covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SummaryScope {
    /// The whole launch, whatever the trace keeps (the default).
    #[default]
    Launch,
    /// Only the warps, spans and events the filter keeps; the summary's
    /// kernel time and diagnostics too.
    Kept,
}

impl SummaryScope {
    /// `"launch"` or `"kept"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryScope::Launch => "launch",
            SummaryScope::Kept => "kept",
        }
    }
}

/// What an export keeps of each launch: a time window, blocks, SMs, warps
/// and regions, each optional. See the [module docs](self) for the rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// The time window, from the launch's first event.
    pub time: Option<TimeWindow>,
    /// Linear block indices.
    pub blocks: Option<IdList>,
    /// SM ids.
    pub sms: Option<IdList>,
    /// Warp indices within their block.
    pub warps: Option<IdList>,
    /// Region names and patterns.
    pub regions: Option<RegionNames>,
    /// What the summary covers.
    pub summary: SummaryScope,
}

impl TraceFilter {
    /// Sets the time window from `START..END` ([`TimeWindow::parse`]).
    pub fn set_time(&mut self, text: &str) -> Result<(), FilterError> {
        self.time = Some(TimeWindow::parse(text)?);
        Ok(())
    }

    /// Sets the blocks from a list such as `0-3,7,12-` ([`IdList::parse`]).
    pub fn set_blocks(&mut self, text: &str) -> Result<(), FilterError> {
        self.blocks = Some(IdList::parse(FilterPart::Blocks, text)?);
        Ok(())
    }

    /// Sets the SMs from a list such as `0-3,7,12-`.
    pub fn set_sms(&mut self, text: &str) -> Result<(), FilterError> {
        self.sms = Some(IdList::parse(FilterPart::Sms, text)?);
        Ok(())
    }

    /// Sets the warps (indices within a block) from a list such as `0-3,7`.
    pub fn set_warps(&mut self, text: &str) -> Result<(), FilterError> {
        self.warps = Some(IdList::parse(FilterPart::Warps, text)?);
        Ok(())
    }

    /// Sets the regions from `NAME[,NAME...]` ([`RegionNames::parse`]).
    pub fn set_regions(&mut self, text: &str) -> Result<(), FilterError> {
        self.regions = Some(RegionNames::parse(text)?);
        Ok(())
    }

    /// Whether the filter keeps everything (no part set).
    pub fn keeps_all(&self) -> bool {
        self.time.is_none()
            && self.blocks.is_none()
            && self.sms.is_none()
            && self.warps.is_none()
            && self.regions.is_none()
    }

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
                s.check_below(FilterPart::Sms, u64::from(n), |v| {
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
    list.check_below(FilterPart::Blocks, total, |v| {
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
    list.check_below(FilterPart::Warps, u64::from(per_block), |v| {
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
    /// the spans and events kept (see the [module docs](self)).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, DecodeOptions, DecodedLaunch};
    use crate::shape::{BlockSampling, WarpSampling};
    use crate::synth::{SynthLaunch, SynthWarp};

    fn problem(r: Result<impl fmt::Debug, FilterError>) -> String {
        let e = r.expect_err("should fail");
        e.to_string()
    }

    #[test]
    fn time_windows_parse_exactly() {
        let w = TimeWindow::parse("10..250.5").unwrap();
        assert_eq!(w.start_ps, Some(10_000_000));
        assert_eq!(w.end_ps, Some(250_500_000));
        assert_eq!(w.to_string(), "10..250.5");
        let w = TimeWindow::parse("10..").unwrap();
        assert_eq!((w.start_ps, w.end_ps), (Some(10_000_000), None));
        let w = TimeWindow::parse("..0.000001").unwrap();
        assert_eq!((w.start_ps, w.end_ps), (None, Some(1)));
        assert_eq!(
            TimeWindow::parse(" .5 .. 2. ").unwrap().start_ps,
            Some(500_000)
        );
        assert_eq!(TimeWindow::parse("..").unwrap(), TimeWindow::default());
        assert_eq!(TimeWindow::parse("3..3").unwrap().end_ps, Some(3_000_000));
    }

    #[test]
    fn bad_time_windows_say_why() {
        let e = problem(TimeWindow::parse("5..2"));
        assert_eq!(
            e,
            "time window \"5..2\": the window ends (2 us) before it starts (5 us)"
        );
        assert!(problem(TimeWindow::parse("5")).contains("expected START..END"));
        assert!(problem(TimeWindow::parse("5-7")).contains("expected START..END"));
        assert!(problem(TimeWindow::parse("-1..2")).contains("\"-1\" is not a number"));
        assert!(problem(TimeWindow::parse("1e3..")).contains("not a number"));
        assert!(problem(TimeWindow::parse("x..")).contains("not a number"));
        assert!(problem(TimeWindow::parse("1..2..3")).contains("\"2..3\" is not a number"));
        assert!(problem(TimeWindow::parse("1.0000001..")).contains("more than six decimals"));
        assert!(problem(TimeWindow::parse("99999999999999999..")).contains("too large"));
    }

    #[test]
    fn id_lists_parse_and_match() {
        let l = IdList::parse(FilterPart::Blocks, "0-3, 7 ,12-").unwrap();
        assert_eq!(l.to_string(), "0-3,7,12-");
        let kept: Vec<u32> = (0..16).filter(|&v| l.contains(v)).collect();
        assert_eq!(kept, [0, 1, 2, 3, 7, 12, 13, 14, 15]);
        assert!(l.contains(u32::MAX));
        let one = IdList::parse(FilterPart::Warps, "5").unwrap();
        assert_eq!(
            one.ranges(),
            [IdRange {
                first: 5,
                last: Some(5)
            }]
        );
    }

    #[test]
    fn bad_id_lists_say_why() {
        let p = |s| problem(IdList::parse(FilterPart::Blocks, s));
        assert_eq!(
            p("5-2"),
            "block list \"5-2\": the range 5-2 is reversed (write 2-5)"
        );
        assert!(p("").contains("the list is empty"));
        assert!(p(" ").contains("the list is empty"));
        assert!(p("1,,2").contains("an item is empty"));
        assert!(p("1,").contains("an item is empty"));
        assert!(p("a").contains("\"a\" is not a number"));
        assert!(p("-5").contains("\"\" is not a number"));
        assert!(p("1-2-3").contains("\"2-3\" is not a number"));
        assert!(p("4294967296").contains("too large"));
        let e = IdList::parse(FilterPart::Sms, "x").unwrap_err();
        assert_eq!((e.part, e.input.as_str()), (FilterPart::Sms, "x"));
        assert!(e.to_string().starts_with("SM list \"x\": "), "{e}");
    }

    #[test]
    fn globs() {
        for (p, n, m) in [
            ("wait", "wait", true),
            ("wait", "wait_full", false),
            ("wait*", "wait_full", true),
            ("wait*", "wait", true),
            ("*full", "wait_full", true),
            ("*", "", true),
            ("w*t*l", "wait_full", true),
            ("w*t*l", "wait_fulx", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
            ("*_*", "load", false),
        ] {
            assert_eq!(glob_match(p, n), m, "{p} {n}");
        }
    }

    fn table() -> Regions {
        Regions::from_table(&[(0, "load"), (1, "mma"), (2, "wait_full"), (3, "wait_empty")])
    }

    #[test]
    fn region_names_resolve_to_ids() {
        let r = RegionNames::parse("mma, wait*").unwrap();
        assert_eq!(r.resolve(&table()).unwrap(), [1, 2, 3]);
        let r = RegionNames::parse("load,*").unwrap();
        assert_eq!(r.resolve(&table()).unwrap(), [0, 1, 2, 3]);
        let e = problem(RegionNames::parse("mma,sync").unwrap().resolve(&table()));
        assert_eq!(
            e,
            "region list \"mma,sync\": no region is named \"sync\"; the capture's regions: \
             load, mma, wait_full, wait_empty"
        );
        let e = problem(RegionNames::parse("x*").unwrap().resolve(&table()));
        assert!(e.contains("no region name matches \"x*\""), "{e}");
        let e = problem(RegionNames::parse("x").unwrap().resolve(&Regions::new()));
        assert!(e.ends_with("the capture's region table is empty"), "{e}");
        assert!(problem(RegionNames::parse("")).contains("the list is empty"));
        assert!(problem(RegionNames::parse("a,,b")).contains("a name is empty"));
    }

    fn shape(blocks: u32, threads: u32, warps: &WarpSampling, b: BlockSampling) -> LaunchShape {
        LaunchShape::new([blocks, 1, 1], [threads, 1, 1], 32, warps, b).unwrap()
    }

    fn device() -> DeviceInfo {
        DeviceInfo {
            sm_count: 132,
            ..DeviceInfo::default()
        }
    }

    fn check(f: &TraceFilter, s: &LaunchShape) -> Result<LaunchFilter, FilterError> {
        f.for_launch(s, &device(), &table(), 0)
    }

    #[test]
    fn lists_are_checked_against_the_launch() {
        let s = shape(3, 64, &WarpSampling::All, BlockSampling::All);
        let mut f = TraceFilter::default();
        f.set_blocks("0-9").unwrap();
        assert_eq!(
            problem(check(&f, &s)),
            "block list \"0-9\": block 9 is outside the grid of 3 blocks (0-2)"
        );
        f.set_blocks("1-").unwrap();
        assert!(check(&f, &s).is_ok());
        f.set_blocks("3-").unwrap();
        assert!(problem(check(&f, &s)).contains("block 3 is outside"));

        f = TraceFilter::default();
        f.set_warps("1,2").unwrap();
        assert_eq!(
            problem(check(&f, &s)),
            "warp list \"1,2\": warp 2 is outside a block of 2 warps (0-1)"
        );
        f.set_sms("131,132").unwrap();
        f.set_warps("1").unwrap();
        assert_eq!(
            problem(check(&f, &s)),
            "SM list \"131,132\": SM 132 is outside the device's 132 SMs (0-131)"
        );
        // A capture that does not say how many SMs: not checked.
        assert!(f
            .for_launch(&s, &DeviceInfo::default(), &table(), 0)
            .is_ok());

        // Sampled launches: a list of only untraced blocks or warps fails.
        let s = shape(
            16,
            128,
            &WarpSampling::List(vec![0, 2]),
            BlockSampling::Stride(4),
        );
        f = TraceFilter::default();
        f.set_blocks("1-3,5").unwrap();
        assert_eq!(
            problem(check(&f, &s)),
            "block list \"1-3,5\": none of these blocks was traced: the launch traced one \
             block in 4: 4 blocks, 0, 4, ... 12"
        );
        f.set_blocks("1-4").unwrap();
        assert!(check(&f, &s).is_ok());
        f.set_blocks("13-").unwrap();
        assert!(problem(check(&f, &s)).contains("none of these blocks"));
        f = TraceFilter::default();
        f.set_warps("1,3").unwrap();
        assert_eq!(
            problem(check(&f, &s)),
            "warp list \"1,3\": none of these warps was traced: the launch traced warps 0,2"
        );
        let s = shape(16, 32, &WarpSampling::All, BlockSampling::First(5));
        f = TraceFilter::default();
        f.set_blocks("7").unwrap();
        assert!(problem(check(&f, &s)).ends_with("the launch traced blocks 0-4"));
    }

    /// Two warps at 2 cycles a ns, both opened at the origin (block 0): t0
    /// is warp 0's first event at 50 ns.
    fn launch() -> (DecodedLaunch, i64) {
        let base = crate::synth::BASE_GT;
        let l = SynthLaunch::all_traced(2, 64, 64)
            .with(
                SynthWarp::new(0, 0)
                    .sm(4)
                    .open_at(base, 0)
                    .span(100, 300, 0) // 50..150 ns
                    .begin(400, 1) // 200 ns
                    .span(500, 700, 2) // 250..350 ns
                    .mark(800, 3) // 400 ns
                    .end(1000, 1) // 500 ns
                    .span(1200, 1400, 0), // 600..700 ns
            )
            .with(
                SynthWarp::new(0, 1)
                    .sm(4)
                    .open_at(base, 0)
                    .span(200, 600, 1) // 100..300 ns
                    .mark(900, 3), // 450 ns
            )
            .with(
                SynthWarp::new(1, 0)
                    .sm(7)
                    .open_at(base, 0)
                    .span(300, 500, 3), // 150..250 ns
            );
        let d = decode(l.buffer(), &DecodeOptions::default());
        let t0 = d
            .warps
            .iter()
            .filter_map(|w| w.events.first())
            .map(|e| e.t_ps)
            .min()
            .unwrap();
        (d, t0)
    }

    /// (region, start ns, end ns) of the kept spans, (kind, region, ns) of
    /// the kept events, per kept warp (block, warp).
    type Kept = Vec<((u32, u16), Vec<(u16, i64, i64)>, Vec<(char, u16, i64)>)>;

    fn kept(f: &TraceFilter) -> Kept {
        let (d, t0) = launch();
        let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
        d.warps
            .iter()
            .filter_map(|w| lf.apply(w))
            .map(|w| {
                let spans = w
                    .spans
                    .iter()
                    .map(|s| (s.region, s.start_ps / 1000, s.end_ps / 1000))
                    .collect();
                let events = w
                    .events
                    .iter()
                    .map(|e| {
                        let k = match e.kind {
                            EventKind::Begin => 'B',
                            EventKind::End => 'E',
                            EventKind::Mark => 'i',
                        };
                        (k, e.region, e.t_ps / 1000)
                    })
                    .collect();
                ((w.id.block, w.id.warp), spans, events)
            })
            .collect()
    }

    #[test]
    fn an_empty_filter_borrows_every_warp() {
        let (d, t0) = launch();
        assert_eq!(t0, 50_000);
        let lf = TraceFilter::default()
            .for_launch(&d.shape, &device(), &table(), t0)
            .unwrap();
        assert!(lf.keeps_all());
        for w in &d.warps {
            assert!(matches!(lf.apply(w), Some(Cow::Borrowed(b)) if std::ptr::eq(b, w)));
        }
        // A window over the whole launch keeps everything, borrowed too.
        let mut f = TraceFilter::default();
        f.set_time("0..").unwrap();
        let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
        assert!(d
            .warps
            .iter()
            .all(|w| matches!(lf.apply(w), Some(Cow::Borrowed(_)))));
    }

    #[test]
    fn warp_lists_keep_whole_warps() {
        let mut f = TraceFilter::default();
        f.set_blocks("0").unwrap();
        f.set_warps("1-").unwrap();
        let k = kept(&f);
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].0, (0, 1));
        assert_eq!(k[0].1, [(1, 100, 300)]);
        let mut f = TraceFilter::default();
        f.set_sms("7").unwrap();
        let k = kept(&f);
        assert_eq!(k.iter().map(|w| w.0).collect::<Vec<_>>(), [(1, 0)]);
    }

    #[test]
    fn a_window_keeps_overlapping_spans_whole_and_marks_inside() {
        // 0.2..0.35 us from t0 (50 ns): 250..400 ns from the origin.
        let mut f = TraceFilter::default();
        f.set_time("0.2..0.35").unwrap();
        let k = kept(&f);
        assert_eq!(
            k,
            [
                (
                    (0, 0),
                    // The span 200..500 crosses both edges: kept whole.
                    vec![(1, 200, 500), (2, 250, 350)],
                    vec![
                        ('B', 1, 200),
                        ('B', 2, 250),
                        ('E', 2, 350),
                        ('i', 3, 400),
                        ('E', 1, 500)
                    ]
                ),
                // Ends at 300, inside; the mark at 450 is outside.
                (
                    (0, 1),
                    vec![(1, 100, 300)],
                    vec![('B', 1, 100), ('E', 1, 300)]
                ),
                // 150..250 ends exactly at the window's start: kept.
                (
                    (1, 0),
                    vec![(3, 150, 250)],
                    vec![('B', 3, 150), ('E', 3, 250)]
                ),
            ]
        );
        // A window with nothing in it leaves every warp out.
        f.set_time("0.51..0.54").unwrap();
        let k = kept(&f);
        assert!(k.is_empty(), "{k:?}");
        // An open start.
        f.set_time("..0.05").unwrap();
        let k = kept(&f);
        assert_eq!(k.iter().map(|w| w.0).collect::<Vec<_>>(), [(0, 0), (0, 1)]);
        assert_eq!(k[0].1, [(0, 50, 150)]);
    }

    #[test]
    fn regions_keep_their_spans_and_marks() {
        let mut f = TraceFilter::default();
        f.set_regions("mma,wait_empty").unwrap();
        let k = kept(&f);
        assert_eq!(
            k,
            [
                (
                    (0, 0),
                    vec![(1, 200, 500)],
                    vec![('B', 1, 200), ('i', 3, 400), ('E', 1, 500)]
                ),
                (
                    (0, 1),
                    vec![(1, 100, 300)],
                    vec![('B', 1, 100), ('E', 1, 300), ('i', 3, 450)]
                ),
                (
                    (1, 0),
                    vec![(3, 150, 250)],
                    vec![('B', 3, 150), ('E', 3, 250)]
                ),
            ]
        );
        // With a window: only what both keep.
        f.set_time("0.3..").unwrap();
        f.set_regions("wait*").unwrap();
        let k = kept(&f);
        assert_eq!(
            k,
            [
                (
                    (0, 0),
                    vec![(2, 250, 350)],
                    vec![('B', 2, 250), ('E', 2, 350), ('i', 3, 400)]
                ),
                ((0, 1), vec![], vec![('i', 3, 450)]),
            ]
        );
    }

    #[test]
    fn unmatched_events_are_kept_by_their_time() {
        let base = crate::synth::BASE_GT;
        let l = SynthLaunch::all_traced(1, 32, 32).with(
            SynthWarp::new(0, 0)
                .open_at(base, 0)
                .end(100, 1) // 50 ns: no begin
                .span(200, 400, 0) // 100..200 ns
                .begin(600, 2), // 300 ns: no end
        );
        let d = decode(l.buffer(), &DecodeOptions::default());
        let mut f = TraceFilter::default();
        f.set_time("0.2..").unwrap(); // 250 ns from the origin
        let lf = f.for_launch(&d.shape, &device(), &table(), 50_000).unwrap();
        let w = lf.apply(&d.warps[0]).unwrap();
        assert!(w.spans.is_empty());
        assert_eq!(w.events.len(), 1);
        assert_eq!(
            (w.events[0].kind, w.events[0].t_ps),
            (EventKind::Begin, 300_000)
        );
        f.set_time("..0.1").unwrap(); // up to 150 ns
        let lf = f.for_launch(&d.shape, &device(), &table(), 50_000).unwrap();
        let w = lf.apply(&d.warps[0]).unwrap();
        let kinds: Vec<(EventKind, i64)> = w.events.iter().map(|e| (e.kind, e.t_ps)).collect();
        // The span's end outside the window comes with it.
        assert_eq!(
            kinds,
            [
                (EventKind::End, 50_000),
                (EventKind::Begin, 100_000),
                (EventKind::End, 200_000)
            ]
        );
        assert_eq!(w.diagnostics, d.warps[0].diagnostics);
    }

    #[test]
    fn a_window_past_the_end_says_where_the_launch_ends() {
        let (d, t0) = launch();
        let last = d
            .warps
            .iter()
            .filter_map(|w| w.events.last())
            .map(|e| e.t_ps)
            .max();
        assert_eq!(last, Some(700_000));
        let mut f = TraceFilter::default();
        f.set_time("0.65..").unwrap();
        let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
        assert!(lf.check_end(last).is_ok());
        f.set_time("0.650001..2").unwrap();
        let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
        assert_eq!(
            lf.check_end(last).unwrap_err().to_string(),
            "time window \"0.650001..2\": the window starts after the launch's end: its last \
             event is at 0.65 us from its first"
        );
        assert!(lf.check_end(None).is_ok());
    }

    #[test]
    fn the_record_of_a_filter() {
        let (d, t0) = launch();
        let mut f = TraceFilter::default();
        f.set_time("0.1..").unwrap();
        f.set_blocks("0").unwrap();
        f.set_regions("wait*").unwrap();
        f.summary = SummaryScope::Kept;
        let lf = f.for_launch(&d.shape, &device(), &table(), t0).unwrap();
        assert_eq!(lf.window_ps(), Some((150_000, i64::MAX)));
        assert_eq!(
            lf.to_json(2),
            serde_json::json!({
                "time_us": "0.1..",
                "window_ps_from_origin": [150_000, null],
                "spans_crossing_the_window": "kept whole",
                "blocks": "0",
                "sms": null,
                "warps": null,
                "regions": ["wait*"],
                "region_ids": [2, 3],
                "summary": "kept",
                "warps_kept": 2,
            })
        );
    }

    /// The trace events (not metadata) of a Chrome trace, as (name, pid).
    fn chrome_events(trace: &serde_json::Value) -> Vec<(String, u64)> {
        trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["pid"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    fn write(opts: &crate::ExportOptions) -> std::io::Result<(serde_json::Value, crate::Summary)> {
        let cap = crate::synth::sample_capture();
        let l = &cap.launches[0];
        let dec = crate::Decoder::new(l.buffer().unwrap(), &opts.decode_for(&cap.device));
        let mut out = Vec::new();
        let written = crate::write_trace(
            &dec,
            dec.warps(),
            &cap.device,
            &cap.regions,
            opts,
            std::path::Path::new("t.json"),
            &mut out,
        )?;
        Ok((serde_json::from_slice(&out).unwrap(), written.summary))
    }

    #[test]
    fn write_trace_writes_what_the_filter_keeps() {
        let (whole, whole_summary) = write(&crate::ExportOptions::default()).unwrap();
        assert!(whole["otherData"].get("filter").is_none());
        let mut f = TraceFilter::default();
        f.set_blocks("1").unwrap();
        f.set_regions("mma").unwrap();
        let mut opts = crate::ExportOptions {
            filter: Some(f),
            ..crate::ExportOptions::default()
        };
        let (t, summary) = write(&opts).unwrap();
        // Block 1's warp 0 has 16 mma spans left in its ring of 32
        // entries; its warp 1 only a load span.
        let events = chrome_events(&t);
        assert_eq!(events, vec![("mma".to_string(), 1); 16]);
        let filter = &t["otherData"]["filter"];
        assert_eq!(filter["blocks"], "1");
        assert_eq!(filter["regions"], serde_json::json!(["mma"]));
        assert_eq!(filter["region_ids"], serde_json::json!([1]));
        assert_eq!(filter["warps_kept"], 1);
        assert_eq!(filter["summary"], "launch");
        assert_eq!(t["otherData"]["events"], 16);
        assert_eq!(t["otherData"]["warps"], 5);
        // The summary still covers the whole launch.
        assert_eq!(summary, whole_summary);
        // ... unless asked to cover what was kept.
        opts.filter.as_mut().unwrap().summary = SummaryScope::Kept;
        let (t, kept) = write(&opts).unwrap();
        assert_eq!(chrome_events(&t).len(), 16);
        let regions: Vec<(&str, u64)> = kept
            .regions
            .iter()
            .map(|r| (r.name.as_str(), r.count))
            .collect();
        assert_eq!(regions, [("mma", 16)]);
        let mma = whole_summary
            .regions
            .iter()
            .find(|r| r.name == "mma")
            .unwrap();
        assert!(mma.count > 16, "{}", mma.count);
        assert_eq!(kept.filter.as_ref().unwrap()["summary"], "kept");
        assert!(whole_summary.filter.is_none());
        // The same through summarize_launch.
        let cap = crate::synth::sample_capture();
        let (again, _) =
            super::super::summarize_launch(&cap.launches[0], &cap.device, &cap.regions, &opts)
                .unwrap();
        assert_eq!(again.regions, kept.regions);
    }

    #[test]
    fn write_trace_with_a_window() {
        // The window's rule applied to the unfiltered file gives the
        // filtered file's events, exactly.
        let (whole, _) = write(&crate::ExportOptions::default()).unwrap();
        let mut f = TraceFilter::default();
        f.set_time("1.1..3.21").unwrap();
        let opts = crate::ExportOptions {
            filter: Some(f),
            ..crate::ExportOptions::default()
        };
        let (t, _) = write(&opts).unwrap();
        let ps = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e6).round() as i64;
        let (lo, hi) = (1_100_000, 3_210_000);
        let events = |t: &serde_json::Value| -> Vec<serde_json::Value> {
            t["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["ph"] != "M")
                .cloned()
                .collect()
        };
        let expected: Vec<serde_json::Value> = events(&whole)
            .into_iter()
            .filter(|e| match e["ph"].as_str().unwrap() {
                "X" => ps(&e["ts"]) <= hi && ps(&e["ts"]) + ps(&e["dur"]) >= lo,
                _ => (lo..=hi).contains(&ps(&e["ts"])),
            })
            .collect();
        let got = events(&t);
        assert_eq!(got, expected);
        assert!(!got.is_empty() && got.len() < events(&whole).len());
        // Spans crossing an edge are kept whole: block 1's load span
        // (1.01..1.11 us) and an mma span (3.2..3.226 us).
        assert!(got
            .iter()
            .any(|e| ps(&e["ts"]) < lo || ps(&e["ts"]) + ps(&e["dur"]) > hi));
        // Block 0 warp 1 ends at 0.66 us: its thread is left out.
        let threads: Vec<(u64, u64)> = t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
            .collect();
        assert_eq!(threads, [(0, 0), (1, 0), (1, 1), (2, 0)]);
        assert_eq!(t["otherData"]["filter"]["warps_kept"], 4);
    }

    #[test]
    fn write_trace_fails_on_a_window_past_the_end() {
        let mut f = TraceFilter::default();
        f.set_time("100..").unwrap();
        let opts = crate::ExportOptions {
            filter: Some(f),
            ..crate::ExportOptions::default()
        };
        let e = write(&opts).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "time window \"100..\": the window starts after the launch's end: its last \
             event is at 4.834 us from its first"
        );
        let inner = e.get_ref().unwrap().downcast_ref::<FilterError>().unwrap();
        assert_eq!(inner.part, FilterPart::Time);
    }

    #[test]
    fn export_launch_writes_nothing_for_a_filter_that_does_not_fit() {
        let cap = crate::synth::sample_capture();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        for (set, needle) in [
            (
                (|f: &mut TraceFilter| f.set_time("100..")) as fn(&mut TraceFilter) -> _,
                "its last event is at 4.834 us from its first",
            ),
            (
                |f| f.set_blocks("3"),
                "block 3 is outside the grid of 3 blocks (0-2)",
            ),
            (
                |f| f.set_regions("nope"),
                "the capture's regions: load, mma, tick",
            ),
        ] {
            let mut f = TraceFilter::default();
            set(&mut f).unwrap();
            let opts = crate::ExportOptions {
                filter: Some(f),
                ..crate::ExportOptions::default()
            };
            let e = crate::export_launch(&cap.launches[0], &cap.device, &cap.regions, &path, &opts)
                .unwrap_err();
            assert!(matches!(e, crate::Error::Config(_)), "{e}");
            assert!(e.to_string().contains(needle), "{e}");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }
}
