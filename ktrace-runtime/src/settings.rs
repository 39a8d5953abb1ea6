//! The environment variables that change what a traced program records
//! without a rebuild. Every variable this crate reads (`KTRACE`,
//! `KTRACE_OUT` and `KTRACE_CAPTURE` too) is read in one place here, which
//! `clippy.toml` enforces.
//!
//! Each variable has a parser that says what is wrong with a value
//! ([`ValueError`]); read from the environment, the error also names the
//! variable and the forms it takes ([`Error::Env`]). An empty value counts
//! as unset. [`Overrides::from_env`] reads them all; a
//! [`TraceConfig`](crate::session::TraceConfig) takes them over its own fields.

use std::ffi::OsString;
use std::fmt;
use std::ops::RangeInclusive;

pub use crate::error::ValueError;

use crate::error::{Error, Result};
use crate::format::ids::{IdList, IdListError};
use crate::format::shape::{BlockSampling, WarpSampling};

/// `KTRACE_CAP`: per-warp ring capacity in entries, or `auto`.
pub const ENV_CAP: &str = "KTRACE_CAP";
/// `KTRACE_WARPS`: which warps of a traced block to trace.
pub const ENV_WARPS: &str = "KTRACE_WARPS";
/// `KTRACE_BLOCKS`: which blocks of the grid to trace.
pub const ENV_BLOCKS: &str = "KTRACE_BLOCKS";
/// `KTRACE_BUDGET_MB`: the most MiB an automatically sized buffer may take.
pub const ENV_BUDGET_MB: &str = "KTRACE_BUDGET_MB";
/// `KTRACE_LAUNCHES`: which launches of a session to trace.
pub const ENV_LAUNCHES: &str = "KTRACE_LAUNCHES";

/// The forms `KTRACE_CAP` takes.
pub const CAP_FORMS: &str = "`auto`, or a power of two from 32 to 16777216 (e.g. 1024)";
/// The forms `KTRACE_WARPS` takes.
pub const WARPS_FORMS: &str = "`all`, or warp indices below 32 and ranges of them (e.g. `0,4-7`)";
/// The forms `KTRACE_BLOCKS` takes.
pub const BLOCKS_FORMS: &str =
    "`all`, `first:N`, `stride:N` or `stride:N,max:M` (N and M at least 1; e.g. `stride:16`)";
/// The forms `KTRACE_BUDGET_MB` takes.
pub const BUDGET_FORMS: &str = "a whole number of MiB, at least 1 (e.g. 1024)";
/// The forms `KTRACE_LAUNCHES` takes.
pub const LAUNCHES_FORMS: &str =
    "`all`, or launch indices and ranges of them (e.g. `3`, `0-2`, `0,5`)";

/// `KTRACE_THREADS`: the threads that export a launch (decode, summarise,
/// encode), for `ktrace` and a session's own export.
pub const ENV_THREADS: &str = "KTRACE_THREADS";
/// The forms `KTRACE_THREADS` takes.
pub const THREADS_FORMS: &str =
    "`auto` (one per core), or a whole number of threads from 1 to 1024 (e.g. 4)";

/// `KTRACE_STALLS`: sample the launches' PCs with CUPTI (stall reasons per
/// region).
pub const ENV_STALLS: &str = "KTRACE_STALLS";
/// Forms of `KTRACE_STALLS`.
pub const STALLS_FORMS: &str =
    "0 (off), 1 (one sample every 2^10 cycles per SM), or period:N with N from 5 to 31 \
     (every 2^N cycles)";
/// `KTRACE_CUPTI`: the CUPTI library to load, when it is not found.
pub const ENV_CUPTI: &str = "KTRACE_CUPTI";
/// The sampling period of `KTRACE_STALLS=1`, as a power of two of cycles.
pub const DEFAULT_STALL_PERIOD_LOG2: u32 = 10;

/// Reads environment variable `name`. Every variable this crate reads goes
/// through here.
pub(crate) fn var(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name)
}

/// Which launches of a session are traced: the `n`-th call of
/// [`TraceSession::finish_launch`](crate::session::TraceSession::finish_launch) ends
/// launch `n`, counting from 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LaunchSelection {
    /// Every launch (the default).
    #[default]
    All,
    /// The launches in these inclusive ranges; none when empty.
    Only(Vec<RangeInclusive<u32>>),
}

