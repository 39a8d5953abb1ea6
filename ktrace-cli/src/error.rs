//! What can stop a command: [`CliError`]. `main` reports it, prefixed
//! with `ktrace: ` there and nowhere else.

use std::path::PathBuf;

use ktrace_runtime::analysis::AnalysisError;
use ktrace_runtime::export::filter::FilterError;

/// What can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading, decoding or writing failed.
    #[error(transparent)]
    Runtime(#[from] ktrace_runtime::Error),
    /// `ktrace stalls` on a capture without PC samples (of the kernels
    /// asked for).
    #[error(
        "{path}: no PC samples{}; sample a run with KTRACE_STALLS=1 (the capture holds {launches} \
         traced launch(es))",
        if sampled.is_empty() { String::new() } else { format!(" of those kernels (sampled: {})", sampled.join(", ")) }
    )]
    NoStalls {
        /// The capture file.
        path: PathBuf,
        /// Its traced launches.
        launches: usize,
        /// The kernels it holds samples of.
        sampled: Vec<String>,
    },
    /// The capture file holds no launch to read.
    #[error("{path}: the capture holds no launch")]
    NoLaunch {
        /// The capture file.
        path: PathBuf,
    },
    /// The capture file holds no traced launch, only PC samples (a run
    /// with `KTRACE_STALLS=1` and tracing off).
    #[error(
        "{path}: the capture holds no traced launch, only PC samples (stall reasons) of {}: \
         read them with `ktrace stalls {path}` or `ktrace analyze {path}`",
        kernels.join(", ")
    )]
    OnlyStalls {
        /// The capture file.
        path: PathBuf,
        /// The kernels it holds samples of.
        kernels: Vec<String>,
    },
    /// The capture file was cut (its writer did not finish) before its
    /// first complete launch record.
    #[error(
        "{path}: the capture holds no complete launch: it is truncated (its writer did not \
         finish), with {left} bytes of an incomplete record after byte {offset}"
    )]
    NoLaunchCut {
        /// The capture file.
        path: PathBuf,
        /// Bytes of its complete records.
        offset: u64,
        /// Bytes after them.
        left: u64,
    },
    /// A filter option that cannot be parsed.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// Exporting one launch failed.
    #[error("launch {launch}: {error}")]
    Launch {
        /// The launch.
        launch: u32,
        /// Why.
        error: ktrace_runtime::Error,
    },
    /// Options that do not go together.
    #[error("{0}")]
    Usage(String),
    /// Analysis options that cannot be used.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// Reading a capture file failed (an error that does not name the
    /// file itself: a bad magic, a cut, a corrupt or too large capture).
    #[error("{path}: {error}")]
    Read {
        /// The capture file.
        path: PathBuf,
        /// Why.
        error: ktrace_runtime::Error,
    },
    /// Writing the output failed.
    #[error("{path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl CliError {
    /// `error`, from reading the capture at `path`, naming the file unless
    /// the error names it already (an I/O error).
    pub fn reading(path: &std::path::Path, error: ktrace_runtime::Error) -> CliError {
        match error {
            e @ ktrace_runtime::Error::Io { .. } => CliError::Runtime(e),
            error => CliError::Read {
                path: path.to_path_buf(),
                error,
            },
        }
    }
}
