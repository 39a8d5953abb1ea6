//! Interning region names into one deterministic table.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::scan::SourceFile;

/// Largest number of regions: ids are 16 bits and `0xffff` means "unknown".
pub const MAX_REGIONS: usize = 0xffff;

/// More distinct region names than 16-bit ids, from
/// [`RegionTable::from_sources`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyRegions {
    /// How many distinct names were found.
    pub count: usize,
}

impl fmt::Display for TooManyRegions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} distinct region names found; ktrace ids are 16 bits, so at most \
             {MAX_REGIONS} regions fit; merge or remove some",
            self.count
        )
    }
}

impl std::error::Error for TooManyRegions {}

/// One region of the table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Region {
    /// The id that events carry.
    pub id: u16,
    /// The name as written in the markers.
    pub name: String,
    /// Where it first appears (`file:line`), for documentation.
    pub first_use: String,
}

/// The region table of a crate: names sorted bytewise, ids their positions.
///
/// The same set of names gives the same ids on every machine and in every
/// build, whatever the order in which files were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionTable {
    regions: Vec<Region>,
}

impl RegionTable {
    /// Interns every marker name of `files`.
    ///
    /// Fails when there are more names than 16-bit ids.
    pub fn from_sources(files: &[SourceFile]) -> Result<Self, TooManyRegions> {
        let mut first: BTreeMap<&str, (PathBuf, usize)> = BTreeMap::new();
        for f in files {
            for m in &f.markers {
                first
                    .entry(m.name.as_str())
                    .or_insert_with(|| (f.path.clone(), m.line));
            }
        }
        if first.len() > MAX_REGIONS {
            return Err(TooManyRegions { count: first.len() });
        }
        let regions = first
            .into_iter()
            .enumerate()
            .map(|(i, (name, (file, line)))| Region {
                id: i as u16,
                name: name.to_string(),
                first_use: format!("{}:{line}", file.display()),
            })
            .collect();
        Ok(Self { regions })
    }

    /// The regions in id order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The id of `name`, if the table has it.
    pub fn id(&self, name: &str) -> Option<u16> {
        self.regions
            .binary_search_by(|r| r.name.as_str().cmp(name))
            .ok()
            .map(|i| self.regions[i].id)
    }

    /// Number of regions.
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// Whether no marker was found.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }
}
