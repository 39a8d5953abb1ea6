//! Replays the fuzz corpus (`fuzz/corpus/<target>/*`) through the same code
//! paths as the cargo-fuzz targets, on stable Rust and without cargo-fuzz:
//! parse, decode and export to memory must not panic on any of them (errors
//! are fine). The harness is the fuzz crate's own `src/lib.rs`, included
//! here by path. See docs/fuzzing.md.
//!
//! `KTRACE_WRITE_SEEDS=1 cargo test -p ktrace-examples --test fuzz_corpus`
//! (re)writes the generated seed files `fuzz/corpus/<target>/seed-*`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod harness;

/// A fuzz target: its name and the function it runs on one input.
type Target = (&'static str, fn(&[u8]));

const TARGETS: &[Target] = &[
    ("capture_parse", harness::capture_parse),
    ("capture_headers", harness::capture_headers),
    ("decode", harness::decode),
    ("export", harness::export),
];

fn corpus_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("fuzz/corpus")
}

fn target_fn(name: &str) -> fn(&[u8]) {
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no fuzz target {name}"))
}

/// Runs `f` on every input, collecting the ones that panic.
fn replay(target: &str, inputs: &[(String, Vec<u8>)]) -> Vec<String> {
    let f = target_fn(target);
    inputs
        .iter()
        .filter_map(|(name, data)| {
            catch_unwind(AssertUnwindSafe(|| f(data))).err().map(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("{target}/{name}: {msg}")
            })
        })
        .collect()
}

fn read_dir(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let data = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, data)
        })
        .collect()
}

#[test]
fn corpus_replays_without_panics() {
    let root = corpus_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for dir in &dirs {
        let target = dir.file_name().unwrap_or_default().to_string_lossy();
        let inputs = read_dir(dir);
        assert!(!inputs.is_empty(), "{}: empty corpus", dir.display());
        counts.push(format!("{target}: {}", inputs.len()));
        failures.extend(replay(&target, &inputs));
    }
    let names: Vec<String> = dirs
        .iter()
        .map(|d| {
            d.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for (t, _) in TARGETS {
        assert!(names.iter().any(|n| n == t), "no corpus for target {t}");
    }
    println!("replayed {}", counts.join(", "));
    assert!(
        failures.is_empty(),
        "inputs that panic:\n{}",
        failures.join("\n")
    );
}

#[test]
fn sample_fixture_is_in_the_capture_corpus() {
    let fixture = std::fs::read(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/data/sample_v1.ktrace"),
    )
    .expect("tests/data/sample_v1.ktrace");
    let corpus = read_dir(&corpus_dir().join("capture_parse"));
    assert!(
        corpus.iter().any(|(_, d)| *d == fixture),
        "fuzz/corpus/capture_parse/ should hold a copy of tests/data/sample_v1.ktrace"
    );
    // The fixture parses and exports.
    let cap = ktrace_runtime::Capture::from_bytes(&fixture).expect("the fixture parses");
    for l in &cap.launches {
        let out = harness::export_to_memory(l, &cap.device, &cap.regions, &Default::default())
            .expect("the fixture exports");
        assert!(out.events > 0 && out.warps > 0);
        assert!(!out.chrome.is_empty() && !out.summary.is_empty());
    }
}

#[test]
fn generated_seeds_replay_and_are_in_the_corpus() {
    let seeds = harness::seeds();
    let write = std::env::var_os("KTRACE_WRITE_SEEDS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    let mut missing = Vec::new();
    for (target, name, data) in &seeds {
        let path = corpus_dir().join(target).join(name);
        if write {
            std::fs::create_dir_all(path.parent().expect("a parent"))
                .and_then(|()| std::fs::write(&path, data))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        } else if std::fs::read(&path).ok().as_deref() != Some(data.as_slice()) {
            missing.push(path.display().to_string());
        }
        failures.extend(replay(target, &[(name.clone(), data.clone())]));
    }
    assert!(
        failures.is_empty(),
        "seeds that panic:\n{}",
        failures.join("\n")
    );
    assert!(
        missing.is_empty(),
        "generated seeds missing or stale in the corpus (rewrite them with \
         KTRACE_WRITE_SEEDS=1):\n{}",
        missing.join("\n")
    );
}

#[test]
fn lying_headers_are_refused_without_allocating() {
    // Header claims of 2^32-1 launches, a 4 GiB device name, 65536 regions,
    // and a launch whose raw buffer is 2^64-1 bytes: each is an error, fast.
    let sample = ktrace_runtime::synth::sample_capture();
    let mut bytes = Vec::new();
    sample.write_to(&mut bytes).expect("writes");
    for (off, v) in [(12usize, u32::MAX), (32, u32::MAX), (32, 4096)] {
        let mut b = bytes.clone();
        b[off..off + 4].copy_from_slice(&v.to_le_bytes());
        assert!(ktrace_runtime::Capture::from_bytes(&b).is_err());
    }
}
