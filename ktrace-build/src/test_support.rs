//! Helpers for ktrace's own tests, shared by this crate's tests and the
//! workspace's. Not part of the API: hidden from the docs, and may change in
//! any release.

use std::path::{Path, PathBuf};

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
    let file = nvcc::exe(name);
    let beside = nvcc
        .map(|n| n.with_file_name(&file))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        let path = env::path()?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(&file))
            .find(|p| p.is_file())
    })
}
