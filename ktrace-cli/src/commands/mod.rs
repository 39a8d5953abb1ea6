//! One module per command, each with its `run`, and what they share:
//! reading a capture and picking its launches.

pub mod analyze;
pub mod diff;
pub mod export;
pub mod merge;
pub mod report;
pub mod summary;

use std::path::Path;

use ktrace_runtime::format::capture::{Capture, LaunchCapture};

use crate::error::CliError;

/// The capture at `path`; fails when it holds no launch.
fn read(path: &Path) -> Result<Capture, CliError> {
    let cap = Capture::read(path)?;
    if cap.launches.is_empty() {
        return Err(CliError::NoLaunch {
            path: path.to_path_buf(),
        });
    }
    Ok(cap)
}

/// Launch `launch` of `cap`, or every launch when `None`.
fn pick(cap: &Capture, launch: Option<u32>) -> Result<Vec<&LaunchCapture>, CliError> {
    match launch {
        Some(n) => Ok(vec![cap.launch(n)?]),
        None => Ok(cap.launches.iter().collect()),
    }
}
