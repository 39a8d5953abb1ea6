//! One module per command, each with its `run`, and what they share:
//! reading a capture and picking its launches (`--launch`, `--kernels`,
//! `--steps`).

pub mod analyze;
pub mod diff;
pub mod export;
pub mod launches;
pub mod merge;
pub mod report;
pub mod summary;

use std::path::Path;

use ktrace_runtime::export::launches::{launch_infos, LaunchSelection};
use ktrace_runtime::format::capture::{Capture, LaunchCapture, StreamEnd};
use ktrace_runtime::timeline::HostAxis;

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

/// The launches of `cap` that `--launch` picks ([`pick`]) and `sel` keeps
/// (`--kernels`, `--steps`); fails when `sel` keeps none.
fn pick_selected<'a>(
    cap: &'a Capture,
    launch: Option<u32>,
    sel: &LaunchSelection,
) -> Result<Vec<&'a LaunchCapture>, CliError> {
    let picked = pick(cap, launch)?;
    if sel.keeps_all() {
        return Ok(picked);
    }
    let axis = HostAxis::new(&cap.clock_syncs)?;
    let infos = launch_infos(picked, axis.as_ref())?;
    Ok(sel
        .select(&infos, &cap.steps)?
        .into_iter()
        .map(|i| i.capture)
        .collect())
}
