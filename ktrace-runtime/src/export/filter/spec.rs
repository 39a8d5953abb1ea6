//! What a filter is, and parsing it from text: one part per option, each
//! checked on its own, without a capture at hand.

use std::fmt;

use crate::format::ids::{IdList, IdListError};

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
    /// The kernel name patterns of a launch selection.
    Kernels,
    /// The host steps of a launch selection.
    Steps,
}

impl fmt::Display for FilterPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FilterPart::Time => "time window",
            FilterPart::Blocks => "block list",
            FilterPart::Sms => "SM list",
            FilterPart::Warps => "warp list",
            FilterPart::Regions => "region list",
            FilterPart::Kernels => "kernel pattern",
            FilterPart::Steps => "host steps",
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
    pub(crate) fn new(part: FilterPart, input: &str, problem: impl Into<String>) -> Self {
        FilterError {
            part,
            input: input.to_string(),
            problem: problem.into(),
        }
    }
}

/// Formats `ps` picoseconds as microseconds, exactly.
pub(super) fn us(ps: i64) -> String {
    let mut v = Vec::new();
    crate::export::chrome::write_us(&mut v, ps).expect("writing to memory cannot fail");
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

impl IdList {
    /// Parses `LIST`: comma-separated numbers (`7`), inclusive ranges
    /// (`0-3`) and ranges open at the top (`12-`), as [`str::parse`] does.
    /// `part` names the list in errors.
    pub fn parse(part: FilterPart, text: &str) -> Result<Self, FilterError> {
        text.parse().map_err(|e| {
            let form = "expected numbers and inclusive ranges, comma-separated, such as 0-3,7,12-";
            let problem = match e {
                IdListError::EmptyList | IdListError::EmptyItem | IdListError::NotANumber(_) => {
                    format!("{e}; {form}")
                }
                IdListError::TooLarge(_) | IdListError::Reversed { .. } => e.to_string(),
            };
            FilterError::new(part, text, problem)
        })
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
}

impl fmt::Display for RegionNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names.join(","))
    }
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
/// and regions, each optional. See the [module docs](crate::export::filter)
/// for the rules.
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
}