impl LaunchSelection {
    /// The listed launches.
    pub fn only(launches: impl IntoIterator<Item = u32>) -> Self {
        LaunchSelection::Only(launches.into_iter().map(|n| n..=n).collect())
    }

    /// Whether launch `launch` is traced.
    pub fn contains(&self, launch: u32) -> bool {
        match self {
            LaunchSelection::All => true,
            LaunchSelection::Only(ranges) => ranges.iter().any(|r| r.contains(&launch)),
        }
    }
}

impl fmt::Display for LaunchSelection {
    /// `all`, or the ranges as `KTRACE_LAUNCHES` writes them (`0-2,5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchSelection::All => f.write_str("all"),
            LaunchSelection::Only(ranges) => {
                let items: Vec<String> = ranges
                    .iter()
                    .map(|r| {
                        if r.start() == r.end() {
                            r.start().to_string()
                        } else {
                            format!("{}-{}", r.start(), r.end())
                        }
                    })
                    .collect();
                f.write_str(&items.join(","))
            }
        }
    }
}

/// What the environment sets over a [`TraceConfig`](crate::session::TraceConfig):
/// `None` where the variable is unset or empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `KTRACE_CAP`: the per-warp capacity; 0 for `auto`.
    pub cap: Option<u32>,
    /// `KTRACE_WARPS`.
    pub warps: Option<WarpSampling>,
    /// `KTRACE_BLOCKS`.
    pub blocks: Option<BlockSampling>,
    /// `KTRACE_BUDGET_MB`, in bytes.
    pub budget: Option<u64>,
    /// `KTRACE_LAUNCHES`.
    pub launches: Option<LaunchSelection>,
    /// `KTRACE_STALLS`: `Some(0)` off, else the sampling period's power of
    /// two.
    pub stalls: Option<u32>,
    /// `KTRACE_THREADS`: 0 for `auto`.
    pub threads: Option<usize>,
}

impl Overrides {
    /// The overrides in this process's environment.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(var)
    }

    /// The overrides that `get` gives for each variable name: a clear
    /// [`Error::Env`] for the first value that is not one of its forms.
    pub fn from_lookup(get: impl Fn(&str) -> Option<OsString>) -> Result<Self> {
        Ok(Overrides {
            cap: parsed(&get, ENV_CAP, CAP_FORMS, parse_cap)?,
            warps: parsed(&get, ENV_WARPS, WARPS_FORMS, parse_warps)?,
            blocks: parsed(&get, ENV_BLOCKS, BLOCKS_FORMS, parse_blocks)?,
            budget: parsed(&get, ENV_BUDGET_MB, BUDGET_FORMS, parse_budget_mb)?,
            launches: parsed(&get, ENV_LAUNCHES, LAUNCHES_FORMS, parse_launches)?,
            stalls: parsed(&get, ENV_STALLS, STALLS_FORMS, parse_stalls)?,
            threads: parsed(&get, ENV_THREADS, THREADS_FORMS, parse_threads)?,
        })
    }

    /// The names of the variables that shape the buffer (cap, warps,
    /// blocks) and are set, for error messages.
    pub fn shape_vars(&self) -> Vec<&'static str> {
        [
            (self.cap.is_some(), ENV_CAP),
            (self.warps.is_some(), ENV_WARPS),
            (self.blocks.is_some(), ENV_BLOCKS),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// Variable `name` from `get` through `parse`: `None` when unset or empty.
fn parsed<T>(
    get: &impl Fn(&str) -> Option<OsString>,
    name: &'static str,
    forms: &'static str,
    parse: fn(&str) -> Result<T, ValueError>,
) -> Result<Option<T>> {
    let Some(raw) = get(name) else {
        return Ok(None);
    };
    let value = raw
        .into_string()
        .map_err(|raw| bad(name, &raw.to_string_lossy(), ValueError::NotUtf8, forms))?;
    if value.trim().is_empty() {
        return Ok(None);
    }
    parse(value.trim())
        .map(Some)
        .map_err(|problem| bad(name, &value, problem, forms))
}

fn bad(var: &'static str, value: &str, problem: ValueError, accepted: &'static str) -> Error {
    Error::Env {
        var,
        value: value.to_string(),
        problem,
        accepted,
    }
}

fn number(s: &str) -> Result<u32, ValueError> {
    s.trim()
        .parse()
        .map_err(|_| ValueError::NotANumber(s.trim().to_string()))
}

/// `KTRACE_STALLS` alone: the sampling period's power of two, 0 when off
/// or unset.
pub fn stalls_from_env() -> Result<u32> {
    Ok(parsed(&var, ENV_STALLS, STALLS_FORMS, parse_stalls)?.unwrap_or(0))
}

/// `KTRACE_STALLS`: `0` (0: off), `1` (the default period) or `period:N`
/// (N from 5 to 31).
pub fn parse_stalls(s: &str) -> Result<u32, ValueError> {
    match s {
        "0" => Ok(0),
        "1" => Ok(DEFAULT_STALL_PERIOD_LOG2),
        _ => {
            let n = number(
                s.strip_prefix("period:")
                    .ok_or_else(|| ValueError::NoForm(s.to_string()))?,
            )?;
            if (5..=31).contains(&n) {
                Ok(n)
            } else {
                Err(ValueError::NotIn {
                    value: n,
                    first: 5,
                    last: 31,
                })
            }
        }
    }
}

/// `KTRACE_THREADS` alone: the threads asked for (0: one per core), `None`
/// when unset.
pub fn threads_from_env() -> Result<Option<usize>> {
    parsed(&var, ENV_THREADS, THREADS_FORMS, parse_threads)
}

/// `KTRACE_THREADS` (and `ktrace --threads`): `auto` (0) or a number from
/// 1 to 1024.
pub fn parse_threads(s: &str) -> Result<usize, ValueError> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(0);
    }
    match number(s)? {
        n @ 1..=1024 => Ok(n as usize),
        n => Err(ValueError::NotIn {
            value: n,
            first: 1,
            last: 1024,
        }),
    }
}

