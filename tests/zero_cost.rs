//! Zero cost when off: every kernel with markers, compiled untraced, gives
//! the same SASS as the same kernel with the markers deleted (addresses and
//! names aside). Also prints the register counts of both variants.
//!
//! Needs nvcc and cuobjdump (scripts/setup-cuda.sh); skipped with a message
//! when they are missing, unless `KTRACE_REQUIRE_NVCC` is set.

mod common;

use std::path::{Path, PathBuf};

use common::strip_markers;
use ktrace_build::nvcc::{Arch, NvccJob, Variant};
use ktrace_build::scan::scan_source;
use ktrace_build::test_support::cuda_tools;

/// The instructions of every function, without addresses or encodings.
fn sass(cuobjdump: &Path, cubin: &Path) -> Vec<String> {
    common::sass(cuobjdump, cubin, None)
        .into_iter()
        .map(|(_, instr)| instr)
        .collect()
}

fn compile_plain(nvcc: &Path, src: &Path, out: &Path, includes: Vec<PathBuf>) {
    let job = NvccJob {
        source: src.to_path_buf(),
        output: out.to_path_buf(),
        variant: Variant::Untraced,
        archs: vec![Arch::parse(ARCH).unwrap()],
        includes,
        defines: vec![],
        flags: vec!["-Xptxas".into(), "-v".into()],
        depfile: None,
    };
    if let Err(f) = ktrace_build::nvcc::run(nvcc, &job) {
        panic!(
            "nvcc failed on {}:\n{}\n{}",
            src.display(),
            f.output,
            f.command
        );
    }
}

const ARCH: &str = "sm_90a";

fn registers(report: &str) -> Vec<String> {
    report
        .lines()
        .filter(|l| l.contains("Used") && l.contains("registers"))
        .map(|l| l.trim().trim_start_matches("ptxas info    : ").to_string())
        .collect()
}

#[test]
fn untraced_kernels_match_marker_free_sources() {
    let Some([nvcc, cuobjdump]) = cuda_tools(["nvcc", "cuobjdump"]) else {
        return;
    };
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut sources = vec![root.join("tests/cuda/all_markers.cu")];
    sources.extend(ktrace_build::scan::find_sources(&root.join("examples/kernels")).unwrap());
    // The recorder benchmarks keep their markers in a shared header; their
    // untraced loops are compared with the marker-free one in recorder_sass.
    // A source that includes another kernel source (another recorder for
    // the same kernel) is checked through that one.
    sources.retain(|p| {
        p.extension().is_some_and(|e| e == "cu")
            && !p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("recorder_")
            && !std::fs::read_to_string(p).unwrap().lines().any(|l| {
                l.trim_start().starts_with("#include \"") && l.trim_end().ends_with(".cu\"")
            })
    });
    assert!(sources.len() >= 4, "example kernels not found: {sources:?}");
    let tmp = tempfile::tempdir().unwrap();
    for src in &sources {
        let name = src.file_stem().unwrap().to_string_lossy().to_string();
        let dir = src.parent().unwrap();
        let text = std::fs::read_to_string(src).unwrap();
        let stripped = tmp.path().join(format!("{name}.cu"));
        std::fs::write(&stripped, strip_markers(src, &text)).unwrap();

        // The builder's own traced and untraced images, as the examples get them.
        let built = ktrace_build::Build::new()
            .kernel(src)
            .include(dir)
            .arch(ARCH)
            .nvcc(&nvcc)
            .ptxas_verbose(true)
            .out_dir(tmp.path().join(&name))
            .try_compile()
            .unwrap_or_else(|e| panic!("{e}"));
        let (_, traced, marked) = built.modules[0].clone();
        let plain = tmp.path().join(format!("{name}.plain.cubin"));
        compile_plain(
            &nvcc,
            &stripped,
            &plain,
            vec![built.include_dir.clone(), dir.to_path_buf()],
        );
        let report = |v: Variant| {
            built
                .nvcc_messages
                .iter()
                .filter(|m| m.1 == v)
                .flat_map(|m| registers(&m.2))
                .collect::<Vec<_>>()
        };
        let (r_untraced, r_traced) = (report(Variant::Untraced), report(Variant::Traced));

        let a = sass(&cuobjdump, &marked);
        let b = sass(&cuobjdump, &plain);
        assert!(
            a.len() > 5,
            "{name}: no SASS read from {}",
            marked.display()
        );
        if a != b {
            let first = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            panic!(
                "{name}: untraced SASS differs from the marker-free source at instruction {first}:\n  with markers:    {:?}\n  without markers: {:?}",
                a.get(first),
                b.get(first)
            );
        }
        let t = sass(&cuobjdump, &traced);
        println!(
            "{name}: untraced = marker-free ({} instructions); traced {} instructions; registers untraced {:?}, traced {:?}",
            a.len(),
            t.len(),
            r_untraced,
            r_traced
        );
        let has_markers = !scan_source(src, &text).unwrap().is_empty();
        assert!(
            !has_markers || a != t,
            "{name}: the traced variant should differ from the untraced one"
        );
    }
}
