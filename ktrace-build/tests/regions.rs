//! Interning is deterministic and bounded.

use std::path::PathBuf;

use ktrace_build::regions::{RegionTable, MAX_REGIONS};
use ktrace_build::scan::{Marker, SourceFile};

fn file(path: &str, names: &[&str]) -> SourceFile {
    SourceFile {
        path: PathBuf::from(path),
        markers: names
            .iter()
            .enumerate()
            .map(|(i, n)| Marker {
                macro_name: "KTRACE_B",
                name: n.to_string(),
                line: i + 1,
                span: 0..0,
            })
            .collect(),
    }
}

#[test]
fn ids_follow_sorted_names_whatever_the_file_order() {
    let a = file("a.cu", &["mma", "load", "mma"]);
    let b = file("b.cu", &["epilogue", "load"]);
    let t1 = RegionTable::from_sources(&[a.clone(), b.clone()]).unwrap();
    let t2 = RegionTable::from_sources(&[b, a]).unwrap();
    let names: Vec<_> = t1
        .regions()
        .iter()
        .map(|r| (r.id, r.name.as_str()))
        .collect();
    assert_eq!(names, vec![(0, "epilogue"), (1, "load"), (2, "mma")]);
    let ids2: Vec<_> = t2
        .regions()
        .iter()
        .map(|r| (r.id, r.name.clone()))
        .collect();
    let ids1: Vec<_> = t1
        .regions()
        .iter()
        .map(|r| (r.id, r.name.clone()))
        .collect();
    assert_eq!(ids1, ids2);
    assert_eq!(t1.id("mma"), Some(2));
    assert_eq!(t1.id("nope"), None);
    assert_eq!(t1.regions()[1].first_use, "a.cu:2");
}

#[test]
fn too_many_regions_is_an_error() {
    let names: Vec<String> = (0..=MAX_REGIONS).map(|i| format!("r{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let err = RegionTable::from_sources(&[file("big.cu", &refs)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("65536 distinct region names"), "{err}");
    let ok: Vec<&str> = refs[..MAX_REGIONS].to_vec();
    let t = RegionTable::from_sources(&[file("big.cu", &ok)]).unwrap();
    assert_eq!(t.len(), MAX_REGIONS);
    assert_eq!(t.regions().last().unwrap().id, 0xfffe);
}

/// Ids are 16 bits and the device header reserves the largest,
/// `KTRACE_REGION_UNKNOWN`, for names missing from the table: so a table
/// holds at most that many regions (ids 0 to `KTRACE_REGION_UNKNOWN - 1`).
#[test]
fn max_regions_agrees_with_the_device_header() {
    let layout = ktrace_build::DEVICE_HEADERS
        .iter()
        .find(|(name, _)| *name == "ktrace_layout.h")
        .map(|(_, text)| *text)
        .unwrap();
    let value = layout
        .lines()
        .find_map(|l| l.trim().strip_prefix("#define KTRACE_REGION_UNKNOWN "))
        .expect("ktrace_layout.h defines KTRACE_REGION_UNKNOWN");
    let literal = value.split_whitespace().next().unwrap();
    let digits = literal.trim_end_matches(['u', 'U']);
    let unknown = match digits.strip_prefix("0x") {
        Some(hex) => usize::from_str_radix(hex, 16),
        None => digits.parse(),
    }
    .unwrap_or_else(|e| panic!("KTRACE_REGION_UNKNOWN is {literal}: {e}"));
    assert_eq!(unknown, MAX_REGIONS);
    assert_eq!(unknown, u16::MAX as usize);
}
