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
    /// The capture file holds no launch to read.
    #[error("{path}: the capture holds no launch")]
    NoLaunch {
        /// The capture file.
        path: PathBuf,
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
    /// Writing the output failed.
    #[error("{path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}