/// `KTRACE_CAP`: `auto` (0) or a power of two in range.
pub fn parse_cap(s: &str) -> Result<u32, ValueError> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(0);
    }
    let cap = number(s)?;
    crate::format::shape::cap_log2(cap)
        .map(|_| cap)
        .map_err(|_| ValueError::NotAPowerOfTwo(cap))
}

/// Comma-separated indices and inclusive ranges `A-B` (the grammar of
/// [`IdList`], without its open ends), each below `limit`.
fn parse_ranges(s: &str, limit: Option<u32>) -> Result<Vec<RangeInclusive<u32>>, ValueError> {
    IdList::items(s)
        .map(|item| {
            let r = item.map_err(|e| match e {
                IdListError::EmptyList | IdListError::EmptyItem => ValueError::EmptyItem,
                IdListError::NotANumber(n) | IdListError::TooLarge(n) => ValueError::NotANumber(n),
                IdListError::Reversed { item, .. } => ValueError::Backwards(item),
            })?;
            // `A-` has no open end here: its missing side is not a number.
            let b = r
                .last
                .ok_or_else(|| ValueError::NotANumber(String::new()))?;
            match limit {
                Some(limit) if b >= limit => Err(ValueError::NotBelow { index: b, limit }),
                _ => Ok(r.first..=b),
            }
        })
        .collect()
}

/// `KTRACE_WARPS`: `all` or a list of warp indices and ranges.
pub fn parse_warps(s: &str) -> Result<WarpSampling, ValueError> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(WarpSampling::All);
    }
    let ranges = parse_ranges(s, Some(32))?;
    Ok(WarpSampling::List(ranges.into_iter().flatten().collect()))
}

/// `KTRACE_BLOCKS`: `all`, `first:N`, `stride:N` or `stride:N,max:M`.
pub fn parse_blocks(s: &str) -> Result<BlockSampling, ValueError> {
    let positive = |v: &str| match number(v)? {
        0 => Err(ValueError::NoBlock),
        n => Ok(n),
    };
    let lower = s.to_ascii_lowercase();
    if lower == "all" {
        return Ok(BlockSampling::All);
    }
    if let Some(n) = lower.strip_prefix("first:") {
        return Ok(BlockSampling::First(positive(n)?));
    }
    let Some(rest) = lower.strip_prefix("stride:") else {
        return Err(ValueError::NoForm(s.to_string()));
    };
    match rest.split_once(',') {
        None => Ok(BlockSampling::Stride(positive(rest)?)),
        Some((stride, max)) => {
            let max = max
                .trim()
                .strip_prefix("max:")
                .ok_or_else(|| ValueError::NotMax(max.trim().to_string()))?;
            Ok(BlockSampling::StrideMax {
                stride: positive(stride)?,
                max: positive(max)?,
            })
        }
    }
}

