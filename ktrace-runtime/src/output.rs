//! Output files: the names of a launch's trace and summary files, and the
//! atomic write that every output (traces, summaries, captures) goes through.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The summary file beside a trace: `trace_summary.json` for `trace.json`,
/// `NAME_summary.json` for a name not ending in `.json`.
pub fn summary_path(trace: &Path) -> PathBuf {
    let s = trace.as_os_str().to_string_lossy();
    match s.strip_suffix(".json") {
        Some(base) => PathBuf::from(format!("{base}_summary.json")),
        None => PathBuf::from(format!("{s}_summary.json")),
    }
}

/// The trace file of launch `launch`: `base` itself for launch 0,
/// `trace_launch3.json` for launch 3 of `trace.json`.
pub fn launch_trace_path(base: &Path, launch: u32) -> PathBuf {
    if launch == 0 {
        return base.to_path_buf();
    }
    let s = base.as_os_str().to_string_lossy();
    match s.strip_suffix(".json") {
        Some(stem) => PathBuf::from(format!("{stem}_launch{launch}.json")),
        None => PathBuf::from(format!("{s}_launch{launch}")),
    }
}

/// Writes `path` through a temporary file in the same directory, renamed
/// over `path` once complete, so readers never see a partial file.
/// Returns what `body` returned; an io error of `body`'s names `path`.
pub fn write_atomic<T>(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> Result<T> {
    write_atomic_with(path, |w| body(w).map_err(|e| Error::io(path, e)))
}

/// [`write_atomic`] for a `body` with an error type of its own: its errors
/// come back as they are (and no file is written); those of the file itself
/// (creating, flushing, renaming) as an [`Error`] naming `path`, converted.
pub fn write_atomic_with<T, E: From<Error>>(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::Config(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.{}.ktrace.tmp",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let fail = |e: E| {
        let _ = std::fs::remove_file(&tmp);
        e
    };
    let io = |e: io::Error| fail(E::from(Error::io(path, e)));
    let mut w = BufWriter::new(File::create(&tmp).map_err(io)?);
    let value = body(&mut w).map_err(fail)?;
    w.flush().map_err(io)?;
    let f = w.into_inner().map_err(|e| io(e.into_error()))?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(value)
}
