//! Reading environment variables from a build script.

use std::ffi::OsString;

/// Reads `name`, first telling Cargo to rerun the build script when it
/// changes (when run by Cargo as a build script). Every variable
/// ktrace-build reads goes through here.
pub fn get(name: &str) -> Option<OsString> {
    // Cargo sets TARGET only for build scripts; elsewhere (tests, tools) the
    // line would be noise.
    if cargo("TARGET").is_some() {
        println!("cargo:rerun-if-env-changed={name}");
    }
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name)
}

/// Like [`get`], as a non-empty UTF-8 string.
pub fn get_string(name: &str) -> Option<String> {
    get(name)
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.trim().is_empty())
}

/// Reads `PATH`, printing no rerun line (cc-rs leaves it out too): it
/// differs between the shells, editors and CI steps that share one target
/// directory, and a line for it would rerun the build script after each
/// switch. `NVCC` and `CUDA_HOME`, which come first, are the tracked way to
/// choose an nvcc.
pub fn path() -> Option<OsString> {
    #[allow(clippy::disallowed_methods)]
    std::env::var_os("PATH")
}

/// Reads a variable that Cargo sets for build scripts (never changes
/// between runs of one build, so no rerun line is printed).
pub fn cargo(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name)
}
