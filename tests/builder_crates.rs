//! The two example crates whose kernels another builder compiles
//! (`examples/builders/cudaforge`, `examples/builders/bindgen-cuda`, through
//! `ktrace_build::Build::generate`): each builds as a crate of its own; its
//! untraced PTX gives the same SASS as its kernel with the markers deleted,
//! compiled the same way, and its traced PTX records; its binary runs (on a
//! GPU: results checked) or stops with the clear no-driver message.
//!
//! Needs nvcc, ptxas and cuobjdump (scripts/setup-cuda.sh) and the crates'
//! dependencies from crates.io; skipped with a message without the tools,
//! unless `KTRACE_REQUIRE_NVCC` is set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::strip_markers;
use ktrace_build::test_support::cuda_tools;

/// What `cargo build` of one example crate gave.
struct Built {
    /// The build script's `OUT_DIR`.
    out_dir: PathBuf,
    /// The crate's binary.
    binary: PathBuf,
}

/// Builds the crate at `examples/builders/NAME` in `target/builder-crates`,
/// with `nvcc`'s directory first on `PATH` and its toolkit as `CUDA_PATH`
/// (bindgen_cuda looks there for the headers).
fn cargo_build(name: &str, nvcc: &Path) -> Built {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let dir = root.join("examples/builders").join(name);
    let bin_dir = nvcc.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--message-format=json-render-diagnostics"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", root.join("target/builder-crates"))
        .env("PATH", path)
        .env("CUDA_PATH", bin_dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build of {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut out_dir, mut binary) = (None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let ours = m["package_id"]
            .as_str()
            .is_some_and(|p| p.contains("examples/builders/"));
        match m["reason"].as_str() {
            Some("build-script-executed") if ours => {
                out_dir = m["out_dir"].as_str().map(PathBuf::from);
            }
            Some("compiler-artifact") if ours => {
                binary = binary.or(m["executable"].as_str().map(PathBuf::from));
            }
            _ => {}
        }
    }
    Built {
        out_dir: out_dir.unwrap_or_else(|| panic!("{name}: no build script output reported")),
        binary: binary.unwrap_or_else(|| panic!("{name}: no binary reported")),
    }
}

/// The `.target` of a PTX file (`sm_90a`).
fn ptx_target(ptx: &Path) -> String {
    std::fs::read_to_string(ptx)
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target ").map(str::to_string))
        .unwrap_or_else(|| panic!("{}: no .target line", ptx.display()))
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ptx` compiled by ptxas for its own target.
fn assemble(ptxas: &Path, ptx: &Path, cubin: &Path) {
    let arch = ptx_target(ptx);
    run(Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(ptx)
        .arg("-o")
        .arg(cubin));
}

fn instructions(cuobjdump: &Path, cubin: &Path) -> Vec<String> {
    common::sass(cuobjdump, cubin, None)
        .into_iter()
        .map(|(_, i)| i)
        .collect()
}

/// Checks one crate: `kernel` is its source's stem, `ok` what its binary
/// prints on a GPU.
fn check(name: &str, kernel: &str, ok: &str) {
    let Some([nvcc, ptxas, cuobjdump]) = cuda_tools(["nvcc", "ptxas", "cuobjdump"]) else {
        return;
    };
    let built = cargo_build(name, &nvcc);
    let ktrace = built.out_dir.join("ktrace");
    let [traced, untraced] =
        ["traced", "untraced"].map(|v| ktrace.join(v).join(format!("{kernel}.ptx")));
    let tmp = tempfile::tempdir().unwrap();

    // The marker-free source through nvcc as the builder runs it: PTX for
    // the same target, per-thread default stream, ktrace's include dir.
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("examples/builders")
        .join(name)
        .join("kernels")
        .join(format!("{kernel}.cu"));
    let stripped = tmp.path().join(format!("{kernel}.cu"));
    std::fs::write(
        &stripped,
        strip_markers(&src, &std::fs::read_to_string(&src).unwrap()),
    )
    .unwrap();
    let plain = tmp.path().join(format!("{kernel}.plain.ptx"));
    run(Command::new(&nvcc)
        .arg(format!("-arch={}", ptx_target(&untraced)))
        .args(["--ptx", "--default-stream", "per-thread"])
        .arg(format!("-I{}", ktrace.join("include").display()))
        .arg(&stripped)
        .arg("-o")
        .arg(&plain));

    let sass: Vec<Vec<String>> = [&traced, &untraced, &plain]
        .iter()
        .enumerate()
        .map(|(i, ptx)| {
            let cubin = tmp.path().join(format!("{i}.cubin"));
            assemble(&ptxas, ptx, &cubin);
            instructions(&cuobjdump, &cubin)
        })
        .collect();
    assert!(
        sass[1].len() > 5,
        "{name}: no SASS from {}",
        untraced.display()
    );
    assert_eq!(
        sass[1], sass[2],
        "{name}: the untraced PTX's SASS differs from the marker-free kernel's"
    );
    assert_ne!(sass[0], sass[1], "{name}: the traced PTX does not record");
    assert!(
        sass[0].iter().any(|i| i.contains("SR_GLOBALTIMER")),
        "{name}: the traced SASS reads no %globaltimer"
    );
    println!(
        "{name}: untraced = marker-free ({} instructions); traced {} instructions",
        sass[1].len(),
        sass[0].len()
    );

    let out = Command::new(&built.binary).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if out.status.success() {
        assert!(stdout.contains(ok), "{name} ran but printed:\n{stdout}");
    } else {
        assert!(
            stderr.contains("the CUDA driver library could not be loaded"),
            "{name} failed without the no-driver message:\n{stderr}"
        );
        println!("{name}: no GPU here, and it says so");
    }
}

#[test]
fn cudaforge_crate_builds_with_zero_cost_untraced_ptx() {
    check("cudaforge", "rowsum", "sums correct");
}

#[test]
fn bindgen_cuda_crate_builds_with_zero_cost_untraced_ptx() {
    check("bindgen-cuda", "scale", "results correct");
}

/// The two builder crates' kernels, traced on an H200 (`KTRACE=1
/// KTRACE_CAPTURE=…` on the release binaries): every warp of the 264 blocks
/// of 8 warps recorded each of its regions once, nothing dropped, nothing
/// unmatched, times on the SM clock's rate.
#[test]
fn h200_captures_of_the_builder_crates_decode_whole() {
    use ktrace_runtime::export::{summarize_launch, ExportOptions};
    for (file, regions) in [
        ("h200_cudaforge_rowsum.ktrace", &["load", "reduce"][..]),
        ("h200_bindgen_cuda_scale.ktrace", &["body"][..]),
    ] {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("tests/data")
            .join(file);
        let cap = ktrace_runtime::Capture::read(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(cap.launches.len(), 1, "{file}");
        let launch = &cap.launches[0];
        let (summary, diagnostics) =
            summarize_launch(launch, &cap.device, &cap.regions, &ExportOptions::default())
                .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(diagnostics.is_empty(), "{file}: {diagnostics:?}");
        let got: Vec<(&str, u64)> = summary
            .regions
            .iter()
            .map(|r| (r.name.as_str(), r.count))
            .collect();
        let want: Vec<(&str, u64)> = regions.iter().map(|r| (*r, 264 * 8)).collect();
        assert_eq!(got, want, "{file}");
        for r in &summary.regions {
            // Each span lasts between 100 ns and the 16 µs the kernel took.
            assert!(
                r.min_dur > 0.1 && r.max_dur < 16.0,
                "{file} {}: {r:?}",
                r.name
            );
        }
    }
}
