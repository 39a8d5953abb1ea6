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

/// Reads a variable that Cargo sets for build scripts (never changes
/// between runs of one build, so no rerun line is printed).
pub fn cargo(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name)
}
