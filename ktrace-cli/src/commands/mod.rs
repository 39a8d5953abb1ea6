//! One module per command, each with its `run`, and what they share:
//! reading a capture and picking its launches.

pub mod analyze;
pub mod diff;
pub mod export;
pub mod merge;
pub mod report;
pub mod summary;

use std::path::Path;

use ktrace_runtime::format::capture::{Capture, LaunchCapture, StreamEnd};

use crate::error::CliError;

/// The capture at `path`; fails when it holds no launch. A capture whose
/// writer did not finish is read up to its last complete record, with a
/// note on stderr.
fn read(path: &Path) -> Result<Capture, CliError> {
    let cap = Capture::read(path)?;
    let cut = match cap.stream_end {
        Some(StreamEnd::Cut { offset, left }) => Some((offset, left)),
        _ => None,
    };
    if cap.launches.is_empty() {
        return Err(match cut {
            Some((offset, left)) => CliError::NoLaunchCut {
                path: path.to_path_buf(),
                offset,
                left,
            },
            None => CliError::NoLaunch {
                path: path.to_path_buf(),
            },
        });
    }
    if let Some((offset, left)) = cut {
        eprintln!(
            "ktrace: note: {} is truncated (its writer did not finish): read its {} launches \
             up to byte {offset}, {left} bytes after it left out",
            path.display(),
            cap.launches.len()
        );
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
