//! Helpers for ktrace's own tests, shared by this crate's tests and the
//! workspace's. Not part of the API: hidden from the docs, and may change in
//! any release.

use std::path::{Path, PathBuf};

use crate::executable::{exe, on_path};
use crate::{env, nvcc};

/// The CUDA tools a test needs, by name: `nvcc` where [`nvcc::find_nvcc`]
/// finds it, any other (`cuobjdump`) beside that nvcc or else on `PATH`.
///
/// When one is missing, prints `skipped: …` naming it and returns `None`
/// for the test to return early; with `KTRACE_REQUIRE_NVCC` set (as
/// scripts/test.sh does) it panics instead, so the test cannot pass without
/// running.
pub fn cuda_tools<const N: usize>(names: [&str; N]) -> Option<[PathBuf; N]> {
    let nvcc = nvcc::find_nvcc().found;
    let found = names.map(|name| find(name, nvcc.as_deref()));
    let missing: Vec<&str> = names
        .iter()
        .zip(&found)
        .filter(|(_, path)| path.is_none())
        .map(|(name, _)| *name)
        .collect();
    if missing.is_empty() {
        return Some(found.map(|path| path.unwrap_or_default()));
    }
    let missing = missing.join(" and ");
    assert!(
        env::get("KTRACE_REQUIRE_NVCC").is_none(),
        "KTRACE_REQUIRE_NVCC is set but {missing} was not found"
    );
    eprintln!(
        "skipped: {missing} not found (scripts/setup-cuda.sh installs the CUDA tools; then \
         source .cuda/env.sh)"
    );
    None
}

fn find(name: &str, nvcc: Option<&Path>) -> Option<PathBuf> {
    if name == "nvcc" {
        return nvcc.map(Path::to_path_buf);
    }
    let file = exe(name);
    let beside = nvcc
        .map(|n| n.with_file_name(&file))
        .filter(|p| p.is_file());
    beside.or_else(|| on_path(env::path().as_deref(), name))
}

/// The script of [`fake_nvcc`].
#[cfg(unix)]
const FAKE_NVCC: &str = r#"#!/bin/sh
echo "$@" >> '@LOG@'
out=; dep=
for a in "$@"; do src="$a"; done
if grep -q KTRACE_FAKE_FAIL "$src"; then echo "$src(1): error: fake" >&2; exit 2; fi
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2";; -MF) dep="$2";; esac
  shift
done
printf 'IMAGE' > "$out"
if [ -n "$dep" ]; then printf '%s : %s @DEPS@\n' "$out" "$src" > "$dep"; fi
"#;

/// A stand-in for nvcc, written into `dir`: it appends its arguments to a
/// log (one line a run), writes `IMAGE` to the `-o` file and, given `-MF`,
/// a dependency rule naming the source (the last argument) and `deps`. It
/// fails on a source that contains `KTRACE_FAKE_FAIL`.
/// Returns its path and the log's. For tests of command lines and of
/// rebuilds without a CUDA toolkit.
#[cfg(unix)]
pub fn fake_nvcc(dir: &Path, deps: &[&Path]) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("nvcc.log");
    let deps: Vec<String> = deps.iter().map(|d| d.display().to_string()).collect();
    let script = FAKE_NVCC
        .replace("@LOG@", &log.display().to_string())
        .replace("@DEPS@", &deps.join(" "));
    let path = dir.join("fake-nvcc");
    std::fs::write(&path, script).expect("writing the fake nvcc");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("making the fake nvcc executable");
    (path, log)
}

/// The golden check of the markers' instruction cost of a build
/// ([`crate::cost`]): the `.cost` files of `out_dir/ktrace/kernels`
/// (`out_dir` a build script's `OUT_DIR`), which must hold each of
/// `modules`, against the golden file `golden`; `KTRACE_BLESS=1` rewrites
/// it instead. Skipped, with a message, without `nvdisasm` (as
/// [`cuda_tools`] says); panics naming each changed line otherwise.
pub fn check_marker_costs(out_dir: &Path, golden: &Path, modules: &[&str]) {
    if cuda_tools(["nvdisasm"]).is_none() {
        return;
    }
    let kernels = out_dir.join("ktrace/kernels");
    let actual = crate::cost::collect(&kernels)
        .unwrap_or_else(|| panic!("no .cost file in {}", kernels.display()));
    for module in modules {
        assert!(
            actual.contains(&format!("module {module}\n")),
            "module {module} is missing:\n{actual}"
        );
    }
    let bless = env::get("KTRACE_BLESS").is_some_and(|v| v == "1");
    if let Err(e) = crate::cost::check_golden(golden, &actual, bless) {
        panic!("{e}");
    }
}
