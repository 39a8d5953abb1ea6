//! Lists of ids: numbers and inclusive ranges, comma-separated, such as
//! `0-3,7,12-`. One grammar ([`IdList`]) for every list of blocks, SMs,
//! warps or launches: the export filter's lists and the `KTRACE_WARPS` and
//! `KTRACE_LAUNCHES` variables.

use std::fmt;
use std::str::FromStr;

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
    /// Whether `v` is in the range.
    pub fn contains(&self, v: u32) -> bool {
        v >= self.first && self.last.map_or(true, |l| v <= l)
    }
}

/// Why a list of ids does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdListError {
    /// The whole list is empty or blank.
    #[error("the list is empty")]
    EmptyList,
    /// An item between commas is empty or blank.
    #[error("an item is empty")]
    EmptyItem,
    /// A number (trimmed) is not ASCII digits; `""` for a side left empty
    /// where a number must be (`-5`).
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// A number (trimmed) is above [`u32::MAX`].
    #[error("{0} is too large (at most {max})", max = u32::MAX)]
    TooLarge(String),
    /// A range whose last number is below its first.
    #[error("the range {first}-{last} is reversed (write {last}-{first})")]
    Reversed {
        /// The item as written, trimmed (`7-4`).
        item: String,
        /// Its first number.
        first: u32,
        /// Its last number, below the first.
        last: u32,
    },
}

/// A list of numbers and inclusive ranges, such as `0-3,7,12-`, parsed
/// with [`str::parse`].
///
/// An item is a number (`7`) or two joined by the first `-` (`0-3`), the
/// second left out for a range with no top (`12-`); spaces around items
/// and numbers are dropped, and a number is ASCII digits (at most
/// [`u32::MAX`]). A caller that takes fewer forms (no open end, numbers
/// below a limit) checks the items it gets: [`IdList::items`] gives them
/// one by one, so its errors come in the order of the items too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdList {
    ranges: Vec<IdRange>,
}

impl IdList {
    /// The items of `text` one by one, each parsed or the reason it does
    /// not: a blank `text` gives one [`IdListError::EmptyList`].
    pub fn items(text: &str) -> impl Iterator<Item = Result<IdRange, IdListError>> + '_ {
        let blank = text.trim().is_empty();
        let empty = blank.then_some(Err(IdListError::EmptyList));
        let items = (!blank).then(|| text.split(',').map(parse_item));
        empty.into_iter().chain(items.into_iter().flatten())
    }

    /// The numbers and ranges, as given.
    pub fn ranges(&self) -> &[IdRange] {
        &self.ranges
    }

    /// Whether `v` is in the list.
    pub fn contains(&self, v: u32) -> bool {
        self.ranges.iter().any(|r| r.contains(v))
    }
}

impl FromStr for IdList {
    type Err = IdListError;

    /// Parses `LIST`: comma-separated numbers (`7`), inclusive ranges
    /// (`0-3`) and ranges open at the top (`12-`); fails on the first item
    /// that is none of these.
    fn from_str(text: &str) -> Result<Self, IdListError> {
        let ranges = IdList::items(text).collect::<Result<_, _>>()?;
        Ok(IdList { ranges })
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

/// One item: `N`, `A-B` or `A-`.
fn parse_item(item: &str) -> Result<IdRange, IdListError> {
    if item.trim().is_empty() {
        return Err(IdListError::EmptyItem);
    }
    let Some((a, b)) = item.split_once('-') else {
        let v = parse_id(item)?;
        return Ok(IdRange {
            first: v,
            last: Some(v),
        });
    };
    let first = parse_id(a)?;
    let last = if b.trim().is_empty() {
        None
    } else {
        Some(parse_id(b)?)
    };
    match last {
        Some(l) if l < first => Err(IdListError::Reversed {
            item: item.trim().to_string(),
            first,
            last: l,
        }),
        _ => Ok(IdRange { first, last }),
    }
}

/// One number, trimmed: ASCII digits, at most [`u32::MAX`].
fn parse_id(s: &str) -> Result<u32, IdListError> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IdListError::NotANumber(s.to_string()));
    }
    s.parse().map_err(|_| IdListError::TooLarge(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<IdList, IdListError> {
        s.parse()
    }

    #[test]
    fn lists_parse_and_print_as_given() {
        let l = parse(" 0-3, 7 ,12- ").unwrap();
        assert_eq!(l.to_string(), "0-3,7,12-");
        assert_eq!(
            l.ranges(),
            [
                IdRange {
                    first: 0,
                    last: Some(3)
                },
                IdRange {
                    first: 7,
                    last: Some(7)
                },
                IdRange {
                    first: 12,
                    last: None
                },
            ]
        );
        assert!(l.contains(u32::MAX) && l.contains(2) && !l.contains(4));
        assert_eq!(parse("4294967295").unwrap().to_string(), "4294967295");
    }

    #[test]
    fn bad_lists_say_why() {
        assert_eq!(parse(""), Err(IdListError::EmptyList));
        assert_eq!(parse(" "), Err(IdListError::EmptyList));
        assert_eq!(parse("1,,2"), Err(IdListError::EmptyItem));
        assert_eq!(parse("1, "), Err(IdListError::EmptyItem));
        assert_eq!(parse("+5"), Err(IdListError::NotANumber("+5".into())));
        assert_eq!(parse("-5"), Err(IdListError::NotANumber("".into())));
        assert_eq!(parse("1-2-3"), Err(IdListError::NotANumber("2-3".into())));
        assert_eq!(
            parse("4294967296"),
            Err(IdListError::TooLarge("4294967296".into()))
        );
        let e = parse("1, 7 - 4").unwrap_err();
        assert_eq!(
            e,
            IdListError::Reversed {
                item: "7 - 4".into(),
                first: 7,
                last: 4
            }
        );
        assert_eq!(e.to_string(), "the range 7-4 is reversed (write 4-7)");
        assert_eq!(
            parse("99999999999").unwrap_err().to_string(),
            "99999999999 is too large (at most 4294967295)"
        );
    }

    #[test]
    fn items_come_one_by_one() {
        let items: Vec<_> = IdList::items("1,x,2-").collect();
        assert_eq!(
            items,
            [
                Ok(IdRange {
                    first: 1,
                    last: Some(1)
                }),
                Err(IdListError::NotANumber("x".into())),
                Ok(IdRange {
                    first: 2,
                    last: None
                }),
            ]
        );
        assert_eq!(
            IdList::items("").collect::<Vec<_>>(),
            [Err(IdListError::EmptyList)]
        );
    }
}
