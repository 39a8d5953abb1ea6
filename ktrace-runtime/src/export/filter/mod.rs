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
//!
//! # Where things are
//!
//! - `spec`: what a filter is and parsing it from text ([`TraceFilter`],
//!   [`TimeWindow`], [`RegionNames`], [`SummaryScope`], [`FilterPart`],
//!   [`FilterError`]); the id lists are the format layer's [`IdList`], the
//!   name patterns its `NamePattern`.
//! - `apply`: checking a filter against a launch
//!   ([`TraceFilter::for_launch`]) and applying it to warps and events
//!   ([`LaunchFilter`]).

mod apply;
mod spec;
#[cfg(test)]
mod tests;

pub use crate::format::ids::{IdList, IdListError, IdRange};
pub use apply::LaunchFilter;
pub use spec::{FilterError, FilterPart, RegionNames, SummaryScope, TimeWindow, TraceFilter};
