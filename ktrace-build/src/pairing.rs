//! Regions whose markers cannot pair: a name that some marker begins and
//! no marker of any scanned source ends, or ends and none begins
//! (`KTRACE_B("compute") … KTRACE_E("body")`). Pure: it reads what the
//! scanner found. Only whole-build facts are reported, so a region begun in
//! one helper and ended in another file is fine; a region that pairs in
//! the sources but not at run time is the decoder's `unmatched_*`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::scan::{MarkerRole, SourceFile};

/// A region name that only begins, or only ends, in every scanned source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpairedRegion {
    /// The region's name.
    pub name: String,
    /// Whether its markers only begin it (else they only end it).
    pub begins_only: bool,
    /// Where the first of them is: file and 1-based line.
    pub at: (PathBuf, usize),
}

impl UnpairedRegion {
    /// The build's warning.
    pub fn message(&self) -> String {
        let (what, missing) = if self.begins_only {
            ("begun", "KTRACE_E")
        } else {
            ("ended", "KTRACE_B")
        };
        format!(
            "ktrace: region \"{}\" is {what} at {}:{} but no {missing}(\"{}\") is in any \
             scanned source: its markers can never pair (every such event is an unmatched \
             one in the trace); check the names",
            self.name,
            self.at.0.display(),
            self.at.1,
            self.name
        )
    }
}

/// The regions of `files` that only begin or only end, by name.
pub fn unpaired_regions(files: &[SourceFile]) -> Vec<UnpairedRegion> {
    // name -> (first begin, first end)
    type Seen = (Option<(PathBuf, usize)>, Option<(PathBuf, usize)>);
    let mut seen: BTreeMap<&str, Seen> = BTreeMap::new();
    for f in files {
        for m in &f.markers {
            // A scope pairs itself; a mark has nothing to pair.
            let begins = match m.role() {
                MarkerRole::Begin => true,
                MarkerRole::End => false,
                MarkerRole::Scope | MarkerRole::Mark => continue,
            };
            let entry = seen.entry(m.name.as_str()).or_default();
            let slot = if begins { &mut entry.0 } else { &mut entry.1 };
            slot.get_or_insert_with(|| (f.path.clone(), m.line));
        }
    }
    seen.into_iter()
        .filter_map(|(name, seen)| match seen {
            (Some(at), None) => Some((name, true, at)),
            (None, Some(at)) => Some((name, false, at)),
            _ => None,
        })
        .map(|(name, begins_only, at)| UnpairedRegion {
            name: name.to_string(),
            begins_only,
            at,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Marker;

    fn file(path: &str, markers: &[(&'static str, &str, usize)]) -> SourceFile {
        SourceFile {
            path: PathBuf::from(path),
            markers: markers
                .iter()
                .map(|&(macro_name, name, line)| Marker {
                    macro_name,
                    name: name.to_string(),
                    line,
                    span: 0..0,
                })
                .collect(),
        }
    }

    #[test]
    fn names_that_only_begin_or_only_end_are_found_across_files() {
        let files = [
            file(
                "k.cu",
                &[
                    ("KTRACE_B", "compute", 10),
                    ("KTRACE_E", "body", 20),
                    ("KTRACE_B_V", "load", 5),
                    ("KTRACE_M", "tick", 7),
                    ("KTRACE_SCOPE", "epilogue", 30),
                ],
            ),
            // The load ends in a helper of another file: it pairs.
            file("helper.cuh", &[("KTRACE_E_IF", "load", 3)]),
        ];
        let found = unpaired_regions(&files);
        assert_eq!(
            found,
            [
                UnpairedRegion {
                    name: "body".into(),
                    begins_only: false,
                    at: ("k.cu".into(), 20)
                },
                UnpairedRegion {
                    name: "compute".into(),
                    begins_only: true,
                    at: ("k.cu".into(), 10)
                },
            ]
        );
        let m = found[1].message();
        assert!(
            m.contains("\"compute\" is begun at k.cu:10") && m.contains("no KTRACE_E(\"compute\")"),
            "{m}"
        );
        assert!(unpaired_regions(&files[1..]).len() == 1);
        assert!(unpaired_regions(&[]).is_empty());
    }
}
