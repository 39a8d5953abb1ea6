//! The device headers the crate ships ([`ktrace_build::DEVICE_HEADERS`],
//! written to `OUT_DIR/ktrace/include`) are exactly the files under
//! `include/`, `ktrace.cuh`'s parts in `include/ktrace/` among them, and
//! every header one of them includes in quotes is shipped too (or is the
//! generated region header).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ktrace_build::codegen::REGIONS_HEADER_NAME;
use ktrace_build::DEVICE_HEADERS;

/// Every file under `dir`, as paths relative to `root` with `/` separators.
fn files_under(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap();
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(parts.join("/"));
        }
    }
}

#[test]
fn every_file_under_include_is_shipped_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut on_disk = BTreeSet::new();
    files_under(&root, &root, &mut on_disk);
    let shipped: BTreeSet<String> = DEVICE_HEADERS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(shipped, on_disk);
    assert!(shipped.contains("ktrace/common.cuh"), "{shipped:?}");
    for (name, text) in DEVICE_HEADERS {
        let file = std::fs::read_to_string(root.join(name)).unwrap();
        assert_eq!(*text, file, "{name} differs from include/{name}");
    }
}

/// `#include "x"` is looked up beside the including file, then on the
/// include path (the include directory itself).
#[test]
fn quoted_includes_name_shipped_headers() {
    let shipped: BTreeSet<PathBuf> = DEVICE_HEADERS
        .iter()
        .map(|(n, _)| PathBuf::from(n))
        .chain([PathBuf::from(REGIONS_HEADER_NAME)])
        .collect();
    let mut seen = 0;
    for (name, text) in DEVICE_HEADERS {
        let dir = Path::new(name).parent().unwrap();
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("#include \"") else {
                continue;
            };
            let included = rest.split('"').next().unwrap();
            seen += 1;
            assert!(
                shipped.contains(&dir.join(included)) || shipped.contains(Path::new(included)),
                "{name} includes \"{included}\", which is not shipped"
            );
        }
    }
    assert!(seen >= 10, "only {seen} quoted includes found");
}