/// `KTRACE_BUDGET_MB`: a whole number of MiB, at least 1, in bytes.
pub fn parse_budget_mb(s: &str) -> Result<u64, ValueError> {
    let mb: u64 = s
        .parse()
        .map_err(|_| ValueError::NotANumber(s.to_string()))?;
    if mb == 0 {
        return Err(ValueError::NoBudget);
    }
    mb.checked_mul(1 << 20)
        .ok_or(ValueError::BudgetTooLarge(mb))
}

/// `KTRACE_LAUNCHES`: `all` or a list of launch indices and ranges.
pub fn parse_launches(s: &str) -> Result<LaunchSelection, ValueError> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(LaunchSelection::All);
    }
    Ok(LaunchSelection::Only(parse_ranges(s, None)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::layout::{MAX_CAP, MIN_CAP};

    fn env(pairs: &[(&str, &str)]) -> Result<Overrides> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Overrides::from_lookup(|name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.into()))
    }

    #[test]
    fn every_variable_in_its_forms() {
        let o = env(&[
            ("KTRACE_CAP", "1024"),
            ("KTRACE_WARPS", "0, 4-7"),
            ("KTRACE_BLOCKS", "stride:16,max:100"),
            ("KTRACE_BUDGET_MB", "64"),
            ("KTRACE_LAUNCHES", "0-2,5"),
        ])
        .unwrap();
        assert_eq!(o.cap, Some(1024));
        assert_eq!(o.warps, Some(WarpSampling::List(vec![0, 4, 5, 6, 7])));
        assert_eq!(
            o.blocks,
            Some(BlockSampling::StrideMax {
                stride: 16,
                max: 100
            })
        );
        assert_eq!(o.budget, Some(64 << 20));
        let l = o.launches.clone().unwrap();
        assert_eq!(l.to_string(), "0-2,5");
        let traced: Vec<u32> = (0..8).filter(|&n| l.contains(n)).collect();
        assert_eq!(traced, [0, 1, 2, 5]);
        assert_eq!(
            o.shape_vars(),
            ["KTRACE_CAP", "KTRACE_WARPS", "KTRACE_BLOCKS"]
        );
    }

    #[test]
    fn other_forms_and_unset() {
        assert_eq!(env(&[]).unwrap(), Overrides::default());
        assert_eq!(env(&[("KTRACE_CAP", "  ")]).unwrap(), Overrides::default());
        let o = env(&[
            ("KTRACE_CAP", "auto"),
            ("KTRACE_WARPS", "all"),
            ("KTRACE_BLOCKS", "first:8"),
            ("KTRACE_LAUNCHES", "3"),
        ])
        .unwrap();
        assert_eq!(o.cap, Some(0));
        assert_eq!(o.warps, Some(WarpSampling::All));
        assert_eq!(o.blocks, Some(BlockSampling::First(8)));
        assert_eq!(o.launches, Some(LaunchSelection::only([3])));
        assert_eq!(parse_blocks("stride:4"), Ok(BlockSampling::Stride(4)));
        assert_eq!(parse_blocks("ALL"), Ok(BlockSampling::All));
        assert_eq!(parse_launches("all"), Ok(LaunchSelection::All));
        assert!(!LaunchSelection::Only(Vec::new()).contains(0));
    }

    #[test]
    fn bad_values_name_the_variable_and_the_forms() {
        let cases = [
            ("KTRACE_CAP", "100", "not a power of two"),
            ("KTRACE_CAP", "16", "not a power of two"),
            ("KTRACE_CAP", "big", "not a whole number"),
            ("KTRACE_WARPS", "0,40", "40 is not below 32"),
            ("KTRACE_WARPS", "7-4", "runs backwards"),
            ("KTRACE_WARPS", "1,,2", "empty item"),
            ("KTRACE_BLOCKS", "every:4", "none of the forms"),
            ("KTRACE_BLOCKS", "stride:0", "selects no block"),
            ("KTRACE_BLOCKS", "stride:4,8", "not `max:M`"),
            ("KTRACE_BUDGET_MB", "0", "holds no trace"),
            ("KTRACE_BUDGET_MB", "1.5", "not a whole number"),
            ("KTRACE_LAUNCHES", "first", "not a whole number"),
        ];
        for (var, value, problem) in cases {
            let e = env(&[(var, value)]).unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, Error::Env { .. }), "{msg}");
            assert!(
                msg.starts_with(&format!("{var}={value:?}: ")),
                "{var}: {msg}"
            );
            assert!(msg.contains(problem), "{var}={value}: {msg}");
            assert!(msg.contains("accepted: "), "{msg}");
        }
        assert!(CAP_FORMS.contains(&MIN_CAP.to_string()));
        assert!(CAP_FORMS.contains(&MAX_CAP.to_string()));
    }

    /// The message of a parser's error, as [`Error::Env`] prints it.
    fn text<T>(r: Result<T, ValueError>) -> Result<T, String> {
        r.map_err(|e| e.to_string())
    }

    #[test]
    fn index_lists_take_no_open_end_and_fail_on_their_first_bad_item() {
        assert_eq!(
            text(parse_warps("4-")),
            Err("\"\" is not a whole number".into())
        );
        assert_eq!(
            text(parse_launches("-3")),
            Err("\"\" is not a whole number".into())
        );
        assert_eq!(
            text(parse_warps("40,7-4")),
            Err("40 is not below 32".into())
        );
        assert_eq!(
            text(parse_warps("1, 7 - 4,40")),
            Err("the range 7 - 4 runs backwards".into())
        );
        assert_eq!(
            text(parse_launches("4294967296")),
            Err("\"4294967296\" is not a whole number".into())
        );
        assert_eq!(
            text(parse_launches("")),
            Err("an empty item in the list".into())
        );
        assert_eq!(
            text(parse_launches("1, ,2")),
            Err("an empty item in the list".into())
        );
        assert_eq!(
            parse_launches("0-4294967295").map(|l| l.contains(u32::MAX)),
            Ok(true)
        );
    }

    #[test]
    fn each_problem_is_a_typed_value_error() {
        assert_eq!(
            parse_warps("40"),
            Err(ValueError::NotBelow {
                index: 40,
                limit: 32
            })
        );
        assert_eq!(parse_cap("100"), Err(ValueError::NotAPowerOfTwo(100)));
        assert_eq!(parse_blocks("first:0"), Err(ValueError::NoBlock));
        assert_eq!(parse_budget_mb("0"), Err(ValueError::NoBudget));
        assert_eq!(
            parse_budget_mb("18446744073709551615"),
            Err(ValueError::BudgetTooLarge(u64::MAX))
        );
        // Read from the environment, the same problem is the `Env` error's.
        let e = env(&[("KTRACE_BLOCKS", "stride:4,8")]).unwrap_err();
        assert!(
            matches!(&e, Error::Env { problem: ValueError::NotMax(m), .. } if m == "8"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!("KTRACE_BLOCKS=\"stride:4,8\": \"8\" after the comma is not `max:M`; accepted: {BLOCKS_FORMS}")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let e = Overrides::from_lookup(|name| {
            (name == ENV_WARPS).then(|| OsString::from_vec(vec![b'0', 0xff]))
        })
        .unwrap_err();
        assert!(e.to_string().contains("not UTF-8"), "{e}");
    }

    #[test]
    fn stalls_take_on_off_or_a_period_in_range() {
        assert_eq!(parse_stalls("0"), Ok(0));
        assert_eq!(parse_stalls("1"), Ok(DEFAULT_STALL_PERIOD_LOG2));
        assert_eq!(parse_stalls("period:5"), Ok(5));
        assert_eq!(parse_stalls("period:31"), Ok(31));
        assert!(matches!(
            parse_stalls("period:4"),
            Err(ValueError::NotIn { value: 4, .. })
        ));
        assert!(matches!(parse_stalls("2"), Err(ValueError::NoForm(_))));
        let e = Overrides::from_lookup(|name| (name == ENV_STALLS).then(|| "period:40".into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("KTRACE_STALLS") && e.contains("40 is not from 5 to 31"),
            "{e}"
        );
    }
}
