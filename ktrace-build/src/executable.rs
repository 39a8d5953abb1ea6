//! Executable names on this platform, and finding one on `PATH`: what the
//! nvcc search ([`crate::toolkit`]), the PyPI search ([`crate::pypi`]) and
//! the toolchain's identity ([`crate::nvcc::Toolchain`]) share.

use std::ffi::OsStr;
use std::path::PathBuf;

/// `name` as an executable file is named here: `nvcc.exe` on Windows,
/// `nvcc` elsewhere.
pub(crate) fn exe(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

/// The first `name` (an executable) in the directories of `path`.
pub(crate) fn on_path(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|d| d.join(exe(name)))
        .find(|p| p.is_file())
}
