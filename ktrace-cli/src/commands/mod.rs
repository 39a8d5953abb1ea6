//! One module per command, each with its `run`, and what they share:
//! reading a capture and picking its launches (`--launch`, `--kernels`,
//! `--steps`).

pub mod analyze;
pub mod diff;
pub mod export;
pub mod launches;
pub mod merge;
pub mod report;
pub mod stalls;
pub mod summary;

use std::path::Path;

use ktrace_runtime::export::launches::{read_facts_on, LaunchInfo, LaunchSelection};
use ktrace_runtime::format::capture::{Capture, LaunchCapture, StreamEnd};
use ktrace_runtime::timeline::HostAxis;

use crate::error::CliError;

/// Writes `text` to `output`, or else to standard output.
fn emit(text: String, output: Option<&Path>) -> Result<(), CliError> {
    match output {
        Some(path) => std::fs::write(path, text).map_err(|error| CliError::Write {
            path: path.to_path_buf(),
            error,
        }),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// The capture at `path`, each large launch buffer read on up to
/// `threads` threads (0: one per core); fails when it holds no launch. A
/// capture whose writer did not finish is read up to its last complete
/// record, with a note on stderr.
fn read(path: &Path, threads: usize) -> Result<Capture, CliError> {
    let cap = Capture::read_on(path, threads).map_err(|e| CliError::reading(path, e))?;
    check_read(path, &cap, cap.launches.len())?;
    Ok(cap)
}

/// Fails when the file at `path`, read as `cap`, held no launch (`total`
/// launches, kept or not); notes on stderr when it was cut.
fn check_read(path: &Path, cap: &Capture, total: usize) -> Result<(), CliError> {
    let cut = match cap.stream_end {
        Some(StreamEnd::Cut { offset, left }) => Some((offset, left)),
        _ => None,
    };
    if total == 0 {
        return Err(match cut {
            Some((offset, left)) => CliError::NoLaunchCut {
                path: path.to_path_buf(),
                offset,
                left,
            },
            None if !cap.stalls.is_empty() => {
                let mut kernels: Vec<String> =
                    cap.stalls.iter().map(|s| s.kernel.clone()).collect();
                kernels.sort();
                kernels.dedup();
                CliError::OnlyStalls {
                    path: path.to_path_buf(),
                    kernels,
                }
            }
            None => CliError::NoLaunch {
                path: path.to_path_buf(),
            },
        });
    }
    if let Some((offset, left)) = cut {
        eprintln!(
            "ktrace: note: {} is truncated (its writer did not finish): read its {total} \
             launches up to byte {offset}, {left} bytes after it left out",
            path.display(),
        );
    }
    Ok(())
}

/// The capture at `path` holding only the launches that `--launch`
/// (`launch`: the first launch of that index) picks and `sel` (`--kernels`,
/// `--steps`) keeps, in order; every launch when nothing is picked (as
/// [`read`]). Only the picked launches' buffers are kept: the others are
/// dropped as soon as they are read. `--steps` needs the host's steps and
/// clock syncs, which the file interleaves with its launches: the file is
/// read twice, first for the launches' metadata, then for the buffers of
/// those chosen. Fails when `--launch` names no launch or `sel` keeps none.
fn read_picked(
    path: &Path,
    launch: Option<u32>,
    sel: &LaunchSelection,
) -> Result<Capture, CliError> {
    read_picked_on(path, launch, sel, 1)
}

/// [`read_picked`], each large launch buffer read on up to `threads`
/// threads (0: one per core).
fn read_picked_on(
    path: &Path,
    launch: Option<u32>,
    sel: &LaunchSelection,
    threads: usize,
) -> Result<Capture, CliError> {
    if launch.is_none() && sel.keeps_all() {
        return read(path, threads);
    }
    let two_passes = sel.steps.is_some();
    let mut found = false;
    let first = read_facts_on(path, threads, |l| {
        let picked = match launch {
            Some(n) if !found && l.shape.launch == n => {
                found = true;
                true
            }
            Some(_) => false,
            None => true,
        };
        picked && !two_passes && sel.matches_kernel(&l.kernel)
    })?;
    let total = first.launches.len();
    check_read(path, &first.capture, total)?;
    let picked: Vec<usize> = match launch {
        Some(n) => vec![first.launches.iter().position(|f| f.launch == n).ok_or(
            ktrace_runtime::Error::NoSuchLaunch {
                asked: n,
                available: total,
            },
        )?],
        None => (0..total).collect(),
    };
    if sel.keeps_all() {
        return Ok(first.capture);
    }
    let axis = HostAxis::new(&first.capture.clock_syncs)?;
    let infos: Vec<LaunchInfo<'_>> = picked
        .iter()
        .map(|&i| first.launches[i].info(axis.as_ref()))
        .collect();
    let chosen: Vec<usize> = sel
        .select_indices(&infos, &first.capture.steps)?
        .into_iter()
        .map(|i| picked[i])
        .collect();
    if !two_passes {
        debug_assert_eq!(first.capture.launches.len(), chosen.len());
        return Ok(first.capture);
    }
    let launches = read_positions(path, &chosen, threads)?;
    Ok(Capture {
        launches,
        ..first.capture
    })
}

/// The launches at `positions` (increasing) among the launches of the
/// file at `path`.
fn read_positions(
    path: &Path,
    positions: &[usize],
    threads: usize,
) -> Result<Vec<LaunchCapture>, CliError> {
    let mut at = 0usize;
    let mut next = positions.iter().copied().peekable();
    let cap = Capture::read_selected_on(path, threads, |_| {
        let keep = next.next_if_eq(&at).is_some();
        at += 1;
        keep
    })
    .map_err(|e| CliError::reading(path, e))?;
    if cap.launches.len() != positions.len() {
        return Err(ktrace_runtime::Error::Corrupt(format!(
            "{}: the file changed while it was read: {} of the {} launches chosen are there",
            path.display(),
            cap.launches.len(),
            positions.len()
        ))
        .into());
    }
    Ok(cap.launches)
}

#[cfg(test)]
mod tests;
